//! The sequential probability ratio test that stops a match as soon as it
//! has decided between H0: "the first player is `elo0` stronger" and H1:
//! "it is `elo1` stronger", with error rates α (accepting H1 when H0 holds)
//! and β (accepting H0 when H1 holds).
//!
//! It is the generalised SPRT (GSPRT) of fishtest and fastchess (Michel Van
//! den Bergh, "Comments on Normalized Elo"), on the pentanomial record of
//! game pairs, or on the trinomial record when games are not paired. With
//! outcome scores `aᵢ` per game (see [`crate::play::elo`]), counts `nᵢ` —
//! each count of 0 replaced by ε = 0.001, so that one-sided records still
//! decide — `N = Σ nᵢ` and `p̂ᵢ = nᵢ/N`:
//!
//! * under each hypothesis, the maximum-likelihood distribution `p` closest
//!   to the observed one that satisfies the hypothesis is
//!   `pᵢ = p̂ᵢ / (1 + θ·φᵢ)`, with `θ` the root of `Σ p̂ᵢ·φᵢ/(1 + θ·φᵢ) = 0`;
//! * logistic model (bounds in logistic Elo): the hypothesis is a mean
//!   score `s = 1/(1 + 10^(-elo/400))` per game, and `φᵢ = aᵢ - s`;
//! * normalized model (bounds in normalized Elo): the hypothesis is
//!   `(μ - ½)/σ = t` with `t = nElo·√g/(800/ln 10)` (`g` games per sample:
//!   1 for games, 2 for pairs), and `φᵢ = aᵢ - ½ - ½·t·σ·(1 + ((aᵢ - μ)/σ)²)`
//!   where `μ`, `σ` are those of the current `p`; `p` is found by repeating
//!   the step from the uniform distribution until it stops changing;
//! * `LLR = N · Σ p̂ᵢ · ln(p₁ᵢ / p₀ᵢ)` (0 before the first sample);
//! * the test accepts H1 when `LLR ≥ ln((1 - β)/α)` and H0 when
//!   `LLR ≤ ln(β/(1 - α))`, and continues in between.

use std::fmt;
use std::str::FromStr;

use crate::play::elo::{
    NELO_PER_SIGMA, PENTANOMIAL_SCORES, Pentanomial, Record, TRINOMIAL_SCORES, expected_score,
};

/// What a zero count is replaced by.
const ZERO_COUNT: f64 = 1e-3;
/// The normalized model's fixed-point iteration stops when no probability
/// moves more than this …
const MLE_TOLERANCE: f64 = 1e-12;
/// … or after this many steps.
const MLE_MAX_STEPS: usize = 10_000;
/// Bisection steps for `θ` (more than enough for full `f64` precision).
const BISECTION_STEPS: usize = 200;

/// The scale the Elo bounds of an SPRT are given on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EloModel {
    /// Logistic Elo (the default; the scale of the match report's Elo).
    Logistic,
    /// Normalized Elo (fishtest's scale; independent of the draw rate).
    Normalized,
}

impl EloModel {
    /// The name used in `--sprt model=…`.
    pub fn name(self) -> &'static str {
        match self {
            EloModel::Logistic => "logistic",
            EloModel::Normalized => "normalized",
        }
    }
}

/// The hypotheses and error rates of an SPRT.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    /// Elo difference of the null hypothesis.
    pub elo0: f64,
    /// Elo difference of the alternative hypothesis.
    pub elo1: f64,
    /// Probability of accepting H1 when H0 holds.
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds.
    pub beta: f64,
    /// The scale of `elo0` and `elo1`.
    pub model: EloModel,
}

/// Where an SPRT stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtDecision {
    /// Not decided yet: keep playing.
    Continue,
    /// The null hypothesis (`elo0`) is accepted.
    AcceptH0,
    /// The alternative hypothesis (`elo1`) is accepted.
    AcceptH1,
}

impl SprtDecision {
    /// A short human-readable verdict.
    pub fn verdict(self) -> &'static str {
        match self {
            SprtDecision::AcceptH0 => "H0 accepted",
            SprtDecision::AcceptH1 => "H1 accepted",
            SprtDecision::Continue => "no decision",
        }
    }
}

impl Default for Sprt {
    fn default() -> Self {
        Sprt {
            elo0: 0.0,
            elo1: 5.0,
            alpha: 0.05,
            beta: 0.05,
            model: EloModel::Logistic,
        }
    }
}

impl Sprt {
    /// The lower bound `ln(β / (1 - α))`: accept H0 at or below it.
    pub fn lower_bound(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    /// The upper bound `ln((1 - β) / α)`: accept H1 at or above it.
    pub fn upper_bound(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }

    /// The log-likelihood ratio of H1 against H0 on game pairs.
    pub fn llr_pairs(&self, pairs: &Pentanomial) -> f64 {
        self.llr(&PENTANOMIAL_SCORES, &pairs.frequencies(), 2.0)
    }

    /// The log-likelihood ratio of H1 against H0 on unpaired games.
    pub fn llr_games(&self, record: &Record) -> f64 {
        self.llr(&TRINOMIAL_SCORES, &record.counts(), 1.0)
    }

    /// The log-likelihood ratio of `counts[i]` samples of per-game score
    /// `scores[i]`, each sample the average of `games_per_sample` games
    /// (see the module documentation).
    pub fn llr(&self, scores: &[f64], counts: &[u64], games_per_sample: f64) -> f64 {
        if counts.iter().all(|&c| c == 0) {
            return 0.0;
        }
        let regularised: Vec<f64> = counts
            .iter()
            .map(|&c| if c == 0 { ZERO_COUNT } else { c as f64 })
            .collect();
        let n: f64 = regularised.iter().sum();
        let observed: Vec<f64> = regularised.iter().map(|c| c / n).collect();
        let [p0, p1] = [self.elo0, self.elo1].map(|elo| match self.model {
            EloModel::Logistic => mle_for_mean(scores, &observed, expected_score(elo)),
            EloModel::Normalized => {
                let t = elo * games_per_sample.sqrt() / NELO_PER_SIGMA;
                mle_for_t(scores, &observed, t)
            }
        });
        n * observed
            .iter()
            .zip(p0.iter().zip(&p1))
            .map(|(o, (a, b))| o * (b.ln() - a.ln()))
            .sum::<f64>()
    }

    /// The decision at log-likelihood ratio `llr`.
    pub fn decide(&self, llr: f64) -> SprtDecision {
        if llr >= self.upper_bound() {
            SprtDecision::AcceptH1
        } else if llr <= self.lower_bound() {
            SprtDecision::AcceptH0
        } else {
            SprtDecision::Continue
        }
    }
}

/// `p̂ᵢ / (1 + θ·φᵢ)` for the `θ` that makes it a distribution:
/// the root of `Σ p̂ᵢ·φᵢ/(1 + θ·φᵢ) = 0`, which lies in
/// `(-1/max φ, -1/min φ)` where the sum falls from +∞ to -∞. When the `φᵢ`
/// do not change sign there is no such distribution; `p̂` is returned.
fn tilt(observed: &[f64], phi: &[f64]) -> Vec<f64> {
    let (low_phi, high_phi) = phi
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
    if !(low_phi < 0.0 && high_phi > 0.0) {
        return observed.to_vec();
    }
    let sum = |theta: f64| -> f64 {
        observed
            .iter()
            .zip(phi)
            .map(|(o, f)| o * f / (1.0 + theta * f))
            .sum()
    };
    let (mut low, mut high) = (-1.0 / high_phi, -1.0 / low_phi);
    for _ in 0..BISECTION_STEPS {
        let mid = 0.5 * (low + high);
        if mid <= low || mid >= high {
            break;
        }
        if sum(mid) > 0.0 {
            low = mid;
        } else {
            high = mid;
        }
    }
    let theta = 0.5 * (low + high);
    observed
        .iter()
        .zip(phi)
        .map(|(o, f)| o / (1.0 + theta * f))
        .collect()
}

/// The distribution closest to `observed` (maximum likelihood) with mean
/// score `mean`.
fn mle_for_mean(scores: &[f64], observed: &[f64], mean: f64) -> Vec<f64> {
    let phi: Vec<f64> = scores.iter().map(|a| a - mean).collect();
    tilt(observed, &phi)
}

/// The distribution closest to `observed` (maximum likelihood) with
/// `(μ - ½)/σ = t`.
fn mle_for_t(scores: &[f64], observed: &[f64], t: f64) -> Vec<f64> {
    let mut p = vec![1.0 / scores.len() as f64; scores.len()];
    for _ in 0..MLE_MAX_STEPS {
        let mu: f64 = scores.iter().zip(&p).map(|(a, q)| a * q).sum();
        let sigma = scores
            .iter()
            .zip(&p)
            .map(|(a, q)| q * (a - mu).powi(2))
            .sum::<f64>()
            .sqrt();
        let phi: Vec<f64> = scores
            .iter()
            .map(|a| a - 0.5 - 0.5 * t * sigma * (1.0 + ((a - mu) / sigma).powi(2)))
            .collect();
        let next = tilt(observed, &phi);
        let change = next
            .iter()
            .zip(&p)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        p = next;
        if change < MLE_TOLERANCE {
            break;
        }
    }
    p
}

/// Why an SPRT specification could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SprtParseError {
    /// A word is not `name=value`.
    #[error("{0:?} is not name=value")]
    NotAPair(String),
    /// An unknown parameter name.
    #[error("unknown SPRT parameter {0:?} (expected elo0, elo1, alpha, beta, model)")]
    UnknownName(String),
    /// A value is not a number.
    #[error("{0:?} is not a number")]
    NotANumber(String),
    /// An unknown Elo model.
    #[error("unknown Elo model {0:?} (expected logistic or normalized)")]
    UnknownModel(String),
    /// The parameters make no test.
    #[error("need elo0 < elo1 and 0 < alpha, beta < 0.5")]
    Inconsistent,
}

impl FromStr for Sprt {
    type Err = SprtParseError;

    /// Parses `elo0=0 elo1=5 alpha=0.05 beta=0.05 model=logistic` (words
    /// separated by spaces or commas, any order, missing ones at their
    /// defaults).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut sprt = Sprt::default();
        for word in text.split([' ', ',']).filter(|w| !w.is_empty()) {
            let (name, value) = word
                .split_once('=')
                .ok_or_else(|| SprtParseError::NotAPair(word.to_string()))?;
            if name == "model" {
                sprt.model = match value {
                    "logistic" => EloModel::Logistic,
                    "normalized" => EloModel::Normalized,
                    _ => return Err(SprtParseError::UnknownModel(value.to_string())),
                };
                continue;
            }
            let number: f64 = value
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| SprtParseError::NotANumber(value.to_string()))?;
            match name {
                "elo0" => sprt.elo0 = number,
                "elo1" => sprt.elo1 = number,
                "alpha" => sprt.alpha = number,
                "beta" => sprt.beta = number,
                _ => return Err(SprtParseError::UnknownName(name.to_string())),
            }
        }
        let rate_ok = |r: f64| r > 0.0 && r < 0.5;
        if sprt.elo0 >= sprt.elo1 || !rate_ok(sprt.alpha) || !rate_ok(sprt.beta) {
            return Err(SprtParseError::Inconsistent);
        }
        Ok(sprt)
    }
}

impl fmt::Display for Sprt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "elo0={} elo1={} alpha={} beta={} model={}",
            self.elo0,
            self.elo1,
            self.alpha,
            self.beta,
            self.model.name()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(wins: u64, draws: u64, losses: u64) -> Record {
        Record {
            wins,
            draws,
            losses,
        }
    }

    #[test]
    fn bounds() {
        let sprt: Sprt = "elo0=0 elo1=5 alpha=0.05 beta=0.05".parse().unwrap();
        // ln(0.05/0.95) = -2.9444
        assert!((sprt.lower_bound() + 2.944_44).abs() < 1e-4);
        assert!((sprt.upper_bound() - 2.944_44).abs() < 1e-4);
        assert_eq!(sprt.decide(0.0), SprtDecision::Continue);
        assert_eq!(sprt.decide(3.0), SprtDecision::AcceptH1);
        assert_eq!(sprt.decide(-3.0), SprtDecision::AcceptH0);
    }

    #[test]
    fn logistic_llr_by_hand() {
        // W=D=L=100: observed (⅓, ⅓, ⅓), s = 0.5. Under s0 = 0.5 the MLE
        // is the observed distribution itself (θ = 0). Under
        // s1 = s(5) = 0.507195 the root of Σ ⅓(aᵢ - s1)/(1 + θ(aᵢ - s1))
        // is θ = -0.043177 (Newton's method from θ = 0, as below; the LLR is
        // then 100 · Σ -ln(1 + θ(aᵢ - s1)) = -0.046596).
        let sprt = Sprt::default();
        let s1 = expected_score(5.0);
        let d = [0.0 - s1, 0.5 - s1, 1.0 - s1];
        let f = |t: f64| d.iter().map(|x| x / (1.0 + t * x)).sum::<f64>();
        let df = |t: f64| -d.iter().map(|x| x * x / (1.0 + t * x).powi(2)).sum::<f64>();
        let mut theta = 0.0;
        for _ in 0..20 {
            theta -= f(theta) / df(theta);
        }
        assert!((theta + 0.043_177).abs() < 1e-5, "{theta}");
        let expected = 100.0 * d.iter().map(|x| -(1.0 + theta * x).ln()).sum::<f64>();
        let llr = sprt.llr_games(&record(100, 100, 100));
        assert!((llr - expected).abs() < 1e-9, "{llr} {expected}");
        // The normal approximation N·(s1 - s0)(2s - s0 - s1)/(2σ²) with
        // σ² = 1/6 gives -0.0466: the exact GSPRT is close to it.
        assert!((llr + 0.046_596).abs() < 1e-6, "{llr}");
    }

    #[test]
    fn decisions_on_clear_records() {
        let sprt = Sprt::default();
        let decide = |r: Record| sprt.decide(sprt.llr_games(&r));
        assert_eq!(decide(Record::default()), SprtDecision::Continue);
        assert_eq!(decide(record(260, 100, 40)), SprtDecision::AcceptH1);
        assert_eq!(decide(record(40, 100, 260)), SprtDecision::AcceptH0);
        assert_eq!(decide(record(5, 10, 5)), SprtDecision::Continue);
        // One-sided records decide too (zero counts are regularised).
        assert_eq!(decide(record(0, 0, 400)), SprtDecision::AcceptH0);
        assert_eq!(decide(record(0, 0, 1)), SprtDecision::Continue);
        // A one-sided record gains at most ln(s1/s0) per sample (the MLE
        // under H0 must put mass s0 on the win side): 100 pairs of two wins
        // are 100·ln(0.507195/0.5) = 1.43, not enough for [0, 5]; 300 are.
        let mut pairs = Pentanomial {
            ww: 100,
            ..Pentanomial::default()
        };
        let llr = sprt.llr_pairs(&pairs);
        assert!(
            (llr - 100.0 * (expected_score(5.0) / 0.5).ln()).abs() < 0.01,
            "{llr}"
        );
        assert_eq!(sprt.decide(llr), SprtDecision::Continue);
        pairs.ww = 300;
        assert_eq!(sprt.decide(sprt.llr_pairs(&pairs)), SprtDecision::AcceptH1);
    }

    #[test]
    fn mle_satisfies_its_constraint() {
        let observed = [0.05, 0.2, 0.45, 0.2, 0.1];
        let p = mle_for_mean(&PENTANOMIAL_SCORES, &observed, 0.53);
        let mean: f64 = PENTANOMIAL_SCORES.iter().zip(&p).map(|(a, q)| a * q).sum();
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((mean - 0.53).abs() < 1e-12);
        let t = 0.1;
        let p = mle_for_t(&PENTANOMIAL_SCORES, &observed, t);
        let mu: f64 = PENTANOMIAL_SCORES.iter().zip(&p).map(|(a, q)| a * q).sum();
        let var: f64 = PENTANOMIAL_SCORES
            .iter()
            .zip(&p)
            .map(|(a, q)| q * (a - mu).powi(2))
            .sum();
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(((mu - 0.5) / var.sqrt() - t).abs() < 1e-6, "{p:?}");
    }

    #[test]
    fn parse_errors() {
        assert!("elo0=5 elo1=0".parse::<Sprt>().is_err());
        assert!("gamma=1".parse::<Sprt>().is_err());
        assert!("elo0".parse::<Sprt>().is_err());
        assert!("elo1=nan".parse::<Sprt>().is_err());
        assert!("model=bayes".parse::<Sprt>().is_err());
        let s: Sprt = "elo1=10,alpha=0.1 model=normalized".parse().unwrap();
        assert_eq!((s.elo0, s.elo1, s.alpha, s.beta), (0.0, 10.0, 0.1, 0.05));
        assert_eq!(s.model, EloModel::Normalized);
        assert_eq!(s.to_string().parse::<Sprt>().unwrap(), s);
    }
}
