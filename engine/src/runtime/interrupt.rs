//! Stopping a run early: one handler for Ctrl-C (SIGINT) and SIGTERM for
//! every tool.
//!
//! [`Interrupt`] is a flag that the work polls (the ordered map stops
//! cutting items when it is set, see [`crate::runtime::ordered`]) plus the
//! stop flags of running searches, so that a search in progress returns at
//! once. [`Interrupt::install`] makes the first signal print the tool's
//! message and set the flag, so the tool can finish tidily (write what is
//! complete, or nothing, as it documents); a second signal exits at once
//! with status [`EXIT_INTERRUPTED`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Exit status of a run stopped by a signal (128 + SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The run-wide stop request.
#[derive(Debug, Default)]
pub struct Interrupt {
    requested: AtomicBool,
    search_flags: Mutex<Vec<Arc<AtomicBool>>>,
}

/// The signal handler could not be installed.
#[derive(Debug, thiserror::Error)]
#[error("cannot install the Ctrl-C/SIGTERM handler: {0}")]
pub struct InstallError(#[from] ctrlc::Error);

impl Interrupt {
    /// A shared, not yet triggered interrupt.
    pub fn new() -> Arc<Interrupt> {
        Arc::new(Interrupt::default())
    }

    /// Installs the process's Ctrl-C/SIGTERM handler for this interrupt:
    /// the first signal prints `message` (when given) on standard error and
    /// triggers the interrupt; the second exits with [`EXIT_INTERRUPTED`].
    /// Only one handler can be installed per process.
    ///
    /// # Errors
    /// When a handler is already installed or the system refuses.
    pub fn install(self: &Arc<Self>, message: Option<&'static str>) -> Result<(), InstallError> {
        let interrupt = Arc::clone(self);
        ctrlc::set_handler(move || {
            if interrupt.requested() {
                std::process::exit(i32::from(EXIT_INTERRUPTED));
            }
            // The flag first: the work must see the stop before anything a
            // slow or failing standard error could delay.
            interrupt.trigger();
            if let Some(message) = message {
                eprintln!("\n{message}");
            }
        })?;
        Ok(())
    }

    /// Whether a stop was requested.
    pub fn requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }

    /// The flag itself, for code that polls an [`AtomicBool`].
    pub fn flag(&self) -> &AtomicBool {
        &self.requested
    }

    /// Requests a stop and aborts every registered search.
    pub fn trigger(&self) {
        self.requested.store(true, Ordering::SeqCst);
        let flags = self
            .search_flags
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for flag in flags.iter() {
            flag.store(true, Ordering::SeqCst);
        }
    }

    /// Registers a search's stop flag (set at once if already triggered).
    pub fn register_search(&self, flag: Arc<AtomicBool>) {
        let mut flags = self
            .search_flags
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if self.requested() {
            flag.store(true, Ordering::SeqCst);
        }
        flags.push(flag);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_stops_registered_searches_before_and_after() {
        let interrupt = Interrupt::new();
        let before = Arc::new(AtomicBool::new(false));
        interrupt.register_search(Arc::clone(&before));
        assert!(!interrupt.requested() && !before.load(Ordering::SeqCst));
        interrupt.trigger();
        assert!(interrupt.requested() && interrupt.flag().load(Ordering::SeqCst));
        assert!(before.load(Ordering::SeqCst));
        let after = Arc::new(AtomicBool::new(false));
        interrupt.register_search(Arc::clone(&after));
        assert!(after.load(Ordering::SeqCst));
    }
}
