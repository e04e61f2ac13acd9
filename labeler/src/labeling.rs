//! The labeling run: a reader thread streams records from the inputs, worker
//! threads play one game per position (each worker owns its player), and the
//! calling thread writes the results strictly in input order.
//!
//! Memory is bounded whatever the input size: the reader never runs more
//! than [`REORDER_WINDOW_PER_THREAD`] jobs per worker ahead of the writer, so
//! the reorder buffer and the queues stay small. Games are deterministic
//! under a node or depth budget (fresh tables per game, one search thread),
//! so the output does not depend on the number of workers. Resuming and
//! the on-disk order of events are described in [`crate::resume`].

use std::collections::BTreeMap;
use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Condvar, Mutex};

use anyhow::{Context, Result};
use engine::chess::position::fen_of;
use engine::eval::Params;
use engine::formats::atomic_file::{AtomicFile, check_outputs};
use engine::formats::input::open_input;
use engine::formats::labeled::{LabeledPosition, LabeledReader, RecordError};
use shakmaty::{Chess, Position};

use crate::interrupt::Interrupt;
use crate::progress::ProgressDisplay;
use crate::resume::{Completion, FailedJob, RunIdentity, open_output, sidecar_path};
use crate::shard::{Shard, tag_line};
use crate::summary::RunStats;
use engine::play::game::{GameOutcome, GameRecord, GameRules, SearchBudget, decided_outcome};
use engine::play::player::{GameError, InProcessPlayer, Player, PlayerError, play_game};
use engine::play::uci_client::{EngineSpec, UciPlayer};

/// Jobs the reader may run ahead of the writer, per worker.
pub const REORDER_WINDOW_PER_THREAD: u64 = 32;
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
        identity.add_setting("games", &self.rules.describe());
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
    Labeled { line: String, outcome: GameOutcome },
    Failed(String),
}

/// Messages to the writer.
enum Event {
    Rejected(RecordError),
    Finished(Job, JobResult),
    Fatal(anyhow::Error),
    /// The reader reached the end of the inputs, which hold this many
    /// records (of every shard).
    InputsRead(u64),
}

/// Lets the reader run at most a fixed number of jobs ahead of the writer.
struct OrderWindow {
    written: Mutex<u64>,
    advanced: Condvar,
    width: u64,
}

impl OrderWindow {
    /// Waits until job `number` may be dispatched; false when interrupted.
    fn wait_for_room(&self, number: u64, interrupt: &Interrupt) -> bool {
        let mut written = self.written.lock().expect("window lock");
        while number >= *written + self.width {
            if interrupt.requested() {
                return false;
            }
            written = self
                .advanced
                .wait_timeout(written, std::time::Duration::from_millis(100))
                .expect("window lock")
                .0;
        }
        !interrupt.requested()
    }

    fn advance(&self, written: u64) {
        *self.written.lock().expect("window lock") = written;
        self.advanced.notify_all();
    }
}

/// Streams the inputs into jobs (this shard's, not yet done) and rejects.
fn read_inputs(
    settings: &LabelSettings,
    jobs_done: u64,
    jobs: SyncSender<Job>,
    events: Sender<Event>,
    window: &OrderWindow,
    interrupt: &Interrupt,
) {
    let mut record = 0u64;
    let mut number = 0u64;
    let mut bytes_before = 0u64;
    for path in &settings.inputs {
        let input = match open_input(path) {
            Ok(input) => input,
            Err(e) => {
                let _ = events.send(Event::Fatal(anyhow::Error::new(e)));
                return;
            }
        };
        let size = input.total_bytes().unwrap_or(0);
        let counter = input.bytes_read();
        let reader = BufReader::with_capacity(INPUT_BUFFER_BYTES, input);
        for item in LabeledReader::new(reader, Some(path.clone())) {
            let this_record = record;
            record += 1;
            if settings.shard.is_some_and(|s| !s.owns(this_record)) {
                continue;
            }
            match item {
                Err(error) => {
                    let _ = events.send(Event::Rejected(error));
                }
                Ok((line, labeled)) => {
                    let this_number = number;
                    number += 1;
                    if this_number < jobs_done {
                        continue;
                    }
                    if !window.wait_for_room(this_number, interrupt) {
                        return;
                    }
                    let job = Job {
                        number: this_number,
                        record: this_record,
                        location: format!("{}:{line}", path.display()),
                        position: labeled.position,
                        input_byte: bytes_before + counter.get(),
                    };
                    if jobs.send(job).is_err() {
                        return;
                    }
                }
            }
            if interrupt.requested() {
                return;
            }
        }
        bytes_before += size;
    }
    let _ = events.send(Event::InputsRead(record));
}

/// Transposition table size of an in-process searcher. A game's searches
/// visit a few hundred thousand nodes at most at the intended budgets, and
/// the table is cleared before every game, so a small table is both enough
/// and cheap to clear.
const IN_PROCESS_HASH_MB: usize = 2;

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
    if position.legal_moves().is_empty() {
        return Ok(Some(if position.is_check() {
            -engine::search::MATE_SCORE
        } else {
            engine::search::DRAW_SCORE
        }));
    }
    player.new_game()?;
    let choice = player.choose_move(&game, budget);
    if interrupt.load(Ordering::Relaxed) {
        return Err(GameError::Interrupted);
    }
    Ok(choice?.score)
}

/// Creates this worker's player.
fn start_player(
    settings: &LabelSettings,
    interrupt: &Interrupt,
) -> Result<Box<dyn Player>, PlayerError> {
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
    player: &mut Option<Box<dyn Player>>,
    job: &Job,
    interrupt: &Interrupt,
) -> Option<JobResult> {
    if settings.score_budget.is_none()
        && let Some(outcome) = decided_outcome(&job.position)
    {
        // No player needed (nor started: a broken engine cannot fail it).
        return Some(labeled_result(settings, job, outcome, None));
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
        let attempt = (|| -> Result<(Option<i32>, GameOutcome), GameError> {
            let score = match settings.score_budget {
                Some(budget) => score_position(active, &job.position, budget, interrupt.flag())?,
                None => None,
            };
            let outcome = play_game(active, &job.position, &settings.rules, interrupt.flag())?;
            Ok((score, outcome))
        })();
        match attempt {
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

/// The output line of a labeled job.
fn labeled_result(
    settings: &LabelSettings,
    job: &Job,
    outcome: GameOutcome,
    score: Option<i32>,
) -> JobResult {
    let labeled = LabeledPosition {
        position: job.position.clone(),
        result: Some(outcome.result),
        score,
    };
    let mut line = labeled.to_epd();
    if settings.shard.is_some() {
        line = tag_line(&line, job.record);
    }
    JobResult::Labeled { line, outcome }
}

fn work(
    settings: &LabelSettings,
    jobs: &Mutex<Receiver<Job>>,
    events: Sender<Event>,
    interrupt: &Interrupt,
) {
    let mut player = None;
    loop {
        let job = match jobs.lock().expect("job queue lock").recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        let Some(result) = label_position(settings, &mut player, &job, interrupt) else {
            return;
        };
        if events.send(Event::Finished(job, result)).is_err() {
            return;
        }
    }
}

/// Runs a labeling job to its end (or to an interrupt); returns the
/// statistics and whether the run was interrupted.
///
/// # Errors
/// On I/O errors, unreadable inputs, or an output that belongs to another
/// command.
pub fn run(settings: &LabelSettings, interrupt: &Arc<Interrupt>) -> Result<(RunStats, bool)> {
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
    let mut progress = ProgressDisplay::new(total_bytes, settings.progress);
    let threads = settings.threads.max(1);
    let window = OrderWindow {
        written: Mutex::new(resumed.jobs_done),
        advanced: Condvar::new(),
        width: REORDER_WINDOW_PER_THREAD * threads as u64,
    };
    // The window bounds the jobs in flight, so with this capacity sending a
    // job never blocks (a blocked reader could not notice an interrupt).
    let (job_sender, job_receiver) = sync_channel::<Job>(window.width as usize);
    let job_receiver = Mutex::new(job_receiver);
    let (event_sender, events) = channel::<Event>();
    let mut fatal = None;
    let mut records_read = None;
    let mut next = resumed.jobs_done;
    std::thread::scope(|scope| -> Result<()> {
        {
            let events = event_sender.clone();
            let (window, interrupt) = (&window, &**interrupt);
            let jobs_done = resumed.jobs_done;
            scope.spawn(move || {
                read_inputs(settings, jobs_done, job_sender, events, window, interrupt);
            });
        }
        for _ in 0..threads {
            let events = event_sender.clone();
            let (jobs, interrupt) = (&job_receiver, &**interrupt);
            scope.spawn(move || work(settings, jobs, events, interrupt));
        }
        drop(event_sender);
        let mut pending: BTreeMap<u64, (Job, JobResult)> = BTreeMap::new();
        let result = (|| -> Result<()> {
            for event in &events {
                match event {
                    Event::Rejected(error) => {
                        progress.println(&format!("labeler: skipped {error}"));
                        stats.record_reject(&error);
                        if let Some(out) = rejects.as_mut() {
                            writeln!(out, "{error}").context("writing the rejects file")?;
                        }
                    }
                    Event::Fatal(error) => {
                        interrupt.trigger();
                        fatal = Some(error);
                    }
                    Event::InputsRead(records) => records_read = Some(records),
                    Event::Finished(job, result) => {
                        pending.insert(job.number, (job, result));
                        let mut last_byte = None;
                        while let Some((job, result)) = pending.remove(&next) {
                            match result {
                                JobResult::Labeled { line, outcome } => {
                                    writeln!(resumed.output, "{line}")
                                        .context("writing the output")?;
                                    stats.record_outcome(&outcome);
                                }
                                JobResult::Failed(reason) => {
                                    let failure = FailedJob {
                                        job: job.number,
                                        location: job.location.clone(),
                                        fen: fen_of(&job.position),
                                        reason,
                                    };
                                    resumed.record_failure(&failure)?;
                                    progress.println(&format!(
                                        "labeler: failed {}",
                                        failure_line(&failure)
                                    ));
                                    if let Some(out) = rejects.as_mut() {
                                        writeln!(out, "{}", failure_line(&failure))
                                            .context("writing the rejects file")?;
                                    }
                                    stats.failures.push(failure);
                                }
                            }
                            last_byte = Some(job.input_byte);
                            next += 1;
                        }
                        resumed.output.flush().context("flushing the output")?;
                        window.advance(next);
                        if let Some(byte) = last_byte {
                            progress.update(&stats, byte);
                        }
                    }
                }
            }
            Ok(())
        })();
        if result.is_err() {
            interrupt.trigger();
            // Keep draining so that the other threads can finish.
            for _ in &events {}
        }
        result
    })?;
    resumed.output.flush().context("flushing the output")?;
    if let Some(out) = rejects {
        out.commit()?;
    }
    let elapsed = progress.finish();
    if let Some(error) = fatal {
        return Err(error);
    }
    let interrupted = interrupt.requested();
    if let (false, Some(records)) = (interrupted, records_read) {
        resumed.record_completion(Completion {
            records,
            jobs: next,
        })?;
    }
    eprint!("{}", stats.report(elapsed, interrupted));
    Ok((stats, interrupted))
}

fn failure_line(failure: &FailedJob) -> String {
    format!(
        "{}: labeling failed: {}; position {}",
        failure.location, failure.reason, failure.fen
    )
}
