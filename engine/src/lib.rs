//! The engine library: positions, labeled-position formats, the tunable
//! evaluation, search, the formats shared by the toolchain's tools, and
//! game play: the arbiter ([`game`]), players (in-process [`player`] or
//! external [`uci_client`]) and engine matches ([`match_runner`]).

pub mod atomic_file;
pub mod bench;
pub mod book;
pub mod elo;
pub mod epdtest;
pub mod eval;
pub mod game;
pub mod input;
pub mod labeled;
pub mod match_runner;
pub mod movegen;
pub mod movepick;
pub mod openings;
pub mod perft;
pub mod pgn_chunks;
pub mod pgn_record;
pub mod player;
pub mod position;
pub mod search;
pub mod timeman;
pub mod tt;
pub mod uci;
pub mod uci_client;
