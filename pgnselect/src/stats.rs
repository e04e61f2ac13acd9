//! The counters of a run and the summary printed at its end.
//!
//! Workers count per chunk into a [`SelectionStats`]; the merger adds the
//! chunks up and counts duplicates and positions written. The summary goes
//! to standard error so that it never mixes with output on standard output.

use std::fmt::Write as _;
use std::time::Duration;

use engine::runtime::summary::Summary;

use crate::game_filter::SkipReason;
use crate::position_filter::DropReason;

/// Bytes in a megabyte, for rates.
const BYTES_PER_MEGABYTE: f64 = 1_000_000.0;

/// Counters of games and positions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelectionStats {
    /// Games found in the input (used, skipped or malformed).
    pub games_read: u64,
    /// Games whose positions were sampled.
    pub games_used: u64,
    /// Games without a result.
    pub skipped_no_result: u64,
    /// Games with an abnormal `Termination`.
    pub skipped_termination: u64,
    /// Games below `--min-elo`.
    pub skipped_elo: u64,
    /// Games shorter than `--min-game-plies`.
    pub skipped_short: u64,
    /// Games of another variant.
    pub skipped_variant: u64,
    /// Games whose final position's search contradicts the result
    /// (`--result-check`).
    pub skipped_result: u64,
    /// Malformed games.
    pub malformed: u64,
    /// Positions sampled before the position filters.
    pub candidates: u64,
    /// Sampled positions without a legal move.
    pub dropped_game_over: u64,
    /// Sampled positions below `--min-pieces`.
    pub dropped_few_pieces: u64,
    /// Sampled positions that were not quiet.
    pub dropped_not_quiet: u64,
    /// Sampled positions beyond `--max-score`.
    pub dropped_score: u64,
    /// Sampled positions whose move's comment had no score.
    pub dropped_no_comment_score: u64,
    /// Sampled positions whose move's comment had a mate score.
    pub dropped_mate_comment_score: u64,
    /// Sampled positions whose move captured or promoted
    /// (`--comment-scores`).
    pub dropped_tactical_move: u64,
    /// Sampled positions whose comment score was beyond
    /// `--max-comment-score`.
    pub dropped_comment_score_bound: u64,
    /// Searches run for `--max-score`.
    pub searches: u64,
    /// Nodes visited by those searches.
    pub search_nodes: u64,
    /// Positions dropped as duplicates.
    pub duplicates: u64,
    /// Positions written.
    pub written: u64,
}

impl SelectionStats {
    /// Counts a skipped game.
    pub fn count_skip(&mut self, reason: SkipReason) {
        *match reason {
            SkipReason::NoResult => &mut self.skipped_no_result,
            SkipReason::AbnormalTermination => &mut self.skipped_termination,
            SkipReason::BelowMinElo => &mut self.skipped_elo,
            SkipReason::TooShort => &mut self.skipped_short,
            SkipReason::NotStandardChess => &mut self.skipped_variant,
        } += 1;
    }

    /// Counts a dropped position.
    pub fn count_drop(&mut self, reason: DropReason) {
        *match reason {
            DropReason::GameOver => &mut self.dropped_game_over,
            DropReason::FewPieces => &mut self.dropped_few_pieces,
            DropReason::NotQuiet => &mut self.dropped_not_quiet,
            DropReason::ScoreBeyondBound => &mut self.dropped_score,
            DropReason::NoCommentScore => &mut self.dropped_no_comment_score,
            DropReason::MateCommentScore => &mut self.dropped_mate_comment_score,
            DropReason::TacticalMove => &mut self.dropped_tactical_move,
            DropReason::CommentScoreBeyondBound => &mut self.dropped_comment_score_bound,
        } += 1;
    }

    /// Adds another set of counters.
    pub fn add(&mut self, other: &SelectionStats) {
        self.games_read += other.games_read;
        self.games_used += other.games_used;
        self.skipped_no_result += other.skipped_no_result;
        self.skipped_termination += other.skipped_termination;
        self.skipped_elo += other.skipped_elo;
        self.skipped_short += other.skipped_short;
        self.skipped_variant += other.skipped_variant;
        self.skipped_result += other.skipped_result;
        self.malformed += other.malformed;
        self.candidates += other.candidates;
        self.dropped_game_over += other.dropped_game_over;
        self.dropped_few_pieces += other.dropped_few_pieces;
        self.dropped_not_quiet += other.dropped_not_quiet;
        self.dropped_score += other.dropped_score;
        self.dropped_no_comment_score += other.dropped_no_comment_score;
        self.dropped_mate_comment_score += other.dropped_mate_comment_score;
        self.dropped_tactical_move += other.dropped_tactical_move;
        self.dropped_comment_score_bound += other.dropped_comment_score_bound;
        self.searches += other.searches;
        self.search_nodes += other.search_nodes;
        self.duplicates += other.duplicates;
        self.written += other.written;
    }

    /// Positions dropped by the `--comment-scores` rules.
    pub fn dropped_by_comment(&self) -> u64 {
        self.dropped_no_comment_score
            + self.dropped_mate_comment_score
            + self.dropped_tactical_move
            + self.dropped_comment_score_bound
    }

    /// Games skipped for any reason (malformed ones excluded).
    pub fn skipped(&self) -> u64 {
        self.skipped_no_result
            + self.skipped_termination
            + self.skipped_elo
            + self.skipped_short
            + self.skipped_variant
            + self.skipped_result
    }

    /// Fills the machine-readable summary (`--summary`): counts, games and
    /// positions skipped by reason, and the rates.
    pub fn fill_summary(&self, summary: &mut Summary, input_bytes: u64, elapsed: Duration) {
        summary
            .count("games_read", self.games_read)
            .count("games_used", self.games_used)
            .count("positions_sampled", self.candidates)
            .count("positions_written", self.written)
            .count("searches", self.searches)
            .count("search_nodes", self.search_nodes)
            .count("input_bytes", input_bytes)
            .skip("games_no_result", self.skipped_no_result)
            .skip("games_abnormal_termination", self.skipped_termination)
            .skip("games_below_min_elo", self.skipped_elo)
            .skip("games_too_short", self.skipped_short)
            .skip("games_other_variant", self.skipped_variant)
            .skip("games_result_contradicted", self.skipped_result)
            .skip("games_malformed", self.malformed)
            .skip("positions_no_legal_move", self.dropped_game_over)
            .skip("positions_few_pieces", self.dropped_few_pieces)
            .skip("positions_not_quiet", self.dropped_not_quiet)
            .skip("positions_beyond_max_score", self.dropped_score)
            .skip("positions_no_comment_score", self.dropped_no_comment_score)
            .skip(
                "positions_mate_comment_score",
                self.dropped_mate_comment_score,
            )
            .skip("positions_tactical_move", self.dropped_tactical_move)
            .skip(
                "positions_beyond_max_comment_score",
                self.dropped_comment_score_bound,
            )
            .skip("positions_duplicate", self.duplicates)
            .timing("total_seconds", elapsed)
            .rate(
                "megabytes_per_second",
                input_bytes as f64 / BYTES_PER_MEGABYTE,
                elapsed,
            )
            .rate("positions_per_second", self.written as f64, elapsed)
            .rate(
                "searched_positions_per_second",
                self.searches as f64,
                elapsed,
            );
    }

    /// The end-of-run summary, several lines, without a trailing newline.
    pub fn summary(&self, input_bytes: u64, elapsed: Duration) -> String {
        let seconds = elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "pgnselect: {} games read, {:.1} MB in {:.2} s ({:.1} MB/s)",
            self.games_read,
            input_bytes as f64 / BYTES_PER_MEGABYTE,
            seconds,
            input_bytes as f64 / BYTES_PER_MEGABYTE / seconds
        );
        let _ = writeln!(
            out,
            "  games used {}, skipped {} (no result {}, abnormal termination {}, below min elo {}, too short {}, other variant {}, result contradicted by search {}), malformed {}",
            self.games_used,
            self.skipped(),
            self.skipped_no_result,
            self.skipped_termination,
            self.skipped_elo,
            self.skipped_short,
            self.skipped_variant,
            self.skipped_result,
            self.malformed
        );
        let _ = writeln!(
            out,
            "  positions sampled {}, dropped {} (no legal move {}, few pieces {}, not quiet {}, beyond max score {})",
            self.candidates,
            self.dropped_game_over
                + self.dropped_few_pieces
                + self.dropped_not_quiet
                + self.dropped_score
                + self.dropped_by_comment(),
            self.dropped_game_over,
            self.dropped_few_pieces,
            self.dropped_not_quiet,
            self.dropped_score
        );
        if self.dropped_by_comment() > 0 {
            let _ = writeln!(
                out,
                "  dropped by --comment-scores: no score in the move's comment {}, mate score {}, capture or promotion played {}, beyond max comment score {}",
                self.dropped_no_comment_score,
                self.dropped_mate_comment_score,
                self.dropped_tactical_move,
                self.dropped_comment_score_bound
            );
        }
        let _ = write!(
            out,
            "  duplicates dropped {}, positions written {} ({:.0} positions/s)",
            self.duplicates,
            self.written,
            self.written as f64 / seconds
        );
        if self.searches > 0 {
            let _ = write!(
                out,
                "\n  searches {} ({:.0} nodes each, {:.0} searched positions/s)",
                self.searches,
                self.search_nodes as f64 / self.searches as f64,
                self.searches as f64 / seconds
            );
        }
        out
    }
}
