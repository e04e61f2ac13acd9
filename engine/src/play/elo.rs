//! Match statistics: the Elo difference implied by a match record with its
//! 95% confidence interval, the likelihood of superiority (LOS) and the
//! normalized Elo, for the two ways of counting a match:
//!
//! * the *trinomial* record [`Record`]: games won, drawn and lost, each game
//!   an independent sample with score 1, ½ or 0;
//! * the *pentanomial* record [`Pentanomial`]: game pairs (one opening,
//!   colours swapped) by the pair's score 0, ½, 1, 1½ or 2 — `LL`, `LD`,
//!   `DD`+`WL`, `WD`, `WW`. The two games of a pair share an opening and are
//!   correlated (an unbalanced opening tends to give one win each), so the
//!   pair, not the game, is the independent sample. The trinomial variance
//!   ignores that correlation and overstates the error of paired games.
//!
//! All results are from the first player's point of view, on the logistic
//! Elo scale. With `N` samples (games or pairs), sample scores `aᵢ` (per
//! game: 0, ½, 1 for games; 0, ¼, ½, ¾, 1 for pairs) and observed
//! frequencies `pᵢ`:
//!
//! * mean score per game `s = Σ pᵢ·aᵢ`, per-sample variance
//!   `σ² = Σ pᵢ·(aᵢ - s)²`, standard error `σ/√N`;
//! * Elo of a score `E(s) = -400·log10(1/s - 1)`, and its inverse, the
//!   expected score of an Elo difference, `s(E) = 1/(1 + 10^(-E/400))`;
//! * the 95% interval is `E(s ± 1.96·σ/√N)`;
//! * `LOS = Φ((s - ½)/(σ/√N))` (Φ the standard normal distribution);
//! * normalized Elo `nElo = (s - ½)/σ_game · 800/ln 10`, with the per-game
//!   standard deviation `σ_game = σ` for games and `√2·σ` for pairs (a pair
//!   averages two games); its 95% interval is `± 1.96·(800/ln 10)/√games`.
//!   nElo measures the difference in standard deviations, so it does not
//!   depend on the draw rate the way logistic Elo does (Van den Bergh,
//!   "Normalized Elo").
//!
//! The sequential test on these records is in [`crate::play::sprt`].

use std::f64::consts::{LN_10, SQRT_2};

/// Two-sided 95% quantile of the standard normal distribution.
pub const Z_95: f64 = 1.959_963_984_540_054;
/// Points of a draw.
const DRAW_POINTS: f64 = 0.5;
/// Elo points per factor 10 of the odds.
const ELO_PER_DECADE: f64 = 400.0;
/// Normalized Elo per standard deviation of score: `800 / ln 10`.
pub const NELO_PER_SIGMA: f64 = 800.0 / LN_10;
/// Score of each trinomial outcome (loss, draw, win), per game.
pub const TRINOMIAL_SCORES: [f64; 3] = [0.0, 0.5, 1.0];
/// Score of each pentanomial outcome (`LL`, `LD`, `DD`+`WL`, `WD`, `WW`),
/// per game.
pub const PENTANOMIAL_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];
/// Games per pair.
const GAMES_PER_PAIR: f64 = 2.0;

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

/// The standard normal distribution function Φ.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * (1.0 + erf(x / SQRT_2))
}

/// What a record says about the strength difference (see the module
/// documentation for the formulas).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Independent samples: games (trinomial) or pairs (pentanomial).
    pub samples: u64,
    /// Mean score per game.
    pub score: f64,
    /// Variance of one sample's score (per game for games, per game of the
    /// pair average for pairs).
    pub variance: f64,
    /// Logistic Elo difference.
    pub elo: f64,
    /// Lower end of its 95% interval.
    pub low: f64,
    /// Upper end of its 95% interval.
    pub high: f64,
    /// Likelihood of superiority: the probability that the first player is
    /// the stronger one.
    pub los: f64,
    /// Normalized Elo.
    pub nelo: f64,
    /// Half-width of the normalized Elo's 95% interval.
    pub nelo_margin: f64,
}

impl Estimate {
    /// The statistics of `counts[i]` samples of score `scores[i]`, each
    /// sample the average of `games_per_sample` games.
    fn of(scores: &[f64], counts: &[u64], games_per_sample: f64) -> Estimate {
        let n: u64 = counts.iter().sum();
        if n == 0 {
            return Estimate {
                samples: 0,
                score: DRAW_POINTS,
                variance: 0.0,
                elo: 0.0,
                low: f64::NEG_INFINITY,
                high: f64::INFINITY,
                los: DRAW_POINTS,
                nelo: 0.0,
                nelo_margin: f64::INFINITY,
            };
        }
        let nf = n as f64;
        let score = scores
            .iter()
            .zip(counts)
            .map(|(a, c)| a * *c as f64)
            .sum::<f64>()
            / nf;
        let variance = scores
            .iter()
            .zip(counts)
            .map(|(a, c)| *c as f64 * (a - score).powi(2))
            .sum::<f64>()
            / nf;
        let error = (variance / nf).sqrt();
        let margin = Z_95 * error;
        let lead = score - DRAW_POINTS;
        let los = if error > 0.0 {
            normal_cdf(lead / error)
        } else {
            // No spread at all: certain, unless the score is even.
            0.5 + 0.5 * lead.signum() * f64::from(lead != 0.0)
        };
        let game_sigma = (games_per_sample * variance).sqrt();
        let nelo = if game_sigma > 0.0 {
            lead / game_sigma * NELO_PER_SIGMA
        } else {
            0.0
        };
        Estimate {
            samples: n,
            score,
            variance,
            elo: elo_of_score(score),
            low: elo_of_score(score - margin),
            high: elo_of_score(score + margin),
            los,
            nelo,
            nelo_margin: Z_95 * NELO_PER_SIGMA / (games_per_sample * nf).sqrt(),
        }
    }
}

/// A trinomial match record from the first player's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Games won by the first player.
    pub wins: u64,
    /// Drawn games.
    pub draws: u64,
    /// Games lost by the first player.
    pub losses: u64,
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

    /// Counts in the order of [`TRINOMIAL_SCORES`]: losses, draws, wins.
    pub fn counts(&self) -> [u64; 3] {
        [self.losses, self.draws, self.wins]
    }

    /// Adds a game the first player scored `score` in (1, ½ or 0).
    pub fn add(&mut self, score: f64) {
        if score > DRAW_POINTS {
            self.wins += 1;
        } else if score < DRAW_POINTS {
            self.losses += 1;
        } else {
            self.draws += 1;
        }
    }

    /// Elo, interval, LOS and nElo with every game an independent sample.
    pub fn estimate(&self) -> Estimate {
        Estimate::of(&TRINOMIAL_SCORES, &self.counts(), 1.0)
    }
}

/// A pentanomial record: game pairs by the first player's pair score.
/// `DD` and `WL` both score 1 of 2 and form one outcome for the statistics;
/// they are kept apart for the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pentanomial {
    /// Pairs with two losses.
    pub ll: u64,
    /// Pairs with a loss and a draw.
    pub ld: u64,
    /// Pairs with two draws.
    pub dd: u64,
    /// Pairs with a win and a loss.
    pub wl: u64,
    /// Pairs with a win and a draw.
    pub wd: u64,
    /// Pairs with two wins.
    pub ww: u64,
}

impl Pentanomial {
    /// Pairs counted.
    pub fn pairs(&self) -> u64 {
        self.frequencies().iter().sum()
    }

    /// Counts in the order of [`PENTANOMIAL_SCORES`]: `LL`, `LD`,
    /// `DD`+`WL`, `WD`, `WW`.
    pub fn frequencies(&self) -> [u64; 5] {
        [self.ll, self.ld, self.dd + self.wl, self.wd, self.ww]
    }

    /// Adds a pair in which the first player scored `first` and `second`
    /// (each 1, ½ or 0).
    pub fn add(&mut self, first: f64, second: f64) {
        let wins = u8::from(first > DRAW_POINTS) + u8::from(second > DRAW_POINTS);
        let losses = u8::from(first < DRAW_POINTS) + u8::from(second < DRAW_POINTS);
        let slot = match (wins, losses) {
            (0, 2) => &mut self.ll,
            (0, 1) => &mut self.ld,
            (0, 0) => &mut self.dd,
            (1, 1) => &mut self.wl,
            (1, 0) => &mut self.wd,
            _ => &mut self.ww,
        };
        *slot += 1;
    }

    /// The games of the pairs as a trinomial record.
    pub fn games(&self) -> Record {
        Record {
            wins: 2 * self.ww + self.wd + self.wl,
            draws: self.ld + 2 * self.dd + self.wd,
            losses: 2 * self.ll + self.ld + self.wl,
        }
    }

    /// Elo, interval, LOS and nElo with every pair an independent sample.
    pub fn estimate(&self) -> Estimate {
        Estimate::of(&PENTANOMIAL_SCORES, &self.frequencies(), GAMES_PER_PAIR)
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

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn even_score_is_zero_elo() {
        let e = record(10, 10, 10).estimate();
        assert!(e.elo.abs() < 1e-9);
        assert!(e.low < 0.0 && e.high > 0.0);
        assert!((e.low + e.high).abs() < 1e-9, "symmetric: {e:?}");
        assert!(close(e.los, 0.5, 1e-9) && e.nelo == 0.0);
    }

    #[test]
    fn trinomial_by_hand() {
        // W=60 D=20 L=20: s = 0.7, -400 log10(3/7) = 147.19;
        // σ² = (60·0.09 + 20·0.04 + 20·0.49)/100 = 0.16, σ/√N = 0.04;
        // interval E(0.7 ± 0.0784) = E(0.6216) .. E(0.7784);
        // LOS = Φ(0.2/0.04) = Φ(5); nElo = 0.2/0.4 · 347.44 = 173.72.
        let e = record(60, 20, 20).estimate();
        assert!(close(e.elo, 147.19, 0.01), "{e:?}");
        assert!(close(e.variance, 0.16, 1e-12));
        assert!(close(e.low, elo_of_score(0.7 - Z_95 * 0.04), 1e-9));
        assert!(
            close(e.low, 86.23, 0.01) && close(e.high, 218.25, 0.01),
            "{e:?}"
        );
        assert!(close(e.los, 0.999_999_713, 1e-6));
        assert!(close(e.nelo, 173.72, 0.01), "{e:?}");
        assert!(close(e.nelo_margin, Z_95 * NELO_PER_SIGMA / 10.0, 1e-9));
        // s = 0.75 → 190.85 Elo; expected_score inverts elo_of_score.
        assert!(close(elo_of_score(0.75), 190.85, 0.01));
        assert!(close(expected_score(elo_of_score(0.3)), 0.3, 1e-12));
        assert!(elo_of_score(1.0).is_infinite());
        assert!(close(erf(1.0), 0.842_700_79, 1e-6));
    }

    #[test]
    fn pentanomial_by_hand() {
        // Pairs LL=1 LD=2 DD=3 WL=1 WD=2 WW=1 (10 pairs, 20 games):
        // frequencies [1, 2, 4, 2, 1]/10, s = (0.5 + 2 + 1.5 + 1)/10 = 0.5.
        let mut p = Pentanomial::default();
        let pairs = [
            (0.0, 0.0),
            (0.0, 0.5),
            (0.5, 0.0),
            (0.5, 0.5),
            (0.5, 0.5),
            (0.5, 0.5),
            (1.0, 0.0),
            (1.0, 0.5),
            (0.5, 1.0),
            (1.0, 1.0),
        ];
        for (a, b) in pairs {
            p.add(a, b);
        }
        assert_eq!(p.frequencies(), [1, 2, 4, 2, 1]);
        assert_eq!((p.dd, p.wl), (3, 1));
        assert_eq!(p.games(), record(5, 10, 5));
        let e = p.estimate();
        assert_eq!(e.samples, 10);
        assert!(close(e.score, 0.5, 1e-12) && close(e.elo, 0.0, 1e-9));
        // σ² = (0.25 + 2·0.0625 + 0 + 2·0.0625 + 0.25)/10 = 0.075.
        assert!(close(e.variance, 0.075, 1e-12));
        // Interval E(0.5 ± 1.96·√0.0075) = E(0.5 ± 0.16974) = ±122.82.
        assert!(close(
            e.high,
            elo_of_score(0.5 + Z_95 * 0.0075f64.sqrt()),
            1e-9
        ));
        assert!(close(e.high, 122.82, 0.01), "{e:?}");
        // Now W-heavy: LL=0 LD=1 DD+WL=4 WD=3 WW=2 → s = (0.25+2+2.25+2)/10
        // = 0.65, σ² = (0.16 + 4·0.0225 + 3·0.01 + 2·0.1225)/10 = 0.0525,
        // σ/√N = √0.00525 = 0.072457; LOS = Φ(0.15/0.072457) = Φ(2.0702)
        // = 0.98078; nElo = 0.15/√(2·0.0525) · 347.44 = 160.83.
        let p = Pentanomial {
            ll: 0,
            ld: 1,
            dd: 4,
            wl: 0,
            wd: 3,
            ww: 2,
        };
        let e = p.estimate();
        assert!(close(e.score, 0.65, 1e-12) && close(e.variance, 0.0525, 1e-12));
        assert!(close(e.elo, 107.54, 0.01), "{e:?}");
        assert!(close(e.los, 0.980_78, 2e-5), "{e:?}");
        assert!(close(e.nelo, 160.83, 0.01), "{e:?}");
        assert!(close(
            e.nelo_margin,
            Z_95 * NELO_PER_SIGMA / 20f64.sqrt(),
            1e-9
        ));
    }

    #[test]
    fn pairs_are_tighter_than_games_when_openings_decide() {
        // Every pair is one win each (the opening decides): the games look
        // like a coin toss, the pairs say "exactly even".
        let p = Pentanomial {
            wl: 50,
            ..Pentanomial::default()
        };
        let games = p.games().estimate();
        let pairs = p.estimate();
        assert!(close(pairs.variance, 0.0, 1e-12) && pairs.high == 0.0);
        assert!(games.high > 60.0, "{games:?}");
    }

    #[test]
    fn empty_records() {
        let e = Record::default().estimate();
        assert_eq!((e.samples, e.elo, e.los), (0, 0.0, 0.5));
        assert!(e.low.is_infinite() && e.high.is_infinite());
        assert_eq!(Pentanomial::default().estimate().samples, 0);
    }
}
