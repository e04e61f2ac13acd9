//! Reading the games of a PGN chunk with a pgn-reader visitor, so that no
//! game is lost or used in part without a located report.
//!
//! [`read_games`] runs a [`GameVisitor`] over every game of a
//! [`GameChunk`] and hands each game's outcome to the caller, in order: the
//! visitor's output, or a [`GameProblem`] naming the line and the reason.
//! pgn-reader is fast and lenient: it skips what it does not understand
//! without a word. What it lets through is checked here, on the game's text:
//!
//! * a comment (`{` without its `}`) or anything else that makes the reader
//!   run into the next game: the game is reported and reading starts again
//!   at the next game start (a `[` opening a line after a blank line, or an
//!   `[Event ` line), so one broken game never swallows the rest;
//! * tag lines that are not `[Name "value"]`, bytes that are not UTF-8;
//! * in the movetext ([`Check::Full`]): stray tokens (`1. e4 xyz e5`, a
//!   stray `}`), a `)` without its `(` or a `(` never closed, no result
//!   marker (a game cut short), text after the result marker;
//! * long algebraic moves (`e2-e4`, `Ng1-f3`) and promotions without `=`
//!   (`a8Q`) are read correctly: the game's text is rewritten to the SAN
//!   spelling pgn-reader understands (`e2e4`, `Ng1f3`, `a8=Q`; same lines)
//!   and read again.
//!
//! A game whose text has a problem is reported even when the visitor liked
//! it, and the text's problem comes first (a stray token explains an
//! illegal move that follows it). Visitors must therefore keep what they
//! gather from a game until the caller has seen its outcome.

use std::cell::Cell;
use std::ops::ControlFlow;

use pgn_reader::{Nag, Outcome, RawComment, RawTag, Reader, SanPlus as ReaderSan, Skip, Visitor};
use shakmaty::san::SanPlus;

use crate::chess::excerpt::excerpt_bytes;
use crate::formats::pgn_chunks::{GameChunk, TrackedSlice, count_newlines};

/// Longest comment handed to a visitor in one piece (longer ones are split).
const SUPPORTED_COMMENT_BYTES: usize = 4096;

/// What a game whose comment runs into the next game is reported as.
pub const UNTERMINATED_COMMENT: &str = "unterminated comment: a '{' runs into the next game";

/// A visitor that can be told where each game starts.
pub trait GameVisitor: Visitor {
    /// Called before each game with the offset of its first byte in the
    /// (decompressed) stream, which identifies the game however the
    /// stream was cut into chunks.
    fn begin_game(&mut self, _stream_offset: u64) {}
}

/// How much of a game's text is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Tag lines and UTF-8 only (for games the caller will not use).
    Tags,
    /// Everything, movetext included.
    Full,
}

/// A game that cannot be used, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameProblem {
    /// 1-based line in the file.
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

/// One game read from a chunk.
#[derive(Debug)]
pub struct GameRead<O> {
    /// Index of the game within its chunk, from 0.
    pub index: u64,
    /// Offset of the game's first byte in the chunk.
    pub start: usize,
    /// Where the reader stopped reading the game: right after the
    /// offending token when the visitor broke off ([`GameRead::stop_line`]).
    stop: Stop,
    /// The visitor's output, or what is wrong with the game's text.
    pub outcome: Result<O, GameProblem>,
}

/// Where the reader stopped in a game, found only when asked for (counting
/// lines is not free).
#[derive(Debug, Clone, Copy)]
enum Stop {
    /// At this offset in the chunk.
    Offset(usize),
    /// At this line (the game was read from a rewritten text).
    Line(u64),
}

impl<O> GameRead<O> {
    /// The line, in `chunk` (the one read), where the reader stopped
    /// reading the game: right after the offending token when the visitor
    /// broke off.
    pub fn stop_line(&self, chunk: &GameChunk) -> u64 {
        match self.stop {
            Stop::Offset(offset) => chunk.line_at(offset.saturating_sub(1)),
            Stop::Line(line) => line,
        }
    }
}

/// Offset of the first game start in `bytes` at or after `from`: a `[`
/// opening a line that follows a blank line, or opening an `[Event ` line.
pub fn next_game_start(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(found) = memchr::memchr(b'[', bytes.get(at..)?) {
        at += found;
        let before = &bytes[..at];
        if before.ends_with(b"\n\n")
            || before.ends_with(b"\n\r\n")
            || ((at == 0 || before.ends_with(b"\n")) && bytes[at..].starts_with(b"[Event "))
        {
            return Some(at);
        }
        at += 1;
    }
    None
}

/// What the reader handed the visitor in one game's movetext, counted so
/// that the text check can tell whether the reader dropped a token.
#[derive(Debug, Clone, Copy, Default)]
struct ReadCounts {
    /// Moves handed over (main line and variations).
    moves: u32,
    /// Result markers handed over.
    outcomes: u32,
    /// Tags handed over.
    tags: u32,
    /// Whether the visitor broke off the game.
    broke: bool,
}

/// A visitor wrapped so that what it was handed is counted.
struct Counted<'v, V> {
    inner: &'v mut V,
    counts: ReadCounts,
}

impl<'v, V: Visitor> Counted<'v, V> {
    fn new(inner: &'v mut V) -> Self {
        Counted {
            inner,
            counts: ReadCounts::default(),
        }
    }

    fn note<T>(&mut self, flow: ControlFlow<V::Output, T>) -> ControlFlow<V::Output, T> {
        self.counts.broke |= flow.is_break();
        flow
    }
}

impl<V: Visitor> Visitor for Counted<'_, V> {
    type Tags = V::Tags;
    type Movetext = V::Movetext;
    type Output = V::Output;

    fn begin_tags(&mut self) -> ControlFlow<V::Output, V::Tags> {
        self.counts = ReadCounts::default();
        let flow = self.inner.begin_tags();
        self.note(flow)
    }

    fn tag(
        &mut self,
        tags: &mut V::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<V::Output> {
        self.counts.tags += 1;
        let flow = self.inner.tag(tags, name, value);
        self.note(flow)
    }

    fn begin_movetext(&mut self, tags: V::Tags) -> ControlFlow<V::Output, V::Movetext> {
        let flow = self.inner.begin_movetext(tags);
        self.note(flow)
    }

    fn san(&mut self, movetext: &mut V::Movetext, san: ReaderSan) -> ControlFlow<V::Output> {
        self.counts.moves += 1;
        let flow = self.inner.san(movetext, san);
        self.note(flow)
    }

    fn nag(&mut self, movetext: &mut V::Movetext, nag: Nag) -> ControlFlow<V::Output> {
        let flow = self.inner.nag(movetext, nag);
        self.note(flow)
    }

    fn partial_comment(
        &mut self,
        movetext: &mut V::Movetext,
        comment: RawComment<'_>,
    ) -> ControlFlow<V::Output> {
        let flow = self.inner.partial_comment(movetext, comment);
        self.note(flow)
    }

    fn comment(
        &mut self,
        movetext: &mut V::Movetext,
        comment: RawComment<'_>,
    ) -> ControlFlow<V::Output> {
        let flow = self.inner.comment(movetext, comment);
        self.note(flow)
    }

    fn begin_variation(&mut self, movetext: &mut V::Movetext) -> ControlFlow<V::Output, Skip> {
        let flow = self.inner.begin_variation(movetext);
        self.note(flow)
    }

    fn end_variation(&mut self, movetext: &mut V::Movetext) -> ControlFlow<V::Output> {
        let flow = self.inner.end_variation(movetext);
        self.note(flow)
    }

    fn outcome(&mut self, movetext: &mut V::Movetext, outcome: Outcome) -> ControlFlow<V::Output> {
        self.counts.outcomes += 1;
        let flow = self.inner.outcome(movetext, outcome);
        self.note(flow)
    }

    fn end_game(&mut self, movetext: V::Movetext) -> V::Output {
        self.inner.end_game(movetext)
    }
}

/// A pgn-reader over `bytes` from `offset`, publishing its progress.
fn reader_at<'a>(
    bytes: &'a [u8],
    consumed: &'a Cell<usize>,
    offset: usize,
) -> Reader<TrackedSlice<'a>> {
    consumed.set(offset);
    Reader::build(TrackedSlice { bytes, consumed })
        .set_supported_comment_length(SUPPORTED_COMMENT_BYTES)
        .finish()
}

/// Where `reader` stands in its slice.
fn position(reader: &Reader<TrackedSlice<'_>>, consumed: &Cell<usize>) -> usize {
    consumed.get() - reader.buffer().len()
}

/// Runs `visitor` over every game of `chunk`; `check` says how much of
/// each game's text to check given the visitor's output, and `on_game`
/// receives every game in order (with the visitor, to take what it
/// gathered).
pub fn read_games<V: GameVisitor>(
    chunk: &GameChunk,
    visitor: &mut V,
    check: impl Fn(&V::Output) -> Check,
    mut on_game: impl FnMut(&mut V, GameRead<V::Output>),
) {
    let bytes = chunk.bytes.as_slice();
    let chunk_is_utf8 = std::str::from_utf8(bytes).is_ok();
    let consumed = Cell::new(0usize);
    let mut reader = reader_at(bytes, &consumed, 0);
    let mut index = 0u64;
    let mut last_start = None;
    loop {
        match reader.has_more() {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let line = chunk.line_at(position(&reader, &consumed));
                let message = format!("unreadable PGN ({e}); the rest of the chunk is skipped");
                on_game(visitor, failed(index, 0, line, message));
                break;
            }
        }
        let start = position(&reader, &consumed);
        if last_start == Some(start) {
            // No progress: never loop on input the reader cannot consume.
            break;
        }
        last_start = Some(start);
        visitor.begin_game(chunk.first_byte + start as u64);
        let mut counted = Counted::new(visitor);
        let read = reader.read_game(&mut counted);
        let counts = counted.counts;
        let stopped = position(&reader, &consumed);
        // The game's text runs to where the reader finds the next game.
        let end = match reader.has_more() {
            Ok(_) => position(&reader, &consumed),
            Err(_) => bytes.len(),
        }
        .max(stopped)
        .max(start);
        if let Some(next) = next_game_start(&bytes[..end], start + 1) {
            // The reader ran into the next game: an unterminated comment
            // costs this game; anything else (tags without movetext, whose
            // reading goes on into the next game's tags) is read again on
            // its own. Reading goes on from the next game.
            let first_line = chunk.line_at(start);
            let game = match runaway(&bytes[start..next]) {
                Some(offset) => failed(
                    index,
                    start,
                    chunk.line_at(start + offset),
                    UNTERMINATED_COMMENT.to_string(),
                ),
                None => {
                    let offset = chunk.first_byte + start as u64;
                    let (outcome, stop) =
                        read_alone(visitor, &bytes[start..next], offset, first_line, &check);
                    GameRead {
                        index,
                        start,
                        stop,
                        outcome,
                    }
                }
            };
            on_game(visitor, game);
            index += 1;
            reader = reader_at(bytes, &consumed, next);
            last_start = None;
            continue;
        }
        if counts.tags == 0
            && counts.moves == 0
            && counts.outcomes == 0
            && only_comments(&bytes[start..end])
        {
            // Comments between games (`; Game 4: …`) are not a game.
            continue;
        }
        let mut stop = Stop::Offset(stopped);
        let outcome = match read {
            Ok(None) => break,
            Err(e) => Err(GameProblem {
                line: chunk.line_at(stopped.saturating_sub(1)),
                message: e.to_string(),
            }),
            Ok(Some(output)) => match check_text(
                &bytes[start..end],
                check(&output),
                chunk_is_utf8,
                &Reading {
                    counts,
                    stopped: stopped - start,
                },
            ) {
                TextVerdict::Fine => Ok(output),
                TextVerdict::Problem { offset, message } => Err(GameProblem {
                    line: chunk.line_at(start + offset),
                    message,
                }),
                TextVerdict::Rewrite(text) => {
                    let first_line = chunk.line_at(start);
                    let offset = chunk.first_byte + start as u64;
                    let (outcome, line) = read_alone(visitor, &text, offset, first_line, &check);
                    stop = line;
                    outcome
                }
            },
        };
        on_game(
            visitor,
            GameRead {
                index,
                start,
                stop,
                outcome,
            },
        );
        index += 1;
    }
}

/// A game read that failed.
fn failed<O>(index: u64, start: usize, line: u64, message: String) -> GameRead<O> {
    GameRead {
        index,
        start,
        stop: Stop::Line(line),
        outcome: Err(GameProblem { line, message }),
    }
}

/// Reads one game alone from `text` (a rewritten game, or a game cut off
/// at the next game start) and checks its text; the outcome and where the
/// reader stopped.
fn read_alone<V: GameVisitor>(
    visitor: &mut V,
    text: &[u8],
    stream_offset: u64,
    first_line: u64,
    check: &impl Fn(&V::Output) -> Check,
) -> (Result<V::Output, GameProblem>, Stop) {
    let line_of = |offset: usize| first_line + count_newlines(&text[..offset.min(text.len())]);
    let consumed = Cell::new(0usize);
    let mut reader = reader_at(text, &consumed, 0);
    visitor.begin_game(stream_offset);
    let mut counted = Counted::new(visitor);
    let read = reader.read_game(&mut counted);
    let counts = counted.counts;
    let stopped = position(&reader, &consumed);
    let stop_line = line_of(stopped.saturating_sub(1));
    let problem = |line, message| Err(GameProblem { line, message });
    let outcome = match read {
        Ok(None) => problem(stop_line, "the game's text is empty".to_string()),
        Err(e) => problem(stop_line, e.to_string()),
        Ok(Some(output)) => {
            let reading = Reading { counts, stopped };
            match check_text(text, check(&output), false, &reading) {
                TextVerdict::Problem { offset, message } => problem(line_of(offset), message),
                TextVerdict::Fine | TextVerdict::Rewrite(_) => Ok(output),
            }
        }
    };
    (outcome, Stop::Line(stop_line))
}

/// The offset of the `{` that makes the text of a game (up to the next
/// game start) run into the next game, if that is why.
fn runaway(text: &[u8]) -> Option<usize> {
    let mut at = 0;
    while let Some(open) = memchr::memchr(b'{', &text[at..]) {
        let open = at + open;
        match memchr::memchr(b'}', &text[open..]) {
            Some(close) => at = open + close + 1,
            None => return Some(open),
        }
    }
    None
}

/// Whether `text` holds only white space and comments (`{…}`, `;` to the
/// end of the line, `%` lines).
fn only_comments(text: &[u8]) -> bool {
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            b'{' => match memchr::memchr(b'}', &text[i..]) {
                Some(k) => i += k + 1,
                None => return false,
            },
            b';' | b'%' => i = line_end(text, i),
            _ => return false,
        }
    }
    true
}

/// What the check of a game's text found.
#[derive(Debug, PartialEq, Eq)]
enum TextVerdict {
    /// Nothing wrong.
    Fine,
    /// A problem at `offset` in the game's text.
    Problem { offset: usize, message: String },
    /// The text with long algebraic moves and `=`-less promotions respelt:
    /// read it again.
    Rewrite(Vec<u8>),
}

fn problem(offset: usize, message: impl Into<String>) -> TextVerdict {
    TextVerdict::Problem {
        offset,
        message: message.into(),
    }
}

/// Where pgn-reader ends a movetext token.
fn is_token_end(byte: u8) -> bool {
    matches!(
        byte,
        b' ' | b'\t'
            | b'\n'
            | b'\r'
            | b'{'
            | b'}'
            | b'('
            | b')'
            | b'!'
            | b'?'
            | b'$'
            | b';'
            | b'.'
            | b'*'
    )
}

/// Result tokens of the movetext.
const RESULTS: [&[u8]; 4] = [b"1-0", b"0-1", b"1/2-1/2", "½-½".as_bytes()];

/// Annotation tokens written as text that pgn-reader skips and that carry
/// no move (evaluation symbols, novelty and diagram marks).
const TEXT_ANNOTATIONS: [&[u8]; 14] = [
    b"+-",
    b"-+",
    b"+/-",
    b"-/+",
    b"+/=",
    b"=/+",
    b"=",
    b"+=",
    b"=+",
    "∞".as_bytes(),
    "=/∞".as_bytes(),
    b"N",
    b"TN",
    b"D",
];

/// The first tag line of `game` that is not `[Name "value"]`, and the
/// offset where the movetext starts.
fn check_tags(game: &[u8]) -> Result<usize, (usize, String)> {
    let mut offset = 0;
    while offset < game.len() {
        let end = line_end(game, offset);
        let line = game[offset..end].trim_ascii();
        if line.first() != Some(&b'[') {
            break;
        }
        let name_len = line[1..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        let rest = line[1 + name_len..].trim_ascii_start();
        let well_formed =
            name_len > 0 && rest.len() >= 3 && rest[0] == b'"' && rest.ends_with(b"\"]");
        if !well_formed {
            let shown = excerpt_bytes(line);
            return Err((offset, format!("broken tag line {shown:?}")));
        }
        offset = end + 1;
    }
    Ok(offset.min(game.len()))
}

/// How the reader went through a game: what it handed the visitor, and
/// where it stopped (offset in the game's text).
#[derive(Debug, Clone, Copy, Default)]
struct Reading {
    counts: ReadCounts,
    stopped: usize,
}

/// Checks the text of one game (tags and, for [`Check::Full`], the
/// movetext); `utf8_known` when the text is known to be valid UTF-8.
fn check_text(game: &[u8], check: Check, utf8_known: bool, reading: &Reading) -> TextVerdict {
    let movetext = match check_tags(game) {
        Ok(offset) => offset,
        Err((offset, message)) => return problem(offset, message),
    };
    if !utf8_known && let Err(e) = std::str::from_utf8(game) {
        return problem(e.valid_up_to(), "invalid UTF-8");
    }
    if check == Check::Tags {
        return TextVerdict::Fine;
    }
    fast_scan(game, movetext, reading).unwrap_or_else(|| check_movetext_exactly(game, movetext))
}

/// What a token starting with each byte adds to the fast scan's count:
/// 1 for a byte that may start a move (`a`–`h`, a piece letter, `O`, `Z0`,
/// `--`), [`OTHER_TOKEN`] for a byte that starts anything else but a
/// number or result (a stray token, a text annotation, a variation, a `;`
/// or `%` comment, a stray `}`), 0 for digits; the top bit marks the
/// delimiters after which a token starts.
const TOKEN_START: [u64; 256] = {
    let mut table = [OTHER_TOKEN; 256];
    let mut c = b'a';
    while c <= b'h' {
        table[c as usize] = 1;
        c += 1;
    }
    let pieces = b"KQRBNOPZ-";
    let mut i = 0;
    while i < pieces.len() {
        table[pieces[i] as usize] = 1;
        i += 1;
    }
    let mut d = b'0';
    while d <= b'9' {
        table[d as usize] = 0;
        d += 1;
    }
    // White space and pgn-reader's token ends that carry nothing by
    // themselves.
    let delimiters = b" \t\r\n.!?";
    let mut i = 0;
    while i < delimiters.len() {
        table[delimiters[i] as usize] = DELIMITER;
        i += 1;
    }
    table
};

/// The count of a token that starts neither a move nor a number.
const OTHER_TOKEN: u64 = 1 << 32;

/// The mark of a delimiter in [`TOKEN_START`].
const DELIMITER: u64 = 1 << 63;

/// The tokens of `text` that start after a delimiter (or at its start):
/// moves in the low 32 bits, others in the next 31.
fn count_token_starts(text: &[u8]) -> u64 {
    let mut count = 0u64;
    let mut after = u64::MAX;
    for &byte in text {
        let entry = TOKEN_START[byte as usize];
        // A delimiter adds only its top bit, which never carries down.
        count = count.wrapping_add(entry & after);
        after = ((entry as i64) >> 63) as u64;
    }
    count & !DELIMITER
}

/// The end of the line holding offset `i` (the offset of its `\n`, or the
/// end of the text).
fn line_end(game: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &game[i..]).map_or(game.len(), |k| i + k)
}

/// Whether the movetext ends with a result marker (after trailing white
/// space).
fn ends_with_result(movetext: &[u8]) -> bool {
    let text = movetext.trim_ascii_end();
    RESULTS.iter().chain([&b"*"[..]].iter()).any(|result| {
        text.ends_with(result)
            && text
                .len()
                .checked_sub(result.len() + 1)
                .is_none_or(|before| {
                    TOKEN_START[text[before] as usize] == DELIMITER || text[before] == b'}'
                })
    })
}

/// The fast check of a movetext, enough for nearly every real game:
/// counts the tokens that start like a move (outside `{}` comments) and
/// compares them with the moves the reader handed over; any token that
/// starts like nothing known (a stray token, a variation, a line comment),
/// a count that differs or a result marker that is not the one last token
/// sends the game to [`check_movetext_exactly`]. `Some` when the game
/// passes or has an unterminated comment.
fn fast_scan(game: &[u8], from: usize, reading: &Reading) -> Option<TextVerdict> {
    let counts = &reading.counts;
    // Tokens starting from here on were not read (the visitor broke off).
    let unread = if counts.broke {
        reading.stopped
    } else {
        game.len()
    };
    let (mut read, mut rest) = (0u64, 0u64);
    let mut segment_start = from;
    loop {
        let segment_end =
            memchr::memchr(b'{', &game[segment_start..]).map_or(game.len(), |k| segment_start + k);
        let split = unread.clamp(segment_start, segment_end);
        read += count_token_starts(&game[segment_start..split]);
        rest += count_token_starts(&game[split..segment_end]);
        if segment_end == game.len() {
            break;
        }
        match memchr::memchr(b'}', &game[segment_end + 1..]) {
            Some(k) => segment_start = segment_end + k + 2,
            None => {
                return Some(problem(
                    segment_end,
                    "unterminated comment: a '{' without its '}'",
                ));
            }
        }
    }
    let moves = read & u64::from(u32::MAX);
    let others = (read | rest) >> 32;
    let fine = others == 0
        && moves == u64::from(counts.moves)
        && (counts.broke || counts.outcomes == 1)
        && ends_with_result(&game[from..]);
    fine.then_some(TextVerdict::Fine)
}

/// A respelling of a movetext token that SAN reads: a long algebraic move
/// without its dash, or a promotion with its `=`.
fn respelt(token: &[u8]) -> Option<Vec<u8>> {
    // e2-e4, Ng1-f3, e7-e8=Q: a dash between two squares.
    if let Some(dash) = token.iter().position(|&b| b == b'-')
        && dash >= 2
        && matches!(token[dash - 1], b'1'..=b'8')
        && matches!(token[dash - 2], b'a'..=b'h')
        && token
            .get(dash + 1)
            .is_some_and(|b| matches!(b, b'a'..=b'h'))
    {
        let mut fixed = token.to_vec();
        fixed.remove(dash);
        return SanPlus::from_ascii(&fixed).is_ok().then_some(fixed);
    }
    // a8Q, exd1N+: a promotion piece right after the last rank.
    let body = token.len()
        - token
            .iter()
            .rev()
            .take_while(|b| matches!(b, b'+' | b'#'))
            .count();
    if body >= 3
        && matches!(
            token[body - 1],
            b'Q' | b'R' | b'B' | b'N' | b'q' | b'r' | b'b' | b'n'
        )
        && matches!(token[body - 2], b'1' | b'8')
    {
        let mut fixed = token.to_vec();
        fixed.insert(body - 1, b'=');
        fixed[body] = fixed[body].to_ascii_uppercase();
        return SanPlus::from_ascii(&fixed).is_ok().then_some(fixed);
    }
    None
}

/// Checks every token of the movetext starting at `from` in `game` (the
/// slow path, when the reader dropped a token): locates the token, or
/// respells long algebraic moves and promotions without `=`.
fn check_movetext_exactly(game: &[u8], from: usize) -> TextVerdict {
    let n = game.len();
    let mut i = from;
    let mut open_variations: Vec<usize> = Vec::new();
    let mut result_at: Option<usize> = None;
    let mut line_start = true;
    let mut respellings: Vec<(usize, usize, Vec<u8>)> = Vec::new();
    let skip_line = |i: usize| {
        game[i..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(n, |k| i + k)
    };
    while i < n {
        let b = game[i];
        let at_line_start = std::mem::replace(&mut line_start, false);
        match b {
            b'\n' => {
                line_start = true;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                line_start = at_line_start;
                i += 1;
                continue;
            }
            b'%' if at_line_start => {
                i = skip_line(i);
                continue;
            }
            b';' => {
                i = skip_line(i);
                continue;
            }
            b'{' => {
                match game[i + 1..].iter().position(|&b| b == b'}') {
                    Some(k) => i += k + 2,
                    None => return problem(i, "unterminated comment: a '{' without its '}'"),
                }
                continue;
            }
            b'.' | b'!' | b'?' => {
                i += 1;
                continue;
            }
            _ => {}
        }
        if result_at.is_some() && open_variations.is_empty() {
            return problem(i, "text after the result marker");
        }
        match b {
            b'(' => {
                open_variations.push(i);
                i += 1;
                continue;
            }
            b')' => {
                if open_variations.pop().is_none() {
                    return problem(i, "a ')' without its '('");
                }
                i += 1;
                continue;
            }
            b'*' => {
                if open_variations.is_empty() {
                    result_at = Some(i);
                }
                i += 1;
                continue;
            }
            b'$' => {
                let digits = game[i + 1..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                if digits == 0 {
                    return problem(i, "stray token \"$\" in the movetext");
                }
                i += 1 + digits;
                continue;
            }
            _ => {}
        }
        let end = game[i..]
            .iter()
            .position(|&b| is_token_end(b))
            .map_or(n, |k| i + k);
        let end = end.max(i + 1);
        let token = &game[i..end];
        if RESULTS.contains(&token) {
            if open_variations.is_empty() {
                result_at = Some(i);
            }
        } else if token.iter().all(u8::is_ascii_digit) {
            // A move number.
        } else if SanPlus::from_ascii(token).is_ok()
            || token == b"0-0"
            || token == b"0-0-0"
            || TEXT_ANNOTATIONS.contains(&token)
        {
            // A move, castling with zeros, or an annotation symbol.
        } else if token == b"e" && game[end..].starts_with(b".p.") {
            // "e.p." after an en-passant capture.
            i = end + 3;
            continue;
        } else if let Some(fixed) = respelt(token) {
            respellings.push((i, end, fixed));
        } else {
            let shown = excerpt_bytes(token);
            return problem(i, format!("stray token {shown:?} in the movetext"));
        }
        i = end;
    }
    if let Some(&open) = open_variations.first() {
        return problem(open, "unclosed variation: a '(' without its ')'");
    }
    if result_at.is_none() {
        return problem(
            n.saturating_sub(1),
            "truncated game: the movetext ends without a result marker",
        );
    }
    if respellings.is_empty() {
        return TextVerdict::Fine;
    }
    let mut text = Vec::with_capacity(n + respellings.len());
    let mut copied = 0;
    for (start, end, fixed) in respellings {
        text.extend_from_slice(&game[copied..start]);
        text.extend_from_slice(&fixed);
        copied = end;
    }
    text.extend_from_slice(&game[copied..]);
    TextVerdict::Rewrite(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(movetext: &str) -> TextVerdict {
        let game = format!("[Event \"x\"]\n[Result \"1-0\"]\n\n{movetext}\n");
        match check_text(game.as_bytes(), Check::Full, false, &Reading::default()) {
            TextVerdict::Problem { offset, message } => TextVerdict::Problem {
                offset: offset - 28,
                message,
            },
            other => other,
        }
    }

    fn message(movetext: &str) -> String {
        match verdict(movetext) {
            TextVerdict::Problem { message, .. } => message,
            other => panic!("{movetext}: {other:?}"),
        }
    }

    #[test]
    fn well_formed_movetext_passes() {
        for movetext in [
            "1. e4 e5 2. Nf3 Nc6 1-0",
            "1.e4 e5 2.Nf3 {[%clk 0:03:00]} Nc6! 3. Bb5?! $1 a6 (3... Nf6 4. O-O) 1/2-1/2",
            "1. e4 {d=30, sd=45, pv=e5 Nf3} e5 ; rest of line\n2. Nf3 *",
            "1. e4 d5 2. e5 f5 3. exf6 e.p. Nf6 0-1",
            "1. d4 d5 2. c4 +/= e6 0-0 0-1",
            "12... Qxh2+ 13. Kf1 Qh1# 0-1",
            "1-0",
            "1. e4 e5 2. Nf3 ½-½",
        ] {
            assert_eq!(verdict(movetext), TextVerdict::Fine, "{movetext}");
        }
    }

    #[test]
    fn each_defect_is_located_and_named() {
        assert_eq!(
            verdict("1. e4 xyz e5 1-0"),
            TextVerdict::Problem {
                offset: 6,
                message: "stray token \"xyz\" in the movetext".into()
            }
        );
        assert!(message("1. e4 } e5 1-0").contains("stray token \"}\""));
        assert!(message("1. e4 e5 2. Nf3").starts_with("truncated game"));
        assert!(message("1. e4 (1. d4 d5 1-0").starts_with("unclosed variation"));
        assert!(message("1. e4 ) e5 1-0").contains("')' without"));
        assert!(message("1. e4 e5 1-0 2. Nf3").starts_with("text after the result"));
        assert!(message("1. e4 {never closed 1-0").starts_with("unterminated comment"));
    }

    #[test]
    fn long_algebraic_and_bare_promotions_are_respelt() {
        let game = "[Event \"x\"]\n\n1. e2-e4 e7-e5 2. Ng1-f3 Nb8xc6 3. a8Q b1n+ 1-0\n";
        match check_text(game.as_bytes(), Check::Full, true, &Reading::default()) {
            TextVerdict::Rewrite(text) => assert_eq!(
                String::from_utf8(text).unwrap(),
                "[Event \"x\"]\n\n1. e2e4 e7e5 2. Ng1f3 Nb8xc6 3. a8=Q b1=N+ 1-0\n"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tags_and_utf8() {
        assert!(matches!(
            check_text(
                b"[Event \"x\"]\n[Site \"y]\n\n1. e4 *\n",
                Check::Tags,
                true,
                &Reading::default()
            ),
            TextVerdict::Problem { offset: 12, .. }
        ));
        assert!(matches!(
            check_text(
                b"[Event \"x\"]\n\n1. e4 \xff *\n",
                Check::Tags,
                false,
                &Reading::default()
            ),
            TextVerdict::Problem { offset: 19, .. }
        ));
        assert_eq!(
            check_text(
                b"[Event \"x\"]\n\n1. e4 xyz\n",
                Check::Tags,
                true,
                &Reading::default()
            ),
            TextVerdict::Fine
        );
    }

    #[test]
    fn game_starts_follow_a_blank_line_or_open_an_event_line() {
        let text = b"[Event \"a\"]\n\n1. e4 {[%clk 0:03:00]} *\n\n[Event \"b\"]\r\n\r\n[x";
        let second = next_game_start(text, 1).unwrap();
        assert!(text[second..].starts_with(b"[Event \"b\"]"));
        assert_eq!(next_game_start(text, second + 1), Some(text.len() - 2));
        assert_eq!(next_game_start(b"{[%clk 0:03:00]}", 0), None);
        let packed = b"[Event \"a\"]\n1. e4 *\n[Event \"b\"]\n1. d4 *\n";
        assert_eq!(next_game_start(packed, 1), Some(20));
    }
}
