//! SPSA tuning of any UCI engine's spin options (`tuner spsa`), in the form
//! OpenBench uses: the schedule of perturbations and learning rates
//! ([`schedule`]), which options are tuned and how ([`tunables`]), the
//! games of an iteration, played by the engine library's match runner
//! ([`games`]), the run's state with its checkpoint and log ([`state`]), the
//! plot of each parameter's path ([`plot`]) and the command itself
//! ([`cli`]).

pub mod cli;
pub mod games;
pub mod plot;
pub mod schedule;
pub mod state;
pub mod tunables;

pub use cli::{ABOUT, Ending, SpsaArgs, run};
