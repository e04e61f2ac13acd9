//! The engine library: positions, labeled-position formats, the tunable
//! evaluation, search, and the formats shared by the toolchain's tools.

pub mod atomic_file;
pub mod book;
pub mod eval;
pub mod input;
pub mod labeled;
pub mod position;
