//! Engine scores in PGN move comments, the labels that engine games carry.
//!
//! Engine tournaments and SPRT runs comment every move with the mover's
//! search score: cutechess-cli, fastchess and our match runner write
//! `{+0.35/12 0.104s}` (pawns from the mover's view, `/depth`, then the
//! time), mate scores as `{+M5/20 …}` or `{-M4/18 …}`. Lichess exports write
//! `{ [%eval 0.35] [%clk 0:03:00] }` (pawns from White's view; `[%eval #-3]`
//! for a mate). [`parse_comment_score`] reads either form from the start of
//! one comment and says which view it is in; a comment with neither (a book
//! move, a human note, a clock alone) has no score.

/// The score found in one move comment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommentScore {
    /// Centipawns from the view of the side that played the move (the side
    /// to move in the position before it): `{+0.35/12 …}`.
    Mover(i32),
    /// Centipawns from White's view: `[%eval 0.35]`.
    White(i32),
    /// A mate score, either form: not a position's value in centipawns.
    Mate,
}

impl CommentScore {
    /// Centipawns from the view of the side to move before the move, White
    /// when `white_to_move`; `None` for a mate score.
    pub fn for_mover(self, white_to_move: bool) -> Option<i32> {
        match self {
            CommentScore::Mover(cp) => Some(cp),
            CommentScore::White(cp) => Some(if white_to_move { cp } else { -cp }),
            CommentScore::Mate => None,
        }
    }
}

/// Largest score accepted, in pawns: a larger number is not a position's
/// score, and its centipawns stay far inside `i32`.
const MAX_PAWNS: f64 = 100_000.0;

/// The score in one comment's text (without its braces), if it has one: a
/// `[%eval …]` command anywhere in the comment, else a leading
/// `score/depth` as engine tournaments write it (the score with decimals,
/// the depth followed by the end, a space or a comma). Numbers are pawns,
/// rounded to centipawns.
pub fn parse_comment_score(text: &[u8]) -> Option<CommentScore> {
    let text = std::str::from_utf8(text).ok()?;
    if let Some(at) = text.find("[%eval") {
        let rest = text[at + "[%eval".len()..].trim_start();
        let value = rest[..rest.find([']', ' ', ','])?].trim();
        if value.starts_with('#') {
            return Some(CommentScore::Mate);
        }
        return pawns_to_cp(value).map(CommentScore::White);
    }
    let text = text.trim_start();
    let (score, depth) = text.split_once('/')?;
    // The depth: digits, then the end, a space or a comma.
    let depth_digits = depth.bytes().take_while(u8::is_ascii_digit).count();
    let after_depth = depth.as_bytes().get(depth_digits).copied();
    if depth_digits == 0
        || !matches!(
            after_depth,
            None | Some(b' ' | b',' | b'\t' | b'\n' | b'\r')
        )
    {
        return None;
    }
    let unsigned = score.strip_prefix(['+', '-']).unwrap_or(score);
    if unsigned.starts_with('M')
        && unsigned.len() > 1
        && unsigned[1..].bytes().all(|b| b.is_ascii_digit())
    {
        return Some(CommentScore::Mate);
    }
    // Tournament managers print pawns with decimals (`0.00`, `+1.25`); a
    // bare `2/3` is prose.
    if !score.contains('.') {
        return None;
    }
    pawns_to_cp(score).map(CommentScore::Mover)
}

/// A decimal number of pawns (`+0.35`, `-1.2`, `3`) in centipawns.
fn pawns_to_cp(text: &str) -> Option<i32> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    let well_formed = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && digits.bytes().filter(|&b| b == b'.').count() <= 1
        && digits.bytes().any(|b| b.is_ascii_digit());
    if !well_formed {
        return None;
    }
    let pawns: f64 = text.parse().ok()?;
    (pawns.abs() <= MAX_PAWNS).then(|| (pawns * 100.0).round() as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Option<CommentScore> {
        parse_comment_score(text.as_bytes())
    }

    #[test]
    fn tournament_comments_are_the_movers_view() {
        assert_eq!(parse("+0.35/12 0.104s"), Some(CommentScore::Mover(35)));
        assert_eq!(parse("-1.21/9 0.014s"), Some(CommentScore::Mover(-121)));
        assert_eq!(parse(" 0.00/1 0s"), Some(CommentScore::Mover(0)));
        assert_eq!(parse("+2.5/30"), Some(CommentScore::Mover(250)));
        assert_eq!(
            parse("+0.12/20 1.2s, White wins by adjudication"),
            Some(CommentScore::Mover(12))
        );
        assert_eq!(parse("+M5/20 0.01s"), Some(CommentScore::Mate));
        assert_eq!(parse("-M1/120 0.001s"), Some(CommentScore::Mate));
    }

    #[test]
    fn lichess_evals_are_whites_view() {
        assert_eq!(parse("[%eval 0.17]"), Some(CommentScore::White(17)));
        assert_eq!(
            parse(" [%eval -2.5] [%clk 0:02:58] "),
            Some(CommentScore::White(-250))
        );
        assert_eq!(
            parse("[%clk 0:00:09] [%eval 1.03,24]"),
            Some(CommentScore::White(103))
        );
        assert_eq!(parse("[%eval #-3]"), Some(CommentScore::Mate));
        assert_eq!(CommentScore::White(17).for_mover(false), Some(-17));
        assert_eq!(CommentScore::White(17).for_mover(true), Some(17));
        assert_eq!(CommentScore::Mover(-5).for_mover(false), Some(-5));
        assert_eq!(CommentScore::Mate.for_mover(true), None);
    }

    #[test]
    fn other_comments_have_no_score() {
        for text in [
            "book",
            "",
            "[%clk 0:03:00]",
            "A strong move, though 1/2 of the audience disagreed",
            "resign adjudication",
            "+0.35 12 0.1s",
            "+/-",
            "1/2-1/2",
            "2/3 of the time",
            "+2/30 0.1s",
            "+./3",
            "[%eval abc]",
            "[%eval 0.17",
        ] {
            assert_eq!(parse(text), None, "{text:?}");
        }
    }
}
