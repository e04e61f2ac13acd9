//! Perft: counting the leaf nodes of the legal move tree, the standard check
//! of move generation. The perft-suite file format lives in
//! [`crate::formats::perft_suite`].
//!
//! Invariant: `perft(pos, 0) == 1` and `perft(pos, d)` is the sum over the
//! legal moves of `perft(child, d - 1)`; the divide sums to the total.

use shakmaty::{CastlingMode, Chess, FromSetup, Move, Position, PositionError};

use super::position::{PositionParseError, parse_fen};

/// Number of leaf nodes `depth` plies below `pos`.
pub fn perft(pos: &Chess, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let moves = pos.legal_moves();
    if depth == 1 {
        return moves.len() as u64;
    }
    moves
        .iter()
        .map(|&m| {
            let mut child = pos.clone();
            child.play_unchecked(m);
            perft(&child, depth - 1)
        })
        .sum()
}

/// Perft of each legal move's subtree (`depth ≥ 1`), in move generation
/// order.
pub fn divide(pos: &Chess, depth: u32) -> Vec<(Move, u64)> {
    pos.legal_moves()
        .iter()
        .map(|&m| {
            let mut child = pos.clone();
            child.play_unchecked(m);
            (m, perft(&child, depth.saturating_sub(1)))
        })
        .collect()
}

/// Parses a perft position. Perft suites include positions that cannot
/// arise in a game but have a well-defined move tree (e.g. a king checked by
/// two bishops on one diagonal), so an "impossible check" is accepted here.
///
/// # Errors
/// As [`parse_fen`] for every other defect.
pub fn parse_perft_position(fen: &str) -> Result<Chess, PositionParseError> {
    parse_fen(fen).or_else(|err| {
        let setup = fen
            .trim()
            .parse::<shakmaty::fen::Fen>()
            .map_err(|_| err.clone())?
            .into_setup();
        Chess::from_setup(setup, CastlingMode::Standard)
            .or_else(PositionError::ignore_invalid_ep_square)
            .or_else(PositionError::ignore_invalid_castling_rights)
            .or_else(PositionError::ignore_impossible_check)
            .map_err(|_| err)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_counts_and_divide() {
        let start = Chess::default();
        assert_eq!(perft(&start, 3), 8902);
        let d: u64 = divide(&start, 3).iter().map(|(_, n)| n).sum();
        assert_eq!(d, 8902);
    }
}
