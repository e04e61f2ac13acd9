//! The annotation language of the hand-annotated book file.
//!
//! Three kinds of marks, as in Arasan's `basic.pgn`:
//!
//! * a comment `{weight: N}` (N from 0 to 100; `weight:N`, `weight = N` and
//!   text after the number are accepted) right after a move sets that move's
//!   weight explicitly ([`parse_weight_comment`]);
//! * move-quality glyphs after a move ([`MoveJudgement`]): `!!` ($3),
//!   `!` ($1), `!?` ($5), `?!` ($6), `?` ($2) and `??` ($4);
//! * position-evaluation glyphs $10–$21 ([`line_evaluation`]) which, at the
//!   end of a line, say which side the line favours and by how much.

use engine::chess::excerpt::excerpt_bytes;
use pgn_reader::Nag;

/// A move-quality glyph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveJudgement {
    /// `!!` ($3): play with the maximum weight.
    Brilliant,
    /// `!` ($1): weight × 1.5.
    Good,
    /// `!?` ($5): weight × 1.25.
    Interesting,
    /// `?!` ($6): weight × 0.75.
    Dubious,
    /// `?` ($2): never play (kept with weight 0).
    Mistake,
    /// `??` ($4): never play (kept with weight 0).
    Blunder,
}

impl MoveJudgement {
    /// The judgement a NAG expresses, if it is a move-quality NAG.
    pub fn from_nag(nag: Nag) -> Option<MoveJudgement> {
        match nag.0 {
            1 => Some(MoveJudgement::Good),
            2 => Some(MoveJudgement::Mistake),
            3 => Some(MoveJudgement::Brilliant),
            4 => Some(MoveJudgement::Blunder),
            5 => Some(MoveJudgement::Interesting),
            6 => Some(MoveJudgement::Dubious),
            _ => None,
        }
    }
}

/// The evaluation a position NAG ($10–$21) gives, from White's point of
/// view, on a scale from −4 to +4: $10–$13 (drawish, equal, unclear) 0;
/// $14/$15 (slight advantage) ±1; $16/$17 (moderate) ±2; $18/$19 (decisive)
/// ±3; $20/$21 (crushing) ±4. `None` for other NAGs.
pub fn line_evaluation(nag: Nag) -> Option<i8> {
    match nag.0 {
        10..=13 => Some(0),
        14 => Some(1),
        15 => Some(-1),
        16 => Some(2),
        17 => Some(-2),
        18 => Some(3),
        19 => Some(-3),
        20 => Some(4),
        21 => Some(-4),
        _ => None,
    }
}

/// What a comment says about the weight of the move before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WeightComment {
    /// The comment does not mention a weight (ECO codes, game references…).
    None,
    /// A valid explicit weight, 0–100.
    Weight(u8),
    /// The comment tries to give a weight but it is unusable.
    Malformed(String),
}

/// Reads a `weight: N` mark from a comment.
pub fn parse_weight_comment(comment: &[u8]) -> WeightComment {
    const WORD: &[u8] = b"weight";
    let Some(at) = comment
        .windows(WORD.len())
        .position(|w| w.eq_ignore_ascii_case(WORD))
    else {
        return WeightComment::None;
    };
    let mut rest = &comment[at + WORD.len()..];
    let skip_space =
        |s: &[u8]| -> usize { s.iter().take_while(|b| b.is_ascii_whitespace()).count() };
    rest = &rest[skip_space(rest)..];
    match rest.first() {
        Some(b':' | b'=') => rest = &rest[1..],
        // "weight" as an ordinary word, not a mark.
        _ => return WeightComment::None,
    }
    rest = &rest[skip_space(rest)..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let shown = excerpt_bytes(comment.trim_ascii());
    if digits == 0 {
        return WeightComment::Malformed(format!("weight comment {{{shown}}} has no number"));
    }
    let followed_by_junk = rest
        .get(digits)
        .is_some_and(|b| !b.is_ascii_whitespace() && !matches!(b, b',' | b';' | b')' | b'.'));
    if followed_by_junk {
        return WeightComment::Malformed(format!(
            "weight comment {{{shown}}}: the weight is not a whole number"
        ));
    }
    match std::str::from_utf8(&rest[..digits])
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
    {
        Some(n) if n <= 100 => WeightComment::Weight(n as u8),
        _ => WeightComment::Malformed(format!(
            "weight comment {{{shown}}}: the weight must be between 0 and 100"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_comments() {
        assert_eq!(
            parse_weight_comment(b"weight:40"),
            WeightComment::Weight(40)
        );
        assert_eq!(
            parse_weight_comment(b" weight: 80"),
            WeightComment::Weight(80)
        );
        assert_eq!(
            parse_weight_comment(b"\nweight:10"),
            WeightComment::Weight(10)
        );
        assert_eq!(
            parse_weight_comment(b"weight: 60 E90"),
            WeightComment::Weight(60)
        );
        assert_eq!(
            parse_weight_comment(b"Weight = 0"),
            WeightComment::Weight(0)
        );
        assert_eq!(parse_weight_comment(b"B33"), WeightComment::None);
        assert_eq!(
            parse_weight_comment(b"gains weight fast"),
            WeightComment::None
        );
        assert!(matches!(
            parse_weight_comment(b"weight:"),
            WeightComment::Malformed(_)
        ));
        assert!(matches!(
            parse_weight_comment(b"weight: 101"),
            WeightComment::Malformed(_)
        ));
        assert!(matches!(
            parse_weight_comment(b"weight: 4x"),
            WeightComment::Malformed(_)
        ));
        assert!(matches!(
            parse_weight_comment(b"weight: 99999999999999"),
            WeightComment::Malformed(_)
        ));
    }

    #[test]
    fn nags() {
        assert_eq!(
            MoveJudgement::from_nag(Nag(3)),
            Some(MoveJudgement::Brilliant)
        );
        assert_eq!(MoveJudgement::from_nag(Nag(14)), None);
        assert_eq!(line_evaluation(Nag(11)), Some(0));
        assert_eq!(line_evaluation(Nag(16)), Some(2));
        assert_eq!(line_evaluation(Nag(19)), Some(-3));
        assert_eq!(line_evaluation(Nag(146)), None);
    }
}
