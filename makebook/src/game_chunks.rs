//! Cutting a PGN stream into chunks of whole games: the chunker now lives in
//! the engine library ([`engine::formats::pgn_chunks`]), shared with `pgnselect`.

pub use engine::formats::pgn_chunks::{GameChunk, GameChunker};
