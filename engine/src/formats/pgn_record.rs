//! Writing one finished game as PGN text: the seven-tag roster first, then
//! the caller's extra tags, `SetUp`/`FEN` when the game did not start from
//! the standard position, `PlyCount`, the moves in SAN with move numbers,
//! an optional final comment, and the result token.
//!
//! Invariant: the moves are legal from the start position (callers pass the
//! moves of a played game), so the SAN is always well-formed; comment
//! text is sanitised so that it cannot close the comment early.

use std::fmt::Write as _;

use shakmaty::san::SanPlus;
use shakmaty::{Chess, Color, Move, Position};

use crate::chess::position::fen_of;

/// The tags every PGN game carries, in the order they are written.
const SEVEN_TAG_ROSTER: [&str; 7] = ["Event", "Site", "Date", "Round", "White", "Black", "Result"];
/// Value of an unknown roster tag.
const UNKNOWN_TAG_VALUE: &str = "?";
/// Movetext lines are wrapped before this many characters.
const MAX_LINE_CHARS: usize = 79;

/// A finished game to be written.
#[derive(Clone, Debug)]
pub struct PgnGame<'a> {
    /// Tags by name; roster tags missing here are written as `?` (the
    /// `Result` tag is always `result`).
    pub tags: Vec<(String, String)>,
    /// The start position.
    pub start: &'a Chess,
    /// The moves played from `start`.
    pub moves: &'a [Move],
    /// The result token: `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: &'a str,
    /// A comment after each move (the engine's score, depth and time, as
    /// `+0.35/12 0.52s`), by move; empty for none.
    pub move_comments: &'a [String],
    /// A comment after the last move (why the game ended), if any.
    pub final_comment: Option<String>,
}

fn escape_tag(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

fn sanitise_comment(text: &str) -> String {
    text.replace(['{', '}'], "").replace('\n', " ")
}

impl PgnGame<'_> {
    /// The game as PGN text, ending with a blank line.
    pub fn to_pgn(&self) -> String {
        let mut out = String::new();
        let tag_value = |name: &str| {
            self.tags
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        for name in SEVEN_TAG_ROSTER {
            let value = if name == "Result" {
                self.result
            } else {
                tag_value(name).unwrap_or(UNKNOWN_TAG_VALUE)
            };
            let _ = writeln!(out, "[{name} \"{}\"]", escape_tag(value));
        }
        for (name, value) in &self.tags {
            if !SEVEN_TAG_ROSTER.contains(&name.as_str()) {
                let _ = writeln!(out, "[{name} \"{}\"]", escape_tag(value));
            }
        }
        let start_fen = fen_of(self.start);
        if start_fen != fen_of(&Chess::default()) {
            let _ = writeln!(out, "[SetUp \"1\"]");
            let _ = writeln!(out, "[FEN \"{start_fen}\"]");
        }
        let _ = writeln!(out, "[PlyCount \"{}\"]", self.moves.len());
        out.push('\n');

        let mut tokens = Vec::with_capacity(self.moves.len() * 3 / 2 + 2);
        let mut pos = self.start.clone();
        for (i, m) in self.moves.iter().enumerate() {
            let number = pos.fullmoves().get();
            match pos.turn() {
                Color::White => tokens.push(format!("{number}.")),
                Color::Black if i == 0 => tokens.push(format!("{number}...")),
                Color::Black => {}
            }
            tokens.push(SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string());
            if let Some(comment) = self.move_comments.get(i) {
                tokens.push(format!("{{{}}}", sanitise_comment(comment)));
            }
        }
        if let Some(comment) = &self.final_comment {
            tokens.push(format!("{{{}}}", sanitise_comment(comment)));
        }
        tokens.push(self.result.to_string());
        let mut line_len = 0;
        for token in tokens {
            if line_len > 0 && line_len + 1 + token.len() > MAX_LINE_CHARS {
                out.push('\n');
                line_len = 0;
            } else if line_len > 0 {
                out.push(' ');
                line_len += 1;
            }
            line_len += token.len();
            out.push_str(&token);
        }
        out.push_str("\n\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::position::{parse_fen, play_uci};

    #[test]
    fn writes_tags_numbers_and_setup() {
        let start = parse_fen("4k3/8/8/8/8/8/4P3/4K3 b - - 0 7").unwrap();
        let (after, m1) = play_uci(&start, "e8d7").unwrap();
        let (_, m2) = play_uci(&after, "e2e4").unwrap();
        let game = PgnGame {
            tags: vec![
                ("White".into(), "A \"quoted\"".into()),
                ("Termination".into(), "adjudication".into()),
            ],
            start: &start,
            moves: &[m1, m2],
            result: "1/2-1/2",
            move_comments: &["-0.25/9 0.12s".into(), "+M3/20 {1.5s}".into()],
            final_comment: Some("draw {adjudication}".into()),
        };
        let text = game.to_pgn();
        assert!(text.starts_with("[Event \"?\"]\n"), "{text}");
        assert!(text.contains("[White \"A \\\"quoted\\\"\"]"), "{text}");
        assert!(text.contains("[Result \"1/2-1/2\"]"));
        assert!(text.contains("[Termination \"adjudication\"]"));
        assert!(text.contains("[SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 b - - 0 7\"]"));
        assert!(text.contains("[PlyCount \"2\"]"));
        assert!(
            text.contains(
                "7... Kd7 {-0.25/9 0.12s} 8. e4 {+M3/20 1.5s} {draw adjudication} 1/2-1/2"
            ),
            "{text}"
        );
    }

    #[test]
    fn standard_start_has_no_fen() {
        let start = Chess::default();
        let text = PgnGame {
            tags: Vec::new(),
            start: &start,
            moves: &[],
            result: "*",
            move_comments: &[],
            final_comment: None,
        }
        .to_pgn();
        assert!(!text.contains("FEN"));
        assert!(text.ends_with("[PlyCount \"0\"]\n\n*\n\n"), "{text}");
    }
}
