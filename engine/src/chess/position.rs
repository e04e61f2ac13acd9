//! The position layer: how every tool turns text into a legal [`Chess`]
//! position and how positions are keyed.
//!
//! The rules themselves are [`shakmaty`]'s; this module owns the conventions
//! that the whole workspace must agree on:
//!
//! * **Keys.** A position's key ([`key`]) depends only on what the position
//!   is: pieces, side to move, castling rights, and the en-passant file only
//!   when an en-passant capture is legal (as the FEN writer shows it and as
//!   the rules count positions for repetition). It is computed with the
//!   Polyglot random numbers, so it equals the Polyglot hash in every
//!   position but one where a pawn stands ready to capture en passant and may
//!   not (pinned, or its king in check the capture does not answer). The key
//!   serves the transposition table, repetition detection and deduplication;
//!   parse → key → write → parse gives the same key. [`key_after`] updates it
//!   incrementally and falls back to a full recomputation for the moves
//!   shakmaty cannot update cheaply.
//! * **Book keys.** Opening books use the Polyglot format's own hash
//!   ([`polyglot_key`]), computed exactly as the format, the polyglot program
//!   and python-chess's `chess.polyglot.zobrist_hash` do: the en-passant file
//!   is hashed whenever a pawn of the side to move stands ready to capture
//!   (legality of the capture ignored), so books stay interchangeable.
//! * **FEN/EPD.** [`parse_fen`] accepts a FEN with or without move clocks
//!   (four-field EPD boards included) and rejects illegal positions with a
//!   typed reason. The syntax is read as strictly as python-chess reads it
//!   (eight ranks of eight squares, no two digits in a row, no variant
//!   extensions such as pockets, promoted markers or `_` separators). A stale
//!   en-passant square or castling right that does not match the board is
//!   repaired rather than rejected, as real data sets carry them.

use shakmaty::fen::Fen;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{
    CastlingMode, Chess, Color, EnPassantMode, FromSetup, Move, Position, PositionError, Setup,
};
use thiserror::Error;

use super::excerpt::excerpt;

/// The en-passant convention of [`key`] (see the module documentation).
pub const KEY_EP_MODE: EnPassantMode = EnPassantMode::Legal;

/// The en-passant convention of [`polyglot_key`], the Polyglot format's.
pub const POLYGLOT_EP_MODE: EnPassantMode = EnPassantMode::PseudoLegal;

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
    check_fen_syntax(text).map_err(|reason| PositionParseError::Syntax {
        fen: excerpt(text),
        reason,
    })?;
    // shakmaty splits fields at single spaces only.
    let single_spaced =
        !text.contains("  ") && !text.contains(|c: char| c.is_whitespace() && c != ' ');
    let fields: std::borrow::Cow<str> = if single_spaced {
        text.into()
    } else {
        text.split_ascii_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .into()
    };
    let fen: Fen =
        fields.parse().map_err(
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

/// The strict syntax checks that shakmaty leaves out (it also reads the
/// variants' FEN extensions): fields separated by whitespace, at most six of
/// them; a board of eight ranks of eight squares, each a piece letter or a
/// digit 1–8 with no two digits in a row; a side `w` or `b`; castling `-` or
/// letters `KQkq` (or X-FEN files); an en-passant field `-` or a square;
/// move clocks of digits only. Allocates only for the error message.
///
/// # Errors
/// The first rule the text breaks.
pub fn check_fen_syntax(text: &str) -> Result<(), String> {
    if text.contains('_') {
        return Err("'_' is not a FEN field separator".to_string());
    }
    let count = text.split_ascii_whitespace().count();
    if count > 6 {
        return Err(format!("{count} fields, at most 6 expected"));
    }
    let mut fields = text.split_ascii_whitespace();
    let Some(board) = fields.next() else {
        return Err("empty FEN".to_string());
    };
    let ranks = board.split('/').count();
    if ranks != 8 {
        return Err(format!("{ranks} ranks in the board, 8 expected"));
    }
    for (i, rank) in board.split('/').enumerate() {
        let name = 8 - i;
        let (mut squares, mut last_was_digit) = (0u32, false);
        for c in rank.chars() {
            match c {
                '1'..='8' if last_was_digit => {
                    return Err(format!("two digits in a row in rank {name}"));
                }
                '1'..='8' => {
                    squares += c.to_digit(10).expect("a digit");
                    last_was_digit = true;
                }
                'p' | 'n' | 'b' | 'r' | 'q' | 'k' | 'P' | 'N' | 'B' | 'R' | 'Q' | 'K' => {
                    squares += 1;
                    last_was_digit = false;
                }
                _ => return Err(format!("{c:?} in rank {name} is not a piece or a count")),
            }
        }
        if squares != 8 {
            return Err(format!("rank {name} has {squares} squares, 8 expected"));
        }
    }
    if let Some(side) = fields.next()
        && !matches!(side, "w" | "b")
    {
        return Err("the side to move is not 'w' or 'b'".to_string());
    }
    if let Some(castling) = fields.next()
        && castling != "-"
        && !castling
            .chars()
            .all(|c| matches!(c, 'K' | 'Q' | 'k' | 'q' | 'A'..='H' | 'a'..='h'))
    {
        return Err("castling rights are not '-' or letters KQkq".to_string());
    }
    if let Some(ep) = fields.next() {
        let b = ep.as_bytes();
        let square = b.len() == 2 && (b'a'..=b'h').contains(&b[0]) && (b'1'..=b'8').contains(&b[1]);
        if ep != "-" && !square {
            return Err("the en-passant field is not '-' or a square".to_string());
        }
    }
    for clock in fields {
        if !clock.bytes().all(|b| b.is_ascii_digit()) {
            return Err("a move clock is not a number".to_string());
        }
    }
    Ok(())
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

/// The key of a position: its identity for the transposition table,
/// repetitions and deduplication (see the module documentation).
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
    key_update(before, before_key, m).unwrap_or_else(|| key(after))
}

/// The key of the position reached by playing `m` in `before` (whose key is
/// `before_key`) where it can be updated without playing the move: `None`
/// for the moves [`key_after`] recomputes the key of.
pub fn key_update(before: &Chess, before_key: u64, m: &Move) -> Option<u64> {
    before
        .update_zobrist_hash::<Zobrist64>(Zobrist64(before_key), *m, KEY_EP_MODE)
        .map(|z| z.0)
}

/// The Zobrist hash of `after` under `mode`, updated from `before`'s where
/// shakmaty can, recomputed otherwise.
fn hash_after(
    before: &Chess,
    before_key: u64,
    m: &Move,
    after: &Chess,
    mode: EnPassantMode,
) -> u64 {
    match before.update_zobrist_hash::<Zobrist64>(Zobrist64(before_key), *m, mode) {
        Some(z) => z.0,
        None => after.zobrist_hash::<Zobrist64>(mode).0,
    }
}

/// The Polyglot book hash of a position, as the Polyglot format defines it
/// (see the module documentation); the key of opening-book entries.
///
/// # Examples
/// ```
/// let start = shakmaty::Chess::default();
/// assert_eq!(engine::chess::position::polyglot_key(&start), 0x463b96181691fc9c);
/// ```
pub fn polyglot_key(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(POLYGLOT_EP_MODE).0
}

/// [`key_after`] for [`polyglot_key`].
pub fn polyglot_key_after(before: &Chess, before_key: u64, m: &Move, after: &Chess) -> u64 {
    hash_after(before, before_key, m, after, POLYGLOT_EP_MODE)
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

    /// The fuzz target `fen` found it: a pawn ready to capture en passant
    /// that may not (the capture would open the g2 bishop's diagonal to its
    /// king). The key, like the written FEN, leaves the square out, so the
    /// FEN round trip keeps the key; the book hash keeps it, as Polyglot does.
    #[test]
    fn key_ignores_an_en_passant_square_that_cannot_be_used() {
        let text = "r4rn1/pb2bppp/np3n2/2pkN3/N2pPB2/6P1/PPP2PBP/R4RK1 b - e3";
        let pos = parse_fen(text).unwrap();
        let written = fen_of(&pos);
        assert_eq!(
            written,
            "r4rn1/pb2bppp/np3n2/2pkN3/N2pPB2/6P1/PPP2PBP/R4RK1 b - - 0 1"
        );
        let again = parse_fen(&written).unwrap();
        assert_eq!(key(&again), key(&pos));
        assert_ne!(polyglot_key(&pos), polyglot_key(&again));
        assert_eq!(key(&pos), polyglot_key(&again));
        // Where the capture is legal, both hash the file.
        let ep = after_moves(&["e2e4", "a7a6", "e4e5", "d7d5"]);
        assert_eq!(key(&ep), polyglot_key(&ep));
        assert_eq!(fen_of(&ep).split(' ').nth(3), Some("d6"));
        assert_eq!(key(&parse_fen(&fen_of(&ep)).unwrap()), key(&ep));
    }

    #[test]
    fn incremental_keys_match_full_keys_around_unusable_en_passant() {
        // White king a5, pawn b5, Black rook h5: after ...c7c5 the capture
        // b5xc6 would empty the rank between the rook and the king.
        let mut pos = parse_fen("4k3/2p5/8/KP5r/8/8/8/8 b - - 0 1").unwrap();
        let (mut k, mut pk) = (key(&pos), polyglot_key(&pos));
        for uci in ["c7c5", "a5a4", "e8e7"] {
            let (next, m) = play_uci(&pos, uci).unwrap();
            k = key_after(&pos, k, &m, &next);
            pk = polyglot_key_after(&pos, pk, &m, &next);
            pos = next;
            assert_eq!(k, key(&pos), "after {uci}");
            assert_eq!(pk, polyglot_key(&pos), "after {uci}");
            if uci == "c7c5" {
                assert_ne!(k, pk, "the pinned b5 pawn's capture is not legal");
            }
        }
    }

    /// python-chess refuses these; so do we (shakmaty alone reads them).
    #[test]
    fn strict_fen_syntax() {
        for bad in [
            "r4rn1/pb2bppp/np3n2/2pkN3/N2pPB2/6P1/PPP2PBP/R22RK1 b - -",
            "8/8/8/8/8/8/8/K1k41 w - -",
            "8/8/8/8/8/8/8/K1k5/ w - -",
            "8/8/8/8/8/8/K1k5 w - -",
            "8/8/8/8/8/8/8/K1k5_w_-_-",
            "8/8/8/8/8/8/8/K1k5 w - - 0 1 extra",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/ w KQkq - 0 1",
            "rnbqkbn1/pppppppQ~/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - +1 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3+3 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1",
            "rnbqkbnr/pppppppp/08/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        ] {
            assert!(
                matches!(parse_fen(bad), Err(PositionParseError::Syntax { .. })),
                "{bad}: {:?}",
                parse_fen(bad)
            );
        }
        for good in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR  w\tKQkq - 0 1",
        ] {
            assert!(parse_fen(&good.replace("\\t", "\t")).is_ok(), "{good}");
        }
    }

    #[test]
    fn mirror_is_an_involution() {
        let pos = after_moves(&["e2e4", "c7c5", "g1f3"]);
        let m = mirrored(&pos);
        assert_eq!(m.turn(), Color::White);
        assert_eq!(fen_of(&mirrored(&m)), fen_of(&pos));
    }
}
