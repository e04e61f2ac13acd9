//! Loading training data: labeled files → resolved positions → traces.
//!
//! Files are streamed in blocks of [`BLOCK`] records; each block is resolved
//! (quiet leaf of the quiescence PV by default, see [`Resolve`]) and traced
//! in parallel, and appended in input order, so the result does not depend
//! on the thread count and memory stays at the compact traces plus one
//! block. Records without a result are rejected and counted; malformed lines
//! are reported with file and line, skipped and counted.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use anyhow::{Context, Result};
use engine::eval::{Params, trace};
use engine::input::open_input;
use engine::labeled::{GameResult, LabeledPosition, LabeledReader};
use engine::search::{SearchLimits, Searcher};
use rayon::prelude::*;
use shakmaty::{Chess, Color, Position};

use crate::trace_set::TraceSet;

/// Records resolved and traced together.
pub const BLOCK: usize = 65_536;
/// Records per unit of parallel work inside a block.
const RESOLVE_CHUNK: usize = 512;
/// Transposition table of the resolving searchers (MB).
const RESOLVE_TT_MB: usize = 1;
/// Malformed lines printed in full before only counting.
const MAX_REPORTED_ERRORS: usize = 20;

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
    let mut set = TraceSet::new();
    let mut kept = Vec::new();
    let mut stats = LoadStats::default();
    for path in paths {
        let input = open_input(path).with_context(|| format!("opening {}", path.display()))?;
        let reader = LabeledReader::new(BufReader::new(input.into_reader()), Some(path.clone()));
        let mut count = 0;
        let mut block: Vec<Sample> = Vec::with_capacity(BLOCK);
        for item in reader {
            match item {
                Err(e) => {
                    stats.malformed += 1;
                    if stats.malformed <= MAX_REPORTED_ERRORS {
                        eprintln!("warning: skipped: {e}");
                    }
                }
                Ok((_, rec)) => {
                    count += 1;
                    if let Some(sample) = to_sample(rec, &mut stats) {
                        block.push(sample);
                    }
                    if block.len() == BLOCK {
                        set.extend(&trace_samples(&block, resolve, params));
                        on_progress(set.len());
                        if keep_samples {
                            kept.append(&mut block);
                        }
                        block.clear();
                    }
                }
            }
        }
        set.extend(&trace_samples(&block, resolve, params));
        on_progress(set.len());
        if keep_samples {
            kept.append(&mut block);
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

fn to_sample(rec: LabeledPosition, stats: &mut LoadStats) -> Option<Sample> {
    let Some(result) = rec.result else {
        stats.without_result += 1;
        return None;
    };
    stats.with_score += usize::from(rec.score.is_some());
    let turn = rec.position.turn();
    Some(Sample {
        score_white: rec.score.map(|s| if turn == Color::White { s } else { -s }),
        result,
        position: rec.position,
    })
}

/// Resolves and traces `samples` in parallel, in order.
pub fn trace_samples(samples: &[Sample], resolve: Resolve, params: &Arc<Params>) -> TraceSet {
    let parts: Vec<TraceSet> = samples
        .par_chunks(RESOLVE_CHUNK)
        .map_init(
            || Searcher::new(params.clone(), RESOLVE_TT_MB),
            |searcher, chunk| {
                let mut out = TraceSet::new();
                for s in chunk {
                    let leaf = resolve_position(searcher, &s.position, resolve);
                    out.push(&trace(&leaf), s.result, s.score_white);
                }
                out
            },
        )
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

fn file_hash(path: &Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    Some(h)
}
