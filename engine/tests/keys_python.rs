//! Our keys against an independent implementation: python-chess's
//! `chess.polyglot.zobrist_hash`, on the EPD suites and on positions from
//! random play (which reach en-passant corner cases: pinned capturers,
//! captures that would expose the king, pawns beside but not able to
//! capture). The book hash (`polyglot_key`) is python-chess's hash of the
//! board as given; the position key (`key`) is its hash of the board with
//! the en-passant square kept only when python-chess finds a legal
//! en-passant capture, and survives python-chess's FEN writer.
//! `scripts/test.sh` installs python-chess.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use engine::chess::position::{fen_of, key, parse_fen, polyglot_key};
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
    // Pawns ready to capture en passant that may not: pinned on the rank,
    // pinned on a diagonal (found by the fuzz target `fen`), and a king in
    // in check (discovered by the double push) that the capture does not
    // answer.
    for fen in [
        "4k3/8/8/KPp4r/8/8/8/8 w - c6 0 2",
        "r4rn1/pb2bppp/np3n2/2pkN3/N2pPB2/6P1/PPP2PBP/R4RK1 b - e3 0 1",
        "8/8/8/7k/3pP3/8/8/3BK3 b - e3 0 1",
    ] {
        out.push((fen.to_string(), parse_fen(fen).unwrap()));
    }
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
                 book = chess.polyglot.zobrist_hash(b)\n    \
                 if not b.has_legal_en_passant():\n        \
                     b.ep_square = None\n    \
                 print('%016x %016x %s' % (book, chess.polyglot.zobrist_hash(b), b.fen()))\n",
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
    let (mut with_ep, mut unusable_ep) = (0, 0);
    for ((fen, pos), their) in positions.iter().zip(&theirs) {
        let (book, rest) = their.split_once(' ').unwrap();
        let (identity, their_fen) = rest.split_once(' ').unwrap();
        assert_eq!(format!("{:016x}", polyglot_key(pos)), book, "{fen}");
        assert_eq!(format!("{:016x}", key(pos)), identity, "{fen}");
        // The FEN we parse gives the same keys as the position we played,
        // and python-chess's FEN of it the same position key.
        assert_eq!(key(&parse_fen(fen).unwrap()), key(pos), "{fen}");
        assert_eq!(polyglot_key(&parse_fen(fen).unwrap()), polyglot_key(pos));
        assert_eq!(key(&parse_fen(their_fen).unwrap()), key(pos), "{their_fen}");
        with_ep += usize::from(pos.maybe_ep_square().is_some());
        unusable_ep += usize::from(book != identity);
    }
    assert!(with_ep > 100, "too few en-passant positions: {with_ep}");
    assert!(
        unusable_ep >= 3,
        "{unusable_ep} en-passant squares that cannot be used"
    );
}

#[path = "support/mutate.rs"]
mod mutate;

/// Our FEN reader is at least as strict as python-chess's: on thousands of
/// mutated FENs (digit runs, stray characters, missing or extra fields), a
/// text python-chess refuses is never a position here. (We refuse more:
/// illegal positions, which python-chess reads and flags later.)
#[test]
fn fen_syntax_python_chess_refuses_is_refused() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/labeled/masters-quiet-20k.epd");
    let seeds: Vec<Vec<u8>> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .take(300)
        .map(|l| {
            let board: Vec<&str> = l.split_whitespace().take(4).collect();
            format!("{} 0 1", board.join(" ")).into_bytes()
        })
        .collect();
    let mut mutator = mutate::Mutator::new(7);
    let mut texts: Vec<String> = (0..4000)
        .map(|i| String::from_utf8_lossy(&mutator.mutate(&seeds[i % seeds.len()])).into_owned())
        .filter_map(|t| t.lines().next().map(str::trim).map(str::to_string))
        .filter(|t| !t.is_empty())
        .collect();
    texts.push("r4rn1/pb2bppp/np3n2/2pkN3/N2pPB2/6P1/PPP2PBP/R22RK1 b - e3".to_string());
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, chess\n\
             for line in sys.stdin:\n    \
                 try:\n        \
                     chess.Board(line.strip())\n        \
                     print('ok')\n    \
                 except ValueError:\n        \
                     print('refused')\n",
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is needed for this test (scripts/test.sh installs python-chess)");
    let mut stdin = child.stdin.take().unwrap();
    let input: String = texts.iter().map(|t| format!("{t}\n")).collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "python-chess failed");
    let verdicts: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(verdicts.len(), texts.len());
    let (mut refused, mut read) = (0, 0);
    for (text, verdict) in texts.iter().zip(&verdicts) {
        let ours = parse_fen(text);
        if verdict == "refused" {
            refused += 1;
            assert!(ours.is_err(), "python-chess refuses {text:?}, we read it");
        } else {
            read += usize::from(ours.is_ok());
        }
    }
    assert!(
        refused > 1000 && read > 100,
        "{refused} refused, {read} read"
    );
}
