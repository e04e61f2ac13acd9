//! The parallel run on the runtime's ordered map
//! ([`engine::runtime::ordered`]): the inputs are cut into chunks of whole
//! games, `--threads` workers select positions from chunks, and the
//! selections are merged into the output in input order.
//!
//! Chunks are numbered in input order (all chunks of the first file, then
//! the second, …), so the output, the deduplication (first occurrence in
//! input order wins) and the messages about malformed games come out in the
//! same order whatever the number of threads. At most
//! [`CHUNKS_IN_FLIGHT_PER_THREAD`] chunks per worker are cut but not yet
//! written, so memory is bounded by the deduplication set, not by the
//! input.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result, bail};
use engine::formats::input::{ByteCounter, Input};
use engine::formats::pgn_chunks::{GameChunk, GameChunker};
use engine::runtime::ordered::{Flow, OrderedMap};
use engine::runtime::progress::Progress;

use crate::chunk_selection::{ChunkSelection, ChunkWorker, select_from_chunk};
use crate::game_visitor::{SamplingVisitor, VisitorSettings};
use crate::key_set::KeySet;
use crate::output_format::{OutputFormat, OutputSink};
use crate::position_filter::{PositionFilter, PositionJudge};
use crate::stats::SelectionStats;
use crate::td_targets::TdTargets;

/// Chunks in memory per worker thread (being read, worked on, or waiting to
/// be merged).
const CHUNKS_IN_FLIGHT_PER_THREAD: usize = 4;

/// Chunk size aimed at when reading games: small enough that two workers
/// stay balanced to the end of a modest file, large enough that the
/// hand-over costs nothing.
const CHUNK_BYTES: usize = 1 << 18;

/// Chunk size when positions are searched (`--max-score`, `--quiet=resolve`):
/// a chunk then takes a thousand times longer, so it is cut smaller to keep
/// the workers balanced and the progress bar moving. The searchers' tables
/// are cleared at each chunk, so this size is part of what determines the
/// output (the thread count is not).
const SEARCH_CHUNK_BYTES: usize = 1 << 15;

/// Messages about malformed games printed before they are only counted.
const MAX_PROBLEMS_SHOWN: u64 = 100;

/// Everything a run needs besides its inputs and output.
#[derive(Debug, Clone, Copy)]
pub struct RunSettings {
    /// Worker threads.
    pub threads: usize,
    /// Sampling and game filters.
    pub visitor: VisitorSettings,
    /// Position filters.
    pub positions: PositionFilter,
    /// Output format.
    pub format: OutputFormat,
    /// Whether lines carry the game result.
    pub with_result: bool,
    /// Whether duplicate positions are dropped.
    pub dedup: bool,
    /// TD(λ) targets in place of the comment scores (`--td-lambda`).
    pub td_targets: Option<TdTargets>,
}

/// A chunk cut from the inputs.
struct WorkItem {
    file_index: usize,
    /// Bytes read from all inputs when the chunk was cut (for progress).
    bytes_read: u64,
    chunk: GameChunk,
}

/// A chunk's selection on its way to the output.
struct Finished {
    file_index: usize,
    bytes_read: u64,
    selection: ChunkSelection,
}

/// The input file being cut into chunks.
struct OpenFile {
    index: usize,
    path: PathBuf,
    chunker: GameChunker<Box<dyn Read + Send>>,
}

/// The inputs, cut into chunks one at a time, in order.
struct ChunkSource {
    pending: std::iter::Enumerate<std::vec::IntoIter<Input>>,
    current: Option<OpenFile>,
    /// The byte counters of all inputs.
    counters: InputBytes,
    chunk_bytes: usize,
}

/// The byte counters of the inputs: how much of them has been read.
#[derive(Debug, Clone)]
pub struct InputBytes(Vec<ByteCounter>);

impl InputBytes {
    /// The counters of `inputs`.
    pub fn of(inputs: &[Input]) -> InputBytes {
        InputBytes(inputs.iter().map(Input::bytes_read).collect())
    }

    /// Bytes read from all inputs so far.
    pub fn get(&self) -> u64 {
        self.0.iter().map(ByteCounter::get).sum()
    }
}

impl ChunkSource {
    fn new(inputs: Vec<Input>, chunk_bytes: usize) -> ChunkSource {
        ChunkSource {
            counters: InputBytes::of(&inputs),
            pending: inputs.into_iter().enumerate(),
            current: None,
            chunk_bytes,
        }
    }

    /// The next chunk of the inputs, or `None` when all are read.
    fn next_item(&mut self) -> Result<Option<WorkItem>> {
        loop {
            let file = match &mut self.current {
                Some(file) => file,
                None => {
                    let Some((index, input)) = self.pending.next() else {
                        return Ok(None);
                    };
                    self.current.insert(OpenFile {
                        index,
                        path: input.path().to_path_buf(),
                        chunker: GameChunker::with_target(input.into_reader(), self.chunk_bytes),
                    })
                }
            };
            let chunk = file
                .chunker
                .next_chunk()
                .with_context(|| format!("{}: read error", file.path.display()))?;
            let Some(chunk) = chunk else {
                self.current = None;
                continue;
            };
            return Ok(Some(WorkItem {
                file_index: file.index,
                bytes_read: self.counters.get(),
                chunk,
            }));
        }
    }
}

/// Writes chunk selections in order; the state of the merge.
struct Merger<'a> {
    paths: Vec<PathBuf>,
    games_per_file: Vec<u64>,
    keys: Option<KeySet>,
    stats: SelectionStats,
    problems_shown: u64,
    sink: &'a mut OutputSink,
    progress: &'a Progress,
}

impl Merger<'_> {
    fn write_lines(&mut self, lines: &[u8]) -> Result<()> {
        let sink = &mut self.sink;
        sink.write_all(lines)
            .with_context(|| format!("cannot write {}", sink.name()))
    }

    fn write(&mut self, done: Finished) -> Result<()> {
        let selection = done.selection;
        let path = self.paths[done.file_index].display();
        let games_before = self.games_per_file[done.file_index];
        for problem in &selection.problems {
            self.problems_shown += 1;
            if self.problems_shown <= MAX_PROBLEMS_SHOWN {
                self.progress.println(&format!(
                    "pgnselect: {path}:{}: game {}: {}; game skipped",
                    problem.line,
                    games_before + problem.game_in_chunk + 1,
                    problem.message
                ));
            } else if self.problems_shown == MAX_PROBLEMS_SHOWN + 1 {
                self.progress
                    .println("pgnselect: further malformed games are counted but not shown");
            }
        }
        self.games_per_file[done.file_index] += selection.stats.games_read;
        self.stats.add(&selection.stats);
        // Lines are written in runs between duplicates: one write per chunk
        // in the common case.
        let mut run_start = 0;
        let mut line_start = 0;
        for &(key, end) in &selection.lines {
            let fresh = self.keys.as_mut().is_none_or(|keys| keys.insert(key));
            if fresh {
                self.stats.written += 1;
            } else {
                self.write_lines(&selection.text[run_start..line_start])?;
                run_start = end;
                self.stats.duplicates += 1;
            }
            line_start = end;
        }
        self.write_lines(&selection.text[run_start..])?;
        if !self.progress.is_hidden() {
            self.progress.set_position(done.bytes_read);
            self.progress.set_message(format!(
                "{} games, {} positions ({:.0}/s)",
                self.stats.games_read,
                self.stats.written,
                self.progress.rate(self.stats.written)
            ));
        }
        Ok(())
    }
}

/// How the inputs are cut and how far the workers may run ahead of the
/// output. Neither changes the output unless positions are searched.
#[derive(Debug, Clone, Copy)]
struct Pacing {
    chunk_bytes: usize,
    chunks_in_flight_per_thread: usize,
}

impl Pacing {
    fn for_settings(settings: &RunSettings) -> Pacing {
        Pacing {
            chunk_bytes: if settings.positions.needs_searcher() {
                SEARCH_CHUNK_BYTES
            } else {
                CHUNK_BYTES
            },
            chunks_in_flight_per_thread: CHUNKS_IN_FLIGHT_PER_THREAD,
        }
    }
}

/// Runs the selection over `inputs` (opened, in order), writing to `sink`.
///
/// # Errors
/// Read errors of an input, write errors, or an interruption.
pub fn run(
    settings: RunSettings,
    inputs: Vec<Input>,
    sink: &mut OutputSink,
    progress: &Progress,
    interrupted: &AtomicBool,
) -> Result<SelectionStats> {
    let pacing = Pacing::for_settings(&settings);
    run_paced(settings, pacing, inputs, sink, progress, interrupted)
}

/// [`run`] with the given pacing.
fn run_paced(
    settings: RunSettings,
    pacing: Pacing,
    inputs: Vec<Input>,
    sink: &mut OutputSink,
    progress: &Progress,
    interrupted: &AtomicBool,
) -> Result<SelectionStats> {
    let paths: Vec<PathBuf> = inputs.iter().map(|i| i.path().to_path_buf()).collect();
    if let Some(header) = settings.format.preamble() {
        writeln!(sink, "{header}").with_context(|| format!("cannot write {}", sink.name()))?;
    }
    let mut merger = Merger {
        games_per_file: vec![0; paths.len()],
        paths,
        keys: settings.dedup.then(KeySet::new),
        stats: SelectionStats::default(),
        problems_shown: 0,
        sink,
        progress,
    };
    let mut source = ChunkSource::new(inputs, pacing.chunk_bytes);
    let finished = OrderedMap::new(settings.threads)
        .in_flight_per_thread(pacing.chunks_in_flight_per_thread)
        .stop_on(interrupted)
        .run(
            || source.next_item(),
            |_| ChunkWorker {
                visitor: SamplingVisitor::new(settings.visitor),
                judge: PositionJudge::new(settings.positions),
                format: settings.format,
                with_result: settings.with_result,
                td_targets: settings.td_targets,
                game_records: Vec::new(),
            },
            |worker, item: WorkItem| {
                let selection = select_from_chunk(worker, &item.chunk, item.file_index);
                Some(Finished {
                    file_index: item.file_index,
                    bytes_read: item.bytes_read,
                    selection,
                })
            },
            |done| merger.write(done).map(|()| Flow::Continue),
        )?;
    if finished.interrupted {
        bail!("interrupted; the output file was not written");
    }
    for (path, games) in merger.paths.iter().zip(&merger.games_per_file) {
        if *games == 0 {
            progress.println(&format!(
                "pgnselect: warning: {}: no games found",
                path.display()
            ));
        }
    }
    Ok(merger.stats)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use clap::Parser;
    use engine::formats::input::open_input;

    use super::*;
    use crate::cli::Cli;

    /// The output of a run over the bundled games (twice, so that the
    /// deduplication has work across inputs) with `threads` and `pacing`.
    fn select(threads: usize, pacing: Pacing) -> Vec<u8> {
        let games = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/pgn/fischer-300.pgn");
        let cli = Cli::parse_from(["pgnselect".as_ref(), games.as_os_str(), games.as_os_str()]);
        let settings = RunSettings {
            threads,
            ..cli.settings().unwrap()
        };
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.epd");
        let mut sink = OutputSink::open(Some(&out)).unwrap();
        let inputs = vec![open_input(&games).unwrap(), open_input(&games).unwrap()];
        let progress = Progress::hidden();
        let stats = run_paced(
            settings,
            pacing,
            inputs,
            &mut sink,
            &progress,
            &AtomicBool::new(false),
        )
        .unwrap();
        sink.finish().unwrap();
        assert_eq!(stats.games_read, 600);
        // The second copy samples other plies (its random numbers depend on
        // its place in the list), but it meets positions of the first.
        assert!(stats.duplicates > 100, "{stats:?}");
        std::fs::read(out).unwrap()
    }

    #[test]
    fn output_is_the_same_for_any_threads_chunks_and_look_ahead() {
        let reference = select(
            1,
            Pacing::for_settings(&RunSettings {
                threads: 1,
                ..Cli::parse_from(["pgnselect", "x"]).settings().unwrap()
            }),
        );
        assert!(!reference.is_empty());
        // Tiny chunks and one chunk in flight per worker make the workers
        // wait for room all the time.
        for threads in 1..=4 {
            for (chunk_bytes, chunks_in_flight_per_thread) in
                [(1 << 10, 1), (1 << 12, 2), (1 << 16, 4)]
            {
                let pacing = Pacing {
                    chunk_bytes,
                    chunks_in_flight_per_thread,
                };
                assert!(
                    select(threads, pacing) == reference,
                    "{threads} threads, {pacing:?}"
                );
            }
        }
    }
}
