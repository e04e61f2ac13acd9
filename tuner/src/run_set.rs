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

/// Chunks encoded at once: 32,768 positions, about 2 MB of whole records,
/// which a [`RunSetBuilder`] holds at most before it encodes them.
const ENCODE_WAVE: usize = 8;
const _: () =
    assert!(ENCODE_CHUNK.is_multiple_of(RUN_POSITIONS) && ENCODE_CHUNK.is_multiple_of(64));

/// Positions encoded at once.
const WAVE_POSITIONS: usize = ENCODE_CHUNK * ENCODE_WAVE;

/// A [`RunSetBuilder`] stores differences when they take at most this
/// share of the coefficients of whole records, measured on the first
/// [`LAYOUT_SAMPLE`] positions.
const CHAINED_SHARE: f64 = 0.8;

/// Positions on which a [`RunSetBuilder`] chooses the storage.
const LAYOUT_SAMPLE: usize = 1 << 14;

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
    /// Encodes the positions of `set`, in its order, as differences.
    pub fn encode(set: &TraceSet) -> RunSet {
        let mut out = RunSet::default();
        out.append_encoded(set, set.len());
        out.records.shrink_to_fit();
        out
    }

    /// Appends the first `count` positions of `set`, encoded (`self` must
    /// hold a multiple of [`ENCODE_CHUNK`] positions, so that runs and
    /// bitmap words start where they should). In waves of a few chunks
    /// encoded in parallel, each appended and freed before the next.
    fn append_encoded(&mut self, set: &TraceSet, count: usize) {
        debug_assert!(self.len().is_multiple_of(ENCODE_CHUNK));
        let chunks: Vec<usize> = (0..count.div_ceil(ENCODE_CHUNK)).collect();
        for wave in chunks.chunks(ENCODE_WAVE) {
            let parts: Vec<RunSet> = wave
                .par_iter()
                .map(|&c| {
                    Self::encode_range(set, c * ENCODE_CHUNK..((c + 1) * ENCODE_CHUNK).min(count))
                })
                .collect();
            for p in parts {
                self.records.extend(&p.records);
                self.whole.extend_from_slice(&p.whole);
                self.stored += p.stored;
                self.own += p.own;
            }
        }
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

/// How a [`RunSetBuilder`] stores the records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Storage {
    /// Runs of differences ([`RunSet::encode`]).
    Differences,
    /// Whole records ([`RunSet::whole`]).
    Whole,
}

/// Builds a [`RunSet`] from positions given in order, a part at a time
/// (blocks of the trace cache as they are read), so that the whole records
/// of the set are never held beside its runs: at most a wave of
/// [`WAVE_POSITIONS`] positions and the part being given wait to be
/// encoded. The storage is chosen on the first
/// [`LAYOUT_SAMPLE`] positions: differences when they store at most
/// [`CHAINED_SHARE`] of the coefficients of whole records (positions of
/// games one after another), else whole records, kept as given.
#[derive(Debug, Default)]
pub struct RunSetBuilder {
    /// The storage, once chosen.
    storage: Option<Storage>,
    /// Positions given and not yet encoded (all of them when they stay
    /// whole).
    pending: TraceSet,
    /// Differences encoded so far.
    encoded: RunSet,
}

impl RunSetBuilder {
    /// A builder that chooses the storage from the data.
    pub fn new() -> Self {
        RunSetBuilder::default()
    }

    /// Number of positions given.
    pub fn len(&self) -> usize {
        self.encoded.len() + self.pending.len()
    }

    /// True before any position is given.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the positions of `part`.
    pub fn push(&mut self, part: TraceSet) {
        self.pending.append(part);
        if self.storage.is_none() && self.pending.len() >= LAYOUT_SAMPLE {
            self.choose();
        }
        self.store(false);
    }

    /// The runs of every position given.
    pub fn finish(mut self) -> RunSet {
        if self.storage.is_none() {
            self.choose();
        }
        self.store(true);
        match self.storage {
            Some(Storage::Whole) => {
                self.pending.shrink_to_fit();
                RunSet::whole(self.pending)
            }
            _ => {
                self.encoded.records.shrink_to_fit();
                self.encoded
            }
        }
    }

    /// Chooses the storage on the positions waiting (the first ones).
    fn choose(&mut self) {
        let share = stored_share(&self.pending, LAYOUT_SAMPLE);
        self.storage = Some(if share <= CHAINED_SHARE {
            Storage::Differences
        } else {
            Storage::Whole
        });
    }

    /// Encodes the positions waiting as differences, by whole waves, or all
    /// of them at the `end` (whole records stay where they are).
    fn store(&mut self, end: bool) {
        match self.storage {
            None | Some(Storage::Whole) => {}
            Some(Storage::Differences) => {
                let n = self.pending.len();
                let ready = if end {
                    n
                } else {
                    n / WAVE_POSITIONS * WAVE_POSITIONS
                };
                if ready == 0 {
                    return;
                }
                self.encoded.append_encoded(&self.pending, ready);
                self.pending = if ready == n {
                    TraceSet::new()
                } else {
                    self.pending.select(&(ready..n).collect::<Vec<_>>())
                };
            }
        }
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

    /// `set` in parts of the given sizes, one after another, then the rest.
    fn parts(set: &TraceSet, sizes: &[usize]) -> Vec<TraceSet> {
        let mut out = Vec::new();
        let mut at = 0usize;
        for &k in sizes.iter().chain([&usize::MAX]) {
            let end = at.saturating_add(k).min(set.len());
            out.push(set.select(&(at..end).collect::<Vec<_>>()));
            at = end;
        }
        out
    }

    /// A builder given the positions in parts of any size (across the
    /// waves it encodes at once and the sample it chooses on) stores them
    /// as the whole set at once would: as differences for games, whole
    /// for positions that share nothing.
    #[test]
    fn the_builder_stores_parts_as_the_whole_set() {
        let games = game_positions(100, 60);
        let mut set = TraceSet::new();
        while set.len() < WAVE_POSITIONS + LAYOUT_SAMPLE {
            set.extend(&games);
        }
        let order: Vec<usize> = (0..set.len()).map(|i| i * 7919 % set.len()).collect();
        let scattered = set.select(&order);
        for (data, storage) in [(&set, Storage::Differences), (&scattered, Storage::Whole)] {
            let at_once = {
                let mut b = RunSetBuilder::new();
                b.push(data.clone());
                b.finish()
            };
            assert_eq!(at_once.decode(), *data);
            let expected = match storage {
                Storage::Differences => RunSet::encode(data),
                Storage::Whole => RunSet::whole(data.clone()),
            };
            assert_eq!(at_once, expected, "{storage:?}");
            for sizes in [
                &[1, 100, 4095, 65_536][..],
                &[LAYOUT_SAMPLE - 1, 3, 31_000],
                &[],
            ] {
                let mut b = RunSetBuilder::new();
                for part in parts(data, sizes) {
                    b.push(part);
                }
                assert_eq!(b.len(), data.len());
                assert_eq!(b.finish(), at_once, "{storage:?} in parts {sizes:?}");
            }
        }
        // A set too small to choose on is chosen on whole at the end.
        let mut b = RunSetBuilder::new();
        b.push(games.clone());
        assert_eq!(b.finish(), RunSet::encode(&games));
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
