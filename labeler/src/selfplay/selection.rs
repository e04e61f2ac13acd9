//! Which positions of a self-play game are kept as training data, and why
//! the others are not.
//!
//! Every position the engine searched after the random plies is a
//! candidate, labeled with the search score (side to move's view) and,
//! once the game is over, its result. A candidate is dropped when the side
//! to move is in check, when the search's best move is a capture or a
//! promotion (the position is not quiet: its static evaluation, which the
//! tuner fits, says little about its value), or when the score is a mate
//! score or beyond `--max-score` (the game is decided; such positions
//! teach the evaluation nothing and distort the fit). With an external
//! engine that reports no score, the position is dropped as unscored.

use shakmaty::{Chess, Position};

use engine::play::game::Choice;
use engine::search::MATE_BOUND;

/// Why a searched position was not kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// The side to move is in check.
    InCheck,
    /// The best move is a capture or a promotion.
    NotQuiet,
    /// The score is a mate score.
    MateScore,
    /// |score| is beyond `--max-score`.
    BeyondMaxScore,
    /// The player reported no score.
    NoScore,
}

impl DropReason {
    /// Every reason, in report order.
    pub const ALL: [DropReason; 5] = [
        DropReason::InCheck,
        DropReason::NotQuiet,
        DropReason::MateScore,
        DropReason::BeyondMaxScore,
        DropReason::NoScore,
    ];

    /// Human-readable name.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::InCheck => "in check",
            DropReason::NotQuiet => "best move a capture or promotion",
            DropReason::MateScore => "mate score",
            DropReason::BeyondMaxScore => "beyond --max-score",
            DropReason::NoScore => "no score reported",
        }
    }

    /// Key in the JSON summary.
    pub fn key(self) -> &'static str {
        match self {
            DropReason::InCheck => "in_check",
            DropReason::NotQuiet => "not_quiet",
            DropReason::MateScore => "mate_score",
            DropReason::BeyondMaxScore => "beyond_max_score",
            DropReason::NoScore => "no_score",
        }
    }
}

/// Judges a searched position: its score when kept.
///
/// # Errors
/// The reason it is dropped.
pub fn judge(position: &Chess, choice: &Choice, max_score: i32) -> Result<i32, DropReason> {
    if position.is_check() {
        return Err(DropReason::InCheck);
    }
    if choice.best_move.is_capture() || choice.best_move.is_promotion() {
        return Err(DropReason::NotQuiet);
    }
    let score = choice.score.ok_or(DropReason::NoScore)?;
    if score.abs() >= MATE_BOUND {
        return Err(DropReason::MateScore);
    }
    if score.abs() > max_score {
        return Err(DropReason::BeyondMaxScore);
    }
    Ok(score)
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::chess::position::{parse_fen, play_uci};

    fn choice(fen: &str, uci: &str, score: Option<i32>) -> (Chess, Choice) {
        let pos = parse_fen(fen).unwrap();
        let (_, best_move) = play_uci(&pos, uci).unwrap();
        (
            pos,
            Choice {
                best_move,
                score,
                depth: None,
            },
        )
    }

    #[test]
    fn each_reason() {
        let quiet = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
        let (pos, c) = choice(quiet, "f1b5", Some(30));
        assert_eq!(judge(&pos, &c, 3000), Ok(30));
        let (pos, c) = choice(quiet, "f3e5", Some(30));
        assert_eq!(judge(&pos, &c, 3000), Err(DropReason::NotQuiet));
        let (pos, c) = choice("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8q", Some(900));
        assert_eq!(judge(&pos, &c, 3000), Err(DropReason::NotQuiet));
        let (pos, c) = choice("4k3/8/8/8/8/8/8/r3K3 w - - 0 1", "e1e2", Some(-900));
        assert_eq!(judge(&pos, &c, 3000), Err(DropReason::InCheck));
        let (pos, c) = choice(quiet, "f1b5", Some(MATE_BOUND + 3));
        assert_eq!(judge(&pos, &c, 3000), Err(DropReason::MateScore));
        let (pos, c) = choice(quiet, "f1b5", Some(-3001));
        assert_eq!(judge(&pos, &c, 3000), Err(DropReason::BeyondMaxScore));
        let (pos, c) = choice(quiet, "f1b5", None);
        assert_eq!(judge(&pos, &c, 3000), Err(DropReason::NoScore));
    }
}
