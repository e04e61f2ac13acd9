//! Reading one game: the pgn-reader visitor that plays the main line and
//! collects the sampled positions.
//!
//! [`SamplingVisitor`] judges a game by its tags first (see
//! [`crate::game_filter`]) and skips the movetext of games it will not use.
//! For the others it plays every move of the main line (variations are
//! skipped), so an illegal or ambiguous move anywhere makes the game
//! malformed, and remembers the positions at the sampled plies as
//! [`Candidate`]s. A game must end with a termination marker (`1-0`, `0-1`,
//! `1/2-1/2`, `*`); a game without one was cut short and is malformed.
//! A comment that runs into the next game (a `{` without its `}`) makes the
//! game malformed and asks the caller to start reading again at the next
//! game. The candidates are kept only once the whole game has been read;
//! the caller then takes them with [`SamplingVisitor::take_candidates`].

use std::ops::ControlFlow;

use engine::chess::position::key;
use engine::formats::labeled::{Castled, GameResult};
use pgn_reader::{Outcome, RawComment, RawTag, SanPlus, Skip, Visitor};
use shakmaty::{Chess, Position};

use crate::game_filter::{GameFilter, GameHeader, SkipReason};
use crate::sampling::{GameRng, SamplingRules, game_rng, ply_of};
use crate::san_move::resolve_san;

/// What the visitor made of one game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GameVerdict {
    /// The game was read completely; its candidates carry this result.
    Used(GameResult),
    /// The game is well formed but filtered out.
    Skipped(SkipReason),
    /// The game is broken; the message says how.
    Malformed(String),
}

/// A sampled position of the game being read.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The position.
    pub position: Chess,
    /// How many keys of the game's key history (see
    /// [`SamplingVisitor::take_candidates`]) precede it.
    pub history_len: usize,
    /// Its ply.
    pub ply: u32,
    /// Whether the game went on from it (so it has a legal move).
    pub has_successor: bool,
    /// The side each colour castled to before it, if it did.
    pub castled: Castled,
}

/// The state of the game being read.
#[derive(Debug)]
pub struct GameInProgress {
    position: Chess,
    ply: u32,
    next_candidate: u32,
    plies_played: u32,
    result: GameResult,
    terminated: bool,
    any_tag: bool,
    castled: Castled,
}

/// The settings a visitor needs.
#[derive(Debug, Clone, Copy)]
pub struct VisitorSettings {
    /// Which plies are sampled.
    pub rules: SamplingRules,
    /// Which games are used.
    pub filter: GameFilter,
    /// Whether to keep the keys of every position (for the search).
    pub keep_history: bool,
    /// The run's seed.
    pub seed: u64,
}

/// The visitor; one per worker, reused from game to game.
#[derive(Debug)]
pub struct SamplingVisitor {
    settings: VisitorSettings,
    file_index: usize,
    game_offset: u64,
    rng: GameRng,
    candidates: Vec<Candidate>,
    history: Vec<u64>,
    final_position: Chess,
    unterminated_comment: bool,
}

/// What is wrong with a game whose comment runs into the next game.
pub const UNTERMINATED_COMMENT: &str = "unterminated comment: a '{' runs into the next game";

/// Offset of the first game start in `bytes` at or after `from`: a `[`
/// opening a line that follows a blank line.
pub fn next_game_start(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(found) = bytes.get(at..)?.iter().position(|&b| b == b'[') {
        at += found;
        let before = &bytes[..at];
        if before.ends_with(b"\n\n") || before.ends_with(b"\n\r\n") {
            return Some(at);
        }
        at += 1;
    }
    None
}

impl SamplingVisitor {
    /// A visitor with the given settings.
    pub fn new(settings: VisitorSettings) -> SamplingVisitor {
        SamplingVisitor {
            settings,
            file_index: 0,
            game_offset: 0,
            rng: game_rng(settings.seed, 0, 0),
            candidates: Vec::new(),
            history: Vec::new(),
            final_position: Chess::default(),
            unterminated_comment: false,
        }
    }

    /// Whether the last game was cut off by a comment running into the
    /// next game (a `{` without its `}`): the reader then swallowed the
    /// games that follow, and reading must start again at the next game.
    pub fn take_unterminated_comment(&mut self) -> bool {
        std::mem::take(&mut self.unterminated_comment)
    }

    /// Names the next game: its file and the offset of its first byte,
    /// which seed its random numbers.
    pub fn start_game(&mut self, file_index: usize, game_offset: u64) {
        self.file_index = file_index;
        self.game_offset = game_offset;
    }

    /// The candidates of the last game read (valid after
    /// [`GameVerdict::Used`]), the keys of the game's positions in order
    /// (when kept), and the game's generator for further draws.
    pub fn take_candidates(&mut self) -> (Vec<Candidate>, &[u64], &mut GameRng) {
        (
            std::mem::take(&mut self.candidates),
            &self.history,
            &mut self.rng,
        )
    }

    /// The final position of the last game read (valid after
    /// [`GameVerdict::Used`]) and the keys of the positions before it (when
    /// kept).
    pub fn final_position(&self) -> (&Chess, &[u64]) {
        (&self.final_position, &self.history)
    }

    /// Gives back an emptied candidate list so its memory is reused.
    pub fn return_buffer(&mut self, mut buffer: Vec<Candidate>) {
        buffer.clear();
        self.candidates = buffer;
    }

    /// Samples the current position if its ply is due.
    fn consider(&mut self, game: &mut GameInProgress) {
        if game.ply < game.next_candidate {
            return;
        }
        let rules = self.settings.rules;
        if rules.in_window(game.ply) {
            self.candidates.push(Candidate {
                position: game.position.clone(),
                history_len: self.history.len(),
                ply: game.ply,
                has_successor: false,
                castled: game.castled,
            });
        }
        game.next_candidate = rules.next_candidate(game.ply, &mut self.rng);
    }
}

impl Visitor for SamplingVisitor {
    type Tags = GameHeader;
    type Movetext = GameInProgress;
    type Output = GameVerdict;

    fn begin_tags(&mut self) -> ControlFlow<GameVerdict, GameHeader> {
        ControlFlow::Continue(GameHeader::default())
    }

    fn tag(
        &mut self,
        tags: &mut GameHeader,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<GameVerdict> {
        tags.record(name, value);
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, header: GameHeader) -> ControlFlow<GameVerdict, GameInProgress> {
        self.candidates.clear();
        self.history.clear();
        if let Some(tag) = &header.invalid_utf8_tag {
            return ControlFlow::Break(GameVerdict::Malformed(format!(
                "tag {tag} is not valid UTF-8"
            )));
        }
        let any_tag = header.any_tag;
        let result = if any_tag {
            match self.settings.filter.admit(&header) {
                Ok(result) => result,
                Err(reason) => return ControlFlow::Break(GameVerdict::Skipped(reason)),
            }
        } else {
            // Decided at the end: text without tags is malformed, or at
            // least has no result.
            GameResult::Draw
        };
        let position = match header.start_position() {
            Ok(position) => position,
            Err(message) => return ControlFlow::Break(GameVerdict::Malformed(message)),
        };
        self.rng = game_rng(self.settings.seed, self.file_index, self.game_offset);
        let ply = ply_of(&position);
        let mut game = GameInProgress {
            next_candidate: self.settings.rules.first_candidate(&mut self.rng),
            position,
            ply,
            plies_played: 0,
            result,
            terminated: false,
            any_tag,
            castled: Castled::default(),
        };
        self.consider(&mut game);
        ControlFlow::Continue(game)
    }

    fn san(&mut self, game: &mut GameInProgress, san_plus: SanPlus) -> ControlFlow<GameVerdict> {
        let m = match resolve_san(&game.position, san_plus.san) {
            Ok(m) => m,
            Err(e) => {
                let number = game.ply / 2 + 1;
                let dots = if game.ply.is_multiple_of(2) {
                    "."
                } else {
                    "..."
                };
                return ControlFlow::Break(GameVerdict::Malformed(format!(
                    "{e} {number}{dots}{san_plus}"
                )));
            }
        };
        if self.settings.keep_history {
            self.history.push(key(&game.position));
        }
        game.castled.record(&game.position, m);
        game.position.play_unchecked(m);
        game.ply += 1;
        game.plies_played += 1;
        self.consider(game);
        ControlFlow::Continue(())
    }

    fn comment(
        &mut self,
        _game: &mut GameInProgress,
        comment: RawComment<'_>,
    ) -> ControlFlow<GameVerdict> {
        if next_game_start(comment.as_bytes(), 0).is_some() {
            self.unterminated_comment = true;
            return ControlFlow::Break(GameVerdict::Malformed(UNTERMINATED_COMMENT.to_string()));
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _game: &mut GameInProgress) -> ControlFlow<GameVerdict, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn outcome(
        &mut self,
        game: &mut GameInProgress,
        _outcome: Outcome,
    ) -> ControlFlow<GameVerdict> {
        game.terminated = true;
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, game: GameInProgress) -> GameVerdict {
        if !game.any_tag {
            return if game.plies_played == 0 {
                GameVerdict::Malformed("text that is neither tags nor moves".to_string())
            } else {
                GameVerdict::Skipped(SkipReason::NoResult)
            };
        }
        if !game.terminated {
            return GameVerdict::Malformed(
                "truncated game: the movetext ends without a result marker".to_string(),
            );
        }
        if let Err(reason) = self.settings.filter.admit_length(game.plies_played) {
            return GameVerdict::Skipped(reason);
        }
        for candidate in &mut self.candidates {
            candidate.has_successor = candidate.ply < game.ply;
        }
        self.final_position = game.position;
        GameVerdict::Used(game.result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_starts_follow_a_blank_line() {
        let text = b"[Event \"a\"]\n\n1. e4 {[%clk 0:03:00]} *\n\n[Event \"b\"]\r\n\r\n[x";
        let second = next_game_start(text, 1).unwrap();
        assert!(text[second..].starts_with(b"[Event \"b\"]"));
        assert_eq!(next_game_start(text, second + 1), Some(text.len() - 2));
        assert_eq!(next_game_start(b"{[%clk 0:03:00]}", 0), None);
    }
}
