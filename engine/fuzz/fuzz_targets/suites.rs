//! EPD test suites (`bm`/`am`) and perft suites: never a panic, errors on a
//! line of the input.
#![no_main]

use engine::formats::{epd_suite, perft_suite};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lines = text.lines().count();
    for (i, line) in text.lines().enumerate() {
        if let Ok(test) = epd_suite::parse_line(line, i + 1) {
            let _ = test.id.len();
        }
    }
    match perft_suite::parse_suite(text) {
        Ok(cases) => assert!(cases.len() <= lines),
        Err(e) => assert!(e.to_string().len() < 600, "{e}"),
    }
});
