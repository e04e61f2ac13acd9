//! `makebook`: builds Polyglot opening books from PGN and inspects them.
//!
//! `makebook -o book.bin [options] FIRST.pgn [MORE.pgn …]` reads a
//! hand-annotated first file (variations, `weight:` comments and glyphs, as
//! in Arasan's `basic.pgn`) and game collections, weighs every move by
//! frequency, score and annotations (see [`weighting::WEIGHT_FORMULA`]) and
//! writes a standard Polyglot book atomically. `makebook dump` and
//! `makebook stats` read books, ours or anyone's; `makebook eco` tags games
//! with their opening (ECO code and name).

mod annotated;
mod annotations;
mod book_move_map;
mod build;
mod collection;
mod eco_tags;
mod game_chunks;
mod inspect;
mod pgn_scan;
mod weighting;

use engine::runtime::exit::is_broken_pipe;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use engine::runtime::interrupt::{EXIT_INTERRUPTED, Interrupt};
use engine::runtime::summary::{Status, Summary};
use shakmaty::Color;

use crate::build::{BuildOptions, build, default_threads, summary};

const ABOUT: &str =
    "Build Polyglot opening books from PGN (Arasan-style annotations), and inspect books";

const LONG_ABOUT: &str = "\
Build a Polyglot opening book (.bin, readable by python-chess, Polyglot and
GUIs) from PGN files, or inspect an existing book.

  makebook -o book.bin [OPTIONS] FIRST.pgn [MORE.pgn ...]
  makebook dump BOOK [--fen FEN | --moves e2e4 e7e5 ...] [--all]
  makebook stats BOOK
  makebook eco IN.pgn [MORE.pgn ...] [-o OUT.pgn]

The first PGN file is the hand-annotated one (like Arasan's basic.pgn): all
its variations are walked, and its comments {weight: N} and glyphs (!! ! !?
?! ? ?? and the evaluations $10-$21) set or adjust move weights. The other
files are game collections: only main lines are read, and a move's weight
comes from how often it was played and how it scored for the side that
played it. Inputs may be plain, gzip (.gz) or zstd (.zst) compressed, or -
for standard input; the compression is recognised from the content.

Games of standard chess are read (no Variant tag, or Standard, chess, normal,
from position in any case); games of other variants (fischerandom, ...) are
skipped and counted as 'other variant', not reported one by one. Long
algebraic moves (e2-e4) and promotions without '=' (a8Q) are read as what
they mean. Malformed games (illegal moves, bad FEN tags, stray tokens, a
comment or variation never closed, a game cut short without a result
marker) are reported with file, line and game number, skipped and counted;
a comment that runs into the next game costs only its own game. Malformed
annotations are reported and ignored. The book is written atomically: an
interrupted build leaves any previous book untouched.";

#[derive(Parser, Debug)]
#[command(
    name = "makebook",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = "See --help for how the weights are computed.",
    after_long_help = weighting::WEIGHT_FORMULA,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    #[command(flatten)]
    build: BuildArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Build a book (the default when no command is given).
    #[command(after_long_help = weighting::WEIGHT_FORMULA)]
    Build(BuildArgs),
    /// List the book moves of a position with weights and percentages.
    Dump(DumpArgs),
    /// Summarise a book: entries, positions, weight-0 entries, reach.
    Stats(StatsArgs),
    /// Tag games with their opening: the ECO, Opening and Variation tags from
    /// the bundled ECO table (by position, following transpositions; the
    /// deepest named position wins). Other text is copied byte for byte;
    /// unreadable games are reported and passed through untouched. Games
    /// already tagged with an ECO code are compared with ours.
    Eco(EcoArgs),
}

#[derive(Args, Debug)]
struct BuildArgs {
    /// The book to write (replaced atomically when complete).
    #[arg(short = 'o', long, value_name = "BOOK", required = true)]
    output: Option<PathBuf>,

    /// PGN files: the annotated file first, then game collections (plain,
    /// .gz, .zst, or - for standard input).
    #[arg(value_name = "PGN", required = true)]
    inputs: Vec<PathBuf>,

    /// Leave out collection moves played in fewer than N games (the
    /// annotated file is exempt).
    #[arg(short = 'm', long, value_name = "N", default_value_t = 1)]
    min_count: u32,

    /// Read only the first N plies (half-moves) of each collection game; the
    /// moves at plies 0..N-1 are counted (the annotated file is exempt).
    #[arg(short = 'p', long, value_name = "N", default_value_t = 70)]
    max_ply: u32,

    /// Leave out collection moves whose score for the side that played them
    /// is below PERCENT (0-100; a draw scores 50).
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
    min_score: Option<f64>,

    /// Keep only moves played by White (a book for playing White).
    #[arg(long, conflicts_with = "only_black")]
    only_white: bool,

    /// Keep only moves played by Black (a book for playing Black).
    #[arg(long)]
    only_black: bool,

    /// Count a collection move only if the player who made it is rated at
    /// least ELO (WhiteElo/BlackElo tag; moves of unrated players are left
    /// out).
    #[arg(long, value_name = "ELO")]
    min_elo: Option<u32>,

    /// Worker threads parsing the collections [default: the number of cores].
    #[arg(short = 't', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,

    /// Treat every input as a game collection: no annotated file (for
    /// comparisons with other book builders).
    #[arg(long)]
    collections_only: bool,

    /// Report every malformed game and annotation (by default, the first 20
    /// of each file).
    #[arg(short, long)]
    verbose: bool,

    /// Also write the build's summary as JSON to FILE (games per file,
    /// moves read and dropped by reason, book entries, timings).
    #[arg(long, value_name = "FILE")]
    summary: Option<PathBuf>,

    /// Never show the progress bar (it is shown only on a terminal anyway).
    #[arg(long)]
    no_progress: bool,
}

#[derive(Args, Debug)]
struct DumpArgs {
    /// The Polyglot book.
    #[arg(value_name = "BOOK")]
    book: PathBuf,

    /// The position to look up (default: the start position).
    #[arg(long, value_name = "FEN", conflicts_with = "all")]
    fen: Option<String>,

    /// Moves to play first, from the start position or --fen, in UCI (e2e4)
    /// or SAN (e4).
    #[arg(long, value_name = "MOVE", num_args = 1.., conflicts_with = "all")]
    moves: Vec<String>,

    /// List every entry of the book instead: key (hex), move, weight, learn.
    #[arg(long)]
    all: bool,
}

#[derive(Args, Debug)]
struct EcoArgs {
    /// PGN files (plain, .gz, .zst, or - for standard input).
    #[arg(value_name = "PGN", required = true)]
    inputs: Vec<PathBuf>,

    /// The tagged PGN to write (replaced atomically when complete); without
    /// it, only the counts and the agreement with existing ECO tags are
    /// printed.
    #[arg(short = 'o', long, value_name = "OUT.pgn")]
    output: Option<PathBuf>,

    /// Report every unreadable game (by default, the first 20 of each file).
    #[arg(short, long)]
    verbose: bool,

    /// Write a JSON summary here (games, classified, unknown, unreadable,
    /// agreement with existing tags).
    #[arg(long, value_name = "FILE")]
    summary: Option<PathBuf>,

    /// Do not draw the progress bar.
    #[arg(long)]
    no_progress: bool,
}

#[derive(Args, Debug)]
struct StatsArgs {
    /// The Polyglot book.
    #[arg(value_name = "BOOK")]
    book: PathBuf,
}

fn parse_percent(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    if (0.0..=100.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value} is not between 0 and 100"))
    }
}

fn run_build(args: BuildArgs) -> Result<()> {
    // The first Ctrl-C stops the build cleanly (no partial book, no
    // temporary file left); a second one exits at once.
    let interrupt = Interrupt::new();
    let _ = interrupt.install(Some("stopping: no book is written"));
    let only = match (args.only_white, args.only_black) {
        (true, _) => Some(Color::White),
        (_, true) => Some(Color::Black),
        _ => None,
    };
    let options = BuildOptions {
        output: args.output.expect("clap requires --output"),
        inputs: args.inputs,
        collections_only: args.collections_only,
        min_count: args.min_count,
        max_ply: args.max_ply,
        min_score: args.min_score,
        only,
        min_elo: args.min_elo,
        threads: args.threads.map_or_else(default_threads, usize::from),
        verbose: args.verbose,
        progress: !args.no_progress,
    };
    // The summary may not be an input or the book (the book is checked
    // against the inputs by the build itself).
    let outputs: Vec<&PathBuf> = std::iter::once(&options.output)
        .chain(&args.summary)
        .collect();
    engine::formats::atomic_file::check_outputs(&outputs, &options.inputs)?;
    let report = match build(&options, interrupt.flag()) {
        Ok(report) => report,
        Err(e) if e.is::<build::Interrupted>() => {
            if let Some(path) = &args.summary {
                let mut json = Summary::new("makebook", env!("CARGO_PKG_VERSION"));
                json.inputs.clone_from(&options.inputs);
                json.status = Status::Interrupted;
                json.write(path)?;
            }
            eprintln!("makebook: {e}");
            std::process::exit(EXIT_INTERRUPTED.into());
        }
        Err(e) => return Err(e),
    };
    write_stdout(&summary(&options, &report))?;
    if let Some(path) = &args.summary {
        build::json_summary(&options, &report).write(path)?;
    }
    Ok(())
}

/// Writes `text` to standard output; a full disk or a closed pipe is an
/// error, not a panic.
fn write_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write to standard output")
}

fn run_eco(args: EcoArgs) -> Result<()> {
    // The summary may not be an input either (the output is checked by
    // the run itself).
    let outputs: Vec<&PathBuf> = args.output.iter().chain(&args.summary).collect();
    engine::formats::atomic_file::check_outputs(&outputs, &args.inputs)?;
    let interrupt = Interrupt::new();
    // Without the handler Ctrl-C still stops the run (no output either way).
    let _ = interrupt.install(Some("stopping: no output is written"));
    let options = eco_tags::EcoOptions {
        inputs: args.inputs,
        output: args.output,
        verbose: args.verbose,
        progress: !args.no_progress,
    };
    let started = std::time::Instant::now();
    let report = eco_tags::run(&options, interrupt.flag())?;
    write_stdout(&report.summary())?;
    if let Some(path) = &args.summary {
        let mut json = Summary::new("makebook eco", env!("CARGO_PKG_VERSION"));
        json.inputs.clone_from(&options.inputs);
        json.output.clone_from(&options.output);
        if report.interrupted {
            json.status = Status::Interrupted;
            json.output = None;
        }
        json.count("games", report.games)
            .count("classified", report.classified)
            .count("compared_with_input_tags", report.compared)
            .count("same_code", report.same_code)
            .count("same_family", report.same_family)
            .count("same_volume", report.same_volume)
            .skip("opening_unknown", report.unknown)
            .skip("unreadable", report.malformed)
            .timing("total_seconds", started.elapsed());
        json.write(path)?;
    }
    if report.interrupted {
        write_stdout("interrupted: no output written\n")?;
        std::process::exit(EXIT_INTERRUPTED.into());
    }
    write_stdout(&format!(
        "{}\n",
        eco_tags::describe_output(options.output.as_deref())
    ))
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        None => run_build(cli.build),
        Some(Command::Build(args)) => run_build(args),
        Some(Command::Dump(args)) => {
            if args.all {
                let book = inspect::open_book(&args.book)?;
                let mut out = std::io::BufWriter::new(std::io::stdout().lock());
                inspect::dump_all(&book, &mut out)
                    .and_then(|()| out.flush())
                    .context("cannot write to standard output")
            } else {
                write_stdout(&inspect::dump(
                    &args.book,
                    args.fen.as_deref(),
                    &args.moves,
                )?)
            }
        }
        Some(Command::Stats(args)) => write_stdout(&inspect::stats(&args.book)?),
        Some(Command::Eco(args)) => run_eco(args),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of standard output has gone (e.g. `| head`): stop
        // quietly, as a program killed by SIGPIPE would.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("makebook: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
