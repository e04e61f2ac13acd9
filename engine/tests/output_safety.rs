//! The `engine` binary's outputs never destroy anything and never panic:
//! every print path fails with exit 1 and a message on a full device, stops
//! quietly on a closed pipe, and `match --pgn` is written atomically, never
//! over an input and never replacing a device.

#[path = "support/cli.rs"]
mod cli;

use cli::{assert_clean_failure, stderr};
use std::path::Path;
use std::process::{Command, Output, Stdio};

const OPENINGS_EPD: &str = "\
rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1
rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1
";

fn engine() -> Command {
    Command::new(env!("CARGO_BIN_EXE_engine"))
}

fn to_full(cmd: &mut Command) -> Output {
    cmd.stdout(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap()
}

#[test]
fn print_paths_fail_cleanly_on_a_full_device() {
    let commands: [&[&str]; 4] = [
        &["params"],
        &["bench", "1"],
        &["perft", "2"],
        &["eval", "8/8/8/8/8/8/8/K1k5 w - - 0 1"],
    ];
    for args in commands {
        let out = to_full(engine().args(args).stderr(Stdio::piped()));
        assert_clean_failure(&out, "No space left on device");
    }
}

#[test]
fn a_closed_pipe_stops_quietly() {
    let mut child = engine()
        .args(["perft", "3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"));
}

fn quick_match(openings: &Path, pgn: &Path) -> Output {
    engine()
        .args([
            "match",
            "--games",
            "2",
            "--nodes",
            "300",
            "--max-plies",
            "40",
        ])
        .arg("--openings")
        .arg(openings)
        .arg("--pgn")
        .arg(pgn)
        .output()
        .unwrap()
}

#[test]
fn match_pgn_is_atomic_and_never_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let openings = dir.path().join("openings.epd");
    std::fs::write(&openings, OPENINGS_EPD).unwrap();
    // The PGN named like the openings (another spelling) is refused.
    let same = dir.path().join(".").join("openings.epd");
    let out = quick_match(&openings, &same);
    assert_clean_failure(&out, "the output is the input");
    assert_eq!(std::fs::read_to_string(&openings).unwrap(), OPENINGS_EPD);

    // Written atomically: the games are there, no temporary file is left.
    let pgn = dir.path().join("games.pgn");
    let out = quick_match(&openings, &pgn);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(text.matches("[Event ").count(), 2, "{text}");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");

    // Devices are written to, not replaced.
    let out = quick_match(&openings, Path::new("/dev/null"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    let out = quick_match(&openings, Path::new("/dev/full"));
    assert_clean_failure(&out, "/dev/full");
    assert!(!std::fs::metadata("/dev/full").unwrap().is_file());
}
