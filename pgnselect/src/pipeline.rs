//! The parallel run: one reader thread cuts the inputs into chunks of
//! games, worker threads select positions from the chunks, and the calling
//! thread merges the results in input order.
//!
//! Chunks are numbered in input order (all chunks of the first file, then
//! the second, …). The merger holds finished chunks until all earlier ones
//! are written, so the output, the deduplication (first occurrence in input
//! order wins) and the messages about malformed games come out in the same
//! order whatever the number of threads. The reader needs a credit for
//! every chunk it hands out and the merger returns one per chunk written,
//! so at most [`CHUNKS_IN_FLIGHT_PER_THREAD`] chunks per worker are in
//! memory: memory is bounded by the deduplication set, not by the input.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};
use engine::input::{ByteCounter, Input};
use engine::pgn_chunks::{GameChunk, GameChunker};

use crate::chunk_selection::{ChunkSelection, ChunkWorker, select_from_chunk};
use crate::game_visitor::{SamplingVisitor, VisitorSettings};
use crate::key_set::KeySet;
use crate::output_format::{OutputFormat, OutputSink};
use crate::position_filter::{PositionFilter, PositionJudge};
use crate::progress::Progress;
use crate::stats::SelectionStats;

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
}

/// A chunk handed to a worker.
struct WorkItem {
    sequence: u64,
    file_index: usize,
    /// Bytes read from all inputs when the chunk was cut (for progress).
    bytes_read: u64,
    chunk: GameChunk,
}

/// A chunk's selection on its way to the merger.
struct Finished {
    sequence: u64,
    file_index: usize,
    bytes_read: u64,
    selection: ChunkSelection,
}

/// Reads every input in order, cutting it into chunks.
fn read_inputs(
    inputs: Vec<Input>,
    chunk_bytes: usize,
    work: SyncSender<WorkItem>,
    credits: Receiver<()>,
    interrupted: &AtomicBool,
) -> Result<()> {
    let mut sequence = 0;
    let counters: Vec<ByteCounter> = inputs.iter().map(Input::bytes_read).collect();
    for (file_index, input) in inputs.into_iter().enumerate() {
        let path = input.path().to_path_buf();
        let mut chunker = GameChunker::with_target(input.into_reader(), chunk_bytes);
        loop {
            if interrupted.load(Ordering::Relaxed) {
                return Ok(());
            }
            let chunk = chunker
                .next_chunk()
                .with_context(|| format!("{}: read error", path.display()))?;
            let Some(chunk) = chunk else { break };
            if credits.recv().is_err() {
                return Ok(());
            }
            let item = WorkItem {
                sequence,
                file_index,
                bytes_read: counters.iter().map(ByteCounter::get).sum(),
                chunk,
            };
            if work.send(item).is_err() {
                return Ok(());
            }
            sequence += 1;
        }
    }
    Ok(())
}

/// Selects from chunks until the reader is done.
fn work(settings: RunSettings, items: &Mutex<Receiver<WorkItem>>, finished: SyncSender<Finished>) {
    let mut worker = ChunkWorker {
        visitor: SamplingVisitor::new(settings.visitor),
        judge: PositionJudge::new(settings.positions),
        format: settings.format,
        with_result: settings.with_result,
    };
    loop {
        let item = match items.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        let Ok(item) = item else { return };
        let selection = select_from_chunk(&mut worker, &item.chunk, item.file_index);
        let done = Finished {
            sequence: item.sequence,
            file_index: item.file_index,
            bytes_read: item.bytes_read,
            selection,
        };
        if finished.send(done).is_err() {
            return;
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
        self.sink
            .write_all(lines)
            .context("cannot write the output")
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
        self.progress
            .update(done.bytes_read, self.stats.games_read, self.stats.written);
        Ok(())
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
    let threads = settings.threads.max(1);
    let paths: Vec<PathBuf> = inputs.iter().map(|i| i.path().to_path_buf()).collect();
    if let Some(header) = settings.format.preamble() {
        writeln!(sink, "{header}").context("cannot write the output")?;
    }
    let in_flight = threads * CHUNKS_IN_FLIGHT_PER_THREAD;
    let (credit_sender, credit_receiver) = sync_channel::<()>(in_flight);
    for _ in 0..in_flight {
        credit_sender.send(()).expect("the channel has room");
    }
    let (work_sender, work_receiver) = sync_channel::<WorkItem>(threads);
    let (finished_sender, finished_receiver) = sync_channel::<Finished>(in_flight);
    let mut merger = Merger {
        games_per_file: vec![0; paths.len()],
        paths,
        keys: settings.dedup.then(KeySet::new),
        stats: SelectionStats::default(),
        problems_shown: 0,
        sink,
        progress,
    };
    let chunk_bytes = if settings.positions.needs_searcher() {
        SEARCH_CHUNK_BYTES
    } else {
        CHUNK_BYTES
    };
    let (merged, read) = std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            read_inputs(
                inputs,
                chunk_bytes,
                work_sender,
                credit_receiver,
                interrupted,
            )
        });
        let work_receiver = Arc::new(Mutex::new(work_receiver));
        for _ in 0..threads {
            let items = Arc::clone(&work_receiver);
            let finished = finished_sender.clone();
            scope.spawn(move || work(settings, &items, finished));
        }
        // Only the workers keep the channels: when the merger stops early,
        // the workers and then the reader see their channels closed.
        drop(finished_sender);
        drop(work_receiver);
        let merged = merge(&mut merger, finished_receiver, credit_sender, interrupted);
        let read = reader
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the input reader failed")));
        (merged, read)
    });
    read?;
    merged?;
    if interrupted.load(Ordering::Relaxed) {
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

/// Receives finished chunks and writes them in sequence order.
fn merge(
    merger: &mut Merger<'_>,
    finished: Receiver<Finished>,
    credits: SyncSender<()>,
    interrupted: &AtomicBool,
) -> Result<()> {
    let mut waiting: BTreeMap<u64, Finished> = BTreeMap::new();
    let mut next = 0u64;
    for done in finished {
        if interrupted.load(Ordering::Relaxed) {
            return Ok(());
        }
        waiting.insert(done.sequence, done);
        while let Some(done) = waiting.remove(&next) {
            merger.write(done)?;
            next += 1;
            // The reader may have stopped taking credits: nothing to do.
            let _ = credits.try_send(());
        }
    }
    if !waiting.is_empty() {
        bail!("a worker thread failed; the output is incomplete");
    }
    Ok(())
}
