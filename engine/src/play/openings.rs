//! Where the games of a match start: a list of openings read from an
//! EPD/FEN file (any format of [`crate::formats::labeled`], labels not read:
//! a malformed label does not reject its position), from a PGN file (the
//! first moves of each game), or lines drawn at random from a Polyglot book.
//!
//! An [`Opening`] is a start position plus moves already played from it, so
//! that a game from a PGN opening keeps its real history (repetitions count,
//! the PGN starts from the standard position). Invariants: every opening's
//! moves are legal, and its final position is not decided by the rules
//! (openings that are already over are skipped when loading).

use std::io::BufReader;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use pgn_reader::{RawTag, Reader, SanPlus, Skip, Visitor};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use shakmaty::{Chess, Move, Position};

use crate::chess::position::{key, parse_fen};
use crate::formats::book::{BookError, PolyglotBook};
use crate::formats::input::{InputError, open_input};
use crate::formats::labeled::{LabeledReader, Labels, ReadError, RecordError};
use crate::play::game::{GameRecord, decided_outcome};

/// File name extension of a Polyglot book.
const BOOK_EXTENSION: &str = "bin";
/// File name extension of a PGN file.
const PGN_EXTENSION: &str = "pgn";
/// Mixed into the seed for the book line of each opening slot.
const PAIR_SEED_MIX: u64 = 0x9E37_79B9_7F4A_7C15;
/// Mixed into the seed for the shuffle of each pass through a list.
const PASS_SEED_MIX: u64 = 0xD1B5_4A32_D192_ED03;

/// A start position and the moves played from it before the engines take
/// over.
#[derive(Clone, Debug)]
pub struct Opening {
    /// The position the game record starts from.
    pub start: Chess,
    /// Moves already played from `start`.
    pub moves: Vec<Move>,
}

impl Opening {
    /// The standard start position, no moves.
    pub fn standard() -> Self {
        Opening {
            start: Chess::default(),
            moves: Vec::new(),
        }
    }

    /// The game record with the opening moves played.
    pub fn record(&self) -> GameRecord {
        let mut game = GameRecord::new(self.start.clone());
        for m in &self.moves {
            game.play(*m);
        }
        game
    }

    fn is_playable(&self) -> bool {
        let game = self.record();
        decided_outcome(&game.position).is_none()
    }
}

/// Why openings could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum OpeningsError {
    /// The file could not be opened or read.
    #[error(transparent)]
    Input(#[from] InputError),
    /// Reading failed part-way.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line of a position file has no readable position (an openings
    /// file is small and hand-made: a bad line is a mistake to fix, not a
    /// record to skip).
    #[error(transparent)]
    BadLine(#[from] RecordError),
    /// A position file could not be read to its end.
    #[error(transparent)]
    Truncated(#[from] ReadError),
    /// The Polyglot book is unusable.
    #[error(transparent)]
    Book(#[from] BookError),
    /// The file holds no usable opening.
    #[error("{0}: no usable opening")]
    Empty(PathBuf),
}

/// In which order a list of openings is used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OpeningOrder {
    /// In file order, starting again from the first after the last.
    #[default]
    Sequential,
    /// In a random order drawn from the seed: each pass through the list is
    /// a fresh shuffle, so every opening is used once before any is used
    /// again.
    Random,
}

impl std::str::FromStr for OpeningOrder {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "sequential" => Ok(OpeningOrder::Sequential),
            "random" => Ok(OpeningOrder::Random),
            _ => Err(format!(
                "{text:?} is not an opening order (sequential or random)"
            )),
        }
    }
}

impl OpeningOrder {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            OpeningOrder::Sequential => "sequential",
            OpeningOrder::Random => "random",
        }
    }

    /// The list index of slot `slot` in a list of `len` openings.
    pub fn index(self, slot: usize, len: usize, seed: u64) -> usize {
        match self {
            OpeningOrder::Sequential => slot % len,
            OpeningOrder::Random => {
                let pass = (slot / len) as u64;
                let mut rng =
                    ChaCha8Rng::seed_from_u64(seed ^ (pass + 1).wrapping_mul(PASS_SEED_MIX));
                let mut order: Vec<usize> = (0..len).collect();
                order.shuffle(&mut rng);
                order[slot % len]
            }
        }
    }
}

/// The openings of a match.
#[derive(Debug)]
pub enum OpeningSource {
    /// Every game from the standard position.
    Standard,
    /// A fixed list, used in an [`OpeningOrder`].
    List(Vec<Opening>),
    /// A random line of up to `plies` book moves from the standard position
    /// per opening slot.
    Book {
        /// The book.
        book: PolyglotBook,
        /// Maximum book moves per line.
        plies: usize,
    },
}

impl OpeningSource {
    /// Loads openings from `path`: a Polyglot book (`.bin`, lines of up to
    /// `book_plies` moves), a PGN file (`.pgn`, also `.pgn.gz`/`.pgn.zst`:
    /// the first `pgn_plies` moves of each game) or positions in any
    /// labeled-position format. Of openings that reach the same position
    /// only the first is kept: at fixed nodes or depth the others would
    /// only repeat its games.
    ///
    /// # Errors
    /// When the file cannot be read or holds no usable opening.
    pub fn load(path: &Path, pgn_plies: usize, book_plies: usize) -> Result<Self, OpeningsError> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let name = name
            .strip_suffix(".gz")
            .or_else(|| name.strip_suffix(".zst"))
            .unwrap_or(&name);
        let extension = Path::new(name).extension().and_then(|e| e.to_str());
        let source = match extension {
            Some(BOOK_EXTENSION) => OpeningSource::Book {
                book: PolyglotBook::open(path)?,
                plies: book_plies,
            },
            Some(PGN_EXTENSION) => {
                OpeningSource::List(distinct(read_pgn_openings(path, pgn_plies)?))
            }
            _ => OpeningSource::List(distinct(read_position_openings(path)?)),
        };
        match &source {
            OpeningSource::List(list) if list.is_empty() => {
                Err(OpeningsError::Empty(path.to_path_buf()))
            }
            OpeningSource::Book { book, .. } if book.is_empty() => {
                Err(OpeningsError::Empty(path.to_path_buf()))
            }
            _ => Ok(source),
        }
    }

    /// The opening of slot `slot` (the games of a slot share it; see
    /// [`crate::play::match_runner`] for which games those are), taken from
    /// a list in `order`. Reproducible for a given `seed`.
    pub fn for_slot(&self, slot: usize, seed: u64, order: OpeningOrder) -> Opening {
        match self {
            OpeningSource::Standard => Opening::standard(),
            OpeningSource::List(list) => list[order.index(slot, list.len(), seed)].clone(),
            OpeningSource::Book { book, plies } => {
                let mut rng =
                    ChaCha8Rng::seed_from_u64(seed ^ (slot as u64 + 1).wrapping_mul(PAIR_SEED_MIX));
                let start = Chess::default();
                let mut moves = book.random_line(&start, &mut rng, *plies);
                // Never hand over a finished game: shorten the line.
                while !(Opening {
                    start: start.clone(),
                    moves: moves.clone(),
                })
                .is_playable()
                {
                    moves.pop();
                }
                Opening { start, moves }
            }
        }
    }

    /// Number of distinct openings, when the source is a list.
    pub fn list_len(&self) -> Option<usize> {
        match self {
            OpeningSource::List(list) => Some(list.len()),
            _ => None,
        }
    }
}

/// The openings whose final position no earlier opening reached.
fn distinct(openings: Vec<Opening>) -> Vec<Opening> {
    let mut seen = std::collections::HashSet::new();
    openings
        .into_iter()
        .filter(|o| seen.insert(key(&o.record().position)))
        .collect()
}

fn read_position_openings(path: &Path) -> Result<Vec<Opening>, OpeningsError> {
    let input = open_input(path)?;
    // An opening is a position: its labels are not read.
    let reader =
        LabeledReader::new(BufReader::new(input), Some(path.to_path_buf())).labels(Labels::Ignore);
    let mut openings = Vec::new();
    for item in reader {
        let (_, record) = item??;
        let opening = Opening {
            start: record.position,
            moves: Vec::new(),
        };
        if opening.is_playable() {
            openings.push(opening);
        }
    }
    Ok(openings)
}

fn read_pgn_openings(path: &Path, plies: usize) -> Result<Vec<Opening>, OpeningsError> {
    let input = open_input(path)?;
    let mut reader = Reader::new(input);
    let mut visitor = OpeningVisitor { plies };
    let mut openings = Vec::new();
    loop {
        match reader.read_game(&mut visitor) {
            Ok(Some(Some(opening))) => {
                if opening.is_playable() {
                    openings.push(opening);
                }
            }
            Ok(Some(None)) => {}
            Ok(None) => break,
            Err(source) => {
                return Err(OpeningsError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
    }
    Ok(openings)
}

/// Collects the first moves of a PGN game's main line.
struct OpeningVisitor {
    plies: usize,
}

/// A PGN game being read: its position so far, `None` once unusable.
struct OpeningInProgress {
    opening: Option<Opening>,
    position: Chess,
}

impl Visitor for OpeningVisitor {
    type Tags = Option<Chess>;
    type Movetext = OpeningInProgress;
    type Output = Option<Opening>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Some(Chess::default()))
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        if name == b"FEN" {
            *tags = parse_fen(&String::from_utf8_lossy(&value.decode())).ok();
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        match tags {
            Some(start) => ControlFlow::Continue(OpeningInProgress {
                position: start.clone(),
                opening: Some(Opening {
                    start,
                    moves: Vec::new(),
                }),
            }),
            None => ControlFlow::Break(None),
        }
    }

    fn san(&mut self, game: &mut Self::Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        let Some(opening) = game.opening.as_mut() else {
            return ControlFlow::Continue(());
        };
        if opening.moves.len() >= self.plies {
            return ControlFlow::Continue(());
        }
        match san_plus.san.to_move(&game.position) {
            Ok(m) => {
                game.position.play_unchecked(m);
                opening.moves.push(m);
            }
            Err(_) => game.opening = None,
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _game: &mut Self::Movetext) -> ControlFlow<Self::Output, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, game: Self::Movetext) -> Self::Output {
        game.opening
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn compressed_pgn_openings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.PGN.gz");
        let file = std::fs::File::create(&path).unwrap();
        let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
        gz.write_all(b"[Event \"a\"]\n\n1. e4 e5 2. Nf3 *\n")
            .unwrap();
        gz.finish().unwrap();
        let OpeningSource::List(list) = OpeningSource::load(&path, 8, 0).unwrap() else {
            panic!("a list")
        };
        assert_eq!(list[0].moves.len(), 3);
    }

    #[test]
    fn random_order_uses_every_opening_once_per_pass() {
        let order = OpeningOrder::Random;
        let pass = |seed: u64, n: usize| -> Vec<usize> {
            (n * 7..(n + 1) * 7)
                .map(|slot| order.index(slot, 7, seed))
                .collect()
        };
        for n in 0..3 {
            let mut used = pass(5, n);
            used.sort_unstable();
            assert_eq!(used, (0..7).collect::<Vec<_>>());
        }
        assert_eq!(pass(5, 1), pass(5, 1), "reproducible");
        assert_ne!(pass(5, 0), pass(5, 1), "each pass is a fresh shuffle");
        assert_ne!(pass(5, 0), pass(6, 0), "the seed matters");
        let sequential: Vec<usize> = (0..9)
            .map(|slot| OpeningOrder::Sequential.index(slot, 7, 5))
            .collect();
        assert_eq!(sequential, [0, 1, 2, 3, 4, 5, 6, 0, 1]);
        assert!("random".parse::<OpeningOrder>().is_ok());
        assert!("shuffled".parse::<OpeningOrder>().is_err());
    }

    #[test]
    fn pgn_openings_take_the_first_moves() {
        let mut file = tempfile::Builder::new().suffix(".pgn").tempfile().unwrap();
        write!(
            file,
            "[Event \"a\"]\n\n1. e4 e5 2. Nf3 (2. f4) Nc6 3. Bb5 a6 1-0\n\n\
             [Event \"b\"]\n\n1. d4 d5 1/2-1/2\n\n\
             [Event \"c\"]\n\n1. Nf3 e5 2. e4 Nc6 0-1\n"
        )
        .unwrap();
        let source = OpeningSource::load(file.path(), 3, 0).unwrap();
        let OpeningSource::List(list) = source else {
            panic!("a list")
        };
        // Game c reaches game a's position after 3 plies (1. e4 e5 2. Nf3 by
        // transposition): dropped.
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].moves.len(), 3);
        assert_eq!(list[1].moves.len(), 2);
        let pos = list[0].record().position;
        assert_eq!(
            crate::chess::position::fen_of(&pos),
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"
        );
    }

    /// An opening is a position: a malformed label beside it (`c9 "2"`,
    /// `ce NaN`) does not reject it, a bad position does, located.
    #[test]
    fn position_openings_ignore_their_labels() {
        let mut file = tempfile::Builder::new().suffix(".epd").tempfile().unwrap();
        write!(
            file,
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - c9 \"2\";\n\
             rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - ce NaN;\n"
        )
        .unwrap();
        let OpeningSource::List(list) = OpeningSource::load(file.path(), 8, 0).unwrap() else {
            panic!("a list")
        };
        assert_eq!(list.len(), 2);
        writeln!(file, "8/8/8/8/8/8/8/8 w - - c9 \"1-0\";").unwrap();
        let error = OpeningSource::load(file.path(), 8, 0)
            .unwrap_err()
            .to_string();
        assert!(error.contains(":3: "), "{error}");
    }
}
