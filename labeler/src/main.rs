//! `labeler`: labels positions with the result of a game played out from
//! each of them by fast self-play — in-process with the engine library, or
//! with an external UCI engine — in parallel, resumably and shardably.
//!
//! `labeler [OPTIONS] INPUT… -o OUTPUT` labels; `labeler merge SHARD… -o
//! OUTPUT` restores input order from shard outputs. Game play comes from
//! the engine library ([`engine::play::game`]: rules and adjudication;
//! [`engine::play::player`] and [`engine::play::uci_client`]: who moves), and
//! the run itself from the tools' runtime ([`engine::runtime`]: ordered
//! parallel map, interrupt, progress display). The modules: [`labeling`]
//! (the labeling run), [`selfplay`] (self-play games), [`resume`] (output
//! and sidecar), [`shard`] and [`merge`] (scale-out) and [`summary`].

mod labeling;
mod merge;
mod resume;
mod selfplay;
mod shard;
mod summary;

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};

use crate::labeling::{LabelSettings, run};
use crate::selfplay::game::GameSettings;
use crate::selfplay::output::OutputFormat;
use crate::selfplay::start::StartRules;
use crate::selfplay::{PlayerSpec, SelfplaySettings};
use crate::shard::Shard;
use engine::eval::Params;
use engine::formats::params_file;
use engine::play::game::{DrawRule, GameRules, ResignRule, SearchBudget};
use engine::play::openings::OpeningSource;
use engine::play::uci_client::EngineSpec;
use engine::runtime::interrupt::Interrupt;
use engine::search::MATE_BOUND;

/// Default node budget per move (reproducible).
const DEFAULT_NODES: u64 = 5_000;
/// Default resign threshold in centipawns.
const DEFAULT_RESIGN_SCORE: i32 = 700;
/// Default consecutive moves (of each side) beyond the resign threshold.
const DEFAULT_RESIGN_MOVES: u32 = 4;
/// Default draw threshold in centipawns.
const DEFAULT_DRAW_SCORE: i32 = 10;
/// Default consecutive moves (of each side) within the draw threshold.
const DEFAULT_DRAW_MOVES: u32 = 8;
/// Default plies before draw adjudication may apply.
const DEFAULT_DRAW_AFTER: u32 = 60;
/// Default game length limit in plies.
const DEFAULT_MAX_PLIES: u32 = 400;
/// Default node budget of the `--score` search.
const DEFAULT_SCORE_NODES: u64 = 20_000;
/// Default seconds to wait for an external engine's answer.
const DEFAULT_ENGINE_TIMEOUT_SECONDS: f64 = 10.0;
/// Default restarts of a failed external engine per position.
const DEFAULT_ENGINE_RETRIES: u32 = 2;
/// Default seed of `selfplay`.
const DEFAULT_SEED: u64 = 1;
/// Default random plies after the opening.
const DEFAULT_RANDOM_PLIES: u32 = 8;
/// Default bound of the start's score.
const DEFAULT_MAX_START_SCORE: i32 = 400;
/// Default nodes of the start's search.
const DEFAULT_START_NODES: u64 = 1_000;
/// Default bound of a kept position's score.
const DEFAULT_MAX_SCORE: i32 = 3_000;
/// Default moves taken from each PGN game of --openings (as `engine match`).
const DEFAULT_OPENING_PLIES: usize = 8;
/// Exit status after an interrupt (128 + SIGINT).
const EXIT_INTERRUPTED: u8 = 130;

const ABOUT: &str =
    "Label positions with game results by fast self-play (resumable, parallel, shardable)";

const LONG_ABOUT: &str = "\
Label positions with the result of a game played out from each of them.

  labeler [OPTIONS] INPUT... -o OUTPUT
  labeler merge SHARD_OUTPUT... -o OUTPUT

Inputs are files in any labeled format the engine library reads (EPD with
c9/c2, FEN [1.0], FEN | score | result, CSV; plain, .gz or .zst; - for
standard input; a UTF-8 byte-order mark is skipped). Only the positions
are read: existing labels (results, scores) are ignored, even malformed
ones (c9 \"2\", ce NaN); a line whose position (board fields, clocks)
cannot be read is a bad line, reported with file and line. An input that cannot be read to its end
(I/O error, truncated .gz/.zst) is an error (exit 1), not a shorter run.
Every position is played out by the engine library on both sides at a fixed
budget per move (or by an external UCI engine with --engine), with fresh
search tables per game. The
game ends by checkmate, stalemate, threefold repetition (within the game),
the 50-move rule or insufficient material, or by adjudication (resign, draw,
max plies). The output is canonical EPD with the result as c9 (and the
score of the position as ce with --score), in input order whatever the
number of threads; with --nodes or --depth it is byte-identical for any
--threads.

Bad lines are reported with file and line, skipped and counted; illegal
positions are rejected with the reason. Positions already decided
(checkmate, stalemate, insufficient material) are labeled without a game.

SCORE ONLY: --score-only relabels positions with search scores alone (e.g.
a stronger engine's), without playing games: each position is searched
once at the --score budget (--score-nodes, default 20000, or
--score-depth), with fresh tables, and written as canonical EPD with ce
(side to move's view, centipawns) and no c9. A position without a legal
move is scored without a search (mated: -32000, stalemate: 0). A position
for which the engine reports no score (no 'info ... score' before
'bestmove') is a failed position, not retried, so that no line is without a
label. The game options (--nodes, --depth, --movetime, --resign-*,
--draw-*, --max-plies) are refused with it; the summary counts positions
scored instead of results. For example, Stockfish at 5,000 nodes:

  labeler --engine /usr/games/stockfish --engine-option Hash=16 \\
    --score-only --score-nodes 5000 -o scored.epd positions.epd

The tuner trains on such scores alone with --lambda 0.

RESUMING: results are appended to OUTPUT and flushed in input order as soon
as they are complete. Beside it, OUTPUT.progress records the inputs (path,
size, fingerprint of the first 64 KiB) and every option that changes the
labels, followed by one 'failed' record per position the engine could not
label. Rerunning the same command after a crash, kill -9 or Ctrl-C cuts a
partial last line, counts the complete lines plus the failed records as
positions done, and continues after them: nothing is duplicated or
relabeled. A rerun with other inputs or options stops with an error naming
the difference (--overwrite starts over). --threads may change between runs.

SHARDING: --shard K/N labels the records whose number (counted from 0 over
all inputs, bad lines included) is K modulo N; each output line then ends
with the operation id \"<record number>\";, and its sidecar ends with a
'complete' record when the shard is done. 'labeler merge' takes the shard
outputs, checks with their sidecars that they are every shard of one run,
each complete and uncut (otherwise it fails and writes nothing), restores
input order and removes the id operation: the result equals an unsharded
run's output. Concatenated shard outputs have no sidecar: merge them with
--unchecked. See
scripts/labeler-cluster-examples.sh for GNU parallel and Slurm.";

const SELFPLAY_LONG_ABOUT: &str = "\
Make training data from self-play games.

  labeler selfplay -o OUT --games N [--nodes 5000] [--seed S] [--threads T]

Plays N games of the engine library against itself in-process (or of any
UCI engine with --engine), both sides at a fixed budget per move (--nodes
or --depth), with fresh search tables per game and the labeler's game
rules and adjudication (--resign-*, --draw-*, --max-plies; plies are
counted from the opening's start).

STARTS: an opening from --openings (EPD/FEN positions, PGN games (.pgn, the
first --opening-plies moves) or a Polyglot book (.bin, random lines of up to
--book-plies moves): the reader of 'engine match'), else the standard
position; then --random-plies uniformly random legal moves. A start the
random moves end, or whose --start-nodes search scores beyond
--max-start-score, is drawn again (an error after 1000 draws). Game i's
random choices come from (--seed, i) only, so the output is byte-identical
for any --threads.

KEPT: every position the engine searched after the random plies, except
when the side to move is in check, the best move is a capture or a
promotion (not quiet), or the score is a mate score or beyond --max-score.
Each carries the game's result and the search score: in EPD as c9 (White's
view) and ce (side to move's view) with hmvc and fmvn.

FORMATS: --format epd (canonical EPD), bullet-text (bullet's 'FEN | score |
result', White-relative) or bullet (bullet's 32-byte ChessBoard records,
seen from the side to move). The tuner reads all three.

SPLITTING: --first-game K plays games K..K+N-1 (the same games a longer run
plays there); --shard K/N plays the K-th of N equal consecutive parts of
them. Outputs of consecutive ranges concatenated in order (cat) equal one
run's output, byte for byte.

RESUMING: OUTPUT.progress records the run's settings and a checkpoint after
every game written; rerunning the same command after Ctrl-C, a crash or
kill -9 cuts OUTPUT back to the last checkpoint and goes on from there,
without loss or duplicates. A rerun with other settings is refused
(--overwrite starts over); --threads may change between runs.";

#[derive(Parser, Debug)]
#[command(
    name = "labeler",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    #[command(flatten)]
    label: LabelArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Merge shard outputs back into input order (removes the id operation).
    Merge(MergeArgs),
    /// Make training data from self-play games: every quiet position of
    /// every game, with the game's result and the search score.
    #[command(long_about = SELFPLAY_LONG_ABOUT)]
    Selfplay(Box<SelfplayArgs>),
}

#[derive(Args, Debug)]
struct MergeArgs {
    /// Shard outputs, or concatenations of them, in any order.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The merged output (written atomically).
    #[arg(short, long)]
    output: PathBuf,
    /// Merge without checking that the inputs are the complete outputs of
    /// every shard of one run (needed for concatenations, which have no
    /// sidecar): a missing shard then goes unnoticed.
    #[arg(long)]
    unchecked: bool,
}

/// The options that only change the games, unused (and refused) with
/// `--score-only`.
const GAME_OPTIONS: [&str; 9] = [
    "nodes",
    "depth",
    "movetime",
    "resign_score",
    "resign_moves",
    "draw_score",
    "draw_moves",
    "draw_after",
    "max_plies",
];

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("scoring").multiple(true)))]
struct LabelArgs {
    /// Input files (any labeled format; .gz/.zst; - for standard input).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,

    /// Output file (canonical EPD with c9, or only ce with --score-only);
    /// resumed if it exists.
    #[arg(short, long, required = true)]
    output: Option<PathBuf>,

    /// Nodes per move (reproducible) [default: 5000].
    #[arg(long, group = "budget")]
    nodes: Option<u64>,
    /// Fixed depth per move (reproducible).
    #[arg(long, group = "budget")]
    depth: Option<u32>,
    /// Milliseconds per move (not reproducible).
    #[arg(long, group = "budget")]
    movetime: Option<u64>,

    #[command(flatten)]
    rules: RulesArgs,

    /// Also record the search score of each input position as ce.
    #[arg(long, group = "scoring")]
    score: bool,
    /// Only record the search score of each input position as ce: no game
    /// is played and the output has no c9 (implies --score; the game
    /// options --nodes, --depth, --movetime, --resign-*, --draw-* and
    /// --max-plies are refused).
    #[arg(long, group = "scoring", conflicts_with_all = GAME_OPTIONS)]
    score_only: bool,
    /// Nodes of the --score search [default: 20000].
    #[arg(long, group = "score_budget", requires = "scoring")]
    score_nodes: Option<u64>,
    /// Depth of the --score search.
    #[arg(long, group = "score_budget", requires = "scoring")]
    score_depth: Option<u32>,

    #[command(flatten)]
    engine: EngineArgs,

    /// Games played at once [default: number of CPUs].
    #[arg(short = 't', long)]
    threads: Option<usize>,
    /// Label only the records whose number is K modulo N.
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// Write bad lines and failed positions to this file.
    #[arg(long)]
    rejects: Option<PathBuf>,
    /// Start over even if OUTPUT exists (its content is lost).
    #[arg(long)]
    overwrite: bool,
    /// Never show the progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Also write the run's summary as JSON to FILE (positions labeled and
    /// scored, results, endings, rejected lines and failed positions).
    #[arg(long, value_name = "FILE")]
    summary: Option<PathBuf>,
}

/// Adjudication and length of the games (labeling and self-play alike).
#[derive(Args, Debug)]
struct RulesArgs {
    /// Resign adjudication threshold in centipawns.
    #[arg(long, default_value_t = DEFAULT_RESIGN_SCORE)]
    resign_score: i32,
    /// Consecutive moves of each side beyond --resign-score that end the
    /// game (both sides' searches must agree); 0 disables.
    #[arg(long, default_value_t = DEFAULT_RESIGN_MOVES)]
    resign_moves: u32,
    /// Draw adjudication threshold in centipawns.
    #[arg(long, default_value_t = DEFAULT_DRAW_SCORE)]
    draw_score: i32,
    /// Consecutive moves of each side within --draw-score that draw the
    /// game; 0 disables.
    #[arg(long, default_value_t = DEFAULT_DRAW_MOVES)]
    draw_moves: u32,
    /// No draw adjudication before this many plies of the game.
    #[arg(long, default_value_t = DEFAULT_DRAW_AFTER)]
    draw_after: u32,
    /// Games reaching this many plies are drawn; 0 disables.
    #[arg(long, default_value_t = DEFAULT_MAX_PLIES)]
    max_plies: u32,
}

/// An external UCI engine instead of the in-process searcher.
#[derive(Args, Debug)]
struct EngineArgs {
    /// Play the games with this UCI engine (command line, split on spaces),
    /// one process per thread, reused across games.
    #[arg(long)]
    engine: Option<String>,
    /// UCI option for --engine, as Name=Value (repeatable).
    #[arg(long = "engine-option", value_name = "NAME=VALUE", requires = "engine")]
    engine_options: Vec<String>,
    /// Seconds to wait for any engine answer before declaring it hung
    /// (added to --movetime).
    #[arg(long, default_value_t = DEFAULT_ENGINE_TIMEOUT_SECONDS)]
    engine_timeout: f64,
    /// Restarts of a crashed or hung engine per position before the
    /// position is reported as failed.
    #[arg(long, default_value_t = DEFAULT_ENGINE_RETRIES)]
    engine_retries: u32,
}

impl RulesArgs {
    /// The game rules with `budget` for every move.
    fn rules(&self, budget: SearchBudget) -> GameRules {
        GameRules {
            budget,
            resign: (self.resign_moves > 0).then_some(ResignRule {
                score: self.resign_score,
                moves: self.resign_moves,
            }),
            draw: (self.draw_moves > 0).then_some(DrawRule {
                score: self.draw_score,
                moves: self.draw_moves,
                after_ply: self.draw_after,
            }),
            max_plies: (self.max_plies > 0).then_some(self.max_plies),
        }
    }
}

impl EngineArgs {
    /// The external engine, if one is given.
    fn spec(&self) -> Result<Option<EngineSpec>> {
        let Some(command) = &self.engine else {
            return Ok(None);
        };
        let mut options = Vec::new();
        for pair in &self.engine_options {
            let (name, value) = pair
                .split_once('=')
                .with_context(|| format!("--engine-option {pair:?} is not Name=Value"))?;
            options.push((name.trim().to_string(), value.trim().to_string()));
        }
        if !(self.engine_timeout.is_finite() && self.engine_timeout > 0.0) {
            bail!("--engine-timeout must be a positive number of seconds");
        }
        Ok(Some(EngineSpec {
            command: command.clone(),
            options,
            timeout: Duration::from_secs_f64(self.engine_timeout),
        }))
    }
}

/// The number of threads: as given, or one per CPU.
fn thread_count(threads: Option<usize>) -> Result<usize> {
    let threads = threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    if threads == 0 {
        bail!("--threads must be at least 1");
    }
    Ok(threads)
}

fn settings_of(args: LabelArgs) -> Result<LabelSettings> {
    let budget = match (args.nodes, args.depth, args.movetime) {
        (_, Some(d), _) => SearchBudget::Depth(d),
        (_, _, Some(ms)) => SearchBudget::Movetime(Duration::from_millis(ms)),
        (n, _, _) => SearchBudget::Nodes(n.unwrap_or(DEFAULT_NODES)),
    };
    let rules = args.rules.rules(budget);
    let score_budget = (args.score || args.score_only).then(|| match args.score_depth {
        Some(d) => SearchBudget::Depth(d),
        None => SearchBudget::Nodes(args.score_nodes.unwrap_or(DEFAULT_SCORE_NODES)),
    });
    let engine = args.engine.spec()?;
    let threads = thread_count(args.threads)?;
    Ok(LabelSettings {
        inputs: args.inputs,
        output: args.output.context("missing --output")?,
        rules,
        score_budget,
        score_only: args.score_only,
        engine,
        engine_retries: args.engine.engine_retries,
        threads,
        shard: args.shard,
        rejects: args.rejects,
        overwrite: args.overwrite,
        progress: !args.no_progress,
    })
}

/// The options of `labeler selfplay`.
#[derive(Args, Debug)]
struct SelfplayArgs {
    /// Output file; resumed if an earlier run of the same command wrote it.
    #[arg(short, long)]
    output: PathBuf,
    /// Number of games.
    #[arg(long)]
    games: u64,
    /// Nodes per move [default: 5000].
    #[arg(long, group = "budget")]
    nodes: Option<u64>,
    /// Fixed depth per move.
    #[arg(long, group = "budget")]
    depth: Option<u32>,
    /// Seed of the openings and random plies (game i uses (seed, i)).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Games played at once [default: number of CPUs].
    #[arg(short = 't', long)]
    threads: Option<usize>,

    /// Openings: EPD/FEN positions, PGN games (.pgn) or a Polyglot book
    /// (.bin); the standard position otherwise.
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Moves taken from each PGN game of --openings.
    #[arg(long, default_value_t = DEFAULT_OPENING_PLIES)]
    opening_plies: usize,
    /// Moves of each random line from a Polyglot book.
    #[arg(long, default_value_t = DEFAULT_OPENING_PLIES)]
    book_plies: usize,
    /// Uniformly random legal moves played after the opening.
    #[arg(long, default_value_t = DEFAULT_RANDOM_PLIES)]
    random_plies: u32,
    /// Draw the start again when its search score is beyond ±CP.
    #[arg(long, value_name = "CP", default_value_t = DEFAULT_MAX_START_SCORE)]
    max_start_score: i32,
    /// Nodes of the start's search.
    #[arg(long, default_value_t = DEFAULT_START_NODES)]
    start_nodes: u64,
    /// Drop positions whose score is beyond ±CP.
    #[arg(long, value_name = "CP", default_value_t = DEFAULT_MAX_SCORE)]
    max_score: i32,

    #[command(flatten)]
    rules: RulesArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Epd)]
    format: OutputFormat,
    /// Index of the first game (splits a run over machines).
    #[arg(long, default_value_t = 0)]
    first_game: u64,
    /// Play only the K-th of N equal consecutive parts of the games.
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// Play with the weights of this params file (in-process player).
    #[arg(long, conflicts_with = "engine")]
    params: Option<PathBuf>,

    #[command(flatten)]
    engine: EngineArgs,

    /// Start over even if OUTPUT exists (its content is lost).
    #[arg(long)]
    overwrite: bool,
    /// Never show the progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Also write the summary as JSON to this file.
    #[arg(long, value_name = "FILE")]
    summary: Option<PathBuf>,
}

/// The games `--first-game`, `--games` and `--shard` select.
fn game_range(first: u64, games: u64, shard: Option<Shard>) -> Result<Range<u64>> {
    if games == 0 {
        bail!("--games must be at least 1");
    }
    let end = first
        .checked_add(games)
        .context("--first-game + --games is too large")?;
    let Some(shard) = shard else {
        return Ok(first..end);
    };
    let part =
        |k: u64| first + (u128::from(games) * u128::from(k) / u128::from(shard.count)) as u64;
    let range = part(shard.index)..part(shard.index + 1);
    if range.is_empty() {
        bail!("shard {shard} of {games} games holds no game (use fewer shards)");
    }
    Ok(range)
}

fn selfplay_settings(args: SelfplayArgs) -> Result<SelfplaySettings> {
    let budget = match (args.nodes, args.depth) {
        (_, Some(0)) => bail!("--depth must be at least 1"),
        (_, Some(d)) => SearchBudget::Depth(d),
        (Some(0), _) => bail!("--nodes must be at least 1"),
        (n, None) => SearchBudget::Nodes(n.unwrap_or(DEFAULT_NODES)),
    };
    if args.max_start_score < 0 {
        bail!("--max-start-score must be at least 0");
    }
    if args.start_nodes == 0 {
        bail!("--start-nodes must be at least 1");
    }
    if args.rules.max_plies > 0 && args.random_plies >= args.rules.max_plies {
        bail!(
            "--random-plies {} leaves no ply to play before --max-plies {}: every game would \
             be adjudicated a draw before its first kept position (use fewer random plies, \
             or a larger --max-plies, 0 for none)",
            args.random_plies,
            args.rules.max_plies
        );
    }
    let score_limit = if args.format == OutputFormat::Bullet {
        i32::from(i16::MAX)
    } else {
        MATE_BOUND - 1
    };
    if !(0..=score_limit).contains(&args.max_score) {
        bail!(
            "--max-score must be between 0 and {score_limit} (with --format {})",
            args.format.name()
        );
    }
    let range = game_range(args.first_game, args.games, args.shard)?;
    let openings = match &args.openings {
        Some(path) => OpeningSource::load(path, args.opening_plies, args.book_plies)
            .with_context(|| format!("loading openings from {}", path.display()))?,
        None => OpeningSource::Standard,
    };
    let player = match (args.engine.spec()?, &args.params) {
        (Some(spec), _) => PlayerSpec::External(spec),
        (None, Some(path)) => PlayerSpec::InProcess {
            params: Arc::new(read_params(path)?),
            source: Some(path.clone()),
        },
        (None, None) => PlayerSpec::InProcess {
            params: Arc::new(Params::defaults()),
            source: None,
        },
    };
    Ok(SelfplaySettings {
        output: args.output,
        format: args.format,
        games: GameSettings {
            openings,
            start: StartRules {
                random_plies: args.random_plies,
                max_start_score: Some(args.max_start_score),
                budget: SearchBudget::Nodes(args.start_nodes),
            },
            rules: args.rules.rules(budget),
            max_score: args.max_score,
            seed: args.seed,
        },
        openings_path: args.openings,
        range,
        player,
        engine_retries: args.engine.engine_retries,
        threads: thread_count(args.threads)?,
        overwrite: args.overwrite,
        progress: !args.no_progress,
    })
}

/// Reads a params file, reporting its warnings (unknown or missing names).
fn read_params(path: &Path) -> Result<Params> {
    let loaded = params_file::read_file(path)?;
    for warning in loaded.warnings() {
        eprintln!("labeler: {}: {warning}", path.display());
    }
    Ok(loaded.params)
}

fn selfplay_command(args: SelfplayArgs) -> Result<ExitCode> {
    // Before anything is read or created: no output may be an input.
    let mut outputs = vec![args.output.clone(), resume::sidecar_path(&args.output)];
    outputs.extend(args.summary.clone());
    let inputs: Vec<&PathBuf> = args.openings.iter().chain(&args.params).collect();
    engine::formats::atomic_file::check_outputs(&outputs, &inputs)?;
    let summary_path = args.summary.clone();
    let settings = selfplay_settings(args)?;
    let interrupt = Interrupt::new();
    interrupt.install(Some(
        "labeler selfplay: interrupted; writing the finished games and stopping",
    ))?;
    let (stats, interrupted, elapsed) = selfplay::run(&settings, &interrupt)?;
    if let Some(path) = summary_path {
        stats
            .summary(&settings, elapsed, interrupted)
            .write(&path)?;
    }
    Ok(if interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Some(Command::Merge(args)) => {
            merge::merge(&args.inputs, &args.output, args.unchecked).map(|summary| {
                eprintln!(
                    "labeler merge: {} lines from {} ordered runs written to {}",
                    summary.lines,
                    summary.runs,
                    args.output.display()
                );
                ExitCode::SUCCESS
            })
        }
        Some(Command::Selfplay(args)) => selfplay_command(*args),
        None => label(cli.label),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("labeler: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn label(args: LabelArgs) -> Result<ExitCode> {
    let started = std::time::Instant::now();
    let summary_path = args.summary.clone();
    let inputs = args.inputs.clone();
    let settings = settings_of(args)?;
    if let Some(path) = &summary_path {
        // The summary may be neither an input nor another output (the run
        // checks its output, sidecar and rejects itself).
        let mut outputs = vec![
            settings.output.clone(),
            resume::sidecar_path(&settings.output),
        ];
        outputs.extend(settings.rejects.clone());
        outputs.push(path.clone());
        engine::formats::atomic_file::check_outputs(&outputs, &settings.inputs)?;
    }
    let interrupt = Interrupt::new();
    interrupt.install(Some(
        "labeler: interrupted; writing finished results and stopping",
    ))?;
    let (stats, interrupted) = run(&settings, &interrupt)?;
    if let Some(path) = summary_path {
        let mut json = stats.json_summary(started.elapsed(), interrupted);
        json.inputs = inputs;
        json.output = Some(settings.output.clone());
        json.write(&path)?;
    }
    Ok(if interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}
