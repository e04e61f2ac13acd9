//! Score units shared by the search, the transposition table, the move
//! picker and every caller that reads a search score: centipawns from the
//! side to move's point of view, with mate scores `±(MATE_SCORE - plies)`.

/// Deepest ply the search ever reaches (main search plus quiescence).
pub const MAX_PLY: usize = 128;
/// Score of delivering mate now; mate in `n` plies scores `MATE_SCORE - n`.
pub const MATE_SCORE: i32 = 32_000;
/// Scores at or beyond this magnitude are mate scores.
pub const MATE_BOUND: i32 = MATE_SCORE - MAX_PLY as i32;
/// Larger than any score.
pub const INFINITY: i32 = MATE_SCORE + 1;
/// Score of a drawn position.
pub const DRAW_SCORE: i32 = 0;
/// For a mate score, the number of moves to mate: positive when the side to
/// move mates, negative when it is mated (`-0` does not exist: being mated
/// now is `Some(0)` only for the score `-MATE_SCORE`). `None` for other
/// scores.
pub fn mate_in_moves(score: i32) -> Option<i32> {
    if score >= MATE_BOUND {
        Some((MATE_SCORE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        Some(-(MATE_SCORE + score) / 2)
    } else {
        None
    }
}

/// The expected score (win probability plus half the draw probability) of a
/// centipawn score, by the logistic curve `1 / (1 + exp(-k · cp / 400))`
/// whose scale `k` the tuner fits (`tuner --k`) and `pgnselect --td-k`
/// reuses: one definition, so both read a score alike.
#[inline(always)]
pub fn win_probability(cp: f64, k: f64) -> f64 {
    1.0 / (1.0 + (-(k * cp / 400.0)).exp())
}

/// The centipawn score whose [`win_probability`] is `p` (in (0, 1)).
pub fn score_of_win_probability(p: f64, k: f64) -> f64 {
    400.0 / k * (p / (1.0 - p)).ln()
}

#[cfg(test)]
mod win_probability_tests {
    use super::*;

    #[test]
    fn the_two_conversions_invert_each_other() {
        assert_eq!(win_probability(0.0, 2.8), 0.5);
        // 400 / K cp is one unit of the logistic: 1 / (1 + e^-1).
        assert!((win_probability(400.0 / 2.8, 2.8) - 0.731_058_578_6).abs() < 1e-9);
        for cp in [-1500.0, -35.0, 0.0, 120.0, 999.0] {
            let back = score_of_win_probability(win_probability(cp, 2.8), 2.8);
            assert!((back - cp).abs() < 1e-6, "{cp} -> {back}");
        }
    }
}
