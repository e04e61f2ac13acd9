//! The progress display of every tool: a bar over the input bytes when
//! their total is known, a spinner otherwise, each with a message the tool
//! keeps up to date (games, positions, rates).
//!
//! The display is drawn only on a terminal, and only when the user did not
//! turn it off (`--no-progress`); otherwise it is hidden and its methods
//! cost almost nothing. Messages printed through [`Progress::println`]
//! never tear the bar.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Redraws per second at most.
const REFRESH_PER_SECOND: u8 = 5;

/// Layout of the bar over input bytes.
const BYTES_TEMPLATE: &str =
    "{elapsed_precise} [{bar:24}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta} {msg}";

/// Layout over input bytes of unknown total (standard input).
const BYTES_SPINNER_TEMPLATE: &str = "{spinner} {elapsed_precise} {bytes} {bytes_per_sec} {msg}";

/// Layout of a display without a measure of the work done.
const SPINNER_TEMPLATE: &str = "{spinner} {elapsed_precise} {msg}";

/// How often a spinner turns while nothing else changes.
const TICK: Duration = Duration::from_millis(200);

/// A progress display.
#[derive(Debug, Clone)]
pub struct Progress {
    bar: ProgressBar,
    started: Instant,
}

/// Whether a display should be drawn: asked for, and standard error is a
/// terminal.
fn visible(wanted: bool) -> bool {
    wanted && std::io::stderr().is_terminal()
}

fn styled(bar: ProgressBar, template: &str) -> ProgressBar {
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(REFRESH_PER_SECOND));
    bar.enable_steady_tick(TICK);
    bar
}

impl Progress {
    /// A bar over `total` input bytes (a spinner counting bytes when the
    /// total is unknown); hidden unless `wanted` and standard error is a
    /// terminal. The position is set with [`Progress::set_position`].
    pub fn bytes(total: Option<u64>, wanted: bool) -> Progress {
        let bar = if !visible(wanted) {
            ProgressBar::hidden()
        } else {
            match total {
                Some(total) => styled(ProgressBar::new(total), BYTES_TEMPLATE),
                None => styled(ProgressBar::new_spinner(), BYTES_SPINNER_TEMPLATE),
            }
        };
        Progress {
            bar,
            started: Instant::now(),
        }
    }

    /// A spinner with a message only; hidden unless `wanted` and standard
    /// error is a terminal.
    pub fn spinner(wanted: bool) -> Progress {
        let bar = if visible(wanted) {
            styled(ProgressBar::new_spinner(), SPINNER_TEMPLATE)
        } else {
            ProgressBar::hidden()
        };
        Progress {
            bar,
            started: Instant::now(),
        }
    }

    /// A display that is never drawn (tests, quiet runs).
    pub fn hidden() -> Progress {
        Progress::spinner(false)
    }

    /// Whether the display is hidden (then updates can be skipped).
    pub fn is_hidden(&self) -> bool {
        self.bar.is_hidden()
    }

    /// Sets the measure of work done (bytes for [`Progress::bytes`]).
    pub fn set_position(&self, position: u64) {
        self.bar.set_position(position);
    }

    /// Sets the text after the bar.
    pub fn set_message(&self, message: impl Into<Cow<'static, str>>) {
        self.bar.set_message(message);
    }

    /// Forgets the rate measured so far (after a resume skipped work).
    pub fn reset_eta(&self) {
        self.bar.reset_eta();
    }

    /// Time since the display was made.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// `count` per second since the display was made.
    pub fn rate(&self, count: u64) -> f64 {
        count as f64 / self.elapsed().as_secs_f64().max(f64::MIN_POSITIVE)
    }

    /// Prints a line on standard error without disturbing the bar.
    pub fn println(&self, line: &str) {
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.suspend(|| eprintln!("{line}"));
        }
    }

    /// Removes the display; returns the time since it was made.
    pub fn finish(&self) -> Duration {
        self.bar.finish_and_clear();
        self.started.elapsed()
    }
}
