//! The search parameters through every door: the UCI spin options (listed
//! as declared, changing the search, refused out of range), the
//! `SearchParamsFile` option, `engine search-params` and its file, and
//! `engine match --search-params-a`. The compiled defaults search exactly
//! as before (the bench signature is checked in `bench.rs`).

#[path = "support/capture.rs"]
mod capture;

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use capture::Capture;
use engine::eval::Params;
use engine::search::{SEARCH_PARAMS, SearchLimits, SearchParams, Searcher};
use engine::uci::UciSession;

/// Runs `go depth 7` from a middlegame position and returns the node count
/// of the last `info` line.
fn nodes_at_depth_7(session: &mut UciSession, out: &Capture) -> u64 {
    out.take();
    session.handle_line("ucinewgame");
    session.handle_line(
        "position fen r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    );
    session.handle_line("go depth 7");
    let start = Instant::now();
    let mut text = String::new();
    while !text.contains("bestmove") {
        assert!(start.elapsed() < Duration::from_secs(60), "no bestmove");
        std::thread::sleep(Duration::from_millis(5));
        text.push_str(&out.take());
    }
    let info = text.lines().rfind(|l| l.starts_with("info depth")).unwrap();
    let words: Vec<&str> = info.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "nodes").unwrap();
    words[at + 1].parse().unwrap()
}

#[test]
fn uci_spin_options_are_the_declaration_and_change_the_search() {
    let out = Capture::default();
    let mut s = UciSession::new(out.clone());
    s.handle_line("uci");
    let text = out.take();
    for spec in SEARCH_PARAMS {
        let line = format!(
            "option name {} type spin default {} min {} max {}",
            spec.name, spec.default, spec.min, spec.max
        );
        assert!(text.contains(&line), "missing {line}");
    }
    assert!(text.contains("option name SearchParamsFile type string"));
    assert!(text.trim_end().ends_with("uciok"));

    let default_nodes = nodes_at_depth_7(&mut s, &out);
    // The library at its defaults searches the same tree.
    let pos = engine::chess::position::parse_fen(
        "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    )
    .unwrap();
    let mut searcher = Searcher::new(Arc::new(Params::defaults()), 16);
    let library = searcher.search(&pos, &[], &SearchLimits::depth(7), |_| {});
    assert_eq!(library.nodes, default_nodes);

    s.handle_line("setoption name lmr_base_percent value 150");
    s.handle_line("setoption name RFP_MARGIN value 40");
    let changed = nodes_at_depth_7(&mut s, &out);
    assert_ne!(changed, default_nodes);
    let tuned = SearchParams {
        lmr_base_percent: 150,
        rfp_margin: 40,
        ..SearchParams::default()
    };
    searcher.set_search_params(tuned);
    searcher.new_game();
    let library = searcher.search(&pos, &[], &SearchLimits::depth(7), |_| {});
    assert_eq!(library.nodes, changed, "the library with the same values");

    // Out of range or not a number: refused, the value kept.
    s.handle_line("setoption name rfp_margin value 9999");
    s.handle_line("setoption name rfp_margin value soon");
    let text = out.take();
    assert_eq!(
        text.matches("rfp_margin must be 20..=250").count(),
        2,
        "{text}"
    );
    assert_eq!(s.options().search_params.rfp_margin, 40);

    // A search params file sets the same values; a bad one is reported
    // and changes nothing.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tuned.search");
    std::fs::write(&file, "lmr_base_percent 150\nrfp_margin 40\n").unwrap();
    s.handle_line("setoption name rfp_margin value 80");
    s.handle_line("setoption name lmr_base_percent value 75");
    assert_eq!(nodes_at_depth_7(&mut s, &out), default_nodes);
    s.handle_line(&format!(
        "setoption name SearchParamsFile value {}",
        file.display()
    ));
    assert_eq!(nodes_at_depth_7(&mut s, &out), changed);
    let bad = dir.path().join("bad.search");
    std::fs::write(&bad, "# x\nrfp_margin 10\n").unwrap();
    s.handle_line(&format!(
        "setoption name SearchParamsFile value {}",
        bad.display()
    ));
    let text = out.take();
    assert!(text.contains("bad.search:2: rfp_margin must be an integer in 20..=250"));
    assert_eq!(s.options().search_params, tuned);
}

#[test]
fn search_params_command_writes_a_file_the_match_reads() {
    let engine = env!("CARGO_BIN_EXE_engine");
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(engine).arg("search-params").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let values: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(values.len(), SEARCH_PARAMS.len());
    // Edit one value and read it back through the command.
    let file = dir.path().join("edited.search");
    std::fs::write(
        &file,
        text.replace("\nrfp_margin 80\n", "\nrfp_margin 150\n"),
    )
    .unwrap();
    let out = Command::new(engine)
        .args(["search-params", "--file"])
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("\nrfp_margin 150\n"), "{text}");
    // OpenBench's SPSA input lists every parameter with its step.
    let out = Command::new(engine)
        .args(["search-params", "--openbench"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("rfp_margin, int, 80, 20, 250, 8, 0.002"),
        "{text}"
    );

    // A match between the defaults and the edited parameters runs, and a
    // bad file is a clear error.
    let out = Command::new(engine)
        .args([
            "match",
            "--games",
            "2",
            "--nodes",
            "300",
            "--max-plies",
            "40",
        ])
        .arg("--search-params-a")
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("match edited (A) vs defaults (B)"),
        "{stdout}"
    );
    std::fs::write(&file, "rfp_margin eighty\n").unwrap();
    let out = Command::new(engine)
        .args(["match", "--games", "2", "--nodes", "300"])
        .arg("--search-params-b")
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("edited.search:1: rfp_margin must be an integer"),
        "{stderr}"
    );
}
