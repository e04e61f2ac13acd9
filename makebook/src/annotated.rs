//! Reading the hand-annotated book file, variations included.
//!
//! The [`AnnotatedVisitor`] walks every recursive variation of every game,
//! keeping a stack of lines: a variation replaces the last move of the line
//! it branches from. Each move collects its marks (see
//! [`crate::annotations`]): an explicit `weight:` comment, a move-quality
//! glyph, and the evaluation glyphs that end the lines it belongs to. A line
//! is the run of moves of one variation (or of the game's main line) from
//! its first move to its end; an evaluation glyph after the last move of a
//! line applies to every move of that line, in the mover's favour or
//! against it. When a (position, move) pair appears several times in the
//! file, the first explicit weight and the first move-quality glyph win and
//! the line evaluations are averaged. The annotated file's game results and
//! move counts are not used as statistics, and neither the ply limit nor the
//! minimum count applies to it.

use std::ops::ControlFlow;

use engine::chess::excerpt::excerpt_bytes;
use engine::chess::position::{polyglot_key, polyglot_key_after};
use engine::chess::san::resolve_san;
use engine::formats::book::encode_move;
use engine::formats::pgn_games::GameVisitor;
use engine::formats::pgn_tags::{GameTags, StartError};
use pgn_reader::{Nag, RawComment, RawTag, SanPlus, Skip, Visitor};
use shakmaty::{Chess, Color, Position};

use crate::annotations::{MoveJudgement, WeightComment, line_evaluation, parse_weight_comment};
use crate::book_move_map::{BookMoveKey, BookMoveMap};
use crate::collection::move_number;
use crate::pgn_scan::{AnnotationNote, BookVisitor, CONTINUE, GameVerdict};

/// Everything the annotated file says about one (position, move) pair.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AnnotationSummary {
    /// The first explicit `weight:` given, 0–100.
    pub explicit_weight: Option<u8>,
    /// The first move-quality glyph given.
    pub judgement: Option<MoveJudgement>,
    /// Sum of the evaluations (mover's point of view, −4…4) of the lines
    /// through this move that end with an evaluation glyph.
    pub line_evaluation_sum: i32,
    /// Number of such lines.
    pub line_evaluations: u32,
    /// How often the pair occurs in the annotated file.
    pub occurrences: u32,
}

impl AnnotationSummary {
    /// Mean line evaluation for the mover, −4…4 (0 without any).
    pub fn mean_line_evaluation(&self) -> f64 {
        if self.line_evaluations == 0 {
            0.0
        } else {
            f64::from(self.line_evaluation_sum) / f64::from(self.line_evaluations)
        }
    }
}

/// The annotations gathered from the annotated file.
#[derive(Debug, Default)]
pub struct AnnotatedTally {
    /// Annotations per (position, move).
    pub moves: BookMoveMap<AnnotationSummary>,
    /// Moves read (each occurrence in the file, variations included).
    pub moves_read: u64,
    /// Moves left out because of `--only-white`/`--only-black`.
    pub dropped_by_colour: u64,
}

/// One move occurrence of the game being read.
#[derive(Debug, Clone, Copy)]
struct MoveRecord {
    pair: BookMoveKey,
    mover: Color,
    explicit_weight: Option<u8>,
    judgement: Option<MoveJudgement>,
    line_evaluation_sum: i32,
    line_evaluations: u32,
}

/// One line (main line or variation) being read.
#[derive(Debug, Clone)]
struct Line {
    pos: Chess,
    key: u64,
    /// The position and key before this line's last move.
    before_last: Option<(Chess, u64)>,
    /// Whether a move was played in this line.
    has_moves: bool,
    /// The record of this line's last move (`None` if it was filtered out).
    last_record: Option<usize>,
    /// Records of all moves of this line.
    records: Vec<usize>,
    /// Evaluation glyph after the last move, White's point of view.
    final_evaluation: Option<i8>,
}

impl Line {
    fn new(pos: Chess, key: u64) -> Line {
        Line {
            pos,
            key,
            before_last: None,
            has_moves: false,
            last_record: None,
            records: Vec::new(),
            final_evaluation: None,
        }
    }
}

/// The state of the game being read: the stack of open lines.
#[derive(Debug)]
pub struct AnnotatedGame {
    lines: Vec<Line>,
    moves_played: u32,
    any_tag: bool,
}

/// Reads the annotated file into an [`AnnotatedTally`].
#[derive(Debug)]
pub struct AnnotatedVisitor<'a> {
    only: Option<Color>,
    tally: &'a mut AnnotatedTally,
    records: Vec<MoveRecord>,
    notes: Vec<AnnotationNote>,
    /// Moves read and dropped in the game being read, added to the tally
    /// with its records.
    moves_read: u64,
    dropped_by_colour: u64,
}

impl<'a> AnnotatedVisitor<'a> {
    /// A visitor adding to `tally`, keeping only moves of `only` if given.
    pub fn new(only: Option<Color>, tally: &'a mut AnnotatedTally) -> Self {
        AnnotatedVisitor {
            only,
            tally,
            records: Vec::new(),
            notes: Vec::new(),
            moves_read: 0,
            dropped_by_colour: 0,
        }
    }

    fn close_line(&mut self, line: &Line) {
        if let Some(eval) = line.final_evaluation {
            for &index in &line.records {
                let record = &mut self.records[index];
                let for_mover = if record.mover == Color::White {
                    eval
                } else {
                    -eval
                };
                record.line_evaluation_sum += i32::from(for_mover);
                record.line_evaluations += 1;
            }
        }
    }

    fn note(&mut self, needle: &[u8], message: String) {
        self.notes.push(AnnotationNote {
            needle: needle.to_vec(),
            message,
        });
    }
}

impl Visitor for AnnotatedVisitor<'_> {
    type Tags = GameTags;
    type Movetext = AnnotatedGame;
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

    fn begin_movetext(&mut self, tags: GameTags) -> ControlFlow<GameVerdict, AnnotatedGame> {
        // The game's buffers were emptied by `begin_game`.
        match tags.start() {
            Ok(start) => {
                let key = polyglot_key(&start.position);
                ControlFlow::Continue(AnnotatedGame {
                    lines: vec![Line::new(start.position, key)],
                    moves_played: 0,
                    any_tag: tags.any_tag,
                })
            }
            Err(StartError::Variant(_)) => ControlFlow::Break(GameVerdict::OtherVariant),
            Err(reason) => ControlFlow::Break(GameVerdict::Malformed(reason.to_string())),
        }
    }

    fn san(&mut self, game: &mut AnnotatedGame, san_plus: SanPlus) -> ControlFlow<GameVerdict> {
        let line = game
            .lines
            .last_mut()
            .expect("the main line is never closed");
        let m = match resolve_san(&line.pos, san_plus.san) {
            Ok(m) => m,
            Err(e) => {
                return ControlFlow::Break(GameVerdict::Malformed(format!(
                    "move {} {san_plus}: {e}",
                    move_number(&line.pos)
                )));
            }
        };
        let mover = line.pos.turn();
        line.last_record = None;
        if self.only.is_some_and(|only| only != mover) {
            self.dropped_by_colour += 1;
        } else if let Some(raw_move) = encode_move(&m) {
            self.moves_read += 1;
            let index = self.records.len();
            self.records.push(MoveRecord {
                pair: BookMoveKey {
                    key: line.key,
                    raw_move,
                },
                mover,
                explicit_weight: None,
                judgement: None,
                line_evaluation_sum: 0,
                line_evaluations: 0,
            });
            line.last_record = Some(index);
            line.records.push(index);
        }
        let before = line.pos.clone();
        line.pos.play_unchecked(m);
        let before_key = line.key;
        line.key = polyglot_key_after(&before, before_key, &m, &line.pos);
        line.before_last = Some((before, before_key));
        line.has_moves = true;
        line.final_evaluation = None;
        game.moves_played += 1;
        CONTINUE
    }

    fn nag(&mut self, game: &mut AnnotatedGame, nag: Nag) -> ControlFlow<GameVerdict> {
        let line = game
            .lines
            .last_mut()
            .expect("the main line is never closed");
        if !line.has_moves {
            return CONTINUE;
        }
        if let Some(judgement) = MoveJudgement::from_nag(nag) {
            if let Some(index) = line.last_record {
                self.records[index].judgement.get_or_insert(judgement);
            }
        } else if let Some(eval) = line_evaluation(nag) {
            line.final_evaluation = Some(eval);
        }
        CONTINUE
    }

    fn comment(
        &mut self,
        game: &mut AnnotatedGame,
        comment: RawComment<'_>,
    ) -> ControlFlow<GameVerdict> {
        let line = game.lines.last().expect("the main line is never closed");
        match parse_weight_comment(comment.as_bytes()) {
            WeightComment::None => {}
            WeightComment::Malformed(message) => {
                self.note(comment.as_bytes(), format!("{message}; ignored"));
            }
            WeightComment::Weight(weight) => {
                if !line.has_moves {
                    let shown = excerpt_bytes(comment.as_bytes().trim_ascii());
                    self.note(
                        comment.as_bytes(),
                        format!("weight comment {{{shown}}} does not follow a move; ignored"),
                    );
                } else if let Some(index) = line.last_record {
                    self.records[index].explicit_weight.get_or_insert(weight);
                }
            }
        }
        CONTINUE
    }

    fn begin_variation(&mut self, game: &mut AnnotatedGame) -> ControlFlow<GameVerdict, Skip> {
        let parent = game.lines.last().expect("the main line is never closed");
        match &parent.before_last {
            Some((pos, key)) => {
                let line = Line::new(pos.clone(), *key);
                game.lines.push(line);
                ControlFlow::Continue(Skip(false))
            }
            None => {
                self.note(b"(", "a variation before any move; skipped".to_string());
                ControlFlow::Continue(Skip(true))
            }
        }
    }

    fn end_variation(&mut self, game: &mut AnnotatedGame) -> ControlFlow<GameVerdict> {
        if game.lines.len() > 1 {
            let line = game.lines.pop().expect("checked");
            self.close_line(&line);
        }
        CONTINUE
    }

    fn end_game(&mut self, mut game: AnnotatedGame) -> GameVerdict {
        while let Some(line) = game.lines.pop() {
            self.close_line(&line);
        }
        if game.moves_played == 0 {
            return if game.any_tag {
                GameVerdict::NoMoves
            } else {
                GameVerdict::Malformed("text that is neither tags nor moves".to_string())
            };
        }
        GameVerdict::Used
    }
}

impl GameVisitor for AnnotatedVisitor<'_> {
    fn begin_game(&mut self, _stream_offset: u64) {
        // A game may be read twice (respelt long algebraic): only the last
        // reading counts.
        self.records.clear();
        self.notes.clear();
        (self.moves_read, self.dropped_by_colour) = (0, 0);
    }
}

impl BookVisitor for AnnotatedVisitor<'_> {
    fn commit(&mut self) {
        self.tally.moves_read += std::mem::take(&mut self.moves_read);
        self.tally.dropped_by_colour += std::mem::take(&mut self.dropped_by_colour);
        for record in self.records.drain(..) {
            let summary = self.tally.moves.entry(record.pair).or_default();
            if summary.explicit_weight.is_none() {
                summary.explicit_weight = record.explicit_weight;
            }
            if summary.judgement.is_none() {
                summary.judgement = record.judgement;
            }
            summary.line_evaluation_sum += record.line_evaluation_sum;
            summary.line_evaluations += record.line_evaluations;
            summary.occurrences += 1;
        }
    }

    fn take_annotation_notes(&mut self) -> Vec<AnnotationNote> {
        std::mem::take(&mut self.notes)
    }
}
