//! Optimisers: Adam (default), AdaGrad and momentum (Arasan's "adaptive"),
//! with per-parameter step sizes scaled to each parameter's range and a
//! state that can be checkpointed and restored exactly.
//!
//! A step takes the gradient of the mean loss and moves every *tunable*
//! parameter (a mask selects them), then clamps it to its bounds. The step
//! size of parameter `i` is `learning_rate × range_i / RANGE_UNIT`, where
//! `range_i = max_i − min_i` from the parameter declaration, so that a
//! queen value and a pawn-shield bonus move at comparable relative speed.

/// Step sizes are expressed per this many centipawns of a parameter's range.
pub const RANGE_UNIT: f64 = 1000.0;

const ADAM_BETA1: f64 = 0.9;
const ADAM_BETA2: f64 = 0.999;
const EPSILON: f64 = 1e-8;
const MOMENTUM: f64 = 0.9;

/// Which optimiser.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OptimizerKind {
    /// Adam (bias-corrected first and second moments).
    Adam,
    /// AdaGrad (accumulated squared gradients).
    Adagrad,
    /// Heavy-ball momentum on the gradient normalised by its running RMS.
    Momentum,
}

impl OptimizerKind {
    /// Name used in checkpoints.
    pub fn name(self) -> &'static str {
        match self {
            OptimizerKind::Adam => "adam",
            OptimizerKind::Adagrad => "adagrad",
            OptimizerKind::Momentum => "momentum",
        }
    }

    /// The default learning rate of this optimiser.
    pub fn default_learning_rate(self) -> f64 {
        match self {
            OptimizerKind::Adam => 2.0,
            OptimizerKind::Adagrad => 20.0,
            OptimizerKind::Momentum => 0.5,
        }
    }
}

/// An optimiser and its complete state.
#[derive(Clone, Debug, PartialEq)]
pub struct Optimizer {
    /// Which algorithm.
    pub kind: OptimizerKind,
    /// Steps taken.
    pub steps: u64,
    /// First moment (Adam), velocity (momentum).
    pub first: Vec<f64>,
    /// Second moment (Adam), squared-gradient sum (AdaGrad), running mean
    /// square (momentum).
    pub second: Vec<f64>,
}

impl Optimizer {
    /// A fresh optimiser for `dims` parameters.
    pub fn new(kind: OptimizerKind, dims: usize) -> Self {
        Optimizer {
            kind,
            steps: 0,
            first: vec![0.0; dims],
            second: vec![0.0; dims],
        }
    }

    /// One step: moves `weights` against `grad` where `tunable` is set,
    /// with step sizes `learning_rate × ranges[i] / RANGE_UNIT`, then clamps
    /// to `[min, max]`.
    #[allow(clippy::too_many_arguments)]
    pub fn step(
        &mut self,
        weights: &mut [f64],
        grad: &[f64],
        learning_rate: f64,
        tunable: &[bool],
        min: &[f64],
        max: &[f64],
    ) {
        self.steps += 1;
        let t = self.steps as f64;
        for i in 0..weights.len() {
            if !tunable[i] {
                continue;
            }
            let g = grad[i];
            let lr = learning_rate * (max[i] - min[i]) / RANGE_UNIT;
            let delta = match self.kind {
                OptimizerKind::Adam => {
                    self.first[i] = ADAM_BETA1 * self.first[i] + (1.0 - ADAM_BETA1) * g;
                    self.second[i] = ADAM_BETA2 * self.second[i] + (1.0 - ADAM_BETA2) * g * g;
                    let m = self.first[i] / (1.0 - ADAM_BETA1.powf(t));
                    let v = self.second[i] / (1.0 - ADAM_BETA2.powf(t));
                    lr * m / (v.sqrt() + EPSILON)
                }
                OptimizerKind::Adagrad => {
                    self.second[i] += g * g;
                    lr * g / (self.second[i].sqrt() + EPSILON)
                }
                OptimizerKind::Momentum => {
                    self.second[i] = ADAM_BETA2 * self.second[i] + (1.0 - ADAM_BETA2) * g * g;
                    let rms = (self.second[i] / (1.0 - ADAM_BETA2.powf(t))).sqrt() + EPSILON;
                    self.first[i] = MOMENTUM * self.first[i] + g / rms;
                    lr * (1.0 - MOMENTUM) * self.first[i]
                }
            };
            weights[i] = (weights[i] - delta).clamp(min[i], max[i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every optimiser minimises a separable quadratic and respects bounds.
    #[test]
    fn optimisers_minimise_a_quadratic() {
        for kind in [
            OptimizerKind::Adam,
            OptimizerKind::Adagrad,
            OptimizerKind::Momentum,
        ] {
            let target = [30.0, -40.0, 500.0];
            let mut w = vec![0.0; 3];
            let min = vec![-100.0, -100.0, -100.0];
            let max = vec![100.0, 100.0, 100.0];
            let mut opt = Optimizer::new(kind, 3);
            for _ in 0..3000 {
                let grad: Vec<f64> = w.iter().zip(&target).map(|(a, b)| 2.0 * (a - b)).collect();
                opt.step(
                    &mut w,
                    &grad,
                    kind.default_learning_rate(),
                    &[true; 3],
                    &min,
                    &max,
                );
            }
            assert!((w[0] - 30.0).abs() < 1.0, "{kind:?} {w:?}");
            assert!((w[1] + 40.0).abs() < 1.0, "{kind:?} {w:?}");
            assert_eq!(w[2], 100.0, "{kind:?} clamps");
        }
    }
}
