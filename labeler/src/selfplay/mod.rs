//! `labeler selfplay`: training data from whole self-play games. Every
//! quiet position the engine searched in a game is kept, labeled with the
//! game's result (`c9`) and its own search score (`ce`), so one game gives
//! some 40–80 positions where the per-position labeler gives one.
//!
//! The modules: [`start`] (opening, random plies, start check),
//! [`game`] (one game through the engine library's game loop),
//! [`selection`] (which positions are kept), [`output`] (formats and
//! resuming) and [`summary`]. This module runs the games: worker threads
//! take game indices in order, each with its own player, and the calling
//! thread writes finished games strictly in game order. Workers never run
//! more than [`WINDOW_PER_THREAD`] games per thread ahead of the writer,
//! so memory stays bounded whatever `--games` is. Game `i` depends only on
//! the seed and `i` (its generator, fresh search tables, a node or depth
//! budget), so the output is byte-identical for any `--threads`, and
//! `--first-game`/`--shard` runs concatenated in order equal one run.

pub mod game;
pub mod output;
pub mod selection;
pub mod start;
pub mod summary;

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use engine::eval::Params;
use engine::play::player::{InProcessPlayer, Player, PlayerError};
use engine::play::uci_client::{EngineSpec, UciPlayer};
use indicatif::{ProgressBar, ProgressStyle};

use crate::interrupt::Interrupt;
use crate::resume::RunIdentity;
use crate::selfplay::game::{GameData, GameSettings, SelfplayError, play_selfplay_game};
use crate::selfplay::output::{FailedGame, OutputFormat, SelfplayOutput};
use crate::selfplay::summary::SelfplayStats;

/// Games the workers may run ahead of the writer, per thread.
pub const WINDOW_PER_THREAD: u64 = 4;
/// Transposition table of an in-process player (cleared every game).
const IN_PROCESS_HASH_MB: usize = 2;
/// Progress bar redraws per second at most.
const REFRESH_PER_SECOND: u8 = 4;

/// Who plays the games.
#[derive(Clone, Debug)]
pub enum PlayerSpec {
    /// The engine library with these weights (from `source`, a params
    /// file, or the compiled defaults when `None`).
    InProcess {
        /// The weights.
        params: Arc<Params>,
        /// Where they came from.
        source: Option<PathBuf>,
    },
    /// An external UCI engine.
    External(EngineSpec),
}

/// Everything a self-play run needs.
#[derive(Debug)]
pub struct SelfplaySettings {
    /// The output file (resumed if it belongs to this run).
    pub output: PathBuf,
    /// Its format.
    pub format: OutputFormat,
    /// How games are made.
    pub games: GameSettings,
    /// The openings file, for the run identity.
    pub openings_path: Option<PathBuf>,
    /// The indices of the games this run plays.
    pub range: Range<u64>,
    /// Who plays.
    pub player: PlayerSpec,
    /// Restarts of a failed external engine per game.
    pub engine_retries: u32,
    /// Games played at once.
    pub threads: usize,
    /// Start over even if the output exists.
    pub overwrite: bool,
    /// Show the progress bar on a terminal.
    pub progress: bool,
}

impl SelfplaySettings {
    /// The identity of the run for the sidecar: every setting that changes
    /// the output (not threads or progress).
    ///
    /// # Errors
    /// When an input file cannot be read.
    pub fn identity(&self) -> Result<RunIdentity> {
        let mut identity = RunIdentity::default();
        identity.add_setting("command", "selfplay");
        identity.add_setting("format", self.format.name());
        identity.add_setting(
            "games",
            &format!("{}..{}", self.range.start, self.range.end),
        );
        identity.add_setting("seed", &self.games.seed.to_string());
        identity.add_setting("rules", &self.games.rules.describe());
        identity.add_setting("start", &self.games.start.describe());
        identity.add_setting("max-score", &self.games.max_score.to_string());
        match &self.openings_path {
            Some(path) => identity.add_input(path)?,
            None => identity.add_setting("openings", "standard"),
        }
        match &self.player {
            PlayerSpec::InProcess { source: None, .. } => {
                identity.add_setting("player", "in-process compiled weights");
            }
            PlayerSpec::InProcess {
                source: Some(path), ..
            } => {
                identity.add_setting("player", "in-process params");
                identity.add_input(path)?;
            }
            PlayerSpec::External(spec) => identity.add_setting("player", &spec.describe()),
        }
        Ok(identity)
    }
}

/// Creates a worker's player.
fn start_player(spec: &PlayerSpec, interrupt: &Interrupt) -> Result<Box<dyn Player>, PlayerError> {
    match spec {
        PlayerSpec::External(spec) => Ok(Box::new(UciPlayer::start(spec.clone())?)),
        PlayerSpec::InProcess { params, .. } => {
            let player = InProcessPlayer::new(params.clone(), IN_PROCESS_HASH_MB);
            interrupt.register_search(player.stop_flag());
            Ok(Box::new(player))
        }
    }
}

/// What became of one game.
enum Finished {
    Played(GameData),
    Failed(String),
}

/// Plays game `index`, restarting a failed external engine and retrying;
/// `None` when interrupted.
fn play_with_retries(
    settings: &SelfplaySettings,
    player: &mut Option<Box<dyn Player>>,
    index: u64,
    interrupt: &Interrupt,
) -> Result<Option<Finished>, SelfplayError> {
    let attempts = 1 + settings.engine_retries;
    let mut last_error = String::new();
    for _ in 0..attempts {
        if interrupt.requested() {
            return Ok(None);
        }
        if player.is_none() {
            match start_player(&settings.player, interrupt) {
                Ok(p) => *player = Some(p),
                Err(e) => {
                    last_error = format!("engine start: {e}");
                    continue;
                }
            }
        }
        let active = player.as_deref_mut().expect("player started");
        match play_selfplay_game(active, &settings.games, index, interrupt.flag()) {
            Ok(data) => return Ok(Some(Finished::Played(data))),
            Err(SelfplayError::Interrupted) => return Ok(None),
            Err(SelfplayError::Player(e)) => {
                if interrupt.requested() {
                    return Ok(None);
                }
                last_error = e.to_string();
                // Dropping the player kills a hung or crashed engine.
                *player = None;
            }
            Err(e @ SelfplayError::NoStart(_)) => return Err(e),
        }
    }
    Ok(Some(Finished::Failed(format!(
        "{last_error} (after {attempts} attempts)"
    ))))
}

/// Lets workers take game `n` only while it is within the window of the
/// writer's progress.
struct Window {
    written: Mutex<u64>,
    advanced: Condvar,
    width: u64,
}

impl Window {
    /// Waits until game `n` may start; false when interrupted.
    fn wait_for_room(&self, n: u64, interrupt: &Interrupt) -> bool {
        let mut written = self.written.lock().expect("window lock");
        while n >= *written + self.width {
            if interrupt.requested() {
                return false;
            }
            written = self
                .advanced
                .wait_timeout(written, Duration::from_millis(100))
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

/// Messages from the workers to the writer.
enum Event {
    Done(u64, Finished),
    Fatal(anyhow::Error),
}

fn work(
    settings: &SelfplaySettings,
    next: &AtomicU64,
    window: &Window,
    events: &Sender<Event>,
    interrupt: &Interrupt,
) {
    let mut player = None;
    loop {
        let index = next.fetch_add(1, Ordering::SeqCst);
        if index >= settings.range.end || !window.wait_for_room(index, interrupt) {
            return;
        }
        let event = match play_with_retries(settings, &mut player, index, interrupt) {
            Ok(Some(finished)) => Event::Done(index, finished),
            Ok(None) => return,
            Err(e) => Event::Fatal(anyhow::Error::new(e).context(format!("game {index}"))),
        };
        if events.send(event).is_err() {
            return;
        }
    }
}

/// The live display: games done of the range (with ETA), rates and the
/// result distribution. Hidden unless enabled and stderr is a terminal.
fn progress_bar(total: u64, done: u64, enabled: bool) -> ProgressBar {
    if !enabled || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{bar:30.cyan/blue} {pos}/{len} games ETA {eta:>4} | {msg}")
            .expect("valid progress template"),
    );
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(
        REFRESH_PER_SECOND,
    ));
    bar.set_position(done);
    bar.reset_eta();
    bar
}

/// Runs the games to the end of the range (or to an interrupt); returns
/// the statistics and whether the run was interrupted.
///
/// # Errors
/// On I/O errors, an output that belongs to another run, or when no start
/// can be found for a game.
pub fn run(
    settings: &SelfplaySettings,
    interrupt: &Arc<Interrupt>,
) -> Result<(SelfplayStats, bool)> {
    let identity = settings.identity()?;
    let mut output = SelfplayOutput::open(&settings.output, &identity, settings.overwrite)?;
    let range_games = settings.range.end - settings.range.start;
    let done_before = output.games_done.min(range_games);
    let mut stats = SelfplayStats {
        resumed_games: done_before,
        range_games,
        failures: output.earlier_failures.clone(),
        ..SelfplayStats::default()
    };
    let first = settings.range.start + done_before;
    let threads = settings.threads.max(1);
    let window = Window {
        written: Mutex::new(first),
        advanced: Condvar::new(),
        width: WINDOW_PER_THREAD * threads as u64,
    };
    let next = AtomicU64::new(first);
    let bar = progress_bar(range_games, done_before, settings.progress);
    let started = Instant::now();
    let (sender, events) = channel::<Event>();
    let outcome = std::thread::scope(|scope| -> Result<()> {
        for _ in 0..threads {
            let sender = sender.clone();
            let (next, window, interrupt) = (&next, &window, &**interrupt);
            scope.spawn(move || work(settings, next, window, &sender, interrupt));
        }
        drop(sender);
        let mut pending: BTreeMap<u64, Finished> = BTreeMap::new();
        let mut to_write = first;
        let mut buffer = Vec::new();
        let result = (|| -> Result<()> {
            for event in &events {
                let (index, finished) = match event {
                    Event::Done(index, finished) => (index, finished),
                    Event::Fatal(e) => return Err(e),
                };
                pending.insert(index, finished);
                let before = to_write;
                while let Some(finished) = pending.remove(&to_write) {
                    match finished {
                        Finished::Played(data) => {
                            buffer.clear();
                            for record in &data.kept {
                                settings
                                    .format
                                    .append(record, &mut buffer)
                                    .with_context(|| format!("game {to_write}"))?;
                            }
                            output.write_game(&buffer)?;
                            stats.record(&data);
                        }
                        Finished::Failed(reason) => {
                            let failure = FailedGame {
                                game: to_write,
                                reason,
                            };
                            bar.suspend(|| {
                                eprintln!(
                                    "labeler selfplay: game {} failed: {}",
                                    failure.game, failure.reason
                                );
                            });
                            output.record_failure(&failure)?;
                            stats.failures.push(failure);
                        }
                    }
                    to_write += 1;
                }
                if to_write > before {
                    output.checkpoint(to_write - settings.range.start)?;
                    window.advance(to_write);
                    let seconds = started.elapsed().as_secs_f64().max(f64::EPSILON);
                    bar.set_position(to_write - settings.range.start);
                    bar.set_message(format!(
                        "{:.2} games/s, {:.0} positions/s, {}",
                        stats.games as f64 / seconds,
                        stats.kept as f64 / seconds,
                        stats.distribution()
                    ));
                }
            }
            Ok(())
        })();
        if result.is_err() {
            interrupt.trigger();
            // Keep draining so that the workers can finish.
            for _ in &events {}
        }
        result
    });
    bar.finish_and_clear();
    let elapsed = started.elapsed();
    outcome?;
    let interrupted = interrupt.requested();
    eprint!("{}", stats.report(elapsed, interrupted));
    Ok((stats, interrupted))
}
