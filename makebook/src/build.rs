//! The `build` command: PGN files in, Polyglot book out.
//!
//! The annotated first file is read on the calling thread (its variations
//! make game order matter: first annotations win). The game collections go
//! through the runtime's ordered map ([`engine::runtime::ordered`]): chunks
//! of whole games are cut from the inputs in turn, and `--threads` workers
//! parse them into private tallies that are summed at the end, so the
//! result does not depend on which worker took which chunk. Problems come
//! back in input order and are printed per file, with their line and game
//! number; the summary lists what every filter dropped. Ctrl-C (the
//! runtime's interrupt) stops the reading and no book is written.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use engine::formats::atomic_file::check_outputs;
use engine::formats::book::write_book;
use engine::formats::input::{ByteCounter, Input, open_input};
use engine::runtime::ordered::{Flow, OrderedMap};
use engine::runtime::progress::Progress;
use engine::runtime::summary::Summary;
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
    /// Draw the progress bar (on a terminal).
    pub progress: bool,
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
    /// Games of another variant (not read).
    pub games_other_variant: u64,
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

impl BuildReport {
    /// Games read from the collections: every file but the first (the
    /// annotated file), or every file with `--collections-only`.
    pub fn collection_games(&self, collections_only: bool) -> u64 {
        self.files
            .iter()
            .enumerate()
            .filter(|(i, _)| *i > 0 || collections_only)
            .map(|(_, f)| f.games)
            .sum()
    }
}

/// The build was stopped by Ctrl-C (the runtime's interrupt): no book was
/// written.
#[derive(Debug, Clone, Copy)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted; no book written")
    }
}

impl std::error::Error for Interrupted {}

fn check_interrupt(stop: &AtomicBool) -> Result<()> {
    if stop.load(Ordering::Relaxed) {
        return Err(Interrupted.into());
    }
    Ok(())
}

/// Most problems printed per file without `--verbose`.
const PROBLEMS_SHOWN: usize = 20;

/// Prints the problems of one file and counts them into `report`.
fn report_problems(report: &mut FileReport, scans: &[ChunkScan], verbose: bool, bar: &Progress) {
    let mut shown = 0usize;
    let mut hidden = 0usize;
    let mut first_game = 0u64;
    for scan in scans {
        report.games += scan.games as u64;
        report.games_used += scan.games_used as u64;
        report.games_without_moves += scan.games_without_moves as u64;
        report.games_other_variant += scan.games_other_variant as u64;
        for problem in &scan.problems {
            match problem.kind {
                ProblemKind::MalformedGame => report.malformed_games += 1,
                ProblemKind::MalformedAnnotation => report.malformed_annotations += 1,
            }
            if verbose || shown < PROBLEMS_SHOWN {
                shown += 1;
                let game = first_game + problem.game_in_chunk as u64 + 1;
                bar.println(&format!(
                    "makebook: {}:{}: game {game}: {}",
                    report.path.display(),
                    problem.line,
                    problem.message
                ));
            } else {
                hidden += 1;
            }
        }
        first_game += scan.games as u64;
    }
    if hidden > 0 {
        bar.println(&format!(
            "makebook: {}: {hidden} more problems not shown (use --verbose)",
            report.path.display()
        ));
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
    bar: &Progress,
    stop: &AtomicBool,
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
        check_interrupt(stop)?;
        let mut visitor = AnnotatedVisitor::new(only, &mut tally);
        let scan = scan_chunk(&chunk, &mut visitor);
        scans.push(scan);
        bar.set_position(counter.get());
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

/// Reads the collections with `threads` workers on the runtime's ordered
/// map; stops (with [`Interrupted`]) when `stop` is set.
fn read_collections(
    inputs: Vec<Input>,
    filter: CollectionFilter,
    threads: usize,
    verbose: bool,
    bar: &Progress,
    done_bytes: u64,
    stop: &AtomicBool,
) -> Result<(CollectionTally, Vec<FileReport>)> {
    let paths: Vec<PathBuf> = inputs.iter().map(|i| i.path().to_path_buf()).collect();
    let total_bytes: u64 = inputs.iter().filter_map(Input::total_bytes).sum();
    let reserve = expected_pairs_per_worker(total_bytes, filter.max_ply, threads);

    // The source: the chunks of every input in turn, with their file index.
    let mut files = inputs.into_iter().enumerate();
    let mut current: Option<(usize, GameChunker<Input>, PathBuf, ByteCounter)> = None;
    let mut done = done_bytes;
    let source = move || -> Result<Option<(usize, GameChunk)>> {
        loop {
            if let Some((file, chunker, path, counter)) = &mut current {
                let chunk = chunker
                    .next_chunk()
                    .with_context(|| format!("reading {}", path.display()))?;
                bar.set_position(done + counter.get());
                if let Some(chunk) = chunk {
                    return Ok(Some((*file, chunk)));
                }
                done += counter.get();
                current = None;
            }
            let Some((file, input)) = files.next() else {
                return Ok(None);
            };
            let counter = input.bytes_read();
            let path = input.path().to_path_buf();
            current = Some((file, GameChunker::new(input), path, counter));
        }
    };
    let mut scans: Vec<(usize, ChunkScan)> = Vec::new();
    let finished = OrderedMap::new(threads).stop_on(stop).run(
        source,
        |_| CollectionTally::with_capacity(reserve),
        |tally, (file, chunk): (usize, GameChunk)| {
            let mut visitor = CollectionVisitor::new(filter, tally);
            Some((file, scan_chunk(&chunk, &mut visitor)))
        },
        |(file, scan)| {
            scans.push((file, scan));
            Ok(Flow::Continue)
        },
    )?;
    if !finished.complete() {
        return Err(Interrupted.into());
    }
    let mut tally = CollectionTally::default();
    for worker in finished.workers {
        tally.merge(worker);
    }

    let mut reports = Vec::with_capacity(paths.len());
    let mut scans = scans.into_iter().peekable();
    for (file, path) in paths.into_iter().enumerate() {
        let mut file_scans = Vec::new();
        while let Some((_, scan)) = scans.next_if(|(f, _)| *f == file) {
            file_scans.push(scan);
        }
        let mut report = FileReport {
            path,
            ..FileReport::default()
        };
        report_problems(&mut report, &file_scans, verbose, bar);
        reports.push(report);
    }
    Ok((tally, reports))
}

/// Builds the book described by `options` and writes it atomically; `stop`
/// (the runtime's interrupt flag) ends the build without writing.
///
/// # Errors
/// An input that cannot be opened or read, or an output that cannot be
/// written, each named in the error; [`Interrupted`] when `stop` was set.
pub fn build(options: &BuildOptions, stop: &AtomicBool) -> Result<BuildReport> {
    let started = Instant::now();
    check_outputs(&[&options.output], &options.inputs)?;
    let mut inputs = open_all(&options.inputs)?;
    let total: Option<u64> = inputs.iter().map(|i| i.total_bytes()).sum();
    let bar = Progress::bytes(total, options.progress);
    let mut report = BuildReport::default();

    let mut annotated = AnnotatedTally::default();
    let mut done_bytes = 0;
    if !options.collections_only && !inputs.is_empty() {
        let first = inputs.remove(0);
        done_bytes = first.total_bytes().unwrap_or(0);
        let (tally, file_report) =
            read_annotated(first, options.only, options.verbose, &bar, stop)?;
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
        stop,
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

    check_interrupt(stop)?;
    bar.set_message("writing");
    write_book(&options.output, &entries)?;
    bar.finish();
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
            "  {role} {}: {} ({} used, {} without moves, {} other variant, {} malformed and skipped{})\n",
            file.path.display(),
            plural(file.games, "game"),
            file.games_used,
            file.games_without_moves,
            file.games_other_variant,
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
    let collection_games = report.collection_games(options.collections_only);
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

/// The machine-readable summary of a build (`--summary FILE`): the counts
/// of the human summary by name, with one entry per input file.
pub fn json_summary(options: &BuildOptions, report: &BuildReport) -> Summary {
    let mut json = Summary::new("makebook", env!("CARGO_PKG_VERSION"));
    json.inputs.clone_from(&options.inputs);
    json.output = Some(options.output.clone());
    let w = &report.weighting;
    let total = |field: fn(&FileReport) -> u64| report.files.iter().map(field).sum::<u64>();
    let collection_games = report.collection_games(options.collections_only);
    json.count("entries", w.entries)
        .count("positions", w.positions)
        .count("annotated_entries", w.annotated_entries)
        .count("zero_weight_entries", w.zero_weight_entries)
        .count("games", total(|f| f.games))
        .count("games_used", total(|f| f.games_used))
        .count("collection_games", collection_games)
        .count("annotated_moves", report.annotated_moves)
        .count("collection_moves", report.collection_moves)
        .count("collection_pairs", report.collection_pairs)
        .count("games_cut_at_max_ply", report.games_cut_at_max_ply)
        .skip("games_malformed", total(|f| f.malformed_games))
        .skip("games_without_moves", total(|f| f.games_without_moves))
        .skip("games_other_variant", total(|f| f.games_other_variant))
        .skip("annotations_malformed", total(|f| f.malformed_annotations))
        .skip("moves_other_colour", report.dropped_by_colour)
        .skip("moves_below_min_elo", report.dropped_by_elo)
        .skip("pairs_below_min_count", w.dropped_by_min_count)
        .skip("pairs_below_min_score", w.dropped_by_min_score)
        .skip("pairs_never_scored", w.dropped_never_scored)
        .timing("total_seconds", report.elapsed)
        .timing("reading_seconds", report.reading)
        .timing("weighting_seconds", report.weighting_time)
        .rate(
            "collection_games_per_second",
            collection_games as f64,
            report.elapsed,
        )
        .figure("threads", options.threads.max(1))
        .figure("max_ply", options.max_ply)
        .figure("min_count", options.min_count);
    let files: Vec<serde_json::Value> = report
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            serde_json::json!({
                "path": f.path,
                "annotated": i == 0 && !options.collections_only,
                "games": f.games,
                "games_used": f.games_used,
                "games_without_moves": f.games_without_moves,
                "games_other_variant": f.games_other_variant,
                "games_malformed": f.malformed_games,
                "annotations_malformed": f.malformed_annotations,
            })
        })
        .collect();
    json.figure("files", files);
    json
}
