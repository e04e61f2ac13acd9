//! `--validate-gradient`: the analytic gradient of the full loss against
//! central finite differences, on a sample of positions and parameters.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::objective::{Objective, loss_and_gradient, mean_loss};
use crate::trace_set::TraceSet;

/// Finite-difference step, in centipawns.
const STEP: f64 = 1e-3;
/// Relative error above which the check fails.
pub const TOLERANCE: f64 = 1e-4;
/// Gradients smaller than this are compared absolutely (relative error is
/// meaningless at zero).
const ABSOLUTE_FLOOR: f64 = 1e-10;

/// One compared parameter.
#[derive(Clone, Debug)]
pub struct GradientComparison {
    /// Scalar index.
    pub param: usize,
    /// d loss / d param, analytic.
    pub analytic: f64,
    /// Central difference.
    pub numeric: f64,
    /// |analytic − numeric| / max(|analytic|, |numeric|, floor).
    pub relative_error: f64,
}

/// Compares the gradients on up to `positions` positions of `set` and
/// `params` parameters (half of them chosen among those the sample uses).
pub fn check(
    set: &TraceSet,
    weights: &[f64],
    objective: &Objective,
    positions: usize,
    params: usize,
    seed: u64,
) -> Vec<GradientComparison> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut order: Vec<usize> = (0..set.len()).collect();
    order.shuffle(&mut rng);
    order.truncate(positions);
    let sample = set.select(&order);
    let all: Vec<u32> = (0..sample.len() as u32).collect();
    let (_, grad) = loss_and_gradient(&sample, &all, weights, objective);
    let mut used: Vec<usize> = (0..weights.len()).filter(|&i| grad[i] != 0.0).collect();
    used.shuffle(&mut rng);
    let mut chosen: Vec<usize> = used.into_iter().take(params / 2).collect();
    while chosen.len() < params {
        chosen.push(rng.random_range(0..weights.len()));
    }
    chosen
        .into_iter()
        .map(|i| {
            let mut w = weights.to_vec();
            w[i] = weights[i] + STEP;
            let up = mean_loss(&sample, &w, objective);
            w[i] = weights[i] - STEP;
            let down = mean_loss(&sample, &w, objective);
            let numeric = (up - down) / (2.0 * STEP);
            let analytic = grad[i];
            let scale = analytic.abs().max(numeric.abs());
            let relative_error = if scale < ABSOLUTE_FLOOR {
                0.0
            } else {
                (analytic - numeric).abs() / scale
            };
            GradientComparison {
                param: i,
                analytic,
                numeric,
                relative_error,
            }
        })
        .collect()
}
