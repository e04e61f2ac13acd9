//! Match statistics against an independent implementation and by
//! simulation: the Elo estimates, LOS, normalized Elo and GSPRT
//! log-likelihood ratios of `engine::play::{elo, sprt}` agree with
//! `elo_reference.py` (written from the published formulas) on random
//! trinomial and pentanomial records and with values printed by fishtest's
//! own statistics code on fixed records, and a simulated match with a known
//! Elo difference accepts H0 and H1 at about the configured error rates.

use std::io::Write;
use std::process::{Command, Stdio};

use engine::play::elo::{Estimate, PENTANOMIAL_SCORES, Pentanomial, Record, expected_score};
use engine::play::sprt::{EloModel, Sprt, SprtDecision};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One record to check: trinomial (L, D, W) or pentanomial counts.
struct Case {
    counts: Vec<u64>,
    sprt: Sprt,
}

impl Case {
    fn estimate(&self) -> Estimate {
        match self.counts.as_slice() {
            &[losses, draws, wins] => Record {
                wins,
                draws,
                losses,
            }
            .estimate(),
            _ => self.pairs().estimate(),
        }
    }

    fn pairs(&self) -> Pentanomial {
        let c = &self.counts;
        Pentanomial {
            ll: c[0],
            ld: c[1],
            dd: c[2],
            wl: 0,
            wd: c[3],
            ww: c[4],
        }
    }

    fn llr(&self) -> f64 {
        if self.counts.len() == 3 {
            let [losses, draws, wins] = [self.counts[0], self.counts[1], self.counts[2]];
            self.sprt.llr_games(&Record {
                wins,
                draws,
                losses,
            })
        } else {
            self.sprt.llr_pairs(&self.pairs())
        }
    }
}

fn cases() -> Vec<Case> {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let mut out = Vec::new();
    let bounds = [(0.0, 5.0), (-3.0, 1.0), (0.0, 2.0), (-10.0, 10.0)];
    while out.len() < 120 {
        let len = if out.len() % 2 == 0 { 3 } else { 5 };
        let counts: Vec<u64> = (0..len)
            .map(|_| {
                // Some zero counts, some small and some large ones.
                match rng.random_range(0..4) {
                    0 => 0,
                    1 => rng.random_range(1..5),
                    _ => rng.random_range(5..400),
                }
            })
            .collect();
        if counts.iter().filter(|&&c| c > 0).count() < 2 {
            continue;
        }
        let (elo0, elo1) = bounds[out.len() % bounds.len()];
        let model = if out.len() % 3 == 0 {
            EloModel::Normalized
        } else {
            EloModel::Logistic
        };
        out.push(Case {
            counts,
            sprt: Sprt {
                elo0,
                elo1,
                model,
                ..Sprt::default()
            },
        });
    }
    out
}

fn close(ours: f64, theirs: f64, tolerance: f64) -> bool {
    if ours.is_infinite() || theirs.is_infinite() {
        return ours == theirs;
    }
    (ours - theirs).abs() <= tolerance * theirs.abs().max(1.0)
}

#[test]
fn statistics_agree_with_the_python_reference() {
    let cases = cases();
    let mut input = String::new();
    for case in &cases {
        let kind = if case.counts.len() == 3 {
            "tri"
        } else {
            "penta"
        };
        let counts: Vec<String> = case.counts.iter().map(u64::to_string).collect();
        input.push_str(&format!(
            "{kind} {} {} {} {}\n",
            case.sprt.elo0,
            case.sprt.elo1,
            case.sprt.model.name(),
            counts.join(" ")
        ));
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/elo_reference.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is needed for this test");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "the reference script failed");
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), cases.len());
    for (case, line) in cases.iter().zip(lines) {
        let theirs: Vec<f64> = line
            .split_whitespace()
            .map(|w| match w {
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                _ => w.parse().unwrap(),
            })
            .collect();
        let e = case.estimate();
        let llr = case.llr();
        let ours = [
            e.score, e.variance, e.elo, e.low, e.high, e.los, e.nelo, llr,
        ];
        // The LOS goes through our erf (absolute error below 1.5e-7).
        let tolerances = [1e-12, 1e-12, 1e-9, 1e-9, 1e-9, 1e-6, 1e-9, 1e-6];
        let names = [
            "score", "variance", "elo", "low", "high", "los", "nelo", "llr",
        ];
        for i in 0..ours.len() {
            assert!(
                close(ours[i], theirs[i], tolerances[i]),
                "{} of {:?} ({}): ours {} reference {}",
                names[i],
                case.counts,
                case.sprt,
                ours[i],
                theirs[i]
            );
        }
    }
}

/// Values printed by fishtest's own statistics code
/// (`server/fishtest/stats/LLRcalc.py` and `stat_util.py` of
/// official-stockfish/fishtest at commit b8eecff2, run with scipy's
/// `brentq` and `norm` replaced by a bisection and Python's `NormalDist`):
/// counts, elo0, elo1, model, then LLR, Elo, half-width of the 95% Elo
/// interval (fishtest's `elo95`, (high − low)/2) and LOS. Records without
/// zero counts, since fishtest regularizes zeros before its Elo estimate.
#[test]
fn statistics_agree_with_fishtest() {
    #[allow(clippy::type_complexity)]
    let published: [(&[u64], f64, f64, EloModel, [f64; 4]); 6] = [
        (
            &[412, 9876, 20811, 10113, 460],
            0.0,
            2.0,
            EloModel::Normalized,
            [2.2310402574, 1.3881823003, 1.2518536153, 0.9851263711],
        ),
        (
            &[412, 9876, 20811, 10113, 460],
            0.0,
            2.0,
            EloModel::Logistic,
            [1.9031316243, 1.3881823003, 1.2518536153, 0.9851263711],
        ),
        (
            &[35, 610, 1300, 590, 40],
            -1.75,
            0.25,
            EloModel::Normalized,
            [-0.0426645977, -0.6746330528, 5.1213948345, 0.3981254176],
        ),
        (
            &[12, 40, 60, 70, 18],
            0.0,
            5.0,
            EloModel::Logistic,
            [0.9597931360, 36.6156970821, 25.6486249189, 0.9976291422],
        ),
        (
            &[3, 7, 14, 20, 10],
            0.0,
            10.0,
            EloModel::Logistic,
            [0.9580408497, 88.7394998465, 54.9711074246, 0.9995752346],
        ),
        (
            &[1210, 3377, 1444],
            0.0,
            5.0,
            EloModel::Logistic,
            [6.2373459297, 13.4871099838, 5.8161344246, 0.9999973175],
        ),
    ];
    for (counts, elo0, elo1, model, [llr, elo, elo95, los]) in published {
        let case = Case {
            counts: counts.to_vec(),
            sprt: Sprt {
                elo0,
                elo1,
                model,
                ..Sprt::default()
            },
        };
        let e = case.estimate();
        let ours = [case.llr(), e.elo, (e.high - e.low) / 2.0, e.los];
        let theirs = [llr, elo, elo95, los];
        let names = ["llr", "elo", "elo95", "los"];
        for i in 0..4 {
            assert!(
                close(ours[i], theirs[i], 1e-6),
                "{} of {counts:?} ({}): ours {} fishtest {}",
                names[i],
                case.sprt,
                ours[i],
                theirs[i]
            );
        }
    }
}

/// A pentanomial distribution with mean per-game score `score`: the shape
/// `BASE` tilted exponentially (`pᵢ ∝ baseᵢ·e^(λ·aᵢ)`).
fn pair_distribution(score: f64) -> [f64; 5] {
    const BASE: [f64; 5] = [0.05, 0.2, 0.5, 0.2, 0.05];
    let tilted = |lambda: f64| {
        let w: Vec<f64> = BASE
            .iter()
            .zip(PENTANOMIAL_SCORES)
            .map(|(b, a)| b * (lambda * a).exp())
            .collect();
        let total: f64 = w.iter().sum();
        [0, 1, 2, 3, 4].map(|i| w[i] / total)
    };
    let mean = |p: &[f64; 5]| {
        p.iter()
            .zip(PENTANOMIAL_SCORES)
            .map(|(q, a)| q * a)
            .sum::<f64>()
    };
    let (mut low, mut high) = (-50.0, 50.0);
    for _ in 0..200 {
        let mid = 0.5 * (low + high);
        if mean(&tilted(mid)) < score {
            low = mid;
        } else {
            high = mid;
        }
    }
    tilted(0.5 * (low + high))
}

/// Runs `runs` simulated SPRTs of pairs drawn from `distribution` and
/// returns how often each hypothesis was accepted.
fn simulate(sprt: &Sprt, distribution: &[f64; 5], runs: usize, seed: u64) -> (usize, usize) {
    const MAX_PAIRS: usize = 100_000;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut h0, mut h1) = (0, 0);
    for _ in 0..runs {
        let mut pairs = Pentanomial::default();
        for _ in 0..MAX_PAIRS {
            let mut u: f64 = rng.random();
            let mut outcome = 4;
            for (i, p) in distribution.iter().enumerate() {
                if u < *p {
                    outcome = i;
                    break;
                }
                u -= p;
            }
            match outcome {
                0 => pairs.ll += 1,
                1 => pairs.ld += 1,
                2 => pairs.dd += 1,
                3 => pairs.wd += 1,
                _ => pairs.ww += 1,
            }
            match sprt.decide(sprt.llr_pairs(&pairs)) {
                SprtDecision::AcceptH0 => {
                    h0 += 1;
                    break;
                }
                SprtDecision::AcceptH1 => {
                    h1 += 1;
                    break;
                }
                SprtDecision::Continue => {}
            }
        }
    }
    (h0, h1)
}

#[test]
fn simulated_matches_decide_at_the_configured_error_rates() {
    const RUNS: usize = 1000;
    let sprt = Sprt {
        elo0: 0.0,
        elo1: 20.0,
        alpha: 0.05,
        beta: 0.05,
        model: EloModel::Logistic,
    };
    // Three standard deviations of a rate of 5% over RUNS runs.
    let slack = 3.0 * (0.05f64 * 0.95 / RUNS as f64).sqrt();
    // True Elo = elo0: H1 is a false positive (rate α).
    let (h0, h1) = simulate(&sprt, &pair_distribution(expected_score(0.0)), RUNS, 1);
    assert_eq!(h0 + h1, RUNS, "every run decides");
    let false_positives = h1 as f64 / RUNS as f64;
    assert!(false_positives <= 0.05 + slack, "H1 at elo0: {h1}/{RUNS}");
    // True Elo = elo1: H0 is a false negative (rate β).
    let (h0, h1) = simulate(&sprt, &pair_distribution(expected_score(20.0)), RUNS, 2);
    assert_eq!(h0 + h1, RUNS);
    let false_negatives = h0 as f64 / RUNS as f64;
    assert!(false_negatives <= 0.05 + slack, "H0 at elo1: {h0}/{RUNS}");
    // Halfway, either answer is about as likely; far above, always H1.
    let (h0, h1) = simulate(&sprt, &pair_distribution(expected_score(10.0)), RUNS / 4, 3);
    assert!(
        h0 > RUNS / 16 && h1 > RUNS / 16,
        "midpoint: H0 {h0} H1 {h1}"
    );
    let (_, h1) = simulate(&sprt, &pair_distribution(expected_score(40.0)), RUNS / 4, 4);
    assert!(h1 >= RUNS / 4 - 1, "elo 40: H1 {h1}");
    eprintln!("false positive rate {false_positives:.3}, false negative rate {false_negatives:.3}");
}

#[test]
fn simulated_normalized_sprt_has_its_power() {
    // Bounds in nElo; the pair distribution's per-game σ is √(2·var).
    const RUNS: usize = 400;
    let sprt = Sprt {
        elo0: 0.0,
        elo1: 30.0,
        alpha: 0.05,
        beta: 0.05,
        model: EloModel::Normalized,
    };
    // Find the score whose normalized Elo is elo1 for this shape.
    let nelo_of = |score: f64| {
        let p = pair_distribution(score);
        let counts = p.map(|q| (q * 1e9) as u64);
        let e = Pentanomial {
            ll: counts[0],
            ld: counts[1],
            dd: counts[2],
            wl: 0,
            wd: counts[3],
            ww: counts[4],
        }
        .estimate();
        e.nelo
    };
    let (mut low, mut high) = (0.5, 0.6);
    for _ in 0..60 {
        let mid = 0.5 * (low + high);
        if nelo_of(mid) < 30.0 {
            low = mid;
        } else {
            high = mid;
        }
    }
    let slack = 3.0 * (0.05f64 * 0.95 / RUNS as f64).sqrt();
    let (h0, h1) = simulate(&sprt, &pair_distribution(low), RUNS, 5);
    assert_eq!(h0 + h1, RUNS);
    assert!(
        h0 as f64 / RUNS as f64 <= 0.05 + slack,
        "H0 at elo1: {h0}/{RUNS}"
    );
    let (h0, h1) = simulate(&sprt, &pair_distribution(0.5), RUNS, 6);
    assert_eq!(h0 + h1, RUNS);
    assert!(
        h1 as f64 / RUNS as f64 <= 0.05 + slack,
        "H1 at elo0: {h1}/{RUNS}"
    );
}
