//! makebook on PGN as engine tournaments and online databases write it
//! (`data/pgn/engine-fixture.pgn`, made by `scripts/make-engine-fixture.py`):
//! `[Variant "normal"]`, free-text `Termination`, clock and search comments,
//! long algebraic notation, a promotion without `=`, CRLF line endings. Every
//! standard game is read whole; a broken game costs only itself.

mod support;

use std::path::PathBuf;

use serde_json::Value;
use support::{Fixtures, makebook, workspace_root};

fn fixture() -> String {
    std::fs::read_to_string(workspace_root().join("data/pgn/engine-fixture.pgn")).unwrap()
}

/// The offsets of the games of a PGN text (its `[Event ` lines).
fn game_starts(text: &str) -> Vec<usize> {
    text.match_indices("[Event ").map(|(i, _)| i).collect()
}

/// Builds a collections-only book from `text` with `--summary`; the
/// summary and stderr.
fn build(fx: &Fixtures, text: &str, extra: &[&str]) -> (Value, String) {
    let pgn = fx.file("games.pgn", text);
    let (book, summary): (PathBuf, PathBuf) = (fx.path("book.bin"), fx.path("summary.json"));
    let out = makebook()
        .args(["--collections-only", "--max-ply", "1000", "-o"])
        .arg(&book)
        .arg("--summary")
        .arg(&summary)
        .args(extra)
        .arg(&pgn)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let json = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    (json, stderr)
}

fn count(json: &Value, name: &str) -> u64 {
    json["counts"][name].as_u64().unwrap()
}

fn skipped(json: &Value, name: &str) -> u64 {
    json["skipped"][name].as_u64().unwrap()
}

/// The sum of the `PlyCount` tags of the games at `indices`.
fn plies(text: &str, indices: &[usize]) -> u64 {
    let starts = game_starts(text);
    indices
        .iter()
        .map(|&i| {
            let game = &text[starts[i]..starts.get(i + 1).copied().unwrap_or(text.len())];
            let at = game.find("[PlyCount \"").unwrap() + 11;
            game[at..at + game[at..].find('"').unwrap()]
                .parse::<u64>()
                .unwrap()
        })
        .sum()
}

/// The games of the fixture that are standard chess (all but the Chess960
/// game, the 12th).
const STANDARD: [usize; 15] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15];

#[test]
fn every_standard_game_of_an_engine_archive_is_read_whole() {
    let fx = Fixtures::new();
    let text = fixture();
    let (json, stderr) = build(&fx, &text, &["--threads", "2"]);
    assert_eq!(count(&json, "games"), 16, "{stderr}");
    assert_eq!(count(&json, "games_used"), 15, "{stderr}");
    // The Chess960 game is another game, not a malformed one: counted
    // apart, not reported as a problem (a real archive has thousands).
    assert_eq!(skipped(&json, "games_other_variant"), 1, "{stderr}");
    assert_eq!(skipped(&json, "games_malformed"), 0, "{stderr}");
    assert!(!stderr.contains("fischerandom"), "{stderr}");
    let files = &json["figures"]["files"][0];
    assert_eq!(files["games_other_variant"], 1, "{files}");
    assert_eq!(files["games_malformed"], 0, "{files}");
    // Every move of every standard game counted: Variant "normal", long
    // algebraic, a8Q and CRLF games included.
    assert_eq!(count(&json, "collection_moves"), plies(&text, &STANDARD));
    assert_eq!(count(&json, "games_cut_at_max_ply"), 0);
}

#[test]
fn an_unclosed_comment_costs_only_its_own_game() {
    let fx = Fixtures::new();
    let text = fixture();
    let starts = game_starts(&text);
    // Game 3 loses every '}': its first comment runs into the next games.
    let broken = format!(
        "{}{}{}",
        &text[..starts[2]],
        text[starts[2]..starts[3]].replace('}', " "),
        &text[starts[3]..]
    );
    let (json, stderr) = build(&fx, &broken, &[]);
    assert_eq!(count(&json, "games"), 16, "{stderr}");
    assert_eq!(count(&json, "games_used"), 14, "{stderr}");
    assert!(stderr.contains("game 3: unterminated comment"), "{stderr}");
    let used: Vec<usize> = STANDARD.iter().copied().filter(|&i| i != 2).collect();
    assert_eq!(count(&json, "collection_moves"), plies(&text, &used));
}

#[test]
fn a_truncated_last_game_or_unclosed_variation_is_reported_not_used_in_part() {
    let fx = Fixtures::new();
    let text = fixture();
    let starts = game_starts(&text);
    // The collection ends inside game 16, before its result marker.
    let last = &text[starts[15]..];
    let cut = &text[..starts[15]
        + last
            .rfind("1-0")
            .or(last.rfind("0-1"))
            .or(last.rfind("1/2-1/2"))
            .unwrap()];
    let (json, stderr) = build(&fx, cut, &[]);
    assert!(stderr.contains("game 16: truncated game"), "{stderr}");
    assert_eq!(count(&json, "games_used"), 14, "{stderr}");
    let used: Vec<usize> = STANDARD.iter().copied().filter(|&i| i != 15).collect();
    assert_eq!(count(&json, "collection_moves"), plies(&text, &used));

    // A '(' never closed in game 2.
    let at = starts[1] + text[starts[1]..].find("\n\n").unwrap() + 2;
    let open = format!("{}( {}", &text[..at], &text[at..]);
    let (json, stderr) = build(&fx, &open, &[]);
    assert!(stderr.contains("game 2: unclosed variation"), "{stderr}");
    assert_eq!(count(&json, "games_used"), 14, "{stderr}");
}
