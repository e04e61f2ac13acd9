//! What a run did: counts of results, game endings and adjudications, game
//! lengths, scored positions, bad lines and failed positions, and the
//! end-of-run report. A `--score-only` run plays no game: its report and
//! JSON summary count the positions scored and leave results and endings
//! out.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use engine::formats::labeled::{GameResult, RecordError};
use engine::runtime::summary::{Status, Summary};

use crate::resume::FailedJob;
use engine::play::game::{GameOutcome, Termination};

/// At most this many bad lines (and failed positions) are listed in the
/// report (all of them go to the rejects file).
pub const MAX_LISTED_REJECTS: usize = 20;

/// Running counts of one run.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// The run only scores positions (`--score-only`): no games, no results.
    pub score_only: bool,
    /// Jobs finished by earlier runs and skipped.
    pub resumed_jobs: u64,
    /// Positions labeled by this run.
    pub labeled: u64,
    /// Positions written with a search score, `ce` (this run).
    pub scored: u64,
    /// White wins, draws, black wins (this run).
    pub results: [u64; 3],
    /// Game endings by kind (this run).
    pub terminations: BTreeMap<Termination, u64>,
    /// Positions decided as given (no move played).
    pub decided_at_input: u64,
    /// Plies of the games actually played.
    pub plies: u64,
    /// Games actually played (at least one move).
    pub games: u64,
    /// Bad input lines seen (this shard).
    pub rejected: u64,
    /// The first [`MAX_LISTED_REJECTS`] bad lines.
    pub listed_rejects: Vec<RecordError>,
    /// Positions that failed for good, earlier runs included.
    pub failures: Vec<FailedJob>,
}

/// Index of a result in a `[1-0, draw, 0-1]` count array such as
/// [`RunStats::results`].
pub(crate) fn result_slot(result: GameResult) -> usize {
    match result {
        GameResult::WhiteWin => 0,
        GameResult::Draw => 1,
        GameResult::BlackWin => 2,
    }
}

/// `W/D/L` percentages of `results` out of `total`, for a progress line.
pub(crate) fn result_distribution(results: &[u64; 3], total: f64) -> String {
    let pct = |n: u64| 100.0 * n as f64 / total;
    format!(
        "1-0 {:.0}% ½ {:.0}% 0-1 {:.0}%",
        pct(results[0]),
        pct(results[1]),
        pct(results[2])
    )
}

/// The report's `results:` line (counts and percentages out of `total`).
pub(crate) fn write_results_line(out: &mut String, results: &[u64; 3], total: f64) {
    let _ = writeln!(
        out,
        "  results: 1-0 {} ({:.1}%), 1/2-1/2 {} ({:.1}%), 0-1 {} ({:.1}%)",
        results[0],
        100.0 * results[0] as f64 / total,
        results[1],
        100.0 * results[1] as f64 / total,
        results[2],
        100.0 * results[2] as f64 / total,
    );
}

/// The report's `endings:` lines: the count of every kind of ending, its
/// name padded to `width`, adjudications marked.
pub(crate) fn write_endings(
    out: &mut String,
    terminations: &BTreeMap<Termination, u64>,
    width: usize,
) {
    let _ = writeln!(out, "  endings:");
    for kind in Termination::ALL {
        let n = terminations.get(&kind).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "    {:<width$}{n}{}",
            kind.name(),
            if kind.is_adjudication() {
                " (adjudicated)"
            } else {
                ""
            }
        );
    }
}

impl RunStats {
    /// Counts a labeled position: the outcome of its game (`None` with
    /// `--score-only`), and whether its line has a score.
    pub fn record_labeled(&mut self, outcome: Option<&GameOutcome>, scored: bool) {
        self.labeled += 1;
        self.scored += u64::from(scored);
        let Some(outcome) = outcome else {
            return;
        };
        self.results[result_slot(outcome.result)] += 1;
        *self.terminations.entry(outcome.termination).or_default() += 1;
        if outcome.plies == 0 {
            self.decided_at_input += 1;
        } else {
            self.games += 1;
            self.plies += u64::from(outcome.plies);
        }
    }

    /// Counts a bad input line.
    pub fn record_reject(&mut self, error: &RecordError) {
        self.rejected += 1;
        if self.listed_rejects.len() < MAX_LISTED_REJECTS {
            self.listed_rejects.push(error.clone());
        }
    }

    /// Average length of the games played, in plies.
    pub fn average_plies(&self) -> f64 {
        if self.games == 0 {
            0.0
        } else {
            self.plies as f64 / self.games as f64
        }
    }

    /// `W/D/L` percentages for the progress line.
    pub fn distribution(&self) -> String {
        let total = self.labeled.max(1) as f64;
        result_distribution(&self.results, total)
    }

    /// The machine-readable summary of a labeling run (`--summary FILE`):
    /// the counts of [`RunStats::report`] by name (with `--score-only`, no
    /// results, games or endings).
    pub fn json_summary(&self, elapsed: Duration, interrupted: bool) -> Summary {
        let mut json = Summary::new("labeler", env!("CARGO_PKG_VERSION"));
        if interrupted {
            json.status = Status::Interrupted;
        }
        json.count("labeled", self.labeled)
            .count("resumed", self.resumed_jobs)
            .count("scored", self.scored)
            .skip("rejected_lines", self.rejected)
            .skip("failed_positions", self.failures.len() as u64)
            .timing("total_seconds", elapsed)
            .rate("positions_per_second", self.labeled as f64, elapsed)
            .figure("score_only", self.score_only);
        if self.score_only {
            return json;
        }
        json.count("white_wins", self.results[0])
            .count("draws", self.results[1])
            .count("black_wins", self.results[2])
            .count("games_played", self.games)
            .count("plies_played", self.plies)
            .count("decided_as_given", self.decided_at_input)
            .figure("average_plies", self.average_plies());
        let endings: BTreeMap<String, u64> = Termination::ALL
            .iter()
            .map(|kind| {
                let n = self.terminations.get(kind).copied().unwrap_or(0);
                (kind.name().replace([' ', '-'], "_"), n)
            })
            .collect();
        json.figure(
            "endings",
            serde_json::to_value(endings).unwrap_or(serde_json::Value::Null),
        );
        json
    }

    /// The end-of-run report.
    pub fn report(&self, elapsed: Duration, interrupted: bool) -> String {
        let mut out = String::new();
        let seconds = elapsed.as_secs_f64().max(f64::EPSILON);
        let _ = writeln!(
            out,
            "labeler: {} positions {} in {:.1} s ({:.2} positions/s){}",
            self.labeled,
            if self.score_only {
                "scored (--score-only: no games)"
            } else {
                "labeled"
            },
            seconds,
            self.labeled as f64 / seconds,
            if interrupted {
                " — interrupted; rerun the same command to continue"
            } else {
                ""
            }
        );
        if self.resumed_jobs > 0 {
            let _ = writeln!(
                out,
                "  resumed: {} positions were done by earlier runs and skipped",
                self.resumed_jobs
            );
        }
        if self.score_only {
            let _ = writeln!(out, "  scored: {} (ce, no c9)", self.scored);
        } else {
            self.write_games(&mut out);
        }
        let _ = writeln!(out, "  rejected input lines: {}", self.rejected);
        for error in &self.listed_rejects {
            let _ = writeln!(out, "    {error}");
        }
        if self.rejected > self.listed_rejects.len() as u64 {
            let _ = writeln!(
                out,
                "    … {} more (use --rejects FILE for the full list)",
                self.rejected - self.listed_rejects.len() as u64
            );
        }
        let _ = writeln!(
            out,
            "  failed positions ({}; not in the output): {}",
            if self.score_only {
                "engine failed after all retries, or gave no score"
            } else {
                "engine failed after all retries"
            },
            self.failures.len()
        );
        for failure in self.failures.iter().take(MAX_LISTED_REJECTS) {
            let _ = writeln!(
                out,
                "    {}: {} ({})",
                failure.location, failure.reason, failure.fen
            );
        }
        if self.failures.len() > MAX_LISTED_REJECTS {
            let _ = writeln!(
                out,
                "    … {} more (use --rejects FILE for the full list)",
                self.failures.len() - MAX_LISTED_REJECTS
            );
        }
        out
    }

    /// The report's lines about the games: results, lengths, endings.
    fn write_games(&self, out: &mut String) {
        let total = self.labeled.max(1) as f64;
        write_results_line(out, &self.results, total);
        if self.scored > 0 {
            let _ = writeln!(out, "  scored: {} (ce)", self.scored);
        }
        let _ = writeln!(
            out,
            "  games played: {}, average length {:.1} plies; decided as given: {}",
            self.games,
            self.average_plies(),
            self.decided_at_input
        );
        write_endings(out, &self.terminations, 24);
    }
}
