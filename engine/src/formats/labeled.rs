//! Labeled positions: the one reader and writer of training-position files
//! for every tool.
//!
//! A [`LabeledPosition`] is a legal position with an optional game result
//! (always from White's point of view) and an optional search score
//! (centipawns from the side to move's point of view). [`parse_line`] reads
//! every common labeled format, detected line by line:
//!
//! | format | example |
//! |---|---|
//! | EPD, zurichess style | `<board> w - - c9 "1-0";` (`"1/2-1/2"`, `"0-1"`) |
//! | EPD, Arasan style | `<board> w - - c1 "0 5"; c2 "1.0";` (`"0.5"`, `"0.0"`; `c1`, the castle status, ignored) |
//! | EPD operations we write | `hmvc 3; fmvn 20; c9 "1-0"; ce 35;` |
//! | FEN with a suffix | `<fen> [1.0]` (`[0.5]`, `[0.0]`, also `[1-0]`) |
//! | FEN, score, result | `<fen> \| 35 \| 1.0` (score White-relative, as bullet's text format) |
//! | CSV with a header | `fen,result,score` (any order; `score` side-to-move; `result` as above) |
//!
//! [`LabeledPosition::to_epd`] writes the canonical form: the four EPD board
//! fields, then `hmvc`, `fmvn`, `c9` (when the result is known) and `ce`
//! (when the score is known). [`LabeledReader`] streams a file, numbering
//! lines so that every error names its line; [`LabeledBlocks`] reads the
//! same items as blocks of raw lines, for parsing in parallel.
//!
//! Two kinds of error, kept apart by the types: a bad line
//! ([`RecordError`]: not a legal position, a label that is not a result or
//! an integer score — `c9 "2"`, `ce NaN`, `ce inf`, a score beyond `i32`,
//! two different results on one line) is located, skipped and counted by the
//! caller; an input that cannot be read to its end ([`ReadError`]: an I/O
//! error, a truncated or corrupt `.gz`/`.zst`) ends the reading, and every
//! tool treats it as fatal, never as "half the data". A UTF-8 byte-order
//! mark at the start of a file is skipped.
//!
//! What a label is worth depends on the reader ([`Labels`]): training data
//! needs its labels, so by default a malformed label rejects the line;
//! a tool that only wants the positions (the labeler, which computes its own
//! labels; the openings of a match) reads with [`Labels::Ignore`], where the
//! result and score fields, operations and columns are not read at all and a
//! line is rejected only when its position is bad.

use std::borrow::Cow;
use std::io::{self, BufRead};
use std::num::NonZeroU32;
use std::path::PathBuf;

use shakmaty::fen::Fen;
use shakmaty::{ByColor, CastlingSide, Chess, Color, Move, Position};
use thiserror::Error;

use crate::chess::excerpt::excerpt;
use crate::chess::position::{
    PositionParseError, append_epd_board, check_fen_syntax, parse_fen, position_from_setup,
};

/// A finished game's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum GameResult {
    /// 1-0.
    WhiteWin,
    /// ½-½.
    Draw,
    /// 0-1.
    BlackWin,
}

impl GameResult {
    /// 1.0, 0.5 or 0.0: White's score.
    pub fn white_score(self) -> f64 {
        match self {
            GameResult::WhiteWin => 1.0,
            GameResult::Draw => 0.5,
            GameResult::BlackWin => 0.0,
        }
    }

    /// PGN notation: `1-0`, `1/2-1/2`, `0-1`.
    pub fn pgn(self) -> &'static str {
        match self {
            GameResult::WhiteWin => "1-0",
            GameResult::Draw => "1/2-1/2",
            GameResult::BlackWin => "0-1",
        }
    }

    /// Arasan's notation: `1.0`, `0.5`, `0.0`.
    pub fn decimal(self) -> &'static str {
        match self {
            GameResult::WhiteWin => "1.0",
            GameResult::Draw => "0.5",
            GameResult::BlackWin => "0.0",
        }
    }

    /// The win for `color`.
    pub fn win_for(color: Color) -> GameResult {
        match color {
            Color::White => GameResult::WhiteWin,
            Color::Black => GameResult::BlackWin,
        }
    }

    /// Parses `1-0`, `0-1`, `1/2-1/2`, `½-½`, `1.0`, `0.5`, `0.0`, `1`, `0`,
    /// `=`; `None` for anything else (including `*`).
    pub fn parse(text: &str) -> Option<GameResult> {
        match text.trim().trim_matches('"') {
            "1-0" | "1.0" | "1" | "1.00" => Some(GameResult::WhiteWin),
            "0-1" | "0.0" | "0" | "0.00" => Some(GameResult::BlackWin),
            "1/2-1/2" | "½-½" | "0.5" | "0.50" | "=" | "1/2" => Some(GameResult::Draw),
            _ => None,
        }
    }
}

/// A position with its labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabeledPosition {
    /// The position (legal).
    pub position: Chess,
    /// The game's result, White's point of view.
    pub result: Option<GameResult>,
    /// A search score in centipawns, side to move's point of view.
    pub score: Option<i32>,
}

impl LabeledPosition {
    /// An unlabeled position.
    pub fn new(position: Chess) -> Self {
        LabeledPosition {
            position,
            result: None,
            score: None,
        }
    }

    /// The canonical EPD line (without newline): board fields, `hmvc`,
    /// `fmvn`, then `c9` and `ce` when known.
    pub fn to_epd(&self) -> String {
        let mut out = Vec::with_capacity(96);
        self.append_epd(&mut out);
        String::from_utf8(out).expect("EPD is ASCII")
    }

    /// Appends [`LabeledPosition::to_epd`] to `out` (no allocation when
    /// `out` has room).
    pub fn append_epd(&self, out: &mut Vec<u8>) {
        use std::io::Write as _;
        append_epd_board(&self.position, out);
        // Writing to a Vec cannot fail.
        let _ = write!(
            out,
            " hmvc {}; fmvn {};",
            self.position.halfmoves(),
            self.position.fullmoves()
        );
        if let Some(r) = self.result {
            let _ = write!(out, " c9 \"{}\";", r.pgn());
        }
        if let Some(s) = self.score {
            let _ = write!(out, " ce {s};");
        }
    }

    /// Arasan-compatible EPD: board fields, then `c1` (each side's castle
    /// status, see [`arasan_castle_status`]; `castled` says which side each
    /// colour castled to earlier in the game, when it did) and `c2 "1.0"`
    /// style result, as Arasan's pgnselect writes and its tuner reads.
    pub fn to_arasan_epd(&self, castled: Castled) -> String {
        let mut out = Vec::with_capacity(96);
        self.append_arasan_epd(castled, &mut out);
        String::from_utf8(out).expect("EPD is ASCII")
    }

    /// Appends [`LabeledPosition::to_arasan_epd`] to `out`.
    pub fn append_arasan_epd(&self, castled: Castled, out: &mut Vec<u8>) {
        append_epd_board(&self.position, out);
        out.extend_from_slice(b" c1 \"");
        out.push(b'0' + arasan_castle_status(&self.position, Color::White, castled.0.white));
        out.push(b' ');
        out.push(b'0' + arasan_castle_status(&self.position, Color::Black, castled.0.black));
        out.extend_from_slice(b"\";");
        if let Some(r) = self.result {
            out.extend_from_slice(b" c2 \"");
            out.extend_from_slice(r.decimal().as_bytes());
            out.extend_from_slice(b"\";");
        }
    }
}

/// The side each colour castled to so far in a game, if it did: what
/// Arasan's castle status needs besides the position (a FEN cannot tell a
/// side that castled from one that lost its rights otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Castled(pub ByColor<Option<CastlingSide>>);

impl Castled {
    /// Notes the move `m` about to be played in `pos`, if it castles.
    pub fn record(&mut self, pos: &Chess, m: Move) {
        if let Some(side) = m.castling_side() {
            *self.0.get_mut(pos.turn()) = Some(side);
        }
    }
}

/// Arasan's castle status of `color` in `pos` (its `CastleType`, the value
/// of the `c1` tag): 0 may castle either side, 1 king side only, 2 queen
/// side only, 3 castled king side, 4 castled queen side, 5 cannot castle.
/// Castling rights come first: a side that still has one has not castled.
/// `castled` is the side `color` castled to, if it did (a FEN cannot tell).
pub fn arasan_castle_status(pos: &Chess, color: Color, castled: Option<CastlingSide>) -> u8 {
    let castles = pos.castles();
    match (
        castles.has(color, CastlingSide::KingSide),
        castles.has(color, CastlingSide::QueenSide),
        castled,
    ) {
        (true, true, _) => 0,
        (true, false, _) => 1,
        (false, true, _) => 2,
        (false, false, Some(CastlingSide::KingSide)) => 3,
        (false, false, Some(CastlingSide::QueenSide)) => 4,
        (false, false, None) => 5,
    }
}

/// What is wrong with one line.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RecordErrorKind {
    /// The position part is not a legal FEN/EPD.
    #[error("{0}")]
    Position(#[from] PositionParseError),
    /// The result field is not a known result.
    #[error("unrecognised result {:?}", excerpt(.0))]
    BadResult(String),
    /// The score field is not an integer.
    #[error("score is not an integer: {:?}", excerpt(.0))]
    BadScore(String),
    /// An EPD operation is malformed (e.g. `hmvc` without a number).
    #[error("malformed EPD operation {:?}", excerpt(.0))]
    BadOperation(String),
    /// A CSV row has fewer fields than the header.
    #[error("CSV row has {found} fields, the header has {expected}")]
    CsvFieldCount {
        /// Fields in the header.
        expected: usize,
        /// Fields in this row.
        found: usize,
    },
    /// The line is not UTF-8.
    #[error("unreadable line: {}", excerpt(.0))]
    Unreadable(String),
    /// Two operations of the line give different labels (e.g. `c9 "1-0"`
    /// and `c2 "0.0"`).
    #[error("conflicting labels: {}", excerpt(.0))]
    Conflict(String),
    /// A CSV header without a `fen` column.
    #[error("CSV header has no `fen` column: {:?}", excerpt(.0))]
    CsvNoFenColumn(String),
}

/// A bad line, located.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{}:{line}: {kind}", path.as_ref().map_or("<input>".to_string(), |p| p.display().to_string()))]
pub struct RecordError {
    /// The file, when known.
    pub path: Option<PathBuf>,
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub kind: RecordErrorKind,
}

/// The input could not be read to its end: fatal, the data would be
/// partial.
#[derive(Debug, Error)]
#[error("{}: cannot read past line {line}: {source} (a truncated or corrupt input is not used in part)", path.as_ref().map_or("<input>".to_string(), |p| p.display().to_string()))]
pub struct ReadError {
    /// The file, when known.
    pub path: Option<PathBuf>,
    /// The last line read whole.
    pub line: usize,
    /// The reader's (or decoder's) reason.
    #[source]
    pub source: io::Error,
}

/// What a reader does with the labels (result and score) of a line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Labels {
    /// Read them: a label that is not a result or an integer score, or two
    /// different labels on one line, rejects the line (what training data
    /// needs).
    #[default]
    Read,
    /// Ignore them: only the position is read (the board fields and the
    /// clocks, `hmvc`/`fmvn` included); the result and score fields, EPD
    /// operations (`c9`, `c2`, `ce`) and CSV columns are not looked at, so
    /// a `c9 "2"` or `ce NaN` does not reject the line, and every record
    /// has neither result nor score.
    Ignore,
}

/// Parses one line of any non-CSV format, reading its labels
/// ([`Labels::Read`]); `Ok(None)` for blank lines and `#` comments.
///
/// # Errors
/// The reason the line is not a labeled position.
pub fn parse_line(line: &str) -> Result<Option<LabeledPosition>, RecordErrorKind> {
    parse_line_with(line, Labels::Read)
}

/// [`parse_line`] with the given treatment of the labels.
///
/// # Errors
/// The reason the line is not a labeled position (with [`Labels::Ignore`],
/// only a bad position or clock).
pub fn parse_line_with(
    line: &str,
    labels: Labels,
) -> Result<Option<LabeledPosition>, RecordErrorKind> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    if line.contains('|') {
        return parse_pipe(line, labels).map(Some);
    }
    if let Some(open) = line.rfind('[')
        && line.ends_with(']')
    {
        let fen = &line[..open];
        let result = match labels {
            Labels::Ignore => None,
            Labels::Read => {
                let result_text = &line[open + 1..line.len() - 1];
                Some(
                    GameResult::parse(result_text)
                        .ok_or_else(|| RecordErrorKind::BadResult(result_text.to_string()))?,
                )
            }
        };
        return Ok(Some(LabeledPosition {
            position: parse_fen(fen)?,
            result,
            score: None,
        }));
    }
    parse_epd(line, labels).map(Some)
}

/// An integer score (EPD `ce`, a CSV score column); `i32::MIN` is refused
/// because it has no negation (scores are turned to the other side's view).
fn parse_score(text: &str) -> Result<i32, RecordErrorKind> {
    text.parse::<i32>()
        .ok()
        .filter(|&s| s != i32::MIN)
        .ok_or_else(|| RecordErrorKind::BadScore(text.into()))
}

fn parse_pipe(line: &str, labels: Labels) -> Result<LabeledPosition, RecordErrorKind> {
    let mut parts = line.split('|').map(str::trim);
    let fen = parts.next().unwrap_or_default();
    let position = parse_fen(fen)?;
    if labels == Labels::Ignore {
        return Ok(LabeledPosition::new(position));
    }
    let score_text = parts.next().unwrap_or_default();
    let score = if score_text.is_empty() {
        None
    } else {
        let white: i32 = score_text
            .parse::<f64>()
            .ok()
            .map(f64::round)
            .filter(|v| {
                v.is_finite() && (f64::from(i32::MIN + 1)..=f64::from(i32::MAX)).contains(v)
            })
            .map(|v| v as i32)
            .ok_or_else(|| RecordErrorKind::BadScore(score_text.to_string()))?;
        Some(match position.turn() {
            Color::White => white,
            Color::Black => -white,
        })
    };
    let result = match parts.next() {
        None | Some("") => None,
        Some(r) => Some(GameResult::parse(r).ok_or_else(|| RecordErrorKind::BadResult(r.into()))?),
    };
    Ok(LabeledPosition {
        position,
        result,
        score,
    })
}

/// EPD: four board fields (or a full FEN), then `;`-terminated operations.
fn parse_epd(line: &str, labels: Labels) -> Result<LabeledPosition, RecordErrorKind> {
    let (board, rest) = split_board(line);
    let mut rest = rest.trim();
    // A full FEN carries the clocks as two bare numbers before the operations.
    let mut clocks: Option<(u32, u32)> = None;
    {
        let mut it = rest.splitn(3, char::is_whitespace);
        if let (Some(h), Some(f)) = (it.next(), it.next())
            && let (Ok(h), Ok(f)) = (h.parse::<u32>(), f.trim_end_matches(';').parse::<u32>())
        {
            clocks = Some((h, f));
            rest = it.next().unwrap_or("").trim();
        }
    }
    let mut hmvc = clocks.map(|c| c.0);
    let mut fmvn = clocks.map(|c| c.1);
    let mut result = None;
    let mut score = None;
    for op in Operations(Some(rest)) {
        let op = op.trim();
        if op.is_empty() {
            continue;
        }
        let (code, arg) = op.split_once(char::is_whitespace).unwrap_or((op, ""));
        let arg = arg.trim();
        match code {
            "hmvc" => {
                hmvc = Some(
                    arg.parse()
                        .map_err(|_| RecordErrorKind::BadOperation(op.into()))?,
                )
            }
            "fmvn" => {
                fmvn = Some(
                    arg.parse()
                        .map_err(|_| RecordErrorKind::BadOperation(op.into()))?,
                )
            }
            "c9" | "c2" | "ce" if labels == Labels::Ignore => {}
            "c9" | "c2" => {
                let r =
                    GameResult::parse(arg).ok_or_else(|| RecordErrorKind::BadResult(arg.into()))?;
                if result.is_some_and(|first| first != r) {
                    return Err(RecordErrorKind::Conflict(rest.into()));
                }
                result = Some(r);
            }
            "ce" => {
                let s = parse_score(arg)?;
                if score.is_some_and(|first| first != s) {
                    return Err(RecordErrorKind::Conflict(rest.into()));
                }
                score = Some(s);
            }
            _ => {}
        }
    }
    let (hmvc, fmvn) = (hmvc.unwrap_or(0), fmvn.unwrap_or(1).max(1));
    Ok(LabeledPosition {
        position: epd_position(&board, hmvc, fmvn)?,
        result,
        score,
    })
}

/// The board fields of an EPD line: its first four whitespace-separated
/// fields, joined by single spaces.
#[derive(Debug, PartialEq, Eq)]
struct EpdBoard<'a> {
    text: Cow<'a, str>,
    /// Exactly four non-empty fields separated by single spaces and no `_`
    /// (where FEN parsing also splits): the clocks would be the FEN's fifth
    /// and sixth fields.
    four_fields: bool,
}

/// The board fields of an EPD line and the text after them.
fn split_board(line: &str) -> (EpdBoard<'_>, &str) {
    // Fast path for ASCII: when the separators inside the board are spaces,
    // the board is a slice of the line.
    let mut separators = 0;
    let mut four_fields = true;
    let mut previous = b' ';
    for (i, b) in line.bytes().enumerate() {
        if !b.is_ascii() {
            return split_board_slow(line);
        }
        if b.is_ascii_whitespace() || b == 0x0b {
            four_fields &= previous != b' ';
            separators += 1;
            if separators == 4 {
                let board = EpdBoard {
                    text: Cow::Borrowed(&line[..i]),
                    four_fields,
                };
                return (board, &line[i + 1..]);
            }
            if b != b' ' {
                return split_board_slow(line);
            }
        }
        four_fields &= b != b'_';
        previous = b;
    }
    let board = EpdBoard {
        text: Cow::Borrowed(line),
        four_fields: four_fields && separators == 3 && previous != b' ',
    };
    (board, "")
}

/// [`split_board`] for any text.
fn split_board_slow(line: &str) -> (EpdBoard<'_>, &str) {
    let fields: Vec<&str> = line.splitn(5, char::is_whitespace).collect();
    let text = fields[..fields.len().min(4)].join(" ");
    let four_fields = !text.contains('_') && text.split(' ').filter(|f| !f.is_empty()).count() == 4;
    let board = EpdBoard {
        text: Cow::Owned(text),
        four_fields,
    };
    (board, fields.get(4).copied().unwrap_or(""))
}

/// The position of EPD board fields with the given clocks: the FEN
/// `"{board} {hmvc} {fmvn}"`, parsed without building that text unless
/// the position is rejected (so that the error names the same FEN).
fn epd_position(board: &EpdBoard, hmvc: u32, fmvn: u32) -> Result<Chess, PositionParseError> {
    if board.four_fields
        && check_fen_syntax(&board.text).is_ok()
        && let Ok(fen) = Fen::from_ascii(board.text.as_bytes())
    {
        let mut setup = fen.into_setup();
        setup.halfmoves = hmvc;
        setup.fullmoves = NonZeroU32::new(fmvn).unwrap_or(NonZeroU32::MIN);
        if let Ok(position) = position_from_setup(setup) {
            return Ok(position);
        }
    }
    parse_fen(&format!("{} {hmvc} {fmvn}", board.text))
}

/// EPD operations: the text split at `;` outside double quotes.
struct Operations<'a>(Option<&'a str>);

impl<'a> Iterator for Operations<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let text = self.0?;
        let mut quoted = false;
        for (i, b) in text.bytes().enumerate() {
            match b {
                b'"' => quoted = !quoted,
                b';' if !quoted => {
                    self.0 = Some(&text[i + 1..]);
                    return Some(&text[..i]);
                }
                _ => {}
            }
        }
        self.0 = None;
        Some(text)
    }
}

/// Column positions of a CSV header.
#[derive(Clone, Debug, PartialEq, Eq)]
struct CsvColumns {
    count: usize,
    fen: usize,
    result: Option<usize>,
    score: Option<usize>,
}

fn csv_fields(line: &str) -> Vec<&str> {
    line.split(',')
        .map(|f| f.trim().trim_matches('"'))
        .collect()
}

/// Recognises a CSV header: comma-separated, with a `fen` (or `epd`)
/// column.
fn csv_header(line: &str) -> Option<Result<CsvColumns, RecordErrorKind>> {
    if !line.contains(',') {
        return None;
    }
    let names: Vec<String> = csv_fields(line).iter().map(|f| f.to_lowercase()).collect();
    let find = |options: &[&str]| names.iter().position(|n| options.contains(&n.as_str()));
    let looks_like_header = names.iter().all(|n| !n.contains('/'));
    if !looks_like_header {
        return None;
    }
    Some(match find(&["fen", "epd", "position"]) {
        None => Err(RecordErrorKind::CsvNoFenColumn(line.to_string())),
        Some(fen) => Ok(CsvColumns {
            count: names.len(),
            fen,
            result: find(&["result", "wdl", "outcome", "label", "c9"]),
            score: find(&["score", "eval", "ce", "cp"]),
        }),
    })
}

/// A CSV row; with [`Labels::Ignore`] only its `fen` column must be there.
fn parse_csv_row(
    line: &str,
    cols: &CsvColumns,
    labels: Labels,
) -> Result<LabeledPosition, RecordErrorKind> {
    let fields = csv_fields(line);
    let needed = match labels {
        Labels::Read => cols.count,
        Labels::Ignore => cols.fen + 1,
    };
    if fields.len() < needed {
        return Err(RecordErrorKind::CsvFieldCount {
            expected: cols.count,
            found: fields.len(),
        });
    }
    let position = parse_fen(fields[cols.fen])?;
    if labels == Labels::Ignore {
        return Ok(LabeledPosition::new(position));
    }
    let result = match cols.result.map(|i| fields[i]) {
        None | Some("") => None,
        Some(r) => Some(GameResult::parse(r).ok_or_else(|| RecordErrorKind::BadResult(r.into()))?),
    };
    let score = match cols.score.map(|i| fields[i]) {
        None | Some("") => None,
        Some(s) => Some(parse_score(s)?),
    };
    Ok(LabeledPosition {
        position,
        result,
        score,
    })
}

/// Streams labeled positions from a reader, line by line, in any format of
/// the module documentation. A CSV file is recognised by its header on the
/// first non-blank line. Each item is `Ok` with the 1-based line number and
/// the record, or with a located bad line (iteration continues after it),
/// or `Err` with the [`ReadError`] that ends the input (the last item). It
/// is [`LabeledBlocks`] read a few lines at a time and parsed in order.
pub struct LabeledReader<R> {
    blocks: LabeledBlocks<R>,
    block: LineBlock,
    next_line: usize,
}

/// Lines [`LabeledReader`] reads at a time.
const READER_BLOCK_LINES: usize = 256;

impl<R: BufRead> LabeledReader<R> {
    /// Reads from `input`, labels included ([`Labels::Read`]); `path`
    /// names the source in errors.
    pub fn new(input: R, path: Option<PathBuf>) -> Self {
        LabeledReader {
            blocks: LabeledBlocks::new(input, path),
            block: LineBlock::new(),
            next_line: 0,
        }
    }

    /// This reader with the given treatment of the labels (set before the
    /// first item is read).
    pub fn labels(mut self, labels: Labels) -> Self {
        self.blocks = self.blocks.labels(labels);
        self
    }
}

/// One line's outcome: a record or a located bad line.
pub type LabeledItem = Result<(usize, LabeledPosition), RecordError>;

impl<R: BufRead> Iterator for LabeledReader<R> {
    type Item = Result<LabeledItem, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            while self.next_line < self.block.len() {
                let item = self.block.parse(self.next_line);
                self.next_line += 1;
                if let Some(item) = item {
                    return Some(Ok(item));
                }
            }
            match self.blocks.read_block(&mut self.block, READER_BLOCK_LINES) {
                Ok(true) => self.next_line = 0,
                Ok(false) => return None,
                Err(e) => {
                    self.block = LineBlock::new();
                    return Some(Err(e));
                }
            }
        }
    }
}

/// What [`std::io::BufRead::read_line`] reports for a line that is not
/// UTF-8 (blocks report the same as [`LabeledReader`]).
const INVALID_UTF8: &str = "stream did not contain valid UTF-8";

/// The UTF-8 byte-order mark some editors put at the start of a file.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Reads a labeled file in blocks of raw lines so that the lines can be
/// parsed in parallel: [`LineBlock::parse`] of each line, in order, gives
/// exactly the items of [`LabeledReader`] (same records, same located
/// errors). Reading only splits lines; the CSV header, which fixes the
/// format of the rest of the file, is recognised while reading.
pub struct LabeledBlocks<R> {
    input: R,
    path: Option<PathBuf>,
    line_no: usize,
    csv: Option<CsvColumns>,
    labels: Labels,
    seen_content: bool,
    ended: bool,
    /// The read error that ended the input, returned after the lines read
    /// whole before it.
    pending: Option<ReadError>,
}

/// One block of raw lines from [`LabeledBlocks`], reusable across reads.
#[derive(Debug, Default)]
pub struct LineBlock {
    text: Vec<u8>,
    lines: Vec<RawLine>,
    csv: Option<CsvColumns>,
    labels: Labels,
    path: Option<PathBuf>,
}

/// A line of a block: its 1-based number and byte range, or a bad line found
/// while reading (a CSV header without a `fen` column).
#[derive(Debug)]
enum RawLine {
    Text {
        line: usize,
        start: usize,
        end: usize,
    },
    Error(Box<RecordError>),
}

impl<R: BufRead> LabeledBlocks<R> {
    /// Reads from `input`; `path` names the source in errors.
    pub fn new(input: R, path: Option<PathBuf>) -> Self {
        LabeledBlocks {
            input,
            path,
            line_no: 0,
            csv: None,
            labels: Labels::Read,
            seen_content: false,
            ended: false,
            pending: None,
        }
    }

    /// These blocks with the given treatment of the labels (set before the
    /// first block is read).
    pub fn labels(mut self, labels: Labels) -> Self {
        self.labels = labels;
        self
    }

    /// Replaces the content of `block` with the next (up to) `max_lines`
    /// lines; `Ok(false)` when the input is exhausted and `block` is empty.
    ///
    /// # Errors
    /// A [`ReadError`] when the input cannot be read to its end, after the
    /// block of the lines read whole before it.
    pub fn read_block(
        &mut self,
        block: &mut LineBlock,
        max_lines: usize,
    ) -> Result<bool, ReadError> {
        block.text.clear();
        block.lines.clear();
        if let Some(error) = self.pending.take() {
            return Err(error);
        }
        while !self.ended && block.lines.len() < max_lines.max(1) {
            let start = block.text.len();
            match self.input.read_until(b'\n', &mut block.text) {
                Ok(0) => self.ended = true,
                Ok(_) => {
                    self.line_no += 1;
                    if self.line_no == 1 && block.text[start..].starts_with(BOM) {
                        block.text.drain(start..start + BOM.len());
                    }
                    let end = block.text.len();
                    if !self.seen_content && !self.first_content(block, start, end) {
                        block.text.truncate(start);
                        continue;
                    }
                    block.lines.push(RawLine::Text {
                        line: self.line_no,
                        start,
                        end,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    block.text.truncate(start);
                    self.ended = true;
                    let error = ReadError {
                        path: self.path.clone(),
                        line: self.line_no,
                        source,
                    };
                    if block.lines.is_empty() {
                        return Err(error);
                    }
                    self.pending = Some(error);
                }
            }
        }
        block.csv = self.csv.clone();
        block.labels = self.labels;
        block.path = self.path.clone();
        Ok(!block.lines.is_empty())
    }

    /// Looks for the first content line (CSV header or not) before it has
    /// been seen: false when the line at `start..end` is to be dropped (a
    /// CSV header, or a blank or comment line), true when it is to be kept
    /// (a record, a header error or an unreadable line).
    fn first_content(&mut self, block: &mut LineBlock, start: usize, end: usize) -> bool {
        let Ok(text) = std::str::from_utf8(&block.text[start..end]) else {
            return true;
        };
        let line = text.trim();
        if line.is_empty() || line.starts_with('#') {
            return false;
        }
        self.seen_content = true;
        match csv_header(line) {
            None => true,
            Some(Ok(cols)) => {
                self.csv = Some(cols);
                false
            }
            Some(Err(kind)) => {
                let error = self.error(kind);
                block.lines.push(RawLine::Error(Box::new(error)));
                block.text.truncate(start);
                false
            }
        }
    }

    fn error(&self, kind: RecordErrorKind) -> RecordError {
        RecordError {
            path: self.path.clone(),
            line: self.line_no,
            kind,
        }
    }
}

impl LineBlock {
    /// An empty block.
    pub fn new() -> Self {
        LineBlock::default()
    }

    /// Number of lines (each gives at most one item of [`LineBlock::parse`]).
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// True when the block has no lines.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Parses line `i` of the block: `None` for blank and comment lines,
    /// else what [`LabeledReader`] yields for it.
    pub fn parse(&self, i: usize) -> Option<Result<(usize, LabeledPosition), RecordError>> {
        let (line, start, end) = match &self.lines[i] {
            RawLine::Error(e) => return Some(Err((**e).clone())),
            RawLine::Text { line, start, end } => (*line, *start, *end),
        };
        let error = |kind| RecordError {
            path: self.path.clone(),
            line,
            kind,
        };
        let Ok(text) = std::str::from_utf8(&self.text[start..end]) else {
            return Some(Err(error(RecordErrorKind::Unreadable(INVALID_UTF8.into()))));
        };
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            return None;
        }
        let parsed = match &self.csv {
            Some(cols) => parse_csv_row(text, cols, self.labels).map(Some),
            None => parse_line_with(text, self.labels),
        };
        match parsed {
            Ok(Some(rec)) => Some(Ok((line, rec))),
            Ok(None) => None,
            Err(kind) => Some(Err(error(kind))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOARD: &str = "r1bq1rk1/pp2p1bp/2nppn2/2p5/3P1P1R/2N1BN2/PPP3P1/R2QKB2 b Q -";

    /// Every item of a reader that reads to its end.
    fn all<R: BufRead>(reader: LabeledReader<R>) -> Vec<LabeledItem> {
        reader.map(|item| item.expect("readable input")).collect()
    }

    fn rec(line: &str) -> LabeledPosition {
        parse_line(line).unwrap().unwrap()
    }

    #[test]
    fn arasan_lines_carry_castle_status_and_result() {
        let record = LabeledPosition {
            position: parse_fen(BOARD).unwrap(),
            result: Some(GameResult::BlackWin),
            score: None,
        };
        // White may still castle queen side; Black castled king side.
        let castled = Castled(ByColor {
            white: None,
            black: Some(CastlingSide::KingSide),
        });
        assert_eq!(
            record.to_arasan_epd(castled),
            format!("{BOARD} c1 \"2 3\"; c2 \"0.0\";")
        );
        let start = Chess::default();
        let status = |pos: &Chess, color, castled| arasan_castle_status(pos, color, castled);
        assert_eq!(status(&start, Color::White, None), 0);
        let fen = |f: &str| parse_fen(f).unwrap();
        let k_only = fen("r3k2r/8/8/8/8/8/8/R3K2R w Kk - 0 1");
        assert_eq!(status(&k_only, Color::White, None), 1);
        assert_eq!(status(&k_only, Color::Black, None), 1);
        let none = fen("r4rk1/8/8/8/8/8/8/2KR3R w - - 0 1");
        assert_eq!(
            status(&none, Color::White, Some(CastlingSide::QueenSide)),
            4
        );
        assert_eq!(status(&none, Color::Black, Some(CastlingSide::KingSide)), 3);
        assert_eq!(status(&none, Color::Black, None), 5);
    }

    #[test]
    fn every_format_gives_the_same_record() {
        let expected = LabeledPosition {
            position: parse_fen(BOARD).unwrap(),
            result: Some(GameResult::BlackWin),
            score: None,
        };
        assert_eq!(rec(&format!("{BOARD} c9 \"0-1\";")), expected);
        assert_eq!(rec(&format!("{BOARD} c1 \"x\"; c2 \"0.0\";")), expected);
        assert_eq!(rec(&format!("{BOARD} 0 1 [0.0]")), expected);
        assert_eq!(rec(&format!("{BOARD} [0-1]")), expected);
        assert_eq!(rec(&format!("{BOARD} 0 1 | | 0.0")), expected);
        let csv: Vec<_> = all(LabeledReader::new(
            format!("fen,result\n{BOARD} 0 1,0-1\n").as_bytes(),
            None,
        ));
        assert_eq!(csv, vec![Ok((2, expected.clone()))]);
        // Canonical output reads back to itself.
        assert_eq!(rec(&expected.to_epd()), expected);
        assert_eq!(rec(&expected.to_arasan_epd(Castled::default())), expected);
    }

    #[test]
    fn scores_and_clocks() {
        // Pipe format scores are White-relative; Black is to move here.
        let r = rec(&format!("{BOARD} 3 20 | 35 | 0.5"));
        assert_eq!(r.score, Some(-35));
        assert_eq!(r.result, Some(GameResult::Draw));
        assert_eq!(r.position.halfmoves(), 3);
        let line = r.to_epd();
        assert!(
            line.ends_with("hmvc 3; fmvn 20; c9 \"1/2-1/2\"; ce -35;"),
            "{line}"
        );
        assert_eq!(rec(&line), r);
        let csv: Vec<_> = LabeledReader::new(
            format!("score,fen,result\n-35,{BOARD} 3 20,1/2-1/2\n").as_bytes(),
            None,
        )
        .map(|r| r.unwrap().unwrap().1)
        .collect();
        assert_eq!(csv, vec![r]);
    }

    #[test]
    fn bad_lines_are_located() {
        let text = format!(
            "{BOARD} c9 \"1-0\";\n\nnonsense here\n{BOARD} c9 \"2-0\";\n{BOARD} ce x;\n8/8/8/8/8/8/8/8 w - - [1.0]\n{BOARD} c9 \"1-0\";\n"
        );
        let items: Vec<_> = all(LabeledReader::new(text.as_bytes(), Some("f.epd".into())));
        assert_eq!(items.len(), 6);
        assert!(items[0].is_ok() && items[5].is_ok());
        let lines: Vec<usize> = items
            .iter()
            .filter_map(|r| r.as_ref().err().map(|e| e.line))
            .collect();
        assert_eq!(lines, vec![3, 4, 5, 6]);
        let err = items[2].as_ref().unwrap_err();
        assert!(matches!(err.kind, RecordErrorKind::BadResult(_)));
        assert!(err.to_string().starts_with("f.epd:4: "), "{err}");
        assert!(matches!(
            items[4].as_ref().unwrap_err().kind,
            RecordErrorKind::Position(PositionParseError::Illegal { .. })
        ));
    }

    #[test]
    fn csv_errors() {
        let items: Vec<_> = all(LabeledReader::new("a,b\n".as_bytes(), None));
        assert!(matches!(
            items[0].as_ref().unwrap_err().kind,
            RecordErrorKind::CsvNoFenColumn(_)
        ));
        let items: Vec<_> = all(LabeledReader::new(
            format!("fen,result,score\n{BOARD},1-0\n").as_bytes(),
            None,
        ));
        assert!(matches!(
            items[0].as_ref().unwrap_err().kind,
            RecordErrorKind::CsvFieldCount {
                expected: 3,
                found: 2
            }
        ));
    }

    /// Every item of every block, in order.
    fn blocks(text: &[u8], max_lines: usize) -> Vec<LabeledItem> {
        let mut reader = LabeledBlocks::new(text, Some("f.epd".into()));
        let mut block = LineBlock::new();
        let mut out = Vec::new();
        while reader.read_block(&mut block, max_lines).unwrap() {
            out.extend((0..block.len()).filter_map(|i| block.parse(i)));
        }
        out
    }

    #[test]
    fn blocks_read_exactly_what_the_reader_reads() {
        let epd = format!(
            "\n# c\n{BOARD} c9 \"1-0\";\n\nnonsense here\n{BOARD} c9 \"2-0\";\n{BOARD}  ce 3; c9 \"0-1\";\n\
             {BOARD} ce x;\n8/8/8/8/8/8/8/8 w - - [1.0]\n{BOARD}\t0 7 c9 \"1-0\";\n{BOARD} hmvc 4; fmvn 0;\n\
             {BOARD} 0 1 | 35 | 0.5\n{BOARD} 0 1 [0.0]\nr1bq1rk1/pp2p1bp/2nppn2/2p5/3P1P1R/2N1BN2/PPP3P1/R2QKB2\tb Q - c9 \"1-0\";\n\
             {BOARD} c9 \"1-0\""
        );
        let mut texts: Vec<Vec<u8>> = vec![
            epd.clone().into_bytes(),
            format!("fen,result\n{BOARD} 0 1,0-1\n{BOARD},x\n\n{BOARD}\n").into_bytes(),
            format!("a,b\n{BOARD} c9 \"1-0\";\n").into_bytes(),
            Vec::new(),
        ];
        // Lines that are not UTF-8, before and after the first content line.
        let mut bad = b"\xff\xfe\n".to_vec();
        bad.extend_from_slice(epd.as_bytes());
        bad.extend_from_slice(b"\n\xc3(\n");
        bad.extend_from_slice(epd.as_bytes());
        texts.push(bad);
        for text in &texts {
            let expected: Vec<_> = all(LabeledReader::new(text.as_slice(), Some("f.epd".into())));
            assert!(!text.is_empty() || expected.is_empty());
            for max_lines in [1, 2, 3, 7, 1000] {
                assert_eq!(
                    blocks(text, max_lines),
                    expected,
                    "{max_lines} lines per block"
                );
            }
        }
    }

    #[test]
    fn epd_fast_path_matches_the_joined_fen() {
        // Tabs, runs of spaces and missing fields take the general path.
        for line in [
            format!("{BOARD} c9 \"1-0\";"),
            format!("{BOARD}\tc9 \"1-0\";"),
            "8/8/8/8/8/8/8/K6k  w - - c9 \"1-0\";".to_string(),
            "8/8/8/8/8/8/8/K6k w c9 \"1-0\";".to_string(),
            "8/8/8/8/8/8/8/K6k w - -".to_string(),
            "8/8/8/8/8/8/8/K6k_w - - hmvc 3;".to_string(),
            "8/8/8/8/8/8/8/K6k w - _ hmvc 3;".to_string(),
            "8/8/8/8/8/8/8/K6k w -".to_string(),
            "8/8/8/8/8/8/8/K6k w - -  hmvc 3;".to_string(),
            format!("{BOARD} hmvc 101; fmvn 0;"),
        ] {
            let (board, rest) = split_board(&line);
            let slow = split_board_slow(&line);
            assert_eq!((&board, rest), (&slow.0, slow.1), "{line}");
            for (h, f) in [(0, 1), (3, 20), (101, 1)] {
                assert_eq!(
                    epd_position(&board, h, f),
                    parse_fen(&format!("{} {h} {f}", board.text)),
                    "{line}"
                );
            }
        }
    }

    /// A reader that gives `data` and then fails, as a disk or a
    /// decompressor does.
    struct FailingReader {
        data: std::io::Cursor<Vec<u8>>,
        kind: io::ErrorKind,
    }

    impl io::Read for FailingReader {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.data.read(buf)? {
                0 => Err(io::Error::new(self.kind, "injected failure")),
                n => Ok(n),
            }
        }
    }

    #[test]
    fn a_read_error_ends_the_input_as_an_error_not_a_bad_line() {
        let text = format!("{BOARD} c9 \"1-0\";\n{BOARD} c9 \"0-1\";\n{BOARD} c9");
        for kind in [
            io::ErrorKind::UnexpectedEof,
            io::ErrorKind::InvalidData,
            io::ErrorKind::Other,
        ] {
            let failing = FailingReader {
                data: std::io::Cursor::new(text.clone().into_bytes()),
                kind,
            };
            let items: Vec<_> =
                LabeledReader::new(io::BufReader::new(failing), Some("f.epd.gz".into())).collect();
            // The two whole lines, then the error, then nothing.
            assert_eq!(items.len(), 3, "{kind:?}: {items:?}");
            assert!(items[0].as_ref().is_ok_and(|i| i.is_ok()));
            assert!(items[1].as_ref().is_ok_and(|i| i.is_ok()));
            let error = items[2].as_ref().unwrap_err();
            assert_eq!(error.line, 2);
            assert!(
                error
                    .to_string()
                    .starts_with("f.epd.gz: cannot read past line 2: injected failure"),
                "{error}"
            );
            // Blocks: the error, whatever the block size.
            for max_lines in [1, 2, 1000] {
                let failing = FailingReader {
                    data: std::io::Cursor::new(text.clone().into_bytes()),
                    kind,
                };
                let mut reader = LabeledBlocks::new(io::BufReader::new(failing), None);
                let mut block = LineBlock::new();
                let mut outcome = Ok(true);
                while let Ok(true) = outcome {
                    outcome = reader.read_block(&mut block, max_lines);
                }
                assert!(outcome.is_err(), "{max_lines}");
            }
        }
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let epd = format!("\u{feff}{BOARD} c9 \"1-0\";\n{BOARD} c9 \"0-1\";\n");
        let items = all(LabeledReader::new(epd.as_bytes(), None));
        assert_eq!(items.len(), 2);
        assert!(items.iter().all(Result::is_ok), "{items:?}");
        let csv = format!("\u{feff}fen,result\n{BOARD} 0 1,0-1\n");
        let items = all(LabeledReader::new(csv.as_bytes(), None));
        assert_eq!(items.len(), 1);
        assert_eq!(
            items[0].as_ref().unwrap().1.result,
            Some(GameResult::BlackWin)
        );
        // Only at the start of the file.
        let later = format!("{BOARD} c9 \"1-0\";\n\u{feff}{BOARD} c9 \"0-1\";\n");
        let items = all(LabeledReader::new(later.as_bytes(), None));
        assert!(items[1].is_err());
    }

    /// Labels that are not a result or an integer score reject the line
    /// (located, with the reason), in every format; none is taken silently.
    #[test]
    fn bad_labels_reject_the_line() {
        for (line, kind) in [
            (format!("{BOARD} c9 \"2\";"), "result"),
            (format!("{BOARD} c2 \"1.5\";"), "result"),
            (format!("{BOARD} ce NaN;"), "score"),
            (format!("{BOARD} ce inf;"), "score"),
            (format!("{BOARD} ce 35.5;"), "score"),
            (format!("{BOARD} ce 99999999999;"), "score"),
            (format!("{BOARD} ce -2147483648;"), "score"),
            (format!("{BOARD} c9 \"1-0\"; c2 \"0.0\";"), "conflict"),
            (format!("{BOARD} ce 10; ce -10;"), "conflict"),
            (format!("{BOARD} 0 1 | NaN | 1-0"), "score"),
            (format!("{BOARD} 0 1 | inf | 1-0"), "score"),
            (format!("{BOARD} 0 1 | 1e308 | 1-0"), "score"),
            (format!("{BOARD} 0 1 | 12 | 2"), "result"),
            (format!("{BOARD} 0 1 [2]"), "result"),
            (
                "r4rn1/pb2bppp/np3n2/2pkN3/N2pPB2/6P1/PPP2PBP/R22RK1 b - - c9 \"1-0\";".to_string(),
                "position",
            ),
        ] {
            let text = format!("{BOARD} c9 \"1-0\";\n{line}\n");
            let items = all(LabeledReader::new(text.as_bytes(), Some("f.epd".into())));
            assert_eq!(items.len(), 2, "{line}");
            let error = items[1].as_ref().expect_err(&line);
            assert_eq!(error.line, 2);
            assert!(error.to_string().starts_with("f.epd:2: "), "{error}");
            let matched = match kind {
                "result" => matches!(error.kind, RecordErrorKind::BadResult(_)),
                "score" => matches!(error.kind, RecordErrorKind::BadScore(_)),
                "conflict" => matches!(error.kind, RecordErrorKind::Conflict(_)),
                _ => matches!(error.kind, RecordErrorKind::Position(_)),
            };
            assert!(matched, "{line}: {error}");
        }
        for (row, kind) in [
            ("NaN,1-0", "score"),
            ("inf,1-0", "score"),
            ("12,2", "result"),
        ] {
            let text = format!("fen,score,result\n{BOARD} 0 1,{row}\n");
            let items = all(LabeledReader::new(text.as_bytes(), None));
            let error = items[0].as_ref().unwrap_err();
            assert_eq!(error.line, 2);
            let matched = match kind {
                "result" => matches!(error.kind, RecordErrorKind::BadResult(_)),
                _ => matches!(error.kind, RecordErrorKind::BadScore(_)),
            };
            assert!(matched, "{row}: {error}");
        }
        // The same label twice is no conflict.
        assert_eq!(
            rec(&format!("{BOARD} c9 \"1-0\"; c2 \"1.0\";")).result,
            Some(GameResult::WhiteWin)
        );
    }

    /// Read with [`Labels::Ignore`], a line whose position is good is
    /// accepted whatever its labels, with neither result nor score; a bad
    /// position or clock is still rejected, located; and every line the
    /// strict reader accepts gives the same position.
    #[test]
    fn ignored_labels_never_reject_the_position() {
        let position = parse_fen(BOARD).unwrap();
        let text = format!(
            "{BOARD} c9 \"2\";\n{BOARD} c2 \"1.5\";\n{BOARD} ce NaN;\n{BOARD} ce inf;\n\
             {BOARD} ce 99999999999;\n{BOARD} ce -2147483648;\n{BOARD} c9 \"1-0\"; c2 \"0.0\";\n\
             {BOARD} ce 10; ce -10;\n{BOARD} 0 1 | NaN | 1-0\n{BOARD} 0 1 | 12 | 2\n{BOARD} 0 1 [2]\n\
             {BOARD} c9 \"1-0\"; ce 35;\n{BOARD}\n\
             8/8/8/8/8/8/8/8 w - - c9 \"1-0\";\n{BOARD} hmvc x; c9 \"1-0\";\n"
        );
        let read = |labels| -> Vec<LabeledItem> {
            all(LabeledReader::new(text.as_bytes(), Some("f.epd".into())).labels(labels))
        };
        let ignored = read(Labels::Ignore);
        assert_eq!(ignored.len(), 15);
        for (i, item) in ignored[..13].iter().enumerate() {
            assert_eq!(item, &Ok((i + 1, LabeledPosition::new(position.clone()))));
        }
        let error = ignored[13].as_ref().unwrap_err();
        assert!(
            matches!(error.kind, RecordErrorKind::Position(_)),
            "{error}"
        );
        assert!(error.to_string().starts_with("f.epd:14: "), "{error}");
        let error = ignored[14].as_ref().unwrap_err();
        assert!(
            matches!(error.kind, RecordErrorKind::BadOperation(_)),
            "{error}"
        );
        // The strict reader rejects all but the three well-labeled lines.
        let strict = read(Labels::Read);
        let accepted: Vec<usize> = strict
            .iter()
            .filter_map(|i| Some(i.as_ref().ok()?.0))
            .collect();
        assert_eq!(accepted, vec![12, 13]);
        // CSV: the label columns are not read, not even required.
        let csv = format!("fen,score,result\n{BOARD} 0 1,NaN,2\n{BOARD} 0 1\n,1,1-0\n");
        let items = all(LabeledReader::new(csv.as_bytes(), None).labels(Labels::Ignore));
        assert_eq!(items[0], Ok((2, LabeledPosition::new(position.clone()))));
        assert_eq!(items[1], Ok((3, LabeledPosition::new(position.clone()))));
        assert!(matches!(
            items[2].as_ref().unwrap_err().kind,
            RecordErrorKind::Position(_)
        ));
        // Blocks read the same as the reader.
        let mut reader =
            LabeledBlocks::new(text.as_bytes(), Some("f.epd".into())).labels(Labels::Ignore);
        let mut block = LineBlock::new();
        let mut from_blocks = Vec::new();
        while reader.read_block(&mut block, 4).unwrap() {
            from_blocks.extend((0..block.len()).filter_map(|i| block.parse(i)));
        }
        assert_eq!(from_blocks, ignored);
    }
}
