//! The two kernels of an epoch over compact traces ([`crate::trace_set`]):
//! the evaluation of a position under continuous weights, and the
//! accumulation of the loss gradient; and the loops that drive them over a
//! chunk of positions.
//!
//! Weights are `f64` scalars in the engine's layout (`2 * entry` = mg,
//! `+ 1` = eg). The evaluation is the engine's taper *without* its final
//! integer truncation, and reads the king-danger table through its smooth
//! relaxation ([`engine::eval::danger::interpolate`]), so its gradient is exact in every
//! weight, the attack units included, and it differs from the engine's
//! `evaluate` by less than one centipawn for integer weights.
//!
//! What makes it fast:
//! * a position's coefficients are one symbol byte each, decoded by two
//!   table reads and an addition, fused with the weighted sums; the rare
//!   escaped counts are patched in afterwards;
//! * the relaxed king-danger table is a quintic polynomial on each interval
//!   between its elements: [`Kernel::new`] expands it once per set of
//!   weights, so a read is two Horner evaluations (value and slope) with no
//!   branch; a side without an attack reads it at counter 0;
//! * the gradient of the table elements is gathered as per-interval moments
//!   `Σ g·tᵖ` and turned into element gradients once per chunk;
//! * in-memory training reads runs of consecutive positions
//!   ([`crate::run_set`]): on self-play data most records hold only the
//!   coefficients that differ from the previous position's, the linear sums
//!   are carried along the run, and the backward pass gives each record the
//!   suffix sum of the gradient factors ([`Kernel::accumulate_runs`]);
//! * a batch of positions by index (the streamed cache's windows, the
//!   gradient check) may visit them in any order: a `Chunk` first reads
//!   where a group of positions is, then touches their records, so that
//!   the memory latencies of scattered positions overlap instead of adding
//!   up.

use engine::eval::danger::{FEATURES, MAX_COUNTER, TABLE, UNIT_ENTRY};
use engine::eval::{MAX_PHASE, NUM_ENTRIES, SCALE_NORMAL};

use crate::objective::Objective;
use crate::run_set::{RUN_POSITIONS, RunSet};
use crate::trace_set::{PositionView, SYMBOLS, TraceSet, read_large};

/// Intervals between the attack table's elements.
const INTERVALS: usize = MAX_COUNTER as usize;

/// The quintic Hermite basis on [0, 1] as polynomial coefficients
/// (`h[j](t) = Σ HERMITE[j][p]·tᵖ`): value, slope and curvature at 0, then
/// at 1 (the basis of [`engine::eval::danger::interpolate`]).
const HERMITE: [[f64; 6]; 6] = [
    [1.0, 0.0, 0.0, -10.0, 15.0, -6.0],
    [0.0, 1.0, 0.0, -6.0, 8.0, -3.0],
    [0.0, 0.0, 0.5, -1.5, 1.5, -0.5],
    [0.0, 0.0, 0.0, 10.0, -15.0, 6.0],
    [0.0, 0.0, 0.0, -4.0, 7.0, -3.0],
    [0.0, 0.0, 0.0, 0.5, -1.0, 0.5],
];

/// `Σ factor[j]·HERMITE[j]` over the six basis polynomials.
const fn combine(factor: [f64; 6]) -> [f64; 6] {
    let mut out = [0.0; 6];
    let mut j = 0;
    while j < 6 {
        let mut p = 0;
        while p < 6 {
            out[p] += factor[j] * HERMITE[j][p];
            p += 1;
        }
        j += 1;
    }
    out
}

/// On interval `i` (counter in `[i, i+1]`, `t = counter − i`): the table
/// elements the relaxed value depends on, and the value's derivative in
/// each as a polynomial in `t` (as in [`engine::eval::danger::interpolate`]: inner knots
/// have central-difference slopes and second-difference curvatures, the
/// first and last knot none).
const fn interval(i: usize) -> ([usize; 4], [[f64; 6]; 4]) {
    let last = MAX_COUNTER as usize;
    let a = if i >= 1 { 1.0 } else { 0.0 };
    let b = if i + 1 < last { 1.0 } else { 0.0 };
    let index = [
        i.saturating_sub(1),
        i,
        i + 1,
        if i + 2 < last { i + 2 } else { last },
    ];
    let weights = [
        combine([0.0, -0.5 * a, a, 0.0, 0.0, 0.0]),
        combine([1.0, 0.0, -2.0 * a, 0.0, -0.5 * b, b]),
        combine([0.0, 0.5 * a, a, 1.0, 0.0, -2.0 * b]),
        combine([0.0, 0.0, 0.0, 0.0, 0.5 * b, b]),
    ];
    (index, weights)
}

/// [`interval`] of every interval.
const INTERVAL: [([usize; 4], [[f64; 6]; 4]); INTERVALS] = {
    let mut out = [([0; 4], [[0.0; 6]; 4]); INTERVALS];
    let mut i = 0;
    while i < INTERVALS {
        out[i] = interval(i);
        i += 1;
    }
    out
};

/// By symbol: how far it moves the entry, in bytes of a [`Pairs`] table
/// (the entry difference × 16), so that a decoded position addresses the
/// tables without a shift.
const STEP: [u32; 256] = {
    let mut out = [0; 256];
    let mut b = 0;
    while b < 256 {
        out[b] = SYMBOLS[b].delta as u32 * PAIR_BYTES;
        b += 1;
    }
    out
};

/// By symbol: its count (0 for a jump).
const COEF: [f64; 256] = {
    let mut out = [0.0; 256];
    let mut b = 0;
    while b < 256 {
        out[b] = SYMBOLS[b].coef as f64;
        b += 1;
    }
    out
};

/// Bytes of one `(mg, eg)` pair.
const PAIR_BYTES: u32 = 16;

/// The pair of a [`Pairs`] table at byte offset `off` (masked into the
/// table, so that no bounds check is needed).
#[inline(always)]
fn slot(off: u32) -> usize {
    (off as usize & (MASK << 4)) >> 4
}

/// An `(mg, eg)` pair per entry slot, aligned so that a pair is one
/// aligned 16-byte access.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
struct Pairs([[f64; 2]; SLOTS]);

impl Pairs {
    fn zero() -> Box<Pairs> {
        Box::new(Pairs([[0.0; 2]; SLOTS]))
    }
}

/// By phase (0 … 24): d eval / d mg-sum, and d eval / d eg-sum per unit of
/// endgame scale.
const PHASE_FACTORS: [[f64; 2]; MAX_PHASE as usize + 1] = {
    let mut out = [[0.0; 2]; MAX_PHASE as usize + 1];
    let max = MAX_PHASE as f64;
    let mut p = 0;
    while p <= MAX_PHASE as usize {
        out[p] = [p as f64 / max, (max - p as f64) / max / SCALE_NORMAL as f64];
        p += 1;
    }
    out
};

/// One side's king-danger counts at the start of `bytes` (a mask of the
/// nonzero features, then their counts): `(feature, count)` of each, and
/// the bytes after them.
#[inline(always)]
fn danger_counts(bytes: &[u8]) -> (impl Iterator<Item = (usize, f64)> + '_, &[u8]) {
    let mask = bytes[0];
    let (counts, rest) = bytes[1..].split_at(mask.count_ones() as usize);
    let mut bits = mask;
    let pairs = counts.iter().map(move |&n| {
        let k = bits.trailing_zeros() as usize;
        bits &= bits.wrapping_sub(1);
        (k % FEATURES, n as f64)
    });
    (pairs, rest)
}

/// Decodes `symbols` into their entries (as byte offsets, see [`slot`]),
/// and returns their `(mg, eg)` sums under `pairs`.
///
/// Not inlined: on its own, the loop keeps everything in registers.
#[inline(never)]
fn decode_symbols(symbols: &[u8], offs: &mut [u32], pairs: &Pairs) -> [f64; 2] {
    // Two independent (mg, eg) sums, two symbols per step.
    let (mut a0, mut a1) = ([0.0f64; 2], [0.0f64; 2]);
    // The entry before the first (−1), in bytes.
    let mut off = u32::MAX.wrapping_mul(PAIR_BYTES);
    let mut decode = |b: u8, o: &mut u32| -> [f64; 2] {
        off = off.wrapping_add(STEP[b as usize]);
        *o = off;
        let (w, c) = (pairs.0[slot(off)], COEF[b as usize]);
        [w[0] * c, w[1] * c]
    };
    let mut twos = symbols.chunks_exact(2);
    let mut slots = offs.chunks_exact_mut(2);
    for (b, o) in (&mut twos).zip(&mut slots) {
        let w0 = decode(b[0], &mut o[0]);
        let w1 = decode(b[1], &mut o[1]);
        a0 = [a0[0] + w0[0], a0[1] + w0[1]];
        a1 = [a1[0] + w1[0], a1[1] + w1[1]];
    }
    if let ([b], Some(o)) = (twos.remainder(), offs.last_mut()) {
        let w = decode(*b, o);
        a0 = [a0[0] + w[0], a0[1] + w[1]];
    }
    [a0[0] + a1[0], a0[1] + a1[1]]
}

/// Adds `g` × count to the `(mg, eg)` gradient of the entry of every
/// symbol (at the byte offsets `offs`, see [`slot`]); a jump adds 0.
///
/// Not inlined, as [`decode_symbols`].
#[inline(never)]
fn scatter(symbols: &[u8], offs: &[u32], g: [f64; 2], grad: &mut Pairs) {
    for (&b, &o) in symbols.iter().zip(offs) {
        let c = COEF[b as usize];
        let p = &mut grad.0[slot(o)];
        *p = [p[0] + g[0] * c, p[1] + g[1] * c];
    }
}

/// Adds `g` × count to the `(mg, eg)` gradient of every coefficient of
/// `v`, which [`Kernel::linear`] left in `scratch` at `at`.
#[inline(always)]
fn scatter_linear(v: &PositionView, scratch: &Scratch, at: At, g: [f64; 2], grad: &mut Pairs) {
    let n = v.symbols.len();
    scatter(
        v.symbols,
        &scratch.offs[at.symbols..at.symbols + n],
        g,
        grad,
    );
    let m = v.large_count;
    for (&o, &c) in scratch.large_offs[at.large..at.large + m]
        .iter()
        .zip(&scratch.large_coefs[at.large..at.large + m])
    {
        let p = &mut grad.0[slot(o)];
        *p = [p[0] + g[0] * c, p[1] + g[1] * c];
    }
}

/// Adds the king-danger part of the gradient of `v` (evaluated as `e`)
/// times `g`, the `(mg, eg)` factors of d loss / d eval.
#[inline(always)]
fn add_danger_gradient(v: &PositionView, g: [f64; 2], e: &Evaluation, acc: &mut Accumulator) {
    let mut danger = v.danger;
    for (side, read) in e.reads.iter().enumerate() {
        let g = [g[0] * SIDE_SIGN[side], g[1] * SIDE_SIGN[side]];
        let Some(reads) = read else {
            acc.first = [acc.first[0] + g[0], acc.first[1] + g[1]];
            continue;
        };
        for (phase, r) in reads.iter().enumerate() {
            let t = r.t;
            let (t2, t3) = (t * t, t * t * t);
            let powers = [1.0, t, t2, t3, t2 * t2, t2 * t3];
            let m = &mut acc.moments[phase][r.interval];
            for q in 0..6 {
                m[q] += g[phase] * powers[q];
            }
        }
        let s = [g[0] * reads[0].slope, g[1] * reads[1].slope];
        let (counts, rest) = danger_counts(danger);
        danger = rest;
        for (k, n) in counts {
            let u = &mut acc.units[k];
            *u = [u[0] + s[0] * n, u[1] + s[1] * n];
        }
    }
}

/// White's and Black's sign in the White-relative sums.
const SIDE_SIGN: [f64; 2] = [1.0, -1.0];

/// Room for the entries and for a position's symbols: a power of two
/// above the number of entries (a valid record has at most one symbol per
/// entry, as every symbol moves to a later entry), so that indices masked
/// with `SLOTS - 1` need no bounds check.
const SLOTS: usize = NUM_ENTRIES.next_power_of_two();
const MASK: usize = SLOTS - 1;
const _: () = assert!(NUM_ENTRIES < SLOTS);

/// The weights of one pass, with the king-danger table expanded.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// `(mg, eg)` by entry (0 past the last one).
    pairs: Box<Pairs>,
    /// By phase (mg, eg) and interval: the relaxed table's value as a
    /// polynomial in `t` (6 coefficients), then its slope (5), then 0.
    poly: Box<[[[f64; 12]; INTERVALS]; 2]>,
    /// `(mg, eg)` attack units by feature.
    units: [[f64; 2]; FEATURES],
    /// `(mg, eg)` of the table's first element (a side without attack).
    first: [f64; 2],
}

/// One relaxed table read.
#[derive(Clone, Copy, Debug, Default)]
struct Read {
    /// The interval.
    interval: usize,
    /// Position in it (0 … 1).
    t: f64,
    /// d value / d counter.
    slope: f64,
}

/// What the gradient of a position needs from its evaluation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Evaluation {
    /// The White-relative evaluation.
    pub value: f64,
    /// d eval / d mg-sum and d eval / d eg-sum.
    factors: [f64; 2],
    /// By side (White, Black) and phase: the table reads (`None`: no
    /// attack, the table's first element).
    reads: [Option<[Read; 2]>; 2],
}

/// The coefficients of positions as [`Kernel::evaluate`] decodes them for
/// [`Kernel::add_gradient`], one position's after another's (buffers
/// reused across positions; they grow to the longest run's needs).
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    /// The symbols' entries as byte offsets (see [`slot`]).
    offs: Vec<u32>,
    /// The large coefficients' entries as byte offsets.
    large_offs: Vec<u32>,
    /// The large coefficients' counts.
    large_coefs: Vec<f64>,
}

/// Where a position's coefficients are in a [`Scratch`].
#[derive(Clone, Copy, Debug, Default)]
struct At {
    /// The first symbol's entry.
    symbols: usize,
    /// The first large coefficient.
    large: usize,
}

impl At {
    /// Where the position after `v` (at `self`) goes.
    #[inline(always)]
    fn after(self, v: &PositionView) -> At {
        At {
            symbols: self.symbols + v.symbols.len(),
            large: self.large + v.large_count,
        }
    }
}

/// The gradient sums of a chunk of positions.
#[derive(Clone, Debug)]
pub struct Accumulator {
    /// Summed loss.
    pub loss: f64,
    /// Number of weights.
    dims: usize,
    /// `(mg, eg)` d loss / d weight of the linear entries (the king-danger
    /// table and units are added by [`Accumulator::finish`]).
    grad: Box<Pairs>,
    /// By phase and interval: `Σ g·tᵖ` of the table reads.
    moments: Box<[[[f64; 6]; INTERVALS]; 2]>,
    /// `(mg, eg)` gradient of the attack units by feature.
    units: [[f64; 2]; FEATURES],
    /// `(mg, eg)` gradient of the table's first element from the sides
    /// without attack.
    first: [f64; 2],
}

impl Accumulator {
    /// Empty sums for `dims` weights.
    pub fn new(dims: usize) -> Self {
        Accumulator {
            loss: 0.0,
            dims,
            grad: Pairs::zero(),
            moments: Box::new([[[0.0; 6]; INTERVALS]; 2]),
            units: [[0.0; 2]; FEATURES],
            first: [0.0; 2],
        }
    }

    /// The summed loss and gradient.
    pub fn finish(self) -> (f64, Vec<f64>) {
        let mut grad: Vec<f64> = self.grad.0.as_flattened()[..self.dims].to_vec();
        for (phase, moments) in self.moments.iter().enumerate() {
            for (m, (index, weights)) in moments.iter().zip(&INTERVAL) {
                for (&j, w) in index.iter().zip(weights) {
                    let g: f64 = m.iter().zip(w).map(|(a, b)| a * b).sum();
                    grad[2 * TABLE.at(j) + phase] += g;
                }
            }
        }
        grad[2 * TABLE.at(0)] += self.first[0];
        grad[2 * TABLE.at(0) + 1] += self.first[1];
        for (k, u) in self.units.iter().enumerate() {
            grad[2 * UNIT_ENTRY[k]] += u[0];
            grad[2 * UNIT_ENTRY[k] + 1] += u[1];
        }
        (self.loss, grad)
    }
}

/// 2⁵²: whole numbers below it are the low bits of `2⁵² + x`.
const TWO_52: f64 = 4_503_599_627_370_496.0;

/// Horner's rule over `c[..N]`.
#[inline(always)]
fn horner<const N: usize>(c: &[f64], t: f64) -> f64 {
    let mut v = c[N - 1];
    for p in (0..N - 1).rev() {
        v = v * t + c[p];
    }
    v
}

impl Kernel {
    /// The kernel of `weights` (the engine's scalar layout).
    pub fn new(weights: &[f64]) -> Self {
        let pairs = weights.as_chunks::<2>().0;
        assert_eq!(pairs.len(), NUM_ENTRIES, "one (mg, eg) pair per entry");
        let mut padded = Pairs::zero();
        padded.0[..NUM_ENTRIES].copy_from_slice(pairs);
        let mut poly = Box::new([[[0.0; 12]; INTERVALS]; 2]);
        for (phase, by_interval) in poly.iter_mut().enumerate() {
            for (p, (index, w)) in by_interval.iter_mut().zip(&INTERVAL) {
                for (&j, wj) in index.iter().zip(w) {
                    let v = pairs[TABLE.at(j)][phase];
                    for q in 0..6 {
                        p[q] += wj[q] * v;
                    }
                }
                for q in 1..6 {
                    p[5 + q] = q as f64 * p[q];
                }
            }
        }
        let units = std::array::from_fn(|k| pairs[UNIT_ENTRY[k]]);
        Kernel {
            pairs: padded,
            poly,
            units,
            first: pairs[TABLE.at(0)],
        }
    }

    /// The relaxed table of `phase` at counter `c` (flat beyond both ends).
    #[inline(always)]
    fn read(&self, phase: usize, c: f64) -> (f64, Read) {
        let c = c.max(0.0).min(MAX_COUNTER as f64);
        // The interval's start: a small whole number, converted through
        // the mantissa of 2⁵² + start (`as usize` would saturate, in more
        // instructions).
        let start = c.floor().min((INTERVALS - 1) as f64);
        let interval = ((start + TWO_52).to_bits() as usize & 0xffff).min(INTERVALS - 1);
        let t = c - start;
        let p = &self.poly[phase][interval];
        let value = horner::<6>(&p[..6], t);
        let slope = horner::<5>(&p[6..11], t);
        (value, Read { interval, t, slope })
    }

    /// The evaluation of `v`; its coefficients are left in `scratch`.
    #[inline(always)]
    pub fn evaluate(&self, v: &PositionView, scratch: &mut Scratch) -> Evaluation {
        let linear = self.linear(v, scratch, At::default());
        self.complete(v, linear)
    }

    /// The `(mg, eg)` sums of the coefficients of `v` under the weights;
    /// the coefficients are left in `scratch` at `at`.
    #[inline(always)]
    fn linear(&self, v: &PositionView, scratch: &mut Scratch, at: At) -> [f64; 2] {
        let (n, m) = (v.symbols.len(), v.large_count);
        assert!(
            n <= SLOTS && m <= SLOTS,
            "a valid record has fewer symbols and fewer large coefficients than entries"
        );
        let end = at.after(v);
        if scratch.offs.len() < end.symbols {
            scratch.offs.resize(end.symbols + SLOTS, 0);
        }
        if scratch.large_offs.len() < end.large {
            scratch.large_offs.resize(end.large + SLOTS, 0);
            scratch.large_coefs.resize(end.large + SLOTS, 0.0);
        }
        let pairs = &*self.pairs;
        let [mut mg, mut eg] =
            decode_symbols(v.symbols, &mut scratch.offs[at.symbols..end.symbols], pairs);
        let mut large = v.large.iter();
        let large_coefs = &mut scratch.large_coefs[at.large..end.large];
        for (e, c) in scratch.large_offs[at.large..end.large]
            .iter_mut()
            .zip(large_coefs)
        {
            let (entry, coef) = read_large(&mut large).unwrap_or((0, 0));
            *e = u32::from(entry).wrapping_mul(PAIR_BYTES);
            *c = coef as f64;
            let w = pairs.0[slot(*e)];
            mg += w[0] * *c;
            eg += w[1] * *c;
        }
        [mg, eg]
    }

    /// The evaluation of `v` whose coefficients sum to `linear`: the king
    /// danger, the endgame scale and the taper added.
    #[inline(always)]
    fn complete(&self, v: &PositionView, [mut mg, mut eg]: [f64; 2]) -> Evaluation {
        let mut reads = [None; 2];
        let mut danger = v.danger;
        for (side, read) in reads.iter_mut().enumerate() {
            let (vm, ve) = if v.danger_sides & 1 << side == 0 {
                (self.first[0], self.first[1])
            } else {
                let (counts, rest) = danger_counts(danger);
                danger = rest;
                let mut c = [0.0; 2];
                for (k, n) in counts {
                    let u = self.units[k];
                    c = [c[0] + u[0] * n, c[1] + u[1] * n];
                }
                let (vm, rm) = self.read(0, c[0]);
                let (ve, re) = self.read(1, c[1]);
                *read = Some([rm, re]);
                (vm, ve)
            };
            mg += SIDE_SIGN[side] * vm;
            eg += SIDE_SIGN[side] * ve;
        }
        let scale = if eg > 0.0 {
            v.scale_white
        } else {
            v.scale_black
        };
        let phase = PHASE_FACTORS[v.phase as usize % PHASE_FACTORS.len()];
        let factors = [phase[0], phase[1] * scale as f64];
        Evaluation {
            value: mg * factors[0] + eg * factors[1],
            factors,
            reads,
        }
    }

    /// Adds `d_loss_d_eval` × d eval / d weight of `v`, which
    /// [`Kernel::evaluate`] evaluated and left in `scratch`, into `acc`.
    #[inline(always)]
    pub fn add_gradient(
        &self,
        v: &PositionView,
        d_loss_d_eval: f64,
        e: &Evaluation,
        scratch: &Scratch,
        acc: &mut Accumulator,
    ) {
        let g = [d_loss_d_eval * e.factors[0], d_loss_d_eval * e.factors[1]];
        scatter_linear(v, scratch, At::default(), g, &mut acc.grad);
        add_danger_gradient(v, g, e, acc);
    }

    /// The summed loss of the positions `range` of `set`, in order.
    pub fn loss_sum(
        &self,
        set: &TraceSet,
        range: std::ops::Range<usize>,
        objective: &Objective,
    ) -> f64 {
        let mut scratch = Scratch::default();
        let mut sum = 0.0;
        for i in range {
            let v = set.view(i);
            let e = self.evaluate(&v, &mut scratch);
            sum += objective.loss(e.value, &v).0;
        }
        sum
    }

    /// The summed loss and gradient of the positions `indices` of `set`
    /// (any order), added to `acc`.
    pub fn accumulate(
        &self,
        set: &TraceSet,
        indices: &[u32],
        objective: &Objective,
        acc: &mut Accumulator,
    ) {
        let mut scratch = Scratch::default();
        let mut chunk = Chunk::default();
        for group in indices.chunks(GROUP) {
            chunk.load(set, group);
            for &at in &chunk.at[..group.len()] {
                let v = set.view_at(at);
                let e = self.evaluate(&v, &mut scratch);
                let (l, d) = objective.loss(e.value, &v);
                acc.loss += l;
                self.add_gradient(&v, d, &e, &scratch, acc);
            }
        }
    }

    /// The summed loss of the positions `range` of `set` (whole runs), in
    /// order: the linear sums carried along each run.
    pub fn loss_sum_runs(
        &self,
        set: &RunSet,
        runs: std::ops::Range<usize>,
        objective: &Objective,
    ) -> f64 {
        let mut scratch = Scratch::default();
        let mut sum = 0.0;
        for r in runs {
            let mut linear = [0.0; 2];
            for i in set.run_range(r) {
                let v = set.view(i);
                if set.is_whole(i) {
                    linear = [0.0; 2];
                }
                let l = self.linear(&v, &mut scratch, At::default());
                linear = [linear[0] + l[0], linear[1] + l[1]];
                sum += objective.loss(self.complete(&v, linear).value, &v).0;
            }
        }
        sum
    }

    /// The summed loss and gradient of the runs `runs` of `set` (any
    /// order), added to `acc`.
    ///
    /// A run is cut into *chains*: a whole record and the differences
    /// after it. Each chain is evaluated forward, carrying the linear sums
    /// from record to record, then walked backward: a record's coefficients
    /// (whole or differences) take the suffix sum of the gradient factors
    /// from its position to the end of the chain (see [`crate::run_set`]).
    /// A chain of one position (every one, in data that share nothing) is
    /// a position's gradient as in [`Kernel::accumulate`].
    pub fn accumulate_runs(
        &self,
        set: &RunSet,
        runs: &[u32],
        objective: &Objective,
        acc: &mut Accumulator,
    ) {
        let mut scratch = Scratch::default();
        let mut chain = [(Evaluation::default(), 0.0, At::default()); RUN_POSITIONS];
        for &r in runs {
            let range = set.run_range(r as usize);
            let mut linear = [0.0; 2];
            let (mut first, mut at) = (range.start, At::default());
            for i in range.clone() {
                let v = set.view(i);
                let whole = set.is_whole(i);
                if whole {
                    linear = [0.0; 2];
                }
                let l = self.linear(&v, &mut scratch, at);
                linear = [linear[0] + l[0], linear[1] + l[1]];
                let e = self.complete(&v, linear);
                let (loss, d) = objective.loss(e.value, &v);
                acc.loss += loss;
                let ends = i + 1 == range.end || set.is_whole(i + 1);
                if whole && ends {
                    let g = [d * e.factors[0], d * e.factors[1]];
                    scatter_linear(&v, &scratch, at, g, &mut acc.grad);
                    add_danger_gradient(&v, g, &e, acc);
                    first = i + 1;
                    continue;
                }
                chain[i - first] = (e, d, at);
                at = at.after(&v);
                if !ends {
                    continue;
                }
                let mut suffix = [0.0; 2];
                for (j, (e, d, at)) in (first..i + 1).zip(&chain[..i + 1 - first]).rev() {
                    let v = set.view(j);
                    let g = [d * e.factors[0], d * e.factors[1]];
                    suffix = [suffix[0] + g[0], suffix[1] + g[1]];
                    scatter_linear(&v, &scratch, *at, suffix, &mut acc.grad);
                    add_danger_gradient(&v, g, e, acc);
                }
                (first, at) = (i + 1, At::default());
            }
        }
    }
}

/// Positions whose records are brought into the cache together.
const GROUP: usize = 64;

/// Where the records of a group of positions are, read ahead of their
/// evaluation.
#[derive(Clone, Debug)]
struct Chunk {
    at: [usize; GROUP],
}

impl Default for Chunk {
    fn default() -> Self {
        Chunk { at: [0; GROUP] }
    }
}

impl Chunk {
    /// Finds the records of `group` and touches their first and last bytes:
    /// independent loads, so that their cache misses overlap (a position
    /// read at random misses the cache twice, for its start and for its
    /// record).
    #[inline(always)]
    fn load(&mut self, set: &TraceSet, group: &[u32]) {
        let mut ends = [0usize; GROUP];
        for ((at, end), &i) in self.at.iter_mut().zip(&mut ends).zip(group) {
            let r = set.record_range(i as usize);
            (*at, *end) = (r.start, r.end);
        }
        let bytes = set.record_bytes_slice();
        let mut touched = 0u8;
        for (&at, &end) in self.at.iter().zip(&ends).take(group.len()) {
            touched ^= bytes[at] ^ bytes[end.max(at + 1) - 1];
        }
        std::hint::black_box(touched);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::eval::{Params, danger, trace};

    use crate::objective::ObjectiveKind;

    use crate::test_data::positions;

    /// Bumpy weights with a nonzero attack table and fractional units.
    fn weights() -> Vec<f64> {
        let mut w: Vec<f64> = (0..2 * NUM_ENTRIES)
            .map(|i| (i % 17) as f64 - 8.0 + (i % 5) as f64 * 0.37)
            .collect();
        for j in 0..TABLE.len {
            w[2 * TABLE.at(j)] = (j * j) as f64 * 0.9 - 3.0 * (j % 7) as f64;
            w[2 * TABLE.at(j) + 1] = 5.0 * j as f64 + (j % 3) as f64;
        }
        for (k, &e) in UNIT_ENTRY.iter().enumerate() {
            w[2 * e] = 1.3 + k as f64 * 0.61;
            w[2 * e + 1] = 0.7 + k as f64 * 0.29;
        }
        w
    }

    #[test]
    fn the_expanded_table_is_the_relaxation() {
        let w = weights();
        let kernel = Kernel::new(&w);
        for phase in 0..2 {
            let table = |j: usize| w[2 * TABLE.at(j) + phase];
            for step in -40..=(MAX_COUNTER * 8 + 40) {
                let c = step as f64 / 8.0 + 0.013 * (step % 3) as f64;
                let want = danger::interpolate(table, c);
                let (value, read) = kernel.read(phase, c);
                assert!((value - want.value).abs() < 1e-9, "{phase} {c}");
                assert!((read.slope - want.slope).abs() < 1e-9, "{phase} {c}");
                // The element weights, from the interval's polynomials.
                let (index, weights) = &INTERVAL[read.interval];
                let mut got = vec![0.0; TABLE.len];
                for (&j, poly) in index.iter().zip(weights) {
                    got[j] += horner::<6>(poly, read.t);
                }
                let mut expected = vec![0.0; TABLE.len];
                for (&j, &x) in want.index.iter().zip(&want.weight) {
                    expected[j] += x;
                }
                for j in 0..TABLE.len {
                    assert!((got[j] - expected[j]).abs() < 1e-12, "{phase} {c} {j}");
                }
            }
        }
    }

    #[test]
    fn the_kernels_match_the_engine_trace() {
        let mut set = TraceSet::new();
        let positions = positions(300);
        for (pos, result) in &positions {
            set.push_position(pos, *result, None);
        }
        let objective = Objective {
            kind: ObjectiveKind::Mse,
            k: 1.0,
            lambda: 1.0,
            draw_margin: 0.5,
        };
        // Integer weights: the engine's evaluation (White's view), up to
        // its truncation.
        let params = Params::defaults();
        let w: Vec<f64> = params.to_scalars().iter().map(|&x| x as f64).collect();
        let kernel = Kernel::new(&w);
        let mut scratch = Scratch::default();
        for (i, (pos, _)) in positions.iter().enumerate() {
            let t = trace(pos);
            let white = match t.turn {
                shakmaty::Color::White => 1.0,
                shakmaty::Color::Black => -1.0,
            };
            let e = kernel.evaluate(&set.view(i), &mut scratch);
            let engine = white * t.evaluate(&params) as f64;
            assert!((e.value - engine).abs() < 1.0, "{i}: {} {engine}", e.value);
        }
        // Any weights: the gradient is the engine trace's exact gradient
        // (side to move's view) times d loss / d eval.
        let w = weights();
        let kernel = Kernel::new(&w);
        let rounded =
            Params::from_scalars(&w.iter().map(|&x| x.round() as i32).collect::<Vec<_>>());
        let kernel_rounded_w: Vec<f64> = rounded.to_scalars().iter().map(|&x| x as f64).collect();
        let kernel_rounded = Kernel::new(&kernel_rounded_w);
        for (i, (pos, _)) in positions.iter().enumerate() {
            let t = trace(pos);
            let white = match t.turn {
                shakmaty::Color::White => 1.0,
                shakmaty::Color::Black => -1.0,
            };
            let v = set.view(i);
            let e = kernel_rounded.evaluate(&v, &mut scratch);
            let mut acc = Accumulator::new(w.len());
            kernel_rounded.add_gradient(&v, 1.0, &e, &scratch, &mut acc);
            let (_, grad) = acc.finish();
            let mut want = vec![0.0; w.len()];
            for (p, d) in t.gradient(&rounded) {
                want[p] += white * d;
            }
            for p in 0..w.len() {
                assert!(
                    (grad[p] - want[p]).abs() < 1e-9 * (1.0 + want[p].abs()),
                    "position {i} scalar {p}: {} {}",
                    grad[p],
                    want[p]
                );
            }
            // The chunk loop sums the same.
            let mut acc = Accumulator::new(w.len());
            kernel.accumulate(&set, &[i as u32], &objective, &mut acc);
            let e = kernel.evaluate(&v, &mut scratch);
            let (l, d) = objective.loss(e.value, &v);
            let mut one = Accumulator::new(w.len());
            one.loss += l;
            kernel.add_gradient(&v, d, &e, &scratch, &mut one);
            assert_eq!(acc.finish(), one.finish());
        }
    }

    /// Runs of differences give the loss and gradient of the whole
    /// records, up to rounding, in any order of the runs.
    #[test]
    fn runs_sum_what_whole_records_sum() {
        let set = crate::test_data::game_positions(30, 37);
        let runs = RunSet::encode(&set);
        let (stored, own) = runs.coefficients();
        assert!(
            stored * 2 < own,
            "the data share coefficients: {stored} of {own}"
        );
        let w = weights();
        let kernel = Kernel::new(&w);
        for kind in [
            ObjectiveKind::Mse,
            ObjectiveKind::Log,
            ObjectiveKind::Ordinal,
        ] {
            let objective = Objective {
                kind,
                k: 1.3,
                lambda: 1.0,
                draw_margin: 0.4,
            };
            let all: Vec<u32> = (0..set.len() as u32).collect();
            let mut whole = Accumulator::new(w.len());
            kernel.accumulate(&set, &all, &objective, &mut whole);
            let order: Vec<u32> = (0..runs.runs() as u32).rev().collect();
            let mut chained = Accumulator::new(w.len());
            kernel.accumulate_runs(&runs, &order, &objective, &mut chained);
            let loss_runs = kernel.loss_sum_runs(&runs, 0..runs.runs(), &objective);
            let (la, ga) = whole.finish();
            let (lb, gb) = chained.finish();
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * (1.0 + a.abs());
            assert!(
                close(la, lb) && close(la, loss_runs),
                "{la} {lb} {loss_runs}"
            );
            assert!(ga.iter().any(|&g| g != 0.0));
            for (p, (a, b)) in ga.iter().zip(&gb).enumerate() {
                assert!(close(*a, *b), "{kind:?} scalar {p}: {a} {b}");
            }
        }
    }
}
