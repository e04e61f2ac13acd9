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
use thiserror::Error;

use crate::trace_set::{Hasher, PositionView, SYMBOLS, TraceSet, read_large};

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
    /// Coefficients the positions of each run have.
    run_own: Vec<u32>,
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

/// `a + sign·b` of two coefficient lists sorted by entry (no zeros in
/// either or in the result); `None` when a coefficient leaves the `i16`
/// range.
fn combine(a: &[(u16, i16)], b: &[(u16, i16)], sign: i16, out: &mut Vec<(u16, i16)>) -> Option<()> {
    out.clear();
    out.reserve(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let ((ea, ca), (eb, cb)) = (a[i], b[j]);
        if ea == eb {
            let c = ca.checked_add(cb.checked_mul(sign)?)?;
            if c != 0 {
                out.push((ea, c));
            }
            i += 1;
            j += 1;
        } else if ea < eb {
            out.push((ea, ca));
            i += 1;
        } else {
            out.push((eb, cb.checked_mul(sign)?));
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    for &(e, c) in &b[j..] {
        out.push((e, c.checked_mul(sign)?));
    }
    Some(())
}

/// `next − previous` (`None` when a difference leaves the `i16` range:
/// the record is then stored whole).
fn difference(
    next: &[(u16, i16)],
    previous: &[(u16, i16)],
    out: &mut Vec<(u16, i16)>,
) -> Option<()> {
    combine(next, previous, -1, out)
}

/// `previous + diff` (`None` when a sum leaves the `i16` range: only a
/// damaged record can do that).
fn sum(previous: &[(u16, i16)], diff: &[(u16, i16)], out: &mut Vec<(u16, i16)>) -> Option<()> {
    combine(previous, diff, 1, out)
}

/// The coefficients a record stores.
fn stored_coefficients(v: &PositionView) -> usize {
    v.symbols
        .iter()
        .filter(|&&b| SYMBOLS[b as usize].coef != 0)
        .count()
        + v.large_count
}

/// Runs that do not decode: a difference whose sum leaves the
/// coefficients' range (a damaged record).
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
#[error("record {position}: its differences overflow a coefficient")]
pub struct DecodeError {
    /// The record, counted from the set's first.
    pub position: usize,
}

impl RunSet {
    /// Encodes the positions of `set`, in its order, as differences.
    pub fn encode(set: &TraceSet) -> RunSet {
        let mut out = RunSet::default();
        out.append_encoded(set, set.len());
        out.records.shrink_to_fit();
        out
    }

    /// The positions of `set` for storing: as runs of differences when
    /// they store at most `CHAINED_SHARE` (80%) of the coefficients of whole
    /// records, else whole records (positions that share little with their
    /// neighbours, which then read without decoding).
    pub fn encode_or_whole(set: TraceSet) -> RunSet {
        let runs = RunSet::encode(&set);
        if runs.prefix_share(usize::MAX) <= CHAINED_SHARE {
            runs
        } else {
            RunSet::whole(set)
        }
    }

    /// Whether every record is whole.
    pub fn is_all_whole(&self) -> bool {
        let n = self.len();
        self.whole[..n / 64].iter().all(|&w| w == u64::MAX)
            && (n.is_multiple_of(64) || self.whole[n / 64] == (1 << (n % 64)) - 1)
    }

    /// The runs as [`RunSet::encode`] makes them of these positions: these
    /// when they hold a difference (the encoder made them), else encoded
    /// (whole records may be stored whole by [`RunSet::encode_or_whole`]
    /// where the encoder would store some differences).
    pub fn into_encoded(self) -> RunSet {
        if self.is_all_whole() {
            RunSet::encode(&self.records)
        } else {
            self
        }
    }

    /// Appends the first `count` positions of `set`, encoded (`self` must
    /// hold whole runs). In waves of a few chunks encoded in parallel, each
    /// appended and freed before the next.
    fn append_encoded(&mut self, set: &TraceSet, count: usize) {
        let chunks: Vec<usize> = (0..count.div_ceil(ENCODE_CHUNK)).collect();
        for wave in chunks.chunks(ENCODE_WAVE) {
            let parts: Vec<RunSet> = wave
                .par_iter()
                .map(|&c| {
                    Self::encode_range(set, c * ENCODE_CHUNK..((c + 1) * ENCODE_CHUNK).min(count))
                })
                .collect();
            for p in parts {
                self.append(p);
            }
        }
    }

    /// Appends the positions of `other` (`self` must hold whole runs, so
    /// that `other`'s runs stay runs).
    ///
    /// # Panics
    /// When `self` ends inside a run.
    pub fn append(&mut self, other: RunSet) {
        let n = self.len();
        assert!(
            n.is_multiple_of(RUN_POSITIONS),
            "appending after a partial run"
        );
        if n == 0 {
            *self = other;
            return;
        }
        let shift = n % 64;
        let total = n + other.len();
        if shift == 0 {
            self.whole.extend_from_slice(&other.whole);
        } else {
            for w in other.whole {
                *self.whole.last_mut().expect("a word") |= w << shift;
                self.whole.push(w >> (64 - shift));
            }
            self.whole.truncate(total.div_ceil(64));
        }
        self.records.append(other.records);
        self.stored += other.stored;
        self.run_own.extend_from_slice(&other.run_own);
    }

    /// Runs from their parts as [`RunSet::records`],
    /// [`RunSet::whole_words`], [`RunSet::run_coefficients`] and
    /// [`RunSet::coefficients`] (`stored`, taken as given: a count for
    /// reports) give them.
    ///
    /// # Errors
    /// When the bitmap or the coefficient counts do not fit the records, or
    /// a run does not start with a whole record.
    pub fn from_parts(
        records: TraceSet,
        whole: Vec<u64>,
        run_own: Vec<u32>,
        stored: usize,
    ) -> Result<RunSet, &'static str> {
        let n = records.len();
        if whole.len() != n.div_ceil(64) {
            return Err("the bitmap of whole records has the wrong length");
        }
        if run_own.len() != n.div_ceil(RUN_POSITIONS) {
            return Err("the coefficient counts of the runs have the wrong length");
        }
        if !n.is_multiple_of(64) && whole.last().is_some_and(|w| w >> (n % 64) != 0) {
            return Err("the bitmap marks records past the last");
        }
        let set = RunSet {
            stored,
            records,
            whole,
            run_own,
        };
        if (0..set.runs()).any(|r| !set.is_whole(r * RUN_POSITIONS)) {
            return Err("a run starts with a difference");
        }
        Ok(set)
    }

    /// The records: each position's labels, and its coefficients whole or
    /// as a difference ([`RunSet::is_whole`]).
    pub fn records(&self) -> &TraceSet {
        &self.records
    }

    /// The bitmap of whole records, bit `i % 64` of word `i / 64` for
    /// record `i` (no bit set past the last record).
    pub fn whole_words(&self) -> &[u64] {
        &self.whole
    }

    /// The coefficients the positions of each run have.
    pub fn run_coefficients(&self) -> &[u32] {
        &self.run_own
    }

    /// A hash of the records and how they are stored (for checking that a
    /// resumed run sees the same data).
    pub fn fingerprint(&self) -> u64 {
        let mut h = Hasher::new();
        h.write_u64(self.records.fingerprint());
        for &w in &self.whole {
            h.write_u64(w);
        }
        h.finish()
    }

    /// Moves the runs whose first position `p` has `take(p)` out of the
    /// set, in order, into the returned set (as they are stored).
    pub fn split_off_runs(&mut self, take: impl Fn(usize) -> bool) -> RunSet {
        let run_start = |i: usize| i / RUN_POSITIONS * RUN_POSITIONS;
        if !(0..self.runs()).any(|r| take(r * RUN_POSITIONS)) {
            return RunSet::default();
        }
        let n = self.len();
        let mut kept_words = vec![0u64; n.div_ceil(64)];
        let mut taken_words = vec![0u64; n.div_ceil(64)];
        let (mut kept, mut taken) = (0usize, 0usize);
        for i in 0..n {
            let (words, at) = if take(run_start(i)) {
                (&mut taken_words, &mut taken)
            } else {
                (&mut kept_words, &mut kept)
            };
            words[*at / 64] |= u64::from(self.is_whole(i)) << (*at % 64);
            *at += 1;
        }
        kept_words.truncate(kept.div_ceil(64));
        taken_words.truncate(taken.div_ceil(64));
        let records = self.records.split_off_where(|i| take(run_start(i)));
        self.whole = kept_words;
        let (mut kept_own, mut taken_own) = (Vec::new(), Vec::new());
        for (r, &own) in self.run_own.iter().enumerate() {
            if take(r * RUN_POSITIONS) {
                taken_own.push(own);
            } else {
                kept_own.push(own);
            }
        }
        self.run_own = kept_own;
        let moved = RunSet {
            stored: (0..records.len())
                .map(|i| stored_coefficients(&records.view(i)))
                .sum(),
            records,
            whole: taken_words,
            run_own: taken_own,
        };
        self.stored -= moved.stored;
        moved
    }

    /// The positions of `set`, in its order, every record whole (for
    /// positions that share little with their neighbours).
    pub fn whole(set: TraceSet) -> RunSet {
        let n = set.len();
        let mut whole = vec![u64::MAX; n.div_ceil(64)];
        if let Some(last) = whole.last_mut().filter(|_| !n.is_multiple_of(64)) {
            *last = (1 << (n % 64)) - 1;
        }
        let run_own: Vec<u32> = (0..n.div_ceil(RUN_POSITIONS))
            .map(|r| {
                (r * RUN_POSITIONS..((r + 1) * RUN_POSITIONS).min(n))
                    .map(|i| stored_coefficients(&set.view(i)) as u32)
                    .sum()
            })
            .collect();
        RunSet {
            stored: run_own.iter().map(|&c| c as usize).sum(),
            records: set,
            whole,
            run_own,
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
            let fits = difference(&next, &previous, &mut diff).is_some();
            if k % RUN_POSITIONS == 0 {
                out.run_own.push(0);
            }
            *out.run_own.last_mut().expect("a run") += next.len() as u32;
            if k % 64 == 0 {
                out.whole.push(0);
            }
            if k % RUN_POSITIONS == 0 || !fits || diff.len() >= next.len() {
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
    ///
    /// # Panics
    /// When a record does not decode, which runs made by
    /// [`RunSet::encode`] always do.
    pub fn decode(&self) -> TraceSet {
        self.try_decode().expect("runs that decode")
    }

    /// The positions with their own coefficients, taking the records
    /// without work when every one is whole.
    ///
    /// # Errors
    /// When a difference does not decode (a damaged record).
    pub fn into_whole(self) -> Result<TraceSet, DecodeError> {
        if self.is_all_whole() {
            Ok(self.records)
        } else {
            self.try_decode()
        }
    }

    /// As [`RunSet::decode`].
    ///
    /// # Errors
    /// When a difference does not decode (a damaged record).
    pub fn try_decode(&self) -> Result<TraceSet, DecodeError> {
        let mut out = TraceSet::with_capacity(self.len(), self.records.record_bytes());
        let (mut coefs, mut diff, mut next) = (Vec::new(), Vec::new(), Vec::new());
        // `coefs` holds position `i − 1`'s coefficients when it was a
        // difference; a whole record is copied as it is, and sorted only
        // when a difference follows it.
        for i in 0..self.len() {
            if self.is_whole(i) {
                out.push_record_of(&self.records, i);
                continue;
            }
            if self.is_whole(i - 1) {
                sorted_entries(&self.records.view(i - 1), &mut coefs);
            }
            let v = self.records.view(i);
            sorted_entries(&v, &mut diff);
            sum(&coefs, &diff, &mut next).ok_or(DecodeError { position: i })?;
            std::mem::swap(&mut coefs, &mut next);
            out.push_with_coefficients(&v, &mut coefs);
        }
        Ok(out)
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

    /// The share of their coefficients that the first `sample` positions
    /// store (a multiple of [`RUN_POSITIONS`] or more than there are; 1
    /// without coefficients).
    pub fn prefix_share(&self, sample: usize) -> f64 {
        let n = self.len().min(sample);
        let (stored, own) = if n == self.len() {
            self.coefficients()
        } else {
            let stored = (0..n)
                .map(|i| stored_coefficients(&self.records.view(i)))
                .sum();
            let own = self.run_own[..n.div_ceil(RUN_POSITIONS)]
                .iter()
                .map(|&c| c as usize)
                .sum();
            (stored, own)
        };
        if own == 0 {
            1.0
        } else {
            stored as f64 / own as f64
        }
    }

    /// Coefficients stored, and coefficients the positions have.
    pub fn coefficients(&self) -> (usize, usize) {
        (self.stored, self.run_own.iter().map(|&c| c as usize).sum())
    }

    /// Bytes of heap memory used.
    pub fn heap_bytes(&self) -> usize {
        self.records.heap_bytes() + self.whole.capacity() * 8 + self.run_own.capacity() * 4
    }
}

/// The share of coefficients that runs would store, of those whole
/// records store, over the first `sample` positions of `set` (1 for an
/// empty set).
pub fn stored_share(set: &TraceSet, sample: usize) -> f64 {
    RunSet::encode_range(set, 0..set.len().min(sample)).prefix_share(usize::MAX)
}

/// How a [`RunSetBuilder`] stores the records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Storage {
    /// Runs of differences ([`RunSet::encode`]).
    Differences,
    /// Whole records ([`RunSet::whole`]).
    Whole,
}

impl Storage {
    /// The storage of positions whose runs store this `share` of their
    /// coefficients.
    fn for_share(share: f64) -> Storage {
        if share <= CHAINED_SHARE {
            Storage::Differences
        } else {
            Storage::Whole
        }
    }
}

/// Builds a [`RunSet`] from positions given in order, a part at a time
/// (blocks of the trace cache as they are read), so that the whole records
/// of the set are never held beside its runs: at most a wave of
/// `WAVE_POSITIONS` positions and the part being given wait to be
/// encoded. The storage is chosen on the first
/// `LAYOUT_SAMPLE` positions: differences when they store at most
/// `CHAINED_SHARE` of the coefficients of whole records (positions of
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

    /// Appends the positions of `part`, already stored as runs (a block of
    /// the trace cache): taken as they are once the storage is chosen as
    /// differences, the positions given so far are whole runs and `part`
    /// holds differences (the encoder made them), else decoded and given as
    /// whole records.
    ///
    /// # Errors
    /// When `part` must be decoded and does not decode (a damaged record).
    pub fn push_runs(&mut self, part: RunSet) -> Result<(), DecodeError> {
        let encoded = !part.is_all_whole();
        if self.storage.is_none() && self.is_empty() && part.len() >= LAYOUT_SAMPLE {
            // As `choose` on the same positions: their runs are these, or
            // are made of them.
            let share = if encoded {
                part.prefix_share(LAYOUT_SAMPLE)
            } else {
                stored_share(&part.records, LAYOUT_SAMPLE)
            };
            self.storage = Some(Storage::for_share(share));
        }
        if self.storage == Some(Storage::Differences)
            && self.len().is_multiple_of(RUN_POSITIONS)
            && encoded
        {
            self.store(true);
            self.encoded.append(part);
        } else {
            self.push(part.into_whole()?);
        }
        Ok(())
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
        self.storage = Some(Storage::for_share(stored_share(
            &self.pending,
            LAYOUT_SAMPLE,
        )));
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
        difference(&a, &b, &mut d).unwrap();
        assert_eq!(d, vec![(0, -1), (1, 2), (9, -1), (12, 3), (13, 2)]);
        let mut back = Vec::new();
        sum(&b, &d, &mut back).unwrap();
        assert_eq!(back, a.to_vec());
        // Out of range either way.
        assert!(difference(&[(3, i16::MAX)], &[(3, -1)], &mut d).is_none());
        assert!(difference(&[(4, 1)], &[(3, i16::MIN)], &mut d).is_none());
        assert!(sum(&[(3, i16::MAX)], &[(3, 1)], &mut d).is_none());
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

    /// Runs appended after a whole number of runs that is not a whole
    /// number of bitmap words, and runs split off by their first position,
    /// are the runs of their positions.
    #[test]
    fn runs_append_and_split_as_their_positions() {
        let set = game_positions(30, 40);
        let n = set.len();
        let select =
            |range: &mut dyn Iterator<Item = usize>| set.select(&range.collect::<Vec<_>>());
        let all = RunSet::encode(&set);
        for cut in [16, 48, 80, 1008] {
            let mut a = RunSet::encode(&select(&mut (0..cut)));
            a.append(RunSet::encode(&select(&mut (cut..n))));
            assert_eq!(a, all, "cut at {cut}");
        }
        let take = |p: usize| (p / RUN_POSITIONS) % 3 == 1;
        let mut kept = all.clone();
        let taken = kept.split_off_runs(take);
        let of = |t: bool| RunSet::encode(&select(&mut (0..n).filter(|&i| take(i) == t)));
        assert_eq!(kept, of(false));
        assert_eq!(taken, of(true));
        assert!(kept.split_off_runs(|_| false).is_empty());
    }

    /// Parts that do not fit, and a difference that overflows a
    /// coefficient, are errors, not panics.
    #[test]
    fn damaged_runs_are_errors() {
        let set = game_positions(5, 40);
        let runs = RunSet::encode(&set);
        let (records, words, counts, stored) = (
            runs.records().clone(),
            runs.whole_words().to_vec(),
            runs.run_coefficients().to_vec(),
            runs.coefficients().0,
        );
        assert_eq!(
            RunSet::from_parts(records.clone(), words.clone(), counts.clone(), stored).unwrap(),
            runs
        );
        let mut differences_first = words.clone();
        differences_first[0] &= !(1 << RUN_POSITIONS);
        for (w, c) in [
            (differences_first, counts.clone()),
            (words[1..].to_vec(), counts.clone()),
            (words.clone(), counts[1..].to_vec()),
        ] {
            assert!(RunSet::from_parts(records.clone(), w, c, stored).is_err());
        }
        let v = set.view(0);
        let mut overflowing = TraceSet::new();
        overflowing.push_with_coefficients(&v, &mut vec![(5, 1)]);
        overflowing.push_with_coefficients(&v, &mut vec![(5, i16::MAX)]);
        let runs = RunSet::from_parts(overflowing, vec![1], vec![2], 2).unwrap();
        assert_eq!(runs.try_decode(), Err(DecodeError { position: 1 }));
        assert_eq!(runs.into_whole(), Err(DecodeError { position: 1 }));
    }
}
