//! Playing games: the arbiter of one game ([`game`]), who chooses the moves
//! ([`player`]: the in-process searcher, or any UCI engine through
//! [`uci_client`]), opening sources ([`openings`]), engine matches
//! ([`match_runner`]), the journals that let them resume
//! ([`match_journal`]), their statistics ([`elo`]) and the sequential test
//! that stops them early ([`sprt`]). Uses the core and the formats, never
//! the reverse.

pub mod elo;
pub mod game;
pub mod match_journal;
pub mod match_runner;
pub mod openings;
pub mod player;
pub mod sprt;
pub mod uci_client;
