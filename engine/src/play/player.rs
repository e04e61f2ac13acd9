//! Who chooses the moves: the [`Player`] interface of the game loop and its
//! in-process implementation, the engine library's [`Searcher`] (one search
//! thread, fresh tables for every game). The external implementation is
//! [`crate::play::uci_client::UciPlayer`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use shakmaty::{Chess, Position};

use crate::eval::Params;
use crate::play::game::{
    Choice, GameOutcome, GameRecord, GameRules, SearchBudget, decided_outcome, play_out,
};
use crate::search::{SearchParams, Searcher};

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

    /// Replaces the search parameters.
    pub fn set_search_params(&mut self, search: SearchParams) {
        self.searcher.set_search_params(search);
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
            depth: Some(result.depth),
        })
    }
}

/// Why a game produced no outcome.
#[derive(Debug, thiserror::Error)]
pub enum GameError {
    /// The run is being interrupted; the game is abandoned, not failed.
    #[error("interrupted")]
    Interrupted,
    /// The player failed (engine crash, hang, illegal move, …).
    #[error(transparent)]
    Player(#[from] PlayerError),
}

/// Plays a game from `start` with `player` on both sides, every search under
/// `rules.budget`. The player's `new_game` is called first, so every game
/// starts with fresh tables.
///
/// # Errors
/// [`GameError::Interrupted`] when `interrupt` is set during the game,
/// [`GameError::Player`] when the player fails.
pub fn play_game(
    player: &mut dyn Player,
    start: &Chess,
    rules: &GameRules,
    interrupt: &AtomicBool,
) -> Result<GameOutcome, GameError> {
    if let Some(outcome) = decided_outcome(start) {
        return Ok(outcome);
    }
    play_on(
        player,
        &mut GameRecord::new(start.clone()),
        rules,
        interrupt,
        |_, _| {},
    )
}

/// Plays `game` on from its current position to its end with `player` on
/// both sides, as [`play_game`] does, and shows `observe` every move chosen
/// together with the record before it is played (so `game.position` is the
/// position searched). The record keeps the moves that came before
/// (an opening, random moves), so repetitions count across them.
///
/// # Errors
/// As [`play_game`].
pub fn play_on(
    player: &mut dyn Player,
    game: &mut GameRecord,
    rules: &GameRules,
    interrupt: &AtomicBool,
    mut observe: impl FnMut(&GameRecord, &Choice),
) -> Result<GameOutcome, GameError> {
    player.new_game()?;
    play_out(game, rules, |game| {
        let choice = player.choose_move(game, rules.budget);
        if interrupt.load(Ordering::Relaxed) {
            return Err(GameError::Interrupted);
        }
        let choice = choice?;
        observe(game, &choice);
        Ok(choice)
    })
}
