//! Checkpoints: the complete state of a tuning run after an epoch, written
//! atomically, from which `--resume` continues bit for bit.
//!
//! The format is text, one `key value…` line per field; floating-point
//! values are written as the hexadecimal bits of the `f64` so that a resumed
//! run computes exactly what the uninterrupted run would have. The
//! checkpoint also records the run's [`RunSettings`]: every setting that
//! changes the result and the fingerprint of the data (positions, results
//! and search scores). A resumed run must have the same ones.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use engine::formats::atomic_file::AtomicFile;

use crate::optimizer::{Optimizer, OptimizerKind};
use crate::report::EpochRow;

const MAGIC: &str = "tuner-checkpoint 2";

/// The settings that change a run's result, each under the option that
/// sets it, in a fixed order; values are printed exactly (`f64` in Rust's
/// shortest round-trip form).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunSettings {
    entries: Vec<(String, String)>,
}

impl RunSettings {
    /// No settings.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `value` for `option` (replacing an earlier value). The
    /// option's name has no whitespace.
    pub fn set(&mut self, option: &str, value: impl std::fmt::Display) {
        debug_assert!(!option.contains(char::is_whitespace), "{option:?}");
        let value = value.to_string();
        match self.entries.iter_mut().find(|(o, _)| o == option) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((option.to_string(), value)),
        }
    }

    /// The value recorded for `option`.
    pub fn get(&self, option: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(o, _)| o == option)
            .map(|(_, v)| v.as_str())
    }

    /// Every `(option, value)`, in order.
    pub fn entries(&self) -> &[(String, String)] {
        &self.entries
    }

    /// How `now` differs from these (recorded) settings, one line per
    /// option: `--l2: 1e-8 in the checkpoint, 0 now`.
    pub fn differences(&self, now: &RunSettings) -> Vec<String> {
        let mut out = Vec::new();
        for (option, value) in &self.entries {
            match now.get(option) {
                Some(v) if v == value => {}
                Some(v) => out.push(format!("{option}: {value} in the checkpoint, {v} now")),
                None => out.push(format!("{option}: {value} in the checkpoint, not set now")),
            }
        }
        for (option, value) in &now.entries {
            if self.get(option).is_none() {
                out.push(format!("{option}: not in the checkpoint, {value} now"));
            }
        }
        out
    }
}

/// Everything needed to continue a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// Epochs completed.
    pub epoch: usize,
    /// Sigmoid scale in use.
    pub k: f64,
    /// Ordinal draw margin in use.
    pub draw_margin: f64,
    /// Current learning rate (after decay).
    pub learning_rate: f64,
    /// Best validation loss so far.
    pub best_validation: f64,
    /// Epoch of the best validation loss.
    pub best_epoch: usize,
    /// The settings and data fingerprint of the run.
    pub settings: RunSettings,
    /// The rounded weights the data were last re-traced with
    /// (`--recompute-pv`); `None` while they are traced with the starting
    /// weights.
    pub traced_with: Option<Vec<i32>>,
    /// Current weights.
    pub weights: Vec<f64>,
    /// Weights with the best validation loss.
    pub best_weights: Vec<f64>,
    /// Optimiser state.
    pub optimizer: Optimizer,
    /// The log so far.
    pub history: Vec<EpochRow>,
}

fn hex(v: f64) -> String {
    format!("{:016x}", v.to_bits())
}

fn unhex(s: &str) -> Result<f64> {
    Ok(f64::from_bits(
        u64::from_str_radix(s, 16).with_context(|| format!("bad number {s:?}"))?,
    ))
}

fn hex_vec(v: &[f64]) -> String {
    v.iter().map(|x| hex(*x)).collect::<Vec<_>>().join(" ")
}

impl Checkpoint {
    /// Writes the checkpoint atomically.
    ///
    /// # Errors
    /// I/O errors, with the path.
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut out = AtomicFile::create(path)?;
        let mut text = String::new();
        text.push_str(MAGIC);
        text.push('\n');
        text.push_str(&format!("epoch {}\n", self.epoch));
        text.push_str(&format!("k {}\n", hex(self.k)));
        text.push_str(&format!("draw_margin {}\n", hex(self.draw_margin)));
        text.push_str(&format!("learning_rate {}\n", hex(self.learning_rate)));
        text.push_str(&format!("best_validation {}\n", hex(self.best_validation)));
        text.push_str(&format!("best_epoch {}\n", self.best_epoch));
        for (option, value) in self.settings.entries() {
            text.push_str(&format!("setting {option} {value}\n"));
        }
        if let Some(w) = &self.traced_with {
            let values: Vec<String> = w.iter().map(i32::to_string).collect();
            text.push_str(&format!("traced_with {}\n", values.join(" ")));
        }
        text.push_str(&format!("optimizer {}\n", self.optimizer.kind.name()));
        text.push_str(&format!("steps {}\n", self.optimizer.steps));
        text.push_str(&format!("weights {}\n", hex_vec(&self.weights)));
        text.push_str(&format!("best_weights {}\n", hex_vec(&self.best_weights)));
        text.push_str(&format!("first {}\n", hex_vec(&self.optimizer.first)));
        text.push_str(&format!("second {}\n", hex_vec(&self.optimizer.second)));
        for r in &self.history {
            text.push_str(&format!(
                "row {} {} {} {} {}\n",
                r.epoch,
                hex(r.train_loss),
                hex(r.validation_loss),
                hex(r.positions_per_sec),
                hex(r.elapsed_s)
            ));
        }
        out.write_all(text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        out.commit()?;
        Ok(())
    }

    /// Reads a checkpoint.
    ///
    /// # Errors
    /// I/O errors and malformed content, with the path and line.
    pub fn load(path: &Path) -> Result<Checkpoint> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading checkpoint {}", path.display()))?;
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, MAGIC)) => {}
            Some((_, l)) if l.starts_with("tuner-checkpoint ") => bail!(
                "{}: a checkpoint of another tuner version ({l:?}); start the run again",
                path.display()
            ),
            _ => bail!("{}: not a tuner checkpoint", path.display()),
        }
        let mut cp = Checkpoint {
            epoch: 0,
            k: 0.0,
            draw_margin: 0.0,
            learning_rate: 0.0,
            best_validation: f64::INFINITY,
            best_epoch: 0,
            settings: RunSettings::new(),
            traced_with: None,
            weights: Vec::new(),
            best_weights: Vec::new(),
            optimizer: Optimizer::new(OptimizerKind::Adam, 0),
            history: Vec::new(),
        };
        for (n, line) in lines {
            let at = || format!("{}:{}", path.display(), n + 1);
            let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
            let vec = || -> Result<Vec<f64>> { rest.split_whitespace().map(unhex).collect() };
            match key {
                "epoch" => cp.epoch = rest.parse().with_context(at)?,
                "k" => cp.k = unhex(rest).with_context(at)?,
                "draw_margin" => cp.draw_margin = unhex(rest).with_context(at)?,
                "learning_rate" => cp.learning_rate = unhex(rest).with_context(at)?,
                "best_validation" => cp.best_validation = unhex(rest).with_context(at)?,
                "best_epoch" => cp.best_epoch = rest.parse().with_context(at)?,
                "setting" => {
                    let (option, value) = rest
                        .split_once(' ')
                        .with_context(|| format!("{}: a setting has a name and a value", at()))?;
                    cp.settings.set(option, value);
                }
                "traced_with" => {
                    let w: Result<Vec<i32>, _> = rest.split_whitespace().map(str::parse).collect();
                    cp.traced_with = Some(w.with_context(at)?);
                }
                "optimizer" => {
                    cp.optimizer.kind = match rest {
                        "adam" => OptimizerKind::Adam,
                        "adagrad" => OptimizerKind::Adagrad,
                        "momentum" => OptimizerKind::Momentum,
                        other => bail!("{}: unknown optimizer {other:?}", at()),
                    }
                }
                "steps" => cp.optimizer.steps = rest.parse().with_context(at)?,
                "weights" => cp.weights = vec().with_context(at)?,
                "best_weights" => cp.best_weights = vec().with_context(at)?,
                "first" => cp.optimizer.first = vec().with_context(at)?,
                "second" => cp.optimizer.second = vec().with_context(at)?,
                "row" => {
                    let f: Vec<&str> = rest.split_whitespace().collect();
                    if f.len() != 5 {
                        bail!("{}: a row has 5 fields", at());
                    }
                    cp.history.push(EpochRow {
                        epoch: f[0].parse().with_context(at)?,
                        train_loss: unhex(f[1]).with_context(at)?,
                        validation_loss: unhex(f[2]).with_context(at)?,
                        positions_per_sec: unhex(f[3]).with_context(at)?,
                        elapsed_s: unhex(f[4]).with_context(at)?,
                    });
                }
                _ => bail!("{}: unknown field {key:?}", at()),
            }
        }
        let n = cp.weights.len();
        if n == 0
            || cp.best_weights.len() != n
            || cp.optimizer.first.len() != n
            || cp.optimizer.second.len() != n
        {
            bail!("{}: incomplete checkpoint", path.display());
        }
        Ok(cp)
    }
}
