//! The engine library, in layers that depend one way:
//!
//! * the **core** — [`chess`] (positions, move generation, perft), [`eval`]
//!   (the tunable evaluation) and [`search`] — uses no I/O and nothing
//!   above it;
//! * [`formats`] — labeled positions, inputs and atomic outputs, PGN,
//!   Polyglot books, test suites, params files — uses the core;
//! * [`runtime`] — how the tools run: the ordered parallel map, Ctrl-C,
//!   progress bars, JSON summaries — uses the core and the formats;
//! * [`play`] — game rules, players, UCI client, matches, Elo — uses the
//!   core, the formats and the runtime;
//! * on top: the UCI front end ([`uci`]) and the benchmark ([`bench`](mod@crate::bench)).
//!
//! `engine/tests/layers.rs` enforces the direction and the absence of module
//! cycles in the core. The most used items are re-exported here.

pub mod bench;
pub mod chess;
pub mod eval;
pub mod formats;
pub mod play;
pub mod runtime;
pub mod search;
pub mod uci;

pub use chess::position::{fen_of, key, parse_fen, uci_of};
pub use eval::{Params, evaluate};
pub use search::{SearchLimits, Searcher};
