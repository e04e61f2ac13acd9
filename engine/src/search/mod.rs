//! The search: [`Searcher`] (iterative deepening, alpha-beta, quiescence,
//! Lazy SMP) in [`searcher`], with what it is built from: the move picker
//! ([`movepick`]), the transposition table ([`tt`]), time management
//! ([`timeman`]), the tunable search parameters ([`params`]) and the score
//! units every caller shares ([`score`]). Part
//! of the core: it uses the chess rules and the evaluation, no I/O.

pub mod correction;
pub mod movepick;
pub mod params;
pub mod score;
pub mod searcher;
pub mod timeman;
pub mod tt;

pub use params::{SEARCH_PARAMS, SearchParamSpec, SearchParams};
pub use score::{DRAW_SCORE, INFINITY, MATE_BOUND, MATE_SCORE, MAX_PLY, mate_in_moves};
pub use searcher::{SearchInfo, SearchLimits, SearchResult, Searcher};
