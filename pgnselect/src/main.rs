//! `pgnselect`: samples training positions from PGN game collections.
//!
//! The binary parses the command line ([`cli`]), opens every input up front
//! so that a missing or empty file is reported before any work, runs the
//! parallel selection ([`pipeline`]) and prints the summary ([`stats`]).
//! Ctrl-C stops the run and leaves a previous output file untouched.

mod chunk_selection;
mod cli;
mod game_filter;
mod game_visitor;
mod key_set;
mod output_format;
mod pipeline;
mod position_filter;
mod sampling;
mod stats;
mod td_targets;

use engine::runtime::exit::is_broken_pipe;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use engine::formats::atomic_file::check_outputs;
use engine::formats::input::open_input;
use engine::runtime::interrupt::{EXIT_INTERRUPTED, Interrupt};
use engine::runtime::progress::Progress;
use engine::runtime::summary::Summary;

use crate::cli::Cli;
use crate::output_format::OutputSink;
use crate::pipeline::InputBytes;

fn run(cli: &Cli, interrupted: &AtomicBool) -> Result<()> {
    let settings = cli.settings()?;
    // Standard output (no -o) too: `pgnselect a.pgn >> a.pgn` would read
    // its own output.
    let output = cli.output.as_deref().unwrap_or(Path::new("-"));
    check_outputs(&[output], &cli.inputs)?;
    let mut inputs = Vec::with_capacity(cli.inputs.len());
    for path in &cli.inputs {
        inputs.push(open_input(path).context("cannot read the input")?);
    }
    let total: Option<u64> = inputs.iter().map(|i| i.total_bytes()).sum();
    let input_bytes = InputBytes::of(&inputs);
    let progress = Progress::bytes(total, !cli.no_progress);
    let mut sink = OutputSink::open(cli.output.as_deref())?;
    let started = Instant::now();
    let stats = pipeline::run(settings, inputs, &mut sink, &progress, interrupted);
    progress.finish();
    let stats = stats?;
    sink.finish()?;
    let elapsed = started.elapsed();
    eprintln!("{}", stats.summary(input_bytes.get(), elapsed));
    if let Some(path) = &cli.summary {
        let mut summary = Summary::new("pgnselect", env!("CARGO_PKG_VERSION"));
        summary.inputs.clone_from(&cli.inputs);
        summary.output.clone_from(&cli.output);
        stats.fill_summary(&mut summary, input_bytes.get(), elapsed);
        summary
            .figure("threads", settings.threads)
            .figure("seed", cli.seed)
            .figure("format", format!("{:?}", settings.format).to_lowercase());
        summary.write(path)?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(cli::arasan_words(std::env::args_os()));
    let interrupt = Interrupt::new();
    // Without the handler Ctrl-C still stops the run, only less tidily.
    let _ = interrupt.install(None);
    match run(&cli, interrupt.flag()) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of standard output has gone (e.g. `| head`): stop
        // quietly, as a program killed by SIGPIPE would.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pgnselect: error: {e:#}");
            if interrupt.requested() {
                ExitCode::from(EXIT_INTERRUPTED)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
