//! Who chooses the moves: the [`Player`] interface of the game loop and its
//! in-process implementation, the engine library's [`Searcher`] (one per
//! worker thread, one search thread, fresh tables for every game).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use engine::eval::Params;
use engine::search::Searcher;
use shakmaty::Move;

use crate::game::{GameRecord, SearchBudget};

/// Transposition table size of an in-process searcher. A game's searches
/// visit a few hundred thousand nodes at most at the intended budgets, and
/// the table is cleared before every game, so a small table is both enough
/// and cheap to clear.
pub const IN_PROCESS_HASH_MB: usize = 2;

/// A move chosen by a player.
#[derive(Clone, Debug)]
pub struct Choice {
    /// The move to play (legal in the current position).
    pub best_move: Move,
    /// The search score, side to move's view, when the player reports one.
    pub score: Option<i32>,
}

/// Why a player could not provide a move.
#[derive(Debug, thiserror::Error)]
pub enum PlayerError {
    /// The external engine did not answer in time.
    #[error("engine timed out after {0:?} waiting for {1}")]
    Timeout(std::time::Duration, &'static str),
    /// The external engine exited or closed its output.
    #[error("engine exited or closed its output while waiting for {0}")]
    Exited(&'static str),
    /// The engine could not be started or written to.
    #[error("engine I/O: {0}")]
    Io(String),
    /// The engine answered something unusable (illegal move, no move, …).
    #[error("engine protocol: {0}")]
    Protocol(String),
}

/// Chooses moves for both sides of a game.
pub trait Player {
    /// Forgets everything learnt: called before every game.
    ///
    /// # Errors
    /// When the player is an engine that failed.
    fn new_game(&mut self) -> Result<(), PlayerError>;

    /// Chooses a move in `game.position` (which has legal moves).
    ///
    /// # Errors
    /// When the player is an engine that failed.
    fn choose_move(
        &mut self,
        game: &GameRecord,
        budget: SearchBudget,
    ) -> Result<Choice, PlayerError>;
}

/// The engine library playing in this process.
pub struct InProcessPlayer {
    searcher: Searcher,
}

impl InProcessPlayer {
    /// A one-thread searcher with the default evaluation.
    pub fn new() -> Self {
        InProcessPlayer {
            searcher: Searcher::new(Arc::new(Params::defaults()), IN_PROCESS_HASH_MB),
        }
    }

    /// The flag that aborts this player's running search.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.searcher.stop_flag()
    }
}

impl Default for InProcessPlayer {
    fn default() -> Self {
        Self::new()
    }
}

impl Player for InProcessPlayer {
    fn new_game(&mut self) -> Result<(), PlayerError> {
        self.searcher.new_game();
        Ok(())
    }

    fn choose_move(
        &mut self,
        game: &GameRecord,
        budget: SearchBudget,
    ) -> Result<Choice, PlayerError> {
        let result = self.searcher.search(
            &game.position,
            game.history_keys(),
            &budget.limits(),
            |_| {},
        );
        let best_move = result
            .best_move
            .ok_or_else(|| PlayerError::Protocol("search returned no move".into()))?;
        Ok(Choice {
            best_move,
            score: Some(result.score),
        })
    }
}
