//! FEN/EPD boards and UCI moves: never a panic; a parsed position writes
//! back to a FEN that parses to the same position, and every move the text
//! names is legal.
#![no_main]

use engine::chess::position::{fen_of, key, parse_fen, play_uci, polyglot_key};
use libfuzzer_sys::fuzz_target;
use shakmaty::Position;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (fen, moves) = text.split_once('|').unwrap_or((text, ""));
    let _ = engine::chess::perft::parse_perft_position(fen);
    let Ok(pos) = parse_fen(fen) else {
        return;
    };
    let written = fen_of(&pos);
    let again = parse_fen(&written).expect("a written FEN parses");
    assert_eq!(fen_of(&again), written);
    assert_eq!(key(&again), key(&pos));
    // The written FEN keeps only a usable en-passant square, where the
    // book hash and the key agree.
    assert_eq!(polyglot_key(&again), key(&pos));
    let mut pos = pos;
    for m in moves.split_whitespace() {
        match play_uci(&pos, m) {
            Ok((next, mv)) => {
                assert!(pos.is_legal(mv));
                pos = next;
            }
            Err(message) => {
                assert!(message.len() < 400, "{message}");
                break;
            }
        }
    }
});
