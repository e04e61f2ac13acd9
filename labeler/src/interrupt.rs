//! Stopping a run early (Ctrl-C, SIGTERM, or a fatal error): one flag that
//! every thread polls, plus the stop flags of the in-process searches, so a
//! running search returns at once. Games cut short this way are abandoned,
//! never written; the next run plays them again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The run-wide stop request.
#[derive(Default)]
pub struct Interrupt {
    requested: AtomicBool,
    search_flags: Mutex<Vec<Arc<AtomicBool>>>,
}

impl Interrupt {
    /// A shared, not yet triggered interrupt.
    pub fn new() -> Arc<Self> {
        Arc::new(Interrupt::default())
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
        for flag in self.search_flags.lock().expect("interrupt lock").iter() {
            flag.store(true, Ordering::SeqCst);
        }
    }

    /// Registers a search's stop flag (set at once if already triggered).
    pub fn register_search(&self, flag: Arc<AtomicBool>) {
        let mut flags = self.search_flags.lock().expect("interrupt lock");
        if self.requested() {
            flag.store(true, Ordering::SeqCst);
        }
        flags.push(flag);
    }
}
