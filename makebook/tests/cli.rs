//! The command-line shape and its error messages: build with or without the
//! `build` word, `dump`, `stats`, corrupt books and bad inputs.

mod support;

use engine::chess::position::key;
use engine::formats::book::{BookEntry, write_book};
use support::{Fixtures, after, makebook, run_ok};

fn failure(args: &[&str]) -> String {
    let out = makebook().args(args).output().unwrap();
    assert!(!out.status.success(), "makebook {args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn build_dump_and_stats() {
    let fx = Fixtures::new();
    let pgn = fx.file(
        "a.pgn",
        "[Event \"a\"]\n\n1. e4 {weight:75} (1. d4 {weight:25}) (1. f3?) e5 *\n",
    );
    let book = fx.path("book.bin");
    let (book_s, pgn_s) = (book.to_str().unwrap(), pgn.to_str().unwrap());
    let out = run_ok(&["-o", book_s, pgn_s]);
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("wrote") && summary.contains("4 entries"),
        "{summary}"
    );
    // The explicit `build` command is the same.
    run_ok(&["build", "-o", book_s, pgn_s]);

    let dump = String::from_utf8_lossy(&run_ok(&["dump", book_s]).stdout).into_owned();
    assert!(dump.contains("e4       e2e4     7500   75.0%"), "{dump}");
    assert!(dump.contains("d4       d2d4     2500   25.0%"), "{dump}");
    assert!(
        dump.contains("f3       f2f3        0    0.0%  (never played)"),
        "{dump}"
    );
    let dump =
        String::from_utf8_lossy(&run_ok(&["dump", book_s, "--moves", "e4"]).stdout).into_owned();
    assert!(dump.contains("e5       e7e5"), "{dump}");
    let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    let dump =
        String::from_utf8_lossy(&run_ok(&["dump", book_s, "--fen", fen]).stdout).into_owned();
    assert!(dump.contains("e7e5"), "{dump}");
    let dump =
        String::from_utf8_lossy(&run_ok(&["dump", book_s, "--moves", "d2d4", "d7d5"]).stdout)
            .into_owned();
    assert!(dump.contains("not in the book"), "{dump}");
    let all = String::from_utf8_lossy(&run_ok(&["dump", book_s, "--all"]).stdout).into_owned();
    assert_eq!(all.lines().count(), 4);

    let stats = String::from_utf8_lossy(&run_ok(&["stats", book_s]).stdout).into_owned();
    assert!(stats.contains("entries:    4"), "{stats}");
    assert!(stats.contains("positions:  2"), "{stats}");
    assert!(stats.contains("weight 0:   1"), "{stats}");
    assert!(stats.contains("longest line 2 plies"), "{stats}");

    let err = failure(&["dump", book_s, "--moves", "e2e5"]);
    assert!(err.contains("e2e5"), "{err}");
}

#[test]
fn corrupt_books_are_clear_errors() {
    let fx = Fixtures::new();
    let truncated = fx.path("truncated.bin");
    let start = key(&after(&[]));
    let entries = [
        BookEntry {
            key: start,
            raw_move: 0x031c,
            weight: 1,
            learn: 0,
        },
        BookEntry {
            key: start + 1,
            raw_move: 0x031c,
            weight: 1,
            learn: 0,
        },
    ];
    write_book(&truncated, &entries).unwrap();
    let mut bytes = std::fs::read(&truncated).unwrap();
    bytes.truncate(23);
    std::fs::write(&truncated, &bytes).unwrap();
    for cmd in ["dump", "stats"] {
        let err = failure(&[cmd, truncated.to_str().unwrap()]);
        assert!(
            err.contains("truncated.bin") && err.contains("not a multiple of 16"),
            "{err}"
        );
    }

    let unsorted = fx.path("unsorted.bin");
    let mut bytes = entries[1].to_bytes().to_vec();
    bytes.extend(entries[0].to_bytes());
    std::fs::write(&unsorted, &bytes).unwrap();
    let err = failure(&["dump", unsorted.to_str().unwrap()]);
    assert!(
        err.contains("unsorted.bin") && err.contains("sorted by key"),
        "{err}"
    );

    let err = failure(&["stats", fx.path("missing.bin").to_str().unwrap()]);
    assert!(err.contains("missing.bin"), "{err}");
}

#[test]
fn bad_inputs_are_named_and_leave_no_book() {
    let fx = Fixtures::new();
    let book = fx.path("book.bin");
    let good = fx.file("good.pgn", "1. e4 *\n");
    let empty = fx.file("empty.pgn", "");
    let err = failure(&[
        "-o",
        book.to_str().unwrap(),
        good.to_str().unwrap(),
        fx.path("nope.pgn").to_str().unwrap(),
    ]);
    assert!(
        err.contains("nope.pgn") && err.contains("no such file"),
        "{err}"
    );
    let err = failure(&["-o", book.to_str().unwrap(), empty.to_str().unwrap()]);
    assert!(err.contains("empty.pgn") && err.contains("empty"), "{err}");
    // A gzip file cut in the middle.
    let broken = fx.path("broken.pgn.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(
        &mut enc,
        "[Event \"x\"]\n\n1. e4 e5 *\n\n".repeat(200).as_bytes(),
    )
    .unwrap();
    let bytes = enc.finish().unwrap();
    std::fs::write(&broken, &bytes[..bytes.len() / 2]).unwrap();
    let err = failure(&[
        "-o",
        book.to_str().unwrap(),
        "--collections-only",
        broken.to_str().unwrap(),
    ]);
    assert!(err.contains("broken.pgn.gz"), "{err}");
    assert!(!book.exists());
    let leftovers: Vec<_> = std::fs::read_dir(fx.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        !leftovers
            .iter()
            .any(|n| n.to_string_lossy().ends_with(".tmp")),
        "{leftovers:?}"
    );
}

#[test]
fn help_documents_every_option_and_the_formula() {
    let out = run_ok(&["--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--min-count",
        "--max-ply",
        "--min-score",
        "--only-white",
        "--only-black",
        "--min-elo",
        "--threads",
        "--verbose",
        "--collections-only",
        "HOW WEIGHTS ARE COMPUTED",
        "points^2 / n",
        "dump",
        "stats",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}:\n{help}");
    }
    let err = failure(&[]);
    assert!(err.contains("--output"), "{err}");
}

#[test]
fn problems_deep_in_large_files_have_exact_line_and_game_numbers() {
    // About 2.6 MB: several 1 MiB chunks parsed by different workers.
    let good = "[Event \"g\"]\n[Result \"1/2-1/2\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1/2-1/2\n\n";
    let bad = "[Event \"b\"]\n[Result \"1/2-1/2\"]\n\n1. e4 e5 2. Ke3 1/2-1/2\n\n";
    let mut text = String::new();
    let bad_games = [1usize, 20_000, 37_777];
    for game in 1..=40_000usize {
        text.push_str(if bad_games.contains(&game) { bad } else { good });
    }
    let fx = Fixtures::new();
    let pgn = fx.file("big.pgn", &text);
    let book = fx.path("book.bin");
    let out = run_ok(&[
        "-o",
        book.to_str().unwrap(),
        "--collections-only",
        "--threads",
        "2",
        pgn.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Each game takes 5 lines; the bad move is on the 4th line of its game.
    for game in bad_games {
        let line = (game - 1) * 5 + 4;
        let expected = format!("big.pgn:{line}: game {game}: move 2. Ke3");
        assert!(stderr.contains(&expected), "{expected} not in:\n{stderr}");
    }
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains(
            "40000 games (39997 used, 0 without moves, 0 other variant, 3 malformed and skipped)"
        ),
        "{summary}"
    );
}
