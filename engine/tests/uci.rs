//! The UCI session survives garbage and keeps a correct position.

#[path = "support/capture.rs"]
mod capture;

use std::time::{Duration, Instant};

use capture::Capture;
use engine::chess::position::{fen_of, parse_fen, play_uci};
use engine::uci::{Flow, UciSession};
use shakmaty::Position;

fn session() -> (UciSession, Capture) {
    let out = Capture::default();
    (UciSession::new(out.clone()), out)
}

#[test]
fn garbage_is_ignored_with_a_reason() {
    let (mut s, out) = session();
    for line in [
        "",
        "   ",
        "hello world",
        "position",
        "position fen",
        "position fen not a fen at all",
        "position fen 8/8/8/8/8/8/8/K7 w - - 0 1",
        "position startpos moves",
        "position sideways",
        "setoption",
        "setoption name",
        "setoption name Hash value lots",
        "setoption name Hash value 0",
        "setoption name Threads value -3",
        "setoption name Nonexistent value 3",
        "setoption name OwnBook value maybe",
        "setoption name ParamsFile value /nonexistent/params.txt",
        "go depth x nodes -5",
        "stop",
        "ucinewgame",
        "\u{0}\u{7f}\u{1b}[2J",
        "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 moves e2e4 e7e5 xyzzy",
    ] {
        assert_eq!(s.handle_line(line), Flow::Continue, "{line:?}");
    }
    s.handle_line("isready");
    assert!(out.wait_for("readyok", Duration::from_secs(5)));
    assert!(out.text().contains("info string"));
    // Still answers a search with a legal move.
    s.handle_line("position startpos");
    s.handle_line("go depth 3");
    assert!(out.wait_for("bestmove", Duration::from_secs(10)));
    assert_eq!(s.handle_line("quit"), Flow::Quit);
}

#[test]
fn illegal_move_keeps_position_before_it() {
    let (mut s, out) = session();
    s.handle_line("position startpos moves e2e4 e7e5 g1f3 e8e6 b8c6");
    let mut expected = shakmaty::Chess::default();
    for m in ["e2e4", "e7e5", "g1f3"] {
        expected = play_uci(&expected, m).unwrap().0;
    }
    assert_eq!(fen_of(s.position()), fen_of(&expected));
    assert_eq!(s.history_keys().len(), 3);
    assert!(out.text().contains("illegal move"));
    // A bad FEN leaves the previous position alone.
    s.handle_line("position fen 8/8/8/8/8/8/8/8 w - - 0 1");
    assert_eq!(fen_of(s.position()), fen_of(&expected));
    // A FEN plus moves.
    s.handle_line("position fen 4k3/8/8/8/8/8/4P3/4K3 w - - 0 1 moves e2e4 e8d7");
    assert_eq!(
        fen_of(s.position()),
        fen_of(&parse_fen("8/3k4/8/8/4P3/8/8/4K3 w - - 1 2").unwrap())
    );
}

/// After a rejected `position` command a move for the position kept from
/// before would answer a question the GUI did not ask: `go` answers `0000`
/// until a position is accepted again.
#[test]
fn go_after_a_rejected_position_plays_no_move() {
    // Waits for the next `bestmove` and empties the capture: the one move
    // it names, and everything written with it.
    let next_bestmove = |out: &Capture| -> (String, String) {
        assert!(out.wait_for("bestmove", Duration::from_secs(10)));
        let text = out.take();
        let moves: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("bestmove "))
            .filter_map(|rest| rest.split_whitespace().next())
            .collect();
        assert_eq!(moves.len(), 1, "{text}");
        (moves[0].to_string(), text)
    };
    for rejected in [
        // The side not to move is in check: an illegal FEN.
        "position fen 4k3/8/8/8/8/8/8/4R1K1 w - - 0 1",
        "position fen 8/8/8/8/8/8/8/8 w - - 0 1",
        "position sideways",
        "position startpos moves e2e4 e7e5 g1f3 e8e6",
    ] {
        let (mut s, out) = session();
        s.handle_line("position startpos moves e2e4");
        s.handle_line(rejected);
        s.handle_line("go depth 2");
        let (m, text) = next_bestmove(&out);
        assert_eq!(m, "0000", "{rejected}");
        assert!(text.contains("go not searched"), "{rejected}");
        // An accepted position is searched again.
        s.handle_line("position startpos moves e2e4");
        s.handle_line("go depth 2");
        let (m, _) = next_bestmove(&out);
        assert!(play_uci(s.position(), &m).is_ok(), "{rejected}: {m}");
        // So is the start position after `ucinewgame`.
        s.handle_line(rejected);
        s.handle_line("ucinewgame");
        s.handle_line("go depth 2");
        let (m, _) = next_bestmove(&out);
        assert!(
            play_uci(&shakmaty::Chess::default(), &m).is_ok(),
            "{rejected}: {m}"
        );
        assert_eq!(s.handle_line("quit"), Flow::Quit);
    }
}

#[test]
fn infinite_search_answers_isready_and_stops() {
    let (mut s, out) = session();
    s.handle_line("uci");
    assert!(out.text().contains("uciok"));
    s.handle_line("setoption name Hash value 4");
    s.handle_line("setoption name Threads value 2");
    s.handle_line("position startpos moves d2d4");
    s.handle_line("go infinite");
    s.handle_line("isready");
    assert!(out.wait_for("readyok", Duration::from_secs(2)));
    std::thread::sleep(Duration::from_millis(100));
    assert!(!out.text().contains("bestmove"));
    s.handle_line("go depth 2"); // ignored while searching
    s.handle_line("stop");
    let text = out.text();
    let best = text
        .lines()
        .find_map(|l| l.strip_prefix("bestmove "))
        .expect("bestmove after stop");
    let uci = best.split_whitespace().next().unwrap();
    assert!(play_uci(s.position(), uci).is_ok(), "{uci}");
    assert_eq!(text.matches("bestmove").count(), 1);
}

#[test]
fn clock_search_returns_in_time_and_mate_has_no_move() {
    let (mut s, out) = session();
    s.handle_line("position startpos");
    let start = Instant::now();
    s.handle_line("go wtime 1000 btime 1000 winc 10 binc 10");
    assert!(out.wait_for("bestmove", Duration::from_secs(1)));
    assert!(start.elapsed() < Duration::from_millis(500));
    s.handle_line("position fen R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1");
    assert!(s.position().is_checkmate());
    s.handle_line("go movetime 100");
    assert!(out.wait_for("bestmove 0000", Duration::from_secs(2)));
}

#[test]
fn go_right_after_bestmove_is_never_dropped() {
    let (mut s, out) = session();
    s.handle_line("position startpos moves e2e4");
    for i in 1..=40 {
        s.handle_line("go depth 1");
        let start = Instant::now();
        while out.text().matches("bestmove").count() < i {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "go {i} was dropped"
            );
            std::thread::yield_now();
        }
    }
    assert!(!out.text().contains("ignored"));
}

/// With `OwnBook` and a book, the engine plays only book moves in booked
/// positions, never a weight-0 move, and searches elsewhere.
#[test]
fn own_book_plays_only_weighted_book_moves() {
    use engine::formats::book::{BookEntry, encode_move, write_book};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.bin");
    let start = shakmaty::Chess::default();
    let entry = |uci: &str, weight: u16| {
        let (_, m) = play_uci(&start, uci).unwrap();
        BookEntry {
            key: engine::chess::position::key(&start),
            raw_move: encode_move(&m).unwrap(),
            weight,
            learn: 0,
        }
    };
    write_book(
        &path,
        &[entry("e2e4", 30), entry("d2d4", 10), entry("g2g4", 0)],
    )
    .unwrap();
    let (mut s, out) = session();
    s.handle_line("setoption name OwnBook value true");
    s.handle_line(&format!("setoption name BookFile value {}", path.display()));
    let mut seen = std::collections::HashSet::new();
    for i in 0..60 {
        s.handle_line("position startpos");
        s.handle_line("go movetime 50");
        let needle = "bestmove ";
        assert!(out.wait_for(needle, Duration::from_secs(5)));
        let text = out.text();
        let mv = text
            .lines()
            .filter_map(|l| l.strip_prefix(needle))
            .nth(i)
            .map(|m| m.split_whitespace().next().unwrap().to_string());
        let Some(mv) = mv else {
            // Wait for this iteration's answer.
            assert!(out.wait_for(needle, Duration::from_secs(5)));
            continue;
        };
        assert!(
            mv == "e2e4" || mv == "d2d4",
            "non-book or weight-0 move {mv}"
        );
        seen.insert(mv);
    }
    assert_eq!(seen.len(), 2, "both weighted moves are played: {seen:?}");
    // Out of book, the engine searches.
    s.handle_line("position startpos moves a2a3");
    s.handle_line("go depth 3");
    assert!(out.wait_for("info depth 3", Duration::from_secs(10)));
}
