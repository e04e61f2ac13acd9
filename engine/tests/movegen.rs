//! `engine::chess::movegen` against shakmaty: the tactical move list must be exactly
//! the captures and queen promotions among the legal moves (every legal move
//! when in check), and `gives_check` must agree with playing the move. Checked
//! at every node of shallow trees below the perft suite (castling, en passant,
//! promotions, pins) and on positions from random play.

use std::collections::HashSet;
use std::path::Path;

use engine::chess::movegen::{CheckInfo, gives_check, tactical_moves};
use engine::formats::perft_suite::read_suite;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{Chess, Move, Position, Role};

fn check_position(pos: &Chess) -> usize {
    let legal = pos.legal_moves();
    let expected: HashSet<Move> = legal
        .iter()
        .copied()
        .filter(|m| pos.is_check() || m.is_capture() || m.promotion() == Some(Role::Queen))
        .collect();
    let tactical = tactical_moves(pos);
    let got: HashSet<Move> = tactical.iter().copied().collect();
    assert_eq!(got.len(), tactical.len(), "duplicate moves in {pos:?}");
    assert_eq!(
        got,
        expected,
        "tactical moves of {}",
        shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal)
    );
    let info = CheckInfo::new(pos);
    for &m in &legal {
        let mut child = pos.clone();
        child.play_unchecked(m);
        assert_eq!(
            info.gives_check(pos, m),
            child.is_check(),
            "CheckInfo::gives_check of {m:?} in {}",
            shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal)
        );
        assert_eq!(
            gives_check(pos, m),
            child.is_check(),
            "gives_check of {m:?} in {}",
            shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal)
        );
    }
    legal.len()
}

fn walk(pos: &Chess, depth: u32) -> usize {
    let mut nodes = check_position(pos);
    if depth > 1 {
        for m in pos.legal_moves() {
            let mut child = pos.clone();
            child.play_unchecked(m);
            nodes += walk(&child, depth - 1);
        }
    }
    nodes
}

#[test]
fn agrees_with_shakmaty_below_the_perft_suite() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/suites/perftsuite.epd");
    let cases = read_suite(&path).expect("perft suite readable");
    let mut moves = 0;
    for case in &cases {
        moves += walk(&case.position, 3);
    }
    eprintln!("{moves} moves checked");
    assert!(moves > 500_000, "only {moves} moves checked");
}

#[test]
fn agrees_with_shakmaty_in_random_games() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut positions = 0;
    for _ in 0..400 {
        let mut pos = Chess::default();
        for _ in 0..200 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            check_position(&pos);
            positions += 1;
            // Prefer captures so that games reach sparse endgames with
            // promotions and king walks.
            let captures: Vec<Move> = moves.iter().copied().filter(|m| m.is_capture()).collect();
            let m = if !captures.is_empty() && rng.random_bool(0.5) {
                captures[rng.random_range(0..captures.len())]
            } else {
                moves[rng.random_range(0..moves.len())]
            };
            pos.play_unchecked(m);
        }
    }
    assert!(positions > 20_000);
}
