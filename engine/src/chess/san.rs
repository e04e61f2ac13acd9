//! Turning a SAN move into a legal move, fast for the common cases.
//!
//! shakmaty's [`San::to_move`] builds a full candidate move list for every
//! move, which dominates the cost of reading games. [`resolve_san`] handles
//! the frequent moves directly on bitboards — king steps, and knight,
//! bishop, rook and queen moves and pawn pushes and captures (en passant
//! and promotions excepted) while the side to move is not in check — and
//! hands every other move to shakmaty. The answers are the same as shakmaty's (a move
//! whose capture mark does not match the board is illegal, several legal
//! candidates are ambiguous), as the tests check on every SAN of random
//! positions. Every tool that reads PGN moves resolves them here.

use shakmaty::attacks::{
    bishop_attacks, king_attacks, knight_attacks, queen_attacks, rook_attacks,
};
use shakmaty::san::{San, SanError};
use shakmaty::{Bitboard, Chess, Color, Move, Position, Rank, Role, Square};

/// The legal move written `san` in `pos`.
///
/// # Errors
/// [`SanError::IllegalSan`] when no legal move matches,
/// [`SanError::AmbiguousSan`] when several do.
pub fn resolve_san(pos: &Chess, san: San) -> Result<Move, SanError> {
    let San::Normal {
        role,
        file,
        rank,
        capture,
        to,
        promotion: None,
    } = san
    else {
        return san.to_move(pos);
    };
    let board = pos.board();
    let us = pos.us();
    let turn = pos.turn();
    let Some(king) = board.king_of(turn) else {
        return san.to_move(pos);
    };
    let occupied = board.occupied();
    if role == Role::King {
        // Castling written as a king move (e1g1-style) is shakmaty's.
        if us.contains(to) || !king_attacks(to).contains(king) {
            return san.to_move(pos);
        }
        let matches_hint =
            file.is_none_or(|f| f == king.file()) && rank.is_none_or(|r| r == king.rank());
        let captured = board.role_at(to);
        let safe = board
            .attacks_to(to, !turn, occupied.without(king))
            .is_empty();
        return if matches_hint && safe && capture == captured.is_some() {
            Ok(Move::Normal {
                role,
                from: king,
                capture: captured,
                to,
                promotion: None,
            })
        } else {
            Err(SanError::IllegalSan)
        };
    }
    if !pos.checkers().is_empty() {
        return san.to_move(pos);
    }
    if us.contains(to) {
        return Err(SanError::IllegalSan);
    }
    let captured = board.role_at(to);
    if capture != captured.is_some() {
        if role == Role::Pawn && capture {
            // Perhaps en passant.
            return san.to_move(pos);
        }
        return Err(SanError::IllegalSan);
    }
    let mut from_squares = match role {
        Role::Knight => knight_attacks(to),
        Role::Bishop => bishop_attacks(to, occupied),
        Role::Rook => rook_attacks(to, occupied),
        Role::Queen => queen_attacks(to, occupied),
        Role::Pawn => {
            let last_rank = match turn {
                Color::White => Rank::Eighth,
                Color::Black => Rank::First,
            };
            if to.rank() == last_rank {
                // A promotion without its piece: let shakmaty judge.
                return san.to_move(pos);
            }
            pawn_origins(pos, to, capture)
        }
        Role::King => return san.to_move(pos),
    } & pos.our(role);
    if let Some(file) = file {
        from_squares &= Bitboard::from_file(file);
    }
    if let Some(rank) = rank {
        from_squares &= Bitboard::from_rank(rank);
    }
    let their_rooks = pos.them() & board.rooks_and_queens();
    let their_bishops = pos.them() & board.bishops_and_queens();
    let mut found = None;
    for from in from_squares {
        let after = occupied.without(from).with(to);
        let exposed = (rook_attacks(king, after) & their_rooks)
            | (bishop_attacks(king, after) & their_bishops);
        if exposed.without(to).is_empty() {
            if found.is_some() {
                return Err(SanError::AmbiguousSan);
            }
            found = Some(from);
        }
    }
    found
        .map(|from| Move::Normal {
            role,
            from,
            capture: captured,
            to,
            promotion: None,
        })
        .ok_or(SanError::IllegalSan)
}

/// Squares a pawn of the side to move could come from to reach `to`
/// (not en passant): one or two steps back for a push, diagonally back for
/// a capture.
fn pawn_origins(pos: &Chess, to: Square, capture: bool) -> Bitboard {
    let (back, double_push_rank) = match pos.turn() {
        Color::White => (-8, Rank::Fourth),
        Color::Black => (8, Rank::Fifth),
    };
    let Some(one_back) = to.offset(back) else {
        return Bitboard::EMPTY;
    };
    if capture {
        let mut origins = Bitboard::EMPTY;
        for side in [-1, 1] {
            if let Some(from) = one_back.offset(side)
                && from.rank() == one_back.rank()
            {
                origins = origins.with(from);
            }
        }
        return origins;
    }
    if pos.board().occupied().contains(to) {
        return Bitboard::EMPTY;
    }
    if pos.our(Role::Pawn).contains(one_back) {
        return Bitboard::from_square(one_back);
    }
    if to.rank() == double_push_rank
        && !pos.board().occupied().contains(one_back)
        && let Some(two_back) = one_back.offset(back)
    {
        return Bitboard::from_square(two_back);
    }
    Bitboard::EMPTY
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use shakmaty::{File, Square};

    /// Every SAN shape for `role` to `to`: plain, with file, rank or both,
    /// capture or not.
    fn san_shapes(role: Role, to: Square) -> Vec<San> {
        let mut out = Vec::new();
        let files: Vec<Option<File>> = std::iter::once(None).chain(File::ALL.map(Some)).collect();
        let ranks: Vec<Option<Rank>> = std::iter::once(None).chain(Rank::ALL.map(Some)).collect();
        for &file in &files {
            for &rank in &ranks {
                for capture in [false, true] {
                    out.push(San::Normal {
                        role,
                        file,
                        rank,
                        capture,
                        to,
                        promotion: None,
                    });
                }
            }
        }
        out
    }

    #[test]
    fn agrees_with_shakmaty_on_every_san_of_random_games() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut checked = 0;
        for _ in 0..12 {
            let mut pos = Chess::default();
            for _ in 0..120 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                for role in Role::ALL {
                    for to in Square::ALL {
                        if matches!(role, Role::Pawn | Role::King)
                            || (pos.our(role).any() && rng.random_bool(0.3))
                        {
                            for san in san_shapes(role, to) {
                                assert_eq!(
                                    resolve_san(&pos, san),
                                    san.to_move(&pos),
                                    "{san} in {}",
                                    crate::chess::position::fen_of(&pos)
                                );
                                checked += 1;
                            }
                        }
                    }
                }
                let m = moves[rng.random_range(0..moves.len())];
                pos.play_unchecked(m);
            }
        }
        assert!(checked > 100_000, "{checked}");
    }

    #[test]
    fn pins_ambiguity_and_capture_marks() {
        let pos =
            crate::chess::position::parse_fen("4k3/4r3/8/8/8/2N3N1/4N3/4K3 w - - 0 1").unwrap();
        let san = |text: &str| resolve_san(&pos, text.parse::<San>().unwrap());
        // The e2 knight is pinned; c3 and g3 both reach e4.
        assert_eq!(san("Nd4"), Err(SanError::IllegalSan));
        assert_eq!(san("Ne4"), Err(SanError::AmbiguousSan));
        assert!(san("Nce4").is_ok());
        assert_eq!(san("Nxe4"), Err(SanError::IllegalSan));
    }
}
