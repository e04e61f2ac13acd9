//! Match PGN without the times of its moves: the per-move comments carry
//! the time each move took (`{+0.35/12 0.523s}`), the one thing that
//! differs between two runs of the same node-limited match.

#![allow(dead_code)]

/// `pgn` with the last word of every comment dropped when it is a time
/// (`0.523s`).
pub fn without_move_times(pgn: &str) -> String {
    let mut out = String::with_capacity(pgn.len());
    let mut rest = pgn;
    while let Some(open) = rest.find('{') {
        let close = open + rest[open..].find('}').expect("a closed comment");
        let comment = &rest[open + 1..close];
        let kept = match comment.rsplit_once(' ') {
            Some((head, time)) if is_time(time) => head,
            None if is_time(comment) => "",
            _ => comment,
        };
        out.push_str(&rest[..open]);
        out.push('{');
        out.push_str(kept);
        out.push('}');
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

fn is_time(word: &str) -> bool {
    word.strip_suffix('s')
        .is_some_and(|n| !n.is_empty() && n.parse::<f64>().is_ok())
}

#[test]
fn drops_times_only() {
    assert_eq!(
        without_move_times("1. e4 {+0.35/12 0.523s} e5 {0.002s} 2. Nf3 {checkmate} 1-0"),
        "1. e4 {+0.35/12} e5 {} 2. Nf3 {checkmate} 1-0"
    );
}
