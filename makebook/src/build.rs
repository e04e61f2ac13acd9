//! The `build` command: PGN files in, Polyglot book out.
//!
//! The annotated first file is read on the calling thread (its variations
//! make game order matter: first annotations win). The game collections go
//! through a pipeline: this thread reads and cuts them into chunks of whole
//! games, and `--threads` workers parse chunks into private tallies that are
//! summed at the end, so the result does not depend on which worker took
//! which chunk. Problems are printed per file, in file order, with their
//! line and game number; the summary lists what every filter dropped.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use engine::formats::atomic_file::check_outputs;
use engine::formats::book::write_book;
use engine::formats::input::{ByteCounter, Input, open_input};
use indicatif::{ProgressBar, ProgressStyle};
use shakmaty::Color;

use crate::annotated::{AnnotatedTally, AnnotatedVisitor};
use crate::collection::{CollectionFilter, CollectionTally, CollectionVisitor};
use crate::game_chunks::{GameChunk, GameChunker};
use crate::pgn_scan::{ChunkScan, ProblemKind, scan_chunk};
use crate::weighting::{WeightSettings, WeightingSummary, compute_entries};

/// Everything `build` needs to know.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The book to write.
    pub output: PathBuf,
    /// Input PGN files; the first is the annotated one unless
    /// `collections_only`.
    pub inputs: Vec<PathBuf>,
    /// Treat every input as a game collection.
    pub collections_only: bool,
    /// `--min-count`.
    pub min_count: u32,
    /// `--max-ply`.
    pub max_ply: u32,
    /// `--min-score`, in percent.
    pub min_score: Option<f64>,
    /// `--only-white` / `--only-black`.
    pub only: Option<Color>,
    /// `--min-elo`.
    pub min_elo: Option<u32>,
    /// Worker threads for the collections.
    pub threads: usize,
    /// Print every problem (not only the first ones of each file).
    pub verbose: bool,
}

/// What one input file contributed.
#[derive(Debug, Default, Clone)]
pub struct FileReport {
    /// The file.
    pub path: PathBuf,
    /// Games found.
    pub games: u64,
    /// Games that contributed moves.
    pub games_used: u64,
    /// Games without moves.
    pub games_without_moves: u64,
    /// Games skipped as malformed.
    pub malformed_games: u64,
    /// Annotations ignored as malformed.
    pub malformed_annotations: u64,
}

/// The outcome of a build, for the summary and for tests.
#[derive(Debug, Default)]
pub struct BuildReport {
    /// Per input file, in input order.
    pub files: Vec<FileReport>,
    /// Moves read from the annotated file.
    pub annotated_moves: u64,
    /// Moves counted from the collections.
    pub collection_moves: u64,
    /// Moves dropped by `--only-white`/`--only-black`.
    pub dropped_by_colour: u64,
    /// Moves dropped by `--min-elo`.
    pub dropped_by_elo: u64,
    /// Collection games whose reading stopped at `--max-ply`.
    pub games_cut_at_max_ply: u64,
    /// Distinct collection (position, move) pairs before filtering.
    pub collection_pairs: u64,
    /// The weighting's counts.
    pub weighting: WeightingSummary,
    /// Wall-clock time of the whole build.
    pub elapsed: Duration,
    /// Of which: reading and parsing the inputs (tallies merged).
    pub reading: Duration,
    /// Of which: computing the weights.
    pub weighting_time: Duration,
}

/// Set by the Ctrl-C handler: stop reading and write nothing.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

fn check_interrupt() -> Result<()> {
    if INTERRUPTED.load(Ordering::Relaxed) {
        anyhow::bail!("interrupted; no book written");
    }
    Ok(())
}

/// Most problems printed per file without `--verbose`.
const PROBLEMS_SHOWN: usize = 20;

fn progress_bar(total: Option<u64>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    match total {
        Some(total) => {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, eta {eta}) {msg}",
                )
                .expect("valid template"),
            );
            bar
        }
        None => {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{elapsed_precise}] {binary_bytes} {msg}")
                    .expect("valid template"),
            );
            bar
        }
    }
}

/// Prints the problems of one file and counts them into `report`.
fn report_problems(
    report: &mut FileReport,
    scans: &[(usize, ChunkScan)],
    verbose: bool,
    bar: &ProgressBar,
) {
    let mut shown = 0usize;
    let mut hidden = 0usize;
    let mut first_game = 0u64;
    for (_, scan) in scans {
        report.games += scan.games as u64;
        report.games_used += scan.games_used as u64;
        report.games_without_moves += scan.games_without_moves as u64;
        for problem in &scan.problems {
            match problem.kind {
                ProblemKind::MalformedGame => report.malformed_games += 1,
                ProblemKind::MalformedAnnotation => report.malformed_annotations += 1,
            }
            if verbose || shown < PROBLEMS_SHOWN {
                shown += 1;
                let game = first_game + problem.game_in_chunk as u64 + 1;
                bar.suspend(|| {
                    eprintln!(
                        "makebook: {}:{}: game {game}: {}",
                        report.path.display(),
                        problem.line,
                        problem.message
                    )
                });
            } else {
                hidden += 1;
            }
        }
        first_game += scan.games as u64;
    }
    if hidden > 0 {
        bar.suspend(|| {
            eprintln!(
                "makebook: {}: {hidden} more problems not shown (use --verbose)",
                report.path.display()
            )
        });
    }
}

fn open_all(paths: &[PathBuf]) -> Result<Vec<Input>> {
    paths
        .iter()
        .map(|p| open_input(p).map_err(anyhow::Error::from))
        .collect()
}

/// Reads the annotated file sequentially.
fn read_annotated(
    input: Input,
    only: Option<Color>,
    verbose: bool,
    bar: &ProgressBar,
    done_bytes: u64,
) -> Result<(AnnotatedTally, FileReport)> {
    let path = input.path().to_path_buf();
    let counter = input.bytes_read();
    let mut tally = AnnotatedTally::default();
    let mut scans = Vec::new();
    let mut chunker = GameChunker::new(input);
    while let Some(chunk) = chunker
        .next_chunk()
        .with_context(|| format!("reading {}", path.display()))?
    {
        check_interrupt()?;
        let mut visitor = AnnotatedVisitor::new(only, &mut tally);
        let scan = scan_chunk(&chunk, &mut visitor);
        scans.push((chunk.index, scan));
        bar.set_position(done_bytes + counter.get());
    }
    let mut report = FileReport {
        path,
        ..FileReport::default()
    };
    report_problems(&mut report, &scans, verbose, bar);
    Ok((tally, report))
}

/// Bytes of PGN per game, roughly, in typical collections.
const BYTES_PER_GAME: u64 = 700;
/// At most this many pairs are reserved up front per worker.
const MAX_RESERVED_PAIRS: u64 = 8 << 20;

/// A rough upper estimate of the distinct (position, move) pairs one worker
/// will see, so its table is sized once instead of growing by rehashing.
/// Reserved buckets that stay empty are barely touched (only their control
/// bytes), so overestimating costs little.
fn expected_pairs_per_worker(total_bytes: u64, max_ply: u32, threads: usize) -> usize {
    let games = total_bytes / BYTES_PER_GAME;
    let plies = u64::from(max_ply.min(80));
    let pairs = games * plies * 4 / 5;
    // Workers share the common opening positions, so each sees more than
    // its share of the distinct pairs.
    let per_worker = if threads <= 1 {
        pairs
    } else {
        pairs * 3 / (2 * threads as u64)
    };
    per_worker.min(MAX_RESERVED_PAIRS) as usize
}

/// Reads the collections with `threads` workers.
fn read_collections(
    inputs: Vec<Input>,
    filter: CollectionFilter,
    threads: usize,
    verbose: bool,
    bar: &ProgressBar,
    done_bytes: u64,
) -> Result<(CollectionTally, Vec<FileReport>)> {
    let paths: Vec<PathBuf> = inputs.iter().map(|i| i.path().to_path_buf()).collect();
    let total_bytes: u64 = inputs.iter().filter_map(Input::total_bytes).sum();
    let reserve = expected_pairs_per_worker(total_bytes, filter.max_ply, threads);
    let (sender, receiver) = sync_channel::<(usize, GameChunk)>(threads * 2);
    let receiver = Mutex::new(receiver);
    let scans: Mutex<Vec<(usize, usize, ChunkScan)>> = Mutex::new(Vec::new());

    let (tally, read_result) = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut tally = CollectionTally::with_capacity(reserve);
                    loop {
                        let next = receiver.lock().expect("no worker panics").recv();
                        let Ok((file, chunk)) = next else { break };
                        let mut visitor = CollectionVisitor::new(filter, &mut tally);
                        let scan = scan_chunk(&chunk, &mut visitor);
                        scans
                            .lock()
                            .expect("no worker panics")
                            .push((file, chunk.index, scan));
                    }
                    tally
                })
            })
            .collect();

        let read_result = (|| -> Result<()> {
            let mut done = done_bytes;
            for (file, input) in inputs.into_iter().enumerate() {
                let counter: ByteCounter = input.bytes_read();
                let size = input.total_bytes().unwrap_or(0);
                let path = input.path().to_path_buf();
                let mut chunker = GameChunker::new(input);
                while let Some(chunk) = chunker
                    .next_chunk()
                    .with_context(|| format!("reading {}", path.display()))?
                {
                    check_interrupt()?;
                    if sender.send((file, chunk)).is_err() {
                        break;
                    }
                    bar.set_position(done + counter.get());
                }
                done += size.max(counter.get());
            }
            Ok(())
        })();
        drop(sender);

        let mut tally = CollectionTally::default();
        for worker in workers {
            tally.merge(worker.join().expect("worker threads do not panic"));
        }
        (tally, read_result)
    });
    read_result?;

    let mut scans = scans.into_inner().expect("no worker panics");
    scans.sort_by_key(|(file, chunk, _)| (*file, *chunk));
    let mut reports = Vec::with_capacity(paths.len());
    for (file, path) in paths.into_iter().enumerate() {
        let file_scans: Vec<(usize, ChunkScan)> = scans
            .iter_mut()
            .filter(|(f, _, _)| *f == file)
            .map(|(_, chunk, scan)| (*chunk, std::mem::take(scan)))
            .collect();
        let mut report = FileReport {
            path,
            ..FileReport::default()
        };
        report_problems(&mut report, &file_scans, verbose, bar);
        reports.push(report);
    }
    Ok((tally, reports))
}

/// Builds the book described by `options` and writes it atomically.
///
/// # Errors
/// An input that cannot be opened or read, or an output that cannot be
/// written, each named in the error.
pub fn build(options: &BuildOptions) -> Result<BuildReport> {
    let started = Instant::now();
    check_outputs(&[&options.output], &options.inputs)?;
    let mut inputs = open_all(&options.inputs)?;
    let total: Option<u64> = inputs.iter().map(|i| i.total_bytes()).sum();
    let bar = progress_bar(total);
    let mut report = BuildReport::default();

    let mut annotated = AnnotatedTally::default();
    let mut done_bytes = 0;
    if !options.collections_only && !inputs.is_empty() {
        let first = inputs.remove(0);
        done_bytes = first.total_bytes().unwrap_or(0);
        let (tally, file_report) = read_annotated(first, options.only, options.verbose, &bar, 0)?;
        annotated = tally;
        report.files.push(file_report);
    }
    report.annotated_moves = annotated.moves_read;
    report.dropped_by_colour += annotated.dropped_by_colour;

    let filter = CollectionFilter {
        max_ply: options.max_ply,
        only: options.only,
        min_elo: options.min_elo,
    };
    let (collections, file_reports) = read_collections(
        inputs,
        filter,
        options.threads.max(1),
        options.verbose,
        &bar,
        done_bytes,
    )?;
    report.files.extend(file_reports);
    report.collection_moves = collections.moves_counted;
    report.dropped_by_colour += collections.dropped_by_colour;
    report.dropped_by_elo = collections.dropped_by_elo;
    report.games_cut_at_max_ply = collections.games_cut_at_max_ply;
    report.collection_pairs = collections.moves.len() as u64;

    report.reading = started.elapsed();
    bar.set_message("computing weights");
    let settings = WeightSettings {
        min_count: options.min_count,
        min_score: options.min_score,
    };
    let weighting_started = Instant::now();
    // The weighting sorts in parallel; keep it to --threads cores.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.max(1))
        .build()
        .context("starting the worker threads")?;
    let (entries, weighting) =
        pool.install(|| compute_entries(&collections.moves, &annotated.moves, settings));
    report.weighting_time = weighting_started.elapsed();
    drop(collections);
    drop(annotated);
    report.weighting = weighting;

    check_interrupt()?;
    bar.set_message("writing");
    write_book(&options.output, &entries)?;
    bar.finish_and_clear();
    report.elapsed = started.elapsed();
    Ok(report)
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The end-of-build summary.
pub fn summary(options: &BuildOptions, report: &BuildReport) -> String {
    let mut out = String::new();
    let w = &report.weighting;
    out.push_str(&format!(
        "wrote {}: {}, {} ({} from the annotated file, {} with weight 0: never played)\n",
        options.output.display(),
        plural(w.entries, "entry").replace("entrys", "entries"),
        plural(w.positions, "position"),
        w.annotated_entries,
        w.zero_weight_entries,
    ));
    for (i, file) in report.files.iter().enumerate() {
        let role = if i == 0 && !options.collections_only {
            "annotated "
        } else {
            "collection"
        };
        out.push_str(&format!(
            "  {role} {}: {} ({} used, {} without moves, {} malformed and skipped{})\n",
            file.path.display(),
            plural(file.games, "game"),
            file.games_used,
            file.games_without_moves,
            file.malformed_games,
            if file.malformed_annotations > 0 {
                format!(
                    ", {} malformed annotations ignored",
                    file.malformed_annotations
                )
            } else {
                String::new()
            },
        ));
    }
    let collection_games: u64 = report
        .files
        .iter()
        .enumerate()
        .filter(|(i, _)| *i > 0 || options.collections_only)
        .map(|(_, f)| f.games)
        .sum();
    out.push_str(&format!(
        "  moves read: {} from the annotated file, {} from the collections ({} distinct position-move pairs)\n",
        report.annotated_moves, report.collection_moves, report.collection_pairs
    ));
    out.push_str(&format!(
        "  dropped moves: --max-ply {}: {} cut short; --only-white/--only-black: {}; --min-elo: {}\n",
        options.max_ply,
        plural(report.games_cut_at_max_ply, "game"),
        report.dropped_by_colour,
        report.dropped_by_elo
    ));
    out.push_str(&format!(
        "  dropped pairs: --min-count {}: {}; --min-score: {}; never scored: {}\n",
        options.min_count, w.dropped_by_min_count, w.dropped_by_min_score, w.dropped_never_scored
    ));
    let secs = report.elapsed.as_secs_f64();
    out.push_str(&format!(
        "  time: {secs:.2} s ({:.0} collection games/s, {} threads; reading {:.2} s, weights {:.2} s, writing {:.2} s)\n",
        collection_games as f64 / secs.max(1e-9),
        options.threads.max(1),
        report.reading.as_secs_f64(),
        report.weighting_time.as_secs_f64(),
        (report.elapsed - report.reading - report.weighting_time).as_secs_f64(),
    ));
    out
}

/// The default number of worker threads: the available cores.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
