//! The training loop on its own, with a data source whose loss is known in
//! closed form (a quadratic in one parameter): convergence, bounds, frozen
//! groups, L2, early stopping, interruption, and exact resume through a
//! saved checkpoint, including the refusal of other settings.

use std::sync::atomic::AtomicBool;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use engine::eval::schema::blocks;
use engine::eval::{Group, Params};
use tuner::checkpoint::Checkpoint;
use tuner::objective::{Objective, ObjectiveKind};
use tuner::optimizer::OptimizerKind;
use tuner::space::ParamSpace;
use tuner::trainer::{
    BatchStep, DataError, ResumeError, Split, Stop, Trainer, TrainerSettings, TrainingData,
};

/// The knight's middlegame value.
fn knight() -> usize {
    2 * blocks::material.at(1)
}

/// Position `i` pulls the knight toward `train[i]`: its loss is
/// `(w − t)² / SCALE`. The validation set pulls toward `validation`.
struct Quadratic {
    train: Vec<f64>,
    validation: Option<f64>,
    fingerprint: u64,
}

const SCALE: f64 = 1e4;

impl TrainingData for Quadratic {
    fn train_len(&self) -> usize {
        self.train.len()
    }

    fn validation_len(&self) -> usize {
        usize::from(self.validation.is_some())
    }

    fn train_epoch(
        &mut self,
        order_seed: u64,
        batch: usize,
        objective: &Objective,
        weights: &mut Vec<f64>,
        step: &mut BatchStep,
    ) -> Result<(), DataError> {
        let n = self.train.len();
        let mut order: Vec<u32> = (0..n as u32).collect();
        if batch < n {
            order.shuffle(&mut ChaCha8Rng::seed_from_u64(order_seed));
        }
        for chunk in order.chunks(batch.max(1)) {
            let (loss, grad) = self.loss_and_gradient(chunk, weights, objective);
            step(weights, loss, grad, chunk.len());
        }
        Ok(())
    }

    fn mean_loss(&self, split: Split, w: &[f64], obj: &Objective) -> f64 {
        match split {
            Split::Train => {
                let all: Vec<u32> = (0..self.train.len() as u32).collect();
                self.loss_and_gradient(&all, w, obj).0
            }
            Split::Validation => self
                .validation
                .map_or(f64::NAN, |v| (w[knight()] - v).powi(2) / SCALE),
        }
    }

    fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    fn retrace(&mut self, _: &Params) -> bool {
        false
    }
}

impl Quadratic {
    /// Mean loss and its gradient over the positions `batch`.
    fn loss_and_gradient(&self, batch: &[u32], w: &[f64], _: &Objective) -> (f64, Vec<f64>) {
        let mut grad = vec![0.0; w.len()];
        let mut loss = 0.0;
        for &i in batch {
            let d = w[knight()] - self.train[i as usize];
            loss += d * d / SCALE;
            grad[knight()] += 2.0 * d / SCALE;
        }
        let n = batch.len() as f64;
        grad.iter_mut().for_each(|g| *g /= n);
        (loss / n, grad)
    }
}

fn data(train_target: f64, validation: Option<f64>) -> Quadratic {
    Quadratic {
        train: (0..100)
            .map(|i| train_target + (i % 7) as f64 - 3.0)
            .collect(),
        validation,
        fingerprint: 42,
    }
}

fn settings(epochs: usize) -> TrainerSettings {
    TrainerSettings {
        objective: ObjectiveKind::Mse,
        k: Some(1.0),
        lambda: 1.0,
        optimizer: OptimizerKind::Adam,
        learning_rate: 2.0,
        lr_decay: 1.0,
        batch_size: 10,
        l2: 0.0,
        seed: 1,
        recompute_every: 0,
        epochs,
        patience: 1000,
    }
}

fn initial() -> Vec<f64> {
    ParamSpace::weights(&Params::defaults())
}

fn run(trainer: &mut Trainer, data: &mut Quadratic) -> Stop {
    trainer
        .run(
            data,
            &AtomicBool::new(false),
            |_, _| Ok::<(), DataError>(()),
        )
        .unwrap()
}

#[test]
fn converges_within_bounds_and_moves_only_tunable_parameters() {
    let mut d = data(700.0, Some(700.0));
    let mut t = Trainer::new(settings(60), ParamSpace::new(&[], &[]), initial(), &d);
    assert_eq!(run(&mut t, &mut d), Stop::Epochs);
    let best = t.best_params();
    let knight_value = best.scalar(knight());
    assert!((knight_value - 700).abs() <= 3, "{knight_value}");
    // Parameters without gradient stay where they were.
    let start = Params::defaults();
    for i in (0..Params::NUM_SCALARS).filter(|&i| i != knight()) {
        assert_eq!(best.scalar(i), start.scalar(i), "{i}");
    }
    // Bounds: a target beyond the material maximum ends at the maximum.
    let mut d = data(9000.0, Some(9000.0));
    let mut t = Trainer::new(settings(200), ParamSpace::new(&[], &[]), initial(), &d);
    run(&mut t, &mut d);
    assert_eq!(t.best_params().scalar(knight()), 2500);
    // A frozen group does not move.
    let mut d = data(700.0, Some(700.0));
    let space = ParamSpace::new(&[], &[Group::Material]);
    let mut t = Trainer::new(settings(20), space, initial(), &d);
    run(&mut t, &mut d);
    assert_eq!(t.best_params(), Params::defaults());
}

#[test]
fn l2_holds_the_weights_near_their_start() {
    let mut d = data(700.0, Some(700.0));
    let mut s = settings(1000);
    s.l2 = 1.0 / SCALE; // as strong as the data: the optimum is halfway
    s.batch_size = 0;
    s.lr_decay = 0.995;
    let mut t = Trainer::new(s, ParamSpace::new(&[], &[]), initial(), &d);
    run(&mut t, &mut d);
    let start = Params::defaults().scalar(knight()) as f64;
    let halfway = (start + 700.0) / 2.0;
    let value = t.state().weights[knight()];
    assert!((value - halfway).abs() < 1.0, "{value} vs {halfway}");
}

#[test]
fn early_stopping_keeps_the_best_epoch() {
    // Training pulls up, validation wants the start: every step is worse.
    let start = Params::defaults().scalar(knight()) as f64;
    let mut d = data(900.0, Some(start));
    let mut s = settings(100);
    s.patience = 5;
    let mut t = Trainer::new(s, ParamSpace::new(&[], &[]), initial(), &d);
    assert_eq!(run(&mut t, &mut d), Stop::EarlyStop);
    assert_eq!(t.state().epoch, 5);
    assert_eq!(t.state().best_epoch, 0);
    assert_eq!(t.best_params(), Params::defaults());
    // Without a validation set the training loss decides: it improves.
    let mut d = data(900.0, None);
    let mut t = Trainer::new(settings(10), ParamSpace::new(&[], &[]), initial(), &d);
    run(&mut t, &mut d);
    assert_eq!(t.state().best_epoch, 10);
}

#[test]
fn a_raised_stop_flag_ends_the_run_between_epochs() {
    let mut d = data(700.0, Some(700.0));
    let mut t = Trainer::new(settings(50), ParamSpace::new(&[], &[]), initial(), &d);
    let stop = AtomicBool::new(false);
    let why = t
        .run(&mut d, &stop, |t, _| {
            if t.state().epoch == 3 {
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            Ok::<(), DataError>(())
        })
        .unwrap();
    assert_eq!((why, t.state().epoch), (Stop::Interrupted, 3));
}

#[test]
fn resume_from_a_saved_checkpoint_is_exact_and_refuses_other_settings() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.checkpoint");
    let mut d = data(700.0, Some(690.0));
    let mut straight = Trainer::new(settings(25), ParamSpace::new(&[], &[]), initial(), &d);
    run(&mut straight, &mut d);

    let mut first = Trainer::new(settings(10), ParamSpace::new(&[], &[]), initial(), &d);
    run(&mut first, &mut d);
    first.state().save(&path).unwrap();
    let cp = Checkpoint::load(&path).unwrap();
    assert_eq!(&cp, first.state());
    let mut resumed = Trainer::resume(
        settings(25),
        ParamSpace::new(&[], &[]),
        initial(),
        &mut d,
        cp.clone(),
    )
    .unwrap();
    run(&mut resumed, &mut d);
    let (a, b) = (straight.state(), resumed.state());
    assert_eq!(a.weights, b.weights);
    assert_eq!(a.best_weights, b.best_weights);
    assert_eq!(a.optimizer, b.optimizer);
    let losses = |c: &Checkpoint| -> Vec<(f64, f64)> {
        c.history
            .iter()
            .map(|r| (r.train_loss, r.validation_loss))
            .collect()
    };
    assert_eq!(losses(a), losses(b));

    let mut other = settings(25);
    other.batch_size = 20;
    other.lr_decay = 0.5;
    let err = Trainer::resume(
        other,
        ParamSpace::new(&[], &[]),
        initial(),
        &mut d,
        cp.clone(),
    )
    .unwrap_err();
    let ResumeError::Settings(diffs) = &err else {
        panic!("{err}")
    };
    assert_eq!(diffs.len(), 2, "{diffs:?}");
    assert!(diffs[0].starts_with("--lr-decay: 1.0 in the checkpoint, 0.5 now"));
    assert!(diffs[1].starts_with("--batch-size: 10 in the checkpoint, 20 now"));
    let space = ParamSpace::new(&[Group::Pst], &[]);
    let err = Trainer::resume(settings(25), space, initial(), &mut d, cp.clone()).unwrap_err();
    assert!(
        err.to_string().contains("--tune/--freeze: material,pst"),
        "{err}"
    );
    d.fingerprint = 43;
    let err = Trainer::resume(
        settings(25),
        ParamSpace::new(&[], &[]),
        initial(),
        &mut d,
        cp,
    )
    .unwrap_err();
    assert!(err.to_string().contains("data: "), "{err}");
}
