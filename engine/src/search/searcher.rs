//! The alpha-beta search: iterative deepening with aspiration windows,
//! principal variation search, quiescence search, the usual selectivity
//! (null move, reverse futility, razoring, futility, LMR, LMP, SEE pruning,
//! check, seventh-rank pawn and singular extensions, internal iterative
//! reduction, hindsight depth after a reduced move), a static evaluation
//! corrected by what the search learnt of its errors (see
//! [`super::correction`]) and Lazy SMP threads.
//!
//! Ownership: a [`Searcher`] owns everything a search learns (history,
//! killers, countermoves, correction history — one set per thread) and shares only its
//! [`TranspositionTable`] with its own helper threads. There is no global
//! mutable state, so any number of searchers may run at once on different
//! threads. Invariants: a search of a position with legal moves always
//! returns a legal best move (depth 1 is never aborted); with a node limit
//! and one thread the result is deterministic for a given searcher state
//! (call [`Searcher::new_game`] first for a reproducible result).
//!
//! Scores are centipawns from the side to move's point of view; mate scores
//! are `±(MATE_SCORE - plies)`, see [`mate_in_moves`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use shakmaty::{Chess, Color, Move, MoveList, Position, Rank, Role};

use super::correction::{CorrectionHistory, CorrectionSlots};
use super::movepick::{
    MoveClass, MoveContext, MovePicker, MoveScores, OrderingTables, QuietContext, is_quiet, see_ge,
    see_value,
};
use super::params::SearchParams;
use super::score::{DRAW_SCORE, INFINITY, MATE_BOUND, MATE_SCORE, MAX_PLY, mate_in_moves};
use super::timeman::{Clock, DEFAULT_MOVE_OVERHEAD, Deadline, TimeBudget};
use super::tt::{Bound, TranspositionTable, TtAllocError, encode_move};
use crate::chess::movegen::{CheckInfo, tactical_moves_into};
use crate::chess::position::{key, key_update};
use crate::eval::{PackedParams, Params, PawnKingCache, evaluate_packed_memo};

/// Stored as static evaluation when the side to move is in check.
const EVAL_NONE: i32 = -INFINITY;

/// Deepest iteration of iterative deepening.
const MAX_DEPTH: i32 = MAX_PLY as i32 - 8;
/// Nodes between two checks of the clock and the stop flags.
const CHECK_INTERVAL_MASK: u64 = 1023;

/// Limits of one search; all `None`/`false` means "until stopped".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchLimits {
    /// Maximum iteration depth.
    pub depth: Option<u32>,
    /// Maximum node count (summed over threads).
    pub nodes: Option<u64>,
    /// Fixed time for this move.
    pub movetime: Option<Duration>,
    /// Our clock, for time management.
    pub clock: Option<Clock>,
    /// Time kept in reserve per move for communication latency.
    pub move_overhead: Duration,
    /// Search only these moves at the root (UCI `searchmoves`); all legal
    /// moves when empty. Moves that are not legal are left out.
    pub root_moves: Vec<Move>,
}

impl Default for SearchLimits {
    fn default() -> Self {
        SearchLimits {
            depth: None,
            nodes: None,
            movetime: None,
            clock: None,
            move_overhead: DEFAULT_MOVE_OVERHEAD,
            root_moves: Vec::new(),
        }
    }
}

impl SearchLimits {
    /// Search to a fixed depth.
    pub fn depth(depth: u32) -> Self {
        SearchLimits {
            depth: Some(depth),
            ..Self::default()
        }
    }

    /// Search a fixed number of nodes.
    pub fn nodes(nodes: u64) -> Self {
        SearchLimits {
            nodes: Some(nodes),
            ..Self::default()
        }
    }

    /// Search for a fixed time.
    pub fn movetime(movetime: Duration) -> Self {
        SearchLimits {
            movetime: Some(movetime),
            ..Self::default()
        }
    }
}

/// Progress report after each completed iteration (main thread).
#[derive(Clone, Debug)]
pub struct SearchInfo {
    /// Iteration depth.
    pub depth: u32,
    /// Deepest ply reached.
    pub seldepth: u32,
    /// Score of the best move (see [`mate_in_moves`]).
    pub score: i32,
    /// What the score means relative to the true value (aspiration failures
    /// report bounds).
    pub bound: Bound,
    /// Nodes searched so far (all threads).
    pub nodes: u64,
    /// Time since the search started.
    pub elapsed: Duration,
    /// Permille of the hash table used by this search.
    pub hashfull: u32,
    /// Principal variation.
    pub pv: Vec<Move>,
}

/// The outcome of a search.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// The move to play; `None` only when the position has no legal move
    /// (checkmate or stalemate).
    pub best_move: Option<Move>,
    /// Score of the best move (see [`mate_in_moves`]).
    pub score: i32,
    /// Principal variation, starting with the best move.
    pub pv: Vec<Move>,
    /// Last completed iteration depth.
    pub depth: u32,
    /// Deepest ply reached.
    pub seldepth: u32,
    /// Nodes searched (all threads).
    pub nodes: u64,
}

/// Per-ply search state.
#[derive(Clone, Copy)]
struct Frame {
    static_eval: i32,
    /// The move played from this ply (`None` for a null move).
    current_move: Option<Move>,
    /// The move a singular-extension search at this ply leaves out.
    excluded: Option<Move>,
    /// The late-move reduction of the search of `current_move` now under
    /// way (0 for a full-depth search or a null move).
    reduction: i32,
}

impl Frame {
    /// The state of a ply no search has reached yet.
    const EMPTY: Frame = Frame {
        static_eval: EVAL_NONE,
        current_move: None,
        excluded: None,
        reduction: 0,
    };
}

/// State shared by all threads of one search.
struct Shared {
    /// The caller's stop flag.
    stop: Arc<AtomicBool>,
    /// Set when the main thread is done, to stop the helpers.
    helpers_stop: AtomicBool,
    /// Nodes searched by all threads, published every check interval.
    nodes: AtomicU64,
}

impl Shared {
    /// The state of one search obeying the caller's `stop` flag.
    fn new(stop: Arc<AtomicBool>) -> Self {
        Shared {
            stop,
            helpers_stop: AtomicBool::new(false),
            nodes: AtomicU64::new(0),
        }
    }
}

/// One search thread's private state.
struct Worker {
    id: usize,
    /// The evaluation weights, packed for play (see [`PackedParams`]).
    params: PackedParams,
    /// The memo of the pawn-and-king terms under `params`.
    pawn_king: PawnKingCache,
    /// The search parameters.
    sp: SearchParams,
    tt: Arc<TranspositionTable>,
    tables: OrderingTables,
    /// What the search learnt about the static evaluation's errors.
    correction: CorrectionHistory,
    stack: Vec<Frame>,
    /// Keys of the game history followed by the current search path.
    keys: Vec<u64>,
    pv_table: Vec<[Option<Move>; MAX_PLY + 1]>,
    pv_len: Vec<usize>,
    lmr: Vec<[i32; 64]>,
    nodes: u64,
    published_nodes: u64,
    seldepth: usize,
    stopped: bool,
    /// Whether limits and stop flags may abort: from the first node of a
    /// search (a quiescence explosion in the first iteration obeys them
    /// too), never in `resolve` and `score_within`.
    abortable: bool,
    use_tt: bool,
    node_limit: Option<u64>,
    threads: usize,
    deadline: Deadline,
    /// Null move is disabled at plies below this (verification search).
    nmp_min_ply: usize,
    root_best: Option<Move>,
    root_score: i32,
    root_pv: Vec<Move>,
    /// The only moves searched at the root (all when empty).
    root_moves: Vec<Move>,
    /// Nodes spent under each root move since the search started: the
    /// time manager stops early when the best move takes nearly all.
    root_move_nodes: Vec<(Move, u64)>,
}

/// The late-move reduction of each (depth, move number) under `sp`. The
/// table of the default parameters is computed once per process (a
/// thousand logarithms per searcher otherwise: most of the cost of
/// creating one).
fn lmr_table(sp: &SearchParams) -> Vec<[i32; 64]> {
    static DEFAULT: std::sync::LazyLock<(SearchParams, Vec<[i32; 64]>)> =
        std::sync::LazyLock::new(|| {
            let sp = SearchParams::default();
            (sp, compute_lmr_table(&sp))
        });
    let (default_sp, default_table) = &*DEFAULT;
    if (sp.lmr_base_percent, sp.lmr_divisor_percent)
        == (default_sp.lmr_base_percent, default_sp.lmr_divisor_percent)
    {
        return default_table.clone();
    }
    compute_lmr_table(sp)
}

/// A search parameter given in percent, as a fraction.
fn fraction(percent: i32) -> f64 {
    f64::from(percent) / 100.0
}

fn compute_lmr_table(sp: &SearchParams) -> Vec<[i32; 64]> {
    let base = fraction(sp.lmr_base_percent);
    let divisor = fraction(sp.lmr_divisor_percent);
    (0..=MAX_PLY)
        .map(|d| {
            let mut row = [0; 64];
            for (m, r) in row.iter_mut().enumerate().skip(1) {
                if d > 0 {
                    let v = base + (d as f64).ln() * (m as f64).ln() / divisor;
                    *r = v as i32;
                }
            }
            row
        })
        .collect()
}

fn has_non_pawn_material(pos: &Chess, color: Color) -> bool {
    let b = pos.board();
    (b.by_color(color) & !b.pawns() & !b.kings()).any()
}

/// Whether `m` moves a pawn to the rank before its promotion where the
/// exchange on that square does not lose it: such a move is extended one
/// ply.
fn pawn_reaches_seventh_safely(pos: &Chess, m: Move) -> bool {
    m.role() == Role::Pawn
        && m.to().rank() == pos.turn().fold_wb(Rank::Seventh, Rank::Second)
        && see_ge(pos, m, 0)
}

/// Few enough pieces that insufficient material is worth testing.
const INSUFFICIENT_MATERIAL_MAX_PIECES: usize = 4;

fn insufficient_material(pos: &Chess) -> bool {
    pos.board().occupied().count() <= INSUFFICIENT_MATERIAL_MAX_PIECES
        && pos.is_insufficient_material()
}

fn null_move(pos: &Chess) -> Option<Chess> {
    pos.clone().swap_turn().ok()
}

impl Worker {
    fn new(id: usize, params: &Params, sp: SearchParams, tt: Arc<TranspositionTable>) -> Self {
        Worker {
            id,
            params: PackedParams::new(params),
            pawn_king: PawnKingCache::new(),
            sp,
            tt,
            tables: OrderingTables::new(),
            correction: CorrectionHistory::new(),
            stack: vec![Frame::EMPTY; MAX_PLY + 4],
            keys: Vec::with_capacity(1024),
            pv_table: vec![[None; MAX_PLY + 1]; MAX_PLY + 1],
            pv_len: vec![0; MAX_PLY + 1],
            lmr: lmr_table(&sp),
            nodes: 0,
            published_nodes: 0,
            seldepth: 0,
            stopped: false,
            abortable: false,
            use_tt: true,
            node_limit: None,
            threads: 1,
            deadline: Deadline::start(None),
            nmp_min_ply: 0,
            root_best: None,
            root_score: -INFINITY,
            root_pv: Vec::new(),
            root_moves: Vec::new(),
            root_move_nodes: Vec::new(),
        }
    }

    fn evaluate(&mut self, pos: &Chess) -> i32 {
        evaluate_packed_memo(pos, &self.params, &mut self.pawn_king)
            .clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
    }

    /// Step 0. Every few nodes: publish the node count and see whether a
    /// limit or a stop request ends the search.
    fn check_limits(&mut self, shared: &Shared) {
        shared
            .nodes
            .fetch_add(self.nodes - self.published_nodes, Ordering::Relaxed);
        self.published_nodes = self.nodes;
        if !self.abortable {
            return;
        }
        if shared.stop.load(Ordering::Relaxed) || shared.helpers_stop.load(Ordering::Relaxed) {
            self.stopped = true;
            return;
        }
        if self.id == 0 {
            let nodes = if self.threads == 1 {
                self.nodes
            } else {
                shared.nodes.load(Ordering::Relaxed)
            };
            if self.node_limit.is_some_and(|n| nodes >= n) || self.deadline.hard_expired() {
                self.stopped = true;
            }
        }
    }

    #[inline]
    fn count_node(&mut self, shared: &Shared, ply: usize) {
        // A node entered after the stop (a pruning step's search that does
        // not look at the flag first) is not searched, so not counted: a
        // node limit is never exceeded.
        if self.stopped {
            return;
        }
        self.nodes += 1;
        if ply > self.seldepth {
            self.seldepth = ply;
        }
        if self.nodes & CHECK_INTERVAL_MASK == 0 {
            self.check_limits(shared);
        }
        // The node limit is exact with one thread, for determinism.
        if self.threads == 1 && self.abortable && self.node_limit.is_some_and(|n| self.nodes >= n) {
            self.stopped = true;
        }
    }

    fn is_repetition(&self, halfmoves: u32) -> bool {
        let n = self.keys.len();
        let current = self.keys[n - 1];
        let window = (halfmoves as usize).min(n - 1);
        let mut distance = 4;
        while distance <= window {
            if self.keys[n - 1 - distance] == current {
                return true;
            }
            distance += 2;
        }
        false
    }

    fn update_pv(&mut self, ply: usize, m: Move) {
        self.pv_table[ply][ply] = Some(m);
        let child_len = self.pv_len[ply + 1].max(ply + 1);
        for i in ply + 1..child_len {
            self.pv_table[ply][i] = self.pv_table[ply + 1][i];
        }
        self.pv_len[ply] = child_len;
    }

    fn pv_line(&self, ply: usize) -> Vec<Move> {
        self.pv_table[ply][ply..self.pv_len[ply]]
            .iter()
            .map_while(|m| *m)
            .collect()
    }

    /// Plays `m` from `pos`, pushing the child's key on the key stack.
    fn make(&mut self, pos: &Chess, m: Move) -> Chess {
        // The child's table bucket is requested as early as its key is
        // known, so that the memory access overlaps making the move.
        let incremental = key_update(pos, *self.keys.last().expect("root key"), &m);
        if let Some(k) = incremental {
            self.prefetch(k);
        }
        let mut child = pos.clone();
        child.play_unchecked(m);
        let k = incremental.unwrap_or_else(|| {
            let k = key(&child);
            self.prefetch(k);
            k
        });
        self.keys.push(k);
        child
    }

    /// The late-move reduction table's entry for a move searched after
    /// `moves_searched` others at `depth`, before the node's adjustments.
    fn base_reduction(&self, depth: i32, moves_searched: usize) -> i32 {
        self.lmr[depth.min(MAX_PLY as i32) as usize][moves_searched.min(63)]
    }

    /// Prefetches the table bucket of `key` when the search uses the table.
    fn prefetch(&self, key: u64) {
        if self.use_tt {
            self.tt.prefetch(key);
        }
    }

    fn unmake(&mut self) {
        self.keys.pop();
    }

    /// The main alpha-beta search (fail-soft) of `pos`, whose key is on top
    /// of the key stack.
    #[allow(clippy::too_many_arguments)]
    fn negamax(
        &mut self,
        shared: &Shared,
        pos: &Chess,
        mut depth: i32,
        mut alpha: i32,
        mut beta: i32,
        ply: usize,
        cut_node: bool,
    ) -> i32 {
        let pv_node = beta - alpha > 1;
        self.pv_len[ply] = ply;
        let in_check = pos.is_check();
        // Step 1. Draws: the 50-move rule (unless this is mate), repetitions
        // (game history included) and dead positions — checked before the
        // horizon so that a repetition into a leaf is still seen.
        if ply > 0 {
            if pos.halfmoves() >= 100 && (!in_check || !pos.legal_moves().is_empty()) {
                return DRAW_SCORE;
            }
            if self.is_repetition(pos.halfmoves()) || insufficient_material(pos) {
                return DRAW_SCORE;
            }
        }
        if depth <= 0 {
            return self.qsearch(shared, pos, alpha, beta, ply);
        }
        // Step 2. Count the node; stop if a limit is reached.
        self.count_node(shared, ply);
        if self.stopped {
            return 0;
        }
        let key = *self.keys.last().expect("node key");
        let us = pos.turn();

        if ply > 0 {
            if ply >= MAX_PLY - 1 {
                return if in_check {
                    DRAW_SCORE
                } else {
                    self.evaluate(pos)
                };
            }
            // Step 3. Mate distance pruning: no line from here can beat a
            // mate already found closer to the root.
            alpha = alpha.max(-MATE_SCORE + ply as i32);
            beta = beta.min(MATE_SCORE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
        }

        // Step 4. Transposition table: a deep enough entry of the right
        // bound ends a non-PV node at once.
        // A singular-extension search (a move excluded) must not take the
        // full node's entry for its own.
        let excluded = self.stack[ply].excluded;
        let tt_entry = if self.use_tt && excluded.is_none() {
            self.tt.probe(key, ply)
        } else {
            None
        };
        let tt_move = tt_entry.map_or(0, |e| e.move_code);
        if let Some(e) = tt_entry
            && !pv_node
            && e.depth >= depth
            && e.cuts(alpha, beta)
        {
            return e.score;
        }

        // Step 5. Static evaluation, corrected by what the search learnt
        // of its errors in similar positions, then refined by the table's
        // score when its bound says the true score lies on that side. The
        // table keeps the uncorrected evaluation.
        // No evaluation in check, so no correction either.
        let correction_slots = (!in_check).then(|| CorrectionSlots::of(pos));
        let (raw_eval, static_eval) = match &correction_slots {
            None => (EVAL_NONE, EVAL_NONE),
            Some(slots) => {
                let raw_eval = match tt_entry {
                    Some(e) if e.static_eval != EVAL_NONE => e.static_eval,
                    _ => self.evaluate(pos),
                };
                (raw_eval, self.correction.corrected(raw_eval, slots))
            }
        };
        let mut eval = static_eval;
        if let Some(e) = tt_entry
            && !in_check
            && e.score.abs() < MATE_BOUND
            && e.refines(eval)
        {
            eval = e.score;
        }
        self.stack[ply].static_eval = static_eval;
        let improving = !in_check
            && ply >= 2
            && (self.stack[ply - 2].static_eval == EVAL_NONE
                || static_eval > self.stack[ply - 2].static_eval);
        // Step 5b. Hindsight: a node reached by a move the parent reduced
        // by 3 plies or more, when that move did not worsen the mover's
        // position (our static evaluation is no better than the negation
        // of the parent's), is searched one ply deeper: the reduction was
        // probably too much. One reached by a reduced move that left the
        // mover 200 cp worse than before is searched one ply shallower.
        if ply > 0
            && excluded.is_none()
            && static_eval != EVAL_NONE
            && self.stack[ply - 1].static_eval != EVAL_NONE
        {
            let prior_reduction = self.stack[ply - 1].reduction;
            let eval_sum = static_eval + self.stack[ply - 1].static_eval;
            if prior_reduction >= 3 && eval_sum <= 0 {
                depth += 1;
            }
            if prior_reduction >= 1 && depth >= 2 && eval_sum > 200 {
                depth -= 1;
            }
        }
        self.tables.reset_killers(ply + 1);
        let previous_move = if ply > 0 {
            self.stack[ply - 1].current_move
        } else {
            None
        };
        let context = MoveContext {
            previous: previous_move,
            before_previous: if ply > 1 {
                self.stack[ply - 2].current_move
            } else {
                None
            },
        };

        if !pv_node && !in_check && ply > 0 && excluded.is_none() {
            // Step 6. Razoring: hopeless at low depth unless a capture
            // sequence saves it, which quiescence decides.
            if depth <= self.sp.razor_max_depth && eval + self.sp.razor_margin * depth < alpha {
                let v = self.qsearch(shared, pos, alpha - 1, alpha, ply);
                if v < alpha {
                    return v;
                }
            }
            // Step 7. Reverse futility pruning: so far above beta that a
            // shallow search will not bring it back.
            if depth <= self.sp.rfp_max_depth
                && eval < MATE_BOUND
                && eval - self.sp.rfp_margin * (depth - improving as i32) >= beta
            {
                return eval;
            }
            // Step 8. Null-move pruning: if passing still beats beta, a real
            // move will too (not in pawn endings: zugzwang). Verified by a
            // reduced search at high depth.
            if depth >= self.sp.nmp_min_depth
                && eval >= beta
                && static_eval >= beta
                && previous_move.is_some()
                && ply >= self.nmp_min_ply
                && has_non_pawn_material(pos, us)
                && let Some(null_pos) = null_move(pos)
            {
                let reduction = self.sp.nmp_base_reduction
                    + depth / self.sp.nmp_depth_divisor
                    + ((eval - beta) / self.sp.nmp_eval_divisor)
                        .min(self.sp.nmp_max_eval_reduction);
                self.stack[ply].current_move = None;
                self.stack[ply].reduction = 0;
                self.keys.push(crate::chess::position::key(&null_pos));
                let v = -self.negamax(
                    shared,
                    &null_pos,
                    depth - reduction,
                    -beta,
                    -beta + 1,
                    ply + 1,
                    !cut_node,
                );
                self.keys.pop();
                if self.stopped {
                    return 0;
                }
                if v >= beta {
                    let v = if v >= MATE_BOUND { beta } else { v };
                    if depth < self.sp.nmp_verify_depth || self.nmp_min_ply != 0 {
                        return v;
                    }
                    self.nmp_min_ply = ply + (3 * (depth - reduction) / 4) as usize;
                    let verified =
                        self.negamax(shared, pos, depth - reduction, beta - 1, beta, ply, false);
                    self.nmp_min_ply = 0;
                    if self.stopped {
                        return 0;
                    }
                    if verified >= beta {
                        return v;
                    }
                }
            }
        }

        // Step 9. Internal iterative reduction: without a hash move this
        // node was not searched before and is probably less important.
        if depth >= self.sp.iir_min_depth
            && tt_move == 0
            && (pv_node || cut_node)
            && excluded.is_none()
        {
            depth -= 1;
        }

        // Step 10. Generate and order the moves; no move is mate or
        // stalemate.
        let mut moves = pos.legal_moves();
        if moves.is_empty() {
            return if in_check {
                -MATE_SCORE + ply as i32
            } else {
                DRAW_SCORE
            };
        }
        let quiet_context = QuietContext::new(us, context);
        let mut scores = MoveScores::new();
        let mut picker = MovePicker::new(
            &mut moves,
            &mut scores,
            tt_move,
            &self.tables,
            ply,
            context,
            quiet_context,
        );
        let [killer_1, killer_2] = self.tables.killers(ply);
        let check_info = CheckInfo::new(pos);
        let mut best_score = -INFINITY;
        let mut best_move: Option<Move> = None;
        let mut moves_searched = 0usize;
        let mut quiets_tried = [None; MAX_QUIETS_TRIED];
        let mut quiets_count = 0usize;
        let mut tt_move_captures = false;
        let lmp_limit = (self.sp.lmp_base + depth * depth) / if improving { 1 } else { 2 };

        while let Some((m, class)) = picker.next_move(pos, &self.tables) {
            if Some(m) == excluded {
                continue;
            }
            if ply == 0 && !self.root_moves.is_empty() && !self.root_moves.contains(&m) {
                continue;
            }
            let quiet = is_quiet(m);
            let gives_check = check_info.gives_check(pos, m);
            // Step 11. Shallow pruning of late, unpromising moves, once a
            // move has been found that avoids being mated. Quiet checks are
            // kept: they are how attacks are found.
            if ply > 0 && best_score > -MATE_BOUND && has_non_pawn_material(pos, us) {
                if quiet && !in_check && !pv_node && !gives_check {
                    // Late move pruning, and futility pruning: each prunes
                    // every later quiet move as well, so the picker stops
                    // ordering them.
                    if depth <= self.sp.lmp_max_depth && quiets_count as i32 >= lmp_limit {
                        picker.skip_quiets();
                        continue;
                    }
                    // Futility at the depth the move's late-move reduction
                    // would leave (as Ethereal does): later moves are
                    // reduced at least as much, so skipping them all holds.
                    // A move whose histories say it often refutes is still
                    // searched (half the bar when improving, as in
                    // Ethereal); the history is read only when the move
                    // would otherwise be pruned.
                    let lmr_depth = (depth - self.base_reduction(depth, moves_searched)).max(0);
                    if lmr_depth <= self.sp.futility_max_depth
                        && class == MoveClass::Quiet
                        && static_eval + self.sp.futility_base + self.sp.futility_margin * lmr_depth
                            <= alpha
                        && self.tables.quiet_score(m, &quiet_context)
                            < self.sp.futility_history_limit / if improving { 2 } else { 1 }
                    {
                        picker.skip_quiets();
                        continue;
                    }
                }
                // SEE pruning of moves that lose too much material.
                if depth <= self.sp.see_prune_max_depth && !in_check {
                    let threshold = if quiet {
                        -self.sp.see_quiet_margin * depth
                    } else {
                        -self.sp.see_capture_margin * depth * depth
                    };
                    if (class == MoveClass::BadCapture || (quiet && !gives_check))
                        && !see_ge(pos, m, threshold)
                    {
                        continue;
                    }
                }
            }

            // Step 12. Extensions: checks, a pawn's safe step to the seventh
            // rank, and the hash move when a reduced search without it fails
            // well below its score (it is "singular", the only good move). If
            // even without it the node fails high, several moves beat beta:
            // cut (multi-cut).
            // Every check is extended: a check that loses material by
            // exchange is how many sacrificial attacks begin.
            // A pawn that reaches the square before promotion is extended
            // too: races to promote are decided a ply beyond where the
            // horizon would cut them.
            let mut extension = i32::from(gives_check || pawn_reaches_seventh_safely(pos, m));
            if ply > 0
                && class == MoveClass::Hash
                && depth >= self.sp.se_min_depth
                && excluded.is_none()
                && let Some(e) = tt_entry
                && e.depth >= depth - self.sp.se_tt_depth_margin
                && e.bound != Bound::Upper
                && e.score.abs() < MATE_BOUND
            {
                let singular_beta = e.score - self.sp.se_margin_per_depth * depth;
                self.stack[ply].excluded = Some(m);
                let v = self.negamax(
                    shared,
                    pos,
                    (depth - 1) / 2,
                    singular_beta - 1,
                    singular_beta,
                    ply,
                    cut_node,
                );
                self.stack[ply].excluded = None;
                // The excluded search wrote this ply's PV; it is not ours.
                self.pv_len[ply] = ply;
                if self.stopped {
                    return 0;
                }
                if v < singular_beta {
                    extension = 1;
                } else if singular_beta >= beta {
                    return singular_beta;
                }
            }
            if class == MoveClass::Hash && !quiet {
                tt_move_captures = true;
            }
            let nodes_before = self.nodes;
            let child = self.make(pos, m);
            let new_depth = depth - 1 + extension;
            self.stack[ply].current_move = Some(m);
            self.stack[ply].reduction = 0;

            // Step 13. Principal variation search with late move reductions:
            // later moves get a reduced null-window search first and are
            // re-searched only if they surprise.
            let mut score;
            if moves_searched == 0 {
                // The first move of an expected cut node should refute, so
                // its reply is an expected all node, and the other way
                // round; a PV node's first move leads to a PV node.
                let child_cut = !pv_node && !cut_node;
                score = -self.negamax(shared, &child, new_depth, -beta, -alpha, ply + 1, child_cut);
            } else {
                // Only quiet moves are reduced: a losing capture may be a
                // sacrifice, and a reduced search that fails low is never
                // repeated at full depth.
                let mut reduction = 0;
                let reducible = depth >= self.sp.lmr_min_depth
                    && moves_searched >= self.sp.lmr_min_moves as usize + usize::from(pv_node)
                    && quiet;
                if reducible {
                    reduction = self.base_reduction(depth, moves_searched);
                    reduction += i32::from(!pv_node);
                    reduction += i32::from(!improving);
                    if cut_node {
                        reduction += self.sp.lmr_cut_node;
                    }
                    reduction -= i32::from(gives_check);
                    reduction -= i32::from(Some(m) == killer_1 || Some(m) == killer_2);
                    // After a capturing hash move the quiet moves are less
                    // likely to matter (Stockfish's ttCapture).
                    reduction += i32::from(tt_move_captures);
                    // The history plus the threat bonus: a threatened
                    // piece's escape is reduced less, a walk into a threat
                    // more (the picker's score ranks refutations by slot).
                    let history =
                        self.tables.quiet_score(m, &quiet_context) + picker.threat_bonus(pos, m);
                    reduction -= history / self.sp.lmr_history_divisor;
                    reduction = reduction.clamp(0, (new_depth - 1).max(0));
                    // At the root a reduced move that fails low is gone for
                    // the iteration: a quiet sacrifice there needs depth to
                    // show its point.
                    if ply == 0 {
                        reduction = reduction.min(self.sp.lmr_root_max);
                    }
                }
                self.stack[ply].reduction = reduction;
                // A reduced search expects to fail low, so its node is a cut
                // node; a move searched at full depth alternates the kind.
                score = -self.negamax(
                    shared,
                    &child,
                    new_depth - reduction,
                    -alpha - 1,
                    -alpha,
                    ply + 1,
                    reducible || !cut_node,
                );
                self.stack[ply].reduction = 0;
                if score > alpha && reduction > 0 {
                    // Deeper when the reduced search beat the best score by
                    // far, shallower when only just (as in Stockfish).
                    let deeper_margin =
                        self.sp.deeper_margin + self.sp.deeper_margin_per_depth * new_depth;
                    let adjusted = new_depth + i32::from(score > best_score + deeper_margin)
                        - i32::from(score < best_score + self.sp.shallower_margin);
                    if adjusted > new_depth - reduction {
                        score = -self.negamax(
                            shared,
                            &child,
                            adjusted,
                            -alpha - 1,
                            -alpha,
                            ply + 1,
                            !cut_node,
                        );
                    }
                }
                if pv_node && score > alpha && score < beta {
                    score = -self.negamax(shared, &child, new_depth, -beta, -alpha, ply + 1, false);
                }
            }
            self.unmake();
            if ply == 0 {
                self.add_root_move_nodes(m, self.nodes - nodes_before);
            }
            if self.stopped {
                return 0;
            }
            moves_searched += 1;

            // Step 14. New best move: record it, and on a beta cutoff teach
            // the ordering tables (bonus for the refutation, malus for the
            // quiet moves tried before it).
            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(m);
                    self.update_pv(ply, m);
                    if ply == 0 {
                        self.root_best = Some(m);
                        self.root_score = score;
                        self.root_pv = self.pv_line(0);
                    }
                    if score >= beta {
                        if quiet {
                            let bonus = self.sp.history_bonus(depth);
                            self.tables.update_quiet(m, &quiet_context, bonus);
                            for q in quiets_tried[..quiets_count].iter().flatten() {
                                self.tables.update_quiet(*q, &quiet_context, -bonus);
                            }
                            self.tables.add_killer(ply, m);
                            self.tables.set_countermove(us, previous_move, m);
                        }
                        break;
                    }
                    alpha = score;
                }
            }
            if quiet && quiets_count < MAX_QUIETS_TRIED {
                quiets_tried[quiets_count] = Some(m);
                quiets_count += 1;
            }
        }

        // A singular-extension search whose only move was excluded.
        if best_score == -INFINITY {
            return alpha;
        }

        // Step 15. A fail high far above beta is pulled toward it, the
        // more so the shallower the search: a score beyond beta from a
        // null-window search is unreliable (as in Stockfish).
        if best_score >= beta
            && best_score.abs() < MATE_BOUND
            && beta.abs() < MATE_BOUND
            && alpha.abs() < MATE_BOUND
        {
            best_score = (best_score * depth + beta) / (depth + 1);
        }

        // Step 16. Store the result, and learn from the static
        // evaluation's error when the result's bound says which side of it
        // the truth lies on and no capture decided it.
        let bound = Bound::of_result(best_score, beta, best_move.is_some());
        if self.use_tt && excluded.is_none() {
            self.tt.store(
                key,
                ply,
                best_move.map_or(0, encode_move),
                best_score,
                raw_eval,
                depth,
                bound,
            );
            if let Some(slots) = &correction_slots
                && best_move.is_none_or(is_quiet)
                && best_score.abs() < MATE_BOUND
                && !(bound == Bound::Lower && best_score <= static_eval)
                && !(bound == Bound::Upper && best_score >= static_eval)
            {
                self.correction
                    .update(slots, best_score - static_eval, depth);
            }
        }
        best_score
    }

    /// Quiescence search: captures and queen promotions (all evasions when
    /// in check) until the position is quiet. Fail-soft.
    fn qsearch(
        &mut self,
        shared: &Shared,
        pos: &Chess,
        mut alpha: i32,
        beta: i32,
        ply: usize,
    ) -> i32 {
        self.pv_len[ply] = ply;
        self.count_node(shared, ply);
        if self.stopped {
            return 0;
        }
        let in_check = pos.is_check();
        if ply >= MAX_PLY - 1 {
            return if in_check {
                DRAW_SCORE
            } else {
                self.evaluate(pos)
            };
        }
        if insufficient_material(pos) {
            return DRAW_SCORE;
        }
        let key = *self.keys.last().expect("node key");
        let pv_node = beta - alpha > 1;

        // Q1. Transposition table cutoff.
        let tt_entry = if self.use_tt {
            self.tt.probe(key, ply)
        } else {
            None
        };
        if let Some(e) = tt_entry
            && !pv_node
            && e.cuts(alpha, beta)
        {
            return e.score;
        }

        // Q2. Stand pat: the side to move may decline all captures (not when
        // in check).
        let mut best_score = -INFINITY;
        let mut raw_eval = EVAL_NONE;
        let static_eval = if in_check {
            EVAL_NONE
        } else {
            raw_eval = match tt_entry {
                Some(e) if e.static_eval != EVAL_NONE => e.static_eval,
                _ => self.evaluate(pos),
            };
            // Corrected as in the main search, except in `resolve` (no
            // table: its result must not depend on earlier searches).
            let e = if self.use_tt {
                self.correction
                    .corrected(raw_eval, &CorrectionSlots::of(pos))
            } else {
                raw_eval
            };
            if e >= beta {
                // The evaluation is kept for the next visit (no move, a
                // lower bound at depth 0, as quiescence stores).
                if self.use_tt && tt_entry.is_none() {
                    self.tt.store(key, ply, 0, e, raw_eval, 0, Bound::Lower);
                }
                return e;
            }
            alpha = alpha.max(e);
            best_score = e;
            e
        };

        // Q3. Moves: every evasion in check, else captures and queen
        // promotions.
        let mut moves = MoveList::new();
        tactical_moves_into(pos, &mut moves);
        if in_check && moves.is_empty() {
            return -MATE_SCORE + ply as i32;
        }
        let tt_move = tt_entry.map_or(0, |e| e.move_code);
        let mut scores = MoveScores::new();
        let mut picker = MovePicker::new_tactical(&mut moves, &mut scores, tt_move);
        let mut best_move = None;
        while let Some((m, _)) = picker.next_move(pos, &self.tables) {
            if !in_check {
                // Q4. Delta pruning: even winning the piece cannot reach
                // alpha.
                let gain = m.capture().map_or(0, see_value)
                    + m.promotion()
                        .map_or(0, |r| see_value(r) - see_value(Role::Pawn));
                if static_eval + gain + self.sp.delta_margin <= alpha {
                    continue;
                }
                // Q5. SEE pruning: captures that lose material.
                if !see_ge(pos, m, 0) {
                    continue;
                }
            }
            let child = self.make(pos, m);
            let score = -self.qsearch(shared, &child, -beta, -alpha, ply + 1);
            self.unmake();
            if self.stopped {
                return 0;
            }
            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(m);
                    self.update_pv(ply, m);
                    if score >= beta {
                        break;
                    }
                    alpha = score;
                }
            }
        }

        if self.use_tt {
            let bound = Bound::of_result(best_score, beta, best_move.is_some());
            self.tt.store(
                key,
                ply,
                best_move.map_or(0, encode_move),
                best_score,
                raw_eval,
                0,
                bound,
            );
        }
        best_score
    }

    /// Prepares the worker for a new search from `pos`.
    fn prepare(
        &mut self,
        pos: &Chess,
        history_keys: &[u64],
        limits: &SearchLimits,
        root_moves: &[Move],
        threads: usize,
    ) {
        self.keys.clear();
        self.keys.extend_from_slice(history_keys);
        self.keys.push(key(pos));
        self.reset_run_state(true, limits.nodes, threads);
        self.abortable = true;
        self.nmp_min_ply = 0;
        self.root_best = None;
        self.root_score = -INFINITY;
        self.root_pv.clear();
        self.root_moves.clear();
        self.root_moves.extend_from_slice(root_moves);
        self.root_move_nodes.clear();
        self.tables.clear_killers();
        self.stack.fill(Frame::EMPTY);
    }

    /// The lighter preparation of a quiescence-only, table-free, unlimited
    /// search ([`Searcher::resolve`], called millions of times by the
    /// tuner): quiescence reads no stack frame, killer or limit, and without
    /// the table the keys are never looked at, so the root key is 0 rather
    /// than computed.
    fn prepare_resolve(&mut self) {
        self.keys.clear();
        self.keys.push(0);
        self.reset_run_state(false, None, 1);
    }

    /// Resets the counters and limits every search starts from.
    fn reset_run_state(&mut self, use_tt: bool, node_limit: Option<u64>, threads: usize) {
        self.nodes = 0;
        self.published_nodes = 0;
        self.seldepth = 0;
        self.stopped = false;
        self.abortable = false;
        self.use_tt = use_tt;
        self.node_limit = node_limit;
        self.threads = threads;
    }

    /// Iterative deepening. The main thread (id 0) manages time and reports;
    /// helpers start at staggered depths to diversify the shared table.
    fn iterate(
        &mut self,
        shared: &Shared,
        pos: &Chess,
        limits: &SearchLimits,
        legal_moves: usize,
        on_info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        let max_depth = limits
            .depth
            .map_or(MAX_DEPTH, |d| (d as i32).clamp(1, MAX_DEPTH));
        let mut result = SearchResult {
            best_move: None,
            score: 0,
            pv: Vec::new(),
            depth: 0,
            seldepth: 0,
            nodes: 0,
        };
        let mut previous_score = 0;
        let mut stability_scale = 1.0;
        let start_depth = 1 + (self.id % 2) as i32;
        for depth in start_depth..=max_depth {
            // Aspiration window around the previous score.
            let mut delta = self.sp.aspiration_delta;
            let (mut alpha, mut beta) = if depth >= self.sp.aspiration_min_depth {
                (
                    (previous_score - delta).max(-INFINITY),
                    (previous_score + delta).min(INFINITY),
                )
            } else {
                (-INFINITY, INFINITY)
            };
            let mut score;
            loop {
                score = self.negamax(shared, pos, depth, alpha, beta, 0, false);
                if self.stopped {
                    break;
                }
                if score <= alpha {
                    beta = (alpha + beta) / 2;
                    alpha = (score - delta).max(-INFINITY);
                } else if score >= beta {
                    beta = (score + delta).min(INFINITY);
                } else {
                    break;
                }
                delta += delta * self.sp.aspiration_widen_percent / 100;
                if self.id == 0 {
                    self.report(shared, depth, score, alpha, beta, on_info);
                }
            }
            // A move that raised alpha at the root was fully searched, so
            // even an aborted iteration's best move is usable.
            if self.root_best.is_some() {
                let changed = result.best_move != self.root_best;
                result.best_move = self.root_best;
                result.pv = self.root_pv.clone();
                result.score = self.root_score;
                if changed && depth > 1 {
                    stability_scale += fraction(self.sp.tm_instability_percent);
                }
            }
            if self.stopped {
                break;
            }
            result.depth = depth as u32;
            result.score = score;
            previous_score = score;
            if self.id == 0 {
                self.report(shared, depth, score, -INFINITY, INFINITY, on_info);
                if legal_moves == 1 && self.deadline.budget.is_some() {
                    break;
                }
                let stable_scale = fraction(self.sp.tm_stable_percent);
                stability_scale = (stability_scale * 0.5 + stable_scale * 0.5).max(stable_scale);
                if self
                    .deadline
                    .soft_expired(stability_scale * self.node_share_scale(result.best_move))
                {
                    break;
                }
                if mate_in_moves(score).is_some_and(|m| m.abs() * 2 < depth)
                    && limits.depth.is_none()
                    && limits.nodes.is_none()
                    && self.deadline.budget.is_some()
                {
                    break;
                }
            }
            if self.id != 0 && shared.helpers_stop.load(Ordering::Relaxed) {
                break;
            }
        }
        result.seldepth = self.seldepth as u32;
        result
    }

    /// Adds `nodes` to the count of root move `m`.
    fn add_root_move_nodes(&mut self, m: Move, nodes: u64) {
        match self.root_move_nodes.iter_mut().find(|(r, _)| *r == m) {
            Some((_, n)) => *n += nodes,
            None => self.root_move_nodes.push((m, nodes)),
        }
    }

    /// The soft limit's scale from the share of the search's nodes spent
    /// under the best move: below 1 when it took nearly all of them (the
    /// alternatives were refuted quickly), above 1 when the others needed
    /// real work.
    fn node_share_scale(&self, best: Option<Move>) -> f64 {
        let best_nodes = self
            .root_move_nodes
            .iter()
            .find(|(r, _)| Some(*r) == best)
            .map_or(0, |(_, n)| *n);
        let share = best_nodes as f64 / self.nodes.max(1) as f64;
        let base = fraction(self.sp.tm_node_base_percent);
        let slope = fraction(self.sp.tm_node_slope_percent);
        let min = fraction(self.sp.tm_node_min_percent);
        (base + slope * (1.0 - share)).max(min)
    }

    fn report(
        &self,
        shared: &Shared,
        depth: i32,
        score: i32,
        alpha: i32,
        beta: i32,
        on_info: &mut dyn FnMut(&SearchInfo),
    ) {
        let bound = if score <= alpha {
            Bound::Upper
        } else if score >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        };
        let nodes = shared.nodes.load(Ordering::Relaxed) + self.nodes - self.published_nodes;
        on_info(&SearchInfo {
            depth: depth as u32,
            seldepth: self.seldepth as u32,
            score,
            bound,
            nodes,
            elapsed: self.deadline.elapsed(),
            hashfull: self.tt.hashfull(),
            pv: self.root_pv.clone(),
        });
    }

    /// One iteration of [`Searcher::score_within`] on a prepared worker:
    /// whether the `depth`-ply score of `pos` lies within `±bound`.
    fn within_bound(&mut self, shared: &Shared, pos: &Chess, depth: i32, bound: i32) -> bool {
        let above = self.negamax(shared, pos, depth, bound, INFINITY, 0, false);
        // Fail-soft: at most `bound` means an upper bound of the score,
        // which may already lie below `-bound`.
        if above > bound || above < -bound {
            return false;
        }
        let below = self.negamax(shared, pos, depth, -INFINITY, -bound, 0, false);
        below >= -bound
    }
}

/// How many tried quiet moves a node remembers for history maluses.
const MAX_QUIETS_TRIED: usize = 64;

/// A chess searcher: owns its thread-local tables and a transposition table
/// shared with its helper threads (see the module documentation).
pub struct Searcher {
    params: Arc<Params>,
    search_params: SearchParams,
    tt: Arc<TranspositionTable>,
    stop: Arc<AtomicBool>,
    workers: Vec<Worker>,
}

impl Searcher {
    /// A one-thread searcher with a `tt_megabytes` MB transposition table.
    pub fn new(params: Arc<Params>, tt_megabytes: usize) -> Self {
        let tt = Arc::new(TranspositionTable::new(tt_megabytes));
        let search_params = SearchParams::default();
        Searcher {
            workers: vec![Worker::new(0, &params, search_params, tt.clone())],
            params,
            search_params,
            tt,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The flag that stops a running search when set. The search never
    /// clears it: the caller resets it before starting the next search.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Makes the searcher obey `flag` (e.g. one Ctrl-C flag shared by many
    /// searchers) instead of its own stop flag.
    pub fn set_stop_flag(&mut self, flag: Arc<AtomicBool>) {
        self.stop = flag;
    }

    /// The evaluation weights in use.
    pub fn params(&self) -> &Arc<Params> {
        &self.params
    }

    /// Replaces the evaluation weights (and clears the tables, whose scores
    /// came from the old weights).
    pub fn set_params(&mut self, params: Arc<Params>) {
        self.params = params.clone();
        let packed = PackedParams::new(&params);
        for w in &mut self.workers {
            w.params = packed.clone();
            w.pawn_king.clear();
        }
        self.new_game();
    }

    /// The search parameters in use.
    pub fn search_params(&self) -> &SearchParams {
        &self.search_params
    }

    /// Replaces the search parameters (the tables are kept: they hold
    /// scores and moves, which do not depend on how the search prunes).
    pub fn set_search_params(&mut self, search_params: SearchParams) {
        self.search_params = search_params;
        let lmr = lmr_table(&search_params);
        for w in &mut self.workers {
            w.sp = search_params;
            w.lmr = lmr.clone();
        }
    }

    /// Resizes the transposition table (its content is lost).
    ///
    /// # Errors
    /// [`TtAllocError`] when the memory cannot be allocated; the old table
    /// is kept.
    pub fn set_hash_megabytes(&mut self, megabytes: usize) -> Result<(), TtAllocError> {
        // Free the old table first so that its memory can be reused.
        let old_megabytes = self.tt.megabytes().max(1);
        self.tt = Arc::new(TranspositionTable::new(1));
        for w in &mut self.workers {
            w.tt = self.tt.clone();
        }
        let (tt, result) = match TranspositionTable::try_new(megabytes) {
            Ok(tt) => (tt, Ok(())),
            Err(e) => (TranspositionTable::new(old_megabytes), Err(e)),
        };
        self.tt = Arc::new(tt);
        for w in &mut self.workers {
            w.tt = self.tt.clone();
        }
        result
    }

    /// Number of search threads (at least 1).
    pub fn threads(&self) -> usize {
        self.workers.len()
    }

    /// Sets the number of search threads (Lazy SMP).
    pub fn set_threads(&mut self, threads: usize) {
        let threads = threads.max(1);
        self.workers.truncate(threads);
        while self.workers.len() < threads {
            let id = self.workers.len();
            self.workers.push(Worker::new(
                id,
                &self.params,
                self.search_params,
                self.tt.clone(),
            ));
        }
    }

    /// Forgets everything learnt (transposition table, history, …): call
    /// between games, or before a search that must be reproducible.
    pub fn new_game(&mut self) {
        if self.tt.is_large_and_used() {
            // A fresh allocation is all zero pages at once (the old table
            // goes back first); if it fails, zero the old one.
            let megabytes = self.tt.megabytes();
            if self.set_hash_megabytes(megabytes).is_err() {
                self.tt.clear();
            }
        }
        self.tt.clear();
        for w in &mut self.workers {
            w.tables.clear();
            w.correction.clear();
        }
    }

    /// Searches `pos` under `limits`. `history_keys` are the keys
    /// ([`crate::chess::position::key`]) of the game's earlier positions, oldest
    /// first, `pos` excluded (for repetition detection; may be empty).
    /// `on_info` is called after each iteration (and aspiration failure).
    pub fn search(
        &mut self,
        pos: &Chess,
        history_keys: &[u64],
        limits: &SearchLimits,
        mut on_info: impl FnMut(&SearchInfo),
    ) -> SearchResult {
        let deadline = Deadline::start(if let Some(t) = limits.movetime {
            Some(TimeBudget::for_movetime(t, limits.move_overhead))
        } else {
            limits
                .clock
                .as_ref()
                .map(|c| TimeBudget::for_clock(c, limits.move_overhead, &self.search_params))
        });
        let mut legal = pos.legal_moves();
        // `searchmoves`: the legal ones among them, or every move when none
        // is legal.
        let root_moves: Vec<Move> = legal
            .iter()
            .filter(|m| limits.root_moves.contains(m))
            .copied()
            .collect();
        if !root_moves.is_empty() {
            legal.retain(|m| root_moves.contains(m));
        }
        let legal_count = legal.len();
        if legal.is_empty() {
            let score = if pos.is_check() {
                -MATE_SCORE
            } else {
                DRAW_SCORE
            };
            return SearchResult {
                best_move: None,
                score,
                pv: Vec::new(),
                depth: 0,
                seldepth: 0,
                nodes: 0,
            };
        }
        self.tt.new_search();
        let shared = Shared::new(self.stop.clone());
        let threads = self.workers.len();
        for w in &mut self.workers {
            w.prepare(pos, history_keys, limits, &root_moves, threads);
            w.deadline = deadline;
        }
        let (main, helpers) = self.workers.split_first_mut().expect("one worker");
        let mut result = std::thread::scope(|scope| {
            for helper in helpers.iter_mut() {
                let shared = &shared;
                scope.spawn(move || {
                    helper.iterate(shared, pos, limits, legal_count, &mut |_| {});
                });
            }
            let result = main.iterate(&shared, pos, limits, legal_count, &mut on_info);
            shared.helpers_stop.store(true, Ordering::Relaxed);
            result
        });
        let total: u64 = self.workers.iter().map(|w| w.nodes).sum();
        result.nodes = total;
        if result.best_move.is_none() {
            // A limit or a stop ended the first iteration before its first
            // root move was searched: any legal move rather than none.
            result.best_move = Some(legal[0]);
            result.pv = vec![legal[0]];
        }
        result
    }

    /// Resolves `pos` by quiescence search (full window, no transposition
    /// table, no limits): returns the quiet position at the end of the
    /// quiescence principal variation and the score of `pos` from its side
    /// to move's point of view. Deterministic.
    pub fn resolve(&mut self, pos: &Chess) -> (Chess, i32) {
        let shared = Shared::new(self.stop.clone());
        let worker = &mut self.workers[0];
        worker.prepare_resolve();
        let score = worker.qsearch(&shared, pos, -INFINITY, INFINITY, 0);
        let mut leaf = pos.clone();
        for m in worker.pv_line(0) {
            leaf.play_unchecked(m);
        }
        (leaf, score)
    }

    /// Whether the score of a `depth`-ply search of `pos` lies within
    /// `±bound` centipawns, i.e. `|score| <= bound` (a mate score is beyond
    /// any bound below [`MATE_BOUND`]). `history_keys` are as for
    /// [`Searcher::search`].
    ///
    /// It answers the question a [`Searcher::search`] with
    /// [`SearchLimits::depth`] would answer, with the same principal
    /// variation search and quiescence search, but asks only about the bound
    /// instead of finding the exact score: at depth `depth`, a search with
    /// the root window `(bound, ∞)` tells whether the score is above `bound`
    /// and, unless its fail-soft result already settles it, one with
    /// `(-∞, -bound)` whether it is below `-bound`. Root moves that cannot
    /// reach the bound are refuted by null-window searches, and a move that
    /// seems to reach it is searched again with the full window, as in a
    /// full search. The shallower iterations of iterative deepening (there
    /// for move ordering) search with `(-∞, -bound)` only. At depth 2 this
    /// takes about 40% of the nodes of [`Searcher::search`]. Pruning in the
    /// null-window searches depends on their window, so in borderline cases
    /// the answer can differ from that of a full-window search: at depth 2
    /// and bound 200 the two disagreed on 1.6% of 8,000 positions from game
    /// collections, three times out of four in the direction of "within";
    /// the deeper the search, the more it prunes and the more often it
    /// answers "within" where the full search does not (at depth 3, 2.3%
    /// of 16,000 such positions, while the reverse happens in 0.3%).
    ///
    /// Runs on the calling thread only (helper threads are not used) and
    /// cannot be stopped (fixed-depth searches are short); deterministic for
    /// a given searcher state.
    pub fn score_within(
        &mut self,
        pos: &Chess,
        history_keys: &[u64],
        depth: u32,
        bound: i32,
    ) -> BoundTest {
        let bound = bound.clamp(0, MATE_SCORE);
        let depth = (depth as i32).clamp(1, MAX_DEPTH);
        let shared = Shared::new(self.stop.clone());
        self.tt.new_search();
        let worker = &mut self.workers[0];
        worker.prepare(pos, history_keys, &SearchLimits::default(), &[], 1);
        // The earlier iterations only look for a move that holds the lower
        // bound: the cheapest way to give the last one a hash move at the
        // root and the entries of its first line (asking both questions at
        // every depth costs a quarter more nodes and agrees no better with
        // the full-window search).
        for iteration in 1..depth {
            worker.negamax(&shared, pos, iteration, -INFINITY, -bound, 0, false);
        }
        let within = worker.within_bound(&shared, pos, depth, bound);
        BoundTest {
            within,
            nodes: worker.nodes,
        }
    }
}

/// The answer of [`Searcher::score_within`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundTest {
    /// Whether the score lies within the bound.
    pub within: bool,
    /// Nodes searched to find out.
    pub nodes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cached_lmr_table_is_the_computed_one() {
        let default = SearchParams::default();
        assert_eq!(lmr_table(&default), compute_lmr_table(&default));
        let other = SearchParams {
            lmr_base_percent: default.lmr_base_percent + 25,
            ..default
        };
        assert_eq!(lmr_table(&other), compute_lmr_table(&other));
        assert_ne!(lmr_table(&other), lmr_table(&default));
    }

    #[test]
    fn only_a_safe_pawn_step_to_the_seventh_rank_is_extended() {
        let extended = |fen: &str, uci: &str| {
            let pos = crate::chess::position::parse_fen(fen).unwrap();
            let (_, m) = crate::chess::position::play_uci(&pos, uci).unwrap();
            pawn_reaches_seventh_safely(&pos, m)
        };
        // White to the seventh rank, the square safe.
        assert!(extended("4k3/8/2P5/8/8/8/8/4K3 w - - 0 1", "c6c7"));
        // Black to its seventh (the second rank), also by a capture.
        assert!(extended("4k3/8/8/8/8/6p1/8/K7 b - - 0 1", "g3g2"));
        assert!(extended("4k3/8/8/8/8/6p1/7N/K7 b - - 0 1", "g3h2"));
        // The square is lost to the exchange: a rook takes, nothing retakes.
        assert!(!extended("2r1k3/8/2P5/8/8/8/8/4K3 w - - 0 1", "c6c7"));
        // Defended, so the exchange is even: extended.
        assert!(extended("2r1k3/8/2P5/8/8/8/8/2R1K3 w - - 0 1", "c6c7"));
        // Not the seventh rank (a promotion is on the eighth), or not a pawn.
        assert!(!extended("4k3/8/8/2P5/8/8/8/4K3 w - - 0 1", "c5c6"));
        assert!(!extended("4k3/2P5/8/8/8/8/8/4K3 w - - 0 1", "c7c8q"));
        assert!(!extended("4k3/8/2R5/8/8/8/8/4K3 w - - 0 1", "c6c7"));
        // White's pawn on its second rank going nowhere near promotion.
        assert!(!extended("4k3/8/8/8/8/8/2P5/4K3 w - - 0 1", "c2c3"));
    }

    #[test]
    fn mate_distances() {
        assert_eq!(mate_in_moves(MATE_SCORE - 1), Some(1));
        assert_eq!(mate_in_moves(MATE_SCORE - 3), Some(2));
        assert_eq!(mate_in_moves(-MATE_SCORE + 2), Some(-1));
        assert_eq!(mate_in_moves(-MATE_SCORE), Some(0));
        assert_eq!(mate_in_moves(150), None);
    }

    #[test]
    fn score_within_agrees_with_the_search_on_clear_cases() {
        use crate::chess::position::parse_fen;
        let fens = [
            // Start position: about equal.
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            // White takes an undefended queen.
            "4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1",
            // Black to move has lost its queen.
            "4k3/8/8/8/8/8/3R4/3QK3 b - - 0 1",
            // Checkmated, and stalemated.
            "R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1",
            "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
        ];
        for fen in fens {
            let pos = parse_fen(fen).unwrap();
            let mut searcher = Searcher::new(Arc::new(Params::defaults()), 1);
            let score = searcher
                .search(&pos, &[], &SearchLimits::depth(2), |_| {})
                .score;
            for bound in [0, 100, 200, 500, MATE_SCORE] {
                if (score.abs() - bound).abs() < 50 {
                    continue;
                }
                let test = searcher.score_within(&pos, &[], 2, bound);
                assert_eq!(test.within, score.abs() <= bound, "{fen} {score} {bound}");
            }
        }
    }
}
