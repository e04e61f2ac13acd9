//! Who chooses the moves: the [`Player`] interface of the game loop and its
//! in-process implementation, the engine library's [`Searcher`] (one search
//! thread, fresh tables for every game). The external implementation is
//! [`crate::uci_client::UciPlayer`].

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use shakmaty::{Move, Position};

use crate::eval::Params;
use crate::game::{GameRecord, SearchBudget};
use crate::search::Searcher;

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
    /// The engine answered something unusable (no move, bad notation, …).
    #[error("engine protocol: {0}")]
    Protocol(String),
    /// The engine answered a move that is not legal in the position.
    #[error("engine protocol: {0}")]
    IllegalMove(String),
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
    /// A one-thread searcher with `params` and a `hash_mb` transposition
    /// table.
    pub fn new(params: Arc<Params>, hash_mb: usize) -> Self {
        InProcessPlayer {
            searcher: Searcher::new(params, hash_mb),
        }
    }

    /// The flag that aborts this player's running search.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.searcher.stop_flag()
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
            &budget.limits(game.position.turn()),
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
