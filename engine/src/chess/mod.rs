//! The rules of chess as the engine needs them on top of shakmaty: positions
//! from and to FEN, Zobrist keys, move notation helpers ([`position`]), the
//! move generation the search needs beyond shakmaty's ([`movegen`]), perft
//! ([`perft`]), the fast SAN resolver the PGN readers use ([`san`]) and how
//! error messages quote input text ([`excerpt`]). Part of the core: no I/O,
//! no file formats.

pub mod excerpt;
pub mod movegen;
pub mod perft;
pub mod position;
pub mod san;
