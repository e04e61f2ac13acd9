//! Running a game visitor over a chunk of PGN and locating problems in it.
//!
//! [`scan_chunk`] feeds a [`GameChunk`] to a pgn-reader [`Visitor`] game by
//! game. A visitor rejects a game by breaking out of it with
//! [`GameVerdict::Malformed`]; the reader then stands right after the
//! offending token, which gives the exact line of the problem. Annotation
//! problems that do not stop the game are reported by the visitor as
//! [`AnnotationNote`]s carrying the offending comment, located afterwards by
//! searching the game's text.

use std::cell::Cell;

use std::ops::ControlFlow;

use engine::formats::pgn_chunks::TrackedSlice;
use pgn_reader::{Reader, Visitor};

use crate::game_chunks::GameChunk;

/// What a visitor made of one game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GameVerdict {
    /// The game's moves were used (possibly cut short at the ply limit).
    Used,
    /// The game has no moves (e.g. a forfeit); nothing to use, no problem.
    NoMoves,
    /// The game is broken (illegal move, bad FEN, stray text); it was skipped.
    Malformed(String),
}

/// An annotation problem inside an otherwise usable game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnotationNote {
    /// Text to search for in the game to find the line (e.g. `{weight: x}`).
    pub needle: Vec<u8>,
    /// What is wrong.
    pub message: String,
}

/// A visitor that can report annotation problems found in the last game.
pub trait ReportsAnnotations {
    /// The annotation problems of the game just read (emptied by the call).
    fn take_annotation_notes(&mut self) -> Vec<AnnotationNote>;
}

/// What kind of problem a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ProblemKind {
    /// The whole game was skipped.
    MalformedGame,
    /// One annotation was ignored; the game was used.
    MalformedAnnotation,
}

/// A problem found in a chunk, located by line and by game within the chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Game or annotation.
    pub kind: ProblemKind,
    /// Index of the game within its chunk, from 0.
    pub game_in_chunk: usize,
    /// Line in the file.
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

/// The outcome of scanning one chunk.
#[derive(Debug, Default)]
pub struct ChunkScan {
    /// Games found (used, empty or malformed).
    pub games: usize,
    /// Games that contributed moves.
    pub games_used: usize,
    /// Games without moves.
    pub games_without_moves: usize,
    /// Problems, in order of appearance.
    pub problems: Vec<Problem>,
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Runs `visitor` over every game of `chunk`.
pub fn scan_chunk<V>(chunk: &GameChunk, visitor: &mut V) -> ChunkScan
where
    V: Visitor<Output = GameVerdict> + ReportsAnnotations,
{
    let consumed = Cell::new(0usize);
    let mut reader = Reader::build(TrackedSlice {
        bytes: &chunk.bytes,
        consumed: &consumed,
    })
    .set_supported_comment_length(4096)
    .finish();
    let mut scan = ChunkScan::default();
    let mut last_start = None;
    loop {
        match reader.has_more() {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                // Only parser errors can occur on a slice; they were already
                // reported with their game, so stop at what is left.
                scan.problems.push(Problem {
                    kind: ProblemKind::MalformedGame,
                    game_in_chunk: scan.games.saturating_sub(1),
                    line: chunk.line_at(consumed.get() - reader.buffer().len()),
                    message: format!("unreadable PGN after this point ({e}); rest skipped"),
                });
                break;
            }
        }
        let start = consumed.get() - reader.buffer().len();
        if last_start == Some(start) {
            // No progress: never loop forever on input the reader rejects.
            break;
        }
        last_start = Some(start);
        let game_index = scan.games;
        scan.games += 1;
        let verdict = reader.read_game(visitor);
        let here = consumed.get() - reader.buffer().len();
        match verdict {
            Ok(Some(GameVerdict::Used)) => scan.games_used += 1,
            Ok(Some(GameVerdict::NoMoves)) => scan.games_without_moves += 1,
            Ok(Some(GameVerdict::Malformed(message))) => scan.problems.push(Problem {
                kind: ProblemKind::MalformedGame,
                game_in_chunk: game_index,
                line: chunk.line_at(here.saturating_sub(1)),
                message: format!("{message}; game skipped"),
            }),
            Ok(None) => {
                scan.games -= 1;
                break;
            }
            Err(e) => scan.problems.push(Problem {
                kind: ProblemKind::MalformedGame,
                game_in_chunk: game_index,
                line: chunk.line_at(here.saturating_sub(1)),
                message: format!("{e}; game skipped"),
            }),
        }
        let notes = visitor.take_annotation_notes();
        if !notes.is_empty() {
            // The game's text runs from `start` to the next game's start;
            // read ahead to find it, since the reader may have stopped early.
            // Notes come in text order, so each search starts after the
            // previous find (two identical comments get their own lines).
            let mut search_from = start;
            for note in notes {
                let offset = find(&chunk.bytes[search_from..], &note.needle)
                    .map_or(search_from, |o| search_from + o);
                search_from = (offset + 1).min(chunk.bytes.len());
                scan.problems.push(Problem {
                    kind: ProblemKind::MalformedAnnotation,
                    game_in_chunk: game_index,
                    line: chunk.line_at(offset),
                    message: note.message,
                });
            }
        }
    }
    scan
}

/// Shorthand for a visitor continuing.
pub const CONTINUE: ControlFlow<GameVerdict> = ControlFlow::Continue(());
