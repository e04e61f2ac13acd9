//! The PGN tags the tools judge a game by, and where a game starts.
//!
//! [`GameTags`] keeps what pgnselect and makebook look at: `Result`,
//! `WhiteElo`/`BlackElo`, `Termination` and `TerminationDetails`, `Variant`
//! and `FEN`, and whether
//! any tag was seen at all. [`GameTags::start`] gives the starting position
//! and its ply; [`GameTags::result_reflects_play`] reads the free-text
//! `Termination` tag of real files.
//!
//! * **Variant**: standard chess is a missing tag or one of
//!   [`STANDARD_VARIANTS`] (case-insensitive): `standard`, `chess`,
//!   `normal`, `from position`, … Anything else (`fischerandom`, `atomic`,
//!   …) is another game.
//! * **Termination**: real archives write free text (`adjudication`, `GUI TB
//!   adjudication`, `3-fold rep`, `TCEC draw rule`, `checkmate`, …). The
//!   result reflects the play unless the text names one of
//!   [`UNREPRESENTATIVE_TERMINATIONS`]: a time forfeit, an abandoned,
//!   unterminated or stalled game, a rules infraction or illegal move, a
//!   disconnection, a crash, a withdrawal, an emergency or a death. TCEC
//!   archives write the reason in `TerminationDetails` (`White loses on
//!   time`, `Black's connection stalls`, `illegal move: c7f7`, next to a
//!   generic `Termination` or none at all), so both tags are read the same
//!   way: either one naming such a termination is enough.

use pgn_reader::RawTag;
use shakmaty::{Chess, Color, Position};

use crate::chess::excerpt::excerpt;
use crate::chess::position::parse_fen;
use crate::formats::labeled::GameResult;

/// `Variant` values (lower case, trimmed) that mean standard chess.
pub const STANDARD_VARIANTS: [&str; 7] = [
    "",
    "standard",
    "chess",
    "normal",
    "from position",
    "fromposition",
    "classical",
];

/// Words of a `Termination` tag (lower case) that mean the result does not
/// reflect the play on the board. A tag is unrepresentative when it is one
/// of the single words `time`/`forfeit`, or contains one of these.
pub const UNREPRESENTATIVE_TERMINATIONS: [&str; 13] = [
    "time forfeit",
    "on time",
    "abandon",
    "unterminated",
    "infraction",
    "illegal",
    "stall",
    "disconnect",
    "crash",
    "withdraw",
    "emergency",
    "death",
    "forfeit",
];

/// `Termination` values that are unrepresentative as a whole word only.
const UNREPRESENTATIVE_WORDS: [&str; 2] = ["time", "timeout"];

/// The tags of one game that the tools use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameTags {
    /// Whether any tag was seen.
    pub any_tag: bool,
    /// The `Result` tag, when it states a finished game (`None` for `*`,
    /// a missing tag or anything else).
    pub result: Option<GameResult>,
    /// `WhiteElo`, when a number.
    pub white_elo: Option<u32>,
    /// `BlackElo`, when a number.
    pub black_elo: Option<u32>,
    /// The `Termination` tag.
    pub termination: Option<String>,
    /// The `TerminationDetails` tag (TCEC's reason for the end).
    pub termination_details: Option<String>,
    /// The `Variant` tag.
    pub variant: Option<String>,
    /// The `FEN` tag.
    pub fen: Option<String>,
    /// The name of the first tag whose value is not valid UTF-8.
    pub invalid_utf8_tag: Option<String>,
}

/// Where a game starts: the position and the ply of its first move (0 for
/// the standard start; from the FEN's move number and side otherwise).
#[derive(Debug, Clone)]
pub struct GameStart {
    /// The starting position.
    pub position: Chess,
    /// Its ply number.
    pub ply: u32,
}

/// Why a game has no usable start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// The `Variant` tag names another game.
    #[error("variant {:?} is not standard chess", excerpt(.0))]
    Variant(String),
    /// The `FEN` tag is not a legal position.
    #[error("bad FEN tag: {0}")]
    Fen(String),
}

/// The ply number of `pos` counted from the standard start: 0 for White's
/// first move, from the FEN's move number and side otherwise.
pub fn ply_of(pos: &impl Position) -> u32 {
    2 * (pos.fullmoves().get() - 1) + u32::from(pos.turn() == Color::Black)
}

impl GameTags {
    /// Records one tag.
    pub fn record(&mut self, name: &[u8], value: RawTag<'_>) {
        self.any_tag = true;
        let Ok(text) = std::str::from_utf8(value.as_bytes()) else {
            if self.invalid_utf8_tag.is_none() {
                self.invalid_utf8_tag = Some(String::from_utf8_lossy(name).into_owned());
            }
            return;
        };
        match name {
            b"Result" => self.result = GameResult::parse(text),
            b"WhiteElo" => self.white_elo = text.trim().parse().ok(),
            b"BlackElo" => self.black_elo = text.trim().parse().ok(),
            b"Termination" => self.termination = Some(text.to_string()),
            b"TerminationDetails" => self.termination_details = Some(text.to_string()),
            b"Variant" => self.variant = Some(text.to_string()),
            b"FEN" => self.fen = Some(text.to_string()),
            _ => {}
        }
    }

    /// The Elo of `side`, when stated.
    pub fn elo(&self, side: Color) -> Option<u32> {
        match side {
            Color::White => self.white_elo,
            Color::Black => self.black_elo,
        }
    }

    /// Whether the game is standard chess (see [`STANDARD_VARIANTS`]).
    pub fn is_standard_chess(&self) -> bool {
        self.variant.as_deref().is_none_or(|v| {
            let v = v.trim().to_ascii_lowercase();
            STANDARD_VARIANTS.contains(&v.as_str())
        })
    }

    /// Whether the result reflects the play on the board: true unless the
    /// `Termination` or the `TerminationDetails` tag names one of
    /// [`UNREPRESENTATIVE_TERMINATIONS`] (or is exactly `time` or
    /// `timeout`).
    pub fn result_reflects_play(&self) -> bool {
        let reflects = |text: &str| {
            let t = text.trim().to_ascii_lowercase();
            !UNREPRESENTATIVE_WORDS.contains(&t.as_str())
                && !UNREPRESENTATIVE_TERMINATIONS
                    .iter()
                    .any(|word| t.contains(word))
        };
        self.termination.as_deref().is_none_or(reflects)
            && self.termination_details.as_deref().is_none_or(reflects)
    }

    /// The starting position of a standard-chess game.
    ///
    /// # Errors
    /// [`StartError::Variant`] for another variant, [`StartError::Fen`] when
    /// the `FEN` tag is not a legal position.
    pub fn start(&self) -> Result<GameStart, StartError> {
        if !self.is_standard_chess() {
            return Err(StartError::Variant(
                self.variant.clone().unwrap_or_default(),
            ));
        }
        self.start_position()
    }

    /// The starting position from the `FEN` tag (the standard start without
    /// one), whatever the variant.
    ///
    /// # Errors
    /// [`StartError::Fen`] when the `FEN` tag is not a legal position.
    pub fn start_position(&self) -> Result<GameStart, StartError> {
        let position = match &self.fen {
            None => Chess::default(),
            Some(fen) => parse_fen(fen).map_err(|e| StartError::Fen(e.to_string()))?,
        };
        Ok(GameStart {
            ply: ply_of(&position),
            position,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(list: &[(&str, &str)]) -> GameTags {
        let mut t = GameTags::default();
        for (name, value) in list {
            t.record(name.as_bytes(), RawTag(value.as_bytes()));
        }
        t
    }

    #[test]
    fn real_variant_tags_of_standard_chess() {
        for v in ["Standard", "chess", "normal", "NORMAL", " from Position "] {
            assert!(tags(&[("Variant", v)]).is_standard_chess(), "{v}");
            assert!(tags(&[("Variant", v)]).start().is_ok(), "{v}");
        }
        for v in ["fischerandom", "Chess960", "atomic", "crazyhouse"] {
            assert!(!tags(&[("Variant", v)]).is_standard_chess(), "{v}");
            assert!(matches!(
                tags(&[("Variant", v)]).start(),
                Err(StartError::Variant(_))
            ));
        }
    }

    #[test]
    fn free_text_terminations_of_real_archives() {
        for kept in [
            "normal",
            "adjudication",
            "GUI adjudication",
            "GUI TB adjudication",
            "3-fold rep",
            "50-move rule",
            "insufficient material",
            "checkmate",
            "resign",
            "TCEC Draw Rule",
            "User adjudication",
            "GUI TB Mate in 23",
            "manual adjudication",
            "",
        ] {
            assert!(
                tags(&[("Termination", kept)]).result_reflects_play(),
                "{kept}"
            );
        }
        // TCEC's TerminationDetails of games whose result is the play's.
        for kept in [
            "TCEC draw rule",
            "TCEC win rule",
            "SyzygyTB",
            "TB position",
            "White mates",
            "Black mates",
            "3-Fold repetition",
            "Fifty moves rule",
            "Insufficient material",
            "Stalemate",
            "Black resigns",
            "Manual adjudication",
        ] {
            for termination in [None, Some("adjudication")] {
                let mut list = vec![("TerminationDetails", kept)];
                list.extend(termination.map(|t| ("Termination", t)));
                assert!(tags(&list).result_reflects_play(), "{kept}");
            }
        }
        // ... and of games it is not: with a generic Termination or none.
        for dropped in [
            "White loses on time",
            "Black loses on time",
            "White disconnects",
            "Black's connection stalls",
            "White's connection stalls",
            "illegal move: c7f7",
        ] {
            for termination in [None, Some("adjudication"), Some("")] {
                let mut list = vec![("TerminationDetails", dropped)];
                list.extend(termination.map(|t| ("Termination", t)));
                assert!(!tags(&list).result_reflects_play(), "{dropped}");
            }
        }
        for dropped in [
            "time forfeit",
            "Time forfeit",
            "time",
            "White loses on time",
            "abandoned",
            "unterminated",
            "rules infraction",
            "illegal move",
            "emergency",
            "death",
            "stalled connection",
            "Black disconnects",
            "engine crash",
            "User adjudication - GUI crash",
            "Chiron Stage 3 withdrawal",
        ] {
            assert!(
                !tags(&[("Termination", dropped)]).result_reflects_play(),
                "{dropped}"
            );
        }
        assert!(GameTags::default().result_reflects_play());
    }

    #[test]
    fn results_elo_and_start() {
        let t = tags(&[
            ("Result", "1-0"),
            ("WhiteElo", " 2700 "),
            ("BlackElo", "?"),
            ("FEN", "4k3/8/8/8/8/8/8/4K2R b K - 0 30"),
        ]);
        assert_eq!(t.result, Some(GameResult::WhiteWin));
        assert_eq!(t.elo(Color::White), Some(2700));
        assert_eq!(t.elo(Color::Black), None);
        assert_eq!(t.start().unwrap().ply, 59);
        assert_eq!(tags(&[("Result", "*")]).result, None);
        assert_eq!(
            tags(&[("Result", "1/2-1/2")]).result,
            Some(GameResult::Draw)
        );
        assert!(matches!(
            tags(&[("FEN", "8/8/8/8 w - - 0 1")]).start(),
            Err(StartError::Fen(_))
        ));
        let bad = {
            let mut t = GameTags::default();
            t.record(b"Site", RawTag(b"\xff"));
            t
        };
        assert_eq!(bad.invalid_utf8_tag.as_deref(), Some("Site"));
    }
}
