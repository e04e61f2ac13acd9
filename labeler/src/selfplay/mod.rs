//! `labeler selfplay`: training data from whole self-play games. Every
//! quiet position the engine searched in a game is kept, labeled with the
//! game's result (`c9`) and its own search score (`ce`), so one game gives
//! some 40–80 positions where the per-position labeler gives one.
//!
//! The modules: [`start`] (opening, random plies, start check),
//! [`game`] (one game through the engine library's game loop),
//! [`selection`] (which positions are kept), [`output`] (formats and
//! resuming) and [`summary`]. This module runs the games on the tools'
//! ordered map ([`engine::runtime::ordered`]): worker threads take game
//! indices in order, each with its own player, and finished games are
//! written strictly in game order, a checkpoint after each. At most
//! [`WINDOW_PER_THREAD`] games per thread are in flight, so memory stays
//! bounded whatever `--games` is. Game `i` depends only on
//! the seed and `i` (its generator, fresh search tables, a node or depth
//! budget), so the output is byte-identical for any `--threads`, and
//! `--first-game`/`--shard` runs concatenated in order equal one run.

pub mod game;
pub mod output;
pub mod selection;
pub mod start;
pub mod summary;

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use engine::eval::Params;
use engine::play::player::{InProcessPlayer, Player, PlayerError};
use engine::play::uci_client::{EngineSpec, UciPlayer};
use engine::runtime::interrupt::Interrupt;
use engine::runtime::ordered::{Flow, OrderedMap};
use engine::runtime::progress::Progress;

use crate::resume::RunIdentity;
use crate::selfplay::game::{GameData, GameSettings, SelfplayError, play_selfplay_game};
use crate::selfplay::output::{FailedGame, OutputFormat, SelfplayOutput};
use crate::selfplay::summary::SelfplayStats;

/// Games in flight per thread (played, or finished and waiting for their
/// turn to be written).
pub const WINDOW_PER_THREAD: usize = 4;
/// Transposition table of an in-process player (cleared every game).
const IN_PROCESS_HASH_MB: usize = 2;

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

/// A worker thread's player, started on its first game.
type WorkerPlayer = Option<Box<dyn Player + Send>>;

/// Creates a worker's player.
fn start_player(
    spec: &PlayerSpec,
    interrupt: &Interrupt,
) -> Result<Box<dyn Player + Send>, PlayerError> {
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
enum GameEnd {
    Played(GameData),
    Failed(String),
}

/// Plays game `index`, restarting a failed external engine and retrying;
/// `None` when interrupted.
///
/// # Errors
/// [`SelfplayError::NoStart`]: no start can be found (a setting error).
fn play_with_retries(
    settings: &SelfplaySettings,
    player: &mut WorkerPlayer,
    index: u64,
    interrupt: &Interrupt,
) -> Option<Result<GameEnd, SelfplayError>> {
    let attempts = 1 + settings.engine_retries;
    let mut last_error = String::new();
    for _ in 0..attempts {
        if interrupt.requested() {
            return None;
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
            Ok(data) => return Some(Ok(GameEnd::Played(data))),
            Err(SelfplayError::Interrupted) => return None,
            Err(SelfplayError::Player(e)) => {
                if interrupt.requested() {
                    return None;
                }
                last_error = e.to_string();
                // Dropping the player kills a hung or crashed engine.
                *player = None;
            }
            Err(e @ SelfplayError::NoStart(_)) => return Some(Err(e)),
        }
    }
    Some(Ok(GameEnd::Failed(format!(
        "{last_error} (after {attempts} attempts)"
    ))))
}

/// The progress message: games of the range, ETA, rates, results.
fn progress_message(stats: &SelfplayStats, done: u64, elapsed: Duration) -> String {
    let seconds = elapsed.as_secs_f64().max(f64::EPSILON);
    let rate = stats.games as f64 / seconds;
    let left = stats.range_games.saturating_sub(done);
    let eta = if rate > 0.0 {
        let s = (left as f64 / rate).round() as u64;
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        "?".to_string()
    };
    format!(
        "{done}/{} games, ETA {eta}, {rate:.2} games/s, {:.0} positions/s, {}",
        stats.range_games,
        stats.kept as f64 / seconds,
        stats.distribution()
    )
}

/// Runs the games to the end of the range (or to an interrupt) on the
/// tools' ordered map ([`engine::runtime::ordered`]); returns the
/// statistics, whether the run was interrupted and how long it took.
///
/// # Errors
/// On I/O errors, an output that belongs to another run, or when no start
/// can be found for a game.
pub fn run(
    settings: &SelfplaySettings,
    interrupt: &Interrupt,
) -> Result<(SelfplayStats, bool, Duration)> {
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
    let mut games = settings.range.start + done_before..settings.range.end;
    let progress = Progress::spinner(settings.progress);
    let mut buffer = Vec::new();
    let finished = OrderedMap::new(settings.threads)
        .in_flight_per_thread(WINDOW_PER_THREAD)
        .stop_on(interrupt.flag())
        .run(
            || Ok::<_, anyhow::Error>(games.next().map(|index| (index, ()))),
            |_thread| WorkerPlayer::None,
            |player, (index, ())| {
                play_with_retries(settings, player, index, interrupt).map(|end| (index, end))
            },
            |(index, end)| {
                match end.with_context(|| format!("game {index}"))? {
                    GameEnd::Played(data) => {
                        buffer.clear();
                        for record in &data.kept {
                            settings
                                .format
                                .append(record, &mut buffer)
                                .with_context(|| format!("game {index}"))?;
                        }
                        output.write_game(&buffer)?;
                        stats.record(&data);
                    }
                    GameEnd::Failed(reason) => {
                        let failure = FailedGame {
                            game: index,
                            reason,
                        };
                        progress.println(&format!(
                            "labeler selfplay: game {} failed: {}",
                            failure.game, failure.reason
                        ));
                        output.record_failure(&failure)?;
                        stats.failures.push(failure);
                    }
                }
                let done = index + 1 - settings.range.start;
                output.checkpoint(done)?;
                if !progress.is_hidden() {
                    progress.set_message(progress_message(&stats, done, progress.elapsed()));
                }
                Ok(Flow::Continue)
            },
        );
    let elapsed = progress.finish();
    let finished = finished?;
    let interrupted = finished.interrupted || interrupt.requested();
    eprint!("{}", stats.report(elapsed, interrupted));
    Ok((stats, interrupted, elapsed))
}
