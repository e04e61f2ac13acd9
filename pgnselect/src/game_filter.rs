//! The tags a game is judged by and the game-level filters.
//!
//! [`GameHeader`] keeps the tags pgnselect looks at (result, ratings,
//! termination, variant, starting FEN). [`GameFilter`] decides from them,
//! before the moves are read, whether a game is used, and after the moves
//! whether it was long enough; a rejected game is counted under its
//! [`SkipReason`]. A `Termination` tag is normal when it is absent, `normal`
//! or `adjudication`; anything else (`time forfeit`, `abandoned`, `rules
//! infraction`, `unterminated`, `emergency`, `death`) means the result does
//! not reflect the play on the board.

use engine::chess::position::parse_fen;
use engine::formats::labeled::GameResult;
use pgn_reader::RawTag;
use shakmaty::Chess;

/// `Termination` values whose result reflects the play.
const NORMAL_TERMINATIONS: [&str; 2] = ["normal", "adjudication"];

/// `Variant` values that mean standard chess.
const STANDARD_VARIANTS: [&str; 4] = ["", "standard", "chess", "from position"];

/// The tags of one game that pgnselect uses.
#[derive(Debug, Clone, Default)]
pub struct GameHeader {
    /// Whether any tag was seen.
    pub any_tag: bool,
    /// The `Result` tag, when it states a finished game.
    pub result: Option<GameResult>,
    /// `WhiteElo`, when a number.
    pub white_elo: Option<u32>,
    /// `BlackElo`, when a number.
    pub black_elo: Option<u32>,
    /// The `Termination` tag.
    pub termination: Option<String>,
    /// The `Variant` tag.
    pub variant: Option<String>,
    /// The `FEN` tag.
    pub fen: Option<String>,
    /// The name of the first tag whose value is not valid UTF-8.
    pub invalid_utf8_tag: Option<String>,
}

impl GameHeader {
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
            b"Variant" => self.variant = Some(text.to_string()),
            b"FEN" => self.fen = Some(text.to_string()),
            _ => {}
        }
    }

    /// The starting position.
    ///
    /// # Errors
    /// A description when the `FEN` tag is not a legal position.
    pub fn start_position(&self) -> Result<Chess, String> {
        match &self.fen {
            None => Ok(Chess::default()),
            Some(fen) => parse_fen(fen).map_err(|e| format!("bad FEN tag: {e}")),
        }
    }

    fn is_standard_chess(&self) -> bool {
        self.variant
            .as_deref()
            .is_none_or(|v| STANDARD_VARIANTS.contains(&v.trim().to_ascii_lowercase().as_str()))
    }

    fn terminated_normally(&self) -> bool {
        self.termination
            .as_deref()
            .is_none_or(|t| NORMAL_TERMINATIONS.contains(&t.trim().to_ascii_lowercase().as_str()))
    }
}

/// Why a well-formed game was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// No `Result` tag, or `*`.
    NoResult,
    /// A `Termination` tag that is not normal.
    AbnormalTermination,
    /// A player below `--min-elo`, or a rating missing.
    BelowMinElo,
    /// Fewer plies than `--min-game-plies`.
    TooShort,
    /// A variant other than standard chess.
    NotStandardChess,
}

/// The game-level filters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GameFilter {
    /// Both players must be rated at least this much.
    pub min_elo: Option<u32>,
    /// Games with fewer plies are skipped.
    pub min_game_plies: u32,
}

impl GameFilter {
    /// Judges a game by its tags; `Ok` carries the result label.
    ///
    /// # Errors
    /// The reason the game is skipped.
    pub fn admit(&self, header: &GameHeader) -> Result<GameResult, SkipReason> {
        if !header.is_standard_chess() {
            return Err(SkipReason::NotStandardChess);
        }
        let result = header.result.ok_or(SkipReason::NoResult)?;
        if !header.terminated_normally() {
            return Err(SkipReason::AbnormalTermination);
        }
        if let Some(min) = self.min_elo {
            let rated = |elo: Option<u32>| elo.is_some_and(|e| e >= min);
            if !rated(header.white_elo) || !rated(header.black_elo) {
                return Err(SkipReason::BelowMinElo);
            }
        }
        Ok(result)
    }

    /// Judges a game by its length in plies.
    ///
    /// # Errors
    /// [`SkipReason::TooShort`].
    pub fn admit_length(&self, plies: u32) -> Result<(), SkipReason> {
        if plies < self.min_game_plies {
            Err(SkipReason::TooShort)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(tags: &[(&str, &str)]) -> GameHeader {
        let mut h = GameHeader::default();
        for (name, value) in tags {
            h.record(name.as_bytes(), RawTag(value.as_bytes()));
        }
        h
    }

    #[test]
    fn filters_by_result_termination_elo_and_variant() {
        let filter = GameFilter {
            min_elo: Some(2000),
            min_game_plies: 0,
        };
        let good = [
            ("Result", "1-0"),
            ("WhiteElo", "2100"),
            ("BlackElo", "2000"),
        ];
        assert_eq!(filter.admit(&header(&good)), Ok(GameResult::WhiteWin));
        let mut tags = good.to_vec();
        tags.push(("Termination", "Time forfeit"));
        assert_eq!(
            filter.admit(&header(&tags)),
            Err(SkipReason::AbnormalTermination)
        );
        tags.pop();
        tags.push(("Termination", "Normal"));
        assert!(filter.admit(&header(&tags)).is_ok());
        assert_eq!(
            filter.admit(&header(&[("Result", "*")])),
            Err(SkipReason::NoResult)
        );
        assert_eq!(
            filter.admit(&header(&[("Result", "1-0"), ("WhiteElo", "2100")])),
            Err(SkipReason::BelowMinElo)
        );
        assert_eq!(
            filter.admit(&header(&[("Result", "1-0"), ("Variant", "Atomic")])),
            Err(SkipReason::NotStandardChess)
        );
    }
}
