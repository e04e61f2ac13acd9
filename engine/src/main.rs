//! The `engine` binary: a UCI chess engine (no arguments) and its
//! benchmarking and testing commands.

use engine::runtime::exit::is_broken_pipe;
use engine::{say, say_raw};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use shakmaty::Chess;

use engine::bench;
use engine::chess::perft;
use engine::chess::position::parse_fen;
use engine::chess::position::uci_of;
use engine::eval::{self, Params};
use engine::formats::atomic_file::{AtomicFile, check_outputs};
use engine::formats::labeled::LabeledReader;
use engine::formats::{epd_suite, perft_suite};
use engine::formats::{params_file, search_params_file};
use engine::play::elo::{Estimate, Record};
use engine::play::game::{DrawRule, ResignRule, SearchBudget};
use engine::play::match_journal::{MatchIdentity, MatchJournal, file_fingerprint, journal_path};
use engine::play::match_runner::{
    Contestant, DEFAULT_REPEAT, GameEnd, GameReport, MatchSettings, MoveLimit, PlayerKind, Side,
    Standing, TimeControl, resume_match,
};
use engine::play::openings::{OpeningOrder, OpeningSource};
use engine::play::sprt::Sprt;
use engine::play::uci_client::EngineSpec;
use engine::runtime::interrupt::{EXIT_INTERRUPTED, Interrupt};
use engine::runtime::summary::{Status as SummaryStatus, Summary};
use engine::search::{SEARCH_PARAMS, SearchLimits, SearchParams, Searcher};
use engine::uci::UciSession;

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
        /// Search threads (Lazy SMP). With more than one the node count is
        /// no longer a signature; compare the time-to-depth line instead.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Also write the figures as JSON to FILE (counts.nodes, the
        /// signature with one thread; timings.search_seconds; figures.nps,
        /// depth, threads).
        #[arg(long, value_name = "FILE")]
        summary: Option<PathBuf>,
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
    /// Print the parameter set (compiled defaults, or a params file) in the
    /// params text format, one scalar per line.
    Params {
        /// Params file to load instead of the compiled defaults.
        #[arg(long, short = 'f')]
        file: Option<PathBuf>,
    },
    /// Print the search parameters (compiled defaults, or a search params
    /// file) in the search params text format: `name value` per line, each
    /// with its documentation, default, range and SPSA step as a comment.
    SearchParams {
        /// Search params file to load instead of the compiled defaults.
        #[arg(long, short = 'f')]
        file: Option<PathBuf>,
        /// Print OpenBench's SPSA input instead: `name, int, value, min,
        /// max, c_end, r_end` (c_end is the declared step).
        #[arg(long)]
        openbench: bool,
        /// The r_end of --openbench.
        #[arg(long, default_value_t = 0.002)]
        r_end: f64,
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
        /// Also write the figures as JSON to FILE (counts.positions,
        /// figures.play_positions_per_second, trace_positions_per_second,
        /// trace_cost, coefficients_per_position).
        #[arg(long, value_name = "FILE")]
        summary: Option<PathBuf>,
    },
    /// Play a match between two players and report W/D/L, Elo and LOS.
    #[command(long_about = MATCH_ABOUT)]
    Match(Box<MatchArgs>),
}

const MATCH_ABOUT: &str = "\
Play a match between two players, A and B: the built-in engine with a params
file (--params-a/-b; compiled defaults otherwise) or an external UCI engine
(--engine-a/-b CMD with --option-a/-b Name=Value). Illegal moves, crashes,
hangs and time forfeits of an engine lose the game (reason in the PGN) and
the engine is restarted; the match continues.

Openings and colours: each opening is played --repeat times in a row (2 by
default), A with White in the 1st, 3rd, ... game of the opening and with
Black in the 2nd, 4th, ...; the 1st and 2nd (3rd and 4th, ...) games of an
opening form a pair, the same opening with colours swapped. --repeat 1 (or
--no-pairs) plays every opening once, A alternating colours from opening to
opening, and forms no pairs. Openings come from --openings in file order,
starting again after the last (--openings-order sequential), or in a random
order drawn from --seed in which every opening is used once before any is
used again (random); a Polyglot book gives a random line per opening slot.
Openings that reach a position an earlier one reached are dropped (at fixed
nodes or depth they would only repeat its games).

Statistics are from A's point of view, in logistic Elo. Games are paired, so
the independent sample is the pair: pairs are counted by A's pair score as
[LL LD DD+WL WD WW] (0, 1/2, 1, 1 1/2, 2 points). With N samples of per-game
score a_i (0, 1/4, 1/2, 3/4, 1 for pairs; 0, 1/2, 1 for unpaired games) and
frequencies p_i: score s = sum p_i a_i, variance var = sum p_i (a_i - s)^2;
Elo = -400 log10(1/s - 1), its 95% interval the Elo of s +- 1.96 sqrt(var/N);
LOS = Phi((s - 1/2) / sqrt(var/N)); normalized Elo
nElo = (s - 1/2) / sqrt(g var) * 800/ln 10, g = 2 games per pair (1 for
games), +- 1.96 * 800/ln 10 / sqrt(games). The final report also prints the
trinomial figures (every game an independent sample: W/D/L), which is what
unpaired games (--repeat 1, an odd last game) are judged by.

--sprt elo0=0 elo1=5 alpha=0.05 beta=0.05 [model=logistic|normalized] runs
the generalised SPRT of fishtest and fastchess on the pairs (on the games
when unpaired): zero counts become 0.001; under each hypothesis the
maximum-likelihood distribution is p_i = p^_i / (1 + theta phi_i), theta the
root of sum p^_i phi_i / (1 + theta phi_i) = 0, with phi_i = a_i - s(elo)
in the logistic model (s(E) = 1/(1 + 10^(-E/400))) and, in the normalized
model (bounds in nElo, t = nElo sqrt(g) / (800/ln 10)),
phi_i = a_i - 1/2 - t sigma (1 + ((a_i - mu)/sigma)^2) / 2 iterated to a fixed
point; LLR = N sum p^_i ln(p1_i / p0_i). The match stops accepting H0 when
LLR <= ln(beta/(1-alpha)) and accepting H1 when LLR >= ln((1-beta)/alpha).

Resuming: with --pgn FILE, every finished game is also appended to
FILE.journal, with the match's settings and fingerprints of its input files
(and of the engines' programs). A match stopped by Ctrl-C, a kill or a crash
is resumed by rerunning the same command: the journal's games are counted
again and not replayed, and the match goes on with the next game (at fixed
nodes or depth and --concurrency 1 the result is the same game for game as
a match never stopped). A journal made with other settings is refused, its
differences named, except that at fixed nodes or depth a resume may change
--concurrency (each game is the same whichever worker plays it); --overwrite
discards it and starts over. The journal is deleted when the match is over
and its PGN written.";

/// The options of `engine match`.
#[derive(clap::Args, Debug)]
struct MatchArgs {
    /// Params file of player A (built-in engine); compiled defaults otherwise.
    #[arg(long, conflicts_with = "engine_a")]
    params_a: Option<PathBuf>,
    /// Params file of player B (built-in engine); compiled defaults otherwise.
    #[arg(long, conflicts_with = "engine_b")]
    params_b: Option<PathBuf>,
    /// Search params file of player A (built-in engine), e.g. from `tuner
    /// spsa`; compiled defaults otherwise.
    #[arg(long, conflicts_with = "engine_a")]
    search_params_a: Option<PathBuf>,
    /// Search params file of player B (built-in engine).
    #[arg(long, conflicts_with = "engine_b")]
    search_params_b: Option<PathBuf>,
    /// Player A is this external UCI engine (command line, split on spaces).
    #[arg(long)]
    engine_a: Option<String>,
    /// Player B is this external UCI engine (command line, split on spaces).
    #[arg(long)]
    engine_b: Option<String>,
    /// UCI option of engine A as Name=Value (repeatable).
    #[arg(long, value_name = "NAME=VALUE")]
    option_a: Vec<String>,
    /// UCI option of engine B as Name=Value (repeatable).
    #[arg(long, value_name = "NAME=VALUE")]
    option_b: Vec<String>,
    /// Name of player A in reports and PGN.
    #[arg(long)]
    name_a: Option<String>,
    /// Name of player B in reports and PGN.
    #[arg(long)]
    name_b: Option<String>,
    /// Total number of games.
    #[arg(long, default_value_t = 10)]
    games: usize,
    /// Games per opening, colours alternating (see above); pairs need 2 or
    /// more.
    #[arg(long, default_value_t = DEFAULT_REPEAT)]
    repeat: usize,
    /// Play every opening once (the same as --repeat 1): no pairs, trinomial
    /// statistics.
    #[arg(long, conflicts_with = "repeat")]
    no_pairs: bool,
    /// Order of the openings of a list: sequential or random (from --seed).
    #[arg(long, default_value = "sequential")]
    openings_order: OpeningOrder,
    /// Openings: EPD/FEN positions, a Polyglot book (.bin) or PGN games
    /// (.pgn, .pgn.gz, .pgn.zst); the standard start position otherwise.
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Moves taken from each PGN game of --openings.
    #[arg(long, default_value_t = 8)]
    opening_plies: usize,
    /// Moves of each random line from a Polyglot book.
    #[arg(long, default_value_t = 8)]
    book_plies: usize,
    /// Time control BASE+INCREMENT in seconds (the default when no other
    /// limit is given: 10+0.1).
    #[arg(long, conflicts_with_all = ["movetime", "nodes", "depth"])]
    tc: Option<TimeControl>,
    /// Fixed time per move in milliseconds.
    #[arg(long, conflicts_with_all = ["nodes", "depth"])]
    movetime: Option<u64>,
    /// Fixed node count per move (reproducible with --concurrency 1).
    #[arg(long, conflicts_with = "depth")]
    nodes: Option<u64>,
    /// Fixed depth per move.
    #[arg(long)]
    depth: Option<u32>,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Resign adjudication threshold in centipawns (both engines agree).
    #[arg(long)]
    resign_score: Option<i32>,
    /// Consecutive moves of each side beyond --resign-score.
    #[arg(long, default_value_t = DEFAULT_RESIGN_MOVES)]
    resign_moves: u32,
    /// Draw adjudication threshold in centipawns (absolute).
    #[arg(long)]
    draw_score: Option<i32>,
    /// Consecutive moves of each side within --draw-score.
    #[arg(long, default_value_t = DEFAULT_DRAW_MOVES)]
    draw_moves: u32,
    /// No draw adjudication before this ply.
    #[arg(long, default_value_t = DEFAULT_DRAW_AFTER)]
    draw_after: u32,
    /// Games reaching this many plies are drawn.
    #[arg(long)]
    max_plies: Option<u32>,
    /// Seed of the random book lines and of --openings-order random.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Save the games to this PGN file (written when the match ends or is
    /// stopped); its journal PGN.journal lets a stopped match resume (see
    /// above). A device or FIFO (/dev/stdout) is written as the games end,
    /// without a journal.
    #[arg(long)]
    pgn: Option<PathBuf>,
    /// Discard the journal of an earlier, unfinished match with this --pgn
    /// and start over instead of resuming it.
    #[arg(long, requires = "pgn")]
    overwrite: bool,
    /// Transposition table size of each built-in player, in MB.
    #[arg(long, default_value_t = 16)]
    hash: usize,
    /// Stop early on an SPRT decision: elo0=0 elo1=5 alpha=0.05 beta=0.05
    /// model=logistic (or normalized: bounds in nElo).
    #[arg(long, num_args = 1..=5, value_name = "PARAM=VALUE")]
    sprt: Option<Vec<String>>,
    /// Seconds an external engine may take to answer, on top of its
    /// thinking time.
    #[arg(long, default_value_t = 10.0)]
    engine_timeout: f64,
    /// PGN Event tag.
    #[arg(long, default_value = "engine match")]
    event: String,
    /// Write a JSON summary here: W/D/L, the pentanomial counts, Elo,
    /// interval, LOS, nElo and the SPRT's verdict.
    #[arg(long, value_name = "FILE")]
    summary: Option<PathBuf>,
    /// Print A's score by ECO family (B9 = B90-B99) of the games' openings
    /// at the end (the PGN carries ECO, Opening and Variation tags either
    /// way).
    #[arg(long)]
    report_openings: bool,
}

/// Default of --resign-moves.
const DEFAULT_RESIGN_MOVES: u32 = 3;
/// Default of --draw-moves.
const DEFAULT_DRAW_MOVES: u32 = 8;
/// Default of --draw-after.
const DEFAULT_DRAW_AFTER: u32 = 60;
/// Time control when no limit is given.
const DEFAULT_TIME_CONTROL: &str = "10+0.1";

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of standard output has gone (e.g. `| head`): stop
        // quietly, as a program killed by SIGPIPE would.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("engine: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command.unwrap_or(Command::Uci) {
        Command::Uci => run_uci(),
        Command::Bench {
            depth,
            threads,
            summary,
        } => run_bench(depth, threads, summary.as_ref()),
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
        Command::Params { file } => print_params(file.as_ref()),
        Command::SearchParams {
            file,
            openbench,
            r_end,
        } => print_search_params(file.as_ref(), openbench, r_end),
        Command::Eval { fen, params } => print_eval(&fen, params.as_ref()),
        Command::BenchEval {
            file,
            passes,
            summary,
        } => bench_eval(&file, passes, summary.as_ref()),
        Command::Match(args) => run_match_command(&args),
    }
}

fn run_uci() -> Result<()> {
    let mut session = UciSession::new(std::io::stdout());
    session
        .run(std::io::stdin().lock())
        .context("reading UCI commands from standard input")
}

fn run_bench(depth: u32, threads: usize, summary: Option<&PathBuf>) -> Result<()> {
    anyhow::ensure!(threads >= 1, "--threads must be at least 1");
    let report = bench::run(
        Arc::new(Params::defaults()),
        depth,
        threads,
        |i, fen, nodes| {
            eprintln!("position {:>2} {fen}: {nodes} nodes", i + 1);
        },
    );
    say!(
        "time to depth {depth} with {threads} thread(s): {:.3} s",
        report.elapsed.as_secs_f64()
    )?;
    say!("{} nodes {} nps", report.nodes, report.nps())?;
    if let Some(path) = summary {
        let mut json = Summary::new("engine bench", env!("CARGO_PKG_VERSION"));
        json.count("nodes", report.nodes)
            .timing("search_seconds", report.elapsed)
            .figure("nps", report.nps())
            .figure("depth", depth)
            .figure("threads", threads);
        json.write(path)?;
    }
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
            writeln!(out, "{}: {n}", uci_of(&m)).context("cannot write to standard output")?;
            total += n;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    say!()?;
    say!("{total} nodes {:.0} nodes/s", total as f64 / secs.max(1e-9))?;
    Ok(())
}

fn run_perft_suite(file: &std::path::Path, max_depth: Option<u32>) -> Result<()> {
    let cases = perft_suite::read_suite(file)?;
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
                say!(
                    "FAIL {} depth {depth}: expected {expected}, got {got}",
                    case.fen
                )?;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    say!(
        "{} positions, {failures} failures, {nodes} nodes {:.0} nodes/s",
        cases.len(),
        nodes as f64 / secs.max(1e-9)
    )?;
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
    let tests = epd_suite::read_suite(file)?;
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
        say!(
            "{:>4} {:<12} {} played {played} score {} depth {} nodes {}",
            i + 1,
            test.id,
            if ok { "solved" } else { "FAILED" },
            result.score,
            result.depth,
            result.nodes
        )?;
    }
    say!("solved {solved} of {}", tests.len())?;
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

/// The search parameters of `path` (warning about unknown names), or the
/// compiled defaults.
fn load_search_params(path: Option<&PathBuf>) -> Result<SearchParams> {
    let Some(path) = path else {
        return Ok(SearchParams::default());
    };
    let loaded = search_params_file::read_file(path)?;
    if !loaded.unknown.is_empty() {
        eprintln!(
            "warning: {}: unknown search parameters ignored: {}",
            path.display(),
            loaded.unknown.join(", ")
        );
    }
    Ok(loaded.params)
}

fn print_search_params(file: Option<&PathBuf>, openbench: bool, r_end: f64) -> Result<()> {
    let params = load_search_params(file)?;
    if openbench {
        // OpenBench's SPSA input: name, int, value, min, max, c_end, r_end.
        for (i, spec) in SEARCH_PARAMS.iter().enumerate() {
            say!(
                "{}, int, {}, {}, {}, {}, {r_end}",
                spec.name,
                params.get(i),
                spec.min,
                spec.max,
                spec.step
            )?;
        }
        return Ok(());
    }
    let source = match file {
        Some(p) => format!("search parameters loaded from {}", p.display()),
        None => "compiled default search parameters".to_string(),
    };
    say_raw!("{}", search_params_file::to_text(&params, &[source]))
}

fn print_params(file: Option<&PathBuf>) -> Result<()> {
    let params = load_params(file)?;
    let source = match file {
        Some(p) => format!("loaded from {}", p.display()),
        None => "compiled defaults".to_string(),
    };
    say_raw!("{}", params_file::to_text(&params, &[source]))?;
    Ok(())
}

fn print_eval(fen: &str, params: Option<&PathBuf>) -> Result<()> {
    let params = load_params(params)?;
    let pos = parse_fen(fen)?;
    let bd = eval::breakdown(&pos, &params);
    say!(
        "{:<12} {:>12} {:>12} {:>12}",
        "term",
        "white mg eg",
        "black mg eg",
        "net mg eg"
    )?;
    for (group, [w, b]) in &bd.groups {
        say!(
            "{:<12} {:>5} {:>6} {:>5} {:>6} {:>5} {:>6}",
            group.name(),
            w.mg,
            w.eg,
            b.mg,
            b.eg,
            w.mg - b.mg,
            w.eg - b.eg
        )?;
    }
    say!(
        "phase {} of {} (mg weight), endgame scale white {} black {} (of {})",
        bd.taper.phase,
        eval::MAX_PHASE,
        bd.taper.scale_white,
        bd.taper.scale_black,
        eval::SCALE_NORMAL
    )?;
    say!("score {}", bd.score)?;
    Ok(())
}

fn bench_eval(file: &PathBuf, passes: usize, summary: Option<&PathBuf>) -> Result<()> {
    let reader = std::io::BufReader::new(
        std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?,
    );
    let (mut positions, mut bad) = (Vec::new(), 0usize);
    for item in LabeledReader::new(reader, Some(file.clone())) {
        match item? {
            Ok((_, record)) => positions.push(record.position),
            Err(_) => bad += 1,
        }
    }
    if bad > 0 {
        eprintln!("warning: {}: {bad} bad lines skipped", file.display());
    }
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
    say!(
        "positions {} x {passes} passes (checksum {checksum})",
        positions.len()
    )?;
    say!("play mode  {:>12.0} positions/s", n / play)?;
    say!(
        "trace mode {:>12.0} positions/s ({:.2}x play-mode cost, {:.1} nonzero coefficients per position)",
        n / traced,
        traced / play,
        entries as f64 / n
    )?;
    if let Some(path) = summary {
        let mut json = Summary::new("engine bench-eval", env!("CARGO_PKG_VERSION"));
        json.inputs.push(file.clone());
        json.count("positions", positions.len() as u64)
            .count("passes", passes as u64)
            .figure("play_positions_per_second", n / play)
            .figure("trace_positions_per_second", n / traced)
            .figure("trace_cost", traced / play)
            .figure("coefficients_per_position", entries as f64 / n);
        json.write(path)?;
    }
    Ok(())
}

/// The player of one side from its command-line options.
fn contestant(
    params: Option<&PathBuf>,
    search_params: Option<&PathBuf>,
    engine: Option<&String>,
    options: &[String],
    name: Option<&String>,
    timeout: Duration,
) -> Result<Contestant> {
    let (default_name, kind) = match engine {
        Some(command) => {
            let options = options
                .iter()
                .map(|o| {
                    o.split_once('=')
                        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
                        .with_context(|| format!("UCI option {o:?} is not Name=Value"))
                })
                .collect::<Result<Vec<_>>>()?;
            let program = command.split_whitespace().next().unwrap_or("engine");
            let base = std::path::Path::new(program)
                .file_name()
                .map_or(program.to_string(), |f| f.to_string_lossy().into_owned());
            (
                base,
                PlayerKind::External(EngineSpec {
                    command: command.clone(),
                    options,
                    timeout,
                }),
            )
        }
        None => {
            if !options.is_empty() {
                bail!("UCI options are for external engines (--engine-a/-b)");
            }
            let stem = |p: &PathBuf| {
                p.file_stem().map_or(p.display().to_string(), |s| {
                    s.to_string_lossy().into_owned()
                })
            };
            let label = match (params, search_params) {
                (None, None) => "defaults".to_string(),
                (Some(p), None) | (None, Some(p)) => stem(p),
                (Some(p), Some(s)) => format!("{}+{}", stem(p), stem(s)),
            };
            let params =
                load_params(params).with_context(|| format!("loading params {}", label))?;
            let search = load_search_params(search_params)?;
            (
                label,
                PlayerKind::InProcess {
                    params: Arc::new(params),
                    search,
                },
            )
        }
    };
    Ok(Contestant {
        name: name.cloned().unwrap_or(default_name),
        kind,
    })
}

/// `elo E [low, high] LOS P nElo N ± M` of one estimate.
fn estimate_line(e: &Estimate) -> String {
    format!(
        "elo {:+.1} [{:+.1}, {:+.1}] (95%) LOS {:.1}% nElo {:+.1} ± {:.1} ({} samples)",
        e.elo,
        e.low,
        e.high,
        100.0 * e.los,
        e.nelo,
        e.nelo_margin,
        e.samples
    )
}

fn run_match_command(args: &MatchArgs) -> Result<()> {
    if args.pgn.as_ref().is_some_and(|p| p.as_os_str() == "-") {
        bail!(
            "--pgn -: standard output carries the match's progress; name a file \
             (or /dev/stdout to mix the games into it)"
        );
    }
    if let Some(pgn) = &args.pgn {
        let inputs = [
            &args.openings,
            &args.params_a,
            &args.params_b,
            &args.search_params_a,
            &args.search_params_b,
        ];
        check_outputs(
            &[pgn.clone(), journal_path(pgn)],
            &inputs.into_iter().flatten().collect::<Vec<_>>(),
        )?;
    }
    let timeout = Duration::from_secs_f64(args.engine_timeout.max(0.0));
    let mut a = contestant(
        args.params_a.as_ref(),
        args.search_params_a.as_ref(),
        args.engine_a.as_ref(),
        &args.option_a,
        args.name_a.as_ref(),
        timeout,
    )?;
    let mut b = contestant(
        args.params_b.as_ref(),
        args.search_params_b.as_ref(),
        args.engine_b.as_ref(),
        &args.option_b,
        args.name_b.as_ref(),
        timeout,
    )?;
    if a.name == b.name {
        a.name.push_str("-A");
        b.name.push_str("-B");
    }
    let limit = if let Some(n) = args.nodes {
        MoveLimit::Fixed(SearchBudget::Nodes(n))
    } else if let Some(d) = args.depth {
        MoveLimit::Fixed(SearchBudget::Depth(d))
    } else if let Some(ms) = args.movetime {
        MoveLimit::Fixed(SearchBudget::Movetime(Duration::from_millis(ms)))
    } else {
        MoveLimit::Clock(match args.tc {
            Some(tc) => tc,
            None => DEFAULT_TIME_CONTROL.parse()?,
        })
    };
    let openings = match &args.openings {
        Some(path) => OpeningSource::load(path, args.opening_plies, args.book_plies)
            .with_context(|| format!("loading openings from {}", path.display()))?,
        None => OpeningSource::Standard,
    };
    let sprt: Option<Sprt> = match &args.sprt {
        Some(words) => Some(words.join(" ").parse().context("parsing --sprt")?),
        None => None,
    };
    let settings = MatchSettings {
        players: [a, b],
        games: args.games,
        first_game: 0,
        repeat: if args.no_pairs { 1 } else { args.repeat },
        openings,
        order: args.openings_order,
        limit,
        resign: args.resign_score.map(|score| ResignRule {
            score,
            moves: args.resign_moves,
        }),
        draw: args.draw_score.map(|score| DrawRule {
            score,
            moves: args.draw_moves,
            after_ply: args.draw_after,
        }),
        max_plies: args.max_plies,
        concurrency: args.concurrency,
        seed: args.seed,
        hash_mb: args.hash,
        sprt,
        event: args.event.clone(),
    };
    let [name_a, name_b] = [&settings.players[0].name, &settings.players[1].name];
    let limit_text = match settings.limit {
        MoveLimit::Clock(tc) => format!("tc {tc}"),
        MoveLimit::Fixed(budget) => budget.describe(),
    };
    say!(
        "match {name_a} (A) vs {name_b} (B): {} games, {} per opening, {limit_text}, concurrency {}{}{}",
        settings.games,
        settings.repeat,
        settings.concurrency,
        settings
            .openings
            .list_len()
            .map_or(String::new(), |n| format!(
                ", {n} openings ({})",
                settings.order.name()
            )),
        settings.sprt.map_or(String::new(), |s| format!(
            ", SPRT {s} (bounds {:.2} {:.2})",
            s.lower_bound(),
            s.upper_bound()
        ))
    )?;
    // The journal's games count again and are not replayed. A PGN written
    // to a device or FIFO as the games end has no journal.
    let (mut journal, played) = match &args.pgn {
        Some(pgn) if std::fs::metadata(pgn).map_or(true, |m| m.is_file()) => {
            let identity = match_identity(args, &settings)?;
            // With a node or depth budget each game is decided by its number
            // alone (fresh tables every game), so a resume may play more or
            // fewer games at once; under a clock the load is part of the
            // match.
            let reproducible = matches!(
                settings.limit,
                MoveLimit::Fixed(SearchBudget::Nodes(_) | SearchBudget::Depth(_))
            );
            let may_differ: &[&str] = if reproducible { &["concurrency"] } else { &[] };
            let (journal, played) =
                MatchJournal::open(&journal_path(pgn), &identity, may_differ, args.overwrite)?;
            (Some(journal), played)
        }
        _ => (None, Vec::new()),
    };
    // The PGN is complete (committed) when the match ends, also when it is
    // stopped by Ctrl-C: the games played so far are kept.
    let mut pgn_out = match &args.pgn {
        Some(path) => Some(AtomicFile::create(path)?),
        None => None,
    };
    let mut by_family: BTreeMap<String, (Record, BTreeMap<String, u64>)> = BTreeMap::new();
    let mut count_family = |report: &GameReport| {
        let (family, opening) = report
            .eco
            .as_ref()
            .map_or(("-", "unknown"), |e| (e.eco_family(), e.opening()));
        let entry = by_family.entry(family.to_string()).or_default();
        entry.0.add(report.score_of_a());
        *entry.1.entry(opening.to_string()).or_default() += 1;
    };
    played.iter().for_each(&mut count_family);
    if let (Some(journal), false) = (&journal, played.is_empty()) {
        let standing = Standing::of_games(&played, settings.repeat, settings.sprt.as_ref());
        say!(
            "resuming from {}: {} games played | {}",
            journal.path().display(),
            played.len(),
            standing.summary_line()
        )?;
    }
    if let Some(out) = pgn_out.as_mut() {
        let mut in_order: Vec<&GameReport> = played.iter().collect();
        in_order.sort_by_key(|r| r.index);
        for report in in_order {
            out.write_all(report.pgn.as_bytes())
                .with_context(|| format!("writing the PGN file {}", out.target().display()))?;
        }
    }
    let interrupt = Interrupt::new();
    interrupt.install(Some(
        "stopping: games in progress are abandoned (a second Ctrl-C exits at once)",
    ))?;
    let abort = interrupt.flag();
    let mut write_error = None;
    let started = Instant::now();
    let summary = resume_match(&settings, &played, abort, |report, standing| {
        count_family(report);
        let (white, black) = match report.white {
            Side::A => (name_a, name_b),
            Side::B => (name_b, name_a),
        };
        let detail = match &report.end {
            GameEnd::Forfeit { detail, .. } => format!(" ({detail})"),
            GameEnd::Rules(_) => String::new(),
        };
        if write_error.is_some() {
            // Stop at the first failed write: the match is aborted below.
            return;
        }
        let line = say!(
            "game {:>4}: {white} - {black} {} {}{detail}, {} plies | {}",
            report.index + 1,
            report.result.pgn(),
            report.end_description(),
            report.plies,
            standing.summary_line()
        );
        let pgn = match pgn_out.as_mut() {
            Some(out) => out
                .write_all(report.pgn.as_bytes())
                .and_then(|()| out.flush())
                .with_context(|| format!("writing the PGN file {}", out.target().display())),
            None => Ok(()),
        };
        let journaled = match journal.as_mut() {
            Some(journal) => journal.record(report).map_err(anyhow::Error::from),
            None => Ok(()),
        };
        if let Err(e) = line.and(pgn).and(journaled) {
            write_error = Some(e);
            interrupt.trigger();
        }
    })?;
    if let Some(e) = write_error {
        return Err(e);
    }
    if let Some(out) = pgn_out {
        out.commit()?;
    }
    // A match stopped by Ctrl-C keeps its journal, to be resumed.
    if let Some(journal) = journal {
        if interrupt.requested() {
            say!(
                "the journal {} is kept: rerun the same command to resume the match",
                journal.path().display()
            )?;
        } else {
            journal.remove()?;
        }
    }
    let standing = &summary.standing;
    say!()?;
    say!(
        "final: {name_a} vs {name_b}: {} games{}",
        summary.games_played,
        if summary.stopped_early {
            " (stopped early)"
        } else {
            ""
        }
    )?;
    let r = &standing.record;
    say!(
        "  games  +{} ={} -{} score {:.3}",
        r.wins,
        r.draws,
        r.losses,
        r.score()
    )?;
    if standing.paired {
        let p = &standing.pairs;
        let [ll, ld, even, wd, ww] = p.frequencies();
        say!(
            "  pairs  {} complete: [LL LD DD+WL WD WW] = [{ll} {ld} {even} {wd} {ww}] (DD {} WL {})",
            p.pairs(),
            p.dd,
            p.wl
        )?;
        say!("  pentanomial  {}", estimate_line(&p.estimate()))?;
    }
    say!("  trinomial    {}", estimate_line(&r.estimate()))?;
    for ((side, reason), count) in &standing.forfeits {
        let name = if *side == Side::A { name_a } else { name_b };
        say!("  {name} lost {count} by {}", reason.name())?;
    }
    if !standing.endings.is_empty() {
        let endings: Vec<String> = standing
            .endings
            .iter()
            .map(|(t, n)| format!("{} {n}", t.name()))
            .collect();
        say!("  endings: {}", endings.join(", "))?;
    }
    if args.report_openings {
        say!("  {name_a}'s score by ECO family of the opening:")?;
        for (family, (record, names)) in &by_family {
            // The family's most frequent opening name labels it.
            let name = names
                .iter()
                .max_by_key(|(name, n)| (**n, std::cmp::Reverse(*name)))
                .map_or("", |(name, _)| name.as_str());
            say!(
                "    {family:<2} {name:<32} {:>5} games  +{} ={} -{}  {:>5.1}%",
                record.games(),
                record.wins,
                record.draws,
                record.losses,
                100.0 * record.score()
            )?;
        }
    }
    if let (Some(decision), Some(sprt)) = (standing.sprt, settings.sprt) {
        say!(
            "  SPRT   {} (LLR {:+.2}, bounds {:.2} {:.2}, {} on {})",
            decision.verdict(),
            standing.llr.unwrap_or_default(),
            sprt.lower_bound(),
            sprt.upper_bound(),
            sprt,
            if standing.paired { "pairs" } else { "games" }
        )?;
    }
    if let Some(path) = &args.summary {
        let mut json = Summary::new("engine match", env!("CARGO_PKG_VERSION"));
        json.status = if interrupt.requested() {
            SummaryStatus::Interrupted
        } else {
            SummaryStatus::Complete
        };
        json.inputs.extend(args.openings.clone());
        json.output.clone_from(&args.pgn);
        let p = &standing.pairs;
        json.count("games", summary.games_played as u64)
            .count("wins", r.wins)
            .count("draws", r.draws)
            .count("losses", r.losses)
            .count("pairs", p.pairs())
            .timing("total_seconds", started.elapsed())
            .figure("player_a", name_a.as_str())
            .figure("player_b", name_b.as_str())
            .figure("pentanomial_ll_ld_ddwl_wd_ww", p.frequencies().to_vec());
        let e = standing.estimate();
        json.figure("score", e.score)
            .figure("elo", finite(e.elo))
            .figure("elo_low", finite(e.low))
            .figure("elo_high", finite(e.high))
            .figure("los", e.los)
            .figure("nelo", e.nelo)
            .figure("nelo_margin", finite(e.nelo_margin))
            .figure(
                "statistics_on",
                if standing.paired { "pairs" } else { "games" },
            );
        if let (Some(decision), Some(llr)) = (standing.sprt, standing.llr) {
            json.figure("sprt", decision.verdict()).figure("llr", llr);
        }
        json.write(path)?;
    }
    if interrupt.requested() {
        std::process::exit(EXIT_INTERRUPTED.into());
    }
    Ok(())
}

/// What decides a match's games, for its journal: every setting but the
/// output files, and fingerprints of the files it reads (openings, params
/// files, the external engines' programs, and this program when a player is
/// built in).
fn match_identity(args: &MatchArgs, settings: &MatchSettings) -> Result<MatchIdentity> {
    let fingerprint = |path: &std::path::Path| {
        file_fingerprint(path).with_context(|| format!("reading {}", path.display()))
    };
    let file = |path: Option<&PathBuf>| -> Result<String> {
        match path {
            Some(p) => Ok(format!("{} ({})", p.display(), fingerprint(p)?)),
            None => Ok("-".to_string()),
        }
    };
    let mut id = MatchIdentity::new();
    let mut insert = |key: &str, value: String| {
        id.insert(key.to_string(), value);
    };
    let sides = [
        ("a", &args.params_a, &args.search_params_a),
        ("b", &args.params_b, &args.search_params_b),
    ];
    for ((side, params, search), player) in sides.into_iter().zip(&settings.players) {
        insert(&format!("player {side}"), player.name.clone());
        match &player.kind {
            PlayerKind::External(spec) => {
                let program = spec.command.split_whitespace().next().unwrap_or_default();
                let program = match find_program(program) {
                    Some(path) => fingerprint(&path)?,
                    None => "not found".to_string(),
                };
                insert(&format!("engine {side}"), spec.command.clone());
                insert(&format!("engine {side} program"), program);
                insert(&format!("options {side}"), format!("{:?}", spec.options));
                insert(&format!("timeout {side}"), format!("{:?}", spec.timeout));
            }
            PlayerKind::InProcess { .. } => {
                insert(&format!("params {side}"), file(params.as_ref())?);
                insert(&format!("search params {side}"), file(search.as_ref())?);
                let exe = std::env::current_exe().context("finding this program")?;
                insert("built-in engine", fingerprint(&exe)?);
            }
        }
    }
    insert("games", settings.games.to_string());
    insert("repeat", settings.repeat.to_string());
    insert("openings", file(args.openings.as_ref())?);
    insert("opening plies", args.opening_plies.to_string());
    insert("book plies", args.book_plies.to_string());
    insert("openings order", settings.order.name().to_string());
    insert("limit", format!("{:?}", settings.limit));
    insert("resign", format!("{:?}", settings.resign));
    insert("draw", format!("{:?}", settings.draw));
    insert("max plies", format!("{:?}", settings.max_plies));
    insert("concurrency", settings.concurrency.to_string());
    insert("seed", settings.seed.to_string());
    insert("hash", settings.hash_mb.to_string());
    insert(
        "sprt",
        settings.sprt.map_or("-".to_string(), |s| s.to_string()),
    );
    insert("event", settings.event.clone());
    Ok(id)
}

/// The file a command's program name runs: the name itself when it holds a
/// `/`, else the first match on `PATH`.
fn find_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let path = PathBuf::from(program);
        return path.is_file().then_some(path);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

/// `value` for JSON, which has no infinities (`null` instead).
fn finite(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}
