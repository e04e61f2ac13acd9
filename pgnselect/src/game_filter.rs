//! The game-level filters: which games pgnselect uses, judged by their
//! tags ([`GameTags`], shared with makebook) before the moves are read, and
//! by their length after.
//!
//! A rejected game is counted under its [`SkipReason`]. The `Termination`
//! tag is free text in real files; a game is dropped only when it names a
//! termination that means the result does not reflect the play (see
//! [`engine::formats::pgn_tags::UNREPRESENTATIVE_TERMINATIONS`]).

use engine::formats::labeled::GameResult;
use engine::formats::pgn_tags::GameTags;

/// Why a well-formed game was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// No `Result` tag, or `*`.
    NoResult,
    /// A `Termination` tag saying the result does not reflect the play.
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
    pub fn admit(&self, tags: &GameTags) -> Result<GameResult, SkipReason> {
        if !tags.is_standard_chess() {
            return Err(SkipReason::NotStandardChess);
        }
        let result = tags.result.ok_or(SkipReason::NoResult)?;
        if !tags.result_reflects_play() {
            return Err(SkipReason::AbnormalTermination);
        }
        if let Some(min) = self.min_elo {
            let rated = |elo: Option<u32>| elo.is_some_and(|e| e >= min);
            if !rated(tags.white_elo) || !rated(tags.black_elo) {
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
    use pgn_reader::RawTag;

    fn tags(list: &[(&str, &str)]) -> GameTags {
        let mut t = GameTags::default();
        for (name, value) in list {
            t.record(name.as_bytes(), RawTag(value.as_bytes()));
        }
        t
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
        assert_eq!(filter.admit(&tags(&good)), Ok(GameResult::WhiteWin));
        let mut list = good.to_vec();
        list.push(("Termination", "Time forfeit"));
        assert_eq!(
            filter.admit(&tags(&list)),
            Err(SkipReason::AbnormalTermination)
        );
        list.pop();
        for kept in ["Normal", "GUI adjudication", "3-fold rep", "TCEC Draw Rule"] {
            list.push(("Termination", kept));
            assert!(filter.admit(&tags(&list)).is_ok(), "{kept}");
            list.pop();
        }
        list.push(("Variant", "normal"));
        assert!(filter.admit(&tags(&list)).is_ok());
        assert_eq!(
            filter.admit(&tags(&[("Result", "*")])),
            Err(SkipReason::NoResult)
        );
        assert_eq!(
            filter.admit(&tags(&[("Result", "1-0"), ("WhiteElo", "2100")])),
            Err(SkipReason::BelowMinElo)
        );
        assert_eq!(
            filter.admit(&tags(&[("Result", "1-0"), ("Variant", "Atomic")])),
            Err(SkipReason::NotStandardChess)
        );
    }
}
