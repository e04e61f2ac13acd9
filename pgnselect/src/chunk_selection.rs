//! Selecting positions from one chunk of games: the work of one worker
//! thread on one [`GameChunk`].
//!
//! [`select_from_chunk`] runs the [`SamplingVisitor`] over the chunk game by
//! game, checks what pgn-reader lets through silently (a tag line that is
//! not `[Name "value"]`, bytes that are not UTF-8), passes the candidates of
//! each used game through the [`PositionJudge`] and formats the kept
//! positions. The result, a [`ChunkSelection`], holds the formatted lines
//! with their keys (deduplication happens later, in input order), the
//! counters and the problems found, each located by line in the file and by
//! game within the chunk.

use std::cell::Cell;

use engine::chess::position::key;
use engine::formats::labeled::LabeledPosition;
use engine::formats::pgn_chunks::{GameChunk, TrackedSlice};
use pgn_reader::Reader;

use crate::game_visitor::{GameVerdict, SamplingVisitor, UNTERMINATED_COMMENT, next_game_start};
use crate::output_format::OutputFormat;
use crate::position_filter::PositionJudge;
use crate::stats::SelectionStats;

/// Longest comment handed to the visitor in one piece (longer ones are
/// split, which is harmless: comments are ignored).
const SUPPORTED_COMMENT_BYTES: usize = 4096;

/// A malformed game, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Index of the game within its chunk, from 0.
    pub game_in_chunk: u64,
    /// 1-based line in the file.
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

/// What a worker produced from one chunk.
#[derive(Debug, Default)]
pub struct ChunkSelection {
    /// The formatted lines, each ending with a newline.
    pub text: Vec<u8>,
    /// For each line: the position's key and the end offset of the line in
    /// `text`.
    pub lines: Vec<(u64, usize)>,
    /// Games and positions counted (duplicates and written excluded).
    pub stats: SelectionStats,
    /// Malformed games, in order.
    pub problems: Vec<Problem>,
}

impl ChunkSelection {
    /// Counts a malformed game and records where and why.
    fn report(&mut self, game_in_chunk: u64, line: u64, message: String) {
        self.stats.malformed += 1;
        self.problems.push(Problem {
            game_in_chunk,
            line,
            message,
        });
    }
}

/// The per-thread state and settings of a worker.
pub struct ChunkWorker {
    /// The game visitor.
    pub visitor: SamplingVisitor,
    /// The position filters.
    pub judge: PositionJudge,
    /// The output format.
    pub format: OutputFormat,
    /// Whether the lines carry the game result.
    pub with_result: bool,
}

/// The first tag line of `game` that is not of the form `[Name "value"]`:
/// its offset in `game` and a description.
fn broken_tag_line(game: &[u8]) -> Option<(usize, String)> {
    let mut offset = 0;
    for line in game.split(|&b| b == b'\n') {
        let trimmed = line.trim_ascii();
        if !trimmed.starts_with(b"[") {
            break;
        }
        let name_len = trimmed[1..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        let rest = trimmed[1 + name_len..].trim_ascii_start();
        let well_formed =
            name_len > 0 && rest.len() >= 3 && rest.starts_with(b"\"") && rest.ends_with(b"\"]");
        if !well_formed {
            let shown = String::from_utf8_lossy(trimmed);
            return Some((offset, format!("broken tag line {shown:?}")));
        }
        offset += line.len() + 1;
    }
    None
}

/// What pgn-reader lets through in a game's text: a broken tag line, or
/// bytes that are not UTF-8 (checked only when the chunk as a whole is
/// not valid UTF-8). The offset in `game` and a description.
fn text_problem(game: &[u8], chunk_is_utf8: bool) -> Option<(usize, String)> {
    if let Some(problem) = broken_tag_line(game) {
        return Some(problem);
    }
    if chunk_is_utf8 {
        return None;
    }
    std::str::from_utf8(game)
        .err()
        .map(|e| (e.valid_up_to(), "invalid UTF-8".to_string()))
}

/// Runs the worker over every game of `chunk` from input file `file_index`.
pub fn select_from_chunk(
    worker: &mut ChunkWorker,
    chunk: &GameChunk,
    file_index: usize,
) -> ChunkSelection {
    worker.judge.reset();
    let searches_before = worker.judge.searches();
    let nodes_before = worker.judge.search_nodes();
    let chunk_is_utf8 = std::str::from_utf8(&chunk.bytes).is_ok();
    let consumed = Cell::new(0usize);
    let reader_at = |offset: usize| {
        consumed.set(offset);
        Reader::build(TrackedSlice {
            bytes: &chunk.bytes,
            consumed: &consumed,
        })
        .set_supported_comment_length(SUPPORTED_COMMENT_BYTES)
        .finish()
    };
    let mut reader = reader_at(0);
    let mut selection = ChunkSelection::default();
    let mut game_in_chunk = 0u64;
    let mut last_start = None;
    loop {
        let position_of =
            |reader: &Reader<TrackedSlice<'_>>| consumed.get() - reader.buffer().len();
        match reader.has_more() {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let line = chunk.line_at(position_of(&reader));
                let message = format!("unreadable PGN ({e}); the rest of the chunk is skipped");
                selection.report(game_in_chunk, line, message);
                break;
            }
        }
        let start = position_of(&reader);
        if last_start == Some(start) {
            // No progress: never loop on input the reader cannot consume.
            break;
        }
        last_start = Some(start);
        worker
            .visitor
            .start_game(file_index, chunk.first_byte + start as u64);
        let verdict = reader.read_game(&mut worker.visitor);
        let end = position_of(&reader);
        let verdict = match verdict {
            Ok(Some(verdict)) => verdict,
            Ok(None) => break,
            Err(e) => GameVerdict::Malformed(e.to_string()),
        };
        selection.stats.games_read += 1;
        let this_game = game_in_chunk;
        game_in_chunk += 1;
        if worker.visitor.take_unterminated_comment() {
            selection.report(
                this_game,
                chunk.line_at(start),
                UNTERMINATED_COMMENT.to_string(),
            );
            // The reader swallowed what follows: start again at the next game.
            match next_game_start(&chunk.bytes, start + 1) {
                Some(next) => {
                    reader = reader_at(next);
                    continue;
                }
                None => break,
            }
        }
        let game_text = &chunk.bytes[start..end.max(start)];
        let text_problem = match verdict {
            GameVerdict::Malformed(_) => None,
            _ => text_problem(game_text, chunk_is_utf8),
        };
        match (verdict, text_problem) {
            (_, Some((offset, message))) => {
                selection.report(this_game, chunk.line_at(start + offset), message);
            }
            (GameVerdict::Used(result), None) => {
                let (last, history) = worker.visitor.final_position();
                if worker.judge.result_contradicted(last, history, result) {
                    selection.stats.skipped_result += 1;
                } else {
                    selection.stats.games_used += 1;
                    add_positions(worker, result, &mut selection);
                }
            }
            (GameVerdict::Skipped(reason), None) => selection.stats.count_skip(reason),
            (GameVerdict::Malformed(message), None) => {
                selection.report(this_game, chunk.line_at(end.saturating_sub(1)), message);
            }
        }
    }
    selection.stats.searches = worker.judge.searches() - searches_before;
    selection.stats.search_nodes = worker.judge.search_nodes() - nodes_before;
    selection
}

/// Judges and formats the candidates of a used game.
fn add_positions(
    worker: &mut ChunkWorker,
    result: engine::formats::labeled::GameResult,
    selection: &mut ChunkSelection,
) {
    let ChunkWorker {
        visitor,
        judge,
        format,
        with_result,
    } = worker;
    let (mut candidates, history, rng) = visitor.take_candidates();
    let mut game_history = Vec::new();
    for candidate in candidates.drain(..) {
        selection.stats.candidates += 1;
        game_history.clear();
        game_history.extend_from_slice(&history[..candidate.history_len.min(history.len())]);
        let mut castled = candidate.castled;
        match judge.judge(
            candidate.position,
            candidate.has_successor,
            &mut castled,
            &mut game_history,
            rng,
        ) {
            Ok(position) => {
                let record = LabeledPosition {
                    result: with_result.then_some(result),
                    score: None,
                    position,
                };
                format.append_line(&record, castled, &mut selection.text);
                selection.text.push(b'\n');
                selection
                    .lines
                    .push((key(&record.position), selection.text.len()));
            }
            Err(reason) => selection.stats.count_drop(reason),
        }
    }
    visitor.return_buffer(candidates);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_lines_are_checked() {
        assert_eq!(
            broken_tag_line(b"[Event \"x\"]\n[Site \"y\"]\n\n1. e4 *\n"),
            None
        );
        let (offset, message) = broken_tag_line(b"[Event \"x\"]\n[Site \"y]\n\n1. e4 *\n").unwrap();
        assert_eq!(offset, 12);
        assert!(message.contains("Site"), "{message}");
        assert!(broken_tag_line(b"[Event x]\n").is_some());
        assert!(broken_tag_line(b"[\"x\"]\n").is_some());
    }
}
