//! Running a book visitor over a chunk of PGN and locating problems in it.
//!
//! [`scan_chunk`] reads a [`GameChunk`] with the shared game reader
//! ([`read_games`], which checks what pgn-reader lets through silently:
//! stray tokens, a `{` or `(` never closed, a game cut short, and which
//! recovers at the next game after a comment that runs into it). A visitor
//! rejects a game by breaking out of it with [`GameVerdict::Malformed`]; the
//! reader then stands right after the offending token, which gives the exact
//! line of the problem. A visitor only gathers a game's moves: they are
//! added to its tally ([`BookVisitor::commit`]) once the game passed every
//! check, so a broken game contributes nothing. Annotation problems that do
//! not stop the game are reported by the visitor as [`AnnotationNote`]s
//! carrying the offending comment, located afterwards by searching the
//! game's text.

use std::ops::ControlFlow;

use engine::formats::pgn_games::{Check, GameVisitor, read_games};

use crate::game_chunks::GameChunk;

/// What a visitor made of one game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GameVerdict {
    /// The game's moves were used (possibly cut short at the ply limit).
    Used,
    /// The game has no moves (e.g. a forfeit); nothing to use, no problem.
    NoMoves,
    /// The game is another variant (`[Variant "fischerandom"]`, …): not
    /// read, counted apart from the malformed games, not reported one by one.
    OtherVariant,
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

/// A visitor of the book builder: it gathers one game at a time and adds
/// it to its tally only when told the game is sound.
pub trait BookVisitor: GameVisitor<Output = GameVerdict> {
    /// Adds what was gathered from the last game read (which the visitor
    /// judged [`GameVerdict::Used`] and whose text passed the checks).
    fn commit(&mut self);

    /// The annotation problems of the game just read (emptied by the call).
    fn take_annotation_notes(&mut self) -> Vec<AnnotationNote> {
        Vec::new()
    }
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
    /// Games of another variant.
    pub games_other_variant: usize,
    /// Problems, in order of appearance.
    pub problems: Vec<Problem>,
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Runs `visitor` over every game of `chunk`, committing the sound ones.
pub fn scan_chunk<V: BookVisitor>(chunk: &GameChunk, visitor: &mut V) -> ChunkScan {
    let mut scan = ChunkScan::default();
    read_games(
        chunk,
        visitor,
        |_| Check::Full,
        |visitor, game| {
            let game_index = scan.games;
            scan.games += 1;
            let malformed = |line: u64, message: &str| Problem {
                kind: ProblemKind::MalformedGame,
                game_in_chunk: game_index,
                line,
                message: format!("{message}; game skipped"),
            };
            match &game.outcome {
                Ok(GameVerdict::Used) => {
                    visitor.commit();
                    scan.games_used += 1;
                }
                Ok(GameVerdict::NoMoves) => scan.games_without_moves += 1,
                Ok(GameVerdict::OtherVariant) => scan.games_other_variant += 1,
                Ok(GameVerdict::Malformed(message)) => scan
                    .problems
                    .push(malformed(game.stop_line(chunk), message)),
                Err(problem) => scan
                    .problems
                    .push(malformed(problem.line, &problem.message)),
            }
            let notes = visitor.take_annotation_notes();
            // Notes come in text order, so each search starts after the
            // previous find (two identical comments get their own lines).
            let mut search_from = game.start;
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
        },
    );
    scan
}

/// Shorthand for a visitor continuing.
pub const CONTINUE: ControlFlow<GameVerdict> = ControlFlow::Continue(());
