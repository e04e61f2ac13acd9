//! pgnselect's PGN path, with the tool's own modules: the stream cut into
//! chunks of whole games, each chunk read by the sampling visitor through
//! the position filters and formatted. Never a panic; every problem on a
//! line of the input; every written line a legal labeled position.
#![no_main]
#![allow(dead_code, unused_imports)]

include!(concat!(env!("OUT_DIR"), "/pgnselect_modules.rs"));

use std::io::Cursor;

use clap::Parser;
use engine::formats::labeled::LabeledReader;
use engine::formats::pgn_chunks::GameChunker;
use libfuzzer_sys::fuzz_target;

use crate::chunk_selection::{ChunkWorker, select_from_chunk};
use crate::position_filter::PositionJudge;

/// Option sets, chosen by the first byte: every ply sampled, the random
/// move, the quiet filters, the Arasan and CSV formats, a shallow score
/// bound.
const OPTION_SETS: [&[&str]; 6] = [
    &["--min-ply", "0", "--min-gap", "1", "--max-gap", "1"],
    &["--min-ply", "0", "--min-gap", "1", "--max-gap", "2", "-r", "--format", "arasan"],
    &["--min-ply", "0", "-d", "1", "-s", "1", "--quiet=check", "--format", "csv"],
    &["--min-ply", "0", "-d", "1", "-s", "3", "--quiet=resolve", "--no-result"],
    &["--min-ply", "0", "-d", "1", "-s", "1", "--max-score", "300", "--search-depth", "1"],
    &["--min-elo", "2000", "--min-game-plies", "4", "--min-pieces", "6"],
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, pgn)) = data.split_first() else {
        return;
    };
    let set = usize::from(selector) % OPTION_SETS.len();
    // One worker per option set, kept from run to run as pgnselect keeps a
    // worker from chunk to chunk (its output may not depend on what the
    // worker saw before; the pipeline's thread-count tests rely on it).
    let mut cached = WORKERS.with(|w| w.borrow_mut()[set].take());
    let (settings, worker) = cached.get_or_insert_with(|| {
        let cli = cli::Cli::try_parse_from(
            std::iter::once("pgnselect")
                .chain(OPTION_SETS[set].iter().copied())
                .chain(["--threads", "1", "fuzz.pgn"]),
        )
        .expect("valid options");
        let settings = cli.settings().expect("valid settings");
        let worker = ChunkWorker {
            visitor: game_visitor::SamplingVisitor::new(settings.visitor),
            judge: PositionJudge::new(settings.positions),
            format: settings.format,
            with_result: settings.with_result,
        };
        (settings, worker)
    });
    let lines = pgn.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    // Small chunks: the cuts between games are exercised too.
    let target = 64 + usize::from(selector) * 8;
    let mut chunker = GameChunker::with_target(Cursor::new(pgn), target);
    let mut total = 0usize;
    while let Some(chunk) = chunker.next_chunk().expect("reading a slice") {
        total += chunk.bytes.len();
        let selection = select_from_chunk(worker, &chunk, 0);
        for problem in &selection.problems {
            assert!(
                (chunk.first_line..=lines).contains(&problem.line),
                "line {} outside {}..={lines}: {}",
                problem.line,
                chunk.first_line,
                problem.message
            );
            assert!(problem.message.len() < 600, "{}", problem.message);
        }
        let text = std::str::from_utf8(&selection.text).expect("UTF-8 output");
        if settings.format != output_format::OutputFormat::Csv {
            for item in LabeledReader::new(Cursor::new(text), None) {
                let (_, record) = item
                    .expect("an in-memory input reads to its end")
                    .unwrap_or_else(|e| panic!("{e}\n{text}"));
                assert_eq!(record.result.is_some(), settings.with_result);
            }
        }
    }
    assert_eq!(total, pgn.len(), "the chunks cover the input");
    WORKERS.with(|w| w.borrow_mut()[set] = cached);
});

thread_local! {
    static WORKERS: std::cell::RefCell<Vec<Option<(pipeline::RunSettings, ChunkWorker)>>> =
        std::cell::RefCell::new((0..OPTION_SETS.len()).map(|_| None).collect());
}
