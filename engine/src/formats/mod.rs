//! File formats and I/O of the toolchain, on top of the core: labeled
//! positions ([`labeled`]) and bullet's text and binary training formats
//! ([`bullet`]), compressed or plain inputs ([`input`]), atomic outputs
//! ([`atomic_file`]), PGN splitting, reading and writing ([`pgn_chunks`],
//! [`pgn_games`], [`pgn_tags`], [`pgn_record`]), Polyglot books
//! ([`book`]), engine scores in move comments ([`comment_score`]), test suites ([`epd_suite`], [`perft_suite`]), the
//! evaluation's params text file ([`params_file`]), the search parameters'
//! ([`search_params_file`]) and the ECO table of named openings ([`eco`]).
//! Formats use the core; the core never uses them.

pub mod atomic_file;
pub mod book;
pub mod bullet;
pub mod comment_score;
pub mod eco;
pub mod eco_table;
pub mod epd_suite;
pub mod input;
pub mod labeled;
pub mod params_file;
pub mod perft_suite;
pub mod pgn_chunks;
pub mod pgn_games;
pub mod pgn_record;
pub mod pgn_tags;
pub mod search_params_file;
