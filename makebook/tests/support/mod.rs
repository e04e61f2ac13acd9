//! Helpers shared by the makebook integration tests: running the binary on
//! small PGN fixtures and reading the resulting book back.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../../../engine/tests/support/cli.rs"]
pub mod cli;

use engine::chess::position::{play_uci, uci_of};
use engine::formats::book::PolyglotBook;
use shakmaty::Chess;

/// The makebook binary under test.
pub fn makebook() -> Command {
    Command::new(env!("CARGO_BIN_EXE_makebook"))
}

/// Runs makebook with `args`, panicking with its output when it fails.
pub fn run_ok(args: &[&str]) -> Output {
    cli::run_ok(makebook().args(args))
}

/// A temporary directory holding fixtures.
pub struct Fixtures {
    pub dir: tempfile::TempDir,
}

impl Fixtures {
    pub fn new() -> Fixtures {
        Fixtures {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// Writes a file and returns its path.
    pub fn file(&self, name: &str, content: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        path
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Builds `book.bin` from the given PGN texts (the first is the
    /// annotated file) plus extra options; returns the book and stderr.
    pub fn build(&self, pgns: &[&str], options: &[&str]) -> (PolyglotBook, String) {
        let mut args: Vec<String> = vec!["-o".into(), self.path("book.bin").display().to_string()];
        args.extend(options.iter().map(|s| s.to_string()));
        for (i, pgn) in pgns.iter().enumerate() {
            args.push(self.file(&format!("in{i}.pgn"), pgn).display().to_string());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_ok(&args);
        let book = PolyglotBook::open(&self.path("book.bin")).unwrap();
        (book, String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// The position after UCI moves from the start.
pub fn after(moves: &[&str]) -> Chess {
    let mut pos = Chess::default();
    for m in moves {
        pos = play_uci(&pos, m).unwrap().0;
    }
    pos
}

/// The book moves of the position after `moves`, as (uci, weight), sorted by
/// move.
pub fn book_moves(book: &PolyglotBook, moves: &[&str]) -> Vec<(String, u16)> {
    let mut list: Vec<(String, u16)> = book
        .moves(&after(moves))
        .iter()
        .map(|(m, w)| (uci_of(m), *w))
        .collect();
    list.sort();
    list
}

/// The weight of one book move, `None` when absent.
pub fn weight(book: &PolyglotBook, moves: &[&str], uci: &str) -> Option<u16> {
    book_moves(book, moves)
        .into_iter()
        .find(|(m, _)| m == uci)
        .map(|(_, w)| w)
}

/// The workspace root (for data files).
pub fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// Whether python3 with the `chess` package is available; prints a notice
/// when it is not.
pub fn python_chess_available(test: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import chess.polyglot"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        notice(&format!(
            "{test} skipped: python3 with the `chess` package is not available (pip install chess)"
        ));
    }
    ok
}

/// Prints a notice that the test harness does not capture, so a skipped
/// check is visible in `cargo test` output.
pub fn notice(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "NOTICE: {text}");
}

/// Every entry of a book as python-chess reads it: "key move weight learn"
/// lines (key in hex, move as python-chess's raw move number).
pub fn python_chess_entries(book: &Path) -> Vec<String> {
    let script = r#"
import sys, chess.polyglot
with chess.polyglot.open_reader(sys.argv[1]) as reader:
    out = []
    for i in range(len(reader)):
        e = reader[i]
        out.append("%016x %d %d %d" % (e.key, e.raw_move, e.weight, e.learn))
print("\n".join(out))
"#;
    let out = cli::run_ok(Command::new("python3").args(["-c", script]).arg(book));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .filter(|l| !l.is_empty())
        .collect()
}

/// Our reader's entries in the same format as [`python_chess_entries`].
pub fn our_entries(book: &PolyglotBook) -> Vec<String> {
    book.entries()
        .iter()
        .map(|e| format!("{:016x} {} {} {}", e.key, e.raw_move, e.weight, e.learn))
        .collect()
}

/// The moves python-chess finds in the positions after each line of moves
/// (one python process for all lines), as sorted (uci, weight) pairs.
pub fn python_chess_moves(book: &Path, lines: &[&[&str]]) -> Vec<Vec<(String, u16)>> {
    let script = r#"
import sys, chess, chess.polyglot
with chess.polyglot.open_reader(sys.argv[1]) as reader:
    for line in sys.argv[2:]:
        board = chess.Board()
        for m in line.split():
            board.push_uci(m)
        print(" ".join("%s:%d" % (e.move.uci(), e.weight)
                       for e in reader.find_all(board, minimum_weight=0)))
"#;
    let out = cli::run_ok(
        Command::new("python3")
            .args(["-c", script])
            .arg(book)
            .args(lines.iter().map(|l| l.join(" "))),
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let mut list: Vec<(String, u16)> = l
                .split_whitespace()
                .map(|pair| {
                    let (m, w) = pair.split_once(':').unwrap();
                    (m.to_string(), w.parse().unwrap())
                })
                .collect();
            list.sort();
            list
        })
        .collect()
}
