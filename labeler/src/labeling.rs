//! The labeling run on the tools' ordered map
//! ([`engine::runtime::ordered`]): the inputs are cut into items (a position
//! to label, or a line that could not be read), worker threads play one
//! game per position (each worker owns its player), and the results are
//! written strictly in input order. With `--score-only`
//! ([`LabelSettings::score_only`]) the workers only search each position
//! once for its score (`ce`) and play no game; a position whose engine
//! reports no score then fails (see [`NO_SCORE`]), so that no output line
//! is without a label.
//!
//! Memory is bounded whatever the input size: at most
//! [`IN_FLIGHT_PER_THREAD`] items per worker are between cut and written.
//! Games are deterministic under a node or depth budget (fresh tables per
//! game, one search thread), so the output does not depend on the number
//! of workers. Resuming and the on-disk order of events are described in
//! [`crate::resume`].

use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};
use engine::chess::position::fen_of;
use engine::eval::Params;
use engine::formats::atomic_file::{AtomicFile, check_outputs};
use engine::formats::input::{ByteCounter, Input, open_input};
use engine::formats::labeled::{LabeledPosition, LabeledReader, Labels, RecordError};
use engine::play::game::{GameOutcome, GameRecord, GameRules, SearchBudget, decided_outcome};
use engine::play::player::{GameError, InProcessPlayer, Player, PlayerError, play_game};
use engine::play::uci_client::{EngineSpec, UciPlayer};
use engine::runtime::interrupt::Interrupt;
use engine::runtime::ordered::{Flow, OrderedMap};
use engine::runtime::progress::Progress;
use shakmaty::{Chess, Position};

use crate::resume::{Completion, FailedJob, RunIdentity, open_output, sidecar_path};
use crate::shard::{Shard, tag_line};
use crate::summary::RunStats;

/// Items (positions and unreadable lines) in flight per worker: a game's
/// length varies a lot, so the workers need a long look-ahead to stay busy.
pub const IN_FLIGHT_PER_THREAD: usize = 32;
/// Buffer of the input readers.
const INPUT_BUFFER_BYTES: usize = 1 << 16;

/// Everything a labeling run needs to know.
#[derive(Clone, Debug)]
pub struct LabelSettings {
    /// Input files in order (`-` is standard input).
    pub inputs: Vec<PathBuf>,
    /// The output file (appended to; see [`crate::resume`]).
    pub output: PathBuf,
    /// How games are played.
    pub rules: GameRules,
    /// Budget of the search that scores the input position (`ce`), if any.
    pub score_budget: Option<SearchBudget>,
    /// Only score the positions (`--score-only`, with a
    /// [`LabelSettings::score_budget`]): no game is played, the output has
    /// `ce` and no `c9`, and [`LabelSettings::rules`] are unused.
    pub score_only: bool,
    /// External engine, instead of the in-process searcher.
    pub engine: Option<EngineSpec>,
    /// Restarts and retries of a failed engine before a position fails.
    pub engine_retries: u32,
    /// Games played at once.
    pub threads: usize,
    /// This run's shard.
    pub shard: Option<Shard>,
    /// Where bad lines and failed positions are listed.
    pub rejects: Option<PathBuf>,
    /// Start over even if the output exists.
    pub overwrite: bool,
    /// Show the progress bar on a terminal.
    pub progress: bool,
}

impl LabelSettings {
    /// The identity of the run for the sidecar: inputs and every option that
    /// changes the output (not threads, rejects or progress).
    ///
    /// # Errors
    /// When an input cannot be read.
    pub fn identity(&self) -> Result<RunIdentity> {
        let mut identity = RunIdentity::default();
        for input in &self.inputs {
            identity.add_input(input)?;
        }
        // Existing headers stay as they were: only score-only runs, whose
        // rules are unused, record something else.
        let games = if self.score_only {
            "off (--score-only)".to_string()
        } else {
            self.rules.describe()
        };
        identity.add_setting("games", &games);
        identity.add_setting(
            "score",
            &self
                .score_budget
                .map_or("off".to_string(), SearchBudget::describe),
        );
        identity.add_setting(
            "player",
            &self
                .engine
                .as_ref()
                .map_or("in-process".to_string(), EngineSpec::describe),
        );
        identity.add_setting(
            "shard",
            &self.shard.map_or("none".to_string(), |s| s.to_string()),
        );
        Ok(identity)
    }
}

/// A position to label.
struct Job {
    /// Position in this shard's job sequence.
    number: u64,
    /// Record number over all inputs (see [`crate::shard`]).
    record: u64,
    /// `path:line`.
    location: String,
    position: Chess,
    /// How far into the inputs the record was (for the progress bar).
    input_byte: u64,
}

/// What happened to a job.
enum JobResult {
    /// An output line: the game's outcome (`None` with `--score-only`) and
    /// whether the line has a score.
    Labeled {
        line: String,
        outcome: Option<GameOutcome>,
        scored: bool,
    },
    /// The reason the position could not be labeled.
    Failed(String),
}

/// Why a `--score-only` position fails when its engine answered without a
/// score (no `info … score` line before `bestmove`): the line would have no
/// label at all. Not retried: the same engine would answer the same.
const NO_SCORE: &str = "the engine reported no score (no 'info ... score' before 'bestmove')";

/// What is cut from the inputs, and what the writer receives: a line that
/// could not be read (passed through the workers as it is), or a position
/// to label (and then its result).
enum Item<T> {
    Rejected(RecordError),
    Position(T),
}

/// The open input being read.
struct OpenInput {
    path: PathBuf,
    records: LabeledReader<BufReader<Input>>,
    bytes_read: ByteCounter,
    size: u64,
}

/// The inputs as a source of items: this shard's records in order, jobs
/// done by an earlier run skipped.
struct Inputs<'a> {
    settings: &'a LabelSettings,
    /// Index of the next input to open.
    next_input: usize,
    current: Option<OpenInput>,
    /// Records read so far (of every shard).
    record: u64,
    /// This shard's jobs so far.
    number: u64,
    jobs_done: u64,
    /// Bytes of the inputs before the current one.
    bytes_before: u64,
    /// The number of records (of every shard), once every input is read.
    records_read: Option<u64>,
}

impl Inputs<'_> {
    /// The next item; `None` at the end of the last input.
    fn next_item(&mut self) -> Result<Option<Item<Job>>> {
        loop {
            let Some(input) = self.current.as_mut() else {
                let Some(path) = self.settings.inputs.get(self.next_input) else {
                    self.records_read = Some(self.record);
                    return Ok(None);
                };
                self.next_input += 1;
                let opened = open_input(path)?;
                self.current = Some(OpenInput {
                    path: path.clone(),
                    size: opened.total_bytes().unwrap_or(0),
                    bytes_read: opened.bytes_read(),
                    // The labeler computes the labels: those of the input
                    // are not read, and a malformed one does not reject
                    // its position.
                    records: LabeledReader::new(
                        BufReader::with_capacity(INPUT_BUFFER_BYTES, opened),
                        Some(path.clone()),
                    )
                    .labels(Labels::Ignore),
                });
                continue;
            };
            let Some(item) = input.records.next() else {
                self.bytes_before += input.size;
                self.current = None;
                continue;
            };
            // A read error (truncated or corrupt input) is fatal: the
            // output would silently miss the rest of the file.
            let item = item?;
            let record = self.record;
            self.record += 1;
            if self.settings.shard.is_some_and(|s| !s.owns(record)) {
                continue;
            }
            let (line, labeled) = match item {
                Err(error) => return Ok(Some(Item::Rejected(error))),
                Ok(read) => read,
            };
            let number = self.number;
            self.number += 1;
            if number < self.jobs_done {
                continue;
            }
            return Ok(Some(Item::Position(Job {
                number,
                record,
                location: format!("{}:{line}", input.path.display()),
                position: labeled.position,
                input_byte: self.bytes_before + input.bytes_read.get(),
            })));
        }
    }
}

/// Transposition table size of an in-process searcher. A game's searches
/// visit a few hundred thousand nodes at most at the intended budgets, and
/// the table is cleared before every game, so a small table is both enough
/// and cheap to clear.
const IN_PROCESS_HASH_MB: usize = 2;

/// The score of a position without a legal move (side to move's view): mated
/// or stalemated; `None` when there is a move to search.
fn terminal_score(position: &Chess) -> Option<i32> {
    position.legal_moves().is_empty().then(|| {
        if position.is_check() {
            -engine::search::MATE_SCORE
        } else {
            engine::search::DRAW_SCORE
        }
    })
}

/// The search score of `position` itself (side to move's view) under
/// `budget`, with fresh tables; `None` when the player reports no score.
///
/// # Errors
/// As [`play_game`].
fn score_position(
    player: &mut dyn Player,
    position: &Chess,
    budget: SearchBudget,
    interrupt: &AtomicBool,
) -> Result<Option<i32>, GameError> {
    let game = GameRecord::new(position.clone());
    if let Some(score) = terminal_score(position) {
        return Ok(Some(score));
    }
    player.new_game()?;
    let choice = player.choose_move(&game, budget);
    if interrupt.load(Ordering::Relaxed) {
        return Err(GameError::Interrupted);
    }
    Ok(choice?.score)
}

/// A worker thread's player, started on its first game that needs one.
type WorkerPlayer = Option<Box<dyn Player + Send>>;

/// Creates this worker's player.
fn start_player(
    settings: &LabelSettings,
    interrupt: &Interrupt,
) -> Result<Box<dyn Player + Send>, PlayerError> {
    match &settings.engine {
        Some(spec) => Ok(Box::new(UciPlayer::start(spec.clone())?)),
        None => {
            let player = InProcessPlayer::new(Arc::new(Params::defaults()), IN_PROCESS_HASH_MB);
            interrupt.register_search(player.stop_flag());
            Ok(Box::new(player))
        }
    }
}

/// Labels one position, restarting a failed engine and retrying.
fn label_position(
    settings: &LabelSettings,
    player: &mut WorkerPlayer,
    job: &Job,
    interrupt: &Interrupt,
) -> Option<JobResult> {
    // No player needed (nor started: a broken engine cannot fail it).
    if settings.score_only {
        if let Some(score) = terminal_score(&job.position) {
            return Some(labeled_result(settings, job, None, Some(score)));
        }
    } else if settings.score_budget.is_none()
        && let Some(outcome) = decided_outcome(&job.position)
    {
        return Some(labeled_result(settings, job, Some(outcome), None));
    }
    let attempts = 1 + settings.engine_retries;
    let mut last_error = String::new();
    for _ in 0..attempts {
        if interrupt.requested() {
            return None;
        }
        if player.is_none() {
            match start_player(settings, interrupt) {
                Ok(p) => *player = Some(p),
                Err(e) => {
                    last_error = format!("engine start: {e}");
                    continue;
                }
            }
        }
        let active = player.as_deref_mut().expect("player started");
        let attempt = (|| -> Result<(Option<i32>, Option<GameOutcome>), GameError> {
            let score = match settings.score_budget {
                Some(budget) => score_position(active, &job.position, budget, interrupt.flag())?,
                None => None,
            };
            if settings.score_only {
                return Ok((score, None));
            }
            let outcome = play_game(active, &job.position, &settings.rules, interrupt.flag())?;
            Ok((score, Some(outcome)))
        })();
        match attempt {
            Ok((None, None)) => return Some(JobResult::Failed(NO_SCORE.to_string())),
            Ok((score, outcome)) => return Some(labeled_result(settings, job, outcome, score)),
            Err(GameError::Interrupted) => return None,
            Err(GameError::Player(e)) => {
                if interrupt.requested() {
                    return None;
                }
                last_error = e.to_string();
                // Dropping the player kills a hung or crashed engine; the
                // next attempt starts a new one.
                *player = None;
            }
        }
    }
    Some(JobResult::Failed(format!(
        "{last_error} (after {attempts} attempts)"
    )))
}

/// The output line of a labeled job: `c9` from the game's `outcome` (none
/// with `--score-only`), `ce` from `score`.
fn labeled_result(
    settings: &LabelSettings,
    job: &Job,
    outcome: Option<GameOutcome>,
    score: Option<i32>,
) -> JobResult {
    let labeled = LabeledPosition {
        position: job.position.clone(),
        result: outcome.map(|o| o.result),
        score,
    };
    let mut line = labeled.to_epd();
    if settings.shard.is_some() {
        line = tag_line(&line, job.record);
    }
    JobResult::Labeled {
        line,
        outcome,
        scored: score.is_some(),
    }
}

/// Runs a labeling job to its end (or to an interrupt); returns the
/// statistics and whether the run was interrupted.
///
/// # Errors
/// On I/O errors, unreadable inputs, or an output that belongs to another
/// command.
pub fn run(settings: &LabelSettings, interrupt: &Interrupt) -> Result<(RunStats, bool)> {
    let mut outputs = vec![settings.output.clone(), sidecar_path(&settings.output)];
    outputs.extend(settings.rejects.clone());
    check_outputs(&outputs, &settings.inputs)?;
    let identity = settings.identity()?;
    let mut resumed = open_output(&settings.output, &identity, settings.overwrite)?;
    // The rejects of this run, complete when it ends (also by Ctrl-C).
    let mut rejects = match &settings.rejects {
        Some(path) => Some(AtomicFile::create(path)?),
        None => None,
    };
    let mut stats = RunStats {
        score_only: settings.score_only,
        resumed_jobs: resumed.jobs_done,
        failures: resumed.earlier_failures.clone(),
        ..RunStats::default()
    };
    if let Some(out) = rejects.as_mut() {
        for failure in &resumed.earlier_failures {
            writeln!(out, "{}", failure_line(failure)).context("writing the rejects file")?;
        }
    }
    let total_bytes = settings
        .inputs
        .iter()
        .map(|p| std::fs::metadata(p).ok().map(|m| m.len()))
        .sum::<Option<u64>>();
    let progress = Progress::bytes(total_bytes, settings.progress);
    let mut eta_reset = false;
    let mut inputs = Inputs {
        settings,
        next_input: 0,
        current: None,
        record: 0,
        number: 0,
        jobs_done: resumed.jobs_done,
        bytes_before: 0,
        records_read: None,
    };
    let mut jobs_written = resumed.jobs_done;
    let outcome = OrderedMap::new(settings.threads)
        .in_flight_per_thread(IN_FLIGHT_PER_THREAD)
        .stop_on(interrupt.flag())
        .run(
            || {
                // An unreadable input ends the run: stop the games at once.
                inputs.next_item().inspect_err(|_| interrupt.trigger())
            },
            |_thread| WorkerPlayer::None,
            |player, item| match item {
                Item::Rejected(error) => Some(Item::Rejected(error)),
                Item::Position(job) => label_position(settings, player, &job, interrupt)
                    .map(|result| Item::Position((job, result))),
            },
            |item| {
                let written = (|| -> Result<()> {
                    match item {
                        Item::Rejected(error) => {
                            progress.println(&format!("labeler: skipped {error}"));
                            stats.record_reject(&error);
                            if let Some(out) = rejects.as_mut() {
                                writeln!(out, "{error}").context("writing the rejects file")?;
                            }
                        }
                        Item::Position((job, result)) => {
                            write_result(
                                job,
                                result,
                                &mut resumed,
                                rejects.as_mut(),
                                &mut stats,
                                &progress,
                            )?;
                            jobs_written += 1;
                            if !eta_reset {
                                // Positions skipped by a resume would make the
                                // first rate wrong.
                                progress.reset_eta();
                                eta_reset = true;
                            }
                            progress.set_message(progress_message(&stats, &progress));
                        }
                    }
                    Ok(())
                })();
                // A failed write ends the run: stop the games at once.
                written.inspect_err(|_| interrupt.trigger())?;
                Ok(Flow::Continue)
            },
        );
    let flushed = resumed.output.flush().context("flushing the output");
    let committed = rejects.map_or(Ok(()), AtomicFile::commit);
    let elapsed = progress.finish();
    outcome?;
    flushed?;
    committed?;
    let interrupted = interrupt.requested();
    if let (false, Some(records)) = (interrupted, inputs.records_read) {
        resumed.record_completion(Completion {
            records,
            jobs: jobs_written,
        })?;
    }
    eprint!("{}", stats.report(elapsed, interrupted));
    Ok((stats, interrupted))
}

/// Writes a job's result (its line, or its failure to the sidecar and the
/// rejects) and counts it.
fn write_result(
    job: Job,
    result: JobResult,
    resumed: &mut crate::resume::ResumedOutput,
    rejects: Option<&mut AtomicFile>,
    stats: &mut RunStats,
    progress: &Progress,
) -> Result<()> {
    match result {
        JobResult::Labeled {
            line,
            outcome,
            scored,
        } => {
            writeln!(resumed.output, "{line}").context("writing the output")?;
            stats.record_labeled(outcome.as_ref(), scored);
        }
        JobResult::Failed(reason) => {
            let failure = FailedJob {
                job: job.number,
                location: job.location,
                fen: fen_of(&job.position),
                reason,
            };
            resumed.record_failure(&failure)?;
            progress.println(&format!("labeler: failed {}", failure_line(&failure)));
            if let Some(out) = rejects {
                writeln!(out, "{}", failure_line(&failure)).context("writing the rejects file")?;
            }
            stats.failures.push(failure);
        }
    }
    resumed.output.flush().context("flushing the output")?;
    progress.set_position(job.input_byte);
    Ok(())
}

/// The progress message: positions done, rate, results (none with
/// `--score-only`).
fn progress_message(stats: &RunStats, progress: &Progress) -> String {
    if stats.score_only {
        return format!(
            "{} scored ({} this run), {:.1} positions/s",
            stats.labeled + stats.resumed_jobs,
            stats.labeled,
            progress.rate(stats.labeled)
        );
    }
    format!(
        "{} done ({} this run), {:.1} games/s, {}",
        stats.labeled + stats.resumed_jobs,
        stats.labeled,
        progress.rate(stats.labeled),
        stats.distribution()
    )
}

fn failure_line(failure: &FailedJob) -> String {
    format!(
        "{}: labeling failed: {}; position {}",
        failure.location, failure.reason, failure.fen
    )
}
