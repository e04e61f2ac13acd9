//! TD(λ) targets: each labeled position of a game scored by the later
//! positions' scores as well as its own (`--td-lambda`).
//!
//! With `--comment-scores` each position carries the search score of the
//! move played from it. A single search is noisy; the rest of the game says
//! whether it was right. [`TdTargets::apply`] turns the scores of one game's
//! written positions, in game order, into win probabilities
//! `p = 1 / (1 + exp(-K s / 400))` (the tuner's sigmoid), replaces each by
//! the temporal-difference average `y_t = (1 - λ) Σ_k λ^k p_{t+k}` with the
//! tail's weight on the game's last labeled position, and turns the result
//! back into centipawns. λ = 0 keeps the scores; λ → 1 gives every position
//! the last score. Scores are taken from White's view for the average (the
//! positions alternate sides) and returned the same way.

/// A probability this close to 0 or 1 is clamped before it is turned back
/// into centipawns (the logit of 0 or 1 is infinite); with K 2.8 that is
/// about ±3,950 cp, beyond the default --max-comment-score (2,000).
const PROBABILITY_FLOOR: f64 = 1e-12;

use engine::search::score::{score_of_win_probability, win_probability};

/// The TD(λ) settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TdTargets {
    /// The decay λ, in [0, 1).
    pub lambda: f64,
    /// The sigmoid's scale K (as the tuner's `--k`).
    pub k: f64,
}

impl TdTargets {
    /// The score (centipawns, White's view) of a win probability, rounded.
    fn score(&self, probability: f64) -> i32 {
        let p = probability.clamp(PROBABILITY_FLOOR, 1.0 - PROBABILITY_FLOOR);
        // |score| <= 400 / K * ln(1e12), far inside i32 for any sane K.
        score_of_win_probability(p, self.k).round() as i32
    }

    /// Replaces the scores of one game's labeled positions (centipawns,
    /// White's view, in game order) by their TD(λ) targets, in place: from
    /// the last position back, each target is (1 − λ) × its own win
    /// probability + λ × the next position's target; the last position's
    /// target is its own probability.
    pub fn apply(&self, white_scores: &mut [i32]) {
        let mut next_target: Option<f64> = None;
        for score in white_scores.iter_mut().rev() {
            let own = win_probability(f64::from(*score), self.k);
            let target = match next_target {
                None => own,
                Some(next) => (1.0 - self.lambda) * own + self.lambda * next,
            };
            *score = self.score(target);
            next_target = Some(target);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: f64 = 2.8;

    fn p(s: i32) -> f64 {
        win_probability(f64::from(s), K)
    }

    #[test]
    fn lambda_zero_keeps_the_scores() {
        let settings = TdTargets { lambda: 0.0, k: K };
        let original = [0, 35, -120, 400, -1999, 7];
        let mut scores = original;
        settings.apply(&mut scores);
        assert_eq!(scores, original);
    }

    #[test]
    fn an_empty_or_single_game_is_unchanged() {
        let settings = TdTargets { lambda: 0.9, k: K };
        let mut none: [i32; 0] = [];
        settings.apply(&mut none);
        let mut one = [250];
        settings.apply(&mut one);
        assert_eq!(one, [250]);
    }

    #[test]
    fn targets_follow_the_recurrence_by_hand() {
        // Three positions: 0, +100, +300 (White's view), λ = 0.5.
        let settings = TdTargets { lambda: 0.5, k: K };
        let mut scores = [0, 100, 300];
        settings.apply(&mut scores);
        let y2 = p(300);
        let y1 = 0.5 * p(100) + 0.5 * y2;
        let y0 = 0.5 * p(0) + 0.5 * y1;
        let back = |y: f64| (400.0 / K * (y / (1.0 - y)).ln()).round() as i32;
        assert_eq!(scores, [back(y0), back(y1), 300]);
        // By hand: p(300) = 0.8909, p(100) = 0.6682, so y1 = 0.7796
        // (+180 cp) and y0 = 0.6398 (+82 cp).
        assert_eq!(scores, [82, 180, 300]);
    }

    #[test]
    fn a_lambda_near_one_gives_every_position_the_last_score() {
        let settings = TdTargets {
            lambda: 0.999_999,
            k: K,
        };
        let mut scores = [-50, 20, 0, 90, -600];
        settings.apply(&mut scores);
        assert_eq!(scores, [-600; 5]);
    }

    #[test]
    fn a_certain_win_is_clamped_not_infinite() {
        let settings = TdTargets { lambda: 0.5, k: K };
        let mut scores = [i32::MAX / 2, i32::MAX / 2];
        settings.apply(&mut scores);
        let cap = (400.0 / K * ((1.0 - PROBABILITY_FLOOR) / PROBABILITY_FLOOR).ln()).round() as i32;
        assert_eq!(scores, [cap, cap]);
    }
}
