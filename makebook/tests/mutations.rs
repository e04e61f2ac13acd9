//! makebook's PGN path on thousands of mutated real games (the stable-Rust
//! guard of the `makebook_pgn` fuzz target): annotated file and
//! collections alike, no panic, every problem reported as FILE:LINE: game N
//! on a line and game of its input, and the book written is a valid
//! Polyglot book whose moves are legal.

#[path = "../../engine/tests/support/mutate.rs"]
mod mutate;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use engine::formats::book::PolyglotBook;
use mutate::{Mutator, line_count, mutated_pgn, split_games};
use shakmaty::{Chess, Position};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data")
        .join(name)
}

#[test]
fn mutated_games_and_annotations_are_reported_never_fatal() {
    let mut basic = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(data("book/arasan-basic.pgn.gz")).unwrap())
        .read_to_end(&mut basic)
        .unwrap();
    let annotated = split_games(&basic);
    let collection = split_games(&std::fs::read(data("pgn/fischer-300.pgn")).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let mut mutator = Mutator::new(12);
    let mut reported = 0;
    for run in 0..4 {
        let files = [
            (
                "annotated.pgn",
                mutated_pgn(&annotated, 0, 400, &mut mutator),
            ),
            ("games.pgn", mutated_pgn(&collection, 0, 600, &mut mutator)),
        ];
        let mut paths = Vec::new();
        let mut lines = Vec::new();
        for (name, text) in &files {
            let path = dir.path().join(format!("{run}-{name}"));
            std::fs::write(&path, text).unwrap();
            lines.push(line_count(text) as u64);
            paths.push(path);
        }
        let book = dir.path().join("book.bin");
        let out = Command::new(env!("CARGO_BIN_EXE_makebook"))
            .arg("-o")
            .arg(&book)
            .args(["--verbose", "--threads", "2", "-p", "30"])
            .args(&paths)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "run {run}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        for (path, &last) in paths.iter().zip(&lines) {
            let prefix = format!("makebook: {}:", path.display());
            for line in stderr.lines().filter(|l| l.starts_with(&prefix)) {
                let rest = &line[prefix.len()..];
                let (at, rest) = rest.split_once(": game ").expect(line);
                let (game, message) = rest.split_once(": ").expect(line);
                let at: u64 = at.parse().expect(line);
                let game: u64 = game.parse().expect(line);
                assert!((1..=last).contains(&at), "{line}");
                assert!(game >= 1, "{line}");
                assert!(message.len() < 400, "{line}");
                reported += 1;
            }
        }
        let book = PolyglotBook::open(&book).expect("a valid book");
        let start = Chess::default();
        assert!(!book.moves(&start).is_empty());
        for (m, _) in book.moves(&start) {
            assert!(start.is_legal(m));
        }
    }
    assert!(reported > 400, "{reported} problems reported");
}
