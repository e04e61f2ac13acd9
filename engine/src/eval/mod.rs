//! The tunable static evaluation: one source of truth for play and tuning.
//!
//! * [`schema`] declares every weight once (name, length, group, bounds);
//!   `params.rs` (generated, never edited by hand) holds the compiled
//!   defaults; [`codegen`] writes `params.rs`; the human-readable text form
//!   is [`crate::formats::params_file`].
//! * [`terms`] computes every feature once, generic over an [`Accumulator`].
//!   [`evaluate`] runs it with a weight-summing accumulator; [`trace`] runs
//!   it with a recording one and returns the exact sparse coefficients
//!   ([`Trace`]), from which [`Trace::evaluate`] and [`Trace::gradient`] give
//!   the evaluation and its exact gradient for *any* weights. Every term is
//!   linear in its weights except king danger ([`danger`]), a table looked
//!   up at a weighted counter: the trace records its counts per side.
//!
//! Invariant: for every legal position and every `Params`,
//! `trace(pos).evaluate(params) == evaluate(pos, params)`, bit for bit.

pub mod codegen;
pub mod danger;
pub mod params;
pub mod pawn_king;
pub mod schema;
pub mod terms;

use shakmaty::{Chess, Color, Position};

pub use danger::DangerCounts;
pub use pawn_king::{PawnKingCache, PawnKingKey};
pub use schema::{BLOCKS, Block, BlockInfo, Group, Layout, NUM_ENTRIES};
pub use terms::{MAX_PHASE, SCALE_NORMAL, TaperInfo};

/// A middlegame/endgame pair of centipawn values: one entry of the
/// evaluation's weights.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct S {
    /// Middlegame value.
    pub mg: i32,
    /// Endgame value.
    pub eg: i32,
}

impl S {
    /// Both phases zero.
    pub const ZERO: S = S { mg: 0, eg: 0 };
}

/// Shorthand constructor used by the generated `params.rs`.
pub const fn s(mg: i32, eg: i32) -> S {
    S { mg, eg }
}

/// Which half of an entry a scalar parameter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The middlegame value (`.mg`).
    Mg,
    /// The endgame value (`.eg`).
    Eg,
}

/// All weights of the evaluation, as a flat array of entries laid out by
/// [`schema`]. Scalar parameter `i` is entry `i / 2`, phase `i % 2`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// The entries, indexed by the [`schema::blocks`] constants.
    pub entries: [S; NUM_ENTRIES],
}

/// The compiled default weights (from the generated `params.rs`).
pub const DEFAULT_PARAMS: Params = Params {
    entries: schema::compiled_defaults(),
};

impl Default for Params {
    fn default() -> Self {
        DEFAULT_PARAMS
    }
}

impl Params {
    /// Number of scalar parameters (two per entry).
    pub const NUM_SCALARS: usize = 2 * NUM_ENTRIES;

    /// The compiled default weights.
    pub fn defaults() -> Self {
        DEFAULT_PARAMS
    }

    /// Scalar parameter `i` (see [`Params`] for the layout).
    pub fn scalar(&self, i: usize) -> i32 {
        let e = &self.entries[i / 2];
        if i.is_multiple_of(2) { e.mg } else { e.eg }
    }

    /// Sets scalar parameter `i`.
    pub fn set_scalar(&mut self, i: usize, value: i32) {
        let e = &mut self.entries[i / 2];
        if i.is_multiple_of(2) {
            e.mg = value
        } else {
            e.eg = value
        }
    }

    /// All scalars in index order.
    pub fn to_scalars(&self) -> Vec<i32> {
        (0..Self::NUM_SCALARS).map(|i| self.scalar(i)).collect()
    }

    /// Builds weights from scalars in index order.
    ///
    /// # Panics
    /// When `values.len()` is not [`Params::NUM_SCALARS`].
    pub fn from_scalars(values: &[i32]) -> Self {
        assert_eq!(values.len(), Self::NUM_SCALARS);
        let mut p = DEFAULT_PARAMS;
        for (i, v) in values.iter().enumerate() {
            p.set_scalar(i, *v);
        }
        p
    }
}

/// Receives the features of a position: entry `entry` applies `coef` times
/// (positive favours White). The evaluation terms are generic over it.
pub trait Accumulator {
    /// Records `coef` occurrences of entry `entry`.
    fn add(&mut self, entry: usize, coef: i32);

    /// Records the king-danger term of `color`'s attack on the enemy king
    /// (see [`danger`]): it counts for `color`.
    fn king_danger(&mut self, color: Color, counts: &DangerCounts);

    /// Records the terms `terms` adds, which depend only on the pawns and
    /// kings of `key`, and returns what it returns (each side's passed
    /// pawns). A play accumulator may add a memoised sum instead of running
    /// it (see [`pawn_king`]); the others run it.
    #[inline(always)]
    fn pawn_king_terms(
        &mut self,
        key: &PawnKingKey,
        terms: impl FnOnce(&mut Self) -> [u64; 2],
    ) -> [u64; 2]
    where
        Self: Sized,
    {
        let _ = key;
        terms(self)
    }
}

/// Play-mode accumulator: sums the weights directly.
struct WeightSum<'a> {
    weights: &'a [S; NUM_ENTRIES],
    mg: i32,
    eg: i32,
}

impl Accumulator for WeightSum<'_> {
    #[inline(always)]
    fn add(&mut self, entry: usize, coef: i32) {
        let w = self.weights[entry];
        self.mg += w.mg * coef;
        self.eg += w.eg * coef;
    }

    #[inline(always)]
    fn king_danger(&mut self, color: Color, counts: &DangerCounts) {
        let v = danger::lookup(self.weights, counts);
        let s = for_side_to_move(1, color);
        self.mg += s * v.mg;
        self.eg += s * v.eg;
    }
}

/// The weights packed for play: each entry's middlegame value in the low 32
/// bits of an `i64` and its endgame value above, so that the accumulator
/// does one multiply-add per feature instead of two. Exact: the packed sum
/// is `mg + eg·2³²` in wrapping arithmetic, and both halves stay far inside
/// `i32` for any weights within their bounds.
#[derive(Clone, Debug)]
pub struct PackedParams {
    packed: Box<[i64; NUM_ENTRIES]>,
}

impl PackedParams {
    /// Packs `params`.
    pub fn new(params: &Params) -> Self {
        let mut packed = Box::new([0i64; NUM_ENTRIES]);
        for (p, w) in packed.iter_mut().zip(params.entries.iter()) {
            *p = pack(w.mg, w.eg);
        }
        PackedParams { packed }
    }
}

/// A White-relative score seen from the side to move `turn`.
#[inline(always)]
fn for_side_to_move(white: i32, turn: Color) -> i32 {
    match turn {
        Color::White => white,
        Color::Black => -white,
    }
}

#[inline(always)]
fn pack(mg: i32, eg: i32) -> i64 {
    (i64::from(eg) << 32).wrapping_add(i64::from(mg))
}

/// The two halves of a packed sum (exact while each fits in `i32`).
#[inline(always)]
fn unpack(sum: i64) -> (i32, i32) {
    let mg = sum as i32;
    let eg = (sum.wrapping_sub(i64::from(mg)) >> 32) as i32;
    (mg, eg)
}

/// Play-mode accumulator over packed weights, with the memo of the
/// pawn-and-king terms when it has one.
struct PackedSum<'a> {
    weights: &'a [i64; NUM_ENTRIES],
    sum: i64,
    memo: Option<&'a mut PawnKingCache>,
}

impl Accumulator for PackedSum<'_> {
    #[inline(always)]
    fn add(&mut self, entry: usize, coef: i32) {
        self.sum = self
            .sum
            .wrapping_add(self.weights[entry].wrapping_mul(i64::from(coef)));
    }

    #[inline(always)]
    fn king_danger(&mut self, color: Color, counts: &DangerCounts) {
        let v = danger::lookup_packed(self.weights, counts);
        self.sum = match color {
            Color::White => self.sum.wrapping_add(v),
            Color::Black => self.sum.wrapping_sub(v),
        };
    }

    #[inline(always)]
    fn pawn_king_terms(
        &mut self,
        key: &PawnKingKey,
        terms: impl FnOnce(&mut Self) -> [u64; 2],
    ) -> [u64; 2] {
        let Some(memo) = self.memo.take() else {
            return terms(self);
        };
        let passed = match memo.get(key) {
            Some((sum, passed)) => {
                self.sum = self.sum.wrapping_add(sum);
                passed
            }
            None => {
                // Wrapping sums: the difference is exactly what the terms
                // added, whatever came before.
                let before = self.sum;
                let passed = terms(self);
                memo.put(key, self.sum.wrapping_sub(before), passed);
                passed
            }
        };
        self.memo = Some(memo);
        passed
    }
}

/// [`evaluate`] with packed weights (what the search uses); the same value.
pub fn evaluate_packed(pos: &Chess, params: &PackedParams) -> i32 {
    packed_evaluation(pos, params, None)
}

/// [`evaluate_packed`] with a memo of the pawn-and-king terms, which must
/// have been filled under the same `params` (or be empty); the same value.
pub fn evaluate_packed_memo(pos: &Chess, params: &PackedParams, memo: &mut PawnKingCache) -> i32 {
    packed_evaluation(pos, params, Some(memo))
}

#[inline(always)]
fn packed_evaluation(pos: &Chess, params: &PackedParams, memo: Option<&mut PawnKingCache>) -> i32 {
    let mut acc = PackedSum {
        weights: &params.packed,
        sum: 0,
        memo,
    };
    let info = terms::evaluate_terms(pos, &mut acc);
    let (mg, eg) = unpack(acc.sum);
    let white = terms::taper(mg, eg, &info);
    for_side_to_move(white, pos.turn())
}

/// Evaluates `pos` in centipawns from the side to move's point of view.
///
/// # Examples
/// ```
/// use engine::eval::{evaluate, Params};
/// let start = shakmaty::Chess::default();
/// let score = evaluate(&start, &Params::defaults());
/// assert!(score.abs() < 100);
/// ```
pub fn evaluate(pos: &Chess, params: &Params) -> i32 {
    let mut acc = WeightSum {
        weights: &params.entries,
        mg: 0,
        eg: 0,
    };
    let info = terms::evaluate_terms(pos, &mut acc);
    let white = terms::taper(acc.mg, acc.eg, &info);
    for_side_to_move(white, pos.turn())
}

/// One nonzero coefficient of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceEntry {
    /// Entry index (see [`schema::blocks`]).
    pub entry: u16,
    /// Net count, White-relative.
    pub coef: i16,
}

/// The exact form of a position's evaluation: sparse linear coefficients
/// plus each side's king-danger counts. With it the evaluation and its
/// gradient for any weights are dot products and two table lookups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// Nonzero coefficients, each entry once, in the order the terms met them.
    pub entries: Vec<TraceEntry>,
    /// White's and Black's king-danger counts.
    pub danger: [DangerCounts; 2],
    /// Phase and scale factors for the taper.
    pub taper: TaperInfo,
    /// The side to move (the evaluation's point of view).
    pub turn: Color,
}

impl Trace {
    /// The White-relative middlegame and endgame sums under `params`.
    pub fn sums(&self, params: &Params) -> (i32, i32) {
        let (mut mg, mut eg) = (0, 0);
        for t in &self.entries {
            let w = params.entries[t.entry as usize];
            mg += w.mg * t.coef as i32;
            eg += w.eg * t.coef as i32;
        }
        for (color, counts) in Color::ALL.into_iter().zip(&self.danger) {
            let v = danger::lookup(&params.entries, counts);
            let s = for_side_to_move(1, color);
            mg += s * v.mg;
            eg += s * v.eg;
        }
        (mg, eg)
    }

    /// The evaluation (side to move's view) under `params`; equals
    /// [`evaluate`] of the traced position exactly.
    pub fn evaluate(&self, params: &Params) -> i32 {
        let (mg, eg) = self.sums(params);
        let white = terms::taper(mg, eg, &self.taper);
        for_side_to_move(white, self.turn)
    }

    /// The exact partial derivatives of the (untruncated) evaluation, side to
    /// move's view, with respect to each scalar parameter this position
    /// touches: `(scalar index, d eval / d param)`, a parameter possibly
    /// more than once (add them). The endgame scale that applies depends on
    /// the sign of the endgame sum under `params`. The evaluation is a step
    /// function of the king-danger units; for them this is the derivative
    /// of its smooth relaxation ([`danger::interpolate`]), which the tuner
    /// follows.
    pub fn gradient(&self, params: &Params) -> Vec<(usize, f64)> {
        let (_, eg) = self.sums(params);
        let factors = self.phase_factors(eg);
        let mut out: Vec<(usize, f64)> = self
            .entries
            .iter()
            .flat_map(|t| {
                let c = t.coef as f64;
                let e = t.entry as usize;
                [(2 * e, c * factors.0), (2 * e + 1, c * factors.1)]
            })
            .collect();
        for (color, counts) in Color::ALL.into_iter().zip(&self.danger) {
            let (cm, ce) = danger::counters(&params.entries, counts);
            for (phase, counter, factor) in [(0, cm, factors.0), (1, ce, factors.1)] {
                let g = factor * for_side_to_move(1, color) as f64;
                let table = |j: usize| params.scalar(2 * danger::TABLE.at(j) + phase) as f64;
                let r = danger::interpolate(table, counter as f64);
                for j in 0..4 {
                    if r.weight[j] != 0.0 {
                        out.push((2 * danger::TABLE.at(r.index[j]) + phase, g * r.weight[j]));
                    }
                }
                for (k, &n) in counts.0.iter().enumerate() {
                    if n != 0 {
                        out.push((2 * danger::UNIT_ENTRY[k] + phase, g * r.slope * n as f64));
                    }
                }
            }
        }
        out
    }

    /// d eval / d mg-sum and d eval / d eg-sum (side to move's view) for an
    /// endgame sum `eg`.
    pub fn phase_factors(&self, eg: i32) -> (f64, f64) {
        let scale = if eg > 0 {
            self.taper.scale_white
        } else {
            self.taper.scale_black
        } as f64;
        let stm = match self.turn {
            Color::White => 1.0,
            Color::Black => -1.0,
        };
        let phase = self.taper.phase as f64;
        let max = MAX_PHASE as f64;
        (
            stm * phase / max,
            stm * (max - phase) / max * scale / SCALE_NORMAL as f64,
        )
    }
}

/// Trace-mode accumulator: dense coefficients plus the list of touched
/// entries, turned into a sorted sparse [`Trace`] at the end, and the
/// king-danger counts.
struct Recorder {
    coefs: [i32; NUM_ENTRIES],
    touched: Vec<u16>,
    danger: [DangerCounts; 2],
}

impl Accumulator for Recorder {
    #[inline(always)]
    fn add(&mut self, entry: usize, coef: i32) {
        if self.coefs[entry] == 0 {
            self.touched.push(entry as u16);
        }
        self.coefs[entry] += coef;
    }

    #[inline(always)]
    fn king_danger(&mut self, color: Color, counts: &DangerCounts) {
        self.danger[usize::from(color == Color::Black)] = *counts;
    }
}

thread_local! {
    /// One recorder per thread, reused: its dense array is cleared entry by
    /// entry after each trace instead of being zeroed whole.
    static RECORDER: std::cell::RefCell<Recorder> = const {
        std::cell::RefCell::new(Recorder {
            coefs: [0; NUM_ENTRIES],
            touched: Vec::new(),
            danger: [DangerCounts::NONE; 2],
        })
    };
}

/// Records the exact sparse coefficients of every parameter in the
/// evaluation of `pos`.
pub fn trace(pos: &Chess) -> Trace {
    let mut entries = Vec::new();
    let (taper, danger) = trace_with(pos, |t| entries.push(t));
    Trace {
        entries,
        danger,
        taper,
        turn: pos.turn(),
    }
}

/// [`trace`] without building a [`Trace`]: passes each nonzero coefficient
/// to `sink`, in the order of [`Trace::entries`], and returns the taper and
/// White's and Black's king-danger counts.
pub fn trace_with(pos: &Chess, mut sink: impl FnMut(TraceEntry)) -> (TaperInfo, [DangerCounts; 2]) {
    RECORDER.with_borrow_mut(|rec| {
        rec.danger = [DangerCounts::NONE; 2];
        let taper = terms::evaluate_terms(pos, rec);
        for &e in &rec.touched {
            let c = std::mem::take(&mut rec.coefs[e as usize]);
            if c != 0 {
                sink(TraceEntry {
                    entry: e,
                    coef: i16::try_from(c).expect("feature counts fit in i16"),
                });
            }
        }
        rec.touched.clear();
        (taper, rec.danger)
    })
}

/// The evaluation split by term group and side, for `engine eval`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breakdown {
    /// Per group: White's and Black's (mg, eg) contributions, each from its
    /// own side's point of view (positive is good for that side).
    pub groups: Vec<(Group, [S; 2])>,
    /// Phase and scale factors.
    pub taper: TaperInfo,
    /// The evaluation from the side to move's view (same as [`evaluate`]).
    pub score: i32,
}

struct GroupSum<'a> {
    weights: &'a [S; NUM_ENTRIES],
    group_of_entry: Vec<usize>,
    sums: Vec<[S; 2]>,
}

impl Accumulator for GroupSum<'_> {
    fn add(&mut self, entry: usize, coef: i32) {
        let w = self.weights[entry];
        let side = usize::from(coef < 0);
        let g = &mut self.sums[self.group_of_entry[entry]][side];
        g.mg += w.mg * coef.abs();
        g.eg += w.eg * coef.abs();
    }

    fn king_danger(&mut self, color: Color, counts: &DangerCounts) {
        let v = danger::lookup(self.weights, counts);
        let g = &mut self.sums[self.group_of_entry[danger::TABLE.start]]
            [usize::from(color == Color::Black)];
        g.mg += v.mg;
        g.eg += v.eg;
    }
}

/// Evaluates `pos` and reports each group's contribution for each side.
pub fn breakdown(pos: &Chess, params: &Params) -> Breakdown {
    let mut group_of_entry = vec![0; NUM_ENTRIES];
    for b in BLOCKS {
        let gi = Group::ALL.iter().position(|g| *g == b.group).unwrap_or(0);
        group_of_entry[b.block.start..b.block.start + b.block.len].fill(gi);
    }
    let mut acc = GroupSum {
        weights: &params.entries,
        group_of_entry,
        sums: vec![[S::ZERO; 2]; Group::ALL.len()],
    };
    let taper = terms::evaluate_terms(pos, &mut acc);
    Breakdown {
        groups: Group::ALL.iter().copied().zip(acc.sums).collect(),
        taper,
        score: evaluate(pos, params),
    }
}
