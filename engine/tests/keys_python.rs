//! Our Polyglot keys against an independent implementation:
//! python-chess's `chess.polyglot.zobrist_hash`, on the EPD suites and on
//! positions from random play (which reach en-passant corner cases: pinned
//! capturers, captures that would expose the king, pawns beside but not
//! able to capture). `scripts/test.sh` installs python-chess.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use engine::chess::position::{fen_of, key, parse_fen};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::{Chess, EnPassantMode, Position};

fn positions() -> Vec<(String, Chess)> {
    let mut out = Vec::new();
    for suite in ["data/suites/wacnew.epd", "data/suites/arasan2024.epd"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(suite);
        for line in std::fs::read_to_string(path).unwrap().lines() {
            if line.trim().is_empty() {
                continue;
            }
            let board: Vec<&str> = line.split_whitespace().take(4).collect();
            let pos = parse_fen(&board.join(" ")).unwrap();
            out.push((fen_of(&pos), pos));
        }
    }
    // Random games; write the FEN with the en-passant square always present
    // after a double push (as python-chess keeps it), so that the reader's
    // handling of that square is exercised too.
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    for _ in 0..300 {
        let mut pos = Chess::default();
        for _ in 0..120 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            // Prefer pawn moves so that double pushes are common.
            let pawn_moves: Vec<_> = moves
                .iter()
                .filter(|m| m.role() == shakmaty::Role::Pawn)
                .copied()
                .collect();
            let pool = if !pawn_moves.is_empty() && rng.random_bool(0.6) {
                pawn_moves
            } else {
                moves.to_vec()
            };
            pos.play_unchecked(pool[rng.random_range(0..pool.len())]);
            let fen = Fen::from_position(&pos, EnPassantMode::Always).to_string();
            out.push((fen, pos.clone()));
        }
    }
    out
}

#[test]
fn polyglot_keys_match_python_chess() {
    let positions = positions();
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, chess, chess.polyglot\n\
             for line in sys.stdin:\n    \
                 b = chess.Board(line.strip())\n    \
                 print('%016x' % chess.polyglot.zobrist_hash(b))\n",
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is needed for this test (scripts/test.sh installs python-chess)");
    // Feed stdin from another thread so that neither pipe can fill up and
    // deadlock the two processes.
    let mut stdin = child.stdin.take().unwrap();
    let input: String = positions
        .iter()
        .map(|(fen, _)| format!("{fen}\n"))
        .collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "python-chess failed (install it with `pip install chess`)"
    );
    let theirs: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(theirs.len(), positions.len());
    let mut with_ep = 0;
    for ((fen, pos), their) in positions.iter().zip(&theirs) {
        assert_eq!(&format!("{:016x}", key(pos)), their, "{fen}");
        // The FEN we parse gives the same key as the position we played.
        assert_eq!(key(&parse_fen(fen).unwrap()), key(pos), "{fen}");
        with_ep += usize::from(pos.maybe_ep_square().is_some());
    }
    assert!(with_ep > 100, "too few en-passant positions: {with_ep}");
}
