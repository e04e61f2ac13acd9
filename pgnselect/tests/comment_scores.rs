//! `--comment-scores`: positions labeled with the engine score in the comment
//! of the move played from them, in both forms engine games carry (the
//! tournament managers' `{+0.35/12 0.1s}`, the mover's view; lichess's
//! `[%eval 0.35]`, White's view), and every reason to drop one counted.

use std::process::Command;

#[path = "../../engine/tests/support/cli.rs"]
mod cli;

use engine::formats::labeled::{GameResult, LabeledReader};
use serde_json::Value;
use shakmaty::{Color, Position};

/// A cutechess-style game: scores from the mover's view, a book move, a
/// mate score, two captures, a score whose depth ends the comment, and an
/// adjudication note after the last score; a variation whose comment must
/// not count.
const TOURNAMENT_GAME: &str = r#"[Event "sprt"]
[White "a"]
[Black "b"]
[Result "1-0"]
[Termination "adjudication"]

1. e4 {+0.30/10 0.104s} e5 {-0.25/9 0.1s} 2. Nf3 {book} Nc6 {+M3/5 0.01s}
3. Bb5 {+0.40/12 0.2s} (3. Bc4 {+9.99/30 1s}) a6 {-0.35/11} 4. Bxc6
{+0.50/12 0.1s} dxc6 {-0.45/10 0.1s} 5. O-O {+0.60/3, White wins by adjudication} 1-0
"#;

/// A lichess-style game: `[%eval]` from White's view before or after the
/// clock, a mate, a capture, a score beyond the bound.
const LICHESS_GAME: &str = r#"[Event "Rated Blitz game"]
[White "c"]
[Black "d"]
[Result "1/2-1/2"]
[Variant "Standard"]

1. d4 { [%eval 0.2] [%clk 0:03:00] } 1... d5 { [%clk 0:03:00] [%eval 0.31] }
2. c4 { [%eval #4] } 2... dxc4 { [%eval 0.12] } 3. e3 { [%eval 0.1] }
3... e6 { [%eval -30.5] [%clk 0:02:55] } 1/2-1/2
"#;

struct Run {
    text: String,
    summary: Value,
    stderr: String,
}

fn run(format: &str, extra: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let pgn = cli::write(
        dir.path(),
        "games.pgn",
        &format!("{TOURNAMENT_GAME}\n{LICHESS_GAME}"),
    );
    let (out, summary) = (dir.path().join("out"), dir.path().join("summary.json"));
    let output = cli::run_ok(
        Command::new(env!("CARGO_BIN_EXE_pgnselect"))
            .args(["--comment-scores", "--min-ply", "0", "--max-ply", "1000"])
            .args([
                "-d",
                "1",
                "-s",
                "1",
                "--no-dedup",
                "--no-progress",
                "-t",
                "1",
            ])
            .args(["--format", format])
            .args(extra)
            .arg("-o")
            .arg(&out)
            .arg("--summary")
            .arg(&summary)
            .arg(&pgn),
    );
    let stderr = cli::stderr(&output);
    Run {
        text: std::fs::read_to_string(&out).unwrap(),
        summary: serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap(),
        stderr,
    }
}

fn skipped(run: &Run, reason: &str) -> u64 {
    run.summary["skipped"][reason].as_u64().unwrap()
}

#[test]
fn each_position_carries_its_moves_score_from_the_side_to_move() {
    let run = run("epd", &[]);
    let records: Vec<_> = LabeledReader::new(run.text.as_bytes(), None)
        .map(|r| r.unwrap().unwrap().1)
        .collect();
    let found: Vec<(u32, Color, i32, GameResult)> = records
        .iter()
        .map(|r| {
            let ply = 2 * (r.position.fullmoves().get() - 1)
                + u32::from(r.position.turn() == Color::Black);
            (ply, r.position.turn(), r.score.unwrap(), r.result.unwrap())
        })
        .collect();
    use Color::{Black, White};
    use GameResult::{Draw, WhiteWin};
    assert_eq!(
        found,
        [
            // e4 +0.30, e5 -0.25 (mover's view is the side to move's);
            // Nf3 is a book move, Nc6 a mate score; Bb5 +0.40, a6 -0.35
            // (the variation's +9.99 is not Bb5's); Bxc6 and dxc6 capture;
            // O-O +0.60 before the adjudication note.
            (0, White, 30, WhiteWin),
            (1, Black, -25, WhiteWin),
            (4, White, 40, WhiteWin),
            (5, Black, -35, WhiteWin),
            (8, White, 60, WhiteWin),
            // d4 0.2 and d5 0.31 from White's view: Black to move gets
            // -31; c4 mates, dxc4 captures, e6's -30.5 is beyond 20 pawns.
            (0, White, 20, Draw),
            (1, Black, -31, Draw),
            (4, White, 10, Draw),
        ]
    );
    // Two final positions (no move from them) and the book move; two mates;
    // three captures; one score beyond the bound.
    assert_eq!(skipped(&run, "positions_no_comment_score"), 3);
    assert_eq!(skipped(&run, "positions_mate_comment_score"), 2);
    assert_eq!(skipped(&run, "positions_tactical_move"), 3);
    assert_eq!(skipped(&run, "positions_beyond_max_comment_score"), 1);
    assert_eq!(run.summary["counts"]["positions_written"].as_u64(), Some(8));
    assert!(
        run.stderr
            .contains("no score in the move's comment 3, mate score 2, capture or promotion played 3, beyond max comment score 1"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_bound_and_the_csv_score_column() {
    let run = run("csv", &["--max-comment-score", "3050"]);
    let lines: Vec<&str> = run.text.lines().collect();
    assert_eq!(lines[0], "fen,result,score");
    assert_eq!(lines.len(), 1 + 9, "{}", run.text);
    // The position before e6 has Black to move: e6's -30.5 from White's
    // view is +3050 for it.
    assert!(lines[9].ends_with(",1/2-1/2,3050"), "{}", lines[9]);
    assert!(lines[1].ends_with(",1-0,30"), "{}", lines[1]);
    assert_eq!(skipped(&run, "positions_beyond_max_comment_score"), 0);
}

#[test]
fn options_that_change_the_scored_position_are_refused() {
    for args in [
        &["--comment-scores", "--random-move"][..],
        &["--comment-scores", "--quiet=resolve"][..],
        &["--comment-scores", "--format", "arasan"][..],
        &["--max-comment-score", "100"][..],
    ] {
        let stderr = refused(args);
        assert!(stderr.contains("comment"), "{args:?}: {stderr}");
    }
}

/// Runs pgnselect with `args` on a file that does not exist, checks that
/// it fails (the options are refused before any input is opened) and
/// returns its standard error.
fn refused(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_pgnselect"))
        .args(args)
        .arg("no-such-file.pgn")
        .output()
        .unwrap();
    assert!(!output.status.success(), "{args:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The (ply, score) of each written position of the two games, in order.
fn plies_and_scores(run: &Run) -> Vec<(u32, i32)> {
    LabeledReader::new(run.text.as_bytes(), None)
        .map(|r| {
            let r = r.unwrap().unwrap().1;
            let ply = 2 * (r.position.fullmoves().get() - 1)
                + u32::from(r.position.turn() == Color::Black);
            (ply, r.score.unwrap())
        })
        .collect()
}

#[test]
fn td_targets_average_each_games_later_scores_and_stop_at_its_end() {
    let plain = plies_and_scores(&run("epd", &[]));
    // λ = 0 keeps every score.
    assert_eq!(plies_and_scores(&run("epd", &["--td-lambda", "0"])), plain);
    // λ close to 1: every position of a game takes its game's last written
    // score (White's view, +0.60 and +0.10), never the other game's.
    assert_eq!(
        plies_and_scores(&run("epd", &["--td-lambda", "0.999999"])),
        [
            (0, 60),
            (1, -60),
            (4, 60),
            (5, -60),
            (8, 60),
            (0, 10),
            (1, -10),
            (4, 10)
        ]
    );
    // λ = 0.5, the lichess game by hand (K 2.8): White's view 20, 31, 10
    // are the probabilities 0.5349, 0.5540, 0.5175; y1 = (0.5540 + 0.5175)
    // / 2 = 0.5358 (+20 cp), y0 = (0.5349 + 0.5358) / 2 = 0.5354 (+20 cp).
    let half = plies_and_scores(&run("epd", &["--td-lambda", "0.5"]));
    assert_eq!(half[5..], [(0, 20), (1, -20), (4, 10)]);
    // A larger K makes the same scores more decisive, so the targets move.
    let steep = plies_and_scores(&run("epd", &["--td-lambda", "0.5", "--td-k", "20"]));
    assert_eq!(steep.len(), 8);
    assert_ne!(steep[..5], half[..5]);
}

#[test]
fn bad_td_settings_are_refused() {
    for (args, expected) in [
        (&["--td-lambda", "0.9"][..], "--comment-scores"),
        (&["--comment-scores", "--td-lambda", "1"][..], "[0, 1)"),
        (&["--comment-scores", "--td-lambda=-0.1"][..], "[0, 1)"),
        (
            &["--comment-scores", "--td-lambda", "0.9", "--td-k", "0"][..],
            "positive",
        ),
        (&["--comment-scores", "--td-k", "3"][..], "--td-lambda"),
    ] {
        let stderr = refused(args);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}
