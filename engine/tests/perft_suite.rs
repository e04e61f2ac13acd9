//! Move generation against the standard perft suite (copied from
//! shared/data, see data/SOURCES.md), depths limited to keep it fast.

use std::path::Path;

use engine::chess::perft::perft;
use engine::formats::perft_suite::read_suite;

/// Largest expected count checked (keeps the test to about a second).
const MAX_NODES_CHECKED: u64 = 2_000_000;

#[test]
fn standard_perft_suite_passes() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/suites/perftsuite.epd");
    let cases = read_suite(&path).expect("perft suite readable");
    assert!(cases.len() >= 100);
    let mut checked = 0;
    for case in &cases {
        for &(depth, expected) in &case.expected {
            if expected > MAX_NODES_CHECKED {
                continue;
            }
            assert_eq!(
                perft(&case.position, depth),
                expected,
                "{} depth {depth}",
                case.fen
            );
            checked += 1;
        }
    }
    assert!(checked >= 400, "only {checked} counts checked");
}
