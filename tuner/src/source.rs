//! The training data held in memory: the traced training and validation
//! sets, and, for `--recompute-pv`, the positions they were traced from.
//! The [`TrainingData`] of in-memory tuning; [`crate::stream`] is the other.
//!
//! The training set is held in input order as runs of [`RUN_POSITIONS`]
//! consecutive positions ([`crate::run_set`]): when consecutive positions
//! share most of their coefficients (a game's positions one after another,
//! as self-play writes them), a record stores only the differences from
//! the previous position's, and the epoch's work per position falls with
//! the coefficients stored; otherwise (positions sampled from many games)
//! every record stays whole. A [`TraceLoader`] builds the data from the
//! loaded positions a part at a time (the trace cache's blocks), so that
//! the whole records are never all held beside the runs.
//!
//! Each epoch visits the runs by groups of `GROUP_RUNS` (64 consecutive
//! positions) in an order shuffled with the seed and the epoch, and cuts
//! them into mini-batches of whole runs: a batch is a random sample of 256
//! such groups (at 16,384 positions), different in every epoch, and the
//! kernels read each group's records in sequence.

use std::sync::Arc;

use engine::eval::Params;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::dataset::{self, Resolve, Sample};
use crate::objective::{self, Objective};
use crate::run_set::{DecodeError, RUN_POSITIONS, RunSet, RunSetBuilder};
use crate::trace_set::TraceSet;
use crate::trainer::{BatchStep, DataError, Split, TrainingData};

/// Runs an epoch's shuffle keeps together: 64 consecutive positions, 2–4 kB
/// of records read in a row (runs of 16 shuffled one by one made epochs on
/// a million master positions 8% slower for their memory stalls).
const GROUP_RUNS: u32 = 4;

/// The runs `0..total` by groups of `GROUP_RUNS` consecutive runs, the
/// groups in an order shuffled by `rng` (in order without one).
pub fn runs_by_groups(total: usize, rng: Option<&mut ChaCha8Rng>) -> Vec<u32> {
    let total = total as u32;
    let mut groups: Vec<u32> = (0..total.div_ceil(GROUP_RUNS)).collect();
    if let Some(rng) = rng {
        groups.shuffle(rng);
    }
    groups
        .iter()
        .flat_map(|&g| g * GROUP_RUNS..((g + 1) * GROUP_RUNS).min(total))
        .collect()
}

/// Traced positions in memory.
#[derive(Clone, Debug)]
pub struct TraceData {
    /// The training set, in input order.
    train: RunSet,
    /// The validation set, as runs like the training set (may be empty:
    /// then the training loss decides).
    pub validation: RunSet,
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

impl Holdout {
    /// The fraction to hold out, or the separate set and its positions.
    pub fn into_parts(self) -> (Option<f64>, Option<(TraceSet, Vec<Sample>)>) {
        match self {
            Holdout::Fraction(fraction) => (Some(fraction), None),
            Holdout::Set(set, samples) => (None, Some((set, samples))),
        }
    }
}

impl TraceData {
    /// Splits the loaded positions `all` into training and validation sets,
    /// in input order (see [`TraceLoader`]), or takes the separate set of
    /// `holdout` for validation. With `retrace` the positions are kept
    /// (`samples` holds those of `all`, in order) for re-tracing with that
    /// resolution.
    pub fn split(
        all: TraceSet,
        samples: Vec<Sample>,
        holdout: Holdout,
        seed: u64,
        retrace: Option<Resolve>,
    ) -> TraceData {
        let (fraction, set) = holdout.into_parts();
        let mut loader = TraceLoader::new(all.len(), fraction, seed);
        let (validation, set_samples) = set.unzip();
        let samples = retrace.map(|resolve| {
            let (mut train, mut held_out) = (Vec::new(), Vec::new());
            for (i, s) in samples.into_iter().enumerate() {
                if loader.is_validation(i) {
                    held_out.push(s);
                } else {
                    train.push(s);
                }
            }
            Samples {
                train,
                validation: set_samples.unwrap_or(held_out),
                resolve,
            }
        });
        loader.push(all);
        loader
            .finish(validation, samples)
            .expect("whole positions need no decoding")
    }

    /// The data of `train` and `validation`; `samples` when they are to be
    /// re-traced.
    pub fn new(train: TraceSet, validation: TraceSet, samples: Option<Samples>) -> Self {
        let mut loader = TraceLoader::new(train.len(), None, 0);
        loader.push(train);
        loader
            .finish(Some(validation), samples)
            .expect("whole positions need no decoding")
    }

    /// The training set.
    pub fn train(&self) -> &RunSet {
        &self.train
    }
}

/// Builds a [`TraceData`] from the loaded positions given in input order, a
/// part at a time (blocks of the trace cache as they are read): each part's
/// validation positions ([`validation_mask`]) go to the validation set, the
/// others to the training runs ([`RunSetBuilder`]), so that the whole
/// records of the training set are never held beside its runs. Parts
/// already stored as runs (the cache's blocks) go to the training runs as
/// they are when the validation split takes whole runs.
#[derive(Debug)]
pub struct TraceLoader {
    /// The validation positions (none when another set validates).
    mask: Mask,
    /// Positions given so far.
    seen: usize,
    /// Positions to be given.
    total: usize,
    /// The validation split takes whole runs of [`RUN_POSITIONS`].
    splits_runs: bool,
    train: RunSetBuilder,
    /// Validation positions given as runs (by [`TraceLoader::push_runs`]).
    validation_runs: RunSet,
    /// Validation positions given whole (by [`TraceLoader::push`]).
    validation_whole: TraceSet,
}

impl TraceLoader {
    /// A loader for `total` positions, of which about the `fraction` (runs
    /// of consecutive positions chosen by `seed`) are held out for
    /// validation; all are for training without a fraction.
    pub fn new(total: usize, fraction: Option<f64>, seed: u64) -> TraceLoader {
        let (mask, splits_runs) = match fraction {
            Some(f) => {
                let mask = validation_mask(total, validation_count(total, f), seed);
                let splits_runs = holds_out_whole_runs(total, &mask);
                (mask, splits_runs)
            }
            None => (Mask::default(), true),
        };
        TraceLoader {
            mask,
            splits_runs,
            seen: 0,
            total,
            train: RunSetBuilder::new(),
            validation_runs: RunSet::default(),
            validation_whole: TraceSet::new(),
        }
    }

    /// Whether position `i` (in input order) is held out for validation.
    pub fn is_validation(&self, i: usize) -> bool {
        self.mask.get(i)
    }

    /// Gives the next positions, `part`.
    pub fn push(&mut self, mut part: TraceSet) {
        let base = self.seen;
        self.seen += part.len();
        assert!(self.seen <= self.total, "more positions than announced");
        let held_out = part.split_off_where(|i| self.mask.get(base + i));
        self.validation_whole.append(held_out);
        self.train.push(part);
    }

    /// Gives the next positions, `part`, stored as runs: its runs go to the
    /// training set as they are when the validation split takes whole runs
    /// (else it is decoded and given as whole records).
    ///
    /// # Errors
    /// When a run must be decoded and does not decode (a damaged record).
    pub fn push_runs(&mut self, mut part: RunSet) -> Result<(), DecodeError> {
        let base = self.seen;
        if !(self.splits_runs && base.is_multiple_of(RUN_POSITIONS)) {
            self.push(part.into_whole()?);
            return Ok(());
        }
        self.seen += part.len();
        assert!(self.seen <= self.total, "more positions than announced");
        let held_out = part.split_off_runs(|i| self.mask.get(base + i));
        self.validation_runs.append(held_out.into_encoded());
        self.train.push_runs(part)
    }

    /// The data, once every position is given: validated by `validation`
    /// when another set validates, with `samples` when they are to be
    /// re-traced.
    ///
    /// # Errors
    /// When validation runs given by [`TraceLoader::push_runs`] must be
    /// decoded to be joined with positions given whole, and do not decode
    /// (a damaged record; not when the parts are the blocks of one cache).
    pub fn finish(
        self,
        validation: Option<TraceSet>,
        samples: Option<Samples>,
    ) -> Result<TraceData, DecodeError> {
        assert_eq!(self.seen, self.total, "positions missing");
        // Runs as `RunSet::encode` would make of the validation positions
        // in order: the cache's runs as they are, positions given whole
        // encoded (after the runs decoded, in the rare case of both).
        let validation = match validation {
            Some(v) => RunSet::encode(&v),
            None if self.validation_whole.is_empty() => self.validation_runs,
            None => {
                let mut whole = self.validation_runs.into_whole()?;
                whole.append(self.validation_whole);
                RunSet::encode(&whole)
            }
        };
        let train = self.train.finish();
        let fingerprint = train.fingerprint() ^ validation.fingerprint().rotate_left(1);
        Ok(TraceData {
            train,
            validation,
            samples,
            fingerprint,
        })
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
/// positions, at least 1 (position by position, for small sets); from 16,000
/// positions on, rounded down to whole runs of [`RUN_POSITIONS`], so that
/// the split takes the training runs as they are (a cache's runs need no
/// decoding, see [`holds_out_whole_runs`]).
///
/// Every labeler writes a game's positions one after another; held out one
/// by one, nearly every validation position would have neighbours of the
/// same game in the training set, and the validation loss would keep
/// falling while the weights learn those games rather than chess (it
/// would not detect overfitting). Runs of 256 hold out whole games but at
/// their ends, and a thousand runs or more keep the split representative.
pub fn validation_run(n: usize) -> usize {
    let run = (n / 1000).clamp(1, 256);
    if run >= RUN_POSITIONS {
        run - run % RUN_POSITIONS
    } else {
        run
    }
}

/// Whether `mask`, a [`validation_mask`] of `n` positions, holds out whole
/// runs of [`RUN_POSITIONS`] (from 16,000 positions on; any mask that holds
/// out nothing), so that runs of the positions in order split into runs of
/// the training and of the validation set.
pub fn holds_out_whole_runs(n: usize, mask: &Mask) -> bool {
    mask.count() == 0 || validation_run(n).is_multiple_of(RUN_POSITIONS)
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

    fn mean_loss(&self, split: Split, weights: &[f64], objective: &Objective) -> f64 {
        match split {
            Split::Train => objective::mean_loss_runs(&self.train, weights, objective),
            Split::Validation => objective::mean_loss_runs(&self.validation, weights, objective),
        }
    }

    fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Mini-batches of whole runs, rounded up from `batch` positions, in
    /// an order shuffled with `order_seed` by groups of `GROUP_RUNS`;
    /// one batch of everything reads the runs in order.
    fn train_epoch(
        &mut self,
        order_seed: u64,
        batch: usize,
        objective: &Objective,
        weights: &mut Vec<f64>,
        step: &mut BatchStep,
    ) -> Result<(), DataError> {
        let n = self.train.len();
        let mut rng = ChaCha8Rng::seed_from_u64(order_seed);
        let runs = runs_by_groups(self.train.runs(), (batch < n).then_some(&mut rng));
        let runs_per_batch = batch.max(1).div_ceil(RUN_POSITIONS);
        for chunk in runs.chunks(runs_per_batch) {
            let (loss, grad) =
                objective::loss_and_gradient_runs(&self.train, chunk, weights, objective);
            let positions = chunk
                .iter()
                .map(|&r| self.train.run_range(r as usize).len())
                .sum();
            step(weights, loss, grad, positions);
        }
        Ok(())
    }

    fn retrace(&mut self, params: &Params) -> bool {
        let Some(s) = &self.samples else {
            return false;
        };
        let params = Arc::new(params.clone());
        let mut train = RunSetBuilder::new();
        train.push(dataset::trace_samples(&s.train, s.resolve, &params));
        self.train = train.finish();
        self.validation =
            RunSet::encode(&dataset::trace_samples(&s.validation, s.resolve, &params));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objective::ObjectiveKind;
    use crate::test_data::{game_positions, positions};

    /// Positions of games one after another are stored as runs of
    /// differences; positions sampled from many games stay whole; both
    /// decode to the positions, in order.
    #[test]
    fn the_layout_follows_the_data() {
        let games = game_positions(60, 40);
        let data = TraceData::new(games.clone(), TraceSet::new(), None);
        let (stored, own) = data.train().coefficients();
        assert!(stored * 2 < own, "{stored} of {own}");
        assert_eq!(data.train().decode(), games);
        let mut sampled = TraceSet::new();
        for (pos, result) in positions(2000) {
            sampled.push_position(&pos, result, None);
        }
        let data = TraceData::new(sampled.clone(), TraceSet::new(), None);
        let (stored, own) = data.train().coefficients();
        assert_eq!(stored, own);
        assert_eq!(data.train().decode(), sampled);
    }

    /// Loading block by block gives the data of loading everything at
    /// once: the same validation positions, training runs and fingerprint.
    #[test]
    fn loading_in_blocks_is_loading_at_once() {
        let games = game_positions(100, 60);
        let at_once = TraceData::split(games.clone(), Vec::new(), Holdout::Fraction(0.2), 5, None);
        assert!(!at_once.validation.is_empty());
        let mut loader = TraceLoader::new(games.len(), Some(0.2), 5);
        for from in (0..games.len()).step_by(777) {
            let to = (from + 777).min(games.len());
            loader.push(games.select(&(from..to).collect::<Vec<_>>()));
        }
        let in_blocks = loader.finish(None, None).unwrap();
        assert_eq!(in_blocks.train(), at_once.train());
        assert_eq!(in_blocks.validation, at_once.validation);
        assert_eq!(in_blocks.fingerprint(), at_once.fingerprint());
        let other = TraceData::split(games.clone(), Vec::new(), Holdout::Fraction(0.2), 6, None);
        assert_ne!(other.fingerprint(), at_once.fingerprint());
    }

    /// Loading a cache's blocks as runs gives the data of loading their
    /// positions whole: when the validation split takes whole runs (runs
    /// of 16 at 17,000 positions; the runs are taken as they are) and when
    /// it does not (9 at 9,000; they are decoded), for games (stored as
    /// differences) and for scattered positions (stored whole).
    #[test]
    fn loading_runs_is_loading_positions() {
        let games = game_positions(320, 60);
        assert_eq!(validation_run(17_000), RUN_POSITIONS);
        assert_eq!(validation_run(9_000), 9);
        for n in [17_000, 9_000] {
            let ordered = games.select(&(0..n).collect::<Vec<_>>());
            let scattered = games.select(&(0..n).map(|i| i * 7919 % n).collect::<Vec<_>>());
            for set in [ordered, scattered] {
                let at_once =
                    TraceData::split(set.clone(), Vec::new(), Holdout::Fraction(0.2), 5, None);
                // Blocks as runs, or as the cache stores them (whole when
                // differences do not pay).
                for whole_blocks in [false, true] {
                    let mut loader = TraceLoader::new(n, Some(0.2), 5);
                    for from in (0..n).step_by(4096) {
                        let block = set.select(&(from..(from + 4096).min(n)).collect::<Vec<_>>());
                        let runs = if whole_blocks {
                            RunSet::whole(block)
                        } else {
                            RunSet::encode(&block)
                        };
                        loader.push_runs(runs).unwrap();
                    }
                    let from_runs = loader.finish(None, None).unwrap();
                    let case = format!("{n} positions, whole blocks {whole_blocks}");
                    assert_eq!(from_runs.train(), at_once.train(), "{case}");
                    assert_eq!(from_runs.validation, at_once.validation, "{case}");
                    assert_eq!(from_runs.fingerprint(), at_once.fingerprint(), "{case}");
                }
            }
        }
    }

    /// Mini-batch epochs over runs give the same weights for 1 and 2
    /// threads, and another order for another seed.
    #[test]
    fn run_epochs_do_not_depend_on_the_thread_count() {
        let games = game_positions(100, 60);
        let objective = Objective {
            kind: ObjectiveKind::Log,
            k: 1.0,
            lambda: 1.0,
            draw_margin: 0.5,
        };
        let epoch = |threads: usize, seed: u64| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut data = TraceData::new(games.clone(), TraceSet::new(), None);
                let mut w = crate::space::ParamSpace::weights(&Params::defaults());
                let mut sizes = Vec::new();
                let mut step = |w: &mut Vec<f64>, _: f64, g: Vec<f64>, n: usize| {
                    sizes.push(n);
                    w.iter_mut().zip(&g).for_each(|(a, b)| *a -= 1e4 * b);
                };
                data.train_epoch(seed, 1000, &objective, &mut w, &mut step)
                    .unwrap();
                (w, sizes)
            })
        };
        let one = epoch(1, 9);
        assert_eq!(one, epoch(2, 9));
        // Batches of whole runs: 1,000 rounds up to 63 runs of 16.
        assert_eq!(one.1.iter().sum::<usize>(), games.len());
        assert_eq!(one.1[0], 1008);
        assert_ne!(one.0, epoch(1, 10).0);
    }

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
        assert_eq!(run, 112, "123 rounded down to whole runs of 16");
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
