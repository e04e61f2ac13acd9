//! The training data held in memory: the traced training and validation
//! sets, and, for `--recompute-pv`, the positions they were traced from.
//! The [`TrainingData`] the tuner uses today; a streamed trace cache can
//! take its place behind the same trait.

use std::sync::Arc;

use engine::eval::Params;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::dataset::{self, Resolve, Sample};
use crate::objective::{self, Objective};
use crate::trace_set::TraceSet;
use crate::trainer::{Split, TrainingData};

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
    /// Splits the loaded positions `all` into training and validation sets:
    /// the positions are shuffled with `seed`, and the validation set is
    /// the first `fraction` of them or the separate set of `holdout`. With
    /// `retrace` the positions are kept (`samples` holds those of `all`, in
    /// order) for re-tracing with that resolution.
    pub fn split(
        all: &TraceSet,
        samples: &[Sample],
        holdout: Holdout,
        seed: u64,
        retrace: Option<Resolve>,
    ) -> TraceData {
        let mut order: Vec<usize> = (0..all.len()).collect();
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        let pick = |idx: &[usize]| -> Vec<Sample> {
            if retrace.is_some() {
                idx.iter().map(|&i| samples[i].clone()).collect()
            } else {
                Vec::new()
            }
        };
        let (train, validation, train_samples, validation_samples) = match holdout {
            Holdout::Set(set, set_samples) => (all.select(&order), set, pick(&order), set_samples),
            Holdout::Fraction(fraction) => {
                let count = (all.len() as f64 * fraction).round() as usize;
                (
                    all.select(&order[count..]),
                    all.select(&order[..count]),
                    pick(&order[count..]),
                    pick(&order[..count]),
                )
            }
        };
        let samples = retrace.map(|resolve| Samples {
            train: train_samples,
            validation: validation_samples,
            resolve,
        });
        TraceData::new(train, validation, samples)
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
        }
    }

    fn set(&self, split: Split) -> &TraceSet {
        match split {
            Split::Train => &self.train,
            Split::Validation => &self.validation,
        }
    }
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
