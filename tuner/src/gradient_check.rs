//! `--validate-gradient`: the analytic gradient of the full loss against
//! central finite differences, on a sample of positions and parameters.
//! The sample always holds every king-danger unit (the weights the
//! evaluation is not linear in) and the attack-table elements the sampled
//! positions read.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use engine::eval::danger;

use crate::objective::{Objective, loss_and_gradient, mean_loss};
use crate::trace_set::TraceSet;

/// Finite-difference step, in centipawns. The numeric derivative is the
/// Richardson extrapolation of central differences with steps `STEP` and
/// `STEP / 2`, which cancels their error term in the step squared: the
/// king-danger units need it, as the loss curves strongly in them (a unit
/// moves the counter by up to ~10 per cp), while a smaller step would drown
/// small gradients in the loss's rounding noise.
const STEP: f64 = 1e-3;
/// Relative error above which the check fails.
pub const TOLERANCE: f64 = 1e-4;
/// Gradients smaller than this are compared absolutely (relative error is
/// meaningless at zero): the mean loss of a few thousand positions carries
/// rounding noise of ~1e-15, ~1e-12 in the numeric derivative, which is the
/// tolerance's share of this floor.
const ABSOLUTE_FLOOR: f64 = 1e-8;

/// One compared parameter.
#[derive(Clone, Debug)]
pub struct GradientComparison {
    /// Scalar index.
    pub param: usize,
    /// d loss / d param, analytic.
    pub analytic: f64,
    /// Central differences, extrapolated (see [`STEP`]).
    pub numeric: f64,
    /// |analytic − numeric| / max(|analytic|, |numeric|, floor).
    pub relative_error: f64,
}

/// Compares the gradients on up to `positions` positions of `set` and
/// `params` parameters (half of them chosen among those the sample uses),
/// plus the king-danger units and the attack-table elements in use.
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
    let table = 2 * danger::TABLE.start..2 * (danger::TABLE.start + danger::TABLE.len);
    let units = danger::UNIT_ENTRY.iter().flat_map(|&e| [2 * e, 2 * e + 1]);
    let table_in_use = table.filter(|&i| grad[i] != 0.0);
    for i in units.chain(table_in_use) {
        if !chosen.contains(&i) {
            chosen.push(i);
        }
    }
    chosen
        .into_iter()
        .map(|i| {
            let mut w = weights.to_vec();
            let mut central = |h: f64| {
                w[i] = weights[i] + h;
                let up = mean_loss(&sample, &w, objective);
                w[i] = weights[i] - h;
                let down = mean_loss(&sample, &w, objective);
                (up - down) / (2.0 * h)
            };
            let numeric = (4.0 * central(STEP / 2.0) - central(STEP)) / 3.0;
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
