//! The parallel run: every worker thread takes the next chunk of games from
//! the inputs, selects positions from it, and hands its selection to the
//! output, which writes selections in input order. There is no separate
//! reader or merger thread: cutting a chunk and writing a selection are a
//! few per cent of the work, so each is done under a lock by whichever
//! worker needs it, and `--threads N` keeps exactly N threads busy.
//!
//! Chunks are numbered in input order (all chunks of the first file, then
//! the second, …). The output holds finished selections until all earlier
//! ones are written, so the output, the deduplication (first occurrence in
//! input order wins) and the messages about malformed games come out in the
//! same order whatever the number of threads. A worker may cut a new chunk
//! only while fewer than [`CHUNKS_IN_FLIGHT_PER_THREAD`] chunks per worker
//! are cut but not yet written, so memory is bounded by the deduplication
//! set, not by the input.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use engine::formats::input::Input;
use engine::formats::pgn_chunks::{GameChunk, GameChunker};

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

/// How often a worker waiting for room re-checks whether the run stopped.
const STOP_POLL: Duration = Duration::from_millis(50);

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

/// A chunk taken by a worker.
struct WorkItem {
    sequence: u64,
    file_index: usize,
    /// Bytes read from all inputs when the chunk was cut (for progress).
    bytes_read: u64,
    chunk: GameChunk,
}

/// A chunk's selection on its way to the output.
struct Finished {
    sequence: u64,
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
struct ChunkSource<'a> {
    pending: std::iter::Enumerate<std::vec::IntoIter<Input>>,
    current: Option<OpenFile>,
    /// Counts the bytes read from the inputs.
    progress: &'a Progress,
    chunk_bytes: usize,
    /// Sequence number of the next chunk cut.
    next_sequence: u64,
}

impl<'a> ChunkSource<'a> {
    fn new(inputs: Vec<Input>, chunk_bytes: usize, progress: &'a Progress) -> ChunkSource<'a> {
        ChunkSource {
            progress,
            pending: inputs.into_iter().enumerate(),
            current: None,
            chunk_bytes,
            next_sequence: 0,
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
            let item = WorkItem {
                sequence: self.next_sequence,
                file_index: file.index,
                bytes_read: self.progress.bytes_read(),
                chunk,
            };
            self.next_sequence += 1;
            return Ok(Some(item));
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
        self.progress
            .update(done.bytes_read, self.stats.games_read, self.stats.written);
        Ok(())
    }
}

/// The output side: selections waiting for their turn, and the merger.
struct Output<'a> {
    merger: Merger<'a>,
    waiting: BTreeMap<u64, Finished>,
    /// Sequence number of the next selection to write.
    next: u64,
}

/// What the workers share.
struct Shared<'a> {
    settings: RunSettings,
    source: Mutex<ChunkSource<'a>>,
    /// Signalled when chunks are written while a worker waits for room.
    room: Condvar,
    /// Workers waiting (or about to wait) on `room`.
    waiters: AtomicUsize,
    /// Chunks written so far (a copy of `Output::next`).
    written: AtomicU64,
    /// Chunks allowed between cut and written.
    in_flight: u64,
    output: Mutex<Output<'a>>,
    /// The first error met by a worker; every worker stops after it.
    error: Mutex<Option<anyhow::Error>>,
    stop: AtomicBool,
    interrupted: &'a AtomicBool,
}

impl<'a> Shared<'a> {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.interrupted.load(Ordering::Relaxed)
    }

    /// Records the first error and stops the run.
    fn fail(&self, error: anyhow::Error) {
        if let Ok(mut first) = self.error.lock() {
            first.get_or_insert(error);
        }
        self.stop.store(true, Ordering::SeqCst);
    }

    fn lock_source(&self) -> Result<MutexGuard<'_, ChunkSource<'a>>> {
        self.source.lock().map_err(|_| worker_failed())
    }

    /// The next chunk to work on, once there is room for it; `None` when
    /// the inputs are exhausted or the run stops.
    fn take_chunk(&self) -> Result<Option<WorkItem>> {
        let mut source = self.lock_source()?;
        loop {
            if self.stopped() {
                return Ok(None);
            }
            let has_room = |source: &ChunkSource| {
                source.next_sequence < self.written.load(Ordering::SeqCst) + self.in_flight
            };
            if has_room(&source) {
                break;
            }
            // The waiter is counted before `written` is read again, and the
            // writer reads the count after storing `written` (all
            // sequentially consistent): either this check sees the new
            // count, or the writer sees the waiter and wakes it, taking the
            // source lock first so that the wake-up cannot come before the
            // wait.
            self.waiters.fetch_add(1, Ordering::SeqCst);
            let waited = if has_room(&source) {
                Ok(source)
            } else {
                self.room
                    .wait_timeout(source, STOP_POLL)
                    .map(|(source, _)| source)
            };
            self.waiters.fetch_sub(1, Ordering::SeqCst);
            source = waited.map_err(|_| worker_failed())?;
        }
        source.next_item()
    }

    /// Hands a finished selection to the output and writes every selection
    /// whose turn has come.
    fn deliver(&self, done: Finished) -> Result<()> {
        let mut output = self.output.lock().map_err(|_| worker_failed())?;
        output.waiting.insert(done.sequence, done);
        let Output {
            merger,
            waiting,
            next,
        } = &mut *output;
        while let Some(done) = waiting.remove(next) {
            merger.write(done)?;
            *next += 1;
        }
        self.written.store(*next, Ordering::SeqCst);
        drop(output);
        if self.waiters.load(Ordering::SeqCst) > 0 {
            // Taking the lock orders this wake-up after the waiter's check.
            drop(self.lock_source()?);
            self.room.notify_all();
        }
        Ok(())
    }
}

/// The error of a run whose worker panicked (a poisoned lock, a missing
/// selection).
fn worker_failed() -> anyhow::Error {
    anyhow!("a worker thread failed; the output is incomplete")
}

/// Stops the run if its worker panics, so that no other worker waits for
/// a chunk that will never be written.
struct StopOnPanic<'a>(&'a AtomicBool);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

/// One worker: takes chunks, selects from them and delivers the
/// selections, until the inputs are exhausted or the run stops.
fn work(shared: &Shared<'_>) {
    let _guard = StopOnPanic(&shared.stop);
    let settings = shared.settings;
    let mut worker = ChunkWorker {
        visitor: SamplingVisitor::new(settings.visitor),
        judge: PositionJudge::new(settings.positions),
        format: settings.format,
        with_result: settings.with_result,
    };
    loop {
        let item = match shared.take_chunk() {
            Ok(Some(item)) => item,
            Ok(None) => return,
            Err(e) => return shared.fail(e),
        };
        let selection = select_from_chunk(&mut worker, &item.chunk, item.file_index);
        drop(item.chunk);
        let done = Finished {
            sequence: item.sequence,
            file_index: item.file_index,
            bytes_read: item.bytes_read,
            selection,
        };
        if let Err(e) = shared.deliver(done) {
            return shared.fail(e);
        }
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
    let threads = settings.threads.max(1);
    let paths: Vec<PathBuf> = inputs.iter().map(|i| i.path().to_path_buf()).collect();
    if let Some(header) = settings.format.preamble() {
        writeln!(sink, "{header}").with_context(|| format!("cannot write {}", sink.name()))?;
    }
    let merger = Merger {
        games_per_file: vec![0; paths.len()],
        paths,
        keys: settings.dedup.then(KeySet::new),
        stats: SelectionStats::default(),
        problems_shown: 0,
        sink,
        progress,
    };
    let shared = Shared {
        settings,
        source: Mutex::new(ChunkSource::new(inputs, pacing.chunk_bytes, progress)),
        room: Condvar::new(),
        waiters: AtomicUsize::new(0),
        written: AtomicU64::new(0),
        in_flight: (threads * pacing.chunks_in_flight_per_thread.max(1)) as u64,
        output: Mutex::new(Output {
            merger,
            waiting: BTreeMap::new(),
            next: 0,
        }),
        error: Mutex::new(None),
        stop: AtomicBool::new(false),
        interrupted,
    };
    let all_joined = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| scope.spawn(|| work(&shared)))
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join())
            .filter(Result::is_err)
            .count()
            == 0
    });
    if let Some(error) = shared.error.into_inner().ok().flatten() {
        return Err(error);
    }
    if interrupted.load(Ordering::Relaxed) {
        bail!("interrupted; the output file was not written");
    }
    let output = shared.output.into_inner().ok();
    let source = shared.source.into_inner().ok();
    let (Some(output), Some(source), true) = (output, source, all_joined) else {
        return Err(worker_failed());
    };
    if !output.waiting.is_empty() || output.next != source.next_sequence {
        return Err(worker_failed());
    }
    let merger = output.merger;
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
        let progress = Progress::new(Vec::new(), None, false);
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
