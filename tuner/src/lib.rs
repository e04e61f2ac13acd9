//! The tuner's library: traced training data, the trace cache, objectives, optimisers, the
//! parameter space, the training loop, checkpoints, provenance and reports,
//! and SPSA tuning of UCI engines ([`spsa`]). The `tuner` binary (main.rs)
//! is the command line over them.

pub mod cache;
pub mod checkpoint;
pub mod dataset;
pub mod gradient_check;
pub mod kernel;
pub mod objective;
pub mod optimizer;
pub mod provenance;
pub mod report;
pub mod run_set;
pub mod source;
pub mod space;
pub mod spsa;
pub mod stream;
#[cfg(test)]
mod test_data;
pub mod trace_set;
pub mod trainer;
