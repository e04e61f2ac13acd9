//! Tallying game collections: how often each move was played and how it
//! scored for the side that played it.
//!
//! The [`CollectionVisitor`] reads only the main line of each game (variations
//! are skipped by the reader's fast path) and stops reading a game at the ply
//! limit. Moves and counters are buffered per game and added to the
//! [`CollectionTally`] only when the whole game passed every check
//! ([`BookVisitor::commit`]), so a malformed game contributes nothing.
//! Move filters that depend on the game (ply limit, colour, Elo) apply here;
//! filters on the totals (minimum count and score) apply when the weights
//! are computed.

use std::ops::ControlFlow;

use engine::chess::position::{polyglot_key, polyglot_key_after};
use engine::chess::san::resolve_san;
use engine::formats::book::encode_move;
use engine::formats::labeled::GameResult;
use engine::formats::pgn_games::GameVisitor;
use engine::formats::pgn_tags::{GameTags, StartError};
use pgn_reader::{RawTag, SanPlus, Skip, Visitor};
use shakmaty::{Chess, Color, Position};

use crate::book_move_map::{BookMoveKey, BookMoveMap};
use crate::pgn_scan::{BookVisitor, CONTINUE, GameVerdict};

/// A game's result for `side`: +1 win, 0 draw, −1 loss; a game without a
/// result (`*`, no `Result` tag) counts as a draw.
pub fn outcome_for(result: Option<GameResult>, side: Color) -> i8 {
    let white = match result {
        Some(GameResult::WhiteWin) => 1,
        Some(GameResult::BlackWin) => -1,
        Some(GameResult::Draw) | None => 0,
    };
    if side == Color::White { white } else { -white }
}

/// Which moves of a game are counted.
#[derive(Debug, Clone, Copy)]
pub struct CollectionFilter {
    /// Only moves at plies `0..max_ply` of the game are counted.
    pub max_ply: u32,
    /// Count only the moves of this colour (`None`: both).
    pub only: Option<Color>,
    /// Count only moves by players rated at least this much.
    pub min_elo: Option<u32>,
}

/// Results of one (position, move) pair, from the point of view of the side
/// that played the move.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MoveStats {
    /// Games in which the move was played.
    pub count: u32,
    /// Of those, games the mover won.
    pub wins: u32,
    /// Games drawn or with an unknown result (the rest were lost; losses
    /// are not stored, to keep the table small).
    pub draws: u32,
}

impl MoveStats {
    /// Adds one game with result `outcome` (+1 win, 0 draw, −1 loss).
    pub fn add(&mut self, outcome: i8) {
        self.count += 1;
        match outcome {
            1 => self.wins += 1,
            -1 => {}
            _ => self.draws += 1,
        }
    }

    /// Adds another tally of the same pair.
    pub fn merge(&mut self, other: &MoveStats) {
        self.count += other.count;
        self.wins += other.wins;
        self.draws += other.draws;
    }

    /// Points scored: wins + draws / 2.
    pub fn points(&self) -> f64 {
        f64::from(self.wins) + f64::from(self.draws) / 2.0
    }

    /// Average score in `[0, 1]` (0 for an empty tally).
    pub fn score(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.points() / f64::from(self.count)
        }
    }
}

/// Move statistics of game collections plus the counters of the summary.
#[derive(Debug, Default)]
pub struct CollectionTally {
    /// Statistics per (position, move).
    pub moves: BookMoveMap<MoveStats>,
    /// Moves counted (each occurrence of a pair in a game).
    pub moves_counted: u64,
    /// Moves not counted because of `--only-white`/`--only-black`.
    pub dropped_by_colour: u64,
    /// Moves not counted because of `--min-elo`.
    pub dropped_by_elo: u64,
    /// Games whose reading stopped at `--max-ply`.
    pub games_cut_at_max_ply: u64,
}

impl CollectionTally {
    /// An empty tally with room for `pairs` (position, move) pairs.
    pub fn with_capacity(pairs: usize) -> CollectionTally {
        let mut tally = CollectionTally::default();
        tally.moves.reserve(pairs);
        tally
    }

    /// Adds another tally (from another worker) into this one.
    pub fn merge(&mut self, mut other: CollectionTally) {
        self.add_counts(&other);
        let other = std::mem::take(&mut other.moves);
        let (mut big, small) = if other.len() > self.moves.len() {
            (other, std::mem::take(&mut self.moves))
        } else {
            (std::mem::take(&mut self.moves), other)
        };
        for (pair, stats) in small {
            big.entry(pair).or_default().merge(&stats);
        }
        self.moves = big;
    }

    /// Adds the counters (not the moves) of `other`.
    fn add_counts(&mut self, other: &CollectionTally) {
        self.moves_counted += other.moves_counted;
        self.dropped_by_colour += other.dropped_by_colour;
        self.dropped_by_elo += other.dropped_by_elo;
        self.games_cut_at_max_ply += other.games_cut_at_max_ply;
    }
}

/// A move waiting for its game to parse completely.
#[derive(Debug, Clone, Copy)]
struct PendingMove {
    pair: BookMoveKey,
    mover: Color,
}

/// The state of the game being read.
#[derive(Debug)]
pub struct GameInProgress {
    pos: Chess,
    key: u64,
    ply: u32,
    moves_played: u32,
    tags: GameTags,
}

/// Reads collection games into a [`CollectionTally`].
#[derive(Debug)]
pub struct CollectionVisitor<'a> {
    filter: CollectionFilter,
    tally: &'a mut CollectionTally,
    pending: Vec<PendingMove>,
    /// The counters of the game being read (its moves are in `pending`).
    counts: CollectionTally,
    /// The result of the game being read.
    result: Option<GameResult>,
}

impl<'a> CollectionVisitor<'a> {
    /// A visitor adding to `tally`.
    pub fn new(filter: CollectionFilter, tally: &'a mut CollectionTally) -> Self {
        CollectionVisitor {
            filter,
            tally,
            pending: Vec::with_capacity(256),
            counts: CollectionTally::default(),
            result: None,
        }
    }

    /// The verdict on a game read up to here (its end or the ply limit).
    fn verdict(game: &GameInProgress) -> GameVerdict {
        if game.moves_played > 0 {
            GameVerdict::Used
        } else if game.tags.any_tag {
            GameVerdict::NoMoves
        } else {
            GameVerdict::Malformed("text that is neither tags nor moves".to_string())
        }
    }
}

impl BookVisitor for CollectionVisitor<'_> {
    fn commit(&mut self) {
        for pending in self.pending.drain(..) {
            let outcome = outcome_for(self.result, pending.mover);
            self.tally
                .moves
                .entry(pending.pair)
                .or_default()
                .add(outcome);
        }
        self.tally.add_counts(&self.counts);
        self.counts = CollectionTally::default();
    }
}

impl GameVisitor for CollectionVisitor<'_> {
    fn begin_game(&mut self, _stream_offset: u64) {
        self.pending.clear();
        self.counts = CollectionTally::default();
        self.result = None;
    }
}

impl Visitor for CollectionVisitor<'_> {
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
        CONTINUE
    }

    fn begin_movetext(&mut self, tags: GameTags) -> ControlFlow<GameVerdict, GameInProgress> {
        // The game's buffers were emptied by `begin_game`.
        self.result = tags.result;
        match tags.start() {
            Ok(start) => {
                let key = polyglot_key(&start.position);
                ControlFlow::Continue(GameInProgress {
                    pos: start.position,
                    key,
                    ply: start.ply,
                    moves_played: 0,
                    tags,
                })
            }
            Err(StartError::Variant(_)) => ControlFlow::Break(GameVerdict::OtherVariant),
            Err(reason) => ControlFlow::Break(GameVerdict::Malformed(reason.to_string())),
        }
    }

    fn san(&mut self, game: &mut GameInProgress, san_plus: SanPlus) -> ControlFlow<GameVerdict> {
        if game.ply >= self.filter.max_ply {
            self.counts.games_cut_at_max_ply += 1;
            return ControlFlow::Break(Self::verdict(game));
        }
        let m = match resolve_san(&game.pos, san_plus.san) {
            Ok(m) => m,
            Err(e) => {
                return ControlFlow::Break(GameVerdict::Malformed(format!(
                    "move {} {san_plus}: {e}",
                    move_number(&game.pos)
                )));
            }
        };
        let mover = game.pos.turn();
        if self.filter.only.is_some_and(|only| only != mover) {
            self.counts.dropped_by_colour += 1;
        } else if self
            .filter
            .min_elo
            .is_some_and(|min| game.tags.elo(mover).is_none_or(|elo| elo < min))
        {
            self.counts.dropped_by_elo += 1;
        } else if let Some(raw_move) = encode_move(&m) {
            self.counts.moves_counted += 1;
            self.pending.push(PendingMove {
                pair: BookMoveKey {
                    key: game.key,
                    raw_move,
                },
                mover,
            });
        }
        let before = game.pos.clone();
        game.pos.play_unchecked(m);
        game.key = polyglot_key_after(&before, game.key, &m, &game.pos);
        game.ply += 1;
        game.moves_played += 1;
        CONTINUE
    }

    fn begin_variation(&mut self, _game: &mut GameInProgress) -> ControlFlow<GameVerdict, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, game: GameInProgress) -> GameVerdict {
        Self::verdict(&game)
    }
}

/// "12." or "12..." for the move about to be played in `pos`.
pub fn move_number(pos: &Chess) -> String {
    let dots = if pos.turn() == Color::White {
        "."
    } else {
        "..."
    };
    format!("{}{dots}", pos.fullmoves())
}
