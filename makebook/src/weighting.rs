//! Turning move statistics and annotations into book weights.
//!
//! This module owns the weight formula, documented once in
//! [`WEIGHT_FORMULA`] (shown by `makebook --help` and copied in the README)
//! and implemented by [`compute_entries`]. Weights are computed position by
//! position: every candidate move gets a base value `b` on a 0–200 scale,
//! where the position's best collection move has 100 and an annotated move
//! without statistics starts at a neutral 50; annotations then adjust it, and
//! the Polyglot weight is `100 × b`.

use engine::formats::book::BookEntry;
use rayon::slice::ParallelSliceMut;

use crate::annotated::AnnotationSummary;
use crate::annotations::MoveJudgement;
use crate::book_move_map::{BookMoveKey, BookMoveMap};
use crate::collection::MoveStats;

/// The weight formula, as shown in `--help` and the README.
pub const WEIGHT_FORMULA: &str = "\
HOW WEIGHTS ARE COMPUTED

Each move of a position gets a value b from 0 to 200; its Polyglot weight is
round(100 x b), from 0 to 20000, and at least 1 when b > 0. Engines play the
moves of a position at random in proportion to their weights.

Game collections (every input file except the annotated first one): for a
move played n times, with W wins, D draws and L losses for the side that
played it (a game without a result, \"*\", counts as a draw),
    points = W + D/2    score = points / n    raw = points x score = points^2 / n
    b = 100 x raw / (largest raw among the moves of that position)
The position's best move gets b = 100; a popular move that scores badly is
played less than its share of games. A move is left out when n < --min-count,
when its score (in %) is below --min-score, or when it never scored (points
= 0).

Annotated file (the first input file): its moves are always kept, whatever
their count, score or ply. The base of such a move is the collection value b
above when the move was played in at least max(5, --min-count) collection
games, and a neutral 50 when it is rarer. Then, by order of precedence:
    {weight: N}        b = N (0 to 100); nothing else applies
    ? or ?? ($2, $4)   b = 0: kept in the book, never played
    !! ($3)            b = 200, the maximum
    otherwise          b = base x glyph x line, capped at 200, where
      glyph = 1.5 for ! ($1), 1.25 for !? ($5), 0.75 for ?! ($6), 1 without;
      line  = 1 + e/8, e being the mean, over the lines through the move that
              end with an evaluation glyph, of that glyph's value for the side
              that played the move: $10-$13 (equal, unclear) 0, $14/$15 (slight
              edge) 1, $16/$17 (clear edge) 2, $18/$19 (winning) 3, $20/$21
              (crushing) 4; positive when it favours the mover. A line is the
              run of moves of one variation (or of the main line) up to its end.
When a move appears several times in the annotated file, its first weight
comment and first move glyph count, and the line evaluations are averaged.";

/// Base value of the best collection move of a position.
pub const BEST_BASE: f64 = 100.0;
/// Base value of an annotated move rare in the collections.
pub const NEUTRAL_BASE: f64 = 50.0;
/// The largest base value (`!!`).
pub const MAX_BASE: f64 = 200.0;
/// Polyglot weight per unit of base value.
pub const WEIGHT_PER_BASE: f64 = 100.0;
/// An annotated move played in fewer collection games than this (or than
/// `--min-count`) is "rare" and starts from [`NEUTRAL_BASE`].
pub const RARE_BELOW_GAMES: u32 = 5;

/// The filters applied to collection totals.
#[derive(Debug, Clone, Copy)]
pub struct WeightSettings {
    /// Minimum number of games for a collection move.
    pub min_count: u32,
    /// Minimum score in percent for a collection move.
    pub min_score: Option<f64>,
}

/// Counts of what the weighting kept and dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WeightingSummary {
    /// Entries in the book.
    pub entries: u64,
    /// Distinct positions in the book.
    pub positions: u64,
    /// Entries coming from the annotated file.
    pub annotated_entries: u64,
    /// Entries with weight 0 (never played).
    pub zero_weight_entries: u64,
    /// Collection (position, move) pairs dropped by `--min-count`.
    pub dropped_by_min_count: u64,
    /// Collection pairs dropped by `--min-score`.
    pub dropped_by_min_score: u64,
    /// Collection pairs dropped because they never scored.
    pub dropped_never_scored: u64,
}

/// The Polyglot weight of a base value.
pub fn weight_of_base(base: f64) -> u16 {
    if base <= 0.0 {
        0
    } else {
        let w = (base.min(MAX_BASE) * WEIGHT_PER_BASE).round();
        w.clamp(1.0, f64::from(u16::MAX)) as u16
    }
}

/// The base value of an annotated move given its starting base.
pub fn annotated_base(start: f64, annotation: &AnnotationSummary) -> f64 {
    if let Some(weight) = annotation.explicit_weight {
        return f64::from(weight);
    }
    let glyph = match annotation.judgement {
        Some(MoveJudgement::Mistake | MoveJudgement::Blunder) => return 0.0,
        Some(MoveJudgement::Brilliant) => return MAX_BASE,
        Some(MoveJudgement::Good) => 1.5,
        Some(MoveJudgement::Interesting) => 1.25,
        Some(MoveJudgement::Dubious) => 0.75,
        None => 1.0,
    };
    let line = 1.0 + annotation.mean_line_evaluation() / 8.0;
    (start * glyph * line).clamp(0.0, MAX_BASE)
}

struct Candidate {
    pair: BookMoveKey,
    stats: MoveStats,
    annotated: bool,
}

/// Computes the book entries, in book order, from the collection statistics and
/// the annotations, applying `settings`.
pub fn compute_entries(
    collections: &BookMoveMap<MoveStats>,
    annotated: &BookMoveMap<AnnotationSummary>,
    settings: WeightSettings,
) -> (Vec<BookEntry>, WeightingSummary) {
    let mut summary = WeightingSummary::default();
    // Collection-only pairs that a filter drops are dropped here, before the
    // sort: whether they pass does not depend on the other moves.
    let mut candidates: Vec<Candidate> = Vec::with_capacity(collections.len() / 2);
    for (pair, stats) in collections {
        let is_annotated = annotated.contains_key(pair);
        if !is_annotated {
            if stats.count < settings.min_count {
                summary.dropped_by_min_count += 1;
                continue;
            }
            if settings
                .min_score
                .is_some_and(|min| stats.score() * 100.0 < min)
            {
                summary.dropped_by_min_score += 1;
                continue;
            }
            if stats.points() <= 0.0 {
                summary.dropped_never_scored += 1;
                continue;
            }
        }
        candidates.push(Candidate {
            pair: *pair,
            stats: *stats,
            annotated: is_annotated,
        });
    }
    candidates.extend(
        annotated
            .iter()
            .filter(|(pair, _)| !collections.contains_key(pair))
            .map(|(pair, _)| Candidate {
                pair: *pair,
                stats: MoveStats::default(),
                annotated: true,
            }),
    );
    candidates.par_sort_unstable_by_key(|c| c.pair);

    let mut entries = Vec::with_capacity(candidates.len());
    let rare_below = RARE_BELOW_GAMES.max(settings.min_count);
    let mut raws: Vec<Option<f64>> = Vec::new();
    for group in candidates.chunk_by(|a, b| a.pair.key == b.pair.key) {
        // Which moves carry a statistical value, and that value.
        raws.clear();
        for c in group {
            let stats = &c.stats;
            let raw = stats.points() * stats.score();
            let value = if c.annotated {
                (stats.count >= rare_below).then_some(raw)
            } else {
                Some(raw)
            };
            raws.push(value);
        }
        let best_raw = raws.iter().flatten().copied().fold(0.0f64, f64::max);
        let group_start = entries.len();
        for (c, raw) in group.iter().zip(&raws) {
            let statistical = raw.map(|raw| {
                if best_raw > 0.0 {
                    BEST_BASE * raw / best_raw
                } else {
                    0.0
                }
            });
            let annotation = if c.annotated {
                annotated.get(&c.pair)
            } else {
                None
            };
            let base = match (annotation, statistical) {
                (Some(annotation), start) => {
                    summary.annotated_entries += 1;
                    annotated_base(start.unwrap_or(NEUTRAL_BASE), annotation)
                }
                (None, Some(base)) => base,
                (None, None) => continue,
            };
            let weight = weight_of_base(base);
            if weight == 0 {
                summary.zero_weight_entries += 1;
            }
            entries.push(BookEntry {
                key: c.pair.key,
                raw_move: c.pair.raw_move,
                weight,
                learn: 0,
            });
        }
        if entries.len() > group_start {
            summary.positions += 1;
            // Book order within the position (heaviest first), so that the
            // whole list is already in book order when it is written.
            entries[group_start..]
                .sort_unstable_by(|a, b| b.weight.cmp(&a.weight).then(a.raw_move.cmp(&b.raw_move)));
        }
    }
    summary.entries = entries.len() as u64;
    (entries, summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(wins: u32, draws: u32, losses: u32) -> MoveStats {
        MoveStats {
            count: wins + draws + losses,
            wins,
            draws,
        }
    }

    fn pair(raw_move: u16) -> BookMoveKey {
        BookMoveKey { key: 7, raw_move }
    }

    const SETTINGS: WeightSettings = WeightSettings {
        min_count: 1,
        min_score: None,
    };

    fn weights(entries: &[BookEntry]) -> Vec<(u16, u16)> {
        let mut w: Vec<(u16, u16)> = entries.iter().map(|e| (e.raw_move, e.weight)).collect();
        w.sort();
        w
    }

    #[test]
    fn collection_weights_follow_frequency_and_score() {
        let mut collections = BookMoveMap::default();
        collections.insert(pair(1), stats(6, 2, 2)); // points 7, raw 4.9
        collections.insert(pair(2), stats(1, 2, 7)); // points 2, raw 0.4
        collections.insert(pair(3), stats(0, 0, 3)); // never scored
        let (entries, summary) = compute_entries(&collections, &BookMoveMap::default(), SETTINGS);
        assert_eq!(weights(&entries), [(1, 10000), (2, 816)]);
        assert_eq!(summary.dropped_never_scored, 1);
        assert_eq!(summary.positions, 1);

        let strict = WeightSettings {
            min_count: 10,
            min_score: Some(50.0),
        };
        collections.insert(pair(4), stats(0, 1, 0));
        let (entries, summary) = compute_entries(&collections, &BookMoveMap::default(), strict);
        assert_eq!(weights(&entries), [(1, 10000)]);
        assert_eq!(summary.dropped_by_min_count, 2);
        assert_eq!(summary.dropped_by_min_score, 1);
    }

    #[test]
    fn the_readme_states_the_same_formula() {
        let readme = include_str!("../README.md");
        for line in WEIGHT_FORMULA.lines() {
            assert!(
                readme.contains(line),
                "README.md lacks the formula line {line:?}"
            );
        }
    }

    #[test]
    fn annotation_precedence() {
        let plain = AnnotationSummary::default();
        assert_eq!(annotated_base(NEUTRAL_BASE, &plain), 50.0);
        let explicit = AnnotationSummary {
            explicit_weight: Some(40),
            judgement: Some(MoveJudgement::Brilliant),
            ..plain
        };
        assert_eq!(annotated_base(NEUTRAL_BASE, &explicit), 40.0);
        let good = AnnotationSummary {
            judgement: Some(MoveJudgement::Good),
            line_evaluation_sum: 2,
            line_evaluations: 1,
            ..plain
        };
        assert_eq!(annotated_base(NEUTRAL_BASE, &good), 50.0 * 1.5 * 1.25);
        assert_eq!(annotated_base(180.0, &good), MAX_BASE);
        assert_eq!(weight_of_base(0.001), 1);
        assert_eq!(weight_of_base(0.0), 0);
        assert_eq!(weight_of_base(250.0), 20000);
    }
}
