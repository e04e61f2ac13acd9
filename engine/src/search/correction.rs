//! Correction history: what the search has learnt about the static
//! evaluation's errors, by pawn structure and by each side's pieces.
//!
//! After a node's search, the difference between its result and its static
//! evaluation (when the result's bound says on which side the truth lies,
//! and the best move is quiet) moves three running averages toward it: one
//! for the node's pawn structure and one for each side's non-pawn pieces,
//! all per side to move and depth-weighted. Later static evaluations of
//! positions sharing those features are corrected by the averages, within
//! [`MAX_CORRECTION`] centipawns. Invariant: entries stay within
//! `±ENTRY_LIMIT` through the "gravity" update, as the move histories do.

use shakmaty::{Board, Chess, Color, Position};

use super::movepick::gravity;
use super::score::MATE_BOUND;

/// Slots per table and side to move (a power of two).
const SLOTS: usize = 1 << 14;
/// Bound of an entry (in absolute value).
const ENTRY_LIMIT: i32 = 1024;
/// The correction in centipawns is the pawn entry twice plus both non-pawn
/// entries, divided by this: at most ±128 cp.
const DIVISOR: i32 = 32;
/// Largest correction, in centipawns.
pub const MAX_CORRECTION: i32 = 4 * ENTRY_LIMIT / DIVISOR;

/// The tables of one search thread.
#[derive(Clone)]
pub struct CorrectionHistory {
    /// `[side to move][pawn hash]`.
    pawn: Vec<i16>,
    /// `[side to move][hash of White's non-pawn pieces]`.
    white: Vec<i16>,
    /// `[side to move][hash of Black's non-pawn pieces]`.
    black: Vec<i16>,
}

/// The table slots of one position.
#[derive(Clone, Copy, Debug)]
pub struct CorrectionSlots {
    pawn: usize,
    white: usize,
    black: usize,
}

#[inline(always)]
fn mix(h: u64) -> usize {
    let h = h ^ (h >> 29);
    let h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    ((h ^ (h >> 32)) as usize) & (SLOTS - 1)
}

#[inline(always)]
fn non_pawn_hash(board: &Board, color: Color) -> u64 {
    let ours = board.by_color(color).0;
    (board.knights().0 & ours).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ (board.bishops().0 & ours)
            .wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
            .rotate_left(13)
        ^ (board.rooks().0 & ours)
            .wrapping_mul(0x1656_67b1_9e37_79f9)
            .rotate_left(27)
        ^ (board.queens().0 & ours)
            .wrapping_mul(0x27d4_eb2f_1656_67c5)
            .rotate_left(41)
        ^ (board.kings().0 & ours).wrapping_mul(0x94d0_49bb_1331_11eb)
}

impl CorrectionSlots {
    /// The slots of `pos`.
    #[inline]
    pub fn of(pos: &Chess) -> Self {
        let board = pos.board();
        let pawns = board.pawns().0;
        let stm = pos.turn() as usize * SLOTS;
        let pawn_hash = (pawns & board.white().0).wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ (pawns & board.black().0)
                .wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
                .rotate_left(29);
        CorrectionSlots {
            pawn: stm + mix(pawn_hash),
            white: stm + mix(non_pawn_hash(board, Color::White)),
            black: stm + mix(non_pawn_hash(board, Color::Black)),
        }
    }
}

impl Default for CorrectionHistory {
    fn default() -> Self {
        Self::new()
    }
}

impl CorrectionHistory {
    /// Empty tables.
    pub fn new() -> Self {
        CorrectionHistory {
            pawn: vec![0; 2 * SLOTS],
            white: vec![0; 2 * SLOTS],
            black: vec![0; 2 * SLOTS],
        }
    }

    /// Forgets everything (new game).
    pub fn clear(&mut self) {
        self.pawn.fill(0);
        self.white.fill(0);
        self.black.fill(0);
    }

    /// The correction of a static evaluation at `slots`, in centipawns.
    #[inline]
    pub fn correction(&self, slots: &CorrectionSlots) -> i32 {
        let sum = 2 * i32::from(self.pawn[slots.pawn])
            + i32::from(self.white[slots.white])
            + i32::from(self.black[slots.black]);
        sum / DIVISOR
    }

    /// The static evaluation `raw_eval` corrected at `slots`, kept off the
    /// mate scores.
    #[inline]
    pub fn corrected(&self, raw_eval: i32, slots: &CorrectionSlots) -> i32 {
        (raw_eval + self.correction(slots)).clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
    }

    /// Learns that a `depth`-ply search found `diff` centipawns more than
    /// the (corrected) static evaluation at `slots`.
    pub fn update(&mut self, slots: &CorrectionSlots, diff: i32, depth: i32) {
        let bonus = (diff * depth / 8).clamp(-ENTRY_LIMIT / 4, ENTRY_LIMIT / 4);
        for entry in [
            &mut self.pawn[slots.pawn],
            &mut self.white[slots.white],
            &mut self.black[slots.black],
        ] {
            // Gravity keeps the entry within ±ENTRY_LIMIT, so it fits.
            *entry = gravity(i32::from(*entry), bonus, ENTRY_LIMIT) as i16;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::position::parse_fen;

    #[test]
    fn corrections_follow_the_errors_and_stay_bounded() {
        let pos =
            parse_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3").unwrap();
        let slots = CorrectionSlots::of(&pos);
        let mut h = CorrectionHistory::new();
        assert_eq!(h.correction(&slots), 0);
        for _ in 0..1000 {
            h.update(&slots, 500, 20);
        }
        assert_eq!(h.correction(&slots), MAX_CORRECTION);
        for _ in 0..1000 {
            h.update(&slots, -500, 20);
        }
        assert_eq!(h.correction(&slots), -MAX_CORRECTION);
        h.clear();
        h.update(&slots, 40, 8);
        let c = h.correction(&slots);
        assert!(c > 0 && c < 40, "{c}");
        // The other side to move has tables of its own.
        let other =
            parse_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 3").unwrap();
        assert_eq!(h.correction(&CorrectionSlots::of(&other)), 0);
    }
}
