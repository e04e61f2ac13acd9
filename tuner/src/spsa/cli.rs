//! `tuner spsa`: the command line and the run — options, the engine's spin
//! options, the loop over iterations with progress, the log, plot,
//! checkpoint and outputs, Ctrl-C.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use clap::Args;
use engine::formats::atomic_file::write_file;
use engine::play::game::{DrawRule, ResignRule, SearchBudget};
use engine::play::match_runner::{
    Contestant, DEFAULT_REPEAT, MatchSettings, MoveLimit, PlayerKind, TimeControl,
};
use engine::play::openings::{OpeningOrder, OpeningSource};
use engine::play::uci_client::{EngineSpec, UciPlayer};
use engine::runtime::interrupt::Interrupt;
use engine::runtime::progress::Progress;
use engine::runtime::summary::{Status, Summary};

use super::games::{GameSetup, GamesError};
use super::plot;
use super::schedule::{
    DEFAULT_A_RATIO, DEFAULT_ALPHA, DEFAULT_GAMMA, DEFAULT_R_END, Schedule, Tunable, perturb,
    update,
};
use super::state::{IterationRow, SpsaState};
use super::tunables::{self, TuneSpec};

/// The long help of `tuner spsa`.
pub const ABOUT: &str = "\
SPSA tuning of any UCI engine's spin options, in the form OpenBench uses.

Each iteration k plays --pairs-per-iteration game pairs (each opening with both
colours) between the engine with values theta + delta*c_k and the engine with
theta - delta*c_k (delta = +-1 per parameter at random, integer values rounded
with a shared random offset and clipped to the range), then moves
theta <- theta + r_k * c_k * (W - L) * delta, W - L the first engine's wins
minus losses. Per parameter, c_end and r_end are the perturbation and learning
rate wanted at the last iteration N; with A = a_ratio * N:
  c = c_end * N^gamma,  a = r_end * c_end^2 * (A + N)^alpha,
  c_k = max(c / k^gamma, 0.5),  r_k = a / (A + k)^alpha / c_k^2.
Defaults alpha 0.602, gamma 0.101, a_ratio 0.1, r_end 0.002; c_end is the step
our engine declares for its search parameters, else (max - min)/20.

The engine is ours (the `engine` next to `tuner`) unless --engine says otherwise.
It tunes every spin option except the engine-management ones (Hash, Threads,
MultiPV, Move Overhead, ...) unless --tune or --inputs name some:
  --tune NAME | NAME=START | NAME=START,MIN,MAX[,C_END[,R_END]]
  --inputs FILE with OpenBench lines `NAME, int, START, MIN, MAX, C_END, R_END`
  (`engine search-params --openbench` prints ours).

Output in --output DIR: tuned.search (`name value` lines: our engine reads it as
SearchParamsFile and `engine match --search-params-a`), tuned.uci (setoption
lines for any engine), spsa.csv (the values after every iteration), spsa.svg
(each parameter's path), checkpoint (after every iteration; --resume continues
exactly). A pair in which an engine crashes or hangs is played again (at most 3
times); Ctrl-C stops cleanly after writing everything.";

/// The options of `tuner spsa`.
#[derive(Args, Debug)]
pub struct SpsaArgs {
    /// The engine command line (split on spaces); our `engine` by default.
    #[arg(long)]
    engine: Option<String>,
    /// A UCI option set on both engines, as Name=Value (repeatable).
    #[arg(long, value_name = "NAME=VALUE")]
    option: Vec<String>,
    /// Tune this option (repeatable): NAME, NAME=START or
    /// NAME=START,MIN,MAX[,C_END[,R_END]].
    #[arg(long, value_name = "SPEC")]
    tune: Vec<String>,
    /// OpenBench SPSA input: `NAME, int, START, MIN, MAX, C_END, R_END`
    /// lines.
    #[arg(long, conflicts_with = "tune")]
    inputs: Option<PathBuf>,
    /// Iterations (N).
    #[arg(long, default_value_t = 200)]
    iterations: usize,
    /// Game pairs per iteration.
    #[arg(long, default_value_t = 8)]
    pairs_per_iteration: usize,
    /// Fixed node count per move (reproducible).
    #[arg(long, conflicts_with = "tc")]
    nodes: Option<u64>,
    /// Time control BASE+INCREMENT in seconds (default when --nodes is not
    /// given: 10+0.1).
    #[arg(long)]
    tc: Option<TimeControl>,
    /// Openings: EPD/FEN positions, a Polyglot book (.bin) or PGN games.
    #[arg(long, default_value = "data/openings/match-openings.epd")]
    openings: PathBuf,
    /// Order of the openings: sequential or random (from --seed).
    #[arg(long, default_value = "random")]
    openings_order: OpeningOrder,
    /// Moves taken from each PGN game of --openings.
    #[arg(long, default_value_t = 8)]
    opening_plies: usize,
    /// Moves of each random line from a Polyglot book.
    #[arg(long, default_value_t = 8)]
    book_plies: usize,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Seed of the perturbations and the openings.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Directory of the outputs, log, plot and checkpoint.
    #[arg(long)]
    output: PathBuf,
    /// Continue the run whose checkpoint is in --output.
    #[arg(long)]
    resume: bool,
    /// Default final learning rate r_end.
    #[arg(long, default_value_t = DEFAULT_R_END)]
    r_end: f64,
    /// Learning-rate decay exponent.
    #[arg(long, default_value_t = DEFAULT_ALPHA)]
    alpha: f64,
    /// Perturbation decay exponent.
    #[arg(long, default_value_t = DEFAULT_GAMMA)]
    gamma: f64,
    /// A as a share of the iterations.
    #[arg(long, default_value_t = DEFAULT_A_RATIO)]
    a_ratio: f64,
    /// Games reaching this many plies are drawn.
    #[arg(long)]
    max_plies: Option<u32>,
    /// Resign adjudication threshold in centipawns (both engines agree).
    #[arg(long)]
    resign_score: Option<i32>,
    /// Consecutive moves of each side beyond --resign-score.
    #[arg(long, default_value_t = 3)]
    resign_moves: u32,
    /// Draw adjudication threshold in centipawns (absolute).
    #[arg(long)]
    draw_score: Option<i32>,
    /// Consecutive moves of each side within --draw-score.
    #[arg(long, default_value_t = 8)]
    draw_moves: u32,
    /// No draw adjudication before this ply.
    #[arg(long, default_value_t = 60)]
    draw_after: u32,
    /// Seconds an engine may take to answer, on top of its thinking time.
    #[arg(long, default_value_t = 10.0)]
    engine_timeout: f64,
    /// Write a JSON summary of the run here (iterations, games, final
    /// values).
    #[arg(long, value_name = "FILE")]
    summary: Option<PathBuf>,
    /// Do not draw the progress display.
    #[arg(long)]
    no_progress: bool,
}

/// How a run ended without an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// All iterations are done.
    Complete,
    /// Stopped by Ctrl-C/SIGTERM after the last complete iteration.
    Interrupted,
}

/// Time control when neither --nodes nor --tc is given.
const DEFAULT_TIME_CONTROL: &str = "10+0.1";
/// File names inside --output.
const CHECKPOINT: &str = "checkpoint";
const LOG: &str = "spsa.csv";
const PLOT: &str = "spsa.svg";
const TUNED_SEARCH: &str = "tuned.search";
const TUNED_UCI: &str = "tuned.uci";

/// Our engine: the `engine` binary beside the running `tuner`.
fn our_engine() -> Result<String> {
    let exe = std::env::current_exe().context("locating the tuner binary")?;
    let engine = exe.with_file_name(format!("engine{}", std::env::consts::EXE_SUFFIX));
    ensure!(
        engine.exists(),
        "{} not found: build it (cargo build --release -p engine) or pass --engine",
        engine.display()
    );
    Ok(engine.display().to_string())
}

fn name_value(text: &str) -> Result<(String, String)> {
    text.split_once('=')
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .filter(|(n, _)| !n.is_empty())
        .with_context(|| format!("--option {text:?} is not Name=Value"))
}

/// What identifies a run: compared on `--resume`.
fn settings_lines(
    args: &SpsaArgs,
    command: &str,
    fixed: &[(String, String)],
    tunables: &[Tunable],
    schedule: &Schedule,
    limit: &MoveLimit,
) -> Vec<String> {
    let mut lines = vec![format!("engine {command}")];
    for (n, v) in fixed {
        lines.push(format!("option {n}={v}"));
    }
    for t in tunables {
        lines.push(format!(
            "tune {} start {} range {}..{} c_end {} r_end {}",
            t.name, t.start, t.min, t.max, t.c_end, t.r_end
        ));
    }
    lines.push(format!(
        "schedule iterations {} alpha {} gamma {} a_ratio {}",
        schedule.iterations, schedule.alpha, schedule.gamma, schedule.a_ratio
    ));
    lines.push(format!("pairs {}", args.pairs_per_iteration));
    lines.push(format!(
        "limit {}",
        match limit {
            MoveLimit::Clock(tc) => format!("tc {tc}"),
            MoveLimit::Fixed(budget) => budget.describe(),
        }
    ));
    lines.push(format!(
        "openings {} order {} plies {} book_plies {} seed {}",
        args.openings.display(),
        args.openings_order.name(),
        args.opening_plies,
        args.book_plies,
        args.seed
    ));
    lines.push(format!(
        "adjudication max_plies {:?} resign {:?}/{} draw {:?}/{}/{}",
        args.max_plies,
        args.resign_score,
        args.resign_moves,
        args.draw_score,
        args.draw_moves,
        args.draw_after
    ));
    lines
}

/// The outputs that reflect the current state: values, plot, log.
fn write_outputs(
    dir: &Path,
    state: &SpsaState,
    tunables: &[Tunable],
    defaults: &[Option<f64>],
    command: &str,
) -> Result<()> {
    let values: Vec<i64> = state.theta().iter().map(|v| v.round() as i64).collect();
    let mut search = format!(
        "# tuner spsa: {} after {} of its iterations\n# engine {command}\n",
        state.names.join(", "),
        state.iteration()
    );
    let mut uci = String::new();
    for ((t, v), start) in tunables.iter().zip(&values).zip(&state.start) {
        let _ = writeln!(
            search,
            "# {}: start {start}, range {}..{}",
            t.name, t.min, t.max
        );
        let _ = writeln!(search, "{} {v}", t.name);
        let _ = writeln!(uci, "setoption name {} value {v}", t.name);
    }
    write_file(&dir.join(TUNED_SEARCH), search.as_bytes())?;
    write_file(&dir.join(TUNED_UCI), uci.as_bytes())?;
    let title = format!(
        "SPSA: {} iterations; dashed: start (grey), engine default (green)",
        state.iteration()
    );
    write_file(
        &dir.join(PLOT),
        plot::svg(state, defaults, &title).as_bytes(),
    )?;
    Ok(())
}

/// Runs `tuner spsa`.
///
/// # Errors
/// Bad options, an engine that cannot be started or keeps failing, I/O.
pub fn run(args: &SpsaArgs) -> Result<Ending> {
    ensure!(args.iterations >= 1, "--iterations must be at least 1");
    ensure!(
        args.pairs_per_iteration >= 1,
        "--pairs-per-iteration must be at least 1"
    );
    ensure!(args.concurrency >= 1, "--concurrency must be at least 1");
    if let Some(summary) = &args.summary {
        let inputs: Vec<&PathBuf> = args.inputs.iter().chain([&args.openings]).collect();
        engine::formats::atomic_file::check_outputs(&[summary], &inputs)?;
    }
    let command = match &args.engine {
        Some(c) => c.clone(),
        None => our_engine()?,
    };
    let fixed: Vec<(String, String)> = args
        .option
        .iter()
        .map(|o| name_value(o))
        .collect::<Result<_>>()?;
    let timeout = Duration::from_secs_f64(args.engine_timeout.max(0.0));
    let spec = EngineSpec {
        command: command.clone(),
        options: fixed.clone(),
        timeout,
    };
    let probe =
        UciPlayer::start(spec).with_context(|| format!("starting the engine {command:?}"))?;
    let options = probe.spin_options().to_vec();
    drop(probe);
    let specs: Vec<TuneSpec> = match &args.inputs {
        Some(path) => tunables::read_inputs(path)?,
        None => args.tune.iter().map(|t| t.parse()).collect::<Result<_>>()?,
    };
    let tunables = tunables::resolve(&specs, &options, args.r_end)?;
    let defaults: Vec<Option<f64>> = tunables
        .iter()
        .map(|t| {
            options
                .iter()
                .find(|o| o.name == t.name)
                .map(|o| f64::from(o.default))
        })
        .collect();
    let schedule = Schedule {
        iterations: args.iterations,
        alpha: args.alpha,
        gamma: args.gamma,
        a_ratio: args.a_ratio,
    };
    let limit = match (args.nodes, args.tc) {
        (Some(n), _) => MoveLimit::Fixed(SearchBudget::Nodes(n)),
        (None, Some(tc)) => MoveLimit::Clock(tc),
        (None, None) => MoveLimit::Clock(DEFAULT_TIME_CONTROL.parse()?),
    };
    let settings = settings_lines(args, &command, &fixed, &tunables, &schedule, &limit);
    let names: Vec<String> = tunables.iter().map(|t| t.name.clone()).collect();

    let dir = &args.output;
    let checkpoint = dir.join(CHECKPOINT);
    let mut state = if args.resume {
        let state = SpsaState::load(&checkpoint)?;
        if state.settings != settings {
            let mut differences = String::new();
            for line in settings.iter().filter(|l| !state.settings.contains(l)) {
                let _ = write!(differences, "\n  now:    {line}");
            }
            for line in state.settings.iter().filter(|l| !settings.contains(l)) {
                let _ = write!(differences, "\n  before: {line}");
            }
            bail!(
                "{} was started with other settings; resume with the same options:{differences}",
                checkpoint.display()
            );
        }
        state
    } else {
        ensure!(
            !checkpoint.exists(),
            "{} holds a run already: pass --resume to continue it, or choose another --output",
            dir.display()
        );
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let start = tunables.iter().map(|t| t.start).collect();
        SpsaState::new(settings, names, start)
    };

    let openings = OpeningSource::load(&args.openings, args.opening_plies, args.book_plies)
        .with_context(|| format!("loading openings from {}", args.openings.display()))?;
    let placeholder = Contestant {
        name: String::new(),
        kind: PlayerKind::External(EngineSpec {
            command: command.clone(),
            options: Vec::new(),
            timeout,
        }),
    };
    let mut games = GameSetup {
        command: command.clone(),
        fixed_options: fixed,
        names: state.names.clone(),
        timeout,
        pairs: args.pairs_per_iteration,
        settings: MatchSettings {
            players: [placeholder.clone(), placeholder],
            games: 0,
            first_game: 0,
            repeat: DEFAULT_REPEAT,
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
            hash_mb: 1,
            sprt: None,
            event: "spsa".into(),
        },
    };

    let interrupt = Interrupt::new();
    interrupt.install(Some(
        "stopping: the iteration in progress is abandoned, the last complete one is kept \
         (a second Ctrl-C exits at once)",
    ))?;
    let abort = interrupt.flag();
    // The log is rewritten from the checkpoint (a row written after the
    // last checkpoint is dropped), then appended to.
    let log_path = dir.join(LOG);
    write_file(&log_path, state.csv().as_bytes())?;
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(&log_path)
        .with_context(|| format!("opening {}", log_path.display()))?;
    write_outputs(dir, &state, &tunables, &defaults, &command)?;

    eprintln!(
        "spsa: {} parameter(s) of {command}, {} iterations of {} pairs, {}{}",
        tunables.len(),
        args.iterations,
        args.pairs_per_iteration,
        match limit {
            MoveLimit::Clock(tc) => format!("tc {tc}"),
            MoveLimit::Fixed(b) => b.describe(),
        },
        if state.iteration() > 0 {
            format!(", resuming after iteration {}", state.iteration())
        } else {
            String::new()
        }
    );
    for t in &tunables {
        eprintln!(
            "  {:<28} start {:>8} range {}..{} c_end {} r_end {}",
            t.name, t.start, t.min, t.max, t.c_end, t.r_end
        );
    }
    let bar = Progress::spinner(!args.no_progress);
    let started = Instant::now();
    let first = state.iteration() + 1;
    let mut outcome = Ok(());
    let mut interrupted = false;
    for k in first..=args.iterations {
        let theta = state.theta().to_vec();
        let p = perturb(&schedule, &tunables, &theta, k, args.seed);
        let done = k - first;
        bar.set_message(if done == 0 {
            format!("iteration {k} of {}", args.iterations)
        } else {
            let per = started.elapsed().as_secs_f64() / done as f64;
            format!(
                "iteration {k} of {} ({per:.1} s each, {:.0} min left)",
                args.iterations,
                per * (args.iterations + 1 - k) as f64 / 60.0
            )
        });
        let played = match games.play_iteration(k, &p.plus, &p.minus, abort) {
            Ok(g) => g,
            Err(GamesError::Interrupted) => {
                interrupted = true;
                break;
            }
            Err(GamesError::Engine(e)) => {
                outcome = Err(anyhow::anyhow!("iteration {k}: {e}"));
                break;
            }
        };
        for f in &played.failures {
            bar.println(&format!("engine failure, pair replayed: {f}"));
        }
        let r = played.record;
        let next = update(
            &schedule,
            &tunables,
            &theta,
            &p.flips,
            k,
            r.wins as i64 - r.losses as i64,
        );
        let row = IterationRow {
            iteration: k,
            wins: r.wins,
            draws: r.draws,
            losses: r.losses,
            replayed: played.replayed,
            theta: next,
        };
        writeln!(log, "{}", SpsaState::csv_row(&row))
            .and_then(|()| log.flush())
            .with_context(|| format!("writing {}", log_path.display()))?;
        state.rows.push(row);
        state.save(&checkpoint)?;
        write_outputs(dir, &state, &tunables, &defaults, &command)?;
        let values: Vec<String> = tunables
            .iter()
            .zip(state.theta())
            .map(|(t, v)| format!("{} {v:.1}", t.name))
            .collect();
        bar.println(&format!(
            "iteration {k}: +{} ={} -{} | {}",
            r.wins,
            r.draws,
            r.losses,
            values.join(" ")
        ));
        if interrupt.requested() {
            interrupted = true;
            break;
        }
    }
    bar.finish();
    let rate = (state.iteration() + 1 - first) as f64 / started.elapsed().as_secs_f64().max(1e-9);
    eprintln!(
        "{} after {} of {} iterations ({rate:.3} iterations/s this session):",
        if interrupted {
            "interrupted"
        } else if outcome.is_err() {
            "stopped"
        } else {
            "done"
        },
        state.iteration(),
        args.iterations
    );
    for ((t, v), d) in tunables.iter().zip(state.theta()).zip(&defaults) {
        eprintln!(
            "  {:<28} {:>8} -> {:>8.2}  (engine default {})",
            t.name,
            t.start,
            v,
            d.map_or("-".to_string(), |d| d.to_string())
        );
    }
    eprintln!(
        "wrote {} and {} (values), {} (log), {} (plot), {} in {}",
        TUNED_SEARCH,
        TUNED_UCI,
        LOG,
        PLOT,
        CHECKPOINT,
        dir.display()
    );
    if interrupted {
        eprintln!("continue with the same options and --resume");
    }
    if let Some(path) = &args.summary {
        let mut summary = Summary::new("tuner spsa", env!("CARGO_PKG_VERSION"));
        summary.status = if interrupted {
            Status::Interrupted
        } else {
            Status::Complete
        };
        summary.output = Some(dir.clone());
        let games: u64 = state.rows.iter().map(|r| r.wins + r.draws + r.losses).sum();
        let replayed: u64 = state.rows.iter().map(|r| r.replayed).sum();
        summary
            .count("iterations", state.iteration() as u64)
            .count("games", games)
            .count("pairs_replayed", replayed)
            .timing("session_seconds", started.elapsed())
            .figure("engine", command.as_str());
        for (t, v) in tunables.iter().zip(state.theta()) {
            summary.figure(&format!("value_{}", t.name), *v);
        }
        summary.write(path)?;
    }
    outcome.map(|()| {
        if interrupted {
            Ending::Interrupted
        } else {
            Ending::Complete
        }
    })
}
