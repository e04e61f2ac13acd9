//! Match statistics: the Elo difference implied by a W/D/L record with its
//! 95% confidence interval, the likelihood of superiority (LOS), and the
//! sequential probability ratio test (SPRT) that stops a match early.
//!
//! All results are from the first player's point of view, on the logistic
//! Elo scale. With `N = W + D + L` games:
//!
//! * score `s = (W + D/2) / N`; Elo of a score `E(s) = -400 · log10(1/s - 1)`
//!   and its inverse, the expected score of an Elo difference,
//!   `s(E) = 1 / (1 + 10^(-E/400))`;
//! * per-game score variance `σ² = (W(1-s)² + D(½-s)² + L(0-s)²) / N`; the
//!   95% interval is `E(s ± 1.96 · σ/√N)`;
//! * `LOS = ½ · (1 + erf((W - L) / √(2(W + L))))` (draws carry no
//!   information about which side is stronger);
//! * SPRT of H0: `Elo = elo0` against H1: `Elo = elo1`, as a generalised SPRT
//!   on the trinomial W/D/L record with the normal approximation of the
//!   log-likelihood ratio:
//!   `LLR ≈ N · (s1 - s0) · (2s - s0 - s1) / (2σ²)` with `s0 = s(elo0)`,
//!   `s1 = s(elo1)`. The test stops with H0 accepted when
//!   `LLR ≤ ln(β / (1 - α))` and with H1 accepted when
//!   `LLR ≥ ln((1 - β) / α)`; α is the false-positive rate (accepting H1
//!   when H0 holds), β the false-negative rate. For the SPRT, σ² is computed
//!   with half a pseudo-game added to each of W, D and L (around the observed
//!   `s`), so that a one-sided record (only losses, say) still has a positive
//!   variance and can stop the test; the effect vanishes as N grows. The LLR
//!   is 0 before the first game.

use std::fmt;
use std::str::FromStr;

/// Two-sided 95% quantile of the standard normal distribution.
pub const Z_95: f64 = 1.959_963_984_540_054;
/// Points of a draw.
const DRAW_POINTS: f64 = 0.5;
/// Pseudo-games added to each of W, D, L for the SPRT's variance, so that a
/// one-sided record (only losses, say) still has a positive variance.
pub const SPRT_PSEUDO_GAMES: f64 = 0.5;
/// Elo points per factor 10 of the odds.
const ELO_PER_DECADE: f64 = 400.0;

/// The expected score of a player `elo` points stronger than its opponent.
pub fn expected_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / ELO_PER_DECADE))
}

/// The Elo difference whose expected score is `score` (±infinity at 1 and
/// 0).
pub fn elo_of_score(score: f64) -> f64 {
    if score <= 0.0 {
        f64::NEG_INFINITY
    } else if score >= 1.0 {
        f64::INFINITY
    } else {
        // `+ 0.0` turns the -0.0 of an even score into 0.0 for display.
        -ELO_PER_DECADE * (1.0 / score - 1.0).log10() + 0.0
    }
}

/// The error function (Abramowitz and Stegun 7.1.26, absolute error below
/// 1.5e-7).
pub fn erf(x: f64) -> f64 {
    const P: f64 = 0.327_591_1;
    const A: [f64; 5] = [
        0.254_829_592,
        -0.284_496_736,
        1.421_413_741,
        -1.453_152_027,
        1.061_405_429,
    ];
    let sign = x.signum();
    let x = x.abs();
    let t = 1.0 / (1.0 + P * x);
    let poly = A.iter().rev().fold(0.0, |acc, a| acc * t + a) * t;
    sign * (1.0 - poly * (-x * x).exp())
}

/// A match record from the first player's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Games won by the first player.
    pub wins: u64,
    /// Drawn games.
    pub draws: u64,
    /// Games lost by the first player.
    pub losses: u64,
}

/// An Elo estimate with its 95% confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EloEstimate {
    /// The point estimate.
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
}

impl Record {
    /// Games played.
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// Points of the first player (a draw is half a point).
    pub fn points(&self) -> f64 {
        self.wins as f64 + DRAW_POINTS * self.draws as f64
    }

    /// The mean score per game (0.5 before any game).
    pub fn score(&self) -> f64 {
        match self.games() {
            0 => DRAW_POINTS,
            n => self.points() / n as f64,
        }
    }

    /// Variance of the score of one game around the mean score.
    pub fn score_variance(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            return 0.0;
        }
        let s = self.score();
        (self.wins as f64 * (1.0 - s).powi(2)
            + self.draws as f64 * (DRAW_POINTS - s).powi(2)
            + self.losses as f64 * s.powi(2))
            / n as f64
    }

    /// The Elo difference with its 95% interval.
    pub fn elo(&self) -> EloEstimate {
        let s = self.score();
        let n = self.games().max(1) as f64;
        let margin = Z_95 * (self.score_variance() / n).sqrt();
        EloEstimate {
            elo: elo_of_score(s),
            low: elo_of_score(s - margin),
            high: elo_of_score(s + margin),
        }
    }

    /// Likelihood of superiority: the probability that the first player is
    /// the stronger one.
    pub fn los(&self) -> f64 {
        let decisive = (self.wins + self.losses) as f64;
        if decisive == 0.0 {
            return DRAW_POINTS;
        }
        let lead = self.wins as f64 - self.losses as f64;
        0.5 * (1.0 + erf(lead / (2.0 * decisive).sqrt()))
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

impl Default for Sprt {
    fn default() -> Self {
        Sprt {
            elo0: 0.0,
            elo1: 5.0,
            alpha: 0.05,
            beta: 0.05,
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

    /// The log-likelihood ratio of H1 against H0 given `record` (see the
    /// module documentation).
    pub fn llr(&self, record: &Record) -> f64 {
        if record.games() == 0 {
            return 0.0;
        }
        let variance = regularised_variance(record);
        let s0 = expected_score(self.elo0);
        let s1 = expected_score(self.elo1);
        let n = record.games() as f64;
        n * (s1 - s0) * (2.0 * record.score() - s0 - s1) / (2.0 * variance)
    }

    /// The decision after `record`.
    pub fn decision(&self, record: &Record) -> SprtDecision {
        let llr = self.llr(record);
        if llr >= self.upper_bound() {
            SprtDecision::AcceptH1
        } else if llr <= self.lower_bound() {
            SprtDecision::AcceptH0
        } else {
            SprtDecision::Continue
        }
    }
}

/// The per-game score variance of `record` with [`SPRT_PSEUDO_GAMES`] added
/// to each of W, D and L, around the observed mean score.
fn regularised_variance(record: &Record) -> f64 {
    let s = record.score();
    let [w, d, l] =
        [record.wins, record.draws, record.losses].map(|c| c as f64 + SPRT_PSEUDO_GAMES);
    (w * (1.0 - s).powi(2) + d * (DRAW_POINTS - s).powi(2) + l * s.powi(2)) / (w + d + l)
}

/// Why an SPRT specification could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SprtParseError {
    /// A word is not `name=value`.
    #[error("{0:?} is not name=value")]
    NotAPair(String),
    /// An unknown parameter name.
    #[error("unknown SPRT parameter {0:?} (expected elo0, elo1, alpha, beta)")]
    UnknownName(String),
    /// A value is not a number.
    #[error("{0:?} is not a number")]
    NotANumber(String),
    /// The parameters make no test.
    #[error("need elo0 < elo1 and 0 < alpha, beta < 0.5")]
    Inconsistent,
}

impl FromStr for Sprt {
    type Err = SprtParseError;

    /// Parses `elo0=0 elo1=5 alpha=0.05 beta=0.05` (words separated by
    /// spaces or commas, any order, missing ones at their defaults).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut sprt = Sprt::default();
        for word in text.split([' ', ',']).filter(|w| !w.is_empty()) {
            let (name, value) = word
                .split_once('=')
                .ok_or_else(|| SprtParseError::NotAPair(word.to_string()))?;
            let value: f64 = value
                .parse()
                .map_err(|_| SprtParseError::NotANumber(value.to_string()))?;
            match name {
                "elo0" => sprt.elo0 = value,
                "elo1" => sprt.elo1 = value,
                "alpha" => sprt.alpha = value,
                "beta" => sprt.beta = value,
                _ => return Err(SprtParseError::UnknownName(name.to_string())),
            }
        }
        let rate_ok = |r: f64| r > 0.0 && r < DRAW_POINTS;
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
            "elo0={} elo1={} alpha={} beta={}",
            self.elo0, self.elo1, self.alpha, self.beta
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
    fn even_score_is_zero_elo() {
        let e = record(10, 10, 10).elo();
        assert!(e.elo.abs() < 1e-9);
        assert!(e.low < 0.0 && e.high > 0.0);
        assert!((e.low + e.high).abs() < 1e-9, "symmetric: {e:?}");
    }

    #[test]
    fn known_elo_values() {
        // s = 0.7: -400 log10(3/7) = 147.19
        let e = record(60, 20, 20).elo();
        assert!((e.elo - 147.19).abs() < 0.01, "{e:?}");
        assert!(e.low < e.elo && e.elo < e.high);
        // s = 0.75 → 190.85 Elo; expected_score inverts elo_of_score.
        assert!((elo_of_score(0.75) - 190.85).abs() < 0.01);
        assert!((expected_score(elo_of_score(0.3)) - 0.3).abs() < 1e-12);
        assert!(elo_of_score(1.0).is_infinite());
    }

    #[test]
    fn known_los_values() {
        assert!((record(5, 3, 5).los() - 0.5).abs() < 1e-9);
        // (10 - 5) / sqrt(30) = 0.9129; erf = 0.80329 → 0.90165
        assert!((record(10, 7, 5).los() - 0.901_65).abs() < 1e-4);
        assert!(record(60, 20, 20).los() > 0.9999);
        assert!((erf(1.0) - 0.842_700_79).abs() < 1e-6);
    }

    #[test]
    fn sprt_bounds_and_decisions() {
        let sprt: Sprt = "elo0=0 elo1=5 alpha=0.05 beta=0.05".parse().unwrap();
        assert!((sprt.lower_bound() + 2.944_44).abs() < 1e-4);
        assert!((sprt.upper_bound() - 2.944_44).abs() < 1e-4);
        assert_eq!(sprt.decision(&Record::default()), SprtDecision::Continue);
        // A clearly better player (s = 0.775 over 400 games) accepts H1 …
        assert_eq!(sprt.decision(&record(260, 100, 40)), SprtDecision::AcceptH1);
        // … a clearly worse one H0, and a short even match continues.
        assert_eq!(sprt.decision(&record(40, 100, 260)), SprtDecision::AcceptH0);
        assert_eq!(sprt.decision(&record(5, 10, 5)), SprtDecision::Continue);
        // A one-sided record still decides (regularised variance).
        assert_eq!(sprt.decision(&record(0, 0, 400)), SprtDecision::AcceptH0);
        assert_eq!(sprt.decision(&record(0, 0, 1)), SprtDecision::Continue);
        // Hand-computed: W=D=L=100, s = 0.5, σ² = 1/6; s0 = 0.5,
        // s1 = 0.507195; LLR = 300 · 0.007195 · (−0.007195) / (1/3).
        let llr = sprt.llr(&record(100, 100, 100));
        let s1 = expected_score(5.0);
        let expected = 300.0 * (s1 - 0.5) * (1.0 - 0.5 - s1) * 3.0;
        assert!((llr - expected).abs() < 1e-9 && (llr + 0.0466).abs() < 1e-3);
    }

    #[test]
    fn sprt_parse_errors() {
        assert!("elo0=5 elo1=0".parse::<Sprt>().is_err());
        assert!("gamma=1".parse::<Sprt>().is_err());
        assert!("elo0".parse::<Sprt>().is_err());
        let s: Sprt = "elo1=10,alpha=0.1".parse().unwrap();
        assert_eq!((s.elo0, s.elo1, s.alpha, s.beta), (0.0, 10.0, 0.1, 0.05));
    }
}
