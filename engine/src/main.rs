//! The `engine` binary: a UCI engine (no arguments) and commands that
//! inspect the evaluation.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use engine::eval::{self, Params, params_file};
use engine::labeled::LabeledReader;
use engine::position::parse_fen;

/// A chess engine whose evaluation is tuned from data. Without a command it
/// speaks UCI on stdin/stdout.
#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the parameter set (compiled defaults, or a params file) in the
    /// params text format, one scalar per line.
    Params {
        /// Params file to load instead of the compiled defaults.
        #[arg(long, short = 'f')]
        file: Option<PathBuf>,
    },
    /// Evaluate a position: breakdown by term group for both sides, the
    /// phase, and a last line `score N` (centipawns, side to move's view).
    Eval {
        /// The position as FEN (quote it) or EPD board fields.
        fen: String,
        /// Params file to use instead of the compiled defaults.
        #[arg(long)]
        params: Option<PathBuf>,
    },
    /// Measure static-evaluation speed in play mode and trace mode on the
    /// positions of a labeled file (one core).
    BenchEval {
        /// Labeled positions (any supported format).
        #[arg(default_value = "data/labeled/masters-quiet-20k.epd")]
        file: PathBuf,
        /// Passes over the positions.
        #[arg(long, default_value_t = 20)]
        passes: usize,
    },
}

fn load_params(path: Option<&PathBuf>) -> Result<Params> {
    match path {
        None => Ok(Params::defaults()),
        Some(p) => {
            let loaded = params_file::read_file(p)?;
            for w in loaded.warnings() {
                eprintln!("warning: {}: {w}", p.display());
            }
            Ok(loaded.params)
        }
    }
}

fn print_params(file: Option<&PathBuf>) -> Result<()> {
    let params = load_params(file)?;
    let source = match file {
        Some(p) => format!("loaded from {}", p.display()),
        None => "compiled defaults".to_string(),
    };
    print!("{}", params_file::to_text(&params, &[source]));
    Ok(())
}

fn print_eval(fen: &str, params: Option<&PathBuf>) -> Result<()> {
    let params = load_params(params)?;
    let pos = parse_fen(fen)?;
    let bd = eval::breakdown(&pos, &params);
    println!(
        "{:<12} {:>12} {:>12} {:>12}",
        "term", "white mg eg", "black mg eg", "net mg eg"
    );
    for (group, [w, b]) in &bd.groups {
        println!(
            "{:<12} {:>5} {:>6} {:>5} {:>6} {:>5} {:>6}",
            group.name(),
            w.mg,
            w.eg,
            b.mg,
            b.eg,
            w.mg - b.mg,
            w.eg - b.eg
        );
    }
    println!(
        "phase {} of {} (mg weight), endgame scale white {} black {} (of {})",
        bd.taper.phase,
        eval::MAX_PHASE,
        bd.taper.scale_white,
        bd.taper.scale_black,
        eval::SCALE_NORMAL
    );
    println!("score {}", bd.score);
    Ok(())
}

fn bench_eval(file: &PathBuf, passes: usize) -> Result<()> {
    let reader = std::io::BufReader::new(
        std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?,
    );
    let positions: Vec<_> = LabeledReader::new(reader, Some(file.clone()))
        .filter_map(|r| r.ok().map(|(_, rec)| rec.position))
        .collect();
    anyhow::ensure!(!positions.is_empty(), "{}: no positions", file.display());
    let params = Params::defaults();
    let start = Instant::now();
    let mut checksum = 0i64;
    for _ in 0..passes {
        for p in &positions {
            checksum += eval::evaluate(std::hint::black_box(p), &params) as i64;
        }
    }
    let play = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let mut entries = 0usize;
    for _ in 0..passes {
        for p in &positions {
            entries += eval::trace(std::hint::black_box(p)).entries.len();
        }
    }
    let traced = start.elapsed().as_secs_f64();
    let n = (positions.len() * passes) as f64;
    println!(
        "positions {} x {passes} passes (checksum {checksum})",
        positions.len()
    );
    println!("play mode  {:>12.0} positions/s", n / play);
    println!(
        "trace mode {:>12.0} positions/s ({:.2}x play-mode cost, {:.1} nonzero coefficients per position)",
        n / traced,
        traced / play,
        entries as f64 / n
    );
    Ok(())
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        None => anyhow::bail!("the UCI loop is not built yet"),
        Some(Command::Params { file }) => print_params(file.as_ref()),
        Some(Command::Eval { fen, params }) => print_eval(&fen, params.as_ref()),
        Some(Command::BenchEval { file, passes }) => bench_eval(&file, passes),
    }
}
