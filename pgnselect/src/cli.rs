//! The command line: options, their documentation and their validation into
//! the settings of a run.
//!
//! Arasan's `pgnselect` options are accepted with their meaning there:
//! `-min` → `--min-ply`, `-max` → `--max-ply` (rewritten by
//! [`arasan_words`] before parsing: single-dash words cannot be clap short
//! options), `-d` (least distance between samples) → `-d`/`--min-gap`, `-s`
//! (sample interval) → `-s`/`--max-gap`, `-r` → `-r`/`--random-move`.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Parser;

use crate::game_filter::GameFilter;
use crate::game_visitor::VisitorSettings;
use crate::output_format::OutputFormat;
use crate::pipeline::RunSettings;
use crate::position_filter::{CommentScores, PositionFilter, QuietMode, ResultCheck, ScoreBound};
use crate::sampling::SamplingRules;
use crate::td_targets::TdTargets;

/// Deepest `--search-depth` accepted: deeper searches make no sense for
/// filtering and would take hours on a large collection.
const MAX_SEARCH_DEPTH: u32 = 32;

/// Default seed: runs are reproducible unless another seed is asked for.
const DEFAULT_SEED: u64 = 0;

/// Default first sampled ply: the opening
/// is left to the book.
const DEFAULT_MIN_PLY: u32 = 20;

/// Default last sampled ply.
const DEFAULT_MAX_PLY: u32 = 150;

/// Default fewest plies between two samples of a game.
const DEFAULT_MIN_GAP: u32 = 3;

/// Default most plies between two samples of a game.
const DEFAULT_MAX_GAP: u32 = 16;

/// Default `--max-comment-score`: 20 pawns.
const DEFAULT_MAX_COMMENT_SCORE: u32 = 2000;

/// Default `--td-k`: the sigmoid scale the tuner fits on this project's
/// engine games.
const DEFAULT_TD_K: f64 = 2.8;

/// Default depth of the `--max-score` search.
const DEFAULT_SEARCH_DEPTH: u32 = 2;

const AFTER_HELP: &str = "\
Sampling: in each game the first candidate ply is drawn uniformly in
[min-ply, min-ply + max-gap), each next one min-gap..=max-gap plies after the
previous candidate; candidates beyond max-ply (or the game's end) are not
taken. Plies are absolute (from the FEN tag's move number for set-up games),
so a written position's fmvn tells its ply. A candidate then goes through, in
order: --comment-scores, no legal move (dropped), --random-move,
--min-pieces, --quiet, --max-score. Games are skipped when they have no
result (* or no Result tag), a player below --min-elo (or unrated), fewer
than --min-game-plies plies, a Variant tag other than standard chess
(standard, chess, normal, from position, classical; any case), (with
--result-check) a final position
whose search contradicts the result, or a Termination or TerminationDetails
tag saying that the result does not reflect the play: one containing (any
case) time forfeit, on time, forfeit, abandon, unterminated, infraction,
illegal, stall, disconnect, crash, withdraw, emergency or death, or
exactly time or timeout. TerminationDetails is read because TCEC writes the
reason there beside a generic or missing Termination (White loses on time,
Black's connection stalls, White disconnects, illegal move: c7f7). Every
other termination (normal, adjudication, GUI TB adjudication, 3-fold rep,
50-move rule, TCEC draw rule, SyzygyTB, White mates, checkmate, resign,
...) is kept.

Malformed games (illegal or ambiguous moves, stray tokens, broken tag lines,
bad FEN tag, a comment or variation never closed, text cut short without a
result marker, invalid UTF-8) are reported on stderr as FILE:LINE: game N:
reason, skipped and counted; a comment that runs into the next game costs
only its own game. Long algebraic moves (e2-e4, Ng1-f3) and promotions
written without '=' (a8Q) are read as what they mean. The summary at the end
gives games read, skipped by reason, malformed, positions written and
duplicates dropped.

Output lines read back with engine::formats::labeled (the tuner and the labeler):
  epd     <board> hmvc H; fmvn F; c9 \"1-0\";
  arasan  <board> c1 \"W B\"; c2 \"1.0\";  (c1: each side's castle status as
          Arasan's tuner reads it: 0 may castle either side, 1 king side only,
          2 queen side only, 3 castled king side, 4 castled queen side,
          5 cannot castle; c2: White's score)
  csv     fen,result,score header, then <fen>,<1-0|0-1|1/2-1/2>,<score>
          (the score empty without --comment-scores)

Training data from engine games: engine tournaments, SPRT runs and online
databases comment each move with the engine's score. --comment-scores labels
each position with the score in the comment of the move played from it, as
ce (centipawns, side to move) beside the result: {+0.35/12 0.104s} as
cutechess-cli, fastchess and `engine match` write it (the mover's view, pawns
with decimals, then /depth), or [%eval 0.35] as lichess writes it (White's
view). A position is dropped and counted when that comment has no score, the
score is a mate, it is beyond --max-comment-score, or the move captured or
promoted (the score then values a tactic in progress). Every position of
every game, for the tuner's --lambda 0:
  pgnselect --comment-scores --min-ply 0 --max-ply 1000 -d 1 -s 1 --quiet \
      -o scored.epd games.pgn
--td-lambda 0.9 writes instead each score's TD(0.9) target, computed over
the positions the game writes (before duplicates across games are dropped).

Arasan pgnselect options work as there: -min N = --min-ply N, -max N =
--max-ply N, -d N = -d/--min-gap N (least distance between samples), -s N =
-s/--max-gap N (sample interval), -r = -r/--random-move. Arasan's -q (take
the quiet end of the search's line) is --quiet=resolve here.

Determinism: the same --seed and inputs give byte-identical output for any
--threads; each game's random numbers depend only on the seed, the file's
position in the argument list and the game's byte offset in the file. With
--max-score or --quiet=resolve the engine's tables are cleared at the start of
every chunk of input (32 KiB of games), so searches do not depend on which
thread ran them either.";

/// The command line with Arasan's single-dash words `-min` and `-max`
/// rewritten to `--min-ply` and `--max-ply`; every other argument, and
/// everything after `--`, passes unchanged.
pub fn arasan_words(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut after_separator = false;
    args.into_iter()
        .map(|arg| {
            if after_separator {
                return arg;
            }
            match arg.to_str() {
                Some("--") => {
                    after_separator = true;
                    arg
                }
                Some("-min") => "--min-ply".into(),
                Some("-max") => "--max-ply".into(),
                _ => arg,
            }
        })
        .collect()
}

/// pgnselect: samples training positions from PGN game collections, labeled
/// with the game result, for the tuner (or, with --no-result, the labeler).
#[derive(Parser, Debug)]
#[command(
    version,
    after_help = AFTER_HELP,
    group(clap::ArgGroup::new("searching").multiple(true).args(["max_score", "result_check"]))
)]
pub struct Cli {
    /// PGN files to read (plain, .gz or .zst, recognised by content); `-`
    /// reads standard input.
    #[arg(required = true, value_name = "PGN")]
    pub inputs: Vec<PathBuf>,

    /// Output file, written to a temporary file and renamed at the end;
    /// standard output when absent or `-`.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// First ply that may be sampled (Arasan: -min).
    #[arg(long, default_value_t = DEFAULT_MIN_PLY, value_name = "PLY")]
    pub min_ply: u32,

    /// Last ply that may be sampled (Arasan: -max).
    #[arg(long, default_value_t = DEFAULT_MAX_PLY, value_name = "PLY")]
    pub max_ply: u32,

    /// Fewest plies between two samples of a game (at least 1; Arasan: -d).
    #[arg(short = 'd', long, default_value_t = DEFAULT_MIN_GAP, value_name = "PLIES")]
    pub min_gap: u32,

    /// Most plies between two samples of a game (Arasan: -s, its "sample
    /// interval"); each gap is drawn uniformly from --min-gap..=--max-gap.
    #[arg(short = 's', long, default_value_t = DEFAULT_MAX_GAP, value_name = "PLIES")]
    pub max_gap: u32,

    /// Play one random legal move from each sampled position and write the
    /// position after it instead (Arasan: -r).
    #[arg(short = 'r', long)]
    pub random_move: bool,

    /// Keep only quiet positions: `check` drops positions in check or with
    /// a capture or promotion winning material by SEE; `resolve` replaces a
    /// position by the quiet leaf of the engine's quiescence search. Plain
    /// `--quiet` means `--quiet=check`.
    #[arg(
        long,
        value_enum,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "check",
        value_name = "MODE"
    )]
    pub quiet: Option<QuietMode>,

    /// Drop positions whose search score (side to move, centipawns) is
    /// beyond ±CP; the only option that searches (Arasan always searches,
    /// with a bound of 30 pawns). The search asks only whether the score is
    /// beyond the bound (root windows at ±CP), which takes about half the
    /// nodes of finding the exact score.
    #[arg(long, value_name = "CP", allow_negative_numbers = false)]
    pub max_score: Option<u32>,

    /// Drop games whose final position's search score (White's view)
    /// contradicts the recorded result by more than CP: a 1-0 scored below
    /// -CP, a 0-1 above CP, a draw beyond ±CP (Arasan's playchess filter
    /// before tuning). Checkmate and stalemate are scored by the rules.
    #[arg(long, value_name = "CP", allow_negative_numbers = false)]
    pub result_check: Option<u32>,

    /// Depth of the --max-score and --result-check searches, in plies
    /// (Arasan: 2, fixed).
    #[arg(
        long,
        default_value_t = DEFAULT_SEARCH_DEPTH,
        value_name = "PLIES",
        requires = "searching"
    )]
    pub search_depth: u32,

    /// Label each position with the engine's score in the comment of the
    /// move played from it (`ce`, centipawns, side to move), read as
    /// `{+0.35/12 0.1s}` (the mover's view) or `[%eval 0.35]` (White's);
    /// positions whose move has no such score, a mate score, a score
    /// beyond --max-comment-score, or that captured or promoted are dropped
    /// and counted. Not with --random-move or --quiet=resolve, which change
    /// the position the score belongs to, nor --format arasan, which has no
    /// score field.
    #[arg(long, conflicts_with = "random_move")]
    pub comment_scores: bool,

    /// Largest absolute comment score kept, in centipawns (--comment-scores).
    #[arg(
        long,
        default_value_t = DEFAULT_MAX_COMMENT_SCORE,
        value_name = "CP",
        requires = "comment_scores"
    )]
    pub max_comment_score: u32,

    /// Replace each comment score by its TD(LAMBDA) target: the average of
    /// the win probabilities of its own and the game's later written
    /// positions' scores, weighted (1 - LAMBDA) LAMBDA^k, the tail's weight
    /// on the game's last written position, turned back into centipawns
    /// (--comment-scores; LAMBDA in [0, 1), 0 keeps the scores). A score
    /// the rest of its game contradicted counts for less. Tune the output
    /// with the tuner's --k set to the same K (and --lambda 0, or a blend
    /// with the game results such as --lambda 0.2).
    #[arg(long, value_name = "LAMBDA", requires = "comment_scores")]
    pub td_lambda: Option<f64>,

    /// The sigmoid scale K of --td-lambda's win probabilities,
    /// p = 1 / (1 + exp(-K cp / 400)): the tuner's --k (2.8 is what it fits
    /// on this project's engine games).
    #[arg(
        long,
        value_name = "K",
        default_value_t = DEFAULT_TD_K,
        requires = "td_lambda"
    )]
    pub td_k: f64,

    /// Skip games unless both players are rated at least ELO.
    #[arg(long, value_name = "ELO")]
    pub min_elo: Option<u32>,

    /// Skip games with fewer plies.
    #[arg(long, default_value_t = 0, value_name = "PLIES")]
    pub min_game_plies: u32,

    /// Drop positions with fewer pieces on the board (kings and pawns
    /// included).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub min_pieces: u32,

    /// Keep positions already written (by default a position, identified by
    /// its Polyglot key, is written once across all inputs, first occurrence
    /// in input order).
    #[arg(long)]
    pub no_dedup: bool,

    /// Leave out the game result (for the labeler); by default each
    /// position carries its game's result (c9 / c2 / result column).
    #[arg(long)]
    pub no_result: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Epd)]
    pub format: OutputFormat,

    /// Seed of the random choices (gaps, random moves).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,

    /// Worker threads (default: the number of cores).
    #[arg(short = 't', long, value_name = "N")]
    pub threads: Option<usize>,

    /// Never show the progress bar (it is shown only on a terminal anyway).
    #[arg(long)]
    pub no_progress: bool,

    /// Also write the run's summary as JSON to FILE (counts, games and
    /// positions skipped by reason, timings, rates).
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
}

impl Cli {
    /// Validates the options into the settings of a run.
    ///
    /// # Errors
    /// A message naming the offending options.
    pub fn settings(&self) -> Result<RunSettings> {
        let rules = SamplingRules {
            min_ply: self.min_ply,
            max_ply: self.max_ply,
            min_gap: self.min_gap,
            max_gap: self.max_gap,
        };
        if let Err(message) = rules.validate() {
            bail!(message);
        }
        if self.search_depth == 0 || self.search_depth > MAX_SEARCH_DEPTH {
            bail!("--search-depth must be between 1 and {MAX_SEARCH_DEPTH}");
        }
        let threads = match self.threads {
            Some(0) => bail!("--threads must be at least 1"),
            Some(n) => n,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let score_bound = self.max_score.map(|cp| ScoreBound {
            max_score: i32::try_from(cp).unwrap_or(i32::MAX),
            depth: self.search_depth,
        });
        let result_check = self.result_check.map(|cp| ResultCheck {
            margin: i32::try_from(cp).unwrap_or(i32::MAX),
            depth: self.search_depth,
        });
        if self.comment_scores && self.quiet == Some(QuietMode::Resolve) {
            bail!(
                "--comment-scores cannot be used with --quiet=resolve: the resolved position is not the one the comment scores"
            );
        }
        if self.comment_scores && self.format == OutputFormat::Arasan {
            bail!(
                "--comment-scores needs --format epd or csv: the arasan format has no score field"
            );
        }
        let comment_scores = self.comment_scores.then(|| CommentScores {
            max_score: i32::try_from(self.max_comment_score).unwrap_or(i32::MAX),
        });
        let td_targets = match self.td_lambda {
            None => None,
            Some(lambda) if !(0.0..1.0).contains(&lambda) => {
                bail!("--td-lambda must be in [0, 1), not {lambda}")
            }
            Some(_) if !(self.td_k.is_finite() && self.td_k > 0.0) => {
                bail!("--td-k must be a positive number, not {}", self.td_k)
            }
            Some(lambda) => Some(TdTargets {
                lambda,
                k: self.td_k,
            }),
        };
        let positions = PositionFilter {
            random_move: self.random_move,
            min_pieces: self.min_pieces,
            quiet: self.quiet,
            score_bound,
            result_check,
            comment_scores,
        };
        Ok(RunSettings {
            threads,
            visitor: VisitorSettings {
                rules,
                filter: GameFilter {
                    min_elo: self.min_elo,
                    min_game_plies: self.min_game_plies,
                },
                keep_history: positions.needs_history(),
                seed: self.seed,
                comment_scores: comment_scores.is_some(),
            },
            positions,
            format: self.format,
            with_result: !self.no_result,
            dedup: !self.no_dedup,
            td_targets,
        })
    }
}
