//! Move ordering: static exchange evaluation, the ordering tables a searcher
//! learns during a search (history, countermoves, killers), and the picker
//! that hands moves to the search best-first. Quiet moves rank by their
//! histories plus the position's threats: a piece attacked by a lesser one
//! that moves out of the attack comes early, one walking into it late.
//!
//! Invariants: the picker only ever returns moves from the legal move list it
//! was given, each exactly once; the hash move is matched by its 16-bit code
//! against that list, so a corrupted or colliding table entry cannot inject
//! an illegal move. History scores stay within `±HISTORY_MAX` through the
//! "gravity" update, which also makes the maluses of tried quiet moves decay.

use arrayvec::ArrayVec;
use shakmaty::attacks::{bishop_attacks, knight_attacks, pawn_attacks, rook_attacks};
use shakmaty::{Bitboard, Chess, Color, Move, MoveList, Position, Role, Square};

use super::score::MAX_PLY;
use super::tt::encode_move;
use crate::chess::movegen::attackers_to;

/// Piece values used for exchange evaluation and MVV/LVA ordering.
pub const fn see_value(role: Role) -> i32 {
    match role {
        Role::Pawn => 100,
        Role::Knight => 320,
        Role::Bishop => 330,
        Role::Rook => 500,
        Role::Queen => 950,
        Role::King => 20_000,
    }
}

/// Bound of history scores (in absolute value).
pub const HISTORY_MAX: i32 = 16_384;

/// Ordering score of the hash move: searched first.
const SCORE_HASH_MOVE: i32 = 1 << 30;
/// Base of captures and queen promotions that do not lose material.
const SCORE_GOOD_CAPTURE: i32 = 1 << 28;
/// First killer move.
const SCORE_KILLER_1: i32 = (1 << 27) + 2;
/// Second killer move.
const SCORE_KILLER_2: i32 = (1 << 27) + 1;
/// Countermove of the opponent's last move.
const SCORE_COUNTERMOVE: i32 = 1 << 27;
/// Base of captures losing material by SEE (searched after all quiet moves).
const SCORE_BAD_CAPTURE: i32 = -(1 << 28);
/// Under-promotions: almost never right, searched last.
const SCORE_UNDERPROMOTION: i32 = -(1 << 29);

/// `value` moved by `bonus` (clamped to `±limit`) with gravity towards 0:
/// the larger `value` already is in the bonus's direction, the less it
/// moves, so a value within `±limit` stays within it. The update of every
/// history the search learns (move ordering and correction history).
#[inline]
pub fn gravity(value: i32, bonus: i32, limit: i32) -> i32 {
    let bonus = bonus.clamp(-limit, limit);
    value + bonus - value * bonus.abs() / limit
}

/// MVV/LVA key: most valuable victim first, then least valuable attacker.
pub fn mvv_lva(m: Move) -> i32 {
    let victim = m.capture().map_or(0, see_value) + m.promotion().map_or(0, see_value);
    victim * 8 - m.role() as i32
}

/// Static exchange evaluation: does playing `m` win at least `threshold`
/// centipawns once all captures on the target square are resolved (each side
/// recapturing with its least valuable piece, and free to stop)? Pins are
/// ignored; castling counts as 0.
pub fn see_ge(pos: &Chess, m: Move, threshold: i32) -> bool {
    let (from, to) = match m {
        Move::Normal { from, to, .. } | Move::EnPassant { from, to } => (from, to),
        _ => return 0 >= threshold,
    };
    let promotion_gain = m
        .promotion()
        .map_or(0, |r| see_value(r) - see_value(Role::Pawn));
    let mut swap = m.capture().map_or(0, see_value) + promotion_gain - threshold;
    if swap < 0 {
        return false;
    }
    let moved = m.promotion().unwrap_or(m.role());
    swap = see_value(moved) - swap;
    if swap <= 0 {
        return true;
    }
    let board = pos.board();
    let mut occupied = board.occupied().without(from).with(to);
    if let Move::EnPassant { .. } = m {
        let captured = Square::from_coords(to.file(), from.rank());
        occupied = occupied.without(captured);
    }
    let mut side = pos.turn();
    let mut attackers = attackers_to(pos, to, occupied);
    let mut result = true;
    loop {
        side = !side;
        attackers &= occupied;
        let ours = attackers & board.by_color(side);
        if ours.is_empty() {
            break;
        }
        result = !result;
        let Some(role) = [
            Role::Pawn,
            Role::Knight,
            Role::Bishop,
            Role::Rook,
            Role::Queen,
            Role::King,
        ]
        .into_iter()
        .find(|&r| (ours & board.by_role(r)).any()) else {
            break;
        };
        if role == Role::King {
            // The king may only recapture if the other side has nothing left.
            return if (attackers & board.by_color(!side)).any() {
                !result
            } else {
                result
            };
        }
        swap = see_value(role) - swap;
        if swap < result as i32 {
            break;
        }
        let sq = (ours & board.by_role(role))
            .first()
            .expect("non-empty attacker set");
        occupied = occupied.without(sq);
        // Sliders behind the piece that just captured join in (x-rays).
        attackers |= (rook_attacks(to, occupied) & board.rooks_and_queens())
            | (bishop_attacks(to, occupied) & board.bishops_and_queens());
    }
    result
}

/// The tables a searcher learns from its own search to order quiet moves.
#[derive(Clone)]
pub struct OrderingTables {
    /// Butterfly history `[colour][from][to]`.
    history: Vec<i32>,
    /// Countermoves `[colour][role][to]` of the opponent's previous move.
    countermoves: Vec<Option<Move>>,
    /// Two killer moves per ply.
    killers: Vec<[Option<Move>; 2]>,
    /// Continuation history `[previous piece][previous to][piece][to]`: how
    /// good a quiet move was as a follow-up to the move one or two plies
    /// earlier.
    continuation: Vec<i32>,
}

/// The moves played one and two plies before a node (`None` for a null
/// move or the root), which index the continuation history.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MoveContext {
    /// The opponent's last move.
    pub previous: Option<Move>,
    /// Our own move before it.
    pub before_previous: Option<Move>,
}

/// A [`MoveContext`] resolved once per node into the table offsets that
/// score its quiet moves.
#[derive(Clone, Copy, Debug)]
pub struct QuietContext {
    us: Color,
    previous_base: Option<usize>,
    before_previous_base: Option<usize>,
}

impl QuietContext {
    /// The offsets for quiet moves of `us` after the moves of `context`.
    pub fn new(us: Color, context: MoveContext) -> Self {
        QuietContext {
            us,
            previous_base: context.previous.map(|p| continuation_base(!us, p)),
            before_previous_base: context.before_previous.map(|p| continuation_base(us, p)),
        }
    }
}

/// Number of distinct (colour, role) pieces.
const PIECE_KINDS: usize = 12;

fn piece_index(color: Color, m: Move) -> usize {
    (color as usize) * 6 + (m.role() as usize - 1)
}

/// Start of the continuation-history block of the previous move `prev`
/// (played by `prev_color`).
#[inline]
fn continuation_base(prev_color: Color, prev: Move) -> usize {
    (piece_index(prev_color, prev) * 64 + prev.to() as usize) * PIECE_KINDS * 64
}

/// Offset of the move `m` of `color` inside a continuation-history block.
#[inline]
fn continuation_offset(color: Color, m: Move) -> usize {
    piece_index(color, m) * 64 + m.to() as usize
}

impl Default for OrderingTables {
    fn default() -> Self {
        Self::new()
    }
}

fn history_index(color: Color, m: Move) -> usize {
    let from = m.from().map_or(0, |s| s as usize);
    (color as usize) * 4096 + from * 64 + m.to() as usize
}

fn countermove_index(color: Color, previous: Move) -> usize {
    (color as usize) * 7 * 64 + (previous.role() as usize) * 64 + previous.to() as usize
}

impl OrderingTables {
    /// Empty tables.
    pub fn new() -> Self {
        OrderingTables {
            history: vec![0; 2 * 64 * 64],
            countermoves: vec![None; 2 * 7 * 64],
            killers: vec![[None; 2]; MAX_PLY + 2],
            continuation: vec![0; PIECE_KINDS * 64 * PIECE_KINDS * 64],
        }
    }

    /// Forgets everything (new game).
    pub fn clear(&mut self) {
        self.history.fill(0);
        self.countermoves.fill(None);
        self.continuation.fill(0);
        self.clear_killers();
    }

    /// Forgets the killers (new search: they belong to another tree).
    pub fn clear_killers(&mut self) {
        self.killers.fill([None; 2]);
    }

    /// History score of a quiet move for `color`.
    pub fn history(&self, color: Color, m: Move) -> i32 {
        self.history[history_index(color, m)]
    }

    /// Ordering score of a quiet move: butterfly history plus the
    /// continuation histories of the two previous moves.
    #[inline(always)]
    pub fn quiet_score(&self, m: Move, context: &QuietContext) -> i32 {
        let color = context.us;
        let mut score = self.history[history_index(color, m)];
        let offset = continuation_offset(color, m);
        if let Some(base) = context.previous_base {
            score += self.continuation[base + offset];
        }
        if let Some(base) = context.before_previous_base {
            score += self.continuation[base + offset];
        }
        score
    }

    /// Adds `bonus` (negative for a malus) to a quiet move's histories with
    /// gravity towards 0, keeping each within `±HISTORY_MAX`.
    pub fn update_quiet(&mut self, m: Move, context: &QuietContext, bonus: i32) {
        let learn = |h: &mut i32| *h = gravity(*h, bonus, HISTORY_MAX);
        let color = context.us;
        learn(&mut self.history[history_index(color, m)]);
        let offset = continuation_offset(color, m);
        if let Some(base) = context.previous_base {
            learn(&mut self.continuation[base + offset]);
        }
        if let Some(base) = context.before_previous_base {
            learn(&mut self.continuation[base + offset]);
        }
    }

    /// Killer moves at `ply`.
    pub fn killers(&self, ply: usize) -> [Option<Move>; 2] {
        self.killers[ply]
    }

    /// Clears the killers at `ply` (its subtree is about to be searched anew).
    pub fn reset_killers(&mut self, ply: usize) {
        self.killers[ply] = [None; 2];
    }

    /// Records a quiet move that caused a beta cutoff at `ply`.
    pub fn add_killer(&mut self, ply: usize, m: Move) {
        let k = &mut self.killers[ply];
        if k[0] != Some(m) {
            k[1] = k[0];
            k[0] = Some(m);
        }
    }

    /// The recorded reply of `color` to the opponent's `previous` move.
    pub fn countermove(&self, color: Color, previous: Option<Move>) -> Option<Move> {
        previous.and_then(|p| self.countermoves[countermove_index(color, p)])
    }

    /// Records `reply` as the refutation of `previous`.
    pub fn set_countermove(&mut self, color: Color, previous: Option<Move>, reply: Move) {
        if let Some(p) = previous {
            self.countermoves[countermove_index(color, p)] = Some(reply);
        }
    }
}

/// Whether a move is quiet (neither capture nor promotion).
pub fn is_quiet(m: Move) -> bool {
    !m.is_capture() && m.promotion().is_none()
}

/// What kind of move the picker returned (drives pruning decisions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveClass {
    /// The transposition-table move.
    Hash,
    /// A capture or promotion that does not lose material.
    GoodCapture,
    /// A killer or countermove.
    Refutation,
    /// Any other quiet move.
    Quiet,
    /// A capture losing material, or an under-promotion.
    BadCapture,
}

/// Hands out a position's legal moves best-first: selection sort on scores,
/// so a cutoff early saves sorting the rest. Captures are first ranked by
/// MVV/LVA and checked by SEE only when their turn comes; losing ones are
/// then demoted behind the quiet moves. Quiet moves other than killers and
/// the countermove are scored from the history tables only when the picker
/// reaches them (most cutoffs come from the hash move or a capture first).
/// The picker borrows the move list and the scores so that they are never
/// copied.
pub struct MovePicker<'a> {
    moves: &'a mut MoveList,
    scores: &'a mut MoveScores,
    next: usize,
    /// Quiet moves still carry [`SCORE_UNSCORED_QUIET`].
    quiets_unscored: bool,
    /// Index of the hash move, until it is returned (without a scan).
    hash_index: Option<usize>,
    /// Set by [`MovePicker::skip_quiets`]: the rest comes in list order.
    unordered: bool,
    /// Ordering context of the quiet moves (main search only).
    quiet_context: Option<QuietContext>,
    /// The position's threats, once the quiet moves were scored.
    threats: Option<Threats>,
}

/// The ordering scores of a move list, one per move: storage the caller
/// lends a [`MovePicker`] (over a kilobyte, which a picker owning it would
/// copy when it is returned).
pub type MoveScores = ArrayVec<i32, 256>;

/// Ordering bonus of a quiet move that takes an attacked queen, rook or
/// minor piece out of its attack by a lesser piece (and malus of one that
/// puts it there), by the piece's type.
const ESCAPE_QUEEN: i32 = 20_000;
/// See [`ESCAPE_QUEEN`].
const ESCAPE_ROOK: i32 = 12_000;
/// See [`ESCAPE_QUEEN`].
const ESCAPE_MINOR: i32 = 8_000;

/// The squares the side not to move attacks with pieces worth less than a
/// queen, a rook and a minor piece: where those pieces of the side to move
/// stand threatened. A quiet move that takes a threatened piece to a square
/// not so attacked is an escape and is tried early; one that puts a safe
/// piece en prise to a lesser piece is tried late.
#[derive(Clone, Copy)]
struct Threats {
    /// Attacked by a pawn.
    by_pawn: Bitboard,
    /// Attacked by a pawn, knight or bishop.
    by_minor: Bitboard,
    /// Attacked by a pawn, minor piece or rook.
    by_rook: Bitboard,
}

impl Threats {
    fn of(pos: &Chess) -> Self {
        let board = pos.board();
        let them = board.by_color(!pos.turn());
        let occupied = board.occupied();
        let mut by_pawn = Bitboard::EMPTY;
        for sq in board.pawns() & them {
            by_pawn |= pawn_attacks(!pos.turn(), sq);
        }
        let mut by_minor = by_pawn;
        for sq in board.knights() & them {
            by_minor |= knight_attacks(sq);
        }
        for sq in board.bishops() & them {
            by_minor |= bishop_attacks(sq, occupied);
        }
        let mut by_rook = by_minor;
        for sq in board.rooks() & them {
            by_rook |= rook_attacks(sq, occupied);
        }
        Threats {
            by_pawn,
            by_minor,
            by_rook,
        }
    }

    /// The bonus (escape) or malus (walking into a threat) of quiet move
    /// `m`; 0 for pawns and kings, and for a threatened piece that moves to
    /// another threatened square.
    fn ordering_bonus(&self, m: Move) -> i32 {
        let (danger, value) = match m.role() {
            Role::Queen => (self.by_rook, ESCAPE_QUEEN),
            Role::Rook => (self.by_minor, ESCAPE_ROOK),
            Role::Knight | Role::Bishop => (self.by_pawn, ESCAPE_MINOR),
            Role::Pawn | Role::King => return 0,
        };
        let Some(from) = m.from() else { return 0 };
        match (danger.contains(from), danger.contains(m.to())) {
            (true, false) => value,
            (false, true) => -value,
            _ => 0,
        }
    }
}

/// Placeholder of a quiet move not yet scored: below the refutations, above
/// every history score.
const SCORE_UNSCORED_QUIET: i32 = SCORE_COUNTERMOVE - 1;

/// The class of a move from its ordering score.
#[inline]
fn class_of(score: i32) -> MoveClass {
    if score == SCORE_HASH_MOVE {
        MoveClass::Hash
    } else if score >= SCORE_GOOD_CAPTURE {
        MoveClass::GoodCapture
    } else if score >= SCORE_COUNTERMOVE {
        MoveClass::Refutation
    } else if score > SCORE_BAD_CAPTURE / 2 {
        MoveClass::Quiet
    } else {
        MoveClass::BadCapture
    }
}

#[inline]
fn hash_move_matches(hash_move: u16, m: Move) -> bool {
    hash_move != 0 && encode_move(m) == hash_move
}

impl<'a> MovePicker<'a> {
    /// A picker over `moves` with no score yet (`scores` emptied), which
    /// the constructors then fill, one score per move.
    #[inline(always)]
    fn unscored(
        moves: &'a mut MoveList,
        scores: &'a mut MoveScores,
        quiet_context: Option<QuietContext>,
    ) -> Self {
        scores.clear();
        MovePicker {
            moves,
            scores,
            next: 0,
            quiets_unscored: false,
            hash_index: None,
            unordered: false,
            quiet_context,
            threats: None,
        }
    }

    /// Orders moves for the main search; `scores` is its storage (any
    /// content is dropped).
    #[inline(always)]
    pub fn new(
        moves: &'a mut MoveList,
        scores: &'a mut MoveScores,
        hash_move: u16,
        tables: &OrderingTables,
        ply: usize,
        context: MoveContext,
        quiet_context: QuietContext,
    ) -> Self {
        let [k1, k2] = tables.killers(ply);
        let counter = tables.countermove(quiet_context.us, context.previous);
        // The refutations' codes sift the list cheaply (no move encodes to
        // u16::MAX, the code of "none"); a matching code is then confirmed
        // on the whole move.
        let code_of = |m: Option<Move>| m.map_or(u16::MAX, encode_move);
        let (k1_code, k2_code, counter_code) = (code_of(k1), code_of(k2), code_of(counter));
        let mut picker = MovePicker::unscored(moves, scores, Some(quiet_context));
        for (i, &m) in picker.moves.iter().enumerate() {
            picker.scores.push(if hash_move_matches(hash_move, m) {
                picker.hash_index = Some(i);
                SCORE_HASH_MOVE
            } else if let Some(promo) = m.promotion()
                && promo != Role::Queen
            {
                SCORE_UNDERPROMOTION + see_value(promo)
            } else if !is_quiet(m) {
                SCORE_GOOD_CAPTURE + mvv_lva(m)
            } else {
                let code = encode_move(m);
                if code == k1_code && Some(m) == k1 {
                    SCORE_KILLER_1
                } else if code == k2_code && Some(m) == k2 {
                    SCORE_KILLER_2
                } else if code == counter_code && Some(m) == counter {
                    SCORE_COUNTERMOVE
                } else {
                    picker.quiets_unscored = true;
                    SCORE_UNSCORED_QUIET
                }
            });
        }
        picker
    }

    /// Orders captures and queen promotions by MVV/LVA for quiescence (the
    /// caller passes only the moves it wants searched); `hash_move` first,
    /// losing captures (by SEE) last; `scores` as for [`MovePicker::new`].
    pub fn new_tactical(
        moves: &'a mut MoveList,
        scores: &'a mut MoveScores,
        hash_move: u16,
    ) -> Self {
        let mut picker = MovePicker::unscored(moves, scores, None);
        for (i, &m) in picker.moves.iter().enumerate() {
            picker.scores.push(if hash_move_matches(hash_move, m) {
                picker.hash_index = Some(i);
                SCORE_HASH_MOVE
            } else if is_quiet(m) {
                0
            } else {
                SCORE_GOOD_CAPTURE + mvv_lva(m)
            });
        }
        picker
    }

    /// Number of moves in the list.
    pub fn len(&self) -> usize {
        self.moves.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }

    /// The search will prune the remaining quiet moves (except checks), so
    /// their order no longer matters: from now on the moves left are handed
    /// out in list order, without scoring or scanning. Only call this once
    /// the good captures have all been returned (in the quiet phase).
    pub fn skip_quiets(&mut self) {
        self.unordered = true;
    }

    /// Scores the quiet moves still carrying the placeholder: their
    /// histories, and the [`Threats`] of `pos`. At most once per node: not
    /// inlined, so that `next_move` stays small.
    #[inline(never)]
    fn score_quiets(&mut self, pos: &Chess, tables: &OrderingTables) {
        self.quiets_unscored = false;
        let context = self
            .quiet_context
            .expect("quiet moves only in the main search");
        // The threats may be known already: a refutation's reduction asked
        // for them.
        let threats = *self.threats.get_or_insert_with(|| Threats::of(pos));
        for i in self.next..self.moves.len() {
            if self.scores[i] == SCORE_UNSCORED_QUIET {
                let m = self.moves[i];
                self.scores[i] = tables.quiet_score(m, &context) + threats.ordering_bonus(m);
            }
        }
    }

    /// The threat bonus of quiet move `m`: positive for a threatened
    /// piece's escape, negative for a walk into a lesser piece's attack. The
    /// threats of `pos` are computed when not yet known.
    pub fn threat_bonus(&mut self, pos: &Chess, m: Move) -> i32 {
        self.threats
            .get_or_insert_with(|| Threats::of(pos))
            .ordering_bonus(m)
    }

    /// The next best move and its class, or `None` when all were returned.
    /// `pos` is the position the moves belong to (for SEE and threats);
    /// `tables` score the quiet moves when their turn comes.
    #[inline(always)]
    pub fn next_move(&mut self, pos: &Chess, tables: &OrderingTables) -> Option<(Move, MoveClass)> {
        let n = self.moves.len();
        if let Some(h) = self.hash_index.take() {
            // The hash move is first by construction: no scan needed.
            debug_assert_eq!(self.next, 0);
            let m = self.moves[h];
            self.moves.swap(0, h);
            self.scores.swap(0, h);
            self.next = 1;
            return Some((m, MoveClass::Hash));
        }
        if self.unordered {
            if self.next >= n {
                return None;
            }
            let (m, s) = (self.moves[self.next], self.scores[self.next]);
            self.next += 1;
            return Some((m, class_of(s)));
        }
        loop {
            if self.next >= n {
                return None;
            }
            // The first of the best-scored moves left (as a scan keeping the
            // first strict maximum finds): the maximum, then its place.
            let rest = &self.scores[self.next..n];
            let s = rest.iter().copied().fold(i32::MIN, i32::max);
            let best = self.next + rest.iter().position(|&x| x == s).unwrap_or(0);
            if s == SCORE_UNSCORED_QUIET && self.quiets_unscored {
                self.score_quiets(pos, tables);
                continue;
            }
            let m = self.moves[best];
            if (SCORE_GOOD_CAPTURE..SCORE_HASH_MOVE).contains(&s) && !see_ge(pos, m, 0) {
                // A losing capture: its turn comes after the quiet moves.
                self.scores[best] = SCORE_BAD_CAPTURE + mvv_lva(m);
                continue;
            }
            self.moves.swap(self.next, best);
            self.scores.swap(self.next, best);
            self.next += 1;
            return Some((m, class_of(s)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::position::{parse_fen, play_uci};

    fn see(fen: &str, uci: &str, threshold: i32) -> bool {
        let pos = parse_fen(fen).unwrap();
        let (_, m) = play_uci(&pos, uci).unwrap();
        see_ge(&pos, m, threshold)
    }

    #[test]
    fn threatened_pieces_escape_first_and_walk_into_threats_last() {
        // Black's pawn on e4 attacks the knight on f3 (and d3); black's
        // rook on d8 attacks the queen on d1; black's knight on b6 attacks
        // a4 and c4.
        let fen = "3rk3/8/1n6/8/4p3/5N2/2B5/3QK3 w - - 0 1";
        let pos = parse_fen(fen).unwrap();
        let threats = Threats::of(&pos);
        let bonus = |uci: &str| threats.ordering_bonus(play_uci(&pos, uci).unwrap().1);
        assert_eq!(
            bonus("f3g5"),
            ESCAPE_MINOR,
            "the knight leaves the pawn's attack"
        );
        assert_eq!(bonus("c2d3"), -ESCAPE_MINOR, "the bishop walks into it");
        assert_eq!(bonus("c2b3"), 0, "safe to safe");
        assert_eq!(
            bonus("d1e2"),
            ESCAPE_QUEEN,
            "the queen leaves the rook's file"
        );
        assert_eq!(bonus("d1d3"), 0, "threatened on both squares");
        assert_eq!(bonus("e1f2"), 0, "kings are not scored");
        // With White to move the threats are Black's: the same position
        // with Black to move scores Black's pieces against White's attacks.
        let black = parse_fen("3rk3/8/1n6/8/4p3/5N2/2B5/3QK3 b - - 0 1").unwrap();
        let threats = Threats::of(&black);
        let bonus = |uci: &str| threats.ordering_bonus(play_uci(&black, uci).unwrap().1);
        assert_eq!(
            bonus("d8d4"),
            -ESCAPE_ROOK,
            "the rook walks into the knight's attack"
        );
        assert_eq!(bonus("b6d5"), 0, "White has no pawn to attack the knight");
    }

    #[test]
    fn see_examples() {
        // Rook takes an undefended pawn: +100.
        let fen = "1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1";
        assert!(see(fen, "e1e5", 100));
        assert!(!see(fen, "e1e5", 101));
        // Knight takes a pawn defended by a pawn: loses 220.
        let fen = "1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1";
        assert!(!see(fen, "d3e5", 0));
        assert!(see(fen, "d3e5", -220));
        // Quiet move to an attacked square loses the piece.
        let fen = "4k3/8/8/2p5/8/8/8/3RK3 w - - 0 1";
        assert!(!see(fen, "d1d4", 0));
    }

    #[test]
    fn picker_returns_every_move_once_hash_first() {
        let pos = parse_fen("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
            .unwrap();
        let moves = pos.legal_moves();
        let hash = moves[17];
        let tables = OrderingTables::new();
        let mut list = moves.clone();
        let mut scores = MoveScores::new();
        let mut picker = MovePicker::new(
            &mut list,
            &mut scores,
            encode_move(hash),
            &tables,
            0,
            MoveContext::default(),
            QuietContext::new(pos.turn(), MoveContext::default()),
        );
        let mut seen = Vec::new();
        while let Some((m, class)) = picker.next_move(&pos, &tables) {
            if seen.is_empty() {
                assert_eq!((m, class), (hash, MoveClass::Hash));
            }
            seen.push(m);
        }
        assert_eq!(seen.len(), moves.len());
        for m in &moves {
            assert!(seen.contains(m));
        }
    }
}
