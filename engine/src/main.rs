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
use engine::eval::{self, Params, params_file};
use engine::labeled::LabeledReader;
use engine::position::parse_fen;
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
        /// Transposition table size in MB.
        #[arg(long, default_value_t = 64)]
        hash: usize,
        /// Search threads.
        #[arg(long, default_value_t = 1)]
        threads: usize,
    },
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
            hash,
            threads,
        } => run_test(&file, time, depth, hash, threads),
        Command::Params { file } => print_params(file.as_ref()),
        Command::Eval { fen, params } => print_eval(&fen, params.as_ref()),
        Command::BenchEval { file, passes } => bench_eval(&file, passes),
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
    hash: usize,
    threads: usize,
) -> Result<()> {
    let tests = epdtest::read_suite(file)?;
    let mut searcher = Searcher::new(Arc::new(Params::defaults()), hash);
    searcher.set_threads(threads);
    let limits = match depth {
        Some(d) => SearchLimits::depth(d),
        None => SearchLimits {
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
