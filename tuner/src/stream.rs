//! Training from a trace cache without holding it: `--stream`.
//!
//! The validation positions (chosen by [`validation_mask`] with the seed,
//! exactly as in memory) and a sample of the training positions (for
//! fitting `K` and reporting the training loss before and after) are read
//! once and kept; every epoch then reads the cache's blocks in an order
//! shuffled with the seed and the epoch, [`WINDOW_BLOCKS`] at a time, takes
//! the runs of the window's training positions as the cache stores them
//! (when the validation split takes whole runs; else it decodes and
//! encodes the window), shuffles them by groups of runs as in
//! memory, and cuts them into mini-batches of whole runs (a batch may span
//! two windows: its sums are added in order). Memory is one window, the
//! validation set, the sample and one bit per position, whatever the size
//! of the cache, and the result depends only on the cache, the seed and
//! the settings (not on the thread count).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use engine::eval::Params;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::cache::{CacheError, CacheMeta, CacheReader};
use crate::objective::{self, Objective};
use crate::run_set::RunSet;
use crate::source::{
    Mask, holds_out_whole_runs, runs_by_groups, validation_count, validation_mask,
};
use crate::trace_set::{Hasher, TraceSet};
use crate::trainer::{BatchStep, DataError, Split, TrainingData};

/// Blocks of the cache read and shuffled together (4 × 65,536 positions).
pub const WINDOW_BLOCKS: usize = 4;
/// Training positions kept in memory for fitting `K` and measuring the
/// training loss at fixed weights.
pub const SAMPLE_POSITIONS: usize = 1 << 20;

/// A trace cache read block by block.
pub struct StreamData {
    path: PathBuf,
    reader: Mutex<CacheReader>,
    validation_mask: Mask,
    /// The validation split takes whole runs.
    splits_runs: bool,
    validation: TraceSet,
    sample: TraceSet,
    train_len: usize,
    fingerprint: u64,
    meta: CacheMeta,
}

impl StreamData {
    /// Opens the cache at `path`, takes the validation positions (a
    /// `fraction` chosen with `seed`) and the training sample out of it,
    /// reporting the positions read to `on_progress`.
    ///
    /// # Errors
    /// A cache that cannot be read, or is damaged or of another schema.
    pub fn open(
        path: &Path,
        fraction: f64,
        seed: u64,
        mut on_progress: impl FnMut(usize),
    ) -> Result<StreamData, CacheError> {
        let mut reader = CacheReader::open(path)?;
        let n = reader.positions() as usize;
        let mask = validation_mask(n, validation_count(n, fraction), seed);
        let count = mask.count();
        let train_len = n - count;
        // An evenly spread sample of the training positions.
        let stride = train_len.div_ceil(SAMPLE_POSITIONS).max(1);
        let mut validation = TraceSet::new();
        let mut sample = TraceSet::new();
        let mut train_seen = 0usize;
        let mut read = 0usize;
        for k in 0..reader.blocks() {
            let mut block = TraceSet::new();
            reader.read_block(k, &mut block)?;
            let (first, _) = reader.block_span(k);
            for i in 0..block.len() {
                if mask.get(first as usize + i) {
                    validation.push_record_of(&block, i);
                } else {
                    if train_seen.is_multiple_of(stride) {
                        sample.push_record_of(&block, i);
                    }
                    train_seen += 1;
                }
            }
            read += block.len();
            on_progress(read);
        }
        validation.shrink_to_fit();
        sample.shrink_to_fit();
        let mut h = Hasher::new();
        h.write_u64(reader.content_checksum());
        h.write_u64(n as u64);
        h.write_u64(count as u64);
        h.write_u64(validation.fingerprint());
        let meta = reader.meta().clone();
        Ok(StreamData {
            meta,
            path: path.to_path_buf(),
            reader: Mutex::new(reader),
            splits_runs: holds_out_whole_runs(n, &mask),
            validation_mask: mask,
            validation,
            sample,
            train_len,
            fingerprint: h.finish(),
        })
    }

    /// The validation set (in memory).
    pub fn validation(&self) -> &TraceSet {
        &self.validation
    }

    /// The training sample (in memory).
    pub fn sample(&self) -> &TraceSet {
        &self.sample
    }

    /// The cache's header.
    pub fn meta(&self) -> &CacheMeta {
        &self.meta
    }

    /// The cache.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes of traces held in memory.
    pub fn heap_bytes(&self) -> usize {
        self.validation.heap_bytes() + self.sample.heap_bytes()
    }

    /// The training positions of the blocks `window`, as runs.
    fn window_runs(&mut self, window: &[usize]) -> Result<RunSet, DataError> {
        let reader = self.reader.get_mut().unwrap_or_else(|e| e.into_inner());
        let last = reader.blocks() - 1;
        let mask = &self.validation_mask;
        if !self.splits_runs {
            let mut pool = TraceSet::new();
            for &k in window {
                let mut block = TraceSet::new();
                reader.read_block(k, &mut block)?;
                let (first, _) = reader.block_span(k);
                block.split_off_where(|i| mask.get(first as usize + i));
                pool.append(block);
            }
            return Ok(RunSet::encode(&pool));
        }
        // The cache's last block may end inside a run: it comes last, so
        // that the runs of the others stay runs.
        let mut order = window.to_vec();
        order.sort_by_key(|&k| k == last);
        let mut pool = RunSet::default();
        for k in order {
            let mut block = reader.read_block_runs(k)?;
            let (first, _) = reader.block_span(k);
            block.split_off_runs(|i| mask.get(first as usize + i));
            pool.append(block);
        }
        Ok(pool)
    }
}

/// The running sums of a mini-batch that may span windows.
struct Pending {
    loss: f64,
    grad: Vec<f64>,
    /// Positions summed.
    len: usize,
}

impl TrainingData for StreamData {
    fn train_len(&self) -> usize {
        self.train_len
    }

    fn validation_len(&self) -> usize {
        self.validation.len()
    }

    /// The training loss is measured on the training sample.
    fn mean_loss(&self, split: Split, weights: &[f64], objective: &Objective) -> f64 {
        match split {
            Split::Train => objective::mean_loss(&self.sample, weights, objective),
            Split::Validation => objective::mean_loss(&self.validation, weights, objective),
        }
    }

    fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    fn retrace(&mut self, _: &Params) -> bool {
        false
    }

    fn train_epoch(
        &mut self,
        order_seed: u64,
        batch: usize,
        objective: &Objective,
        weights: &mut Vec<f64>,
        step: &mut BatchStep,
    ) -> Result<(), DataError> {
        let blocks = self
            .reader
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .blocks();
        let mut rng = ChaCha8Rng::seed_from_u64(order_seed);
        let mut blocks: Vec<usize> = (0..blocks).collect();
        blocks.shuffle(&mut rng);
        let dims = weights.len();
        let batch = batch.max(1);
        let mut pending = Pending {
            loss: 0.0,
            grad: vec![0.0; dims],
            len: 0,
        };
        let mut flush = |pending: &mut Pending, weights: &mut Vec<f64>| {
            if pending.len == 0 {
                return;
            }
            let scale = 1.0 / pending.len as f64;
            let grad = std::mem::replace(&mut pending.grad, vec![0.0; dims]);
            let grad: Vec<f64> = grad.into_iter().map(|g| g * scale).collect();
            step(weights, pending.loss * scale, grad, pending.len);
            pending.loss = 0.0;
            pending.len = 0;
        };
        for window in blocks.chunks(WINDOW_BLOCKS) {
            let pool = self.window_runs(window)?;
            let order = runs_by_groups(pool.runs(), Some(&mut rng));
            let mut rest = &order[..];
            while !rest.is_empty() {
                // Whole runs up to the batch's positions.
                let (mut take, mut positions) = (0, 0);
                while take < rest.len() && pending.len + positions < batch {
                    positions += pool.run_range(rest[take] as usize).len();
                    take += 1;
                }
                let (part, tail) = rest.split_at(take);
                let (loss, grad) =
                    objective::loss_and_gradient_runs_sums(&pool, part, weights, objective);
                pending.loss += loss;
                for (a, b) in pending.grad.iter_mut().zip(&grad) {
                    *a += b;
                }
                pending.len += positions;
                if pending.len >= batch {
                    flush(&mut pending, weights);
                }
                rest = tail;
            }
        }
        flush(&mut pending, weights);
        Ok(())
    }
}
