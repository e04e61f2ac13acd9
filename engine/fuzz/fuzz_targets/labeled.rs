//! Every labeled-line format (EPD with c9/c2/ce, `FEN [result]`,
//! `FEN | score | result`, CSV with a header), through the reader every tool
//! uses: never a panic, every error located on a line of the input, every
//! record written back as EPD and read again unchanged. Read again with
//! the labels ignored (the labeler's reading), the same lines give the
//! same positions without labels, and no line the strict reading accepts
//! is rejected.
#![no_main]

use std::io::Cursor;

use engine::chess::position::fen_of;
use engine::formats::labeled::{LabeledPosition, LabeledReader, Labels, parse_line};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let lines = data.split(|&b| b == b'\n').count();
    let strict = LabeledReader::new(Cursor::new(data), None);
    let mut ignoring = LabeledReader::new(Cursor::new(data), None).labels(Labels::Ignore);
    for item in strict {
        let item = item.expect("an in-memory input reads to its end");
        let ignored = ignoring
            .next()
            .expect("as many items")
            .expect("an in-memory input reads to its end");
        match (&item, &ignored) {
            (Ok((line, record)), _) => assert_eq!(
                ignored,
                Ok((*line, LabeledPosition::new(record.position.clone())))
            ),
            (Err(e), Ok((line, _))) => assert_eq!(e.line, *line),
            (Err(e), Err(f)) => assert_eq!(e.line, f.line),
        }
        match item {
            Ok((line, record)) => {
                assert!((1..=lines).contains(&line), "record at line {line} of {lines}");
                let epd = record.to_epd();
                let back = parse_line(&epd)
                    .unwrap_or_else(|e| panic!("{epd}: {e}"))
                    .expect("a record line");
                assert_eq!(fen_of(&back.position), fen_of(&record.position));
                assert_eq!(back.result, record.result);
                assert_eq!(back.score, record.score);
            }
            Err(e) => {
                assert!((1..=lines).contains(&e.line), "error at line {} of {lines}", e.line);
                assert!(e.to_string().len() < 600, "{e}");
            }
        }
    }
    assert!(ignoring.next().is_none(), "as many items");
});
