//! pgnselect's PGN path on thousands of mutated real games (the stable-Rust
//! guard of the `pgnselect_pgn` fuzz target): no panic, every malformed game
//! reported as FILE:LINE: game N on a line and game of the input, every
//! written line a legal labeled position, and the counts add up.

#[path = "../../engine/tests/support/mutate.rs"]
mod mutate;

use std::io::Cursor;
use std::path::Path;
use std::process::Command;

use engine::formats::labeled::LabeledReader;
use mutate::{Mutator, line_count, mutated_pgn, split_games};

/// Runs over mutated collections, each of this many games.
const RUNS: usize = 12;
const GAMES_PER_RUN: usize = 250;

fn games() -> Vec<Vec<u8>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/pgn/fischer-300.pgn");
    split_games(&std::fs::read(path).unwrap())
}

/// The number before `label` in the summary.
fn count(stderr: &str, label: &str) -> u64 {
    let at = stderr.find(label).unwrap_or_else(|| panic!("no {label:?}"));
    stderr[..at]
        .split(|c: char| !c.is_ascii_digit())
        .rev()
        .find(|s| !s.is_empty())
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn mutated_games_are_reported_never_fatal() {
    let games = games();
    let mut mutator = Mutator::new(11);
    let dir = tempfile::tempdir().unwrap();
    let mut reported = 0;
    for run in 0..RUNS {
        let text = mutated_pgn(&games, run * GAMES_PER_RUN, GAMES_PER_RUN, &mut mutator);
        let input = dir.path().join(format!("m{run}.pgn"));
        std::fs::write(&input, &text).unwrap();
        let lines = line_count(&text) as u64;
        let out = Command::new(env!("CARGO_BIN_EXE_pgnselect"))
            .args(["--no-progress", "--min-ply", "0", "-d", "1", "-s", "4"])
            .args(["--format", if run % 2 == 0 { "epd" } else { "arasan" }])
            .args(if run % 3 == 0 { &["-r"][..] } else { &[] })
            .arg(&input)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "run {run}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        let read = count(&stderr, "games read");
        let prefix = format!("pgnselect: {}:", input.display());
        for line in stderr.lines().filter(|l| l.starts_with(&prefix)) {
            let rest = &line[prefix.len()..];
            let (at, rest) = rest.split_once(": game ").expect(line);
            let (game, message) = rest.split_once(": ").expect(line);
            let at: u64 = at.parse().expect(line);
            let game: u64 = game.parse().expect(line);
            assert!((1..=lines).contains(&at), "{line}");
            assert!((1..=read).contains(&game), "{line}");
            assert!(message.len() < 400, "{line}");
            reported += 1;
        }
        let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
        let mut written = 0u64;
        for item in LabeledReader::new(Cursor::new(&stdout), None) {
            item.unwrap_or_else(|e| panic!("{e}"));
            written += 1;
        }
        let after = stderr
            .split("positions written ")
            .nth(1)
            .expect("a summary");
        let summary: u64 = after
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok())
            .expect("a count");
        assert_eq!(written, summary);
        assert!(read >= GAMES_PER_RUN as u64 / 2, "{stderr}");
    }
    assert!(reported > RUNS * 10, "{reported} problems reported");
}
