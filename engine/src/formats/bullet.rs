//! bullet's data formats: the text format `FEN | score | result` and the
//! 32-byte binary `ChessBoard` record of the `bulletformat` crate, which
//! NNUE trainers (bullet and the tools around it) read.
//!
//! **Text.** One position per line: a FEN, the search score in centipawns
//! and the game result, separated by `|`; score and result are from
//! White's point of view (`1.0`, `0.5`, `0.0`), as bullet's converter
//! expects. [`append_text`] writes it; it is read by
//! [`crate::formats::labeled::parse_line`] like every other line format.
//!
//! **Binary.** Records of [`RECORD_BYTES`] bytes without a header, each the
//! in-memory layout of `bulletformat::ChessBoard` (`#[repr(C)]`, little
//! endian), seen from the side to move: when Black is to move the board is
//! flipped vertically and the colours swapped, so "our" pieces are always
//! the side to move's.
//!
//! | bytes | field | meaning |
//! |---|---|---|
//! | 0..8 | `occ` | occupancy bitboard (a1 = bit 0), u64 |
//! | 8..24 | `pcs` | one nibble per occupied square in ascending order: bit 3 = the opponent's piece, bits 0–2 = pawn, knight, bishop, rook, queen, king (0–5); the first square in the low nibble |
//! | 24..26 | `score` | search score, side to move's view, i16 |
//! | 26 | `result` | 0 loss, 1 draw, 2 win for the side to move |
//! | 27 | `ksq` | the side to move's king square |
//! | 28 | `opp_ksq` | the opponent's king square, flipped vertically (`^ 56`) |
//! | 29..32 | `extra` | zero |
//!
//! The record keeps no side to move, castling rights, en-passant square or
//! move clocks: [`decode`] gives back the position as the side to move sees
//! it (White to move, the board flipped when Black was to move), with score
//! and result from that side's view, which is the same training example.
//! A binary file is recognised by [`is_binary`]: by its name (`.bullet`,
//! before any `.gz`/`.zst`) or by content, since the zero `extra` bytes put a
//! NUL byte in every record and text formats never contain one.

use std::io::{self, Read};
use std::path::Path;

use shakmaty::{Bitboard, Board, Chess, Color, Piece, Position, Role, Setup, Square};
use thiserror::Error;

use crate::chess::position::{append_fen, position_from_setup};
use crate::formats::labeled::{GameResult, LabeledPosition};

/// Size of one binary record.
pub const RECORD_BYTES: usize = 32;
/// File name extension that marks a binary file (before `.gz`/`.zst`).
pub const BINARY_EXTENSION: &str = "bullet";
/// Byte offsets of the record's fields.
const PIECES_AT: usize = 8;
/// See [`PIECES_AT`].
const SCORE_AT: usize = 24;
/// See [`PIECES_AT`].
const RESULT_AT: usize = 26;
/// See [`PIECES_AT`].
const KING_AT: usize = 27;
/// See [`PIECES_AT`].
const OPPONENT_KING_AT: usize = 28;
/// The nibble bit of the opponent's pieces.
const OPPONENT_BIT: u8 = 8;
/// XOR of a square index that flips the board vertically.
const FLIP: u8 = 56;
/// Most pieces a record can hold (16 bytes of nibbles).
const MAX_PIECES: u32 = 32;
/// The roles in nibble order (0 = pawn … 5 = king).
const ROLES: [Role; 6] = [
    Role::Pawn,
    Role::Knight,
    Role::Bishop,
    Role::Rook,
    Role::Queen,
    Role::King,
];

/// Why a position cannot be written in a bullet format.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum EncodeError {
    /// Both formats need the game result.
    #[error("bullet formats need a game result")]
    MissingResult,
    /// Both formats need a search score.
    #[error("bullet formats need a search score")]
    MissingScore,
    /// The binary score field is an i16.
    #[error("score {0} does not fit bullet's 16-bit score field")]
    ScoreOutOfRange(i32),
}

/// What is wrong with one binary record.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// More than 32 occupied squares.
    #[error("{0} occupied squares (at most 32)")]
    TooManyPieces(u32),
    /// A piece nibble outside 0–5 and 8–13.
    #[error("piece code {0} is not a chess piece")]
    BadPiece(u8),
    /// A result byte other than 0, 1, 2.
    #[error("result byte {0} is not 0, 1 or 2")]
    BadResult(u8),
    /// The king-square fields do not match the board.
    #[error("king squares {ours}/{theirs} disagree with the board")]
    KingSquares {
        /// `ksq` as stored.
        ours: u8,
        /// `opp_ksq` as stored.
        theirs: u8,
    },
    /// The board is not a legal position.
    #[error("illegal position: {0}")]
    Illegal(String),
}

/// Why reading a binary file failed (fatal, unlike a bad record).
#[derive(Debug, Error)]
pub enum ReadError {
    /// The underlying reader failed.
    #[error("read error after {records} records: {source}")]
    Io {
        /// Complete records read before the error.
        records: u64,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The data ends inside a record.
    #[error("truncated: {bytes} bytes after record {records} (records are 32 bytes)")]
    Truncated {
        /// Complete records before the cut.
        records: u64,
        /// Bytes of the partial record.
        bytes: usize,
    },
}

fn labels(record: &LabeledPosition) -> Result<(i32, GameResult), EncodeError> {
    let result = record.result.ok_or(EncodeError::MissingResult)?;
    let score = record.score.ok_or(EncodeError::MissingScore)?;
    Ok((score, result))
}

/// White's point of view of a side-to-move value.
fn white_view(turn: Color, value: i32) -> i32 {
    match turn {
        Color::White => value,
        Color::Black => -value,
    }
}

/// Appends the text line of `record` (without newline): `<fen> | <score>
/// | <result>`, both White-relative.
///
/// # Errors
/// When the record has no result or no score.
pub fn append_text(record: &LabeledPosition, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    use std::io::Write as _;
    let (score, result) = labels(record)?;
    append_fen(&record.position, out);
    // Writing to a Vec cannot fail.
    let _ = write!(
        out,
        " | {} | {}",
        white_view(record.position.turn(), score),
        result.decimal()
    );
    Ok(())
}

/// The binary record of `record`.
///
/// # Errors
/// When the record has no result or no score, or the score does not fit
/// 16 bits.
pub fn encode(record: &LabeledPosition) -> Result<[u8; RECORD_BYTES], EncodeError> {
    let (score, result) = labels(record)?;
    let score = i16::try_from(score).map_err(|_| EncodeError::ScoreOutOfRange(score))?;
    let pos = &record.position;
    let us = pos.turn();
    let view = |sq: Square| -> u8 {
        let index = sq as u8;
        if us == Color::White {
            index
        } else {
            index ^ FLIP
        }
    };
    // Nibbles by square as the side to move sees the board.
    let mut nibbles = [None::<u8>; 64];
    for (sq, piece) in pos.board().iter() {
        let role = ROLES
            .iter()
            .position(|&r| r == piece.role)
            .expect("every role is listed") as u8;
        let colour = if piece.color == us { 0 } else { OPPONENT_BIT };
        nibbles[usize::from(view(sq))] = Some(colour | role);
    }
    let mut out = [0u8; RECORD_BYTES];
    let mut occupancy = 0u64;
    let mut index = 0;
    for (sq, nibble) in nibbles.iter().enumerate() {
        if let Some(nibble) = nibble {
            occupancy |= 1 << sq;
            out[PIECES_AT + index / 2] |= nibble << (4 * (index & 1));
            index += 1;
        }
    }
    out[..PIECES_AT].copy_from_slice(&occupancy.to_le_bytes());
    out[SCORE_AT..SCORE_AT + 2].copy_from_slice(&score.to_le_bytes());
    let us_result = match (result, us) {
        (GameResult::Draw, _) => 1,
        (GameResult::WhiteWin, Color::White) | (GameResult::BlackWin, Color::Black) => 2,
        _ => 0,
    };
    out[RESULT_AT] = us_result;
    let king = |color: Color| pos.board().king_of(color).map_or(0, view);
    out[KING_AT] = king(us);
    out[OPPONENT_KING_AT] = king(!us) ^ FLIP;
    Ok(out)
}

/// The position, result and score of a binary record, as the side to move
/// sees them (White to move; no castling rights, en-passant square or move
/// clocks, which the record does not keep).
///
/// # Errors
/// What is wrong with the record.
pub fn decode(bytes: &[u8; RECORD_BYTES]) -> Result<LabeledPosition, DecodeError> {
    let mut occupancy = u64::from_le_bytes(bytes[..PIECES_AT].try_into().expect("8 bytes"));
    let count = occupancy.count_ones();
    if count > MAX_PIECES {
        return Err(DecodeError::TooManyPieces(count));
    }
    let mut board = Board::empty();
    let mut index = 0;
    while occupancy != 0 {
        let sq = Square::new(occupancy.trailing_zeros());
        occupancy &= occupancy - 1;
        let nibble = (bytes[PIECES_AT + index / 2] >> (4 * (index & 1))) & 0xf;
        index += 1;
        let role = *ROLES
            .get(usize::from(nibble & !OPPONENT_BIT))
            .ok_or(DecodeError::BadPiece(nibble))?;
        let color = if nibble & OPPONENT_BIT == 0 {
            Color::White
        } else {
            Color::Black
        };
        board.set_piece_at(sq, Piece { color, role });
    }
    let result = match bytes[RESULT_AT] {
        0 => GameResult::BlackWin,
        1 => GameResult::Draw,
        2 => GameResult::WhiteWin,
        other => return Err(DecodeError::BadResult(other)),
    };
    let (ours, theirs) = (bytes[KING_AT], bytes[OPPONENT_KING_AT]);
    let king = |color| board.king_of(color).map(|sq| sq as u8);
    if king(Color::White) != Some(ours) || king(Color::Black).map(|sq| sq ^ FLIP) != Some(theirs) {
        return Err(DecodeError::KingSquares { ours, theirs });
    }
    let setup = Setup {
        board,
        turn: Color::White,
        castling_rights: Bitboard::EMPTY,
        ..Setup::empty()
    };
    let position: Chess = position_from_setup(setup).map_err(DecodeError::Illegal)?;
    let score = i16::from_le_bytes([bytes[SCORE_AT], bytes[SCORE_AT + 1]]);
    Ok(LabeledPosition {
        position,
        result: Some(result),
        score: Some(i32::from(score)),
    })
}

/// Whether the file at `path`, whose first decompressed bytes are `head`
/// (up to [`RECORD_BYTES`] of them), holds binary records: its name ends
/// in `.bullet` (before any `.gz`/`.zst`), or `head` contains a NUL byte.
pub fn is_binary(path: &Path, head: &[u8]) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase());
    let name = name.as_deref().unwrap_or("");
    let stem = name
        .strip_suffix(".gz")
        .or_else(|| name.strip_suffix(".zst"))
        .unwrap_or(name);
    stem.ends_with(&format!(".{BINARY_EXTENSION}")) || head.contains(&0)
}

/// Reads up to [`RECORD_BYTES`] bytes from `reader` (fewer only at its
/// end), for [`is_binary`]; the caller puts them back in front of the rest
/// (`head.chain(reader)`).
///
/// # Errors
/// When reading fails.
pub fn read_head(reader: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(RECORD_BYTES);
    reader
        .by_ref()
        .take(RECORD_BYTES as u64)
        .read_to_end(&mut head)?;
    Ok(head)
}

/// Streams binary records in blocks, counting them; a partial record at
/// the end is a [`ReadError::Truncated`].
pub struct RecordReader<R> {
    input: R,
    records: u64,
}

impl<R: Read> RecordReader<R> {
    /// Reads records from `input`.
    pub fn new(input: R) -> Self {
        RecordReader { input, records: 0 }
    }

    /// Complete records read so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Replaces `block` with the next (up to) `max_records` records;
    /// returns how many (0 at the end of the data).
    ///
    /// # Errors
    /// A read error, or data that ends inside a record.
    pub fn read_block(
        &mut self,
        block: &mut Vec<[u8; RECORD_BYTES]>,
        max_records: usize,
    ) -> Result<usize, ReadError> {
        block.clear();
        let mut record = [0u8; RECORD_BYTES];
        while block.len() < max_records.max(1) {
            let mut filled = 0;
            while filled < RECORD_BYTES {
                match self.input.read(&mut record[filled..]) {
                    Ok(0) => break,
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(source) => {
                        return Err(ReadError::Io {
                            records: self.records,
                            source,
                        });
                    }
                }
            }
            match filled {
                0 => break,
                RECORD_BYTES => {
                    block.push(record);
                    self.records += 1;
                }
                bytes => {
                    return Err(ReadError::Truncated {
                        records: self.records,
                        bytes,
                    });
                }
            }
        }
        Ok(block.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::position::{fen_of, mirrored, parse_fen};
    use crate::formats::labeled::parse_line;

    fn labeled(fen: &str, score: i32, result: GameResult) -> LabeledPosition {
        LabeledPosition {
            position: parse_fen(fen).unwrap(),
            result: Some(result),
            score: Some(score),
        }
    }

    #[test]
    fn text_reads_back_through_the_labeled_reader() {
        for record in [
            labeled(
                "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
                35,
                GameResult::WhiteWin,
            ),
            labeled("8/8/4k3/8/2pP4/8/8/4K3 b - d3 0 40", -120, GameResult::Draw),
        ] {
            let mut line = Vec::new();
            append_text(&record, &mut line).unwrap();
            let text = String::from_utf8(line).unwrap();
            assert_eq!(parse_line(&text).unwrap().unwrap(), record, "{text}");
        }
        // White-relative on the line: Black to move with +120 for Black.
        let mut line = Vec::new();
        append_text(
            &labeled("4k3/8/8/8/8/8/8/4K3 b - - 0 1", 120, GameResult::BlackWin),
            &mut line,
        )
        .unwrap();
        assert_eq!(line, b"4k3/8/8/8/8/8/8/4K3 b - - 0 1 | -120 | 0.0");
    }

    #[test]
    fn records_are_seen_from_the_side_to_move() {
        let white = labeled(
            "r3k2r/ppp2ppp/2n5/3q4/3P4/2N5/PP3PPP/R2QK2R w KQkq - 0 12",
            -40,
            GameResult::BlackWin,
        );
        let black = LabeledPosition {
            position: mirrored(&white.position),
            result: Some(GameResult::WhiteWin),
            score: Some(-40),
        };
        // The same position from the side to move's view is the same record.
        assert_eq!(encode(&white).unwrap(), encode(&black).unwrap());
        let bytes = encode(&white).unwrap();
        assert_eq!(bytes[RESULT_AT], 0);
        assert_eq!(i16::from_le_bytes([bytes[24], bytes[25]]), -40);
        assert_eq!(bytes[KING_AT], Square::E1 as u8);
        assert_eq!(bytes[OPPONENT_KING_AT], Square::E8 as u8 ^ FLIP);
        assert_eq!(bytes[29..], [0, 0, 0]);
        let back = decode(&bytes).unwrap();
        assert_eq!(
            fen_of(&back.position),
            "r3k2r/ppp2ppp/2n5/3q4/3P4/2N5/PP3PPP/R2QK2R w - - 0 1"
        );
        assert_eq!(
            (back.score, back.result),
            (Some(-40), Some(GameResult::BlackWin))
        );
        let back_black = decode(&encode(&black).unwrap()).unwrap();
        assert_eq!(back_black, back);
    }

    #[test]
    fn bad_records_and_truncation() {
        let good = encode(&labeled(
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
            0,
            GameResult::Draw,
        ))
        .unwrap();
        let mut bad = good;
        bad[RESULT_AT] = 3;
        assert_eq!(decode(&bad), Err(DecodeError::BadResult(3)));
        let mut bad = good;
        bad[PIECES_AT] = 0x76;
        assert_eq!(decode(&bad), Err(DecodeError::BadPiece(6)));
        let mut bad = good;
        bad[KING_AT] = 3;
        assert!(matches!(decode(&bad), Err(DecodeError::KingSquares { .. })));
        let mut data = good.repeat(3);
        data.truncate(3 * RECORD_BYTES - 5);
        let mut reader = RecordReader::new(data.as_slice());
        let mut block = Vec::new();
        assert!(matches!(
            reader.read_block(&mut block, 10),
            Err(ReadError::Truncated {
                records: 2,
                bytes: 27
            })
        ));
        let mut reader = RecordReader::new(&good[..]);
        assert_eq!(reader.read_block(&mut block, 10).unwrap(), 1);
        assert_eq!(reader.read_block(&mut block, 10).unwrap(), 0);
    }

    #[test]
    fn binary_files_are_recognised() {
        let record = encode(&labeled(
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
            0,
            GameResult::Draw,
        ))
        .unwrap();
        assert!(is_binary(Path::new("x.data"), &record));
        assert!(is_binary(Path::new("x.bullet.zst"), b""));
        assert!(!is_binary(Path::new("x.epd"), b"4k3/8/8/8/8/8/8/4K3 w - -"));
    }
}
