//! Loading training data: labeled files → resolved positions → traces.
//!
//! Files are streamed in blocks of [`BLOCK`] raw lines (or [`BLOCK`] 32-byte
//! records of bullet's binary format, recognised by
//! [`engine::formats::bullet::is_binary`]; every text format is read by
//! [`engine::formats::labeled`], bullet's text format included); the items of a
//! block are parsed, resolved (quiet leaf of the quiescence PV by default, see
//! [`Resolve`]) and traced in parallel, in chunks whose results are appended
//! in input order, so the result, the statistics and the error reports do
//! not depend on the thread count, and memory stays at the compact traces
//! plus one block. Records without a result are rejected and counted;
//! malformed lines (records) are reported with file and line (record
//! number), skipped and counted; a binary file cut inside a record is an
//! error.

use std::io::{BufReader, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, Result};
use engine::eval::Params;
use engine::formats::bullet::{self, RecordReader};
use engine::formats::input::open_input;
use engine::formats::labeled::{GameResult, LabeledBlocks, LabeledPosition, LineBlock};
use engine::search::{SearchLimits, Searcher};
use rayon::prelude::*;
use shakmaty::{Chess, Color, Position};

use crate::trace_set::TraceSet;

/// Lines read, then parsed, resolved and traced together.
pub const BLOCK: usize = 65_536;
/// Lines (or records) per unit of parallel work inside a block.
const CHUNK: usize = 512;
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
    /// Malformed lines (skipped).
    pub malformed: usize,
    /// Records with a search score.
    pub with_score: usize,
}

/// Loads every file: returns the traced set, the raw samples when
/// `keep_samples` (for `--recompute-pv`), and statistics.
pub fn load(
    paths: &[PathBuf],
    resolve: Resolve,
    params: &Arc<Params>,
    keep_samples: bool,
    mut on_progress: impl FnMut(usize),
) -> Result<(TraceSet, Vec<Sample>, LoadStats)> {
    let resolver = Resolver::new(resolve, params);
    let mut set = TraceSet::new();
    let mut kept = Vec::new();
    let mut stats = LoadStats::default();
    let mut block = LineBlock::new();
    for path in paths {
        let mut input = open_input(path)
            .with_context(|| format!("opening {}", path.display()))?
            .into_reader();
        let head =
            bullet::read_head(&mut input).with_context(|| format!("reading {}", path.display()))?;
        let binary = bullet::is_binary(path, &head);
        let input = BufReader::new(std::io::Cursor::new(head).chain(input));
        let mut count = 0;
        let mut add = |part: Part, set: &mut TraceSet, stats: &mut LoadStats| {
            for e in &part.errors {
                stats.malformed += 1;
                if stats.malformed <= MAX_REPORTED_ERRORS {
                    eprintln!("warning: skipped: {e}");
                }
            }
            count += part.records;
            stats.without_result += part.without_result;
            stats.with_score += part.with_score;
            set.extend(&part.traces);
            kept.extend(part.samples);
        };
        if binary {
            let mut reader = RecordReader::new(input);
            let mut records = Vec::new();
            loop {
                let first = reader.records();
                let n = reader
                    .read_block(&mut records, BLOCK)
                    .with_context(|| format!("{}: bullet records", path.display()))?;
                if n == 0 {
                    break;
                }
                let parts: Vec<Part> = chunks(n)
                    .into_par_iter()
                    .map(|range| {
                        let expected = range.len();
                        let items = range.map(|i| {
                            bullet::decode(&records[i]).map_err(|e| {
                                format!("{}: record {}: {e}", path.display(), first + i as u64 + 1)
                            })
                        });
                        resolver.load_items(items, expected, keep_samples)
                    })
                    .collect();
                for part in parts {
                    add(part, &mut set, &mut stats);
                }
                on_progress(set.len());
            }
        } else {
            let mut reader = LabeledBlocks::new(input, Some(path.clone()));
            while reader.read_block(&mut block, BLOCK) {
                let parts: Vec<Part> = chunks(block.len())
                    .into_par_iter()
                    .map(|lines| {
                        let expected = lines.len();
                        let items = lines
                            .filter_map(|i| block.parse(i))
                            .map(|item| item.map(|(_, record)| record).map_err(|e| e.to_string()));
                        resolver.load_items(items, expected, keep_samples)
                    })
                    .collect();
                for part in parts {
                    add(part, &mut set, &mut stats);
                }
                on_progress(set.len());
            }
        }
        stats.per_file.push((path.clone(), count));
    }
    if stats.malformed > MAX_REPORTED_ERRORS {
        eprintln!(
            "warning: {} more malformed lines skipped",
            stats.malformed - MAX_REPORTED_ERRORS
        );
    }
    Ok((set, kept, stats))
}

/// `0..n` cut into [`CHUNK`]-sized ranges.
fn chunks(n: usize) -> Vec<Range<usize>> {
    (0..n)
        .step_by(CHUNK)
        .map(|a| a..(a + CHUNK).min(n))
        .collect()
}

/// What one chunk of lines gave.
#[derive(Default)]
struct Part {
    traces: TraceSet,
    samples: Vec<Sample>,
    /// Bad lines or records, located.
    errors: Vec<String>,
    records: usize,
    without_result: usize,
    with_score: usize,
}

/// Resolving searchers, one per thread of the current rayon pool, reused
/// for every chunk: `resolve` neither uses the transposition table nor
/// learns across positions, and depth searches start with `new_game`, so
/// which searcher resolves a position does not matter.
struct Resolver {
    resolve: Resolve,
    searchers: Vec<Mutex<Searcher>>,
}

impl Resolver {
    fn new(resolve: Resolve, params: &Arc<Params>) -> Self {
        let searchers = match resolve {
            Resolve::None => Vec::new(),
            _ => (0..rayon::current_num_threads())
                .map(|_| Mutex::new(Searcher::new(params.clone(), RESOLVE_TT_MB)))
                .collect(),
        };
        Resolver { resolve, searchers }
    }

    /// Runs `f` with the current thread's searcher (`None` without
    /// resolution).
    fn with_searcher<T>(&self, f: impl FnOnce(Option<&mut Searcher>) -> T) -> T {
        if self.searchers.is_empty() {
            return f(None);
        }
        let i = rayon::current_thread_index().unwrap_or(0) % self.searchers.len();
        let mut searcher = self.searchers[i]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        f(Some(&mut searcher))
    }

    /// Resolves and traces `s` into `set`.
    fn push(&self, searcher: Option<&mut Searcher>, set: &mut TraceSet, s: &Sample) {
        match searcher {
            Some(searcher) if self.resolve != Resolve::None => {
                let leaf = resolve_position(searcher, &s.position, self.resolve);
                set.push_position(&leaf, s.result, s.score_white);
            }
            _ => set.push_position(&s.position, s.result, s.score_white),
        }
    }

    /// Resolves and traces parsed records (or their errors), in order;
    /// `expected` is about how many there are (for reserving memory).
    fn load_items(
        &self,
        items: impl Iterator<Item = Result<LabeledPosition, String>>,
        expected: usize,
        keep_samples: bool,
    ) -> Part {
        let mut part = Part {
            traces: TraceSet::with_capacity(expected, expected * BYTES_PER_POSITION),
            ..Part::default()
        };
        self.with_searcher(|mut searcher| {
            for item in items {
                match item {
                    Err(e) => part.errors.push(e),
                    Ok(rec) => {
                        part.records += 1;
                        let Some(sample) = to_sample(rec) else {
                            part.without_result += 1;
                            continue;
                        };
                        part.with_score += usize::from(sample.score_white.is_some());
                        self.push(searcher.as_deref_mut(), &mut part.traces, &sample);
                        if keep_samples {
                            part.samples.push(sample);
                        }
                    }
                }
            }
        });
        part
    }
}

fn to_sample(rec: LabeledPosition) -> Option<Sample> {
    let result = rec.result?;
    let turn = rec.position.turn();
    Some(Sample {
        score_white: rec.score.map(|s| if turn == Color::White { s } else { -s }),
        result,
        position: rec.position,
    })
}

/// Resolves and traces `samples` in parallel, in order.
pub fn trace_samples(samples: &[Sample], resolve: Resolve, params: &Arc<Params>) -> TraceSet {
    let resolver = Resolver::new(resolve, params);
    let parts: Vec<TraceSet> = samples
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut out = TraceSet::with_capacity(chunk.len(), chunk.len() * BYTES_PER_POSITION);
            resolver.with_searcher(|mut searcher| {
                for s in chunk {
                    resolver.push(searcher.as_deref_mut(), &mut out, s);
                }
            });
            out
        })
        .collect();
    let mut set = TraceSet::new();
    for p in &parts {
        set.extend(p);
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
                file_hash(p).map_or("unhashed".to_string(), |h| format!("fnv64 {h:016x}"))
            )
        })
        .collect()
}

/// FNV-1a over the file's bytes, read in blocks (the file may be larger
/// than memory).
fn file_hash(path: &Path) -> Option<u64> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut buffer = vec![0u8; 1 << 16];
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    loop {
        let n = match file.read(&mut buffer) {
            Ok(0) => return Some(h),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        for &b in &buffer[..n] {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
}
