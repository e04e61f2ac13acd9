//! The objectives and the parallel loss/gradient pass over a set.
//!
//! The prediction for a position is `p = σ(K·E/400)` where `E` is the
//! White-relative evaluation and `σ(x) = 1/(1+e^(−x))`. Objectives:
//! * `mse` (Texel): `(p − t)²`;
//! * `log` (cross-entropy): `−t·ln p − (1−t)·ln(1−p)`;
//! * `ordinal` (ordered logistic regression over loss/draw/win): with
//!   `z = K·E/400` and draw margin `θ`, `P(loss) = σ(−θ−z)`,
//!   `P(win) = 1 − σ(θ−z)`, `P(draw)` the rest; the loss is `−ln P(result)`.
//!
//! The target `t` is the game result (1, ½, 0 for White), blended with the
//! search score when `λ < 1`: `t = λ·result + (1−λ)·σ(K·score/400)` (not for
//! `ordinal`, which models the three results themselves).
//!
//! Determinism: positions are cut into fixed chunks of [`CHUNK`] whatever
//! the thread count; each chunk's loss and gradient are computed by one
//! thread and the chunk results are added in chunk order, so the result is
//! bit-identical for any number of threads.

use engine::search::score::win_probability;
use rayon::prelude::*;

use crate::kernel::{Accumulator, Kernel};
use crate::run_set::{RUN_POSITIONS, RunSet};
use crate::trace_set::{Outcome, PositionView, TraceSet};

/// Positions per unit of parallel work (fixed, for determinism).
pub const CHUNK: usize = 4096;

/// Runs of positions per unit of parallel work (as many positions as
/// [`CHUNK`]).
pub const CHUNK_RUNS: usize = CHUNK / RUN_POSITIONS;

/// Which loss to minimise.
#[derive(Clone, Copy, Debug, PartialEq, clap::ValueEnum)]
pub enum ObjectiveKind {
    /// Mean squared error of the predicted score (Texel).
    Mse,
    /// Cross-entropy.
    Log,
    /// Ordered logistic regression over loss/draw/win.
    Ordinal,
}

/// A fully specified objective.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Objective {
    /// Which loss.
    pub kind: ObjectiveKind,
    /// Sigmoid scale.
    pub k: f64,
    /// Weight of the game result against the search score in the target.
    pub lambda: f64,
    /// Draw margin of the ordinal model (in units of z).
    pub draw_margin: f64,
}

#[inline(always)]
fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

const PROBABILITY_FLOOR: f64 = 1e-12;

impl Objective {
    /// The target of a position (White's expected score).
    #[inline(always)]
    pub fn target(&self, p: &PositionView) -> f64 {
        let result = p.outcome.white_score();
        match p.score {
            Some(s) if self.lambda < 1.0 => {
                self.lambda * result + (1.0 - self.lambda) * win_probability(s, self.k)
            }
            _ => result,
        }
    }

    /// Loss of one position with White-relative evaluation `eval`, and
    /// d loss / d eval.
    #[inline(always)]
    pub fn loss(&self, eval: f64, p: &PositionView) -> (f64, f64) {
        let dz = self.k / 400.0;
        let z = eval * dz;
        match self.kind {
            ObjectiveKind::Mse => {
                let t = self.target(p);
                let q = sigmoid(z);
                let d = q - t;
                (d * d, 2.0 * d * q * (1.0 - q) * dz)
            }
            ObjectiveKind::Log => {
                let t = self.target(p);
                let q = sigmoid(z).clamp(PROBABILITY_FLOOR, 1.0 - PROBABILITY_FLOOR);
                (-(t * q.ln() + (1.0 - t) * (1.0 - q).ln()), (q - t) * dz)
            }
            ObjectiveKind::Ordinal => {
                let a = sigmoid(-self.draw_margin - z); // P(loss)
                let b = sigmoid(self.draw_margin - z); // P(loss or draw)
                match p.outcome {
                    Outcome::Loss => (-a.max(PROBABILITY_FLOOR).ln(), (1.0 - a) * dz),
                    Outcome::Win => (-(1.0 - b).max(PROBABILITY_FLOOR).ln(), -b * dz),
                    Outcome::Draw => {
                        let pd = (b - a).max(PROBABILITY_FLOOR);
                        (-pd.ln(), (b * (1.0 - b) - a * (1.0 - a)) / pd * dz)
                    }
                }
            }
        }
    }
}

/// Mean loss over `set`.
pub fn mean_loss(set: &TraceSet, weights: &[f64], objective: &Objective) -> f64 {
    let n = set.len();
    if n == 0 {
        return f64::NAN;
    }
    let kernel = Kernel::new(weights);
    let chunks: Vec<f64> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| kernel.loss_sum(set, c * CHUNK..((c + 1) * CHUNK).min(n), objective))
        .collect();
    chunks.iter().sum::<f64>() / n as f64
}

/// Mean loss and its gradient over the positions `indices` of `set`.
pub fn loss_and_gradient(
    set: &TraceSet,
    indices: &[u32],
    weights: &[f64],
    objective: &Objective,
) -> (f64, Vec<f64>) {
    mean_of(
        loss_and_gradient_sums(set, indices, weights, objective),
        indices.len(),
    )
}

/// Summed loss and gradient divided by the number of positions `n`.
fn mean_of((loss, mut grad): (f64, Vec<f64>), n: usize) -> (f64, Vec<f64>) {
    let scale = 1.0 / n.max(1) as f64;
    grad.iter_mut().for_each(|g| *g *= scale);
    (loss * scale, grad)
}

/// The summed loss and gradient over the positions `indices` of `set`
/// (not divided by their number).
fn loss_and_gradient_sums(
    set: &TraceSet,
    indices: &[u32],
    weights: &[f64],
    objective: &Objective,
) -> (f64, Vec<f64>) {
    let kernel = Kernel::new(weights);
    chunked_sums(indices, CHUNK, weights.len(), |chunk, acc| {
        kernel.accumulate(set, chunk, objective, acc)
    })
}

/// The summed loss and gradient of `items` cut into parts of `chunk`, each
/// part summed by one thread with `accumulate` and the parts added in
/// order (whatever the thread count).
fn chunked_sums<T: Sync>(
    items: &[T],
    chunk: usize,
    dims: usize,
    accumulate: impl Fn(&[T], &mut Accumulator) + Sync,
) -> (f64, Vec<f64>) {
    let parts: Vec<(f64, Vec<f64>)> = items
        .par_chunks(chunk)
        .map(|part| {
            let mut acc = Accumulator::new(dims);
            accumulate(part, &mut acc);
            acc.finish()
        })
        .collect();
    let mut grad = vec![0.0; dims];
    let mut loss = 0.0;
    for (l, g) in &parts {
        loss += l;
        for (a, b) in grad.iter_mut().zip(g) {
            *a += b;
        }
    }
    (loss, grad)
}

/// Mean loss over the positions of `set` (NaN when it is empty), as
/// [`mean_loss`] over runs of differences.
pub fn mean_loss_runs(set: &RunSet, weights: &[f64], objective: &Objective) -> f64 {
    let n = set.len();
    if n == 0 {
        return f64::NAN;
    }
    let kernel = Kernel::new(weights);
    let runs = set.runs();
    let chunks: Vec<f64> = (0..runs.div_ceil(CHUNK_RUNS))
        .into_par_iter()
        .map(|c| {
            kernel.loss_sum_runs(
                set,
                c * CHUNK_RUNS..((c + 1) * CHUNK_RUNS).min(runs),
                objective,
            )
        })
        .collect();
    chunks.iter().sum::<f64>() / n as f64
}

/// Mean loss and its gradient over the positions of the runs `runs` of
/// `set`, deterministic as [`loss_and_gradient`] (chunks of
/// [`CHUNK_RUNS`] runs).
pub fn loss_and_gradient_runs(
    set: &RunSet,
    runs: &[u32],
    weights: &[f64],
    objective: &Objective,
) -> (f64, Vec<f64>) {
    mean_of(
        loss_and_gradient_runs_sums(set, runs, weights, objective),
        runs.iter().map(|&r| set.run_range(r as usize).len()).sum(),
    )
}

/// The summed loss and gradient over the positions of the runs `runs` of
/// `set` (not divided by their number: parts of a batch add up).
pub fn loss_and_gradient_runs_sums(
    set: &RunSet,
    runs: &[u32],
    weights: &[f64],
    objective: &Objective,
) -> (f64, Vec<f64>) {
    let kernel = Kernel::new(weights);
    chunked_sums(runs, CHUNK_RUNS, weights.len(), |chunk, acc| {
        kernel.accumulate_runs(set, chunk, objective, acc)
    })
}

/// Minimises `f` over `[lo, hi]` by golden-section search.
pub fn golden_section(mut lo: f64, mut hi: f64, iterations: usize, f: impl Fn(f64) -> f64) -> f64 {
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let mut a = hi - ratio * (hi - lo);
    let mut b = lo + ratio * (hi - lo);
    let (mut fa, mut fb) = (f(a), f(b));
    for _ in 0..iterations {
        if fa < fb {
            hi = b;
            b = a;
            fb = fa;
            a = hi - ratio * (hi - lo);
            fa = f(a);
        } else {
            lo = a;
            a = b;
            fa = fb;
            b = lo + ratio * (hi - lo);
            fb = f(b);
        }
    }
    (lo + hi) / 2.0
}

/// Fits `K` (and, for `ordinal`, the draw margin) by minimising
/// `mean_loss` (the mean loss of the data at fixed weights under an
/// objective). Returns the fitted objective.
pub fn fit_scale(mean_loss: impl Fn(&Objective) -> f64, base: Objective) -> Objective {
    let mut obj = base;
    const K_RANGE: (f64, f64) = (0.05, 10.0);
    const MARGIN_RANGE: (f64, f64) = (0.01, 5.0);
    const ITERATIONS: usize = 40;
    let rounds = if obj.kind == ObjectiveKind::Ordinal {
        3
    } else {
        1
    };
    for _ in 0..rounds {
        obj.k = golden_section(K_RANGE.0, K_RANGE.1, ITERATIONS, |k| {
            mean_loss(&Objective { k, ..obj })
        });
        if obj.kind == ObjectiveKind::Ordinal {
            obj.draw_margin = golden_section(MARGIN_RANGE.0, MARGIN_RANGE.1, ITERATIONS, |m| {
                mean_loss(&Objective {
                    draw_margin: m,
                    ..obj
                })
            });
        }
    }
    obj
}
