//! Polyglot books: any bytes are a valid book or a clear error; lookups,
//! move decoding, weighted choice and random lines never panic and only
//! ever give legal moves.
#![no_main]

use std::path::Path;

use engine::formats::book::{PolyglotBook, decode_move, raw_move_text};
use libfuzzer_sys::fuzz_target;
use rand::SeedableRng;
use shakmaty::{Chess, Position};

fuzz_target!(|data: &[u8]| {
    let Ok(book) = PolyglotBook::from_bytes(data, Path::new("fuzz.bin")) else {
        return;
    };
    let start = Chess::default();
    for e in book.entries() {
        let _ = raw_move_text(e.raw_move);
        if let Some(m) = decode_move(&start, e.raw_move) {
            assert!(start.is_legal(m));
        }
    }
    for (m, _) in book.moves(&start) {
        assert!(start.is_legal(m));
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(data.len() as u64);
    if let Some(m) = book.choose_move(&start, &mut rng) {
        assert!(start.is_legal(m));
    }
    let mut pos = start;
    for m in book.random_line(&pos, &mut rng, 12) {
        assert!(pos.is_legal(m));
        pos.play_unchecked(m);
        for (m, _) in book.moves(&pos) {
            assert!(pos.is_legal(m));
        }
    }
});
