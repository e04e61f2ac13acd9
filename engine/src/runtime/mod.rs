//! The tools' runtime, above the formats: how a tool runs its work, the
//! same way in every tool.
//!
//! * [`ordered`] — the ordered, bounded parallel map: items cut from a
//!   source, worked on by N threads, delivered in source order (output
//!   identical for any thread count, memory bounded);
//! * [`interrupt`] — Ctrl-C/SIGTERM: a flag the work polls, search stop
//!   flags, a second signal exits at once;
//! * [`progress`] — the progress bar (input bytes, or a spinner), shown only
//!   on a terminal;
//! * [`summary`] — the JSON summary written with `--summary FILE`;
//! * [`exit`] — how a failure ends a tool (a closed pipe is a quiet stop);
//! * [`fingerprint`] — FNV-1a hashes that recognise a run's input files.
//!
//! The runtime uses the core and the formats; [`crate::play`] and the tools
//! use it.

pub mod exit;
pub mod fingerprint;
pub mod interrupt;
pub mod ordered;
pub mod progress;
pub mod summary;
