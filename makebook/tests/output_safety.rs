//! makebook's outputs never destroy anything and never panic: a book named
//! like an input is refused before reading, devices are written to rather
//! than replaced, and every print path fails with exit 1 and a message on a
//! full device.

mod support;

use std::process::Stdio;

use support::cli::{assert_clean_failure, stderr};
use support::{Fixtures, makebook, run_ok};

const GAMES: &str = "\
[Event \"a\"]
[Result \"1-0\"]

1. e4 e5 2. Nf3 Nc6 1-0

[Event \"b\"]
[Result \"0-1\"]

1. d4 d5 0-1
";

/// A book or an ECO table written over its input, by name or through a
/// link, is refused and the input stays whole.
#[test]
fn outputs_named_like_their_input_are_refused() {
    let f = Fixtures::new();
    let pgn = f.file("games.pgn", GAMES);
    let link = f.path("link.pgn");
    std::os::unix::fs::symlink(&pgn, &link).unwrap();
    // Arguments before and after `-o OUTPUT`: a book, then an ECO table.
    let commands: [(&[&str], &[&str]); 2] = [(&[], &["--collections-only"]), (&["eco"], &[])];
    for (before, after) in commands {
        for output in [&pgn, &link] {
            let out = makebook()
                .args(before)
                .arg("-o")
                .arg(output)
                .args(after)
                .arg(&pgn)
                .output()
                .unwrap();
            assert_clean_failure(&out, "the output is the input");
            assert_eq!(std::fs::read_to_string(&pgn).unwrap(), GAMES);
        }
    }
}

#[test]
fn devices_are_written_to_and_full_ones_are_errors() {
    let f = Fixtures::new();
    let pgn = f.file("games.pgn", GAMES);
    let out = makebook()
        .args(["-o", "/dev/full", "--collections-only"])
        .arg(&pgn)
        .output()
        .unwrap();
    assert_clean_failure(&out, "/dev/full");
    assert!(!std::fs::metadata("/dev/full").unwrap().is_file());
    let out = makebook()
        .args(["-o", "/dev/null", "--collections-only"])
        .arg(&pgn)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
}

#[test]
fn print_paths_fail_cleanly_on_a_full_device() {
    let f = Fixtures::new();
    let pgn = f.file("games.pgn", GAMES);
    let book = f.path("book.bin");
    let full = || std::fs::File::create("/dev/full").unwrap();
    let out = makebook()
        .arg("-o")
        .arg(&book)
        .arg("--collections-only")
        .arg(&pgn)
        .stdout(full())
        .output()
        .unwrap();
    assert_clean_failure(&out, "standard output");
    let book = book.to_str().unwrap();
    run_ok(&["-o", book, "--collections-only", pgn.to_str().unwrap()]);
    for args in [
        vec!["stats", book],
        vec!["dump", book],
        vec!["dump", "--all", book],
    ] {
        let out = makebook().args(&args).stdout(full()).output().unwrap();
        assert_clean_failure(&out, "standard output");
        // A closed pipe stops quietly.
        let mut child = makebook()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
}
