//! The games of an SPSA iteration, played by the engine library's match
//! runner ([`engine::play::match_runner`]): game pairs of one UCI engine
//! with the values `θ + δc` against the same engine with `θ - δc`, each
//! opening with both colours. Iteration `k` (1-based) plays the games
//! `2P(k-1) … 2Pk - 1` of one long match, so the openings move on from
//! iteration to iteration and a resumed run plays what an uninterrupted one
//! would.
//!
//! A pair in which an engine crashed or hung (the match runner restarts the
//! engine and scores a forfeit) does not measure the parameters: it is
//! played again, up to [`MAX_ATTEMPTS`] times, and counted as replayed.
//! Illegal moves and time losses are the parameters' doing and count.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use engine::play::elo::Record;
use engine::play::match_runner::{
    Contestant, ForfeitReason, GameEnd, GameReport, MatchError, MatchSettings, PlayerKind, Side,
    run_match,
};
use engine::play::uci_client::EngineSpec;

/// Attempts per game pair before the run gives up on a failing engine.
pub const MAX_ATTEMPTS: usize = 3;
/// Games per pair.
const PAIR: usize = 2;

/// What one iteration's games gave.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IterationGames {
    /// The first player's (`θ + δc`) record.
    pub record: Record,
    /// Pairs played again after an engine failure.
    pub replayed: u64,
    /// What failed, for the report.
    pub failures: Vec<String>,
}

/// Why an iteration's games did not complete.
#[derive(Debug, thiserror::Error)]
pub enum GamesError {
    /// Ctrl-C: the iteration is abandoned.
    #[error("interrupted")]
    Interrupted,
    /// The engine could not be started, or keeps failing.
    #[error("{0}")]
    Engine(String),
}

/// How the games are played (everything but the tuned values).
pub struct GameSetup {
    /// The engine command line.
    pub command: String,
    /// Options sent to both players before the tuned ones.
    pub fixed_options: Vec<(String, String)>,
    /// Names of the tuned options.
    pub names: Vec<String>,
    /// Seconds an engine may take to answer, on top of its thinking time.
    pub timeout: std::time::Duration,
    /// Game pairs per iteration.
    pub pairs: usize,
    /// Openings, limits, adjudication, concurrency and seed of the games;
    /// its players, games and first game are set for each batch.
    pub settings: MatchSettings,
}

impl GameSetup {
    fn player(&self, name: &str, values: &[i32]) -> Contestant {
        let mut options = self.fixed_options.clone();
        options.extend(
            self.names
                .iter()
                .zip(values)
                .map(|(n, v)| (n.clone(), v.to_string())),
        );
        Contestant {
            name: name.to_string(),
            kind: PlayerKind::External(EngineSpec {
                command: self.command.clone(),
                options,
                timeout: self.timeout,
            }),
        }
    }

    /// Plays `games` games from game number `first_game`.
    fn play_games(
        &mut self,
        plus: &[i32],
        minus: &[i32],
        first_game: usize,
        games: usize,
        abort: &AtomicBool,
    ) -> Result<Vec<GameReport>, GamesError> {
        self.settings.players = [self.player("plus", plus), self.player("minus", minus)];
        self.settings.first_game = first_game;
        self.settings.games = games;
        self.settings.repeat = PAIR;
        self.settings.sprt = None;
        let mut reports = Vec::with_capacity(games);
        let summary = run_match(&self.settings, abort, |report, _| {
            reports.push(report.clone())
        })
        .map_err(|e| match e {
            MatchError::Start { .. } | MatchError::Settings(_) => GamesError::Engine(e.to_string()),
        })?;
        if summary.games_played < games {
            return Err(GamesError::Interrupted);
        }
        Ok(reports)
    }

    /// Plays the pairs of iteration `k` (1-based) between `plus` and
    /// `minus`, replaying pairs spoilt by a crash or hang.
    ///
    /// # Errors
    /// [`GamesError::Interrupted`] when `abort` is set;
    /// [`GamesError::Engine`] when the engine cannot start or a pair fails
    /// [`MAX_ATTEMPTS`] times.
    pub fn play_iteration(
        &mut self,
        k: usize,
        plus: &[i32],
        minus: &[i32],
        abort: &AtomicBool,
    ) -> Result<IterationGames, GamesError> {
        let first = (k - 1) * self.pairs * PAIR;
        let mut by_pair: BTreeMap<usize, Vec<GameReport>> = BTreeMap::new();
        for r in self.play_games(plus, minus, first, self.pairs * PAIR, abort)? {
            by_pair.entry(r.index / PAIR).or_default().push(r);
        }
        let mut out = IterationGames::default();
        for (pair, mut games) in by_pair {
            let mut attempts = 1;
            while let Some(failure) = games.iter().find_map(engine_failure) {
                out.failures.push(format!(
                    "iteration {k}, pair {} (attempt {attempts}): {failure}",
                    pair + 1
                ));
                if attempts >= MAX_ATTEMPTS {
                    return Err(GamesError::Engine(format!(
                        "the engine failed {MAX_ATTEMPTS} times in a row on one game pair: {failure}"
                    )));
                }
                attempts += 1;
                out.replayed += 1;
                games = self.play_games(plus, minus, pair * PAIR, PAIR, abort)?;
            }
            for g in &games {
                out.record.add(g.score_of_a());
            }
        }
        Ok(out)
    }
}

/// Why a game does not measure the parameters (crash or hang), if so.
fn engine_failure(game: &GameReport) -> Option<String> {
    match &game.end {
        GameEnd::Forfeit {
            loser,
            reason: reason @ (ForfeitReason::Crash | ForfeitReason::Hang),
            detail,
        } => Some(format!(
            "{} ({}) {}: {detail}",
            if *loser == Side::A { "plus" } else { "minus" },
            game.index + 1,
            reason.name()
        )),
        _ => None,
    }
}
