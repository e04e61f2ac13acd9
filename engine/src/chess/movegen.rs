//! What the search needs from move generation beyond shakmaty's
//! `legal_moves`: the tactical moves alone (quiescence search visits millions
//! of nodes that want only captures) and whether a move gives check without
//! playing it (pruning decisions are taken before a move is made).
//!
//! Invariants: [`tactical_moves`] returns exactly the moves of
//! `legal_moves()` that are captures or queen promotions (in another order),
//! and [`gives_check`] answers exactly what playing the move and asking
//! `is_check()` would; the tests in `engine/tests/movegen.rs` compare both
//! against shakmaty on thousands of real and random positions, including
//! castling, en passant and promotions.

use shakmaty::attacks::{
    between, bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks,
};
use shakmaty::{Bitboard, Board, Chess, Color, Move, MoveList, Position, Rank, Role, Square};

/// Squares holding pieces (of both colours) that attack `sq` given the
/// occupancy `occupied`.
pub fn attackers_to(pos: &Chess, sq: Square, occupied: Bitboard) -> Bitboard {
    let b = pos.board();
    (rook_attacks(sq, occupied) & b.rooks_and_queens())
        | (bishop_attacks(sq, occupied) & b.bishops_and_queens())
        | (knight_attacks(sq) & b.knights())
        | (king_attacks(sq) & b.kings())
        | (pawn_attacks(Color::White, sq) & b.pawns() & b.black())
        | (pawn_attacks(Color::Black, sq) & b.pawns() & b.white())
}

/// Pieces of `owners` that are the only piece between `king` and one of the
/// sliders of `sliders_of` lined up with it: the pinned pieces when the
/// sliders are the enemy's, the discovered-check candidates when they are
/// ours.
fn sole_blockers(board: &Board, king: Square, sliders_of: Bitboard, owners: Bitboard) -> Bitboard {
    let snipers = (rook_attacks(king, Bitboard::EMPTY) & board.rooks_and_queens() & sliders_of)
        | (bishop_attacks(king, Bitboard::EMPTY) & board.bishops_and_queens() & sliders_of);
    let mut found = Bitboard::EMPTY;
    for sniper in snipers {
        let blockers = between(king, sniper) & board.occupied();
        if blockers.count() == 1 && (blockers & owners).any() {
            found |= blockers;
        }
    }
    found
}

/// The legal captures and queen promotions (captures promoting to any piece
/// included) of `pos`. When the side to move is in check every legal move is
/// returned instead: quiescence searches all evasions.
pub fn tactical_moves(pos: &Chess) -> MoveList {
    let mut moves = MoveList::new();
    tactical_moves_into(pos, &mut moves);
    moves
}

/// [`tactical_moves`] written into `moves` (emptied first): the search's
/// way, as a list built inside a function is copied whole (over a
/// kilobyte) when that function returns it.
pub fn tactical_moves_into(pos: &Chess, moves: &mut MoveList) {
    moves.clear();
    let board = pos.board();
    let turn = pos.turn();
    let king = board.king_of(turn).expect("king in standard chess");
    if pos.is_check() || pos.maybe_ep_square().is_some() {
        // Evasions, and the rare en passant positions (whose legality needs
        // the discovered-check test of a two-pawn removal) go the long way.
        *moves = pos.legal_moves();
        if !pos.is_check() {
            moves.retain(|m| m.is_capture() || m.promotion() == Some(Role::Queen));
        }
        return;
    }
    let us = board.by_color(turn);
    let them = board.by_color(!turn);
    let occupied = board.occupied();
    let pinned = sole_blockers(board, king, them, us);
    let last_rank = match turn {
        Color::White => Rank::Eighth,
        Color::Black => Rank::First,
    };
    let mut push = |role: Role, from: Square, to: Square, promotion: Option<Role>| {
        if pinned.contains(from) && !shakmaty::attacks::aligned(king, from, to) {
            return;
        }
        moves.push(Move::Normal {
            role,
            from,
            capture: board.role_at(to),
            to,
            promotion,
        });
    };
    // Pawns: captures (with every promotion) and pushes to the last rank.
    for from in board.pawns() & us {
        for to in pawn_attacks(turn, from) & them {
            if to.rank() == last_rank {
                for promotion in [Role::Queen, Role::Rook, Role::Bishop, Role::Knight] {
                    push(Role::Pawn, from, to, Some(promotion));
                }
            } else {
                push(Role::Pawn, from, to, None);
            }
        }
        let ahead = match turn {
            Color::White => from.offset(8),
            Color::Black => from.offset(-8),
        };
        if let Some(to) = ahead
            && to.rank() == last_rank
            && !occupied.contains(to)
        {
            push(Role::Pawn, from, to, Some(Role::Queen));
        }
    }
    for from in board.knights() & us {
        for to in knight_attacks(from) & them {
            push(Role::Knight, from, to, None);
        }
    }
    for from in board.bishops() & us {
        for to in bishop_attacks(from, occupied) & them {
            push(Role::Bishop, from, to, None);
        }
    }
    for from in board.rooks() & us {
        for to in rook_attacks(from, occupied) & them {
            push(Role::Rook, from, to, None);
        }
    }
    for from in board.queens() & us {
        for to in (rook_attacks(from, occupied) | bishop_attacks(from, occupied)) & them {
            push(Role::Queen, from, to, None);
        }
    }
    // The king captures only what no enemy piece defends (seen through the
    // king's own square, which it leaves).
    let without_king = occupied.without(king);
    for to in king_attacks(king) & them {
        if !(attackers_to(pos, to, without_king) & them).any() {
            moves.push(Move::Normal {
                role: Role::King,
                from: king,
                capture: board.role_at(to),
                to,
                promotion: None,
            });
        }
    }
}

/// Whether the legal move `m` of the side to move gives check, computed from
/// the board after the move without playing it.
pub fn gives_check(pos: &Chess, m: Move) -> bool {
    let board = pos.board();
    let turn = pos.turn();
    let Some(their_king) = board.king_of(!turn) else {
        return false;
    };
    let us = board.by_color(turn);
    let mut occupied = board.occupied();
    // Our pieces after the move, by how they attack.
    let mut orthogonal = board.rooks_and_queens() & us;
    let mut diagonal = board.bishops_and_queens() & us;
    let mut knights = board.knights() & us;
    let mut pawns = board.pawns() & us;
    let mut place = |role: Role, sq: Square, add: bool| {
        let set = |bb: &mut Bitboard| {
            if add { bb.add(sq) } else { bb.discard(sq) }
        };
        match role {
            Role::Pawn => set(&mut pawns),
            Role::Knight => set(&mut knights),
            Role::Bishop => set(&mut diagonal),
            Role::Rook => set(&mut orthogonal),
            Role::Queen => {
                set(&mut orthogonal);
                set(&mut diagonal);
            }
            Role::King => {}
        }
    };
    match m {
        Move::Normal {
            role,
            from,
            to,
            promotion,
            ..
        } => {
            place(role, from, false);
            place(promotion.unwrap_or(role), to, true);
            occupied.discard(from);
            occupied.add(to);
        }
        Move::EnPassant { from, to } => {
            place(Role::Pawn, from, false);
            place(Role::Pawn, to, true);
            occupied.discard(from);
            occupied.discard(Square::from_coords(to.file(), from.rank()));
            occupied.add(to);
        }
        Move::Castle { king, rook } => {
            let Some(side) = m.castling_side() else {
                return false;
            };
            let (king_to, rook_to) = (side.king_to(turn), side.rook_to(turn));
            place(Role::Rook, rook, false);
            place(Role::Rook, rook_to, true);
            occupied.discard(king);
            occupied.discard(rook);
            occupied.add(king_to);
            occupied.add(rook_to);
        }
        Move::Put { .. } => return false,
    }
    (rook_attacks(their_king, occupied) & orthogonal).any()
        || (bishop_attacks(their_king, occupied) & diagonal).any()
        || (knight_attacks(their_king) & knights).any()
        || (pawn_attacks(!turn, their_king) & pawns).any()
}

/// What makes a move give check in one position, computed once per node so
/// that each move's test costs two bitboard lookups: the squares from which
/// each piece type would attack the enemy king, and our pieces whose
/// departure would uncover one of our sliders (Stockfish's "check info").
/// Promotions, castling and en passant take the exact [`gives_check`].
#[derive(Clone, Copy, Debug)]
pub struct CheckInfo {
    their_king: Option<Square>,
    /// Per role (pawn … king): target squares that check directly.
    check_squares: [Bitboard; 6],
    /// Our pieces that are the only blocker between one of our sliders and
    /// the enemy king.
    discoverers: Bitboard,
}

impl CheckInfo {
    /// The check information of `pos` for moves of its side to move.
    pub fn new(pos: &Chess) -> Self {
        let board = pos.board();
        let turn = pos.turn();
        let Some(king) = board.king_of(!turn) else {
            return CheckInfo {
                their_king: None,
                check_squares: [Bitboard::EMPTY; 6],
                discoverers: Bitboard::EMPTY,
            };
        };
        let occupied = board.occupied();
        let us = board.by_color(turn);
        let diagonal = bishop_attacks(king, occupied);
        let orthogonal = rook_attacks(king, occupied);
        let discoverers = sole_blockers(board, king, us, us);
        CheckInfo {
            their_king: Some(king),
            check_squares: [
                pawn_attacks(!turn, king),
                knight_attacks(king),
                diagonal,
                orthogonal,
                diagonal | orthogonal,
                Bitboard::EMPTY,
            ],
            discoverers,
        }
    }

    /// Whether the legal move `m` of `pos` (the position this was computed
    /// for) gives check; equal to [`gives_check`].
    #[inline]
    pub fn gives_check(&self, pos: &Chess, m: Move) -> bool {
        match m {
            Move::Normal {
                role,
                from,
                to,
                promotion: None,
                ..
            } => {
                let Some(king) = self.their_king else {
                    return false;
                };
                // A piece moving away from the king along a line it already
                // blocks cannot check directly (the king would have been in
                // check with us to move), so the current occupancy suffices.
                self.check_squares[role as usize - 1].contains(to)
                    || (self.discoverers.contains(from)
                        && !shakmaty::attacks::aligned(from, to, king))
            }
            _ => gives_check(pos, m),
        }
    }
}
