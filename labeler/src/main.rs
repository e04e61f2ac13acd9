//! `labeler`: labels positions with the result of a game played out from
//! each of them by fast self-play — in-process with the engine library, or
//! with an external UCI engine — in parallel, resumably and shardably.
//!
//! `labeler [OPTIONS] INPUT… -o OUTPUT` labels; `labeler merge SHARD… -o
//! OUTPUT` restores input order from shard outputs. Game play comes from
//! the engine library ([`engine::play::game`]: rules and adjudication;
//! [`engine::play::player`] and [`engine::play::uci_client`]: who moves). The modules:
//! [`labeling`] (the parallel, ordered pipeline), [`resume`] (output and
//! sidecar), [`shard`] and [`merge`] (scale-out), [`summary`], [`progress`]
//! and [`interrupt`].

mod interrupt;
mod labeling;
mod merge;
mod progress;
mod resume;
mod shard;
mod summary;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};

use crate::interrupt::Interrupt;
use crate::labeling::{LabelSettings, run};
use crate::shard::Shard;
use engine::play::game::{DrawRule, GameRules, ResignRule, SearchBudget};
use engine::play::uci_client::EngineSpec;

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
standard input); existing labels are ignored. Every position is played out
by the engine library on both sides at a fixed budget per move (or by an
external UCI engine with --engine), with fresh search tables per game. The
game ends by checkmate, stalemate, threefold repetition (within the game),
the 50-move rule or insufficient material, or by adjudication (resign, draw,
max plies). The output is canonical EPD with the result as c9 (and the
score of the position as ce with --score), in input order whatever the
number of threads; with --nodes or --depth it is byte-identical for any
--threads.

Bad lines are reported with file and line, skipped and counted; illegal
positions are rejected with the reason. Positions already decided
(checkmate, stalemate, insufficient material) are labeled without a game.

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
with the operation id \"<record number>\";. 'labeler merge' takes the shard
outputs (or their concatenation), restores input order and removes the id
operation: the result equals an unsharded run's output. See
scripts/labeler-cluster-examples.sh for GNU parallel and Slurm.";

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
}

#[derive(Args, Debug)]
struct MergeArgs {
    /// Shard outputs, or concatenations of them, in any order.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The merged output (written atomically).
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(Args, Debug)]
struct LabelArgs {
    /// Input files (any labeled format; .gz/.zst; - for standard input).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,

    /// Output file (canonical EPD with c9); resumed if it exists.
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

    /// Also record the search score of each input position as ce.
    #[arg(long)]
    score: bool,
    /// Nodes of the --score search [default: 20000].
    #[arg(long, group = "score_budget", requires = "score")]
    score_nodes: Option<u64>,
    /// Depth of the --score search.
    #[arg(long, group = "score_budget", requires = "score")]
    score_depth: Option<u32>,

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
}

fn settings_of(args: LabelArgs) -> Result<LabelSettings> {
    let budget = match (args.nodes, args.depth, args.movetime) {
        (_, Some(d), _) => SearchBudget::Depth(d),
        (_, _, Some(ms)) => SearchBudget::Movetime(Duration::from_millis(ms)),
        (n, _, _) => SearchBudget::Nodes(n.unwrap_or(DEFAULT_NODES)),
    };
    let rules = GameRules {
        budget,
        resign: (args.resign_moves > 0).then_some(ResignRule {
            score: args.resign_score,
            moves: args.resign_moves,
        }),
        draw: (args.draw_moves > 0).then_some(DrawRule {
            score: args.draw_score,
            moves: args.draw_moves,
            after_ply: args.draw_after,
        }),
        max_plies: (args.max_plies > 0).then_some(args.max_plies),
    };
    let score_budget = args.score.then(|| match args.score_depth {
        Some(d) => SearchBudget::Depth(d),
        None => SearchBudget::Nodes(args.score_nodes.unwrap_or(DEFAULT_SCORE_NODES)),
    });
    let engine = match args.engine {
        None => None,
        Some(command) => {
            let mut options = Vec::new();
            for pair in &args.engine_options {
                let (name, value) = pair
                    .split_once('=')
                    .with_context(|| format!("--engine-option {pair:?} is not Name=Value"))?;
                options.push((name.trim().to_string(), value.trim().to_string()));
            }
            if !(args.engine_timeout.is_finite() && args.engine_timeout > 0.0) {
                bail!("--engine-timeout must be a positive number of seconds");
            }
            Some(EngineSpec {
                command,
                options,
                timeout: Duration::from_secs_f64(args.engine_timeout),
            })
        }
    };
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    if threads == 0 {
        bail!("--threads must be at least 1");
    }
    Ok(LabelSettings {
        inputs: args.inputs,
        output: args.output.context("missing --output")?,
        rules,
        score_budget,
        engine,
        engine_retries: args.engine_retries,
        threads,
        shard: args.shard,
        rejects: args.rejects,
        overwrite: args.overwrite,
        progress: !args.no_progress,
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Some(Command::Merge(args)) => merge::merge(&args.inputs, &args.output).map(|summary| {
            eprintln!(
                "labeler merge: {} lines from {} ordered runs written to {}",
                summary.lines,
                summary.runs,
                args.output.display()
            );
            ExitCode::SUCCESS
        }),
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
    let settings = settings_of(args)?;
    let interrupt = Interrupt::new();
    {
        let interrupt = interrupt.clone();
        ctrlc::set_handler(move || {
            eprintln!("\nlabeler: interrupted; writing finished results and stopping");
            interrupt.trigger();
        })
        .context("installing the Ctrl-C handler")?;
    }
    let (_, interrupted) = run(&settings, &interrupt)?;
    Ok(if interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}
