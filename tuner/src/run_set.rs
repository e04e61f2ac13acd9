//! Training positions stored as runs of consecutive positions, each record
//! after the first of its run holding only how its coefficients differ from
//! the previous position's.
//!
//! Positions of one game follow each other in self-play data, and a move
//! changes few terms: of the 41 coefficients of a self-play position, about
//! 14 differ from the previous position's. Linear in the coefficients, the
//! epoch's kernels ([`crate::kernel`]) then need only those: the forward
//! pass carries the `(mg, eg)` sums along a run and adds each record's
//! differences; the backward pass walks the run from its end and adds to
//! each weight its record's difference times the *suffix sum* of the
//! gradient factors of the positions from there to the end of the run
//! (`Σₖ gₖ·xₖ = Σⱼ Δⱼ·Σₖ≥ⱼ gₖ` when `xₖ = Σⱼ≤ₖ Δⱼ`). The king-danger
//! counts, phase and scales are not linear and stay whole in every record.
//!
//! A run is [`RUN_POSITIONS`] positions, starting at multiples of it. Its
//! first record is whole; a later one is a difference when that is shorter
//! than the whole record, and whole otherwise (a new game starts, or the
//! positions do not come from one game at all, as in samples of master
//! games, where every record stays whole and nothing changes). A record is
//! in the format of [`crate::trace_set`], its coefficients being
//! differences; a bit per position says which records are whole.

use rayon::prelude::*;

use crate::trace_set::{PositionView, SYMBOLS, TraceSet, read_large};

/// Positions per run: 16 keep a mini-batch a sample of many games (1,024
/// runs in a batch of 16,384) while storing about 2.6 times fewer
/// coefficients than whole records on self-play data (a run's first record
/// is whole).
pub const RUN_POSITIONS: usize = 16;

/// Positions encoded per unit of parallel work (whole runs and whole words
/// of the bitmap).
const ENCODE_CHUNK: usize = 4096;

/// Chunks encoded at once (about 4 MB of records on self-play data).
const ENCODE_WAVE: usize = 32;
const _: () =
    assert!(ENCODE_CHUNK.is_multiple_of(RUN_POSITIONS) && ENCODE_CHUNK.is_multiple_of(64));

/// Positions as runs (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunSet {
    /// Record `i`: position `i`'s labels, and its coefficients whole or as
    /// the difference from position `i − 1`'s.
    records: TraceSet,
    /// Bit `i`: record `i` is whole.
    whole: Vec<u64>,
    /// Coefficients stored in the records.
    stored: usize,
    /// Coefficients the positions have.
    own: usize,
}

/// The coefficients of `v`, sorted by entry: its ±1 and ±2 coefficients
/// come in entry order, and each of the few large ones (also in entry
/// order) is inserted where it belongs.
fn sorted_entries(v: &PositionView, out: &mut Vec<(u16, i16)>) {
    out.clear();
    out.reserve(v.symbols.len() + v.large_count);
    let mut entry = usize::MAX;
    for &b in v.symbols {
        let s = SYMBOLS[b as usize];
        entry = entry.wrapping_add(s.delta as usize);
        if s.coef != 0 {
            out.push((entry as u16, s.coef as i16));
        }
    }
    let mut large = v.large.iter();
    let mut from = 0;
    for _ in 0..v.large_count {
        let (e, c) = read_large(&mut large).expect("a checked record");
        let at = from + out[from..].partition_point(|&(x, _)| x < e);
        out.insert(at, (e, c));
        from = at + 1;
    }
}

/// `next − previous` of two coefficient lists sorted by entry (no zeros).
fn difference(next: &[(u16, i16)], previous: &[(u16, i16)], out: &mut Vec<(u16, i16)>) {
    out.clear();
    out.reserve(next.len() + previous.len());
    let (mut i, mut j) = (0, 0);
    while i < next.len() && j < previous.len() {
        let ((ea, ca), (eb, cb)) = (next[i], previous[j]);
        if ea == eb {
            if ca != cb {
                out.push((ea, ca - cb));
            }
            i += 1;
            j += 1;
        } else if ea < eb {
            out.push((ea, ca));
            i += 1;
        } else {
            out.push((eb, -cb));
            j += 1;
        }
    }
    out.extend_from_slice(&next[i..]);
    out.extend(previous[j..].iter().map(|&(e, c)| (e, -c)));
}

impl RunSet {
    /// Encodes the positions of `set`, in its order.
    pub fn encode(set: &TraceSet) -> RunSet {
        let n = set.len();
        // In waves of a few chunks encoded in parallel, each appended and
        // freed before the next: the encoded parts of the whole set are
        // never held beside it.
        let mut out = RunSet::default();
        let chunks: Vec<usize> = (0..n.div_ceil(ENCODE_CHUNK)).collect();
        for wave in chunks.chunks(ENCODE_WAVE) {
            let parts: Vec<RunSet> = wave
                .par_iter()
                .map(|&c| {
                    Self::encode_range(set, c * ENCODE_CHUNK..((c + 1) * ENCODE_CHUNK).min(n))
                })
                .collect();
            for p in parts {
                out.records.extend(&p.records);
                out.whole.extend_from_slice(&p.whole);
                out.stored += p.stored;
                out.own += p.own;
            }
        }
        out.records.shrink_to_fit();
        out
    }

    /// The positions of `set`, in its order, every record whole (for
    /// positions that share little with their neighbours).
    pub fn whole(set: TraceSet) -> RunSet {
        let n = set.len();
        let mut whole = vec![u64::MAX; n.div_ceil(64)];
        if let Some(last) = whole.last_mut().filter(|_| !n.is_multiple_of(64)) {
            *last = (1 << (n % 64)) - 1;
        }
        let own = (0..n)
            .map(|i| {
                let v = set.view(i);
                v.symbols
                    .iter()
                    .filter(|&&b| SYMBOLS[b as usize].coef != 0)
                    .count()
                    + v.large_count
            })
            .sum();
        RunSet {
            records: set,
            whole,
            stored: own,
            own,
        }
    }

    /// Encodes the positions `range` of `set` (starting at a multiple of
    /// 64 and of [`RUN_POSITIONS`]).
    fn encode_range(set: &TraceSet, range: std::ops::Range<usize>) -> RunSet {
        let mut out = RunSet::default();
        let (mut previous, mut next, mut diff) = (Vec::new(), Vec::new(), Vec::new());
        for (k, i) in range.enumerate() {
            let v = set.view(i);
            sorted_entries(&v, &mut next);
            difference(&next, &previous, &mut diff);
            out.own += next.len();
            if k % 64 == 0 {
                out.whole.push(0);
            }
            if k % RUN_POSITIONS == 0 || diff.len() >= next.len() {
                out.whole[k / 64] |= 1 << (k % 64);
                out.stored += next.len();
                // Sorted, without repeats or zeros: pushing leaves it as it is.
                out.records.push_with_coefficients(&v, &mut next);
            } else {
                out.stored += diff.len();
                out.records.push_with_coefficients(&v, &mut diff);
            }
            std::mem::swap(&mut previous, &mut next);
        }
        out
    }

    /// The positions again with their own coefficients, in order (for the
    /// gradient check, which samples positions by index).
    pub fn decode(&self) -> TraceSet {
        let mut out = TraceSet::with_capacity(self.len(), self.records.record_bytes());
        let (mut coefs, mut diff, mut next) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..self.len() {
            let v = self.records.view(i);
            if self.is_whole(i) {
                sorted_entries(&v, &mut coefs);
            } else {
                sorted_entries(&v, &mut diff);
                // previous + difference: `difference` of the difference and
                // the negated previous.
                let negated: Vec<(u16, i16)> = coefs.iter().map(|&(e, c)| (e, -c)).collect();
                difference(&diff, &negated, &mut next);
                std::mem::swap(&mut coefs, &mut next);
            }
            out.push_with_coefficients(&v, &mut coefs);
        }
        out
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True without positions.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Number of runs.
    pub fn runs(&self) -> usize {
        self.len().div_ceil(RUN_POSITIONS)
    }

    /// The positions of run `r`.
    #[inline(always)]
    pub fn run_range(&self, r: usize) -> std::ops::Range<usize> {
        r * RUN_POSITIONS..((r + 1) * RUN_POSITIONS).min(self.len())
    }

    /// Whether record `i` holds position `i`'s own coefficients (else their
    /// difference from position `i − 1`'s).
    #[inline(always)]
    pub fn is_whole(&self, i: usize) -> bool {
        self.whole[i / 64] >> (i % 64) & 1 != 0
    }

    /// Record `i`.
    #[inline(always)]
    pub fn view(&self, i: usize) -> PositionView<'_> {
        self.records.view(i)
    }

    /// Coefficients stored, and coefficients the positions have.
    pub fn coefficients(&self) -> (usize, usize) {
        (self.stored, self.own)
    }

    /// Bytes of heap memory used.
    pub fn heap_bytes(&self) -> usize {
        self.records.heap_bytes() + self.whole.capacity() * 8
    }
}

/// The share of coefficients that runs would store, of those whole
/// records store, over the first `sample` positions of `set` (1 for an
/// empty set).
pub fn stored_share(set: &TraceSet, sample: usize) -> f64 {
    let (stored, own) = RunSet::encode_range(set, 0..set.len().min(sample)).coefficients();
    if own == 0 {
        1.0
    } else {
        stored as f64 / own as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_data::game_positions;

    #[test]
    fn differences_round_trip() {
        let a = [(1, 2), (5, -1), (9, 1), (12, 3)];
        let b = [(0, 1), (5, -1), (9, 2), (13, -2)];
        let mut d = Vec::new();
        difference(&a, &b, &mut d);
        assert_eq!(d, vec![(0, -1), (1, 2), (9, -1), (12, 3), (13, 2)]);
        let mut back = Vec::new();
        let negated: Vec<(u16, i16)> = b.iter().map(|&(e, c)| (e, -c)).collect();
        difference(&d, &negated, &mut back);
        assert_eq!(back, a.to_vec());
    }

    /// Consecutive positions of games are stored as differences, fewer
    /// coefficients than whole, and decode to the same set; every run
    /// starts whole.
    #[test]
    fn runs_decode_to_the_positions() {
        let set = game_positions(40, 23);
        let runs = RunSet::encode(&set);
        assert_eq!(runs.len(), set.len());
        assert_eq!(runs.decode(), set);
        let (stored, own) = runs.coefficients();
        assert!(stored * 2 < own, "{stored} of {own}");
        let share = stored_share(&set, usize::MAX);
        assert!((share - stored as f64 / own as f64).abs() < 1e-12);
        for r in 0..runs.runs() {
            assert!(runs.is_whole(runs.run_range(r).start));
        }
        assert!((0..runs.len()).any(|i| !runs.is_whole(i)));
        // Positions that share nothing stay whole, at no extra size.
        let shuffled = {
            let order: Vec<usize> = (0..set.len()).map(|i| i * 7 % set.len()).collect();
            set.select(&order)
        };
        let runs = RunSet::encode(&shuffled);
        assert_eq!(runs.decode(), shuffled);
        let (stored, own) = runs.coefficients();
        assert!(stored <= own);
    }
}
