//! UCI commands, as bytes on the engine's standard input: never a panic,
//! every `go` answered by exactly one `bestmove` with a legal move (or
//! `0000` without one), every reply line short. Options that read files
//! (`BookFile`, `ParamsFile`) or start many threads are left out.
#![no_main]

use std::io::Cursor;

use engine::uci::UciSession;
use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/capture.rs"]
mod capture;

use capture::Capture;

fn mentions(data: &[u8], word: &[u8]) -> bool {
    data.windows(word.len())
        .any(|w| w.eq_ignore_ascii_case(word))
}

fuzz_target!(|data: &[u8]| {
    if mentions(data, b"file") || mentions(data, b"thread") || mentions(data, b"hash") {
        return;
    }
    // The protocol is under test, not the search: every `go` also gets a
    // one-node limit (searches still complete depth 1), after whatever the
    // input gave it.
    let mut input = Vec::with_capacity(data.len() + 64);
    for line in data.split_inclusive(|&b| b == b'\n') {
        let text = line.strip_suffix(b"\n").unwrap_or(line);
        input.extend_from_slice(text);
        // The engine splits a line at Unicode whitespace (vertical tab and
        // no-break space included), so a `go` is recognised the same way.
        let is_go = std::str::from_utf8(text)
            .is_ok_and(|t| t.split_whitespace().next() == Some("go"));
        if is_go {
            input.extend_from_slice(b" nodes 1");
        }
        input.push(b'\n');
    }
    let out = Capture::default();
    // A 1 MB table (the smallest `Hash`): creating and clearing the default
    // 16 MB one was 90% of an execution's instructions, and the table's
    // size does not change what the protocol answers.
    let mut session = UciSession::with_hash_mb(out.clone(), 1);
    session.run(Cursor::new(input)).expect("reading a slice");
    let text = out.take();
    for line in text.lines() {
        assert!(line.len() < 2000, "{} bytes: {}", line.len(), &line[..200]);
        if let Some(best) = line.strip_prefix("bestmove ") {
            let m = best.split_whitespace().next().unwrap_or("");
            assert!(m == "0000" || m.len() == 4 || m.len() == 5, "{line}");
        }
    }
});
