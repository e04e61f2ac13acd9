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

/// The TD(λ) settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TdTargets {
    /// The decay λ, in [0, 1).
    pub lambda: f64,
    /// The sigmoid's scale K (as the tuner's `--k`).
    pub k: f64,
}

impl TdTargets {
    /// The win probability of a score (centipawns, White's view) for White.
    fn probability(&self, white_score: i32) -> f64 {
        1.0 / (1.0 + (-self.k * f64::from(white_score) / 400.0).exp())
    }

    /// The score (centipawns, White's view) of a win probability, rounded.
    fn score(&self, probability: f64) -> i32 {
        let p = probability.clamp(PROBABILITY_FLOOR, 1.0 - PROBABILITY_FLOOR);
        // |score| <= 400 / K * ln(1e6), far inside i32 for any sane K.
        (400.0 / self.k * (p / (1.0 - p)).ln()).round() as i32
    }

    /// Replaces the scores of one game's labeled positions (centipawns,
    /// White's view, in game order) by their TD(λ) targets, in place.
    pub fn apply(&self, white_scores: &mut [i32]) {
        let Some(&last) = white_scores.last() else {
            return;
        };
        let mut target = self.probability(last);
        for score in white_scores.iter_mut().rev().skip(1) {
            target = (1.0 - self.lambda) * self.probability(*score) + self.lambda * target;
            *score = self.score(target);
        }
        // The last position's target is its own probability: only rounding.
        if let Some(score) = white_scores.last_mut() {
            *score = self.score(self.probability(last));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: f64 = 2.8;

    fn p(settings: TdTargets, s: i32) -> f64 {
        settings.probability(s)
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
        let y2 = p(settings, 300);
        let y1 = 0.5 * p(settings, 100) + 0.5 * y2;
        let y0 = 0.5 * p(settings, 0) + 0.5 * y1;
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
