//! The `engine` binary: a UCI chess engine (no arguments) and its
//! benchmarking and testing commands.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use shakmaty::Chess;

use engine::bench;
use engine::eval::Params;
use engine::position::uci_of;
use engine::search::{SearchLimits, Searcher};
use engine::uci::UciSession;
use engine::{epdtest, perft};

/// A UCI chess engine. Without a command it speaks UCI on standard input and
/// output.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Speak UCI on standard input/output (the default).
    Uci,
    /// Search a fixed set of positions to a fixed depth; the last line is
    /// `N nodes M nps` (the node count is the search's signature).
    Bench {
        /// Depth per position.
        #[arg(default_value_t = bench::DEFAULT_BENCH_DEPTH)]
        depth: u32,
    },
    /// Count move-generation leaf nodes: a divide of one position, or a whole
    /// EPD perft suite (`FEN ;D1 n ;D2 n …`).
    Perft {
        /// Depth (for a single position; with --suite, the maximum depth to
        /// check).
        depth: Option<u32>,
        /// The position (FEN, may be given unquoted); the start position by
        /// default.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        fen: Vec<String>,
        /// Check every position of this perft suite file.
        #[arg(long)]
        suite: Option<PathBuf>,
    },
    /// Run an EPD test suite (`bm`/`am` operations) and count solved
    /// positions.
    Test {
        /// The EPD file.
        file: PathBuf,
        /// Seconds per position.
        #[arg(long, default_value_t = 1.0)]
        time: f64,
        /// Fixed depth per position instead of a time.
        #[arg(long)]
        depth: Option<u32>,
        /// Fixed node count per position instead of a time (reproducible).
        #[arg(long)]
        nodes: Option<u64>,
        /// Transposition table size in MB.
        #[arg(long, default_value_t = 64)]
        hash: usize,
        /// Search threads.
        #[arg(long, default_value_t = 1)]
        threads: usize,
    },
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command.unwrap_or(Command::Uci) {
        Command::Uci => run_uci(),
        Command::Bench { depth } => run_bench(depth),
        Command::Perft { depth, fen, suite } => match suite {
            Some(file) => run_perft_suite(&file, depth),
            None => run_perft(depth, &fen),
        },
        Command::Test {
            file,
            time,
            depth,
            nodes,
            hash,
            threads,
        } => run_test(&file, time, depth, nodes, hash, threads),
    }
}

fn run_uci() -> Result<()> {
    let mut session = UciSession::new(std::io::stdout());
    session
        .run(std::io::stdin().lock())
        .context("reading UCI commands from standard input")
}

fn run_bench(depth: u32) -> Result<()> {
    let report = bench::run(Arc::new(Params::defaults()), depth, |i, fen, nodes| {
        eprintln!("position {:>2} {fen}: {nodes} nodes", i + 1);
    });
    println!("{} nodes {} nps", report.nodes, report.nps());
    Ok(())
}

fn run_perft(depth: Option<u32>, fen: &[String]) -> Result<()> {
    let depth = depth.context("perft needs a depth (or --suite FILE)")?;
    let pos = if fen.is_empty() {
        Chess::default()
    } else {
        perft::parse_perft_position(&fen.join(" ")).context("parsing the perft position")?
    };
    let start = Instant::now();
    let mut total = 0;
    if depth == 0 {
        total = 1;
    } else {
        let mut out = std::io::stdout().lock();
        for (m, n) in perft::divide(&pos, depth) {
            writeln!(out, "{}: {n}", uci_of(&m))?;
            total += n;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!();
    println!("{total} nodes {:.0} nodes/s", total as f64 / secs.max(1e-9));
    Ok(())
}

fn run_perft_suite(file: &std::path::Path, max_depth: Option<u32>) -> Result<()> {
    let cases = perft::read_suite(file)?;
    let start = Instant::now();
    let (mut nodes, mut failures) = (0u64, 0usize);
    for case in &cases {
        for &(depth, expected) in &case.expected {
            if max_depth.is_some_and(|m| depth > m) {
                continue;
            }
            let got = perft::perft(&case.position, depth);
            nodes += got;
            if got != expected {
                failures += 1;
                println!(
                    "FAIL {} depth {depth}: expected {expected}, got {got}",
                    case.fen
                );
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{} positions, {failures} failures, {nodes} nodes {:.0} nodes/s",
        cases.len(),
        nodes as f64 / secs.max(1e-9)
    );
    if failures > 0 {
        bail!("{failures} perft counts differ");
    }
    Ok(())
}

fn run_test(
    file: &std::path::Path,
    seconds: f64,
    depth: Option<u32>,
    nodes: Option<u64>,
    hash: usize,
    threads: usize,
) -> Result<()> {
    let tests = epdtest::read_suite(file)?;
    let mut searcher = Searcher::new(Arc::new(Params::defaults()), hash);
    searcher.set_threads(threads);
    let limits = match (depth, nodes) {
        (Some(d), _) => SearchLimits::depth(d),
        (None, Some(n)) => SearchLimits::nodes(n),
        (None, None) => SearchLimits {
            movetime: Some(Duration::from_secs_f64(seconds.max(0.001))),
            move_overhead: Duration::ZERO,
            ..SearchLimits::default()
        },
    };
    let mut solved = 0;
    for (i, test) in tests.iter().enumerate() {
        searcher.new_game();
        let result = searcher.search(&test.position, &[], &limits, |_| {});
        let ok = result.best_move.is_some_and(|m| test.is_solved_by(m));
        solved += usize::from(ok);
        let played = result.best_move.as_ref().map_or("none".to_string(), uci_of);
        println!(
            "{:>4} {:<12} {} played {played} score {} depth {} nodes {}",
            i + 1,
            test.id,
            if ok { "solved" } else { "FAILED" },
            result.score,
            result.depth,
            result.nodes
        );
    }
    println!("solved {solved} of {}", tests.len());
    Ok(())
}
