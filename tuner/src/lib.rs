//! The tuner's library: traced training data, objectives, optimisers,
//! checkpoints and reports. The `tuner` binary (main.rs) drives them.

pub mod checkpoint;
pub mod dataset;
pub mod gradient_check;
pub mod objective;
pub mod optimizer;
pub mod report;
pub mod trace_set;
