//! Selecting positions from one chunk of games: the work of one worker
//! thread on one [`GameChunk`].
//!
//! [`select_from_chunk`] reads the chunk's games with the shared PGN reader
//! ([`read_games`], which checks what pgn-reader lets through), passes the
//! candidates of each used game through the [`PositionJudge`] and formats
//! the kept positions. The result, a [`ChunkSelection`], holds the
//! formatted lines with their keys (deduplication happens later, in input
//! order), the counters and the problems found, each located by line in the
//! file and by game within the chunk.

use engine::chess::position::key;
use engine::formats::labeled::{Castled, GameResult, LabeledPosition};
use engine::formats::pgn_chunks::GameChunk;
use engine::formats::pgn_games::{Check, read_games};
use shakmaty::Position;

use crate::game_visitor::{GameVerdict, SamplingVisitor};
use crate::output_format::OutputFormat;
use crate::position_filter::PositionJudge;
use crate::stats::SelectionStats;
use crate::td_targets::TdTargets;

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
    /// TD(λ) targets in place of the comment scores, if asked for.
    pub td_targets: Option<TdTargets>,
    /// The kept positions of the game being written (reused from game to
    /// game): a game's TD targets need all of them.
    pub game_records: Vec<(LabeledPosition, Castled)>,
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
    worker.visitor.set_file(file_index);
    let mut selection = ChunkSelection::default();
    let ChunkWorker {
        visitor,
        judge,
        format,
        with_result,
        td_targets,
        game_records,
    } = worker;
    // Games skipped by their tags are not used: their tag lines are checked,
    // not their movetext.
    let check = |verdict: &GameVerdict| match verdict {
        GameVerdict::Skipped(_) => Check::Tags,
        _ => Check::Full,
    };
    read_games(chunk, visitor, check, |visitor, game| {
        selection.stats.games_read += 1;
        match &game.outcome {
            Err(problem) => selection.report(game.index, problem.line, problem.message.clone()),
            Ok(GameVerdict::Malformed(message)) => {
                selection.report(game.index, game.stop_line(chunk), message.clone());
            }
            Ok(GameVerdict::Skipped(reason)) => selection.stats.count_skip(*reason),
            Ok(GameVerdict::Used(result)) => {
                let result = *result;
                let (last, history) = visitor.final_position();
                if judge.result_contradicted(last, history, result) {
                    selection.stats.skipped_result += 1;
                } else {
                    selection.stats.games_used += 1;
                    add_positions(
                        visitor,
                        judge,
                        GameOutput {
                            format: *format,
                            with_result: *with_result,
                            td_targets: *td_targets,
                            result,
                        },
                        game_records,
                        &mut selection,
                    );
                }
            }
        }
    });
    selection.stats.searches = judge.searches() - searches_before;
    selection.stats.search_nodes = judge.search_nodes() - nodes_before;
    selection
}

/// How the kept positions of one used game are written.
struct GameOutput {
    format: OutputFormat,
    with_result: bool,
    td_targets: Option<TdTargets>,
    result: GameResult,
}

/// Judges the candidates of a used game, then formats the kept ones; with
/// TD targets they are relabeled first, which needs all of them.
fn add_positions(
    visitor: &mut SamplingVisitor,
    judge: &mut PositionJudge,
    output: GameOutput,
    records: &mut Vec<(LabeledPosition, Castled)>,
    selection: &mut ChunkSelection,
) {
    records.clear();
    let (mut candidates, history, rng) = visitor.take_candidates();
    let mut game_history = Vec::new();
    for candidate in candidates.drain(..) {
        selection.stats.candidates += 1;
        game_history.clear();
        game_history.extend_from_slice(&history[..candidate.history_len.min(history.len())]);
        let score = match judge.comment_scores() {
            None => None,
            Some(rule) => match rule.label(
                candidate.comment_score,
                candidate.position.turn().is_white(),
                candidate.tactical_move,
            ) {
                Ok(cp) => Some(cp),
                Err(reason) => {
                    selection.stats.count_drop(reason);
                    continue;
                }
            },
        };
        let mut castled = candidate.castled;
        match judge.judge(
            candidate.position,
            candidate.has_successor,
            &mut castled,
            &mut game_history,
            rng,
        ) {
            Ok(position) => records.push((
                LabeledPosition {
                    result: output.with_result.then_some(output.result),
                    score,
                    position,
                },
                castled,
            )),
            Err(reason) => selection.stats.count_drop(reason),
        }
    }
    visitor.return_buffer(candidates);
    if let Some(td) = output.td_targets {
        relabel(td, records);
    }
    for (record, castled) in records.iter() {
        output
            .format
            .append_line(record, *castled, &mut selection.text);
        selection.text.push(b'\n');
        selection
            .lines
            .push((key(&record.position), selection.text.len()));
    }
}

/// Replaces the scores of one game's kept positions (side to move's view)
/// by their TD targets, computed from White's view in game order. Every
/// record has a score: `--td-lambda` requires `--comment-scores`, which
/// drops the positions without one.
fn relabel(td: TdTargets, records: &mut [(LabeledPosition, Castled)]) {
    // +1 for White to move, -1 for Black: the same factor turns a score to
    // White's view and back.
    let sign = |record: &LabeledPosition| {
        if record.position.turn().is_white() {
            1
        } else {
            -1
        }
    };
    let mut white_scores: Vec<i32> = records
        .iter()
        .map(|(record, _)| sign(record) * record.score.unwrap_or(0))
        .collect();
    td.apply(&mut white_scores);
    for ((record, _), white_score) in records.iter_mut().zip(white_scores) {
        record.score = Some(sign(record) * white_score);
    }
}
