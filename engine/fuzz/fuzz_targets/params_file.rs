//! The params text file: never a panic, errors located and short; what
//! loads writes back and loads to the same parameters.
#![no_main]

use std::path::Path;

use engine::formats::params_file;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.params");
    match params_file::parse(text, path) {
        Ok(loaded) => {
            for w in loaded.warnings() {
                assert!(w.len() < 1000, "{w}");
            }
            // The round trip costs two full files; one input in 16 is
            // enough to keep it honest.
            if data.len() % 16 == 0 {
                let written = params_file::to_text(&loaded.params, &[]);
                let again = params_file::parse(&written, path).expect("written params load");
                assert_eq!(again.params.to_scalars(), loaded.params.to_scalars());
            }
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with("fuzz.params:"), "{message}");
            assert!(message.len() < 600, "{message}");
        }
    }
});
