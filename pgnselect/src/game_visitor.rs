//! Reading one game: the pgn-reader visitor that plays the main line and
//! collects the sampled positions.
//!
//! [`SamplingVisitor`] judges a game by its tags first (see
//! [`crate::game_filter`]) and skips the movetext of games it will not use.
//! For the others it plays every move of the main line (variations are
//! skipped), so an illegal or ambiguous move anywhere makes the game
//! malformed, and remembers the positions at the sampled plies as
//! [`Candidate`]s, with (for `--comment-scores`) the score in the comment
//! of the move played from each and whether that move captured or
//! promoted. What the reader lets through (a game cut short, stray
//! tokens, a comment running into the next game) is checked on the game's
//! text by [`engine::formats::pgn_games::read_games`]; the caller takes the
//! candidates with [`SamplingVisitor::take_candidates`] only once the game
//! passed.

use std::ops::ControlFlow;

use engine::chess::position::key;
use engine::chess::san::resolve_san;
use engine::formats::comment_score::{CommentScore, parse_comment_score};
use engine::formats::labeled::{Castled, GameResult};
use engine::formats::pgn_games::GameVisitor;
use engine::formats::pgn_tags::GameTags;
use pgn_reader::{RawComment, RawTag, SanPlus, Skip, Visitor};
use shakmaty::{Chess, Position};

use crate::game_filter::{GameFilter, SkipReason};
use crate::sampling::{GameRng, SamplingRules, game_rng};

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
    /// The score in the comment of the move played from it (read only with
    /// [`VisitorSettings::comment_scores`]).
    pub comment_score: Option<CommentScore>,
    /// Whether the move played from it captured or promoted.
    pub tactical_move: bool,
}

/// The state of the game being read.
#[derive(Debug)]
pub struct GameInProgress {
    position: Chess,
    ply: u32,
    next_candidate: u32,
    plies_played: u32,
    result: GameResult,
    any_tag: bool,
    castled: Castled,
    /// The index of the candidate the last move was played from, if it was
    /// played from one: comments after the move score it.
    move_from_candidate: Option<usize>,
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
    /// Whether to read the score in the comment of the move played from
    /// each candidate (`--comment-scores`).
    pub comment_scores: bool,
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
        }
    }

    /// Names the file of the games that follow: with each game's offset in
    /// it, it seeds the game's random numbers.
    pub fn set_file(&mut self, file_index: usize) {
        self.file_index = file_index;
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
                comment_score: None,
                tactical_move: false,
            });
        }
        game.next_candidate = rules.next_candidate(game.ply, &mut self.rng);
    }
}

impl GameVisitor for SamplingVisitor {
    fn begin_game(&mut self, stream_offset: u64) {
        self.game_offset = stream_offset;
    }
}

impl Visitor for SamplingVisitor {
    type Tags = GameTags;
    type Movetext = GameInProgress;
    type Output = GameVerdict;

    fn begin_tags(&mut self) -> ControlFlow<GameVerdict, GameTags> {
        ControlFlow::Continue(GameTags::default())
    }

    fn tag(
        &mut self,
        tags: &mut GameTags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<GameVerdict> {
        tags.record(name, value);
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, header: GameTags) -> ControlFlow<GameVerdict, GameInProgress> {
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
        let start = match header.start_position() {
            Ok(start) => start,
            Err(e) => return ControlFlow::Break(GameVerdict::Malformed(e.to_string())),
        };
        self.rng = game_rng(self.settings.seed, self.file_index, self.game_offset);
        let mut game = GameInProgress {
            next_candidate: self.settings.rules.first_candidate(&mut self.rng),
            position: start.position,
            ply: start.ply,
            plies_played: 0,
            result,
            any_tag,
            castled: Castled::default(),
            move_from_candidate: None,
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
        // The candidate this move is played from (always the last one).
        game.move_from_candidate = match self.candidates.last_mut() {
            Some(candidate) if candidate.ply == game.ply => {
                candidate.tactical_move = m.is_capture() || m.is_promotion();
                Some(self.candidates.len() - 1)
            }
            _ => None,
        };
        game.castled.record(&game.position, m);
        game.position.play_unchecked(m);
        game.ply += 1;
        game.plies_played += 1;
        self.consider(game);
        ControlFlow::Continue(())
    }

    /// With `comment_scores`, the first score among the comments after a
    /// move labels the candidate that move was played from.
    fn comment(
        &mut self,
        game: &mut GameInProgress,
        comment: RawComment<'_>,
    ) -> ControlFlow<GameVerdict> {
        if self.settings.comment_scores
            && let Some(index) = game.move_from_candidate
            && let Some(candidate) = self.candidates.get_mut(index)
            && candidate.comment_score.is_none()
        {
            candidate.comment_score = parse_comment_score(comment.as_bytes());
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _game: &mut GameInProgress) -> ControlFlow<GameVerdict, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, game: GameInProgress) -> GameVerdict {
        if !game.any_tag {
            return if game.plies_played == 0 {
                GameVerdict::Malformed("text that is neither tags nor moves".to_string())
            } else {
                GameVerdict::Skipped(SkipReason::NoResult)
            };
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
