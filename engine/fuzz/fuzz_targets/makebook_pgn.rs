//! makebook's PGN path, with the tool's own modules: the same bytes read as
//! a collection (in chunks, main lines) and as the annotated file (all
//! variations, weight comments, glyphs), then weighted into book entries.
//! Never a panic; every problem on a line of the input; every entry's move
//! decodes in some position (its key is checked by the book writer's tests).
#![no_main]
#![allow(dead_code, unused_imports)]

include!(concat!(env!("OUT_DIR"), "/makebook_modules.rs"));

use std::io::Cursor;

use engine::formats::pgn_chunks::GameChunker;
use libfuzzer_sys::fuzz_target;
use shakmaty::Color;

use crate::annotated::{AnnotatedTally, AnnotatedVisitor};
use crate::collection::{CollectionFilter, CollectionTally, CollectionVisitor};
use crate::pgn_scan::scan_chunk;
use crate::weighting::{WeightSettings, compute_entries};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, pgn)) = data.split_first() else {
        return;
    };
    let only = match selector % 3 {
        0 => None,
        1 => Some(Color::White),
        _ => Some(Color::Black),
    };
    let lines = pgn.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let check = |problems: &[pgn_scan::Problem], first_line: u64| {
        for p in problems {
            assert!(
                (first_line..=lines).contains(&p.line),
                "line {} outside {first_line}..={lines}: {}",
                p.line,
                p.message
            );
            assert!(p.message.len() < 600, "{}", p.message);
        }
    };

    let mut collections = CollectionTally::default();
    let filter = CollectionFilter {
        max_ply: u32::from(selector),
        only,
        min_elo: (selector & 0x80 != 0).then_some(2000),
    };
    let target = 64 + usize::from(selector) * 8;
    let mut chunker = GameChunker::with_target(Cursor::new(pgn), target);
    while let Some(chunk) = chunker.next_chunk().expect("reading a slice") {
        let mut visitor = CollectionVisitor::new(filter, &mut collections);
        let scan = scan_chunk(&chunk, &mut visitor);
        check(&scan.problems, chunk.first_line);
    }

    // The annotated file is read as one piece.
    let mut annotated = AnnotatedTally::default();
    let whole = game_chunks::GameChunk::new(0, 1, 0, pgn.to_vec());
    let mut visitor = AnnotatedVisitor::new(only, &mut annotated);
    let scan = scan_chunk(&whole, &mut visitor);
    check(&scan.problems, 1);

    let settings = WeightSettings {
        min_count: 1,
        min_score: None,
    };
    let (entries, _) = compute_entries(&collections.moves, &annotated.moves, settings);
    assert!(entries.windows(2).all(|w| w[0].key <= w[1].key), "book order");
});
