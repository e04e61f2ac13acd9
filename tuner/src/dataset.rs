//! Loading training data: labeled files → resolved positions → traces.
//!
//! Files are cut into chunks of [`CHUNK`] raw lines (or [`CHUNK`] 32-byte
//! records of bullet's binary format, recognised by
//! [`engine::formats::bullet::is_binary`]; every text format is read by
//! [`engine::formats::labeled`], bullet's text format included), which the
//! tools' ordered map ([`engine::runtime::ordered`]) hands to worker
//! threads: each parses, resolves (quiet leaf of the quiescence PV by
//! default, see [`Resolve`]) and traces its chunk with its own searcher,
//! and the results are appended in input order, so the result, the
//! statistics and the error reports do not depend on the thread count, and
//! memory stays at the compact traces plus a few chunks per thread.
//! Records without a result are rejected and counted, unless scores suffice
//! (`--lambda 0`, where the target is the search score alone): then those
//! with a search score are kept, with a draw as a placeholder result that
//! the target does not use (see [`load`]); malformed lines (records) are reported with file and line (record
//! number), skipped and counted; a binary file cut inside a record is an
//! error.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use anyhow::{Context, Result};
use engine::eval::Params;
use engine::formats::bullet::{self, RECORD_BYTES, RecordReader};
use engine::formats::input::open_input;
use engine::formats::labeled::{GameResult, LabeledBlocks, LabeledPosition, LineBlock};
use engine::runtime::fingerprint::file_fnv1a;
use engine::runtime::ordered::{Flow, OrderedMap, WorkerPanicked};
use engine::search::{SearchLimits, Searcher};
use shakmaty::{Chess, Color, Position};

use crate::trace_set::TraceSet;

/// Lines (or records) per unit of parallel work.
pub const CHUNK: usize = 512;
/// Transposition table of the resolving searchers (MB).
const RESOLVE_TT_MB: usize = 1;
/// Malformed lines printed in full before only counting.
const MAX_REPORTED_ERRORS: usize = 20;
/// Expected bytes per traced position (for reserving memory).
const BYTES_PER_POSITION: usize = 64;

/// How a labeled position becomes the position that is traced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolve {
    /// Trace the position as it is.
    None,
    /// The quiet leaf at the end of the quiescence-search PV.
    Qsearch,
    /// The leaf of a depth-N search PV, then its quiescence leaf.
    Depth(u32),
}

impl FromStr for Resolve {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Resolve::None),
            "qsearch" => Ok(Resolve::Qsearch),
            _ => s
                .strip_prefix("depth:")
                .and_then(|d| d.parse().ok())
                .filter(|&d| d > 0)
                .map(Resolve::Depth)
                .ok_or_else(|| format!("expected none, qsearch or depth:N (N ≥ 1), got {s:?}")),
        }
    }
}

impl std::fmt::Display for Resolve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Resolve::None => write!(f, "none"),
            Resolve::Qsearch => write!(f, "qsearch"),
            Resolve::Depth(d) => write!(f, "depth:{d}"),
        }
    }
}

/// A training record kept for re-resolution (`--recompute-pv`).
#[derive(Clone, Debug)]
pub struct Sample {
    /// The position as read.
    pub position: Chess,
    /// Its result.
    pub result: GameResult,
    /// Search score, White-relative.
    pub score_white: Option<i32>,
}

/// What loading saw.
#[derive(Clone, Debug, Default)]
pub struct LoadStats {
    /// Records read per file.
    pub per_file: Vec<(PathBuf, usize)>,
    /// Records without a game result (rejected).
    pub without_result: usize,
    /// Records without a game result kept for their search score (when
    /// scores suffice).
    pub score_only: usize,
    /// Malformed lines (skipped).
    pub malformed: usize,
    /// Records with a search score.
    pub with_score: usize,
}

/// Loads every file: returns the traced set, the raw samples when
/// `keep.samples` (for `--recompute-pv`), and statistics. Runs on as many
/// threads as the current rayon pool has (`--threads`).
///
/// A record without a result is rejected, unless `keep.score_only` (the
/// caller's target ignores results: `--lambda 0` with `mse` or `log`) and it
/// has a search score: it is then kept with [`SCORE_ONLY_PLACEHOLDER`] as
/// its result. Such positions must not reach a trace cache, which may later
/// be trained with results.
///
/// # Errors
/// A file that cannot be opened or read, or binary data cut inside a
/// record, each named.
pub fn load(
    paths: &[PathBuf],
    resolve: Resolve,
    params: &Arc<Params>,
    keep: Keep,
    on_progress: impl FnMut(usize) + Send,
) -> Result<(TraceSet, Vec<Sample>, LoadStats)> {
    let mut set = TraceSet::new();
    let (kept, stats) = load_each(
        paths,
        resolve,
        params,
        keep,
        |traces| {
            set.extend(traces);
            Ok(())
        },
        on_progress,
    )?;
    Ok((set, kept, stats))
}

/// As [`load`], handing the traced positions to `on_traces` in input
/// order, a chunk at a time, instead of collecting them (`--save-traces`
/// streams them to the cache).
///
/// # Errors
/// As [`load`], and the first error of `on_traces`.
pub fn load_each(
    paths: &[PathBuf],
    resolve: Resolve,
    params: &Arc<Params>,
    keep: Keep,
    mut on_traces: impl FnMut(&TraceSet) -> Result<()> + Send,
    mut on_progress: impl FnMut(usize) + Send,
) -> Result<(Vec<Sample>, LoadStats)> {
    let mut positions = 0;
    let mut kept = Vec::new();
    let mut stats = LoadStats {
        per_file: paths.iter().map(|p| (p.clone(), 0)).collect(),
        ..LoadStats::default()
    };
    let mut chunks = Chunks {
        paths,
        next_path: 0,
        current: None,
    };
    OrderedMap::new(rayon::current_num_threads()).run(
        || chunks.next_chunk(),
        |_thread| resolver(resolve, params),
        |searcher, chunk| Some(load_chunk(chunk, resolve, searcher.as_mut(), keep)),
        |part| {
            for e in &part.errors {
                stats.malformed += 1;
                if stats.malformed <= MAX_REPORTED_ERRORS {
                    eprintln!("warning: skipped: {e}");
                }
            }
            stats.per_file[part.file].1 += part.records;
            stats.without_result += part.without_result;
            stats.score_only += part.score_only;
            stats.with_score += part.with_score;
            on_traces(&part.traces)?;
            positions += part.traces.len();
            kept.extend(part.samples);
            on_progress(positions);
            Ok::<_, anyhow::Error>(Flow::Continue)
        },
    )?;
    if stats.malformed > MAX_REPORTED_ERRORS {
        eprintln!(
            "warning: {} more malformed lines skipped",
            stats.malformed - MAX_REPORTED_ERRORS
        );
    }
    Ok((kept, stats))
}

/// A file being cut into chunks.
enum OpenFile {
    Text(LabeledBlocks<Box<dyn BufRead + Send>>),
    Binary(RecordReader<Box<dyn BufRead + Send>>),
}

/// The input files cut into chunks, in order.
struct Chunks<'a> {
    paths: &'a [PathBuf],
    /// Index of the next file to open.
    next_path: usize,
    /// The file being cut, with its index.
    current: Option<(usize, OpenFile)>,
}

/// A piece of one input file.
enum Chunk {
    /// Up to [`CHUNK`] raw lines of a text file.
    Lines { file: usize, block: LineBlock },
    /// Up to [`CHUNK`] records of a bullet binary file; `first` is the
    /// number of records before them.
    Records {
        file: usize,
        path: PathBuf,
        first: u64,
        records: Vec<[u8; RECORD_BYTES]>,
    },
}

impl Chunks<'_> {
    /// The next chunk; `None` after the last file.
    fn next_chunk(&mut self) -> Result<Option<Chunk>> {
        loop {
            let Some((file, open)) = self.current.as_mut() else {
                let Some(path) = self.paths.get(self.next_path) else {
                    return Ok(None);
                };
                self.current = Some((self.next_path, open_file(path)?));
                self.next_path += 1;
                continue;
            };
            let file = *file;
            let path = &self.paths[file];
            let chunk = match open {
                OpenFile::Text(reader) => {
                    let mut block = LineBlock::new();
                    // A read error (truncated or corrupt input) is fatal:
                    // never train on part of a file.
                    reader
                        .read_block(&mut block, CHUNK)?
                        .then_some(Chunk::Lines { file, block })
                }
                OpenFile::Binary(reader) => {
                    let first = reader.records();
                    let mut records = Vec::with_capacity(CHUNK);
                    let n = reader
                        .read_block(&mut records, CHUNK)
                        .with_context(|| format!("{}: bullet records", path.display()))?;
                    (n > 0).then(|| Chunk::Records {
                        file,
                        path: path.clone(),
                        first,
                        records,
                    })
                }
            };
            match chunk {
                Some(chunk) => return Ok(Some(chunk)),
                None => self.current = None,
            }
        }
    }
}

/// Opens `path` as labeled text lines or bullet binary records.
fn open_file(path: &Path) -> Result<OpenFile> {
    let mut input = open_input(path)
        .with_context(|| format!("opening {}", path.display()))?
        .into_reader();
    let head =
        bullet::read_head(&mut input).with_context(|| format!("reading {}", path.display()))?;
    let binary = bullet::is_binary(path, &head);
    let input: Box<dyn BufRead + Send> =
        Box::new(BufReader::new(std::io::Cursor::new(head).chain(input)));
    Ok(if binary {
        OpenFile::Binary(RecordReader::new(input))
    } else {
        OpenFile::Text(LabeledBlocks::new(input, Some(path.to_path_buf())))
    })
}

/// Parses, resolves and traces one chunk.
fn load_chunk(chunk: Chunk, resolve: Resolve, searcher: Option<&mut Searcher>, keep: Keep) -> Part {
    match chunk {
        Chunk::Lines { file, block } => {
            let items = (0..block.len())
                .filter_map(|i| block.parse(i))
                .map(|item| item.map(|(_, record)| record).map_err(|e| e.to_string()));
            load_items(file, items, block.len(), resolve, searcher, keep)
        }
        Chunk::Records {
            file,
            path,
            first,
            records,
        } => {
            let items = records.iter().enumerate().map(|(i, record)| {
                bullet::decode(record).map_err(|e| {
                    format!("{}: record {}: {e}", path.display(), first + i as u64 + 1)
                })
            });
            load_items(file, items, records.len(), resolve, searcher, keep)
        }
    }
}

/// What one chunk gave.
#[derive(Default)]
struct Part {
    /// Index of the file it came from.
    file: usize,
    traces: TraceSet,
    samples: Vec<Sample>,
    /// Bad lines or records, located.
    errors: Vec<String>,
    records: usize,
    without_result: usize,
    score_only: usize,
    with_score: usize,
}

/// What a load keeps besides the traces of the records with a result.
#[derive(Clone, Copy, Debug, Default)]
pub struct Keep {
    /// The samples (for `--recompute-pv`).
    pub samples: bool,
    /// Records without a result but with a search score (see [`load`]).
    pub score_only: bool,
}

/// The result given to a record kept for its search score alone (see
/// [`load`]): any result would do, since the target does not use it.
pub const SCORE_ONLY_PLACEHOLDER: GameResult = GameResult::Draw;

/// A worker's resolving searcher (`None` without resolution): `resolve`
/// neither uses the transposition table nor learns across positions, and
/// depth searches start with `new_game`, so which searcher resolves a
/// position does not matter.
fn resolver(resolve: Resolve, params: &Arc<Params>) -> Option<Searcher> {
    (resolve != Resolve::None).then(|| Searcher::new(params.clone(), RESOLVE_TT_MB))
}

/// Resolves and traces `s` into `set`.
fn push(resolve: Resolve, searcher: Option<&mut Searcher>, set: &mut TraceSet, s: &Sample) {
    match searcher {
        Some(searcher) => {
            let leaf = resolve_position(searcher, &s.position, resolve);
            set.push_position(&leaf, s.result, s.score_white);
        }
        None => set.push_position(&s.position, s.result, s.score_white),
    }
}

/// Resolves and traces parsed records (or their errors) of file `file`, in
/// order; `expected` is about how many there are (for reserving memory).
fn load_items(
    file: usize,
    items: impl Iterator<Item = Result<LabeledPosition, String>>,
    expected: usize,
    resolve: Resolve,
    mut searcher: Option<&mut Searcher>,
    keep: Keep,
) -> Part {
    let mut part = Part {
        file,
        traces: TraceSet::with_capacity(expected, expected * BYTES_PER_POSITION),
        ..Part::default()
    };
    for item in items {
        match item {
            Err(e) => part.errors.push(e),
            Ok(rec) => {
                part.records += 1;
                // A record kept without a result is kept for its score.
                let without_result = rec.result.is_none();
                let Some(sample) = to_sample(rec, keep.score_only) else {
                    part.without_result += 1;
                    continue;
                };
                part.score_only += usize::from(without_result);
                part.with_score += usize::from(sample.score_white.is_some());
                push(resolve, searcher.as_deref_mut(), &mut part.traces, &sample);
                if keep.samples {
                    part.samples.push(sample);
                }
            }
        }
    }
    part
}

/// The sample of a record; `None` without a result, unless `scores_suffice`
/// and it has a score (then with [`SCORE_ONLY_PLACEHOLDER`]).
fn to_sample(rec: LabeledPosition, scores_suffice: bool) -> Option<Sample> {
    let result = match rec.result {
        Some(result) => result,
        None if scores_suffice && rec.score.is_some() => SCORE_ONLY_PLACEHOLDER,
        None => return None,
    };
    let turn = rec.position.turn();
    Some(Sample {
        score_white: rec.score.map(|s| if turn == Color::White { s } else { -s }),
        result,
        position: rec.position,
    })
}

/// Resolves and traces `samples` in parallel, in order.
pub fn trace_samples(samples: &[Sample], resolve: Resolve, params: &Arc<Params>) -> TraceSet {
    let mut set = TraceSet::new();
    let mut chunks = samples.chunks(CHUNK);
    // Nothing can fail but a worker thread, whose panic is passed on.
    let traced = OrderedMap::new(rayon::current_num_threads()).run(
        || Ok::<_, WorkerPanicked>(chunks.next()),
        |_thread| resolver(resolve, params),
        |searcher, chunk| {
            let mut out = TraceSet::with_capacity(chunk.len(), chunk.len() * BYTES_PER_POSITION);
            for s in chunk {
                push(resolve, searcher.as_mut(), &mut out, s);
            }
            Some(out)
        },
        |part| {
            set.extend(&part);
            Ok(Flow::Continue)
        },
    );
    if let Err(e) = traced {
        panic!("tracing the samples: {e}");
    }
    set
}

/// The position that represents `pos` in training.
pub fn resolve_position(searcher: &mut Searcher, pos: &Chess, resolve: Resolve) -> Chess {
    match resolve {
        Resolve::None => pos.clone(),
        Resolve::Qsearch => searcher.resolve(pos).0,
        Resolve::Depth(d) => {
            searcher.new_game();
            let result = searcher.search(pos, &[], &SearchLimits::depth(d), |_| {});
            let mut leaf = pos.clone();
            for m in result.pv {
                if !leaf.is_legal(m) {
                    break;
                }
                leaf.play_unchecked(m);
            }
            searcher.resolve(&leaf).0
        }
    }
}

/// A stable hash of the input files' names and sizes, for provenance.
pub fn describe_inputs(stats: &LoadStats) -> Vec<String> {
    stats
        .per_file
        .iter()
        .map(|(p, n)| {
            format!(
                "{} ({n} positions, {})",
                p.display(),
                file_fnv1a(p).map_or("unhashed".to_string(), |(_, h)| format!("fnv64 {h:016x}"))
            )
        })
        .collect()
}
