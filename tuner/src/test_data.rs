//! The bundled labeled positions, for the library's unit tests.

use engine::formats::labeled::{GameResult, parse_line};
use shakmaty::Chess;

/// The first `n` positions of `data/labeled/masters-quiet-20k.epd`, with
/// their results.
pub(crate) fn positions(n: usize) -> Vec<(Chess, GameResult)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../data/labeled/masters-quiet-20k.epd"
    );
    let text = std::fs::read_to_string(path).expect("bundled data");
    text.lines()
        .take(n)
        .map(|l| {
            let r = parse_line(l).expect("a good line").expect("a record");
            (r.position, r.result.expect("a result"))
        })
        .collect()
}

/// `games` sequences of `plies` consecutive positions, as self-play data
/// lists them: each starts from one of the bundled positions and goes on
/// by legal moves chosen deterministically (with that position's result).
pub(crate) fn game_positions(games: usize, plies: usize) -> crate::trace_set::TraceSet {
    use shakmaty::Position;
    let mut set = crate::trace_set::TraceSet::new();
    for (g, (mut pos, result)) in positions(games).into_iter().enumerate() {
        for p in 0..plies {
            set.push_position(&pos, result, None);
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves[(g * 7 + p * 3) % moves.len()];
            pos.play_unchecked(m);
        }
    }
    set
}
