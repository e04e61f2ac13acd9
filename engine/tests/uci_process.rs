//! The real `engine` binary over pipes, as a GUI drives it: bytes that are
//! not UTF-8, `go` commands with bad values, `ucinewgame` during a search and
//! the largest hash all end in prompt, legal answers.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use engine::chess::position::{parse_fen, play_uci};
use engine::eval::{Params, schema};
use engine::formats::params_file;
use shakmaty::Chess;

/// A running engine with its input and a channel of its output lines.
struct Engine {
    child: Child,
    input: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    fn start() -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the engine");
        let input = child.stdin.take().unwrap();
        let output = child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(output).lines() {
                let Ok(line) = line else { return };
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        Engine {
            child,
            input,
            lines,
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.input.write_all(bytes).unwrap();
        self.input.flush().unwrap();
    }

    fn line(&mut self, text: &str) {
        self.send(format!("{text}\n").as_bytes());
    }

    /// The lines up to and including the first that starts with `prefix`.
    fn until(&mut self, prefix: &str, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let done = line.starts_with(prefix);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no {prefix:?} within {timeout:?}; got {seen:#?}")
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the engine exited before {prefix:?}; got {seen:#?}")
                }
            }
        }
    }

    /// The move of the next `bestmove`, with the lines before it.
    fn bestmove(&mut self, timeout: Duration) -> (String, Vec<String>) {
        let lines = self.until("bestmove", timeout);
        let best = lines.last().unwrap()["bestmove ".len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .to_string();
        (best, lines)
    }

    fn info_strings(lines: &[String]) -> Vec<&String> {
        lines
            .iter()
            .filter(|l| l.starts_with("info string"))
            .collect()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.input.write_all(b"quit\n");
        let _ = self.input.flush();
        let _ = self.child.wait();
    }
}

fn after(moves: &[&str]) -> Chess {
    moves.iter().fold(Chess::default(), |pos, m| {
        play_uci(&pos, m).expect("legal test move").0
    })
}

const PROMPT: Duration = Duration::from_secs(5);
/// The default search of a `go` without usable limits, under load.
const BOUNDED: Duration = Duration::from_secs(60);

#[test]
fn a_line_that_is_not_utf8_is_ignored_with_a_reason() {
    let mut e = Engine::start();
    e.send(b"\xff\xfe\x80 garbage\nposition startpos moves e2e4 \xc3\x28\n");
    e.line("isready");
    let lines = e.until("readyok", PROMPT);
    let reasons = Engine::info_strings(&lines);
    assert_eq!(reasons.len(), 2, "{lines:#?}");
    assert!(
        reasons.iter().all(|l| l.contains("not UTF-8")),
        "{lines:#?}"
    );
    // The session goes on, from the start position (the bad `position`
    // was ignored as a whole).
    e.line("go depth 2");
    let (best, _) = e.bestmove(PROMPT);
    assert!(play_uci(&Chess::default(), &best).is_ok(), "{best}");
}

#[test]
fn huge_lines_are_not_echoed_whole() {
    let mut e = Engine::start();
    // Longer than the engine reads: dropped, and said so briefly.
    let mut overlong = vec![b'x'; 3 << 20];
    overlong.push(b'\n');
    e.send(&overlong);
    // Within the limit but bad: quoted in part.
    e.line(&format!("position fen {}", "p".repeat(900_000)));
    e.line(&format!("frobnicate{}", "z".repeat(900_000)));
    e.line(&format!("go depth 1 {}", "w".repeat(900_000)));
    let lines = e.until("bestmove", PROMPT);
    let reasons = Engine::info_strings(&lines);
    assert_eq!(reasons.len(), 4, "{reasons:#?}");
    for line in lines {
        assert!(line.len() < 400, "{} bytes: {}…", line.len(), &line[..200]);
    }
}

#[test]
fn every_go_ends_in_a_legal_bestmove() {
    let moves = ["e2e4", "c7c5"];
    let pos = after(&moves);
    let mut e = Engine::start();
    e.line(&format!("position startpos moves {}", moves.join(" ")));
    // Each bad value is reported, and the limit after it still applies.
    for bad in [
        "depth -1",
        "nodes -5",
        "wtime 1000.5",
        "movetime abc",
        "depth",
        "mate -3",
        "searchmoves e2e5",
        "depth 99999999999999999999",
        "nodes 184467440737095516160",
        "movetime 1e9",
        "movestogo -1",
        "bogus",
    ] {
        e.line(&format!("go {bad} depth 3"));
        let (best, lines) = e.bestmove(PROMPT);
        assert!(play_uci(&pos, &best).is_ok(), "go {bad}: {best}");
        let reasons = Engine::info_strings(&lines);
        assert_eq!(reasons.len(), 1, "go {bad}: {lines:#?}");
        // The limit was taken: the last iteration is depth 3.
        assert!(
            lines.iter().any(|l| l.starts_with("info depth 3 ")),
            "go {bad}: {lines:#?}"
        );
        assert!(!lines.iter().any(|l| l.starts_with("info depth 4 ")));
    }
    // Only bad values, or none: a bounded default search, not an endless
    // one.
    for bad in ["", "depth -1", "movetime abc wtime x"] {
        e.line(&format!("go {bad}"));
        let (best, lines) = e.bestmove(BOUNDED);
        assert!(play_uci(&pos, &best).is_ok(), "go {bad}: {best}");
        assert!(
            lines.iter().any(|l| l.contains("without a limit")),
            "go {bad}: {lines:#?}"
        );
    }
    // Huge valid values are bounded by the other limits.
    e.line(
        "go wtime 9223372036854775807 btime 9223372036854775807 winc 9223372036854775807 depth 2",
    );
    let (best, _) = e.bestmove(PROMPT);
    assert!(play_uci(&pos, &best).is_ok(), "{best}");
    e.line("go mate 4294967295 nodes 2000");
    let (best, _) = e.bestmove(PROMPT);
    assert!(play_uci(&pos, &best).is_ok(), "{best}");
    e.line("go movetime 9223372036854775807 nodes 2000");
    let (best, _) = e.bestmove(PROMPT);
    assert!(play_uci(&pos, &best).is_ok(), "{best}");
}

#[test]
fn searchmoves_restricts_the_root_and_ignores_illegal_moves() {
    let mut e = Engine::start();
    e.line("position startpos");
    e.line("go searchmoves a2a3 e2e5 h2h3 depth 4");
    let (best, lines) = e.bestmove(PROMPT);
    assert!(best == "a2a3" || best == "h2h3", "{best}");
    let reasons = Engine::info_strings(&lines);
    assert_eq!(reasons.len(), 1, "{lines:#?}");
    assert!(reasons[0].contains("e2e5"));
    // Only illegal moves: every move is searched.
    e.line("go searchmoves e2e5 depth 2");
    let (best, _) = e.bestmove(PROMPT);
    assert!(play_uci(&Chess::default(), &best).is_ok(), "{best}");
}

#[test]
fn ucinewgame_during_a_search_keeps_the_position() {
    let moves = ["e2e4", "e7e5", "g1f3"];
    let pos = after(&moves);
    let mut e = Engine::start();
    e.line(&format!("position startpos moves {}", moves.join(" ")));
    e.line("go infinite");
    e.line("isready");
    e.until("readyok", PROMPT);
    e.line("ucinewgame");
    e.line("stop");
    let (best, lines) = e.bestmove(PROMPT);
    assert!(play_uci(&pos, &best).is_ok(), "{best}");
    assert!(
        lines.iter().any(|l| l.contains("ucinewgame ignored")),
        "{lines:#?}"
    );
    // The next search is still from the game's position (Black to move).
    for _ in 0..3 {
        e.line("go depth 2");
        let (best, _) = e.bestmove(PROMPT);
        assert!(play_uci(&pos, &best).is_ok(), "{best} after ucinewgame");
    }
}

#[test]
fn the_largest_hash_answers_isready_at_once() {
    let mut e = Engine::start();
    e.line("uci");
    let options = e.until("uciok", PROMPT);
    let max = options
        .iter()
        .find(|l| l.starts_with("option name Hash"))
        .and_then(|l| l.rsplit(' ').next())
        .unwrap()
        .to_string();
    let start = Instant::now();
    e.line(&format!("setoption name Hash value {max}"));
    e.line("isready");
    e.until("readyok", PROMPT);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "setoption Hash {max} took {:?}",
        start.elapsed()
    );
    e.line("position startpos moves d2d4");
    e.line("go depth 5");
    let (best, _) = e.bestmove(PROMPT);
    assert!(play_uci(&after(&["d2d4"]), &best).is_ok(), "{best}");
    // Clearing a used table between games is as quick.
    let start = Instant::now();
    e.line("ucinewgame");
    e.line("isready");
    e.until("readyok", PROMPT);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    e.line("position startpos");
    e.line("go depth 3");
    let (best, _) = e.bestmove(PROMPT);
    assert!(play_uci(&Chess::default(), &best).is_ok(), "{best}");
}

/// Every `go` ends bounded, whatever the weights: with the compiled weights
/// and with every evaluation weight at its minimum or at its maximum (a
/// `ParamsFile`), on positions whose first iteration explodes in quiescence
/// (338,583 nodes at depth 1 with the compiled weights), `go nodes 1000` searches at
/// most 1000 nodes and `go movetime 50` answers promptly.
#[test]
fn node_and_time_limits_hold_with_weights_at_their_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let fens = [
        "r1bqkb1r/8/2n2n2/pppppppp/PPPPPPPP/2N2N2/8/R1BQKB1R w - - 0 1",
        "rnbqkbnr/8/8/pppppppp/PPPPPPPP/8/8/RNBQKBNR w - - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    ];
    for (name, bound) in [
        ("compiled", None),
        ("minimum", Some(false)),
        ("maximum", Some(true)),
    ] {
        let mut e = Engine::start();
        if let Some(max) = bound {
            let mut params = Params::defaults();
            for i in 0..Params::NUM_SCALARS {
                let b = schema::block_of_scalar(i);
                params.set_scalar(i, if max { b.max } else { b.min });
            }
            let path = dir.path().join(format!("{name}.txt"));
            std::fs::write(&path, params_file::to_text(&params, &[])).unwrap();
            e.line(&format!(
                "setoption name ParamsFile value {}",
                path.display()
            ));
        }
        e.line("isready");
        let lines = e.until("readyok", PROMPT);
        assert!(Engine::info_strings(&lines).is_empty(), "{lines:#?}");
        for fen in fens {
            let pos = parse_fen(fen).unwrap();
            e.line(&format!("position fen {fen}"));
            e.line("go nodes 1000");
            let (best, lines) = e.bestmove(PROMPT);
            assert!(play_uci(&pos, &best).is_ok(), "{name}: {fen}: {best}");
            for line in lines.iter().filter(|l| l.starts_with("info ")) {
                if let Some(n) = line.split(" nodes ").nth(1) {
                    let n: u64 = n.split_whitespace().next().unwrap().parse().unwrap();
                    assert!(n <= 1000, "{name}: {fen}: {line}");
                }
            }
            let started = Instant::now();
            e.line("go movetime 50");
            let (best, _) = e.bestmove(PROMPT);
            assert!(play_uci(&pos, &best).is_ok(), "{name}: {fen}: {best}");
            assert!(started.elapsed() < Duration::from_secs(2), "{name}: {fen}");
        }
    }
}
