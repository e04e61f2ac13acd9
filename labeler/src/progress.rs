//! The progress bar on a terminal: input bytes consumed (for the ETA),
//! positions done, games per second and the running result distribution.
//! Hidden when standard error is not a terminal.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::summary::RunStats;

/// Redraws per second at most.
const REFRESH_PER_SECOND: u8 = 4;

/// The live display of a run.
pub struct ProgressDisplay {
    bar: ProgressBar,
    started: Instant,
    eta_reset: bool,
}

impl ProgressDisplay {
    /// A bar over `total_bytes` of input (a spinner when unknown); hidden
    /// unless `enabled` and standard error is a terminal.
    pub fn new(total_bytes: Option<u64>, enabled: bool) -> Self {
        let bar = if !enabled || !std::io::stderr().is_terminal() {
            ProgressBar::hidden()
        } else {
            let (bar, template) = match total_bytes {
                Some(total) => (
                    ProgressBar::new(total),
                    "{bar:30.cyan/blue} {percent:>3}% ETA {eta:>4} | {msg}",
                ),
                None => (ProgressBar::new_spinner(), "{spinner} {elapsed} | {msg}"),
            };
            bar.set_style(ProgressStyle::with_template(template).expect("valid progress template"));
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(
                REFRESH_PER_SECOND,
            ));
            bar
        };
        ProgressDisplay {
            bar,
            started: Instant::now(),
            eta_reset: false,
        }
    }

    /// Updates the display after a position was written; `input_byte` is how
    /// far into the inputs that position was.
    pub fn update(&mut self, stats: &RunStats, input_byte: u64) {
        if !self.eta_reset {
            // Positions skipped by a resume would make the first rate wrong.
            self.bar.reset_eta();
            self.eta_reset = true;
        }
        self.bar.set_position(input_byte);
        let seconds = self.started.elapsed().as_secs_f64().max(f64::EPSILON);
        self.bar.set_message(format!(
            "{} done ({} this run), {:.1} games/s, {}",
            stats.labeled + stats.resumed_jobs,
            stats.labeled,
            stats.labeled as f64 / seconds,
            stats.distribution()
        ));
    }

    /// Prints a line above the bar.
    pub fn println(&self, line: &str) {
        self.bar.suspend(|| eprintln!("{line}"));
    }

    /// Removes the bar; returns the time since the run started.
    pub fn finish(self) -> Duration {
        self.bar.finish_and_clear();
        self.started.elapsed()
    }
}
