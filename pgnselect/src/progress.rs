//! The progress bar shown on a terminal: input bytes done (read and
//! merged into the output) against the inputs' total size, games read,
//! positions written and their rate.
//!
//! When standard error is not a terminal (or `--no-progress` is given) the
//! bar is hidden and costs nothing; messages about malformed games are
//! printed through [`Progress::println`] so they never tear the bar.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use engine::formats::input::ByteCounter;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often the bar redraws itself while waiting for work.
const TICK: Duration = Duration::from_millis(200);

/// Layout of the bar when the total size is known.
const BAR_TEMPLATE: &str =
    "{elapsed_precise} [{bar:24}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta} {msg}";

/// Layout when reading standard input.
const SPINNER_TEMPLATE: &str = "{spinner} {elapsed_precise} {bytes} {bytes_per_sec} {msg}";

/// The progress display.
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
    counters: Vec<ByteCounter>,
    started: Instant,
}

impl Progress {
    /// A display over the inputs' byte counters; `total` is their summed
    /// size when known. Hidden unless `wanted` and standard error is a
    /// terminal.
    pub fn new(counters: Vec<ByteCounter>, total: Option<u64>, wanted: bool) -> Progress {
        let visible = wanted && std::io::stderr().is_terminal();
        let bar = if !visible {
            ProgressBar::hidden()
        } else {
            let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
            let template = if total.is_some() {
                BAR_TEMPLATE
            } else {
                SPINNER_TEMPLATE
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.enable_steady_tick(TICK);
            bar
        };
        Progress {
            bar,
            counters,
            started: Instant::now(),
        }
    }

    /// Bytes read from all inputs so far.
    pub fn bytes_read(&self) -> u64 {
        self.counters.iter().map(ByteCounter::get).sum()
    }

    /// Refreshes the counts; `bytes_done` is how much of the input the
    /// merged output accounts for.
    pub fn update(&self, bytes_done: u64, games: u64, positions: u64) {
        if self.bar.is_hidden() {
            return;
        }
        self.bar.set_position(bytes_done);
        let seconds = self.started.elapsed().as_secs_f64().max(f64::MIN_POSITIVE);
        self.bar.set_message(format!(
            "{games} games, {positions} positions ({:.0}/s)",
            positions as f64 / seconds
        ));
    }

    /// Prints a line on standard error without disturbing the bar.
    pub fn println(&self, line: &str) {
        self.bar.suspend(|| eprintln!("{line}"));
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
