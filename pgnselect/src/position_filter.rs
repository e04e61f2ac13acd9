//! What happens to a sampled position before it is written: the comment
//! score, the random move, the piece-count floor, the quietness test and the
//! search filter.
//!
//! [`PositionFilter`] holds the settings and [`PositionJudge`] applies them
//! with the per-thread state (a [`Searcher`] when a mode needs the engine).
//! First, with `--comment-scores` ([`CommentScores`]), a position is labeled
//! with the score of the comment after the move played from it, or dropped.
//! Then, in order: a position without legal moves (mate, stalemate) is dropped;
//! `--random-move` replaces the position by the one after a uniformly drawn
//! legal move; `--min-pieces` drops sparse positions; `--quiet=check` drops
//! positions where the side to move is in check or has a capture (or
//! promotion) that wins material by static exchange evaluation, while
//! `--quiet=resolve` replaces the position by the quiet leaf of the engine's
//! quiescence principal variation; finally `--max-score` searches to
//! `--search-depth` and drops positions whose score is beyond the bound
//! (with [`Searcher::score_within`], which searches with the bound as root
//! window instead of finding the exact score).
//! The judge also runs the one game-level filter that needs the engine,
//! `--result-check` ([`ResultCheck`]), on each game's final position.
//! The searcher's tables are cleared at the start of every chunk of input
//! ([`PositionJudge::reset`]), so results do not depend on which thread
//! handled which chunk.

use std::sync::Arc;

use clap::ValueEnum;
use engine::chess::position::piece_count;
use engine::eval::Params;
use engine::formats::comment_score::CommentScore;
use engine::formats::labeled::{Castled, GameResult};
use engine::search::movepick::see_ge;
use engine::search::{SearchLimits, Searcher};
use rand::Rng;
use shakmaty::{Chess, Color, Position};

use crate::sampling::GameRng;

/// Transposition table of each worker's searcher, in megabytes: depth-limited
/// searches of a few hundred nodes need no more.
const SEARCHER_TABLE_MEGABYTES: usize = 1;

/// A capture must win at least this much (centipawns, by SEE) to make a
/// position not quiet.
const WINNING_CAPTURE_MARGIN: i32 = 1;

/// How `--quiet` treats tactical positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum QuietMode {
    /// Drop positions in check or with a winning capture by SEE.
    Check,
    /// Replace positions by the quiet leaf of the quiescence search.
    Resolve,
}

/// The search filter (`--max-score`, `--search-depth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScoreBound {
    /// Largest absolute score kept, centipawns.
    pub max_score: i32,
    /// Search depth in plies.
    pub depth: u32,
}

/// The game-result check (`--result-check`, `--search-depth`): a game is
/// dropped when the search score of its final position contradicts its
/// recorded result by more than `margin` centipawns (White's view: a
/// `1-0` whose final position scores below `-margin`, a `0-1` above
/// `margin`, a draw beyond `±margin`). Checkmate and stalemate are scored
/// by the rules (mate: lost for the side to move; stalemate: 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultCheck {
    /// Largest tolerated contradiction, centipawns.
    pub margin: i32,
    /// Search depth in plies.
    pub depth: u32,
}

impl ResultCheck {
    /// Whether `white_score` (centipawns, White's view) contradicts
    /// `result` by more than the margin.
    pub fn contradicts(&self, white_score: i32, result: GameResult) -> bool {
        match result {
            GameResult::WhiteWin => white_score < -self.margin,
            GameResult::BlackWin => white_score > self.margin,
            GameResult::Draw => white_score.abs() > self.margin,
        }
    }
}

/// `--comment-scores`: positions are labeled with the score in the comment
/// of the move played from them. A position is dropped when that comment
/// has no score, when the score is a mate, when it is beyond
/// `max_score`, or when the move captured or promoted: the engine's score
/// then values a tactic in progress, which a static evaluation cannot see
/// (the labeler drops such positions for the same reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommentScores {
    /// Largest absolute score kept, centipawns (side to move).
    pub max_score: i32,
}

impl CommentScores {
    /// The score (centipawns, side to move) that labels a position, White
    /// to move when `white_to_move`, whose move's comment held `score` and
    /// which `tactical_move` says captured or promoted.
    ///
    /// # Errors
    /// Why the position is dropped.
    pub fn label(
        &self,
        score: Option<CommentScore>,
        white_to_move: bool,
        tactical_move: bool,
    ) -> Result<i32, DropReason> {
        let score = score.ok_or(DropReason::NoCommentScore)?;
        let cp = score
            .for_mover(white_to_move)
            .ok_or(DropReason::MateCommentScore)?;
        if tactical_move {
            return Err(DropReason::TacticalMove);
        }
        if cp.abs() > self.max_score {
            return Err(DropReason::CommentScoreBeyondBound);
        }
        Ok(cp)
    }
}

/// The position-level settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PositionFilter {
    /// Play one random legal move from each sampled position.
    pub random_move: bool,
    /// Drop positions with fewer pieces (kings and pawns included).
    pub min_pieces: u32,
    /// The quietness treatment, if any.
    pub quiet: Option<QuietMode>,
    /// The search filter, if any.
    pub score_bound: Option<ScoreBound>,
    /// The game-result check, if any (a game-level filter, here because it
    /// needs the same searcher).
    pub result_check: Option<ResultCheck>,
    /// Labels from move comments, if asked for.
    pub comment_scores: Option<CommentScores>,
}

impl PositionFilter {
    /// Whether the engine's search is needed.
    pub fn needs_searcher(&self) -> bool {
        self.score_bound.is_some()
            || self.result_check.is_some()
            || self.quiet == Some(QuietMode::Resolve)
    }

    /// Whether the game's position keys are needed (for repetition
    /// detection in the search).
    pub fn needs_history(&self) -> bool {
        self.score_bound.is_some() || self.result_check.is_some()
    }
}

/// Why a sampled position was not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// No legal move (mate or stalemate).
    GameOver,
    /// Fewer pieces than `--min-pieces`.
    FewPieces,
    /// In check or with a winning capture (`--quiet=check`).
    NotQuiet,
    /// Search score beyond `--max-score`.
    ScoreBeyondBound,
    /// No score in the comment of the move played from it
    /// (`--comment-scores`).
    NoCommentScore,
    /// A mate score in that comment.
    MateCommentScore,
    /// The move played from it captured or promoted.
    TacticalMove,
    /// The comment's score beyond `--max-comment-score`.
    CommentScoreBeyondBound,
}

/// Whether the side to move is not in check and has no capture or
/// promotion winning material by static exchange evaluation.
pub fn is_quiet(pos: &Chess) -> bool {
    if pos.is_check() {
        return false;
    }
    !pos.legal_moves()
        .iter()
        .any(|&m| (m.is_capture() || m.is_promotion()) && see_ge(pos, m, WINNING_CAPTURE_MARGIN))
}

/// Applies a [`PositionFilter`] with one thread's state.
pub struct PositionJudge {
    filter: PositionFilter,
    searcher: Option<Searcher>,
    searches: u64,
    search_nodes: u64,
}

impl PositionJudge {
    /// A judge for one worker thread.
    pub fn new(filter: PositionFilter) -> PositionJudge {
        let searcher = filter
            .needs_searcher()
            .then(|| Searcher::new(Arc::new(Params::defaults()), SEARCHER_TABLE_MEGABYTES));
        PositionJudge {
            filter,
            searcher,
            searches: 0,
            search_nodes: 0,
        }
    }

    /// Forgets what the searcher learnt (called at each chunk start).
    pub fn reset(&mut self) {
        if let Some(searcher) = &mut self.searcher {
            searcher.new_game();
        }
    }

    /// The `--comment-scores` rule, if any.
    pub fn comment_scores(&self) -> Option<CommentScores> {
        self.filter.comment_scores
    }

    /// Number of searches (`--max-score`, `--result-check`) run so far.
    pub fn searches(&self) -> u64 {
        self.searches
    }

    /// Nodes visited by the `--max-score` searches so far.
    pub fn search_nodes(&self) -> u64 {
        self.search_nodes
    }

    /// Whether the search score of a game's final position `last` (reached
    /// after the positions whose keys are `history`) contradicts the
    /// game's `result` (see [`ResultCheck`]); false without the check.
    pub fn result_contradicted(
        &mut self,
        last: &Chess,
        history: &[u64],
        result: GameResult,
    ) -> bool {
        let Some(check) = self.filter.result_check else {
            return false;
        };
        let searcher = self
            .searcher
            .as_mut()
            .expect("--result-check needs a searcher");
        let found = searcher.search(last, history, &SearchLimits::depth(check.depth), |_| {});
        self.searches += 1;
        self.search_nodes += found.nodes;
        let white_score = match last.turn() {
            Color::White => found.score,
            Color::Black => -found.score,
        };
        check.contradicts(white_score, result)
    }

    /// Turns a sampled position into the position to write, or says why
    /// there is none. `history` holds the keys of the game's positions
    /// before `pos` (empty unless [`PositionFilter::needs_history`]);
    /// `has_legal_move` says the game went on from `pos`, which spares the
    /// move generation when nothing else needs it. `castled` (the side each
    /// colour castled to before `pos`) is updated when the random move
    /// castles.
    ///
    /// # Errors
    /// The reason the position is dropped.
    pub fn judge(
        &mut self,
        mut pos: Chess,
        has_legal_move: bool,
        castled: &mut Castled,
        history: &mut Vec<u64>,
        rng: &mut GameRng,
    ) -> Result<Chess, DropReason> {
        if !has_legal_move && pos.legal_moves().is_empty() {
            return Err(DropReason::GameOver);
        }
        if self.filter.random_move {
            let moves = pos.legal_moves();
            let m = moves[rng.random_range(0..moves.len())];
            if self.filter.needs_history() {
                history.push(engine::chess::position::key(&pos));
            }
            castled.record(&pos, m);
            pos.play_unchecked(m);
            if pos.legal_moves().is_empty() {
                return Err(DropReason::GameOver);
            }
        }
        if piece_count(&pos) < self.filter.min_pieces {
            return Err(DropReason::FewPieces);
        }
        match self.filter.quiet {
            None => {}
            Some(QuietMode::Check) if !is_quiet(&pos) => return Err(DropReason::NotQuiet),
            Some(QuietMode::Check) => {}
            Some(QuietMode::Resolve) => {
                let searcher = self.searcher.as_mut().expect("resolve needs a searcher");
                let (leaf, _) = searcher.resolve(&pos);
                if leaf != pos {
                    // The captures of the line make repetitions impossible.
                    history.clear();
                    pos = leaf;
                }
                if pos.legal_moves().is_empty() {
                    return Err(DropReason::GameOver);
                }
            }
        }
        if let Some(bound) = self.filter.score_bound {
            let searcher = self
                .searcher
                .as_mut()
                .expect("--max-score needs a searcher");
            self.searches += 1;
            let test = searcher.score_within(&pos, history, bound.depth, bound.max_score);
            self.search_nodes += test.nodes;
            if !test.within {
                return Err(DropReason::ScoreBeyondBound);
            }
        }
        Ok(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::chess::position::parse_fen;

    #[test]
    fn comment_scores_label_or_drop() {
        let rule = CommentScores { max_score: 300 };
        assert_eq!(
            rule.label(Some(CommentScore::Mover(-40)), false, false),
            Ok(-40)
        );
        assert_eq!(
            rule.label(Some(CommentScore::White(-40)), false, false),
            Ok(40)
        );
        assert_eq!(
            rule.label(Some(CommentScore::White(25)), true, false),
            Ok(25)
        );
        assert_eq!(
            rule.label(None, true, false),
            Err(DropReason::NoCommentScore)
        );
        assert_eq!(
            rule.label(Some(CommentScore::Mate), true, false),
            Err(DropReason::MateCommentScore)
        );
        assert_eq!(
            rule.label(Some(CommentScore::Mover(10)), true, true),
            Err(DropReason::TacticalMove)
        );
        assert_eq!(
            rule.label(Some(CommentScore::Mover(301)), true, false),
            Err(DropReason::CommentScoreBeyondBound)
        );
        assert_eq!(
            rule.label(Some(CommentScore::White(-300)), true, false),
            Ok(-300)
        );
    }

    #[test]
    fn quietness_by_see() {
        assert!(is_quiet(&Chess::default()));
        // White can take an undefended queen.
        let hanging = parse_fen("4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1").unwrap();
        assert!(!is_quiet(&hanging));
        // A defended pawn attacked by a queen is no winning capture.
        let defended = parse_fen("4k3/4p3/3p4/8/8/8/8/3QK3 w - - 0 1").unwrap();
        assert!(is_quiet(&defended));
        let check = parse_fen("4k3/8/8/8/8/8/8/4K2r w - - 0 1").unwrap();
        assert!(!is_quiet(&check));
    }

    #[test]
    fn resolve_reaches_a_quiet_leaf() {
        let mut judge = PositionJudge::new(PositionFilter {
            quiet: Some(QuietMode::Resolve),
            ..PositionFilter::default()
        });
        let hanging = parse_fen("4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1").unwrap();
        let mut rng = crate::sampling::game_rng(0, 0, 0);
        let leaf = judge
            .judge(
                hanging,
                false,
                &mut Castled::default(),
                &mut Vec::new(),
                &mut rng,
            )
            .unwrap();
        assert!(leaf.board().queens().is_empty());
    }
}
