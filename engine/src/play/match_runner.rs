//! An engine match: games between two players (the built-in engine with
//! some parameters, or an external UCI engine), each opening played with
//! both colours, several games at once, with live statistics and an
//! optional SPRT that stops the match early (formulas in
//! [`crate::play::elo`] and [`crate::play::sprt`]).
//!
//! Which game plays what: with `repeat` games per opening (2 by default),
//! game `i` (0-based, counted from `first_game`) plays the opening of slot
//! `i / repeat`, and player A has White when `i mod repeat` is even. Games
//! `i` and `i + 1` with `i mod repeat` even (and `i mod repeat + 1 <
//! repeat`) form a *pair*: the same opening with colours swapped. Pairs are
//! the independent samples of the pentanomial statistics and the SPRT;
//! with `repeat` 1 no game is paired and both use the trinomial W/D/L
//! record. Each worker thread owns its own two players, so in-process
//! searchers never share tables; every game starts with `new_game` (fresh
//! tables, `ucinewgame`).
//!
//! Every game's PGN carries its opening (`ECO`, `Opening`, `Variation`
//! tags) from [`crate::formats::eco`], and after each move the mover's
//! score, depth and time as a comment (`{+0.35/12 0.523s}`, see
//! [`move_comment`]), as cutechess and fastchess write them.
//!
//! Under a time control the clocks are real: the runner measures the time
//! each move actually took, subtracts it from the mover's clock and adds the
//! increment; a move that takes longer than the time left loses on time. A
//! failing external engine (illegal move, crash, hang, no move in time)
//! loses the game with the reason recorded, is killed, and is restarted for
//! its next game: the match continues; a failure seen while the match is
//! being stopped abandons the game instead (the stop may have caused it).
//! Games are reproducible with a node or depth budget and one game at a
//! time (with in-process players).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use shakmaty::{Color, Position};

use crate::eval::Params;
use crate::formats::eco::{EcoEntry, EcoTable};
use crate::formats::labeled::GameResult;
use crate::formats::pgn_record::PgnGame;
use crate::play::elo::{Estimate, Pentanomial, Record};
use crate::play::game::Choice;
use crate::play::game::{
    DrawRule, GameClocks, GameOutcome, GameRules, ResignRule, SearchBudget, Termination, play_out,
};
use crate::play::openings::{Opening, OpeningOrder, OpeningSource};
use crate::play::player::{InProcessPlayer, Player, PlayerError};
use crate::play::sprt::{Sprt, SprtDecision};
use crate::play::uci_client::{EngineSpec, UciPlayer};
use crate::search::SearchParams;
use crate::search::score::mate_in_moves;

/// Games per opening by default: one with each colour.
pub const DEFAULT_REPEAT: usize = 2;
/// PGN `TimeControl` value of a match without a clock.
const NO_CLOCK_TIME_CONTROL: &str = "-";

/// Which of the two players.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Side {
    /// The first player (`--*-a`); statistics are from its point of view.
    A,
    /// The second player.
    B,
}

impl Side {
    /// Both sides, A first.
    pub const BOTH: [Side; 2] = [Side::A, Side::B];

    fn index(self) -> usize {
        match self {
            Side::A => 0,
            Side::B => 1,
        }
    }
}

/// What plays one side of the match.
#[derive(Clone, Debug)]
pub enum PlayerKind {
    /// The built-in engine with these evaluation and search parameters.
    InProcess {
        /// Evaluation weights.
        params: Arc<Params>,
        /// Search parameters.
        search: SearchParams,
    },
    /// An external UCI engine.
    External(EngineSpec),
}

/// One player of the match.
#[derive(Clone, Debug)]
pub struct Contestant {
    /// Name in reports and PGN.
    pub name: String,
    /// How it plays.
    pub kind: PlayerKind,
}

/// A time control `base+increment` (seconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeControl {
    /// Time on each clock at the start.
    pub base: Duration,
    /// Time added after each move.
    pub increment: Duration,
}

/// Why a time control could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a time control (BASE or BASE+INCREMENT in seconds, e.g. 10+0.1)")]
pub struct TimeControlParseError(String);

impl FromStr for TimeControl {
    type Err = TimeControlParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || TimeControlParseError(text.to_string());
        let (base, increment) = text.split_once('+').unwrap_or((text, "0"));
        let seconds = |s: &str| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .map(Duration::from_secs_f64)
                .ok_or_else(error)
        };
        let tc = TimeControl {
            base: seconds(base)?,
            increment: seconds(increment)?,
        };
        if tc.base.is_zero() {
            return Err(error());
        }
        Ok(tc)
    }
}

impl fmt::Display for TimeControl {
    /// The PGN `TimeControl` form: `10+0.1` (seconds).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.base.as_secs_f64())?;
        if !self.increment.is_zero() {
            write!(f, "+{}", self.increment.as_secs_f64())?;
        }
        Ok(())
    }
}

/// How long each move may think.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveLimit {
    /// The same fixed budget for every move (nodes, depth or movetime).
    Fixed(SearchBudget),
    /// Real clocks.
    Clock(TimeControl),
}

/// Everything that defines a match.
#[derive(Debug)]
pub struct MatchSettings {
    /// Player A and player B.
    pub players: [Contestant; 2],
    /// Total games (an odd total plays the last opening once, A with
    /// White).
    pub games: usize,
    /// Number of the first game (0 for a whole match; a later number plays
    /// the openings and colours of a later part of the same match).
    pub first_game: usize,
    /// Games per opening, A with White in the first, third, … (see the
    /// module documentation); at least 1.
    pub repeat: usize,
    /// Where games start.
    pub openings: OpeningSource,
    /// The order of a list of openings.
    pub order: OpeningOrder,
    /// Thinking limit of every move.
    pub limit: MoveLimit,
    /// Resign adjudication.
    pub resign: Option<ResignRule>,
    /// Draw adjudication.
    pub draw: Option<DrawRule>,
    /// Games reaching this many plies (opening included) are drawn.
    pub max_plies: Option<u32>,
    /// Games played at once.
    pub concurrency: usize,
    /// Seed of the random opening lines.
    pub seed: u64,
    /// Transposition table size of every in-process player, in MB.
    pub hash_mb: usize,
    /// Stop early when this test decides.
    pub sprt: Option<Sprt>,
    /// PGN `Event` tag.
    pub event: String,
}

/// Why a player lost by forfeit.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum ForfeitReason {
    /// The clock ran out (or no answer within the time left).
    Time,
    /// The engine played an illegal move.
    IllegalMove,
    /// The engine answered something that is not a move.
    Protocol,
    /// The engine exited, could not be started or written to.
    Crash,
    /// The engine did not answer in time (without a clock).
    Hang,
}

impl ForfeitReason {
    /// Human-readable name.
    pub fn name(self) -> &'static str {
        match self {
            ForfeitReason::Time => "time forfeit",
            ForfeitReason::IllegalMove => "illegal move",
            ForfeitReason::Protocol => "protocol error",
            ForfeitReason::Crash => "engine crash",
            ForfeitReason::Hang => "engine hang",
        }
    }

    /// The PGN `Termination` tag value.
    pub fn pgn_termination(self) -> &'static str {
        match self {
            ForfeitReason::Time => "time forfeit",
            ForfeitReason::IllegalMove | ForfeitReason::Protocol => "rules infraction",
            ForfeitReason::Crash | ForfeitReason::Hang => "abandoned",
        }
    }

    fn of_error(error: &PlayerError, clocked: bool) -> ForfeitReason {
        match error {
            PlayerError::Timeout(..) if clocked => ForfeitReason::Time,
            PlayerError::Timeout(..) => ForfeitReason::Hang,
            PlayerError::Exited(_) | PlayerError::Io(_) => ForfeitReason::Crash,
            PlayerError::Protocol(_) => ForfeitReason::Protocol,
            PlayerError::IllegalMove(_) => ForfeitReason::IllegalMove,
        }
    }
}

/// How a match game ended.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum GameEnd {
    /// By the rules or adjudication.
    Rules(Termination),
    /// A player lost by forfeit.
    Forfeit {
        /// Who lost.
        loser: Side,
        /// Why.
        reason: ForfeitReason,
        /// Details (the engine's error, the time used, …).
        detail: String,
    },
}

/// One finished game (also a record of a match journal).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GameReport {
    /// 0-based game number.
    pub index: usize,
    /// Which side had White.
    pub white: Side,
    /// The result, White's point of view.
    pub result: GameResult,
    /// Why it ended.
    pub end: GameEnd,
    /// Plies played (opening moves included).
    pub plies: u32,
    /// The opening (ECO code and name), when the ECO table knows it.
    pub eco: Option<EcoEntry>,
    /// The game as PGN text.
    pub pgn: String,
}

impl GameReport {
    /// Points scored by player A (1, ½ or 0).
    pub fn score_of_a(&self) -> f64 {
        let white = self.result.white_score();
        if self.white == Side::A {
            white
        } else {
            1.0 - white
        }
    }

    /// A short description of the ending.
    pub fn end_description(&self) -> String {
        match &self.end {
            GameEnd::Rules(t) => t.name().to_string(),
            GameEnd::Forfeit { loser, reason, .. } => format!("{loser:?} loses: {}", reason.name()),
        }
    }
}

/// The state of a match after some games.
#[derive(Clone, Debug, Default)]
pub struct Standing {
    /// Player A's record over all games.
    pub record: Record,
    /// Player A's record over completed pairs (empty when games are not
    /// paired).
    pub pairs: Pentanomial,
    /// Whether games are paired (`repeat` ≥ 2): the statistics and the SPRT
    /// then use [`Standing::pairs`], otherwise [`Standing::record`].
    pub paired: bool,
    /// Player A's score in games whose partner has not finished yet (or has
    /// none), by game number.
    pub waiting: BTreeMap<usize, f64>,
    /// Forfeits by loser and reason.
    pub forfeits: BTreeMap<(Side, ForfeitReason), u64>,
    /// Games by ending (rules and adjudication).
    pub endings: BTreeMap<Termination, u64>,
    /// The SPRT's decision, when a test runs.
    pub sprt: Option<SprtDecision>,
    /// The SPRT's log-likelihood ratio, when a test runs.
    pub llr: Option<f64>,
}

/// The game that forms a pair with game `index` under `repeat` games per
/// opening, if any.
pub fn partner(index: usize, repeat: usize) -> Option<usize> {
    let within = index % repeat.max(1);
    if within % 2 == 1 {
        Some(index - 1)
    } else if within + 1 < repeat {
        Some(index + 1)
    } else {
        None
    }
}

impl Standing {
    /// An empty standing for games played `repeat` times per opening.
    pub fn new(repeat: usize) -> Self {
        Standing {
            paired: repeat >= 2,
            ..Standing::default()
        }
    }

    /// The standing after `games`, counted in the order given.
    pub fn of_games(games: &[GameReport], repeat: usize, sprt: Option<&Sprt>) -> Self {
        let mut standing = Standing::new(repeat);
        for report in games {
            standing.add(report, repeat, sprt);
        }
        standing
    }

    /// Counts a finished game, and its pair once both games are in.
    pub fn add(&mut self, report: &GameReport, repeat: usize, sprt: Option<&Sprt>) {
        let score = report.score_of_a();
        self.record.add(score);
        match partner(report.index, repeat) {
            Some(other) => match self.waiting.remove(&other) {
                Some(other_score) => {
                    let (first, second) = if other < report.index {
                        (other_score, score)
                    } else {
                        (score, other_score)
                    };
                    self.pairs.add(first, second);
                }
                None => {
                    self.waiting.insert(report.index, score);
                }
            },
            None => {
                self.waiting.insert(report.index, score);
            }
        }
        match &report.end {
            GameEnd::Rules(t) => *self.endings.entry(*t).or_default() += 1,
            GameEnd::Forfeit { loser, reason, .. } => {
                *self.forfeits.entry((*loser, *reason)).or_default() += 1;
            }
        }
        if let Some(sprt) = sprt {
            let llr = if self.paired {
                sprt.llr_pairs(&self.pairs)
            } else {
                sprt.llr_games(&self.record)
            };
            self.llr = Some(llr);
            self.sprt = Some(sprt.decide(llr));
        }
    }

    /// The statistics the match is judged by: over pairs when games are
    /// paired, over games otherwise.
    pub fn estimate(&self) -> Estimate {
        if self.paired {
            self.pairs.estimate()
        } else {
            self.record.estimate()
        }
    }

    /// One line: `+W =D -L`, the pentanomial counts when paired, then Elo
    /// with its interval, LOS (and the LLR).
    pub fn summary_line(&self) -> String {
        let r = &self.record;
        let e = self.estimate();
        let mut line = format!("+{} ={} -{}", r.wins, r.draws, r.losses);
        if self.paired {
            let [ll, ld, even, wd, ww] = self.pairs.frequencies();
            line.push_str(&format!(" pairs [{ll} {ld} {even} {wd} {ww}]"));
        }
        line.push_str(&format!(
            " elo {:+.1} [{:+.1}, {:+.1}] LOS {:.1}%",
            e.elo,
            e.low,
            e.high,
            100.0 * e.los
        ));
        if let Some(llr) = self.llr {
            line.push_str(&format!(" LLR {llr:+.2}"));
        }
        line
    }
}

/// Why a match could not run.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    /// An external engine could not be started before the first game.
    #[error("starting {name}: {source}")]
    Start {
        /// The player's name.
        name: String,
        /// The failure.
        source: PlayerError,
    },
    /// The settings make no match.
    #[error("invalid match settings: {0}")]
    Settings(String),
}

/// The end of a match.
#[derive(Clone, Debug)]
pub struct MatchSummary {
    /// The final standing.
    pub standing: Standing,
    /// Games played to the end.
    pub games_played: usize,
    /// Whether the match stopped before all games (SPRT decision or abort).
    pub stopped_early: bool,
}

/// A player slot of one worker: started lazily, dropped (killing an
/// external engine) after a failure, restarted for the next game.
struct Seat<'a> {
    contestant: &'a Contestant,
    hash_mb: usize,
    player: Option<Box<dyn Player>>,
}

impl Seat<'_> {
    fn ready(&mut self) -> Result<&mut dyn Player, PlayerError> {
        if self.player.is_none() {
            self.player = Some(start_player(self.contestant, self.hash_mb)?);
        }
        Ok(self.player.as_deref_mut().expect("player started"))
    }
}

fn start_player(contestant: &Contestant, hash_mb: usize) -> Result<Box<dyn Player>, PlayerError> {
    Ok(match &contestant.kind {
        PlayerKind::InProcess { params, search } => {
            let mut player = InProcessPlayer::new(Arc::clone(params), hash_mb);
            player.set_search_params(*search);
            Box::new(player)
        }
        PlayerKind::External(spec) => Box::new(UciPlayer::start(spec.clone())?),
    })
}

/// Why a game stopped before its end.
enum Interruption {
    /// The match is being stopped: discard the game.
    Aborted,
    /// The side to move lost by forfeit.
    Forfeit(Color, ForfeitReason, String),
}

fn forfeit_detail(error: &PlayerError, reason: ForfeitReason) -> String {
    match reason {
        ForfeitReason::Time => format!("no move within the time left ({error})"),
        _ => error.to_string(),
    }
}

/// How long an engine crash waits for a stop request before it counts as
/// the engine's loss (see [`stops_within`]).
const CRASH_GRACE: Duration = Duration::from_millis(500);

/// Whether `stopped` turns true within `grace`, polled every 10 ms. A
/// Ctrl-C reaches the match's engines as well as the runner, whose stop
/// flag is set by a handler thread the signal wakes: an engine killed by
/// the signal can be seen dead before the flag is, and its game must then
/// be abandoned, not scored as a crash (which the resumed match would keep).
fn stops_within(stopped: &dyn Fn() -> bool, grace: Duration) -> bool {
    let start = Instant::now();
    loop {
        if stopped() {
            return true;
        }
        if start.elapsed() >= grace {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Plays game `index`; `None` when `stopped` turns true meanwhile.
fn play_match_game(
    settings: &MatchSettings,
    seats: &mut [Seat<'_>; 2],
    index: usize,
    opening: &Opening,
    stopped: &dyn Fn() -> bool,
) -> Option<GameReport> {
    let white = if (index % settings.repeat).is_multiple_of(2) {
        Side::A
    } else {
        Side::B
    };
    let side_of = |color: Color| match (color, white) {
        (Color::White, s) => s,
        (Color::Black, Side::A) => Side::B,
        (Color::Black, Side::B) => Side::A,
    };
    let clocked = matches!(settings.limit, MoveLimit::Clock(_));
    let mut game = opening.record();
    let rules = GameRules {
        budget: match settings.limit {
            MoveLimit::Fixed(budget) => budget,
            MoveLimit::Clock(tc) => SearchBudget::Clock(GameClocks {
                white: tc.base,
                black: tc.base,
                increment: tc.increment,
            }),
        },
        resign: settings.resign,
        draw: settings.draw,
        max_plies: settings.max_plies,
    };
    let mut clocks = match rules.budget {
        SearchBudget::Clock(c) => Some(c),
        _ => None,
    };

    let mut outcome: Result<GameOutcome, Interruption> = Ok(GameOutcome {
        result: GameResult::Draw,
        termination: Termination::MaxPlies,
        plies: 0,
    });
    // Both players prepare for the game (fresh tables, engines running).
    for color in [Color::White, Color::Black] {
        let seat = &mut seats[side_of(color).index()];
        if let Err(e) = seat.ready().and_then(|p| p.new_game()) {
            seat.player = None;
            let reason = ForfeitReason::Crash;
            outcome = Err(Interruption::Forfeit(color, reason, e.to_string()));
            break;
        }
    }
    let mut move_comments = Vec::new();
    if outcome.is_ok() {
        outcome = play_out(&mut game, &rules, |record| {
            if stopped() {
                return Err(Interruption::Aborted);
            }
            let mover = record.position.turn();
            let seat = &mut seats[side_of(mover).index()];
            let budget = clocks.map_or(rules.budget, SearchBudget::Clock);
            let started = Instant::now();
            let answer = seat.ready().and_then(|p| p.choose_move(record, budget));
            let used = started.elapsed();
            if stopped() {
                return Err(Interruption::Aborted);
            }
            let choice: Choice = match answer {
                Ok(choice) => choice,
                Err(e) => {
                    seat.player = None;
                    let reason = ForfeitReason::of_error(&e, clocked);
                    return Err(Interruption::Forfeit(
                        mover,
                        reason,
                        forfeit_detail(&e, reason),
                    ));
                }
            };
            if let Some(c) = clocks.as_mut() {
                let left = c.left(mover);
                if used > left {
                    return Err(Interruption::Forfeit(
                        mover,
                        ForfeitReason::Time,
                        format!(
                            "used {} ms with {} ms left",
                            used.as_millis(),
                            left.as_millis()
                        ),
                    ));
                }
                let after = left - used + c.increment;
                match mover {
                    Color::White => c.white = after,
                    Color::Black => c.black = after,
                }
            }
            move_comments.push(move_comment(&choice, used));
            Ok(choice)
        });
    }

    let (result, end) = match outcome {
        Ok(o) => (o.result, GameEnd::Rules(o.termination)),
        Err(Interruption::Aborted) => return None,
        // The signal that stops the match may have ended an engine too (sent
        // to it by hand, or to a group it was moved into): a failure seen
        // while stopping is not the engine's, and the game is abandoned.
        Err(Interruption::Forfeit(..)) if stopped() => return None,
        // The stop flag may come late: the runner's handler is a thread the
        // signal wakes, and the engine can die of the same signal first.
        Err(Interruption::Forfeit(_, ForfeitReason::Crash, _))
            if stops_within(stopped, CRASH_GRACE) =>
        {
            return None;
        }
        Err(Interruption::Forfeit(color, reason, detail)) => (
            GameResult::win_for(!color),
            GameEnd::Forfeit {
                loser: side_of(color),
                reason,
                detail,
            },
        ),
    };
    let name_of = |side: Side| settings.players[side.index()].name.clone();
    let (white_name, black_name) = (name_of(white), name_of(side_of(Color::Black)));
    let (termination_tag, comment) = match &end {
        GameEnd::Rules(t) => (
            if t.is_adjudication() {
                "adjudication"
            } else {
                "normal"
            },
            t.name().to_string(),
        ),
        GameEnd::Forfeit {
            loser,
            reason,
            detail,
        } => (
            reason.pgn_termination(),
            format!(
                "{} loses by {}: {detail}",
                settings.players[loser.index()].name,
                reason.name()
            ),
        ),
    };
    let time_control = match settings.limit {
        MoveLimit::Clock(tc) => tc.to_string(),
        MoveLimit::Fixed(_) => NO_CLOCK_TIME_CONTROL.to_string(),
    };
    let eco = EcoTable::bundled()
        .classify(&game.start, &game.moves)
        .cloned();
    let mut tags = vec![
        ("Event".into(), settings.event.clone()),
        ("Round".into(), (index + 1).to_string()),
        ("White".into(), white_name),
        ("Black".into(), black_name),
        ("Termination".into(), termination_tag.to_string()),
        ("TimeControl".into(), time_control),
    ];
    tags.extend(eco.iter().flat_map(EcoEntry::tags));
    let pgn = PgnGame {
        tags,
        start: &game.start,
        moves: &game.moves,
        result: result.pgn(),
        move_comments: &move_comments,
        final_comment: Some(comment),
    }
    .to_pgn();
    Some(GameReport {
        index,
        white,
        result,
        end,
        plies: game.plies(),
        eco,
        pgn,
    })
}

/// The PGN comment of a move as match tools write it: the mover's score in
/// pawns (`+M3`/`-M3` for mates in moves), the depth, the time the move took
/// (`+0.35/12 0.523s`).
pub fn move_comment(choice: &Choice, used: Duration) -> String {
    let mut text = match choice.score {
        Some(score) => match mate_in_moves(score) {
            Some(moves) if score > 0 => format!("+M{moves}"),
            Some(moves) => format!("-M{}", moves.abs()),
            None => format!("{:+.2}", f64::from(score) / 100.0),
        },
        None => String::new(),
    };
    if let Some(depth) = choice.depth {
        text.push_str(&format!("/{depth}"));
    }
    if !text.is_empty() {
        text.push(' ');
    }
    text.push_str(&format!("{:.3}s", used.as_secs_f64()));
    text
}

/// Plays the match. `on_game` is called on the calling thread as each game
/// finishes, with the standing after it (in completion order). Setting
/// `abort` stops the match: running games are abandoned and not counted.
///
/// # Errors
/// When the settings are inconsistent or an external engine cannot be
/// started at all (checked once before the first game).
pub fn run_match(
    settings: &MatchSettings,
    abort: &AtomicBool,
    on_game: impl FnMut(&GameReport, &Standing),
) -> Result<MatchSummary, MatchError> {
    resume_match(settings, &[], abort, on_game)
}

/// Plays the rest of a match of which the games `played` are already over
/// (from a [`crate::play::match_journal`]): they count in the standing from
/// the start, in the order given, and are not played again; `on_game` sees
/// only the new games. A match whose SPRT the played games already decide
/// plays nothing more. The summary counts all games, old and new.
///
/// # Errors
/// As [`run_match`]; also when a played game's number is outside the match
/// or repeated.
pub fn resume_match(
    settings: &MatchSettings,
    played: &[GameReport],
    abort: &AtomicBool,
    mut on_game: impl FnMut(&GameReport, &Standing),
) -> Result<MatchSummary, MatchError> {
    if settings.concurrency == 0 {
        return Err(MatchError::Settings(
            "concurrency must be at least 1".into(),
        ));
    }
    if settings.repeat == 0 {
        return Err(MatchError::Settings("repeat must be at least 1".into()));
    }
    for contestant in &settings.players {
        start_player(contestant, settings.hash_mb).map_err(|source| MatchError::Start {
            name: contestant.name.clone(),
            source,
        })?;
    }
    let (first, end) = (settings.first_game, settings.first_game + settings.games);
    let mut done = BTreeSet::new();
    for report in played {
        if !(first..end).contains(&report.index) || !done.insert(report.index) {
            return Err(MatchError::Settings(format!(
                "game {} of the played games is {} this match of games {}..={}",
                report.index + 1,
                if done.contains(&report.index) {
                    "repeated in"
                } else {
                    "not part of"
                },
                first + 1,
                end
            )));
        }
    }
    let mut standing = Standing::of_games(played, settings.repeat, settings.sprt.as_ref());
    let mut games_played = played.len();
    let decided = standing.sprt.is_some_and(|d| d != SprtDecision::Continue);
    let next_game = AtomicUsize::new(first);
    let stop = AtomicBool::new(decided);
    let stopped = || stop.load(Ordering::Relaxed) || abort.load(Ordering::Relaxed);
    let (sender, receiver) = channel::<GameReport>();
    std::thread::scope(|scope| {
        let workers = settings
            .concurrency
            .min((settings.games - done.len()).max(1));
        for _ in 0..workers {
            let sender = sender.clone();
            let (next_game, stopped, done) = (&next_game, &stopped, &done);
            scope.spawn(move || {
                let mut seats = [0, 1].map(|i| Seat {
                    contestant: &settings.players[i],
                    hash_mb: settings.hash_mb,
                    player: None,
                });
                loop {
                    let index = next_game.fetch_add(1, Ordering::Relaxed);
                    if index >= end || stopped() {
                        break;
                    }
                    if done.contains(&index) {
                        continue;
                    }
                    let opening = settings.openings.for_slot(
                        index / settings.repeat,
                        settings.seed,
                        settings.order,
                    );
                    let Some(report) =
                        play_match_game(settings, &mut seats, index, &opening, stopped)
                    else {
                        break;
                    };
                    if sender.send(report).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        for report in receiver {
            if stop.load(Ordering::Relaxed) {
                continue;
            }
            games_played += 1;
            standing.add(&report, settings.repeat, settings.sprt.as_ref());
            on_game(&report, &standing);
            if standing.sprt.is_some_and(|d| d != SprtDecision::Continue) {
                stop.store(true, Ordering::Relaxed);
            }
        }
    });
    Ok(MatchSummary {
        standing,
        games_played,
        stopped_early: games_played < settings.games,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::MATE_SCORE;

    #[test]
    fn a_stop_request_that_comes_soon_after_a_crash_is_seen() {
        let start = Instant::now();
        let late_stop = || start.elapsed() >= Duration::from_millis(100);
        assert!(stops_within(&late_stop, CRASH_GRACE));
        assert!(start.elapsed() >= Duration::from_millis(100));
        let never = || false;
        let start = Instant::now();
        assert!(!stops_within(&never, Duration::from_millis(50)));
        assert!(start.elapsed() >= Duration::from_millis(50));
    }

    #[test]
    fn move_comments_read_like_cutechess() {
        let m = shakmaty::Chess::default().legal_moves()[0];
        let choice = |score, depth| Choice {
            best_move: m,
            score,
            depth,
        };
        let ms = Duration::from_millis;
        assert_eq!(
            move_comment(&choice(Some(35), Some(12)), ms(523)),
            "+0.35/12 0.523s"
        );
        assert_eq!(
            move_comment(&choice(Some(-120), Some(7)), ms(40)),
            "-1.20/7 0.040s"
        );
        assert_eq!(
            move_comment(&choice(Some(0), None), ms(1500)),
            "+0.00 1.500s"
        );
        // Mate in 3 moves for the mover (5 plies), mated in 2 (4 plies).
        assert_eq!(
            move_comment(&choice(Some(MATE_SCORE - 5), Some(20)), ms(1)),
            "+M3/20 0.001s"
        );
        assert_eq!(
            move_comment(&choice(Some(-(MATE_SCORE - 4)), Some(9)), ms(1)),
            "-M2/9 0.001s"
        );
        assert_eq!(move_comment(&choice(None, None), ms(2)), "0.002s");
    }
}
