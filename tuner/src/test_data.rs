//! The bundled labeled positions, for the library's unit tests.

use engine::formats::labeled::{GameResult, parse_line};
use shakmaty::Chess;

/// The first `n` positions of `data/labeled/masters-quiet-20k.epd`, with
/// their results.
pub(crate) fn positions(n: usize) -> Vec<(Chess, GameResult)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../data/labeled/masters-quiet-20k.epd"
    );
    let text = std::fs::read_to_string(path).expect("bundled data");
    text.lines()
        .take(n)
        .map(|l| {
            let r = parse_line(l).expect("a good line").expect("a record");
            (r.position, r.result.expect("a result"))
        })
        .collect()
}
