//! The SPSA schedule in the form OpenBench uses (after fishtest): each
//! tuned parameter has a start value, a range, and the perturbation `c_end`
//! and learning rate `r_end` it should have at the last iteration; the
//! global decay exponents `α` (learning rate) and `γ` (perturbation) and the
//! stability offset `A = a_ratio · N` (N iterations) turn them into
//!
//! * `c = c_end · N^γ`, `a = r_end · c_end² · (A + N)^α` (fixed per run);
//! * at iteration `k` (1-based): `c_k = max(c / k^γ, ½)` (half a unit: an
//!   integer parameter must move) and `r_k = a / (A + k)^α / c_k²`, so that
//!   `c_N = c_end` and `r_N = r_end`;
//! * each parameter gets a random sign `δ = ±1`; the first player plays
//!   `θ + δ·c_k`, the second `θ - δ·c_k`, both rounded with the same random
//!   offset (`⌊x + u⌋`, `u` uniform in [0, 1): unbiased rounding) and
//!   clipped to the range;
//! * after the iteration's game pairs, with `W - L` the first player's wins
//!   minus losses, `θ ← clip(θ + r_k · c_k · (W - L) · δ)`.
//!
//! The signs and rounding offsets of iteration `k` come from the run's seed
//! and `k` alone, so a resumed run draws exactly what an uninterrupted one
//! would.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// OpenBench's learning-rate decay exponent α.
pub const DEFAULT_ALPHA: f64 = 0.602;
/// OpenBench's perturbation decay exponent γ.
pub const DEFAULT_GAMMA: f64 = 0.101;
/// OpenBench's `A` as a share of the iterations.
pub const DEFAULT_A_RATIO: f64 = 0.1;
/// OpenBench's usual final learning rate.
pub const DEFAULT_R_END: f64 = 0.002;
/// The perturbation of an integer parameter never falls below half a unit.
const MIN_PERTURBATION: f64 = 0.5;
/// Mixed into the seed for each iteration's draws.
const ITERATION_SEED_MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// One parameter being tuned.
#[derive(Clone, Debug, PartialEq)]
pub struct Tunable {
    /// The UCI option name.
    pub name: String,
    /// Where the tune starts.
    pub start: f64,
    /// Smallest value tried.
    pub min: f64,
    /// Largest value tried.
    pub max: f64,
    /// Perturbation at the last iteration.
    pub c_end: f64,
    /// Learning rate at the last iteration.
    pub r_end: f64,
}

/// The global settings of the schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    /// Iterations of the whole run (N).
    pub iterations: usize,
    /// Learning-rate decay exponent.
    pub alpha: f64,
    /// Perturbation decay exponent.
    pub gamma: f64,
    /// `A` as a share of N.
    pub a_ratio: f64,
}

impl Schedule {
    /// OpenBench's defaults for `iterations` iterations.
    pub fn openbench(iterations: usize) -> Self {
        Schedule {
            iterations,
            alpha: DEFAULT_ALPHA,
            gamma: DEFAULT_GAMMA,
            a_ratio: DEFAULT_A_RATIO,
        }
    }

    fn big_a(&self) -> f64 {
        self.a_ratio * self.iterations as f64
    }

    /// The perturbation `c_k` of `t` at iteration `k` (1-based).
    pub fn c(&self, t: &Tunable, k: usize) -> f64 {
        let c = t.c_end * (self.iterations as f64).powf(self.gamma);
        (c / (k as f64).powf(self.gamma)).max(MIN_PERTURBATION)
    }

    /// The learning rate `r_k` of `t` at iteration `k` (1-based).
    pub fn r(&self, t: &Tunable, k: usize) -> f64 {
        let n = self.iterations as f64;
        let a = t.r_end * t.c_end * t.c_end * (self.big_a() + n).powf(self.alpha);
        let c = self.c(t, k);
        a / (self.big_a() + k as f64).powf(self.alpha) / (c * c)
    }
}

/// The two value sets of one iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct Perturbation {
    /// The sign `δ` of each parameter.
    pub flips: Vec<f64>,
    /// Values of the first player, `θ + δ·c_k` rounded and clipped.
    pub plus: Vec<i32>,
    /// Values of the second player, `θ - δ·c_k` rounded and clipped.
    pub minus: Vec<i32>,
}

/// Draws the perturbation of iteration `k` around `theta`.
pub fn perturb(
    schedule: &Schedule,
    tunables: &[Tunable],
    theta: &[f64],
    k: usize,
    seed: u64,
) -> Perturbation {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (k as u64).wrapping_mul(ITERATION_SEED_MIX));
    let mut p = Perturbation {
        flips: Vec::with_capacity(tunables.len()),
        plus: Vec::with_capacity(tunables.len()),
        minus: Vec::with_capacity(tunables.len()),
    };
    for (t, value) in tunables.iter().zip(theta) {
        let flip = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        let offset: f64 = rng.random();
        let c = schedule.c(t, k);
        let round = |x: f64| (x + offset).floor().clamp(t.min, t.max) as i32;
        p.flips.push(flip);
        p.plus.push(round(value + flip * c));
        p.minus.push(round(value - flip * c));
    }
    p
}

/// `θ` after iteration `k` in which the first player scored `wins -
/// losses` more wins than losses.
pub fn update(
    schedule: &Schedule,
    tunables: &[Tunable],
    theta: &[f64],
    flips: &[f64],
    k: usize,
    wins_minus_losses: i64,
) -> Vec<f64> {
    tunables
        .iter()
        .zip(theta.iter().zip(flips))
        .map(|(t, (value, flip))| {
            let step = schedule.r(t, k) * schedule.c(t, k) * wins_minus_losses as f64 * flip;
            (value + step).clamp(t.min, t.max)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tunable() -> Tunable {
        Tunable {
            name: "x".into(),
            start: 100.0,
            min: 0.0,
            max: 400.0,
            c_end: 10.0,
            r_end: 0.002,
        }
    }

    #[test]
    fn ends_at_c_end_and_r_end() {
        let s = Schedule::openbench(1000);
        let t = tunable();
        assert!((s.c(&t, 1000) - 10.0).abs() < 1e-9);
        assert!((s.r(&t, 1000) - 0.002).abs() < 1e-12);
        // By hand: c = 10·1000^0.101 = 20.09, c_1 = 20.09;
        // a = 0.002·100·1100^0.602 = 13.55, r_1 = a/101^0.602/c_1² = 0.002086.
        assert!((s.c(&t, 1) - 20.09).abs() < 0.01, "{}", s.c(&t, 1));
        assert!((s.r(&t, 1) - 0.002_086).abs() < 1e-6, "{}", s.r(&t, 1));
        // The perturbation of an integer never drops below half a unit.
        let small = Tunable {
            c_end: 0.1,
            ..tunable()
        };
        assert_eq!(s.c(&small, 1000), 0.5);
    }

    #[test]
    fn converges_on_a_simulated_match() {
        // Two parameters whose Elo is -(θ - best)²/4 (best 70 and -20); each
        // iteration plays 8 games of θ+ against θ- with the logistic
        // expected score of their Elo difference and no draws.
        let best = [70.0, -20.0];
        let elo = |v: &[i32]| -> f64 {
            v.iter()
                .zip(best)
                .map(|(x, b)| -(f64::from(*x) - b).powi(2) / 4.0)
                .sum()
        };
        let tunables = vec![
            Tunable {
                name: "a".into(),
                start: 10.0,
                min: -100.0,
                max: 100.0,
                c_end: 4.0,
                r_end: 0.05,
            },
            Tunable {
                name: "b".into(),
                start: 30.0,
                min: -100.0,
                max: 100.0,
                c_end: 4.0,
                r_end: 0.05,
            },
        ];
        let s = Schedule::openbench(600);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut theta: Vec<f64> = tunables.iter().map(|t| t.start).collect();
        for k in 1..=s.iterations {
            let p = perturb(&s, &tunables, &theta, k, 9);
            let diff = elo(&p.plus) - elo(&p.minus);
            let win = 1.0 / (1.0 + 10f64.powf(-diff / 400.0));
            let wins = (0..8).filter(|_| rng.random_bool(win)).count() as i64;
            theta = update(&s, &tunables, &theta, &p.flips, k, 2 * wins - 8);
        }
        assert!((theta[0] - 70.0).abs() < 8.0, "{theta:?}");
        assert!((theta[1] + 20.0).abs() < 8.0, "{theta:?}");
    }

    #[test]
    fn perturbations_are_symmetric_reproducible_and_clipped() {
        let s = Schedule::openbench(100);
        let tunables = vec![tunable(), tunable(), tunable()];
        let theta = [100.0, 0.2, 399.9];
        let p = perturb(&s, &tunables, &theta, 7, 42);
        assert_eq!(p, perturb(&s, &tunables, &theta, 7, 42));
        assert_ne!(p, perturb(&s, &tunables, &theta, 8, 42));
        let c = s.c(&tunables[0], 7);
        // plus - minus is 2c rounded (either way), in the flip's direction.
        let d = f64::from(p.plus[0] - p.minus[0]) * p.flips[0];
        assert!((d - 2.0 * c).abs() <= 1.0, "{p:?}");
        // Clipped at the ends of the range.
        assert!(p.plus[1].min(p.minus[1]) == 0 && p.plus[2].max(p.minus[2]) == 400);
        // The update moves along the flip, proportionally to W - L.
        let next = update(&s, &tunables, &theta, &p.flips, 7, 3);
        let expected = 100.0 + s.r(&tunables[0], 7) * c * 3.0 * p.flips[0];
        assert!((next[0] - expected).abs() < 1e-12);
        assert_eq!(update(&s, &tunables, &theta, &p.flips, 7, 0), theta);
        let far = update(&s, &tunables, &theta, &p.flips, 7, 1_000_000);
        assert!(far.iter().all(|v| (0.0..=400.0).contains(v)));
    }
}
