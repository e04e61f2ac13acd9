//! What a self-play run did: games and their endings, positions kept and
//! dropped by reason, start draws, failures; the report printed at the end
//! and the same figures as JSON for `--summary`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use engine::play::game::Termination;
use engine::runtime::summary::{Status, Summary};

use crate::selfplay::SelfplaySettings;
use crate::selfplay::game::GameData;
use crate::selfplay::output::FailedGame;
use crate::selfplay::selection::DropReason;
use crate::selfplay::start::Rejections;
use crate::summary::{result_distribution, result_slot, write_endings, write_results_line};

/// Failed games listed in the report at most.
const MAX_LISTED_FAILURES: usize = 20;

/// Running counts of one run (this run's games; earlier runs only as
/// `resumed_games` and failures).
#[derive(Clone, Debug, Default)]
pub struct SelfplayStats {
    /// Games of the range finished by earlier runs.
    pub resumed_games: u64,
    /// Games the range holds.
    pub range_games: u64,
    /// Games played to their end by this run.
    pub games: u64,
    /// Positions written.
    pub kept: u64,
    /// Searched positions not written, by reason.
    pub dropped: BTreeMap<DropReason, u64>,
    /// Games won by White, drawn, won by Black.
    pub results: [u64; 3],
    /// Game endings by kind.
    pub terminations: BTreeMap<Termination, u64>,
    /// Moves played by the engine (after the random plies).
    pub played_plies: u64,
    /// Start draws rejected.
    pub rejected_starts: Rejections,
    /// Games that failed for good, earlier runs included.
    pub failures: Vec<FailedGame>,
}

impl SelfplayStats {
    /// Counts a finished game.
    pub fn record(&mut self, game: &GameData) {
        self.games += 1;
        self.kept += game.kept.len() as u64;
        for (reason, n) in &game.dropped {
            *self.dropped.entry(*reason).or_default() += n;
        }
        self.results[result_slot(game.outcome.result)] += 1;
        *self
            .terminations
            .entry(game.outcome.termination)
            .or_default() += 1;
        self.played_plies += u64::from(game.played_plies);
        self.rejected_starts.add(game.rejected_starts);
    }

    /// Searched positions not written.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.values().sum()
    }

    /// Average engine moves per game.
    pub fn average_plies(&self) -> f64 {
        self.played_plies as f64 / self.games.max(1) as f64
    }

    /// Average positions written per game.
    pub fn positions_per_game(&self) -> f64 {
        self.kept as f64 / self.games.max(1) as f64
    }

    /// `W/D/L` percentages for the progress bar.
    pub fn distribution(&self) -> String {
        let total = self.games.max(1) as f64;
        result_distribution(&self.results, total)
    }

    /// The end-of-run report.
    pub fn report(&self, elapsed: Duration, interrupted: bool) -> String {
        let mut out = String::new();
        let seconds = elapsed.as_secs_f64().max(f64::EPSILON);
        let _ = writeln!(
            out,
            "labeler selfplay: {} games, {} positions kept in {:.1} s ({:.2} games/s, {:.0} positions/s){}",
            self.games,
            self.kept,
            seconds,
            self.games as f64 / seconds,
            self.kept as f64 / seconds,
            if interrupted {
                " — interrupted; rerun the same command to continue"
            } else {
                ""
            }
        );
        if self.resumed_games > 0 {
            let _ = writeln!(
                out,
                "  resumed: {} of {} games were done by earlier runs",
                self.resumed_games, self.range_games
            );
        }
        let searched = self.kept + self.dropped_total();
        let _ = writeln!(
            out,
            "  average game length {:.1} plies (after the start), {:.1} positions kept per game ({:.1}% of the {searched} searched)",
            self.average_plies(),
            self.positions_per_game(),
            100.0 * self.kept as f64 / searched.max(1) as f64
        );
        let _ = writeln!(out, "  dropped positions: {}", self.dropped_total());
        for reason in DropReason::ALL {
            let _ = writeln!(
                out,
                "    {:<34}{}",
                reason.name(),
                self.dropped.get(&reason).copied().unwrap_or(0)
            );
        }
        let total = self.games.max(1) as f64;
        write_results_line(&mut out, &self.results, total);
        write_endings(&mut out, &self.terminations, 34);
        let _ = writeln!(
            out,
            "  start draws rejected: {} ({} ended during the random plies, {} beyond --max-start-score)",
            self.rejected_starts.total(),
            self.rejected_starts.game_over,
            self.rejected_starts.score
        );
        let _ = writeln!(
            out,
            "  failed games (engine failed after all retries; nothing written): {}",
            self.failures.len()
        );
        for failure in self.failures.iter().take(MAX_LISTED_FAILURES) {
            let _ = writeln!(out, "    game {}: {}", failure.game, failure.reason);
        }
        if self.failures.len() > MAX_LISTED_FAILURES {
            let _ = writeln!(
                out,
                "    … {} more (listed in OUTPUT.progress)",
                self.failures.len() - MAX_LISTED_FAILURES
            );
        }
        out
    }

    /// The JSON summary (`--summary`): counts of games and positions,
    /// positions dropped and start draws rejected by reason, rates, results
    /// and endings.
    pub fn summary(
        &self,
        settings: &SelfplaySettings,
        elapsed: Duration,
        interrupted: bool,
    ) -> Summary {
        let mut summary = Summary::new("labeler selfplay", env!("CARGO_PKG_VERSION"));
        if interrupted {
            summary.status = Status::Interrupted;
        }
        summary
            .inputs
            .extend(settings.openings_path.iter().cloned());
        summary.output = Some(settings.output.clone());
        summary
            .count("games", self.games)
            .count("games_in_range", self.range_games)
            .count("games_resumed", self.resumed_games)
            .count("games_failed", self.failures.len() as u64)
            .count("positions_kept", self.kept)
            .count("positions_searched", self.kept + self.dropped_total())
            .count("plies_played", self.played_plies)
            .count("white_wins", self.results[0])
            .count("draws", self.results[1])
            .count("black_wins", self.results[2]);
        for reason in DropReason::ALL {
            summary.skip(
                reason.key(),
                self.dropped.get(&reason).copied().unwrap_or(0),
            );
        }
        summary
            .skip("starts_game_over", self.rejected_starts.game_over)
            .skip("starts_beyond_max_start_score", self.rejected_starts.score)
            .timing("total_seconds", elapsed)
            .rate("games_per_second", self.games as f64, elapsed)
            .rate("positions_per_second", self.kept as f64, elapsed)
            .figure("positions_per_game", self.positions_per_game())
            .figure("average_plies", self.average_plies())
            .figure("format", settings.format.name())
            .figure("first_game", settings.range.start)
            .figure("seed", settings.games.seed);
        let endings: serde_json::Map<String, serde_json::Value> = Termination::ALL
            .iter()
            .map(|kind| {
                let n = self.terminations.get(kind).copied().unwrap_or(0);
                (kind.name().replace(['-', ' '], "_"), n.into())
            })
            .collect();
        summary.figure("endings", serde_json::Value::Object(endings));
        summary
    }
}
