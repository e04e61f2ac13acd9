//! Compact storage of traced positions and the two kernels of an epoch:
//! the evaluation of a position under continuous weights, and the
//! accumulation of the loss gradient.
//!
//! A position is its sparse coefficients (entry index `u16`, White-relative
//! count `i16`) in one shared array, an offset, a packed taper word (phase,
//! both endgame scales, side to move), both sides' king-danger counts, its
//! result and its optional search score: about 4 bytes per nonzero
//! coefficient plus 32 bytes. Weights are `f64` scalars in the engine's
//! layout (`2 * entry` = mg, `+ 1` = eg). The evaluation here is the
//! engine's taper *without* its final integer truncation, and reads the
//! king-danger table through its smooth relaxation
//! ([`engine::eval::danger::interpolate`]), so its gradient is exact in
//! every weight, the attack units included, and [`PositionView::evaluate`]
//! differs from the engine's `evaluate` by less than one centipawn for
//! integer weights.

use engine::eval::danger::{self, Interpolation};
use engine::eval::{DangerCounts, MAX_PHASE, SCALE_NORMAL, TaperInfo, Trace, trace_with};
use engine::formats::labeled::GameResult;
use shakmaty::{Chess, Color, Position};

/// A game result as the objectives use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Outcome {
    /// White lost.
    Loss = 0,
    /// Draw.
    Draw = 1,
    /// White won.
    Win = 2,
}

impl From<GameResult> for Outcome {
    fn from(r: GameResult) -> Self {
        match r {
            GameResult::WhiteWin => Outcome::Win,
            GameResult::Draw => Outcome::Draw,
            GameResult::BlackWin => Outcome::Loss,
        }
    }
}

impl Outcome {
    /// White's score: 0, 0.5 or 1.
    pub fn white_score(self) -> f64 {
        self as u8 as f64 / 2.0
    }
}

/// No search score recorded.
const NO_SCORE: i16 = i16::MIN;

/// Traced positions, in a fixed order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceSet {
    offsets: Vec<u32>,
    entries: Vec<u16>,
    coefs: Vec<i16>,
    /// phase | scale_white << 8 | scale_black << 16 | (turn is black) << 24
    taper: Vec<u32>,
    /// White's and Black's king-danger counts.
    danger: Vec<[DangerCounts; 2]>,
    outcomes: Vec<Outcome>,
    /// Search score, White-relative, or [`NO_SCORE`].
    scores: Vec<i16>,
}

/// The per-position facts the kernels need.
#[derive(Clone, Copy, Debug)]
pub struct PositionView<'a> {
    /// Entry indices.
    pub entries: &'a [u16],
    /// Coefficients, White-relative.
    pub coefs: &'a [i16],
    /// Phase (0 … 24).
    pub phase: f64,
    /// Endgame scale when White is stronger, of 128.
    pub scale_white: f64,
    /// Endgame scale when Black is stronger.
    pub scale_black: f64,
    /// White's and Black's king-danger counts.
    pub danger: &'a [DangerCounts; 2],
    /// The result.
    pub outcome: Outcome,
    /// Search score, White-relative, if known.
    pub score: Option<f64>,
}

impl TraceSet {
    /// An empty set.
    pub fn new() -> Self {
        TraceSet {
            offsets: vec![0],
            ..Default::default()
        }
    }

    /// An empty set with room for `positions` positions and `entries`
    /// coefficients.
    pub fn with_capacity(positions: usize, entries: usize) -> Self {
        let mut offsets = Vec::with_capacity(positions + 1);
        offsets.push(0);
        TraceSet {
            offsets,
            entries: Vec::with_capacity(entries),
            coefs: Vec::with_capacity(entries),
            taper: Vec::with_capacity(positions),
            danger: Vec::with_capacity(positions),
            outcomes: Vec::with_capacity(positions),
            scores: Vec::with_capacity(positions),
        }
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.taper.len()
    }

    /// True when there are no positions.
    pub fn is_empty(&self) -> bool {
        self.taper.is_empty()
    }

    /// Appends a traced position with its result and optional search score
    /// (White-relative).
    pub fn push(&mut self, trace: &Trace, result: GameResult, score_white: Option<i32>) {
        for t in &trace.entries {
            self.entries.push(t.entry);
            self.coefs.push(t.coef);
        }
        self.push_labels(&trace.taper, trace.turn, trace.danger, result, score_white);
    }

    /// Traces `pos` and appends it (as [`TraceSet::push`] of its trace,
    /// without the intermediate [`Trace`]).
    pub fn push_position(&mut self, pos: &Chess, result: GameResult, score_white: Option<i32>) {
        let (taper, danger) = trace_with(pos, |t| {
            self.entries.push(t.entry);
            self.coefs.push(t.coef);
        });
        self.push_labels(&taper, pos.turn(), danger, result, score_white);
    }

    fn push_labels(
        &mut self,
        t: &TaperInfo,
        turn: Color,
        danger: [DangerCounts; 2],
        result: GameResult,
        score_white: Option<i32>,
    ) {
        self.danger.push(danger);
        self.offsets.push(self.entries.len() as u32);
        let black = u32::from(turn == Color::Black);
        self.taper.push(
            t.phase as u32
                | (t.scale_white as u32) << 8
                | (t.scale_black as u32) << 16
                | black << 24,
        );
        self.outcomes.push(result.into());
        self.scores.push(
            score_white
                .map(|s| s.clamp(NO_SCORE as i32 + 1, i16::MAX as i32) as i16)
                .unwrap_or(NO_SCORE),
        );
    }

    /// Appends every position of `other`.
    pub fn extend(&mut self, other: &TraceSet) {
        let base = *self.offsets.last().unwrap_or(&0);
        self.offsets
            .extend(other.offsets[1..].iter().map(|o| o + base));
        self.entries.extend_from_slice(&other.entries);
        self.coefs.extend_from_slice(&other.coefs);
        self.taper.extend_from_slice(&other.taper);
        self.danger.extend_from_slice(&other.danger);
        self.outcomes.extend_from_slice(&other.outcomes);
        self.scores.extend_from_slice(&other.scores);
    }

    /// A new set with the positions at `indices`, in that order.
    pub fn select(&self, indices: &[usize]) -> TraceSet {
        let mut out = TraceSet::new();
        for &i in indices {
            let (a, b) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
            out.entries.extend_from_slice(&self.entries[a..b]);
            out.coefs.extend_from_slice(&self.coefs[a..b]);
            out.offsets.push(out.entries.len() as u32);
            out.taper.push(self.taper[i]);
            out.danger.push(self.danger[i]);
            out.outcomes.push(self.outcomes[i]);
            out.scores.push(self.scores[i]);
        }
        out.shrink_to_fit();
        out
    }

    /// Position `i`.
    #[inline(always)]
    pub fn view(&self, i: usize) -> PositionView<'_> {
        let (a, b) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        let t = self.taper[i];
        let s = self.scores[i];
        PositionView {
            entries: &self.entries[a..b],
            coefs: &self.coefs[a..b],
            phase: (t & 0xff) as f64,
            scale_white: ((t >> 8) & 0xff) as f64,
            scale_black: ((t >> 16) & 0xff) as f64,
            danger: &self.danger[i],
            outcome: self.outcomes[i],
            score: (s != NO_SCORE).then_some(s as f64),
        }
    }

    /// Releases spare capacity (after building).
    pub fn shrink_to_fit(&mut self) {
        self.offsets.shrink_to_fit();
        self.entries.shrink_to_fit();
        self.coefs.shrink_to_fit();
        self.taper.shrink_to_fit();
        self.danger.shrink_to_fit();
        self.outcomes.shrink_to_fit();
        self.scores.shrink_to_fit();
    }

    /// Bytes of heap memory used (capacity, not length).
    pub fn heap_bytes(&self) -> usize {
        self.offsets.capacity() * 4
            + self.entries.capacity() * 2
            + self.coefs.capacity() * 2
            + self.taper.capacity() * 4
            + self.danger.capacity() * std::mem::size_of::<[DangerCounts; 2]>()
            + self.outcomes.capacity()
            + self.scores.capacity() * 2
    }

    /// Number of positions with a search score.
    pub fn scored(&self) -> usize {
        self.scores.iter().filter(|&&s| s != NO_SCORE).count()
    }

    /// A hash of the content: coefficients, taper words, king-danger counts,
    /// results and search scores (for checking that a resumed run sees the
    /// same data).
    pub fn fingerprint(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut mix = |v: u64| {
            h ^= v;
            h = h.wrapping_mul(0x0100_0000_01b3);
        };
        mix(self.len() as u64);
        for (e, c) in self.entries.iter().zip(&self.coefs) {
            mix((*e as u64) << 16 | (*c as u16 as u64));
        }
        for t in &self.taper {
            mix(*t as u64);
        }
        for d in &self.danger {
            for side in d {
                mix(u64::from_le_bytes(side.0));
            }
        }
        for o in &self.outcomes {
            mix(*o as u64);
        }
        for s in &self.scores {
            mix(*s as u16 as u64);
        }
        h
    }
}

/// What the gradient of a position needs from its evaluation: the phase
/// factors and the king-danger interpolations.
#[derive(Clone, Copy, Debug)]
pub struct Partials {
    /// d eval / d mg-sum and d eval / d eg-sum (White-relative).
    pub factors: (f64, f64),
    /// Per side (White, Black) and phase (mg, eg): the relaxed table read
    /// (the table's first element, slope 0, for a side without counts).
    pub danger: [[Interpolation; 2]; 2],
}

/// Entry sign of each side's king danger in the White-relative sums.
const SIDE_SIGN: [f64; 2] = [1.0, -1.0];

impl PositionView<'_> {
    /// The White-relative middlegame and endgame sums of the linear terms
    /// under `weights`.
    #[inline(always)]
    pub fn sums(&self, weights: &[f64]) -> (f64, f64) {
        let (mut mg, mut eg) = (0.0, 0.0);
        for (&e, &c) in self.entries.iter().zip(self.coefs) {
            let e = e as usize * 2;
            let c = c as f64;
            mg += weights[e] * c;
            eg += weights[e + 1] * c;
        }
        (mg, eg)
    }

    /// d eval / d mg-sum and d eval / d eg-sum (White-relative eval) for an
    /// endgame sum `eg`.
    #[inline(always)]
    pub fn factors(&self, eg: f64) -> (f64, f64) {
        let scale = if eg > 0.0 {
            self.scale_white
        } else {
            self.scale_black
        };
        let max = MAX_PHASE as f64;
        (
            self.phase / max,
            (max - self.phase) / max * scale / SCALE_NORMAL as f64,
        )
    }

    /// The king-danger reads of both sides under `weights`, and their
    /// White-relative (mg, eg) contribution.
    #[inline(always)]
    fn danger(&self, weights: &[f64]) -> ([[Interpolation; 2]; 2], f64, f64) {
        let table = 2 * danger::TABLE.start;
        let none = Interpolation {
            index: [0; 4],
            weight: [1.0, 0.0, 0.0, 0.0],
            value: 0.0,
            slope: 0.0,
        };
        let mut reads = [[none; 2]; 2];
        let (mut mg, mut eg) = (0.0, 0.0);
        for (side, counts) in self.danger.iter().enumerate() {
            let sign = SIDE_SIGN[side];
            if counts.is_empty() {
                mg += sign * weights[table];
                eg += sign * weights[table + 1];
                continue;
            }
            let (mut cm, mut ce) = (0.0, 0.0);
            for (k, &n) in counts.0.iter().enumerate() {
                if n != 0 {
                    let e = 2 * danger::UNIT_ENTRY[k];
                    cm += weights[e] * n as f64;
                    ce += weights[e + 1] * n as f64;
                }
            }
            let rm = danger::interpolate(|j| weights[table + 2 * j], cm);
            let re = danger::interpolate(|j| weights[table + 2 * j + 1], ce);
            mg += sign * rm.value;
            eg += sign * re.value;
            reads[side] = [rm, re];
        }
        (reads, mg, eg)
    }

    /// The White-relative evaluation under `weights`, with what its
    /// gradient needs.
    #[inline(always)]
    pub fn evaluate(&self, weights: &[f64]) -> (f64, Partials) {
        let (mg, eg) = self.sums(weights);
        let (danger, dmg, deg) = self.danger(weights);
        let (mg, eg) = (mg + dmg, eg + deg);
        let factors = self.factors(eg);
        (
            mg * factors.0 + eg * factors.1,
            Partials { factors, danger },
        )
    }

    /// Adds `d_loss_d_eval` × d eval / d weight into `grad`.
    #[inline(always)]
    pub fn add_gradient(&self, d_loss_d_eval: f64, partials: &Partials, grad: &mut [f64]) {
        let gm = d_loss_d_eval * partials.factors.0;
        let ge = d_loss_d_eval * partials.factors.1;
        for (&e, &c) in self.entries.iter().zip(self.coefs) {
            let e = e as usize * 2;
            let c = c as f64;
            grad[e] += gm * c;
            grad[e + 1] += ge * c;
        }
        let table = 2 * danger::TABLE.start;
        for (side, counts) in self.danger.iter().enumerate() {
            let (gm, ge) = (gm * SIDE_SIGN[side], ge * SIDE_SIGN[side]);
            if counts.is_empty() {
                grad[table] += gm;
                grad[table + 1] += ge;
                continue;
            }
            let [rm, re] = &partials.danger[side];
            for j in 0..4 {
                grad[table + 2 * rm.index[j]] += gm * rm.weight[j];
                grad[table + 2 * re.index[j] + 1] += ge * re.weight[j];
            }
            let (sm, se) = (gm * rm.slope, ge * re.slope);
            for (k, &n) in counts.0.iter().enumerate() {
                if n != 0 {
                    let e = 2 * danger::UNIT_ENTRY[k];
                    grad[e] += sm * n as f64;
                    grad[e + 1] += se * n as f64;
                }
            }
        }
    }
}
