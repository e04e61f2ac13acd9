//! Polyglot opening books: reading, validating, choosing moves and writing.
//!
//! A Polyglot `.bin` book is a flat array of 16-byte big-endian entries
//! `(key: u64, move: u16, weight: u16, learn: u32)` sorted by key (and, by
//! convention, by weight descending within a key), where the key is the
//! position's Polyglot Zobrist hash ([`crate::chess::position::polyglot_key`]). Moves are
//! encoded as `to` square in bits 0–5, `from` square in bits 6–11 (square
//! index = rank × 8 + file, a1 = 0) and the promotion piece in bits 12–14
//! (1 knight, 2 bishop, 3 rook, 4 queen); castling is written as the king
//! moving onto its own rook (`e1h1`, `e1a1`, `e8h8`, `e8a8`). Decoding
//! matches an entry against the legal moves of the position, so an entry
//! that is not a legal move there (a hash collision, a castle whose rights
//! are gone, garbage) is ignored rather than played.
//!
//! [`PolyglotBook::open`] validates the whole file up front: a size that is
//! not a multiple of 16 or keys out of order are typed [`BookError`]s, never a
//! panic or a silently wrong lookup. [`write_book`] sorts and writes
//! atomically through [`crate::formats::atomic_file`].

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use rand::Rng;
use shakmaty::{Chess, Move, Position, Role, Square};
use thiserror::Error;

use crate::formats::atomic_file::{AtomicFile, AtomicFileError};

/// Size in bytes of one book entry.
pub const ENTRY_SIZE: usize = 16;

/// Why a book could not be read or written.
#[derive(Debug, Error)]
pub enum BookError {
    /// The file could not be read.
    #[error("{path}: cannot read the book: {source}")]
    Io {
        /// The book's path.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// The size is not a whole number of 16-byte entries (truncated or not a
    /// Polyglot book).
    #[error(
        "{path}: not a Polyglot book: its size ({size} bytes) is not a multiple of 16 (truncated or corrupt?)"
    )]
    SizeNotMultipleOf16 {
        /// The book's path.
        path: PathBuf,
        /// The file size in bytes.
        size: u64,
    },
    /// An entry's key is smaller than the previous entry's, so lookups by
    /// binary search would be wrong.
    #[error(
        "{path}: not a Polyglot book: entry {index} (byte offset {}) has a smaller key than the entry before it; the entries must be sorted by key",
        *index as u64 * ENTRY_SIZE as u64
    )]
    Unsorted {
        /// The book's path.
        path: PathBuf,
        /// Index of the first entry out of order.
        index: usize,
    },
    /// Writing the book's bytes failed.
    #[error("{path}: cannot write the book")]
    Write {
        /// The book's path.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// Creating or committing the atomic output failed.
    #[error(transparent)]
    Commit(#[from] AtomicFileError),
}

/// One book entry: a move playable in the position with the given key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BookEntry {
    /// Polyglot Zobrist key of the position.
    pub key: u64,
    /// The move in Polyglot encoding (see [`encode_move`]).
    pub raw_move: u16,
    /// Relative weight; 0 means "known but never played".
    pub weight: u16,
    /// The learning field, unused by us and written as 0.
    pub learn: u32,
}

impl BookEntry {
    /// Parses the 16 big-endian bytes of an entry.
    pub fn from_bytes(bytes: &[u8; ENTRY_SIZE]) -> BookEntry {
        let (key, rest) = bytes.split_at(8);
        let (raw_move, rest) = rest.split_at(2);
        let (weight, learn) = rest.split_at(2);
        BookEntry {
            key: u64::from_be_bytes(key.try_into().expect("8 bytes")),
            raw_move: u16::from_be_bytes(raw_move.try_into().expect("2 bytes")),
            weight: u16::from_be_bytes(weight.try_into().expect("2 bytes")),
            learn: u32::from_be_bytes(learn.try_into().expect("4 bytes")),
        }
    }

    /// The 16 big-endian bytes of the entry.
    pub fn to_bytes(&self) -> [u8; ENTRY_SIZE] {
        let mut bytes = [0u8; ENTRY_SIZE];
        bytes[..8].copy_from_slice(&self.key.to_be_bytes());
        bytes[8..10].copy_from_slice(&self.raw_move.to_be_bytes());
        bytes[10..12].copy_from_slice(&self.weight.to_be_bytes());
        bytes[12..].copy_from_slice(&self.learn.to_be_bytes());
        bytes
    }
}

/// Sorts entries into book order: key ascending, then weight descending,
/// then move ascending (so equal inputs always give identical files).
pub fn sort_entries(entries: &mut [BookEntry]) {
    entries.sort_unstable_by(|a, b| {
        a.key
            .cmp(&b.key)
            .then(b.weight.cmp(&a.weight))
            .then(a.raw_move.cmp(&b.raw_move))
            .then(a.learn.cmp(&b.learn))
    });
}

/// The Polyglot promotion code of a piece (0 for none).
fn promotion_code(role: Option<Role>) -> u16 {
    match role {
        None | Some(Role::Pawn) | Some(Role::King) => 0,
        Some(Role::Knight) => 1,
        Some(Role::Bishop) => 2,
        Some(Role::Rook) => 3,
        Some(Role::Queen) => 4,
    }
}

fn from_to(from: Square, to: Square) -> u16 {
    (to.to_u32() as u16) | ((from.to_u32() as u16) << 6)
}

/// The Polyglot encoding of a move: castling as king-takes-own-rook
/// (`e1h1`), promotions with their piece code. `None` for piece drops, which
/// standard chess does not have.
///
/// # Examples
/// ```
/// use shakmaty::{Move, Role, Square};
/// let castle = Move::Castle { king: Square::E1, rook: Square::H1 };
/// assert_eq!(engine::formats::book::encode_move(&castle), Some(0x0107));
/// ```
pub fn encode_move(m: &Move) -> Option<u16> {
    match *m {
        Move::Normal {
            from,
            to,
            promotion,
            ..
        } => Some(from_to(from, to) | (promotion_code(promotion) << 12)),
        Move::EnPassant { from, to } => Some(from_to(from, to)),
        Move::Castle { king, rook } => Some(from_to(king, rook)),
        Move::Put { .. } => None,
    }
}

/// The legal move of `pos` whose Polyglot encoding is `raw_move`, if any.
/// Castling entries (`e1h1`, …) decode to a castling move only when the king
/// stands on its start square and that castle is legal.
pub fn decode_move(pos: &Chess, raw_move: u16) -> Option<Move> {
    pos.legal_moves()
        .into_iter()
        .find(|m| encode_move(m) == Some(raw_move))
}

/// The move in the `from`/`to`/promotion text of the raw encoding
/// (`e1h1`, `e7e8q`), without needing a position; for listings of entries
/// whose position is unknown.
pub fn raw_move_text(raw_move: u16) -> String {
    let square = |index: u16| {
        let file = (b'a' + (index & 7) as u8) as char;
        let rank = (b'1' + ((index >> 3) & 7) as u8) as char;
        format!("{file}{rank}")
    };
    let promotion = match (raw_move >> 12) & 7 {
        0 => "",
        1 => "n",
        2 => "b",
        3 => "r",
        4 => "q",
        _ => "?",
    };
    format!(
        "{}{}{promotion}",
        square((raw_move >> 6) & 63),
        square(raw_move & 63)
    )
}

/// A Polyglot book held in memory, validated and sorted by key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolyglotBook {
    entries: Vec<BookEntry>,
}

impl PolyglotBook {
    /// Reads and validates a book file.
    ///
    /// # Errors
    /// [`BookError::Io`] when the file cannot be read,
    /// [`BookError::SizeNotMultipleOf16`] when it is truncated or not a book,
    /// [`BookError::Unsorted`] when its keys are out of order.
    pub fn open(path: &Path) -> Result<PolyglotBook, BookError> {
        let bytes = std::fs::read(path).map_err(|source| BookError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        PolyglotBook::from_bytes(&bytes, path)
    }

    /// Parses and validates the bytes of a book; `path` only names the
    /// source in errors.
    ///
    /// # Errors
    /// As [`PolyglotBook::open`], minus the I/O error.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<PolyglotBook, BookError> {
        if !bytes.len().is_multiple_of(ENTRY_SIZE) {
            return Err(BookError::SizeNotMultipleOf16 {
                path: path.to_path_buf(),
                size: bytes.len() as u64,
            });
        }
        let entries: Vec<BookEntry> = bytes
            .chunks_exact(ENTRY_SIZE)
            .map(|chunk| BookEntry::from_bytes(chunk.try_into().expect("16-byte chunk")))
            .collect();
        if let Some(index) = entries.windows(2).position(|w| w[1].key < w[0].key) {
            return Err(BookError::Unsorted {
                path: path.to_path_buf(),
                index: index + 1,
            });
        }
        Ok(PolyglotBook { entries })
    }

    /// A book of the given entries, sorted into book order.
    pub fn from_entries(mut entries: Vec<BookEntry>) -> PolyglotBook {
        sort_entries(&mut entries);
        PolyglotBook { entries }
    }

    /// All entries in file order.
    pub fn entries(&self) -> &[BookEntry] {
        &self.entries
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the book has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries of the position with the given key (binary search), in
    /// file order.
    pub fn entries_for(&self, key: u64) -> &[BookEntry] {
        let start = self.entries.partition_point(|e| e.key < key);
        let end = start + self.entries[start..].partition_point(|e| e.key == key);
        &self.entries[start..end]
    }

    /// The book moves of a position that are legal there, with their
    /// weights, in file order (heaviest first in a well-formed book); a
    /// move listed twice is reported once, with its first weight.
    pub fn moves(&self, pos: &Chess) -> Vec<(Move, u16)> {
        let entries = self.entries_for(crate::chess::position::polyglot_key(pos));
        if entries.is_empty() {
            return Vec::new();
        }
        let legal: Vec<(Move, u16)> = pos
            .legal_moves()
            .into_iter()
            .filter_map(|m| encode_move(&m).map(|raw| (m, raw)))
            .collect();
        let mut moves: Vec<(Move, u16)> = Vec::with_capacity(entries.len());
        for entry in entries {
            if let Some((m, _)) = legal.iter().find(|(_, raw)| *raw == entry.raw_move)
                && !moves.iter().any(|(seen, _)| seen == m)
            {
                moves.push((*m, entry.weight));
            }
        }
        moves
    }

    /// A book move for `pos` chosen at random in proportion to the weights;
    /// weight-0 moves are never chosen. `None` when the position is not in
    /// the book or all its legal book moves have weight 0.
    pub fn choose_move<R: Rng + ?Sized>(&self, pos: &Chess, rng: &mut R) -> Option<Move> {
        let moves = self.moves(pos);
        let total: u64 = moves.iter().map(|&(_, w)| u64::from(w)).sum();
        if total == 0 {
            return None;
        }
        let mut pick = rng.random_range(0..total);
        for (m, weight) in moves {
            let weight = u64::from(weight);
            if pick < weight {
                return Some(m);
            }
            pick -= weight;
        }
        unreachable!("the pick is below the total weight")
    }

    /// A random book line from `pos`: book moves chosen as by
    /// [`PolyglotBook::choose_move`] until the position leaves the book or
    /// `max_plies` moves were played (for starting games from book lines).
    pub fn random_line<R: Rng + ?Sized>(
        &self,
        pos: &Chess,
        rng: &mut R,
        max_plies: usize,
    ) -> Vec<Move> {
        let mut line = Vec::new();
        let mut pos = pos.clone();
        while line.len() < max_plies {
            let Some(m) = self.choose_move(&pos, rng) else {
                break;
            };
            pos.play_unchecked(m);
            line.push(m);
        }
        line
    }

    /// Writes the book atomically to `path`.
    ///
    /// # Errors
    /// As [`write_book`].
    pub fn write(&self, path: &Path) -> Result<(), BookError> {
        write_sorted(path, &self.entries)
    }
}

/// Sorts `entries` into book order and writes them atomically to `path`.
///
/// # Errors
/// [`BookError::Commit`] when the output cannot be created or committed,
/// [`BookError::Write`] when writing fails.
pub fn write_book(path: &Path, entries: &[BookEntry]) -> Result<(), BookError> {
    let mut sorted = entries.to_vec();
    sort_entries(&mut sorted);
    write_sorted(path, &sorted)
}

fn write_sorted(path: &Path, entries: &[BookEntry]) -> Result<(), BookError> {
    let mut out = AtomicFile::create(path)?;
    for entry in entries {
        out.write_all(&entry.to_bytes())
            .map_err(|source| BookError::Write {
                path: path.to_path_buf(),
                source,
            })?;
    }
    out.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::position::{parse_fen, play_uci, polyglot_key as key, uci_of};
    use rand::SeedableRng;

    fn entry(key: u64, raw_move: u16, weight: u16) -> BookEntry {
        BookEntry {
            key,
            raw_move,
            weight,
            learn: 0,
        }
    }

    fn raw_of(pos: &Chess, uci: &str) -> u16 {
        encode_move(&play_uci(pos, uci).unwrap().1).unwrap()
    }

    #[test]
    fn entry_bytes_round_trip() {
        let e = BookEntry {
            key: 0x463b96181691fc9c,
            raw_move: 0x031c,
            weight: 0xbeef,
            learn: 0xdeadbeef,
        };
        let bytes = e.to_bytes();
        assert_eq!(
            &bytes[..8],
            &[0x46, 0x3b, 0x96, 0x18, 0x16, 0x91, 0xfc, 0x9c]
        );
        assert_eq!(&bytes[8..10], &[0x03, 0x1c]);
        assert_eq!(BookEntry::from_bytes(&bytes), e);
    }

    #[test]
    fn move_encoding_round_trips_including_castling_and_promotions() {
        // e2e4: from e2 = 12, to e4 = 28.
        let start = Chess::default();
        assert_eq!(raw_of(&start, "e2e4"), 28 | (12 << 6));
        assert_eq!(raw_move_text(raw_of(&start, "g1f3")), "g1f3");

        // Both castles for both colours.
        let castles = parse_fen("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1").unwrap();
        for (uci, text) in [("e1g1", "e1h1"), ("e1c1", "e1a1")] {
            let raw = raw_of(&castles, uci);
            assert_eq!(raw_move_text(raw), text);
            let m = decode_move(&castles, raw).unwrap();
            assert!(m.is_castle());
            assert_eq!(uci_of(&m), uci);
        }
        let black = parse_fen("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R b KQkq - 0 1").unwrap();
        for (uci, text) in [("e8g8", "e8h8"), ("e8c8", "e8a8")] {
            let raw = raw_of(&black, uci);
            assert_eq!(raw_move_text(raw), text);
            assert_eq!(uci_of(&decode_move(&black, raw).unwrap()), uci);
        }
        // Without castling rights the king-to-rook entry is not a legal move.
        let no_rights = parse_fen("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w - - 0 1").unwrap();
        assert_eq!(decode_move(&no_rights, 0x0107), None);
        // The g1 form is not the Polyglot castling encoding.
        assert_eq!(decode_move(&castles, 6 | (4 << 6)), None);

        // Every promotion piece, with and without capture.
        let promo = parse_fen("1n5k/P7/8/8/8/8/8/K7 w - - 0 1").unwrap();
        for (uci, code) in [
            ("a7a8n", 1),
            ("a7a8b", 2),
            ("a7a8r", 3),
            ("a7a8q", 4),
            ("a7b8q", 4),
        ] {
            let raw = raw_of(&promo, uci);
            assert_eq!(raw >> 12, code);
            assert_eq!(raw_move_text(raw), uci);
            assert_eq!(uci_of(&decode_move(&promo, raw).unwrap()), uci);
        }

        // En passant.
        let ep = parse_fen("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1").unwrap();
        let raw = raw_of(&ep, "e5d6");
        assert!(decode_move(&ep, raw).unwrap().is_en_passant());

        // Every legal move of a busy position round-trips.
        let busy =
            parse_fen("r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/2N2N2/PPPP1PPP/R1BQK2R w KQkq - 4 5")
                .unwrap();
        for m in busy.legal_moves() {
            assert_eq!(decode_move(&busy, encode_move(&m).unwrap()), Some(m));
        }
    }

    #[test]
    fn corrupt_books_are_typed_errors() {
        let path = Path::new("corrupt.bin");
        let err = PolyglotBook::from_bytes(&[0u8; 17], path).unwrap_err();
        assert!(matches!(
            err,
            BookError::SizeNotMultipleOf16 { size: 17, .. }
        ));
        let mut bytes = Vec::new();
        for e in [entry(5, 1, 1), entry(7, 1, 1), entry(6, 1, 1)] {
            bytes.extend(e.to_bytes());
        }
        let err = PolyglotBook::from_bytes(&bytes, path).unwrap_err();
        assert!(matches!(err, BookError::Unsorted { index: 2, .. }));
        assert!(err.to_string().contains("corrupt.bin"));
        // Garbage moves in a well-formed file are never played.
        let start = Chess::default();
        let book = PolyglotBook::from_entries(vec![
            entry(key(&start), 0xffff, 100),
            entry(key(&start), 0, 100),
        ]);
        assert!(book.moves(&start).is_empty());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        assert_eq!(book.choose_move(&start, &mut rng), None);
        // Missing file.
        assert!(matches!(
            PolyglotBook::open(Path::new("/nonexistent/book.bin")),
            Err(BookError::Io { .. })
        ));
    }

    #[test]
    fn lookup_and_write_read_round_trip() {
        let start = Chess::default();
        let k = key(&start);
        let entries = vec![
            entry(k, raw_of(&start, "d2d4"), 10),
            entry(1, 5, 1),
            entry(k, raw_of(&start, "e2e4"), 30),
            entry(u64::MAX, 5, 1),
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("book.bin");
        write_book(&path, &entries).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 64);
        let book = PolyglotBook::open(&path).unwrap();
        assert_eq!(book, PolyglotBook::from_entries(entries));
        assert_eq!(book.entries_for(k).len(), 2);
        assert!(book.entries_for(2).is_empty());
        let moves: Vec<(String, u16)> = book
            .moves(&start)
            .iter()
            .map(|(m, w)| (uci_of(m), *w))
            .collect();
        assert_eq!(moves, [("e2e4".to_string(), 30), ("d2d4".to_string(), 10)]);
    }

    #[test]
    fn choose_move_follows_weights_and_never_plays_weight_zero() {
        let start = Chess::default();
        let k = key(&start);
        let book = PolyglotBook::from_entries(vec![
            entry(k, raw_of(&start, "e2e4"), 300),
            entry(k, raw_of(&start, "d2d4"), 100),
            entry(k, raw_of(&start, "f2f3"), 0),
            entry(k, raw_of(&start, "g2g4"), 0),
        ]);
        let mut counts = std::collections::HashMap::<String, u32>::new();
        for seed in 0..4000u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let m = book.choose_move(&start, &mut rng).expect("in book");
            *counts.entry(uci_of(&m)).or_default() += 1;
        }
        assert_eq!(counts.len(), 2, "{counts:?}");
        let e4 = counts["e2e4"];
        // Expected 3000 of 4000; allow a generous statistical margin.
        assert!((2800..3200).contains(&e4), "{counts:?}");

        // A random line stops where the book ends.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let line = book.random_line(&start, &mut rng, 10);
        assert_eq!(line.len(), 1);
        assert!(["e2e4", "d2d4"].contains(&uci_of(&line[0]).as_str()));
        assert!(book.random_line(&start, &mut rng, 0).is_empty());

        // Only weight-0 moves: nothing to play.
        let zero = PolyglotBook::from_entries(vec![entry(k, raw_of(&start, "e2e4"), 0)]);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
        assert_eq!(zero.choose_move(&start, &mut rng), None);
        assert_eq!(zero.moves(&start).len(), 1);
    }
}
