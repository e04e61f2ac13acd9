//! The arbiter of one game: the rules of the game's end (checkmate,
//! stalemate, repetition, 50-move rule, insufficient material), adjudication
//! (resign, draw, maximum length) and the budget of every search.
//!
//! The game is engine-agnostic: [`play_out`] asks a move chooser for every
//! move (the labeler lets one [`crate::play::player::Player`] play both sides, the match runner
//! dispatches to two players with clocks) and judges the game after each
//! move. Invariants: the [`GameRecord`] only ever holds legal moves, and
//! its keys are the keys of every position of the game, so repetition is
//! judged on this game's positions only (moves that led to the start
//! position are unknown unless they are part of the record).

use std::time::Duration;

use shakmaty::{Chess, Color, Move, Position};

use crate::chess::position::{color_sign, key, key_after};
use crate::formats::labeled::GameResult;
use crate::search::SearchLimits;
use crate::search::timeman::Clock;

/// A position reached this many times is a draw.
const REPETITION_DRAW_COUNT: usize = 3;
/// Halfmove clock value at which the 50-move rule draws the game.
const FIFTY_MOVE_HALFMOVES: u32 = 100;
/// Plies per full move: adjudication counts are in moves of each side.
const PLIES_PER_MOVE: u32 = 2;

/// Both sides' clocks at the moment a move is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameClocks {
    /// Time left on White's clock.
    pub white: Duration,
    /// Time left on Black's clock.
    pub black: Duration,
    /// Increment added to a side's clock after each of its moves.
    pub increment: Duration,
}

impl GameClocks {
    /// Time left on `side`'s clock.
    pub fn left(&self, side: Color) -> Duration {
        match side {
            Color::White => self.white,
            Color::Black => self.black,
        }
    }
}

/// The budget of one search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchBudget {
    /// A node count (reproducible).
    Nodes(u64),
    /// An iteration depth (reproducible).
    Depth(u32),
    /// A fixed time per move (not reproducible).
    Movetime(Duration),
    /// A real clock: the searcher manages its own time (not reproducible).
    Clock(GameClocks),
}

impl SearchBudget {
    /// The budget as library search limits for a search by `side`.
    pub fn limits(self, side: Color) -> SearchLimits {
        match self {
            SearchBudget::Nodes(n) => SearchLimits::nodes(n),
            SearchBudget::Depth(d) => SearchLimits::depth(d),
            SearchBudget::Movetime(t) => SearchLimits::movetime(t),
            SearchBudget::Clock(clocks) => SearchLimits {
                clock: Some(Clock {
                    time_left: clocks.left(side),
                    increment: clocks.increment,
                    moves_to_go: None,
                }),
                ..SearchLimits::default()
            },
        }
    }

    /// The budget as a UCI `go` command.
    pub fn uci_go(self) -> String {
        match self {
            SearchBudget::Nodes(n) => format!("go nodes {n}"),
            SearchBudget::Depth(d) => format!("go depth {d}"),
            SearchBudget::Movetime(t) => format!("go movetime {}", t.as_millis()),
            SearchBudget::Clock(c) => {
                let inc = c.increment.as_millis();
                format!(
                    "go wtime {} btime {} winc {inc} binc {inc}",
                    c.white.as_millis(),
                    c.black.as_millis()
                )
            }
        }
    }

    /// The time `side` may legitimately spend on a search under this budget
    /// (zero for node and depth budgets); answer timeouts come on top.
    pub fn thinking_allowance(self, side: Color) -> Duration {
        match self {
            SearchBudget::Nodes(_) | SearchBudget::Depth(_) => Duration::ZERO,
            SearchBudget::Movetime(t) => t,
            SearchBudget::Clock(c) => c.left(side),
        }
    }

    /// A short stable description (`nodes=5000`) for the run identity.
    pub fn describe(self) -> String {
        match self {
            SearchBudget::Nodes(n) => format!("nodes={n}"),
            SearchBudget::Depth(d) => format!("depth={d}"),
            SearchBudget::Movetime(t) => format!("movetime={}ms", t.as_millis()),
            SearchBudget::Clock(c) => format!(
                "clock={}ms/{}ms+{}ms",
                c.white.as_millis(),
                c.black.as_millis(),
                c.increment.as_millis()
            ),
        }
    }
}

/// Resign adjudication: both sides' scores agree that one side is lost by at
/// least `score` centipawns for `moves` consecutive moves of each side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResignRule {
    /// Threshold in centipawns.
    pub score: i32,
    /// Consecutive moves (of each side) beyond the threshold.
    pub moves: u32,
}

/// Draw adjudication: after `after_ply` plies of the game, both sides' scores
/// stay within `score` centipawns of zero for `moves` consecutive moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrawRule {
    /// Threshold in centipawns (absolute value).
    pub score: i32,
    /// Consecutive moves (of each side) within the threshold.
    pub moves: u32,
    /// No draw adjudication before this many plies have been played.
    pub after_ply: u32,
}

/// How games are played and adjudicated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameRules {
    /// Budget of every move.
    pub budget: SearchBudget,
    /// Resign adjudication, when enabled.
    pub resign: Option<ResignRule>,
    /// Draw adjudication, when enabled.
    pub draw: Option<DrawRule>,
    /// A game reaching this many plies is adjudicated a draw.
    pub max_plies: Option<u32>,
}

impl GameRules {
    /// A short stable description for the run identity.
    pub fn describe(&self) -> String {
        let resign = self
            .resign
            .map_or("off".to_string(), |r| format!("{}cp/{}", r.score, r.moves));
        let draw = self.draw.map_or("off".to_string(), |d| {
            format!("{}cp/{}/after{}", d.score, d.moves, d.after_ply)
        });
        let max = self.max_plies.map_or("off".to_string(), |m| m.to_string());
        format!(
            "{} resign={resign} draw={draw} max-plies={max}",
            self.budget.describe()
        )
    }
}

/// Why a game ended.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Termination {
    /// The side to move is checkmated.
    Checkmate,
    /// The side to move has no legal move and is not in check.
    Stalemate,
    /// The same position occurred three times in the game.
    Repetition,
    /// 100 plies without a capture or pawn move.
    FiftyMoveRule,
    /// Neither side can mate.
    InsufficientMaterial,
    /// Adjudicated by [`ResignRule`].
    ResignAdjudication,
    /// Adjudicated by [`DrawRule`].
    DrawAdjudication,
    /// Adjudicated a draw at [`GameRules::max_plies`].
    MaxPlies,
}

impl Termination {
    /// Every kind, in report order.
    pub const ALL: [Termination; 8] = [
        Termination::Checkmate,
        Termination::Stalemate,
        Termination::Repetition,
        Termination::FiftyMoveRule,
        Termination::InsufficientMaterial,
        Termination::ResignAdjudication,
        Termination::DrawAdjudication,
        Termination::MaxPlies,
    ];

    /// Human-readable name.
    pub fn name(self) -> &'static str {
        match self {
            Termination::Checkmate => "checkmate",
            Termination::Stalemate => "stalemate",
            Termination::Repetition => "threefold repetition",
            Termination::FiftyMoveRule => "50-move rule",
            Termination::InsufficientMaterial => "insufficient material",
            Termination::ResignAdjudication => "resign adjudication",
            Termination::DrawAdjudication => "draw adjudication",
            Termination::MaxPlies => "max-plies adjudication",
        }
    }

    /// Whether the game was ended by an adjudication rule.
    pub fn is_adjudication(self) -> bool {
        matches!(
            self,
            Termination::ResignAdjudication | Termination::DrawAdjudication | Termination::MaxPlies
        )
    }
}

/// The result of one game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameOutcome {
    /// White's point of view.
    pub result: GameResult,
    /// Why the game ended.
    pub termination: Termination,
    /// Plies played from the input position (0: decided as given).
    pub plies: u32,
}

/// A move chosen by a player.
#[derive(Clone, Debug)]
pub struct Choice {
    /// The move to play (legal in the current position).
    pub best_move: Move,
    /// The search score, side to move's view, when the player reports one.
    pub score: Option<i32>,
    /// The depth the search reached, when the player reports it.
    pub depth: Option<u32>,
}

/// A game in progress, as players see it.
#[derive(Clone, Debug)]
pub struct GameRecord {
    /// The input position.
    pub start: Chess,
    /// Moves played from `start`.
    pub moves: Vec<Move>,
    /// The current position.
    pub position: Chess,
    /// Keys of every position of the game, `start` first, current last.
    pub keys: Vec<u64>,
}

impl GameRecord {
    /// A game starting at `start`.
    pub fn new(start: Chess) -> Self {
        GameRecord {
            keys: vec![key(&start)],
            position: start.clone(),
            start,
            moves: Vec::new(),
        }
    }

    /// Keys of the earlier positions (current excluded), as the search wants.
    pub fn history_keys(&self) -> &[u64] {
        &self.keys[..self.keys.len() - 1]
    }

    /// Plays `m`, which must be legal in the current position.
    pub fn play(&mut self, m: Move) {
        let before = self.position.clone();
        self.position.play_unchecked(m);
        let before_key = *self.keys.last().expect("a game has a start key");
        self.keys
            .push(key_after(&before, before_key, &m, &self.position));
        self.moves.push(m);
    }

    /// Plies played from `start`.
    pub fn plies(&self) -> u32 {
        self.moves.len() as u32
    }
}

/// The result of `position` if the rules end the game there, judged on the
/// game's keys (`keys.last()` is `position`).
pub fn rules_outcome(position: &Chess, keys: &[u64]) -> Option<(GameResult, Termination)> {
    if position.legal_moves().is_empty() {
        return Some(if position.is_check() {
            (
                GameResult::win_for(!position.turn()),
                Termination::Checkmate,
            )
        } else {
            (GameResult::Draw, Termination::Stalemate)
        });
    }
    if position.is_insufficient_material() {
        return Some((GameResult::Draw, Termination::InsufficientMaterial));
    }
    if position.halfmoves() >= FIFTY_MOVE_HALFMOVES {
        return Some((GameResult::Draw, Termination::FiftyMoveRule));
    }
    if let Some(&current) = keys.last() {
        let occurrences = keys.iter().filter(|&&k| k == current).count();
        if occurrences >= REPETITION_DRAW_COUNT {
            return Some((GameResult::Draw, Termination::Repetition));
        }
    }
    None
}

/// The outcome of a position the rules already decide as given (no game
/// to play), with `plies` 0.
pub fn decided_outcome(position: &Chess) -> Option<GameOutcome> {
    rules_outcome(position, &[key(position)]).map(|(result, termination)| GameOutcome {
        result,
        termination,
        plies: 0,
    })
}

/// Running state of the adjudication rules.
#[derive(Clone, Debug, Default)]
pub struct Adjudicator {
    white_winning_plies: u32,
    black_winning_plies: u32,
    drawish_plies: u32,
}

impl Adjudicator {
    /// Feeds the score (side to move's view, when known) of the search made
    /// at ply `ply` by `mover`; returns the adjudicated outcome, if any.
    pub fn observe(
        &mut self,
        rules: &GameRules,
        ply: u32,
        mover: Color,
        score: Option<i32>,
    ) -> Option<(GameResult, Termination)> {
        let Some(score) = score else {
            *self = Adjudicator::default();
            return None;
        };
        let white_score = score * color_sign(mover);
        if let Some(resign) = rules.resign {
            if white_score >= resign.score {
                self.white_winning_plies += 1;
                self.black_winning_plies = 0;
            } else if white_score <= -resign.score {
                self.black_winning_plies += 1;
                self.white_winning_plies = 0;
            } else {
                self.white_winning_plies = 0;
                self.black_winning_plies = 0;
            }
            let needed = resign.moves * PLIES_PER_MOVE;
            if self.white_winning_plies >= needed {
                return Some((GameResult::WhiteWin, Termination::ResignAdjudication));
            }
            if self.black_winning_plies >= needed {
                return Some((GameResult::BlackWin, Termination::ResignAdjudication));
            }
        }
        if let Some(draw) = rules.draw {
            if ply >= draw.after_ply && white_score.abs() <= draw.score {
                self.drawish_plies += 1;
            } else {
                self.drawish_plies = 0;
            }
            if self.drawish_plies >= draw.moves * PLIES_PER_MOVE {
                return Some((GameResult::Draw, Termination::DrawAdjudication));
            }
        }
        None
    }
}

/// Plays `game` on to its end: `choose` is asked for a move in every
/// position that is not over (it sees the record so far, the side to move is
/// `game.position.turn()`), the move is played and the game judged by the
/// rules, then by adjudication on the reported score. The record keeps every
/// move played, also when `choose` fails.
///
/// # Errors
/// The first error of `choose`, unchanged.
pub fn play_out<E>(
    game: &mut GameRecord,
    rules: &GameRules,
    mut choose: impl FnMut(&GameRecord) -> Result<Choice, E>,
) -> Result<GameOutcome, E> {
    if let Some((result, termination)) = rules_outcome(&game.position, &game.keys) {
        return Ok(GameOutcome {
            result,
            termination,
            plies: game.plies(),
        });
    }
    let mut adjudicator = Adjudicator::default();
    loop {
        if rules.max_plies.is_some_and(|max| game.plies() >= max) {
            return Ok(GameOutcome {
                result: GameResult::Draw,
                termination: Termination::MaxPlies,
                plies: game.plies(),
            });
        }
        let choice = choose(game)?;
        let ply = game.plies();
        let mover = game.position.turn();
        game.play(choice.best_move);
        if let Some((result, termination)) = rules_outcome(&game.position, &game.keys) {
            return Ok(GameOutcome {
                result,
                termination,
                plies: game.plies(),
            });
        }
        if let Some((result, termination)) = adjudicator.observe(rules, ply, mover, choice.score) {
            return Ok(GameOutcome {
                result,
                termination,
                plies: game.plies(),
            });
        }
    }
}
