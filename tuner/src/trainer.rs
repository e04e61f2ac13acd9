//! The training loop: K fitting, epochs of mini-batch steps with L2
//! regularisation toward the starting weights, learning-rate decay, the
//! best weights on the validation set, early stopping, periodic
//! re-resolution, checkpoints and exact resume.
//!
//! The [`Trainer`] owns the run's state (a [`Checkpoint`]) and reads its
//! positions through the [`TrainingData`] trait, so where they live (traces
//! in memory today, a streamed trace cache later) does not concern the loop.
//! It does no I/O: after each epoch it hands an [`EpochReport`] to the
//! caller, which prints, writes the best weights and saves the checkpoint.
//!
//! Determinism: the order of the positions in an epoch depends only on the
//! seed and the epoch, and the data source's sums only on the positions, so
//! a run is bit-identical for any thread count and after any resume.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use engine::eval::Params;
use thiserror::Error;

use crate::checkpoint::{Checkpoint, RunSettings};
use crate::objective::{self, Objective, ObjectiveKind};
use crate::optimizer::{Optimizer, OptimizerKind};
use crate::report::EpochRow;
use crate::space::ParamSpace;

/// Where the trainer's positions come from: a training set it steps through
/// by mini-batches, and a validation set it only measures.
pub trait TrainingData {
    /// Number of training positions.
    fn train_len(&self) -> usize;

    /// Number of validation positions.
    fn validation_len(&self) -> usize;

    /// Mean loss over a whole set (NaN when it is empty).
    fn mean_loss(&self, split: Split, weights: &[f64], objective: &Objective) -> f64;

    /// A hash of the positions, results and search scores of both sets, as
    /// loaded (before any re-tracing).
    fn fingerprint(&self) -> u64;

    /// Re-resolves and re-traces every position with `params`
    /// (`--recompute-pv`). Returns false when the source cannot.
    fn retrace(&mut self, params: &Params) -> bool;

    /// Steps through one epoch: cuts the training positions, in an order
    /// fixed by `order_seed`, into mini-batches of about `batch` positions
    /// (a source may round them to its units; the last may be smaller) and
    /// calls `step` with each batch's mean loss, gradient and size, in
    /// order; `step` moves `weights`, which the next batch reads. `batch`
    /// at least the training set's size is one batch of everything.
    ///
    /// # Errors
    /// When the positions cannot be read.
    fn train_epoch(
        &mut self,
        order_seed: u64,
        batch: usize,
        objective: &Objective,
        weights: &mut Vec<f64>,
        step: &mut BatchStep,
    ) -> Result<(), DataError>;
}

/// What [`TrainingData::train_epoch`] calls after each mini-batch: with
/// the weights to move, the batch's mean loss and gradient, and its size.
pub type BatchStep<'a> = dyn FnMut(&mut Vec<f64>, f64, Vec<f64>, usize) + 'a;

/// Why a data source could not deliver its positions.
#[derive(Debug, Error)]
#[error(transparent)]
pub struct DataError(#[from] pub crate::cache::CacheError);

/// One of the two sets of a [`TrainingData`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// The positions the optimiser steps on.
    Train,
    /// The held-out positions that decide the best weights.
    Validation,
}

/// How a run trains: everything but the data and the parameter space.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainerSettings {
    /// Which loss (`-O`).
    pub objective: ObjectiveKind,
    /// A fixed sigmoid scale (`--k`), or `None` to fit it first.
    pub k: Option<f64>,
    /// Weight of the game result against the search score (`--lambda`).
    pub lambda: f64,
    /// The optimiser (`-o`).
    pub optimizer: OptimizerKind,
    /// Base learning rate (`--learning-rate`).
    pub learning_rate: f64,
    /// Factor applied to the learning rate after every epoch.
    pub lr_decay: f64,
    /// Positions per step; 0 = the whole training set.
    pub batch_size: usize,
    /// L2 penalty toward the starting weights, per cp², added to the mean
    /// loss; 0 turns it off.
    pub l2: f64,
    /// Seed of the per-epoch shuffles.
    pub seed: u64,
    /// Re-trace the data with the current weights every this many epochs
    /// (0: never).
    pub recompute_every: usize,
    /// Epochs to run at most (counted from the start of the run).
    pub epochs: usize,
    /// Stop after this many epochs without a better validation loss.
    pub patience: usize,
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The epoch limit was reached.
    Epochs,
    /// No better validation loss for `patience` epochs.
    EarlyStop,
    /// The stop flag was raised (Ctrl-C).
    Interrupted,
}

/// What one epoch did.
#[derive(Clone, Debug)]
pub struct EpochReport {
    /// The epoch's log row.
    pub row: EpochRow,
    /// Whether the validation loss improved (the best weights changed).
    pub improved: bool,
    /// Whether the data were re-traced before the epoch.
    pub retraced: bool,
}

/// A resume that would not continue the same run.
#[derive(Debug, Error)]
pub enum ResumeError {
    /// Settings or data differ from the checkpoint's.
    #[error(
        "the checkpoint was made with other settings or data (resume with the same ones):\n  {}",
        .0.join("\n  ")
    )]
    Settings(Vec<String>),
    /// The checkpoint's weights do not fit this engine's parameters.
    #[error("the checkpoint has {found} parameters, this engine {expected}")]
    Dimensions {
        /// The checkpoint's count.
        found: usize,
        /// The engine's count.
        expected: usize,
    },
}

/// The name of the data's fingerprint in [`RunSettings`].
pub const DATA_SETTING: &str = "data";

/// A training run.
#[derive(Clone, Debug)]
pub struct Trainer {
    settings: TrainerSettings,
    space: ParamSpace,
    objective: Objective,
    initial: Vec<f64>,
    state: Checkpoint,
    /// Seconds spent before this process took over (resume).
    elapsed_before: f64,
    started: Instant,
}

/// The objective of `settings`, with `K` (and the ordinal draw margin)
/// fitted on the training set at `weights` unless `--k` fixes it.
pub fn fit_objective(
    settings: &TrainerSettings,
    data: &impl TrainingData,
    weights: &[f64],
) -> Objective {
    let objective = Objective {
        kind: settings.objective,
        k: settings.k.unwrap_or(1.0),
        lambda: settings.lambda,
        draw_margin: 0.5,
    };
    match settings.k {
        Some(_) => objective,
        None => objective::fit_scale(|obj| data.mean_loss(Split::Train, weights, obj), objective),
    }
}

impl Trainer {
    /// A new run from `initial`: fits the objective and measures epoch 0.
    pub fn new(
        settings: TrainerSettings,
        space: ParamSpace,
        initial: Vec<f64>,
        data: &impl TrainingData,
    ) -> Self {
        let objective = fit_objective(&settings, data, &initial);
        let train0 = data.mean_loss(Split::Train, &initial, &objective);
        let val0 = data.mean_loss(Split::Validation, &initial, &objective);
        let val0 = if val0.is_nan() { train0 } else { val0 };
        let state = Checkpoint {
            epoch: 0,
            k: objective.k,
            draw_margin: objective.draw_margin,
            learning_rate: settings.learning_rate,
            best_validation: val0,
            best_epoch: 0,
            settings: Self::run_settings(&settings, &space, &initial, data),
            traced_with: None,
            weights: initial.clone(),
            best_weights: initial.clone(),
            optimizer: Optimizer::new(settings.optimizer, space.len()),
            history: vec![EpochRow {
                epoch: 0,
                train_loss: train0,
                validation_loss: val0,
                positions_per_sec: 0.0,
                elapsed_s: 0.0,
            }],
        };
        Trainer {
            settings,
            space,
            objective,
            initial,
            state,
            elapsed_before: 0.0,
            started: Instant::now(),
        }
    }

    /// Continues the run saved in `checkpoint` with the same settings, the
    /// same starting weights and the same data, re-tracing the data as the
    /// run last did.
    ///
    /// # Errors
    /// [`ResumeError`] naming every setting that differs.
    pub fn resume(
        settings: TrainerSettings,
        space: ParamSpace,
        initial: Vec<f64>,
        data: &mut impl TrainingData,
        checkpoint: Checkpoint,
    ) -> Result<Self, ResumeError> {
        let now = Self::run_settings(&settings, &space, &initial, data);
        let differences: Vec<String> = checkpoint
            .settings
            .differences(&now)
            .into_iter()
            .map(|d| {
                if d.starts_with(DATA_SETTING) {
                    format!(
                        "{d} (the positions, results or search scores differ: inputs, --resolve, \
                         --validation or --validation-file)"
                    )
                } else {
                    d
                }
            })
            .collect();
        if !differences.is_empty() {
            return Err(ResumeError::Settings(differences));
        }
        for v in [
            &checkpoint.weights,
            &checkpoint.best_weights,
            &checkpoint.optimizer.first,
            &checkpoint.optimizer.second,
        ] {
            if v.len() != space.len() {
                return Err(ResumeError::Dimensions {
                    found: v.len(),
                    expected: space.len(),
                });
            }
        }
        if let Some(w) = &checkpoint.traced_with {
            data.retrace(&Params::from_scalars(w));
        }
        let objective = Objective {
            kind: settings.objective,
            k: checkpoint.k,
            lambda: settings.lambda,
            draw_margin: checkpoint.draw_margin,
        };
        Ok(Trainer {
            elapsed_before: checkpoint.history.last().map_or(0.0, |r| r.elapsed_s),
            settings,
            space,
            objective,
            initial,
            state: checkpoint,
            started: Instant::now(),
        })
    }

    /// Everything that changes the result of a run, under the options that
    /// set it: what a checkpoint records and a resume must match. The epoch
    /// limit and the patience are not among them: a resumed run may go on
    /// for longer.
    pub fn run_settings(
        settings: &TrainerSettings,
        space: &ParamSpace,
        initial: &[f64],
        data: &impl TrainingData,
    ) -> RunSettings {
        let mut r = RunSettings::new();
        r.set(
            "-O/--objective",
            format!("{:?}", settings.objective).to_lowercase(),
        );
        r.set(
            "--k",
            settings
                .k
                .map_or("fitted".to_string(), |k| format!("{k:?}")),
        );
        r.set("--lambda", format!("{:?}", settings.lambda));
        r.set("-o/--optimizer", settings.optimizer.name());
        r.set("--learning-rate", format!("{:?}", settings.learning_rate));
        r.set("--lr-decay", format!("{:?}", settings.lr_decay));
        r.set("--batch-size", settings.batch_size);
        r.set("--l2", format!("{:?}", settings.l2));
        let groups: Vec<&str> = space.tuned_groups().iter().map(|g| g.name()).collect();
        r.set("--tune/--freeze", groups.join(","));
        if !space.only_blocks_names().is_empty() {
            r.set("--blocks", space.only_blocks_names().join(","));
        }
        if !space.frozen_blocks_names().is_empty() {
            r.set("--freeze-blocks", space.frozen_blocks_names().join(","));
        }
        r.set("--seed", settings.seed);
        r.set("-R/--recompute-pv", settings.recompute_every);
        r.set(
            "-i/--init/--material-only",
            format!("starting weights {:016x}", weights_hash(initial)),
        );
        r.set(DATA_SETTING, format!("{:016x}", data.fingerprint()));
        r
    }

    /// The objective in use (K fitted or fixed).
    pub fn objective(&self) -> &Objective {
        &self.objective
    }

    /// The run's state: what a checkpoint saves.
    pub fn state(&self) -> &Checkpoint {
        &self.state
    }

    /// The parameter space.
    pub fn space(&self) -> &ParamSpace {
        &self.space
    }

    /// The starting weights.
    pub fn initial(&self) -> &[f64] {
        &self.initial
    }

    /// The best weights so far, rounded to the engine's parameters.
    pub fn best_params(&self) -> Params {
        ParamSpace::rounded(&self.state.best_weights)
    }

    /// Whether the epoch limit or early stopping ends the run now.
    pub fn finished(&self) -> Option<Stop> {
        if self.state.epoch >= self.settings.epochs {
            Some(Stop::Epochs)
        } else if self.state.epoch > 0
            && self.state.epoch - self.state.best_epoch >= self.settings.patience
        {
            Some(Stop::EarlyStop)
        } else {
            None
        }
    }

    /// Runs one epoch: re-traces when due, steps through the shuffled
    /// batches, decays the learning rate, measures the validation loss and
    /// keeps the best weights.
    ///
    /// # Errors
    /// When the data source cannot read its positions.
    pub fn epoch(&mut self, data: &mut impl TrainingData) -> Result<EpochReport, DataError> {
        let s = &self.settings;
        let state = &mut self.state;
        let epoch = state.epoch + 1;
        let mut retraced = false;
        if s.recompute_every > 0 && state.epoch > 0 && state.epoch.is_multiple_of(s.recompute_every)
        {
            let current = ParamSpace::rounded(&state.weights);
            retraced = data.retrace(&current);
            if retraced {
                state.traced_with = Some(current.to_scalars());
            }
        }
        let epoch_start = Instant::now();
        let n = data.train_len();
        let batch = if s.batch_size == 0 { n } else { s.batch_size };
        let mut train_loss = 0.0;
        let (initial, space, lr) = (&self.initial, &self.space, state.learning_rate);
        let optimizer = &mut state.optimizer;
        data.train_epoch(
            s.seed ^ (epoch as u64) << 20,
            batch,
            &self.objective,
            &mut state.weights,
            &mut |weights, loss, mut grad, len| {
                let mut penalty = 0.0;
                if s.l2 > 0.0 {
                    for (i, g) in grad.iter_mut().enumerate() {
                        let d = weights[i] - initial[i];
                        penalty += s.l2 * d * d;
                        *g += 2.0 * s.l2 * d;
                    }
                }
                train_loss += (loss + penalty) * len as f64;
                optimizer.step(
                    weights,
                    &grad,
                    lr,
                    space.tunable(),
                    space.min(),
                    space.max(),
                );
            },
        )?;
        train_loss /= n as f64;
        let secs = epoch_start.elapsed().as_secs_f64();
        let mut val = data.mean_loss(Split::Validation, &state.weights, &self.objective);
        if val.is_nan() {
            val = data.mean_loss(Split::Train, &state.weights, &self.objective);
        }
        state.epoch = epoch;
        state.learning_rate *= s.lr_decay;
        let row = EpochRow {
            epoch,
            train_loss,
            validation_loss: val,
            positions_per_sec: n as f64 / secs.max(1e-9),
            elapsed_s: self.elapsed_before + self.started.elapsed().as_secs_f64(),
        };
        state.history.push(row);
        let improved = val < state.best_validation;
        if improved {
            state.best_validation = val;
            state.best_epoch = epoch;
            state.best_weights = state.weights.clone();
        }
        Ok(EpochReport {
            row,
            improved,
            retraced,
        })
    }

    /// Runs epochs until the limit, early stopping or `stop`, calling
    /// `on_epoch` after each one (to print, write the best weights and save
    /// the checkpoint).
    ///
    /// # Errors
    /// The first error of `on_epoch` or of the data source.
    pub fn run<D: TrainingData, E: From<DataError>>(
        &mut self,
        data: &mut D,
        stop: &AtomicBool,
        mut on_epoch: impl FnMut(&Trainer, &EpochReport) -> Result<(), E>,
    ) -> Result<Stop, E> {
        loop {
            if let Some(why) = self.finished() {
                return Ok(why);
            }
            if stop.load(Ordering::SeqCst) {
                return Ok(Stop::Interrupted);
            }
            let report = self.epoch(data)?;
            on_epoch(self, &report)?;
        }
    }
}

/// FNV-1a over the bits of `weights`.
fn weights_hash(weights: &[f64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for w in weights {
        h ^= w.to_bits();
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}
