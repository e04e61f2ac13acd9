//! The tuner's library: traced training data, objectives, optimisers,
//! checkpoints and reports, and SPSA tuning of UCI engines ([`spsa`]). The
//! `tuner` binary (main.rs) drives them.

pub mod checkpoint;
pub mod dataset;
pub mod gradient_check;
pub mod objective;
pub mod optimizer;
pub mod report;
pub mod spsa;
pub mod trace_set;
