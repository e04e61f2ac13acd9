//! The engine library: positions, labeled-position formats, the tunable
//! evaluation, search, and the formats shared by the toolchain's tools.

pub mod atomic_file;
pub mod bench;
pub mod book;
pub mod epdtest;
pub mod eval;
pub mod input;
pub mod labeled;
pub mod movepick;
pub mod perft;
pub mod pgn_chunks;
pub mod position;
pub mod search;
pub mod timeman;
pub mod tt;
pub mod uci;
