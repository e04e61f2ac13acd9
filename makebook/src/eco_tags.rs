//! `makebook eco`: tags games with their opening (Arasan's `ecocoder`).
//!
//! Each game of the inputs is classified by the engine library's ECO table
//! ([`engine::formats::eco`]: by position, following transpositions, the
//! deepest named position wins) and written to the output with `[ECO]`,
//! `[Opening]` and, when the name has one, `[Variation]` tags: existing tags
//! of those names are replaced in place, missing ones added after the last
//! tag. Everything else is copied byte for byte — the other tags, the
//! movetext, comments, the text between games. A game that cannot be read
//! (illegal move, bad FEN) is reported with file, line and game number and
//! passed through untouched, as is a game whose opening the table does not
//! know.
//!
//! Games whose input already has an `[ECO]` tag (from another classifier)
//! are compared with ours: the summary gives the exact agreement and the
//! agreement by ECO family (letter and tens digit, `B9` for B90–B99) and by
//! volume (letter).
//!
//! Streaming: the inputs are cut into chunks of whole games
//! ([`engine::formats::pgn_chunks`]) and written as they are classified, so
//! memory does not grow with the input.

use std::cell::Cell;
use std::io::Write;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};
use engine::chess::position::parse_fen;
use engine::formats::atomic_file::{AtomicFile, check_outputs};
use engine::formats::eco::{EcoEntry, EcoTable, eco_family};
use engine::formats::input::open_input;
use engine::formats::pgn_chunks::{GameChunk, GameChunker, TrackedSlice};
use engine::runtime::progress::Progress;
use pgn_reader::{RawTag, Reader, SanPlus, Skip, Visitor};
use shakmaty::{Chess, Move, Position};

/// Problems reported per file unless `--verbose`.
const REPORT_LIMIT: usize = 20;
/// Longest comment read (as for the book builder); a game with a longer
/// one is reported and passed through.
const COMMENT_LENGTH: usize = 4096;
/// The tags `makebook eco` writes.
const ECO_TAGS: [&str; 3] = ["ECO", "Opening", "Variation"];

/// The options of a run.
#[derive(Debug, Clone)]
pub struct EcoOptions {
    /// The PGN inputs (plain, .gz, .zst, or `-`).
    pub inputs: Vec<PathBuf>,
    /// Where to write the tagged games (`None`: only compare and count).
    pub output: Option<PathBuf>,
    /// Report every bad game.
    pub verbose: bool,
    /// Draw a progress bar (on a terminal).
    pub progress: bool,
}

/// What a run found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EcoReport {
    /// Games read.
    pub games: u64,
    /// Games given tags.
    pub classified: u64,
    /// Readable games whose opening the table does not know.
    pub unknown: u64,
    /// Games that could not be read (passed through untouched).
    pub malformed: u64,
    /// Games that had an `[ECO]` tag and were classified by us.
    pub compared: u64,
    /// Of those, the same code.
    pub same_code: u64,
    /// Of those, the same ECO family (letter and tens digit).
    pub same_family: u64,
    /// Of those, the same volume (letter).
    pub same_volume: u64,
    /// Stopped by Ctrl-C/SIGTERM (no output written).
    pub interrupted: bool,
}

impl EcoReport {
    /// The summary printed at the end.
    pub fn summary(&self) -> String {
        let pct = |n: u64, of: u64| 100.0 * n as f64 / of.max(1) as f64;
        let mut s = format!(
            "games {}: classified {} ({:.1}%), opening unknown {}, unreadable {} (passed through)\n",
            self.games,
            self.classified,
            pct(self.classified, self.games),
            self.unknown,
            self.malformed
        );
        if self.compared > 0 {
            s.push_str(&format!(
                "agreement with the input's ECO tags on {} games: same code {:.1}%, same family (B9 = B90-B99) {:.1}%, same volume {:.1}%\n",
                self.compared,
                pct(self.same_code, self.compared),
                pct(self.same_family, self.compared),
                pct(self.same_volume, self.compared)
            ));
        }
        s
    }
}

/// What the visitor made of one game.
enum Classified {
    /// Readable: our entry (if the table knows the opening) and the
    /// input's `[ECO]` tag.
    Game {
        entry: Option<&'static EcoEntry>,
        tagged: Option<String>,
    },
    /// Unreadable, with the reason and the text to look for to find the
    /// line of the problem.
    Malformed(String, Option<String>),
}

/// A game's tags as far as classification needs them.
struct Tags {
    start: Result<Chess, String>,
    eco: Option<String>,
}

/// The main line being read.
struct Line {
    tags: Tags,
    position: Chess,
    moves: Vec<Move>,
    /// The first illegal move: the reason and the move as written.
    error: Option<(String, String)>,
}

struct EcoVisitor {
    table: &'static EcoTable,
}

impl Visitor for EcoVisitor {
    type Tags = Tags;
    type Movetext = Line;
    type Output = Classified;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Tags {
            start: Ok(Chess::default()),
            eco: None,
        })
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        let text = || String::from_utf8_lossy(&value.decode()).trim().to_string();
        match name {
            b"FEN" => {
                let fen = text();
                tags.start = parse_fen(&fen).map_err(|e| format!("bad FEN tag {fen:?}: {e}"));
            }
            b"ECO" => tags.eco = Some(text()).filter(|e| !e.is_empty() && e != "?"),
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        let position = match &tags.start {
            Ok(p) => p.clone(),
            Err(e) => {
                return ControlFlow::Break(Classified::Malformed(
                    e.clone(),
                    Some("[FEN".to_string()),
                ));
            }
        };
        ControlFlow::Continue(Line {
            tags,
            position,
            moves: Vec::new(),
            error: None,
        })
    }

    fn san(&mut self, line: &mut Self::Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        if line.error.is_some() {
            return ControlFlow::Continue(());
        }
        match san_plus.san.to_move(&line.position) {
            Ok(m) => {
                line.position.play_unchecked(m);
                line.moves.push(m);
            }
            Err(_) => {
                let text = san_plus.to_string();
                line.error = Some((
                    format!("illegal move {text} after {} plies", line.moves.len()),
                    text,
                ));
            }
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _line: &mut Self::Movetext) -> ControlFlow<Self::Output, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, line: Self::Movetext) -> Self::Output {
        if let Some((message, text)) = line.error {
            return Classified::Malformed(message, Some(text));
        }
        let start = line.tags.start.expect("checked in begin_movetext");
        Classified::Game {
            entry: self.table.classify(&start, &line.moves),
            tagged: line.tags.eco,
        }
    }
}

/// Where `token` first occurs in `text` as a whole word (for a tag, as a
/// line start), if it does.
fn find_token(text: &[u8], token: &[u8]) -> Option<usize> {
    if token.is_empty() || token.len() > text.len() {
        return None;
    }
    let is_word = |b: Option<&u8>| b.is_none_or(|b| !b.is_ascii_alphanumeric());
    (0..=text.len() - token.len()).find(|&i| {
        text[i..].starts_with(token)
            && (token[0] == b'[' || is_word(i.checked_sub(1).and_then(|j| text.get(j))))
            && (token[0] == b'[' || is_word(text.get(i + token.len())))
    })
}

/// Escapes a PGN tag value.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The name of the tag on `line`, if it is a tag line.
fn tag_name(line: &[u8]) -> Option<&[u8]> {
    let line = line.trim_ascii_start();
    let rest = line.strip_prefix(b"[")?;
    let end = rest.iter().position(|b| b.is_ascii_whitespace())?;
    Some(&rest[..end])
}

/// `game` (one game's bytes, up to the next game) with our tags: existing
/// `ECO`/`Opening`/`Variation` lines replaced or dropped, missing ones added
/// after the last tag line. `None` when the game has no tag section.
pub fn retag(game: &[u8], entry: &EcoEntry) -> Option<Vec<u8>> {
    let ours = entry.tags();
    let lines: Vec<&[u8]> = game.split_inclusive(|&b| b == b'\n').collect();
    // The tag section: leading blank lines, then consecutive tag lines.
    let first = lines.iter().position(|l| !l.trim_ascii().is_empty())?;
    let count = lines[first..]
        .iter()
        .take_while(|l| tag_name(l).is_some())
        .count();
    if count == 0 {
        return None;
    }
    let last = first + count - 1;
    let newline: &[u8] = if lines[last].ends_with(b"\r\n") {
        b"\r\n"
    } else {
        b"\n"
    };
    let line_of =
        |(name, value): &(String, String)| format!("[{name} \"{}\"]", escape(value)).into_bytes();
    let mut written = [false; ECO_TAGS.len()];
    let mut out = Vec::with_capacity(game.len() + 128);
    for (i, line) in lines.iter().enumerate() {
        if (first..=last).contains(&i)
            && let Some(slot) =
                tag_name(line).and_then(|n| ECO_TAGS.iter().position(|t| t.as_bytes() == n))
        {
            // Replace our tags in place (once); drop a Variation we do not
            // have and any repetition.
            if !written[slot]
                && let Some(tag) = ours.iter().find(|(n, _)| n == ECO_TAGS[slot])
            {
                out.extend_from_slice(&line_of(tag));
                out.extend_from_slice(newline);
            }
            written[slot] = true;
        } else {
            out.extend_from_slice(line);
        }
        if i == last {
            if !out.ends_with(b"\n") {
                out.extend_from_slice(newline);
            }
            for tag in &ours {
                let slot = ECO_TAGS.iter().position(|t| *t == tag.0).expect("our tag");
                if !written[slot] {
                    out.extend_from_slice(&line_of(tag));
                    out.extend_from_slice(newline);
                    written[slot] = true;
                }
            }
        }
    }
    Some(out)
}

/// Classifies the games of one chunk, writing them to `out` (when given)
/// and counting them; problems are reported through `report_problem`
/// (line, game number within the file, message).
fn process_chunk(
    chunk: &GameChunk,
    table: &'static EcoTable,
    first_game: u64,
    report: &mut EcoReport,
    out: &mut Option<impl Write>,
    mut report_problem: impl FnMut(u64, u64, &str),
) -> Result<u64> {
    let consumed = Cell::new(0usize);
    let mut reader = Reader::build(TrackedSlice {
        bytes: &chunk.bytes,
        consumed: &consumed,
    })
    .set_supported_comment_length(COMMENT_LENGTH)
    .finish();
    let mut visitor = EcoVisitor { table };
    // Games as (start offset, outcome); a game's bytes run to the next
    // game's start.
    let mut games: Vec<(usize, Classified)> = Vec::new();
    let mut last_start = None;
    loop {
        let more = reader.has_more();
        let start = consumed.get() - reader.buffer().len();
        match more {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                games.push((
                    start,
                    Classified::Malformed(
                        format!("unreadable PGN ({e}); the rest is copied"),
                        None,
                    ),
                ));
                break;
            }
        }
        if last_start == Some(start) {
            break;
        }
        last_start = Some(start);
        match reader.read_game(&mut visitor) {
            Ok(Some(c)) => games.push((start, c)),
            Ok(None) => break,
            Err(e) => games.push((
                start,
                Classified::Malformed(format!("unreadable: {e}"), None),
            )),
        }
    }
    let end = chunk.bytes.len();
    // Text before the first game (comments, blank lines) is copied as is.
    let head = games.first().map_or(end, |g| g.0);
    if let Some(w) = out.as_mut() {
        w.write_all(&chunk.bytes[..head])?;
    }
    for (i, (start, outcome)) in games.iter().enumerate() {
        let stop = games.get(i + 1).map_or(end, |g| g.0);
        let bytes = &chunk.bytes[*start..stop];
        let number = first_game + i as u64 + 1;
        report.games += 1;
        let mut text: Option<Vec<u8>> = None;
        match outcome {
            Classified::Game {
                entry: Some(entry),
                tagged,
            } => {
                report.classified += 1;
                if let Some(theirs) = tagged {
                    report.compared += 1;
                    report.same_code += u64::from(*theirs == entry.eco);
                    report.same_family += u64::from(eco_family(theirs) == entry.eco_family());
                    report.same_volume += u64::from(theirs.get(..1) == entry.eco.get(..1));
                }
                text = retag(bytes, entry);
            }
            Classified::Game { entry: None, .. } => report.unknown += 1,
            Classified::Malformed(message, needle) => {
                report.malformed += 1;
                let offset = needle
                    .as_deref()
                    .and_then(|n| find_token(bytes, n.as_bytes()))
                    .unwrap_or(0);
                report_problem(chunk.line_at(start + offset), number, message);
            }
        }
        if let Some(w) = out.as_mut() {
            w.write_all(text.as_deref().unwrap_or(bytes))?;
        }
    }
    Ok(games.len() as u64)
}

/// Runs `makebook eco`; `interrupt` stops it between chunks, without
/// writing the output.
///
/// # Errors
/// Unreadable inputs (fatal: a read error or truncated input is not a bad
/// game) and output errors.
pub fn run(options: &EcoOptions, interrupt: &AtomicBool) -> Result<EcoReport> {
    let table = EcoTable::bundled();
    if let Some(output) = &options.output {
        check_outputs(std::slice::from_ref(output), &options.inputs)?;
    }
    let mut out = match &options.output {
        Some(path) => Some(std::io::BufWriter::new(AtomicFile::create(path)?)),
        None => None,
    };
    let mut report = EcoReport::default();
    for path in &options.inputs {
        let input = open_input(path)?;
        let progress = Progress::bytes(input.total_bytes(), options.progress);
        let bytes = input.bytes_read();
        let mut chunker = GameChunker::new(input);
        let mut games_in_file = 0u64;
        let mut problems = 0usize;
        while let Some(chunk) = chunker
            .next_chunk()
            .with_context(|| format!("reading {}", path.display()))?
        {
            games_in_file += process_chunk(
                &chunk,
                table,
                games_in_file,
                &mut report,
                &mut out,
                |line, game, message| {
                    problems += 1;
                    if options.verbose || problems <= REPORT_LIMIT {
                        eprintln!(
                            "{}:{line}: game {game}: {message}; passed through untouched",
                            path.display()
                        );
                    }
                },
            )?;
            progress.set_position(bytes.get());
            progress.set_message(format!("{} games", report.games));
            if interrupt.load(Ordering::Relaxed) {
                report.interrupted = true;
                break;
            }
        }
        progress.finish();
        if report.interrupted {
            // The output's temporary file is removed when dropped.
            return Ok(report);
        }
        if problems > REPORT_LIMIT && !options.verbose {
            eprintln!(
                "{}: {} more unreadable games not shown (--verbose shows all)",
                path.display(),
                problems - REPORT_LIMIT
            );
        }
    }
    if let Some(w) = out {
        let file = w
            .into_inner()
            .map_err(|e| e.into_error())
            .context("writing the output")?;
        file.commit()?;
    }
    Ok(report)
}

/// The path shown for an output in the summary.
pub fn describe_output(path: Option<&Path>) -> String {
    path.map_or("no output (comparison only)".to_string(), |p| {
        format!("wrote {}", p.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> EcoEntry {
        EcoEntry {
            eco: "B90".into(),
            name: name.into(),
            plies: 10,
            line: String::new(),
        }
    }

    #[test]
    fn retag_replaces_adds_and_keeps_the_rest() {
        let game =
            b"[Event \"x\"]\n[ECO \"B20\"]\n[Result \"1-0\"]\n\n1. e4 c5 {a \"comment\"} 1-0\n\n";
        let out = retag(game, &entry("Sicilian Defense: Najdorf \"x\"")).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "[Event \"x\"]\n[ECO \"B90\"]\n[Result \"1-0\"]\n[Opening \"Sicilian Defense\"]\n\
             [Variation \"Najdorf \\\"x\\\"\"]\n\n1. e4 c5 {a \"comment\"} 1-0\n\n"
        );
        // A Variation we do not have is dropped; CRLF is kept.
        let game = b"[Event \"x\"]\r\n[Variation \"old\"]\r\n\r\n1. e4 *\r\n";
        let out = retag(game, &entry("Sicilian Defense")).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "[Event \"x\"]\r\n[ECO \"B90\"]\r\n[Opening \"Sicilian Defense\"]\r\n\r\n1. e4 *\r\n"
        );
        assert!(retag(b"1. e4 *\n", &entry("x")).is_none());
    }
}
