//! Where a self-play game starts: an opening from `--openings` (the reader
//! `engine match` uses; the standard position without it), then
//! `--random-plies` uniformly random legal moves, then a short search of
//! the start; a start that the random moves end (mate, stalemate, a draw
//! by rule) or whose score is beyond `--max-start-score` is drawn again.
//!
//! Every random choice comes from the game's own generator ([`game_rng`]),
//! seeded by the run's seed and the game's index only, so a game is the
//! same whichever thread plays it and whichever games are played with it.
//! A start that cannot be found in [`MAX_START_DRAWS`] draws is an error
//! naming why the draws failed, never an endless loop.

use std::sync::atomic::{AtomicBool, Ordering};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::Position;

use engine::play::game::{GameRecord, SearchBudget, rules_outcome};
use engine::play::openings::{OpeningOrder, OpeningSource};
use engine::play::player::{Player, PlayerError};
use engine::search::MATE_BOUND;

/// Draws of a start before a game gives up with an error.
pub const MAX_START_DRAWS: u32 = 1000;

/// How starts are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StartRules {
    /// Uniformly random legal moves played after the opening.
    pub random_plies: u32,
    /// Largest absolute score (side to move, centipawns) of the start's
    /// short search; `None` checks nothing (and searches nothing).
    pub max_start_score: Option<i32>,
    /// Budget of that search.
    pub budget: SearchBudget,
}

impl StartRules {
    /// A short stable description for the run identity.
    pub fn describe(&self) -> String {
        format!(
            "random-plies={} max-start-score={} start-search={}",
            self.random_plies,
            self.max_start_score
                .map_or("off".to_string(), |s| s.to_string()),
            self.budget.describe()
        )
    }
}

/// A start found, with what finding it took.
#[derive(Debug)]
pub struct Start {
    /// The game so far: opening moves and random plies.
    pub game: GameRecord,
    /// Draws rejected before this one, by reason.
    pub rejected: Rejections,
}

/// Rejected draws by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rejections {
    /// The random moves ended the game (or left it decided).
    pub game_over: u64,
    /// The start's search score was beyond `--max-start-score`.
    pub score: u64,
}

impl Rejections {
    /// Adds another count.
    pub fn add(&mut self, other: Rejections) {
        self.game_over += other.game_over;
        self.score += other.score;
    }

    /// Rejected draws in all.
    pub fn total(&self) -> u64 {
        self.game_over + self.score
    }
}

/// Why no start was found.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Every draw was rejected.
    #[error(
        "no playable start in {MAX_START_DRAWS} draws: {} ended or were decided during the \
         {random_plies} random plies, {} scored beyond --max-start-score {}; use fewer \
         --random-plies, a larger --max-start-score or other --openings",
        rejected.game_over,
        rejected.score,
        max_start_score.map_or("(off)".to_string(), |s| s.to_string())
    )]
    NoStart {
        /// Why the draws failed.
        rejected: Rejections,
        /// The rule in force.
        random_plies: u32,
        /// The rule in force.
        max_start_score: Option<i32>,
    },
    /// The player failed during the start's search.
    #[error(transparent)]
    Player(#[from] PlayerError),
    /// The run is being interrupted.
    #[error("interrupted")]
    Interrupted,
}

/// The generator of game `index` of a run with `seed`: its bytes are the
/// seed and the index, nothing else.
pub fn game_rng(seed: u64, index: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&index.to_le_bytes());
    ChaCha8Rng::from_seed(key)
}

/// Draws the start of a game with `rng` (see the module documentation);
/// `player` runs the start searches (with fresh tables each time).
///
/// # Errors
/// [`StartError::NoStart`] after [`MAX_START_DRAWS`] rejected draws,
/// [`StartError::Player`] when the player fails, [`StartError::Interrupted`]
/// when `interrupt` is set.
pub fn draw_start(
    player: &mut dyn Player,
    openings: &OpeningSource,
    rules: &StartRules,
    rng: &mut ChaCha8Rng,
    interrupt: &AtomicBool,
) -> Result<Start, StartError> {
    let mut rejected = Rejections::default();
    for _ in 0..MAX_START_DRAWS {
        if interrupt.load(Ordering::Relaxed) {
            return Err(StartError::Interrupted);
        }
        let slot = rng.random::<u32>() as usize;
        let opening = openings.for_slot(slot, rng.random(), OpeningOrder::Sequential);
        let mut game = opening.record();
        let mut over = false;
        for _ in 0..rules.random_plies {
            let moves = game.position.legal_moves();
            if moves.is_empty() {
                over = true;
                break;
            }
            game.play(moves[rng.random_range(0..moves.len())]);
            if rules_outcome(&game.position, &game.keys).is_some() {
                over = true;
                break;
            }
        }
        if over || rules_outcome(&game.position, &game.keys).is_some() {
            rejected.game_over += 1;
            continue;
        }
        if let Some(limit) = rules.max_start_score {
            player.new_game()?;
            let score = player.choose_move(&game, rules.budget)?.score;
            // A player that reports no score cannot be checked: accept.
            if score.is_some_and(|s| s.abs() > limit || s.abs() >= MATE_BOUND) {
                rejected.score += 1;
                continue;
            }
        }
        return Ok(Start { game, rejected });
    }
    Err(StartError::NoStart {
        rejected,
        random_plies: rules.random_plies,
        max_start_score: rules.max_start_score,
    })
}
