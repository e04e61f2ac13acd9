//! The position layer: how every tool turns text into a legal [`Chess`]
//! position and how positions are keyed.
//!
//! The rules themselves are [`shakmaty`]'s; this module owns the conventions
//! that the whole workspace must agree on:
//!
//! * **Keys.** A position's key is its Polyglot Zobrist hash, computed exactly
//!   as python-chess's `chess.polyglot.zobrist_hash` does: the en-passant file
//!   is hashed only when a pawn of the side to move stands ready to capture
//!   (pseudo-legal mode, legality of the capture ignored). The same key serves
//!   the transposition table, repetition detection, deduplication and the
//!   opening book. [`key_after`] updates a key incrementally and falls back to
//!   a full recomputation for the moves shakmaty cannot update cheaply.
//! * **FEN/EPD.** [`parse_fen`] accepts a FEN with or without move clocks
//!   (four-field EPD boards included) and rejects illegal positions with a
//!   typed reason. A stale en-passant square or castling right that does not
//!   match the board is repaired rather than rejected, as real data sets carry
//!   them.

use shakmaty::fen::Fen;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{
    CastlingMode, Chess, Color, EnPassantMode, FromSetup, Move, Position, PositionError, Setup,
};
use thiserror::Error;

use super::excerpt::excerpt;

/// The en-passant convention of our keys (see the module documentation).
pub const KEY_EP_MODE: EnPassantMode = EnPassantMode::PseudoLegal;

/// Why a FEN could not become a position.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PositionParseError {
    /// The text is not FEN syntax.
    #[error("invalid FEN syntax in {fen:?}: {reason}")]
    Syntax {
        /// The offending text ([`excerpt`] of it when long).
        fen: String,
        /// shakmaty's description.
        reason: String,
    },
    /// The FEN is well formed but the position cannot occur in chess.
    #[error("illegal position {fen:?}: {reason}")]
    Illegal {
        /// The offending text ([`excerpt`] of it when long).
        fen: String,
        /// Which rule is broken (e.g. "too many kings", "opposite check").
        reason: String,
    },
}

/// Parses a FEN (6 fields) or an EPD board (first 4 fields) into a legal
/// position.
///
/// Missing move clocks default to `0 1`. An en-passant square or castling
/// right inconsistent with the board is dropped; every other illegality
/// (missing or extra kings, side not to move in check, pawns on the back
/// rank, …) is an error.
///
/// # Errors
/// [`PositionParseError::Syntax`] when the text is not FEN,
/// [`PositionParseError::Illegal`] when the position is not legal.
///
/// # Examples
/// ```
/// let pos = engine::chess::position::parse_fen("8/8/8/8/8/8/8/K1k5 w - -").unwrap();
/// assert_eq!(engine::chess::position::fen_of(&pos), "8/8/8/8/8/8/8/K1k5 w - - 0 1");
/// ```
pub fn parse_fen(text: &str) -> Result<Chess, PositionParseError> {
    let text = text.trim();
    let fen: Fen =
        text.parse().map_err(
            |e: shakmaty::fen::ParseFenError| PositionParseError::Syntax {
                fen: excerpt(text),
                reason: e.to_string(),
            },
        )?;
    position_from_setup(fen.into_setup()).map_err(|reason| PositionParseError::Illegal {
        fen: excerpt(text),
        reason,
    })
}

/// Turns a [`Setup`] into a legal position with the same leniency as
/// [`parse_fen`]; the error is a human-readable reason.
///
/// # Errors
/// A description of the broken rule when the setup is not a legal position.
pub fn position_from_setup(setup: Setup) -> Result<Chess, String> {
    Chess::from_setup(setup, CastlingMode::Standard)
        .or_else(PositionError::ignore_invalid_ep_square)
        .or_else(PositionError::ignore_invalid_castling_rights)
        .map_err(|e| e.to_string())
}

/// The position as a 6-field FEN, with the en-passant square written only
/// when an en-passant capture is legal (python-chess's convention).
pub fn fen_of(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

/// Appends [`fen_of`]`(pos)` to `out` without allocating a string.
pub fn append_fen(pos: &Chess, out: &mut Vec<u8>) {
    Fen::from_position(pos, EnPassantMode::Legal).append_ascii_to(out);
}

/// The first four FEN fields (board, side, castling, en passant) as EPD
/// writes them.
pub fn epd_board_of(pos: &Chess) -> String {
    shakmaty::fen::Epd::from_position(pos, EnPassantMode::Legal).to_string()
}

/// Appends [`epd_board_of`]`(pos)` to `out` without allocating a string.
pub fn append_epd_board(pos: &Chess, out: &mut Vec<u8>) {
    shakmaty::fen::Epd::from_position(pos, EnPassantMode::Legal).append_ascii_to(out);
}

/// The Polyglot Zobrist key of a position (see the module documentation).
///
/// # Examples
/// ```
/// let start = shakmaty::Chess::default();
/// assert_eq!(engine::chess::position::key(&start), 0x463b96181691fc9c);
/// ```
pub fn key(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(KEY_EP_MODE).0
}

/// The key of `after`, the position reached by playing `m` in `before`
/// whose key is `before_key`: incremental where shakmaty can update the hash,
/// recomputed otherwise (king and castling-rights moves, double pushes,
/// positions with an en-passant square).
pub fn key_after(before: &Chess, before_key: u64, m: &Move, after: &Chess) -> u64 {
    match before.update_zobrist_hash::<Zobrist64>(Zobrist64(before_key), *m, KEY_EP_MODE) {
        Some(z) => z.0,
        None => key(after),
    }
}

/// The colour-flipped mirror of a position: the board turned upside down,
/// colours swapped and the other side to move. Its evaluation from the side
/// to move's point of view equals the original's.
pub fn mirrored(pos: &Chess) -> Chess {
    let setup = pos.to_setup(EnPassantMode::Always).into_mirrored();
    position_from_setup(setup).expect("the mirror of a legal position is legal")
}

/// Plays a move given in UCI notation (`e2e4`, `e7e8q`, `e1g1`).
///
/// # Errors
/// A description when the text is not UCI notation or the move is illegal.
pub fn play_uci(pos: &Chess, uci: &str) -> Result<(Chess, Move), String> {
    let parsed: shakmaty::uci::UciMove = uci
        .parse()
        .map_err(|_| format!("{:?} is not a move in UCI notation", excerpt(uci)))?;
    let m = parsed
        .to_move(pos)
        .map_err(|_| format!("{} is not legal in {}", excerpt(uci), fen_of(pos)))?;
    let mut next = pos.clone();
    next.play_unchecked(m);
    Ok((next, m))
}

/// The move in UCI notation with standard castling (`e1g1`).
pub fn uci_of(m: &Move) -> String {
    m.to_uci(CastlingMode::Standard).to_string()
}

/// Number of pieces and pawns on the board, kings included.
pub fn piece_count(pos: &Chess) -> u32 {
    pos.board().occupied().count() as u32
}

/// `+1` for White, `-1` for Black: the sign that turns a White-relative score
/// into the given side's point of view.
pub const fn color_sign(color: Color) -> i32 {
    match color {
        Color::White => 1,
        Color::Black => -1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after_moves(moves: &[&str]) -> Chess {
        let mut pos = Chess::default();
        for m in moves {
            pos = play_uci(&pos, m).unwrap().0;
        }
        pos
    }

    #[test]
    fn published_polyglot_keys() {
        assert_eq!(key(&Chess::default()), 0x463b96181691fc9c);
        assert_eq!(key(&after_moves(&["e2e4"])), 0x823c9b50fd114196);
        assert_eq!(key(&after_moves(&["e2e4", "d7d5"])), 0x0756b94461c50fb0);
        assert_eq!(
            key(&after_moves(&["e2e4", "d7d5", "e4e5"])),
            0x662fafb965db29d4
        );
        assert_eq!(
            key(&after_moves(&["e2e4", "d7d5", "e4e5", "f7f5"])),
            0x22a48b5a8e47ff78
        );
        assert_eq!(
            key(&after_moves(&["e2e4", "d7d5", "e4e5", "f7f5", "e1e2"])),
            0x652a607ca3f242c1
        );
        assert_eq!(
            key(&after_moves(&["a2a4", "b7b5", "h2h4", "b5b4", "c2c4"])),
            0x3c8123ea7b067637
        );
    }

    #[test]
    fn incremental_key_matches_full_key() {
        let mut pos = Chess::default();
        let mut k = key(&pos);
        // A game with captures, castling, en passant and promotion.
        for uci in [
            "e2e4", "d7d5", "e4d5", "c7c5", "d5c6", "b8c6", "g1f3", "g8f6", "f1c4", "e7e5", "e1g1",
            "f8c5", "d2d4", "e5d4", "c1g5", "e8g8", "b2b4", "d4d3", "b4c5", "d3c2", "a2a4",
            "c2b1q",
        ] {
            let (next, m) = play_uci(&pos, uci).unwrap();
            k = key_after(&pos, k, &m, &next);
            pos = next;
            assert_eq!(k, key(&pos), "after {uci}");
        }
    }

    #[test]
    fn parse_errors_are_typed() {
        assert!(matches!(
            parse_fen("not a fen"),
            Err(PositionParseError::Syntax { .. })
        ));
        assert!(matches!(
            parse_fen("8/8/8/8/8/8/8/K7 w - - 0 1"),
            Err(PositionParseError::Illegal { .. })
        ));
        // Side not to move in check.
        assert!(matches!(
            parse_fen("k7/8/8/8/8/8/8/K6r w - - 0 1")
                .and_then(|_| parse_fen("k6R/8/8/8/8/8/8/K7 w - - 0 1")),
            Err(PositionParseError::Illegal { .. })
        ));
        // A stale en-passant square is repaired.
        let pos = parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1").unwrap();
        assert_eq!(key(&pos), 0x463b96181691fc9c);
    }

    #[test]
    fn mirror_is_an_involution() {
        let pos = after_moves(&["e2e4", "c7c5", "g1f3"]);
        let m = mirrored(&pos);
        assert_eq!(m.turn(), Color::White);
        assert_eq!(fen_of(&mirrored(&m)), fen_of(&pos));
    }
}
