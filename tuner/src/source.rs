//! The training data held in memory: the traced training and validation
//! sets, and, for `--recompute-pv`, the positions they were traced from.
//! The [`TrainingData`] the tuner uses today; a streamed trace cache can
//! take its place behind the same trait.
//!
//! Mini-batch epochs read memory in order: before the first one, the
//! training set is rearranged once in an order shuffled with the run's seed
//! (a copy of its records, then the old layout is freed), and each epoch
//! visits it by runs of [`RUN`] consecutive positions whose order is
//! shuffled with the seed and the epoch. A batch is thus a random sample of
//! runs of random positions, different in every epoch, and the kernels read
//! whole cache lines in sequence instead of one scattered record at a time.

use std::sync::Arc;

use engine::eval::Params;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::dataset::{self, Resolve, Sample};
use crate::objective::{self, Objective};
use crate::trace_set::TraceSet;
use crate::trainer::{BatchStep, DataError, Split, TrainingData};

/// Positions per run of consecutive records that a mini-batch epoch visits
/// in order (about 3 kB of records).
pub const RUN: usize = 64;

/// Salt of the layout seed (the run's seed also chooses the validation
/// positions).
const LAYOUT_SALT: u64 = 0x6c61_796f_7574_0001;

/// Traced positions in memory.
#[derive(Clone, Debug)]
pub struct TraceData {
    /// The training set.
    pub train: TraceSet,
    /// The validation set (may be empty: then the training loss decides).
    pub validation: TraceSet,
    /// The positions behind both sets and how they are resolved, kept when
    /// the data are to be re-traced.
    pub samples: Option<Samples>,
    fingerprint: u64,
    /// Seed of the one-time rearrangement of the training set.
    layout_seed: u64,
    /// Whether the training set (and its samples) have been rearranged.
    arranged: bool,
}

/// The positions behind a [`TraceData`], for re-tracing.
#[derive(Clone, Debug)]
pub struct Samples {
    /// Training positions, in the order of the training set.
    pub train: Vec<Sample>,
    /// Validation positions.
    pub validation: Vec<Sample>,
    /// How they are resolved before tracing.
    pub resolve: Resolve,
}

/// Where the validation positions come from.
#[derive(Clone, Debug)]
pub enum Holdout {
    /// This fraction of the positions, chosen by the seed.
    Fraction(f64),
    /// A separate set (and its positions when re-tracing).
    Set(TraceSet, Vec<Sample>),
}

impl TraceData {
    /// Splits the loaded positions `all` into training and validation sets,
    /// in place and in input order: the validation set is about the
    /// `fraction` of the positions that [`validation_mask`] chooses with
    /// `seed` (runs of consecutive positions), or the separate set of
    /// `holdout`. With `retrace` the positions are kept
    /// (`samples` holds those of `all`, in order) for re-tracing with that
    /// resolution.
    pub fn split(
        mut all: TraceSet,
        samples: Vec<Sample>,
        holdout: Holdout,
        seed: u64,
        retrace: Option<Resolve>,
    ) -> TraceData {
        let (train, validation, train_samples, validation_samples) = match holdout {
            Holdout::Set(set, set_samples) => (all, set, samples, set_samples),
            Holdout::Fraction(fraction) => {
                let n = all.len();
                let mask = validation_mask(n, validation_count(n, fraction), seed);
                let validation = all.split_off_where(|i| mask.get(i));
                let (mut train_samples, mut validation_samples) = (Vec::new(), Vec::new());
                if retrace.is_some() {
                    for (i, s) in samples.into_iter().enumerate() {
                        if mask.get(i) {
                            validation_samples.push(s);
                        } else {
                            train_samples.push(s);
                        }
                    }
                }
                (all, validation, train_samples, validation_samples)
            }
        };
        let samples = retrace.map(|resolve| Samples {
            train: train_samples,
            validation: validation_samples,
            resolve,
        });
        TraceData {
            layout_seed: seed,
            ..TraceData::new(train, validation, samples)
        }
    }

    /// The data of `train` and `validation`; `samples` when they are to be
    /// re-traced. The fingerprint is taken now.
    pub fn new(train: TraceSet, validation: TraceSet, samples: Option<Samples>) -> Self {
        let fingerprint = train.fingerprint() ^ validation.fingerprint().rotate_left(1);
        TraceData {
            train,
            validation,
            samples,
            fingerprint,
            layout_seed: 0,
            arranged: false,
        }
    }

    /// Rearranges the training set (and its samples) once, in the order
    /// shuffled with the layout seed: the first mini-batch epoch does it,
    /// so a resumed run rearranges the same way.
    fn arrange(&mut self) {
        if self.arranged {
            return;
        }
        self.arranged = true;
        let mut order: Vec<usize> = (0..self.train.len()).collect();
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(
            self.layout_seed ^ LAYOUT_SALT,
        ));
        self.train = self.train.select(&order);
        if let Some(s) = &mut self.samples {
            let mut old: Vec<Option<Sample>> =
                std::mem::take(&mut s.train).into_iter().map(Some).collect();
            s.train = order
                .iter()
                .map(|&i| old[i].take().expect("a permutation"))
                .collect();
        }
    }

    fn set(&self, split: Split) -> &TraceSet {
        match split {
            Split::Train => &self.train,
            Split::Validation => &self.validation,
        }
    }
}

/// The number of validation positions among `n` for a held-out
/// `fraction`.
pub fn validation_count(n: usize, fraction: f64) -> usize {
    ((n as f64 * fraction).round() as usize).min(n)
}

/// A set of positions, as bits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mask {
    words: Vec<u64>,
}

impl Mask {
    /// Whether position `i` is in the set.
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w >> (i % 64) & 1 != 0)
    }

    /// Number of positions in the set.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// The length of the runs of consecutive positions that the validation
/// split keeps together: about a thousandth of the data, at most 256
/// positions, at least 1 (position by position, for small sets).
///
/// Every labeler writes a game's positions one after another; held out one
/// by one, nearly every validation position would have neighbours of the
/// same game in the training set, and the validation loss would keep
/// falling while the weights learn those games rather than chess (it
/// would not detect overfitting). Runs of 256 hold out whole games but at
/// their ends, and a thousand runs or more keep the split representative.
pub fn validation_run(n: usize) -> usize {
    (n / 1000).clamp(1, 256)
}

/// About `count` of the positions `0..n`: whole runs of
/// [`validation_run`] consecutive positions, `count / run` of them (rounded;
/// at least one when `count` is not 0), chosen uniformly with `seed` by
/// selection sampling (Knuth's algorithm S: run `r` is taken with
/// probability needed / remaining), so that a stream can apply the split
/// in one pass without holding the positions. With runs of 1 it is exactly
/// `count` positions.
pub fn validation_mask(n: usize, count: usize, seed: u64) -> Mask {
    let run = validation_run(n);
    let runs = n.div_ceil(run);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut words = vec![0u64; n.div_ceil(64)];
    let count = count.min(n);
    let mut needed = if count == 0 {
        0
    } else {
        ((count + run / 2) / run).clamp(1, runs)
    };
    for (r, remaining) in (0..runs).zip((1..=runs).rev()) {
        if needed == 0 {
            break;
        }
        if rng.random_range(0..remaining) < needed {
            for i in r * run..((r + 1) * run).min(n) {
                words[i / 64] |= 1 << (i % 64);
            }
            needed -= 1;
        }
    }
    Mask { words }
}

impl TrainingData for TraceData {
    fn train_len(&self) -> usize {
        self.train.len()
    }

    fn validation_len(&self) -> usize {
        self.validation.len()
    }

    fn loss_and_gradient(
        &self,
        batch: &[u32],
        weights: &[f64],
        objective: &Objective,
    ) -> (f64, Vec<f64>) {
        objective::loss_and_gradient(&self.train, batch, weights, objective)
    }

    fn mean_loss(&self, split: Split, weights: &[f64], objective: &Objective) -> f64 {
        objective::mean_loss(self.set(split), weights, objective)
    }

    fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Mini-batches walk the rearranged training set by shuffled runs (see
    /// the module documentation); one batch of everything reads it in
    /// order.
    fn train_epoch(
        &mut self,
        order_seed: u64,
        batch: usize,
        objective: &Objective,
        weights: &mut Vec<f64>,
        step: &mut BatchStep,
    ) -> Result<(), DataError> {
        let n = self.train.len();
        let batch = batch.max(1);
        let order: Vec<u32> = if batch < n {
            self.arrange();
            let mut runs: Vec<usize> = (0..n.div_ceil(RUN)).collect();
            runs.shuffle(&mut ChaCha8Rng::seed_from_u64(order_seed));
            runs.iter()
                .flat_map(|&r| (r * RUN) as u32..((r + 1) * RUN).min(n) as u32)
                .collect()
        } else {
            (0..n as u32).collect()
        };
        for chunk in order.chunks(batch) {
            let (loss, grad) = self.loss_and_gradient(chunk, weights, objective);
            step(weights, loss, grad, chunk.len());
        }
        Ok(())
    }

    fn retrace(&mut self, params: &Params) -> bool {
        let Some(s) = &self.samples else {
            return false;
        };
        let params = Arc::new(params.clone());
        self.train = dataset::trace_samples(&s.train, s.resolve, &params);
        self.validation = dataset::trace_samples(&s.validation, s.resolve, &params);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sets_are_split_position_by_position_exactly() {
        for (n, count) in [(0, 0), (10, 3), (1999, 200), (1000, 1000)] {
            let mask = validation_mask(n, count, 7);
            assert_eq!(validation_run(n), 1);
            assert_eq!(mask.count(), count, "n {n}");
        }
    }

    /// Large sets lose whole runs: no run is split, the count is the
    /// requested one within half a run, the choice depends on the seed and
    /// is spread over the whole set.
    #[test]
    fn large_sets_hold_out_whole_runs() {
        let n = 123_457;
        let run = validation_run(n);
        assert_eq!(run, 123);
        let count = validation_count(n, 0.1);
        let mask = validation_mask(n, count, 3);
        assert!(
            mask.count().abs_diff(count) <= run / 2 + 1,
            "{} vs {count}",
            mask.count()
        );
        for r in 0..n.div_ceil(run) {
            let members = (r * run..((r + 1) * run).min(n))
                .filter(|&i| mask.get(i))
                .count();
            assert!(
                members == 0 || members == run.min(n - r * run),
                "run {r} split"
            );
        }
        let first_half = (0..n / 2).filter(|&i| mask.get(i)).count();
        let halves = [first_half, mask.count() - first_half];
        assert!(halves.iter().all(|&h| h > count / 3), "{halves:?}");
        assert_eq!(mask, validation_mask(n, count, 3));
        assert_ne!(mask, validation_mask(n, count, 4));
    }
}
