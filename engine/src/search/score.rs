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
