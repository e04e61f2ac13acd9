//! One self-play game from start to kept positions: the start is drawn
//! ([`crate::selfplay::start`]), the game is played by the engine library's
//! game loop ([`engine::play::player::play_on`]: rules, adjudication,
//! fresh tables) with one player on both sides, and every searched
//! position is judged ([`crate::selfplay::selection`]) as it is played.
//! The kept positions get the game's result once it is over.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use engine::formats::labeled::LabeledPosition;
use engine::play::game::{GameOutcome, GameRules};
use engine::play::openings::OpeningSource;
use engine::play::player::{GameError, Player, PlayerError, play_on};

use crate::selfplay::selection::{DropReason, judge};
use crate::selfplay::start::{Rejections, StartError, StartRules, draw_start, game_rng};

/// How the games of a run are made.
#[derive(Debug)]
pub struct GameSettings {
    /// Where games start before the random plies.
    pub openings: OpeningSource,
    /// The random plies and the start check.
    pub start: StartRules,
    /// Budget and adjudication of the game's moves.
    pub rules: GameRules,
    /// Largest absolute score of a kept position.
    pub max_score: i32,
    /// The run's seed.
    pub seed: u64,
}

/// What one game gave.
#[derive(Clone, Debug)]
pub struct GameData {
    /// Kept positions in the order played, each with score and result.
    pub kept: Vec<LabeledPosition>,
    /// How the game ended.
    pub outcome: GameOutcome,
    /// Moves the engine played (after the opening and the random plies).
    pub played_plies: u32,
    /// Searched positions not kept, by reason.
    pub dropped: BTreeMap<DropReason, u64>,
    /// Start draws rejected before the game's start.
    pub rejected_starts: Rejections,
}

/// Why a game produced no data.
#[derive(Debug, thiserror::Error)]
pub enum SelfplayError {
    /// The run is being interrupted; the game is abandoned, not failed.
    #[error("interrupted")]
    Interrupted,
    /// The player failed (engine crash, hang, illegal move, …).
    #[error(transparent)]
    Player(#[from] PlayerError),
    /// No start could be found (a setting error: it stops the run).
    #[error("{0}")]
    NoStart(StartError),
}

impl From<StartError> for SelfplayError {
    fn from(e: StartError) -> Self {
        match e {
            StartError::Interrupted => SelfplayError::Interrupted,
            StartError::Player(e) => SelfplayError::Player(e),
            other => SelfplayError::NoStart(other),
        }
    }
}

impl From<GameError> for SelfplayError {
    fn from(e: GameError) -> Self {
        match e {
            GameError::Interrupted => SelfplayError::Interrupted,
            GameError::Player(e) => SelfplayError::Player(e),
        }
    }
}

/// Plays game `index` of the run with `player`.
///
/// # Errors
/// See [`SelfplayError`].
pub fn play_selfplay_game(
    player: &mut dyn Player,
    settings: &GameSettings,
    index: u64,
    interrupt: &AtomicBool,
) -> Result<GameData, SelfplayError> {
    let mut rng = game_rng(settings.seed, index);
    let start = draw_start(
        player,
        &settings.openings,
        &settings.start,
        &mut rng,
        interrupt,
    )?;
    let mut game = start.game;
    let start_plies = game.plies();
    let mut kept = Vec::new();
    let mut dropped = BTreeMap::new();
    let outcome = play_on(
        player,
        &mut game,
        &settings.rules,
        interrupt,
        |record, choice| match judge(&record.position, choice, settings.max_score) {
            Ok(score) => kept.push(LabeledPosition {
                position: record.position.clone(),
                result: None,
                score: Some(score),
            }),
            Err(reason) => *dropped.entry(reason).or_default() += 1,
        },
    )?;
    for position in &mut kept {
        position.result = Some(outcome.result);
    }
    Ok(GameData {
        kept,
        outcome,
        played_plies: outcome.plies - start_plies,
        dropped,
        rejected_starts: start.rejected,
    })
}
