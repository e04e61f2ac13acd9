//! The engine library: positions, labeled-position formats, the tunable
//! evaluation, search, and the formats shared by the toolchain's tools.

pub mod eval;
pub mod labeled;
pub mod position;
