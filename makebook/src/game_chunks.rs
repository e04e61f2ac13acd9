//! Cutting a PGN stream into chunks of whole games: the chunker now lives in
//! the engine library ([`engine::pgn_chunks`]), shared with `pgnselect`.

pub use engine::pgn_chunks::{GameChunk, GameChunker};
