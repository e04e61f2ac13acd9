//! Compact storage of traced positions: the records the epoch's kernels
//! ([`crate::kernel`]) read, the trace cache stores and `--stream` reads.
//!
//! A position is one variable-length record in a shared byte array, found
//! through a 32-bit start (relative to a 64-bit base every 2¹⁶ positions).
//! The record holds, exactly (nothing is rounded):
//!
//! * a header byte: phase (0 … 24, 5 bits), side to move (1 bit), result
//!   (2 bits); a flags byte: search score, endgame scales other than normal,
//!   king danger of White, of Black (bits 0 … 3) and the number of *large*
//!   coefficients (counts other than ±1 and ±2: bits 4 … 7, or 15 and a
//!   `u16` after the symbol count); the number of symbols (one byte, or 255
//!   and a `u16`);
//! * when flagged: the search score (`i16`, White-relative), both endgame
//!   scales (`u8` each), and per side with king danger a mask of its nonzero
//!   counts followed by those counts;
//! * the coefficients of ±1 and ±2 in ascending entry order as one *symbol*
//!   byte each (see [`SYMBOLS`]): a symbol stands for an entry difference
//!   and a count of ±1 (differences 1 … 100) or ±2 (1 … 24), or for a jump
//!   of 24 … 192 entries without a count (for the rare longer differences);
//!   97% of the coefficients are ±1 or ±2, and 96% of the differences at
//!   most 100;
//! * the large coefficients: entry (`u16`) and count (an `i8`, or −128 and
//!   an `i16`).
//!
//! Every symbol is one byte, so the kernels decode a position without a
//! branch per coefficient: one table read and an addition.
//!
//! On real data (`masters-quiet-labeled.epd`, 35 coefficients per position
//! with the evaluation of the time) this was about 48 bytes per position,
//! starts included, against 167 for separate `u16`/`i16` arrays; with
//! today's evaluation (45 coefficients) it is 62. Training holds self-play
//! positions as differences between neighbours instead
//! ([`crate::run_set`]): 37 bytes per position.

use engine::eval::danger::FEATURES;
use engine::eval::{DangerCounts, MAX_PHASE, SCALE_NORMAL, TaperInfo, Trace, trace_with};
use engine::formats::labeled::GameResult;
use shakmaty::{Chess, Color, Position};

/// A game result as the objectives use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Outcome {
    /// White lost.
    Loss = 0,
    /// Draw.
    Draw = 1,
    /// White won.
    Win = 2,
}

impl From<GameResult> for Outcome {
    fn from(r: GameResult) -> Self {
        match r {
            GameResult::WhiteWin => Outcome::Win,
            GameResult::Draw => Outcome::Draw,
            GameResult::BlackWin => Outcome::Loss,
        }
    }
}

impl Outcome {
    /// White's score: 0, 0.5 or 1.
    pub fn white_score(self) -> f64 {
        self as u8 as f64 / 2.0
    }

    fn from_bits(bits: u8) -> Option<Outcome> {
        match bits {
            0 => Some(Outcome::Loss),
            1 => Some(Outcome::Draw),
            2 => Some(Outcome::Win),
            _ => None,
        }
    }
}

/// Positions per 64-bit base of the record starts.
const BASE_SHIFT: u32 = 16;

/// Flag: a search score follows.
const HAS_SCORE: u8 = 1;
/// Flag: both endgame scales follow (else both are [`SCALE_NORMAL`]).
const HAS_SCALES: u8 = 2;
/// Flag: White's king-danger counts follow (then Black's flag is `<< 1`).
const HAS_DANGER: u8 = 4;
/// Every flag.
const FLAGS: u8 = HAS_SCORE | HAS_SCALES | HAS_DANGER | HAS_DANGER << 1;
/// The flags byte's top bits: the number of large coefficients.
const LARGE_SHIFT: u32 = 4;

/// Traced positions, in a fixed order (see the module documentation for
/// the record layout).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceSet {
    /// The records, back to back.
    bytes: Vec<u8>,
    /// Start of record `i`, relative to `bases[i >> BASE_SHIFT]`.
    starts: Vec<u32>,
    /// Byte position of records `0`, `2^BASE_SHIFT`, …
    bases: Vec<u64>,
}

/// The per-position facts the kernels need.
#[derive(Clone, Copy, Debug)]
pub struct PositionView<'a> {
    /// The coefficient symbols (see [`SYMBOLS`]).
    pub symbols: &'a [u8],
    /// Number of large coefficients.
    pub large_count: usize,
    /// The large coefficients (and whatever follows the record).
    pub large: &'a [u8],
    /// Phase (0 … 24).
    pub phase: u8,
    /// Endgame scale when White is stronger, of 128.
    pub scale_white: u8,
    /// Endgame scale when Black is stronger.
    pub scale_black: u8,
    /// Which sides have king-danger counts (bit 0 White, bit 1 Black).
    pub danger_sides: u8,
    /// Per side with counts: a mask of the nonzero features, then their
    /// counts (see [`PositionView::danger_counts`]).
    pub danger: &'a [u8],
    /// The side to move.
    pub turn: Color,
    /// The result.
    pub outcome: Outcome,
    /// Search score, White-relative, if known.
    pub score: Option<f64>,
}

/// Symbol count escape: a `u16` follows.
const LONG_COUNT: u8 = 255;
/// Large-coefficient count in the flags byte's top four bits announcing a
/// `u16` count after the symbol count.
const LONG_LARGE: u8 = 15;

/// Largest entry difference of a ±1 symbol.
const MAX_DELTA_ONE: usize = 100;
/// Largest entry difference of a ±2 symbol.
const MAX_DELTA_TWO: usize = 24;
/// Jump symbols skip `JUMP × k` entries, `k` = 1 … [`JUMPS`].
const JUMP: usize = 24;
/// Number of jump symbols.
const JUMPS: usize = 8;
/// First symbol of each kind: +1, −1, +2, −2, jump.
const FIRST_PLUS_ONE: usize = 0;
const FIRST_MINUS_ONE: usize = FIRST_PLUS_ONE + MAX_DELTA_ONE;
const FIRST_PLUS_TWO: usize = FIRST_MINUS_ONE + MAX_DELTA_ONE;
const FIRST_MINUS_TWO: usize = FIRST_PLUS_TWO + MAX_DELTA_TWO;
const FIRST_JUMP: usize = FIRST_MINUS_TWO + MAX_DELTA_TWO;
const _: () = assert!(FIRST_JUMP + JUMPS == 256, "the symbols fill one byte");
// Jumps leave a difference of 1 … JUMP, which every count's symbols reach.
const _: () = assert!(MAX_DELTA_ONE >= JUMP && MAX_DELTA_TWO >= JUMP);
/// The large count byte announcing an `i16`.
const WIDE_COUNT: i8 = i8::MIN;

/// What a coefficient symbol stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// The entry difference to the previous symbol's entry (≥ 1).
    pub delta: u8,
    /// The count: ±1 or ±2, 0 for a jump.
    pub coef: i8,
}

/// Every symbol's meaning, by byte value (the alphabet is chosen for the
/// statistics of real traces: see the module documentation).
pub const SYMBOLS: [Symbol; 256] = {
    let mut out = [Symbol { delta: 0, coef: 0 }; 256];
    let mut d = 1;
    while d <= MAX_DELTA_ONE {
        let delta = d as u8;
        out[FIRST_PLUS_ONE + d - 1] = Symbol { delta, coef: 1 };
        out[FIRST_MINUS_ONE + d - 1] = Symbol { delta, coef: -1 };
        if d <= MAX_DELTA_TWO {
            out[FIRST_PLUS_TWO + d - 1] = Symbol { delta, coef: 2 };
            out[FIRST_MINUS_TWO + d - 1] = Symbol { delta, coef: -2 };
        }
        d += 1;
    }
    let mut k = 1;
    while k <= JUMPS {
        out[FIRST_JUMP + k - 1] = Symbol {
            delta: (JUMP * k) as u8,
            coef: 0,
        };
        k += 1;
    }
    out
};

/// The coefficients of a position, `(entry, White-relative count)`: those
/// of ±1 and ±2 in ascending entry order, then the larger ones in ascending
/// entry order.
#[derive(Clone, Debug)]
pub struct Entries<'a> {
    symbols: std::slice::Iter<'a, u8>,
    large: std::slice::Iter<'a, u8>,
    large_left: usize,
    entry: usize,
}

impl Iterator for Entries<'_> {
    type Item = (usize, i16);

    fn next(&mut self) -> Option<(usize, i16)> {
        for &b in self.symbols.by_ref() {
            let s = SYMBOLS[b as usize];
            self.entry = self.entry.wrapping_add(s.delta as usize);
            if s.coef != 0 {
                return Some((self.entry, s.coef as i16));
            }
        }
        if self.large_left == 0 {
            return None;
        }
        self.large_left -= 1;
        let (entry, coef) = read_large(&mut self.large).expect("a complete record");
        Some((entry as usize, coef))
    }
}

/// Reads one large coefficient: its entry (`u16`) and count (an `i8`, or
/// −128 and an `i16`).
#[inline(always)]
pub(crate) fn read_large(bytes: &mut std::slice::Iter<u8>) -> Option<(u16, i16)> {
    let entry = u16::from_le_bytes([*bytes.next()?, *bytes.next()?]);
    let b = *bytes.next()? as i8;
    if b != WIDE_COUNT {
        return Some((entry, b as i16));
    }
    Some((entry, i16::from_le_bytes([*bytes.next()?, *bytes.next()?])))
}

/// Appends the symbols of one coefficient of ±1 or ±2, `delta` (≥ 1)
/// entries after the previous symbol's.
fn encode_symbol(symbols: &mut Vec<u8>, mut delta: usize, coef: i16) {
    debug_assert!(delta >= 1 && matches!(coef, -2..=-1 | 1..=2));
    let reach = if coef.unsigned_abs() == 1 {
        MAX_DELTA_ONE
    } else {
        MAX_DELTA_TWO
    };
    while delta > reach {
        let k = ((delta - 1) / JUMP).clamp(1, JUMPS);
        symbols.push((FIRST_JUMP + k - 1) as u8);
        delta -= JUMP * k;
    }
    let first = match coef {
        1 => FIRST_PLUS_ONE,
        -1 => FIRST_MINUS_ONE,
        2 => FIRST_PLUS_TWO,
        _ => FIRST_MINUS_TWO,
    };
    symbols.push((first + delta - 1) as u8);
}

/// Appends one large coefficient (see [`read_large`]).
fn encode_large(large: &mut Vec<u8>, entry: u16, coef: i16) {
    large.extend_from_slice(&entry.to_le_bytes());
    match i8::try_from(coef) {
        Ok(c) if c != WIDE_COUNT => large.push(c as u8),
        _ => {
            large.push(WIDE_COUNT as u8);
            large.extend_from_slice(&coef.to_le_bytes());
        }
    }
}

/// A malformed record (only a corrupt cache can hold one).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed trace record at byte {at}: {reason}")]
pub struct RecordError {
    /// Byte offset of the record.
    pub at: usize,
    /// What is wrong.
    pub reason: &'static str,
}

/// The labels of a position besides its coefficients.
struct Labels<'a> {
    taper: &'a TaperInfo,
    turn: Color,
    danger: [DangerCounts; 2],
    outcome: Outcome,
    score_white: Option<i32>,
}

impl TraceSet {
    /// An empty set.
    pub fn new() -> Self {
        TraceSet::default()
    }

    /// An empty set with room for `positions` positions of about `bytes`
    /// bytes in all.
    pub fn with_capacity(positions: usize, bytes: usize) -> Self {
        TraceSet {
            bytes: Vec::with_capacity(bytes),
            starts: Vec::with_capacity(positions),
            bases: Vec::new(),
        }
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// True when there are no positions.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Bytes of records (what the trace cache stores besides the starts).
    pub fn record_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Byte position of record `i`.
    #[inline(always)]
    fn start(&self, i: usize) -> usize {
        (self.bases[i >> BASE_SHIFT] + self.starts[i] as u64) as usize
    }

    /// Byte range of record `i`.
    #[inline(always)]
    pub(crate) fn record_range(&self, i: usize) -> std::ops::Range<usize> {
        self.range(i)
    }

    /// The records, back to back.
    pub(crate) fn record_bytes_slice(&self) -> &[u8] {
        &self.bytes
    }

    /// Byte range of record `i`.
    #[inline(always)]
    fn range(&self, i: usize) -> std::ops::Range<usize> {
        let end = if i + 1 < self.len() {
            self.start(i + 1)
        } else {
            self.bytes.len()
        };
        self.start(i)..end
    }

    /// Registers a record beginning at the end of `bytes`.
    fn begin_record(&mut self) {
        let at = self.bytes.len() as u64;
        if self.starts.len().is_multiple_of(1 << BASE_SHIFT) {
            self.bases.push(at);
        }
        let base = *self.bases.last().expect("a base");
        self.starts
            .push(u32::try_from(at - base).expect("2^16 records fit in 4 GB"));
    }

    /// Appends a traced position with its result and optional search score
    /// (White-relative).
    pub fn push(&mut self, trace: &Trace, result: GameResult, score_white: Option<i32>) {
        let mut coefs: Vec<(u16, i16)> = trace.entries.iter().map(|t| (t.entry, t.coef)).collect();
        self.push_record(
            &mut coefs,
            &Labels {
                taper: &trace.taper,
                turn: trace.turn,
                danger: trace.danger,
                outcome: result.into(),
                score_white,
            },
        );
    }

    /// Traces `pos` and appends it (as [`TraceSet::push`] of its trace,
    /// without the intermediate [`Trace`]).
    pub fn push_position(&mut self, pos: &Chess, result: GameResult, score_white: Option<i32>) {
        let mut coefs = Vec::with_capacity(64);
        let (taper, danger) = trace_with(pos, |t| coefs.push((t.entry, t.coef)));
        self.push_record(
            &mut coefs,
            &Labels {
                taper: &taper,
                turn: pos.turn(),
                danger,
                outcome: result.into(),
                score_white,
            },
        );
    }

    /// Appends a record with the labels of `v` (phase, scales, side to
    /// move, king danger, result, score) and the coefficients `coefs`
    /// instead of its own (in any order; repeated entries are summed and
    /// zeros dropped).
    pub fn push_with_coefficients(&mut self, v: &PositionView, coefs: &mut Vec<(u16, i16)>) {
        let taper = TaperInfo {
            phase: v.phase.into(),
            scale_white: v.scale_white.into(),
            scale_black: v.scale_black.into(),
        };
        self.push_record(
            coefs,
            &Labels {
                taper: &taper,
                turn: v.turn,
                danger: v.danger_counts(),
                outcome: v.outcome,
                score_white: v.score.map(|s| s as i32),
            },
        );
    }

    fn push_record(&mut self, coefs: &mut Vec<(u16, i16)>, l: &Labels) {
        // Sorted by entry, each entry once, no zeros: as the encoder of
        // runs gives them (a trace lists each entry once; be safe).
        let canonical =
            coefs.windows(2).all(|w| w[0].0 < w[1].0) && coefs.iter().all(|&(_, c)| c != 0);
        if !canonical {
            coefs.sort_unstable_by_key(|&(e, _)| e);
            coefs.dedup_by(|b, a| {
                if a.0 == b.0 {
                    a.1 += b.1;
                    true
                } else {
                    false
                }
            });
            coefs.retain(|&(_, c)| c != 0);
        }
        let large_count = coefs.iter().filter(|&&(_, c)| c.unsigned_abs() > 2).count();
        self.begin_record();
        let phase = u8::try_from(l.taper.phase)
            .ok()
            .filter(|&p| p < 32)
            .expect("phase fits in 5 bits");
        let black = u8::from(l.turn == Color::Black);
        self.bytes.push(phase | black << 5 | (l.outcome as u8) << 6);
        let normal = |s: i32| s == SCALE_NORMAL;
        let scales = !(normal(l.taper.scale_white) && normal(l.taper.scale_black));
        let mut flags = 0;
        if l.score_white.is_some() {
            flags |= HAS_SCORE;
        }
        if scales {
            flags |= HAS_SCALES;
        }
        for (side, d) in l.danger.iter().enumerate() {
            if !d.is_empty() {
                flags |= HAS_DANGER << side;
            }
        }
        let short_large = u8::try_from(large_count).ok().filter(|&m| m < LONG_LARGE);
        self.bytes
            .push(flags | short_large.unwrap_or(LONG_LARGE) << LARGE_SHIFT);
        // The symbol count, written once the symbols are (a long count
        // makes room for itself then).
        let count_at = self.bytes.len();
        self.bytes.push(0);
        if short_large.is_none() {
            let m = u16::try_from(large_count).expect("large coefficient count fits in u16");
            self.bytes.extend_from_slice(&m.to_le_bytes());
        }
        if let Some(s) = l.score_white {
            let s = s.clamp(i16::MIN as i32, i16::MAX as i32) as i16;
            self.bytes.extend_from_slice(&s.to_le_bytes());
        }
        if scales {
            for s in [l.taper.scale_white, l.taper.scale_black] {
                self.bytes
                    .push(u8::try_from(s).expect("endgame scale fits in u8"));
            }
        }
        for d in &l.danger {
            if d.is_empty() {
                continue;
            }
            let mask = (0..FEATURES).fold(0u8, |m, k| m | u8::from(d.0[k] != 0) << k);
            self.bytes.push(mask);
            self.bytes.extend(d.0.iter().filter(|&&c| c != 0));
        }
        let symbols_at = self.bytes.len();
        let mut previous: isize = -1;
        for &(e, c) in coefs.iter().filter(|&&(_, c)| c.unsigned_abs() <= 2) {
            encode_symbol(&mut self.bytes, (e as isize - previous) as usize, c);
            previous = e as isize;
        }
        let symbols = self.bytes.len() - symbols_at;
        match u8::try_from(symbols) {
            Ok(n) if n < LONG_COUNT => self.bytes[count_at] = n,
            _ => {
                let n = u16::try_from(symbols).expect("symbol count fits in u16");
                self.bytes[count_at] = LONG_COUNT;
                self.bytes
                    .splice(count_at + 1..count_at + 1, n.to_le_bytes());
            }
        }
        for &(e, c) in coefs.iter().filter(|&&(_, c)| c.unsigned_abs() > 2) {
            encode_large(&mut self.bytes, e, c);
        }
    }

    /// Appends the raw record `bytes` (one whole record).
    fn push_raw(&mut self, record: &[u8]) {
        self.begin_record();
        self.bytes.extend_from_slice(record);
    }

    /// Appends position `i` of `other`.
    pub fn push_record_of(&mut self, other: &TraceSet, i: usize) {
        self.push_raw(&other.bytes[other.range(i)]);
    }

    /// Appends every position of `other`, taking its records without a
    /// copy when this set is empty.
    pub fn append(&mut self, other: TraceSet) {
        if self.is_empty() {
            *self = other;
        } else {
            self.extend(&other);
        }
    }

    /// Appends every position of `other`.
    pub fn extend(&mut self, other: &TraceSet) {
        self.bytes.reserve(other.bytes.len());
        self.starts.reserve(other.len());
        for i in 0..other.len() {
            let at = self.bytes.len() as u64 + other.start(i) as u64;
            if self.starts.len().is_multiple_of(1 << BASE_SHIFT) {
                self.bases.push(at);
            }
            let base = *self.bases.last().expect("a base");
            self.starts.push((at - base) as u32);
        }
        self.bytes.extend_from_slice(&other.bytes);
    }

    /// A new set with the positions at `indices`, in that order.
    pub fn select(&self, indices: &[usize]) -> TraceSet {
        let bytes: usize = indices.iter().map(|&i| self.range(i).len()).sum();
        let mut out = TraceSet::with_capacity(indices.len(), bytes);
        for &i in indices {
            out.push_raw(&self.bytes[self.range(i)]);
        }
        out
    }

    /// Splits the set in two, keeping the order: the positions `i` with
    /// `take(i)` move to the returned set, the others stay. Works in place:
    /// memory grows only by the positions taken.
    pub fn split_off_where(&mut self, take: impl Fn(usize) -> bool) -> TraceSet {
        let n = self.len();
        let mut taken = TraceSet::new();
        let old_bases = std::mem::take(&mut self.bases);
        let start =
            |starts: &[u32], i: usize| (old_bases[i >> BASE_SHIFT] + starts[i] as u64) as usize;
        let mut write = 0usize;
        let mut kept = 0usize;
        let total = self.bytes.len();
        let mut next = if n > 0 { start(&self.starts, 0) } else { 0 };
        for i in 0..n {
            let (a, b) = (
                next,
                if i + 1 < n {
                    start(&self.starts, i + 1)
                } else {
                    total
                },
            );
            next = b;
            if take(i) {
                taken.push_raw(&self.bytes[a..b]);
                continue;
            }
            self.bytes.copy_within(a..b, write);
            if kept.is_multiple_of(1 << BASE_SHIFT) {
                self.bases.push(write as u64);
            }
            self.starts[kept] = (write as u64 - self.bases.last().expect("a base")) as u32;
            kept += 1;
            write += b - a;
        }
        self.bytes.truncate(write);
        self.starts.truncate(kept);
        self.shrink_to_fit();
        taken.shrink_to_fit();
        taken
    }

    /// Position `i`.
    #[inline(always)]
    pub fn view(&self, i: usize) -> PositionView<'_> {
        self.view_at(self.start(i))
    }

    /// The position whose record starts at byte `at` (see
    /// [`TraceSet::record_range`]).
    #[inline(always)]
    pub(crate) fn view_at(&self, at: usize) -> PositionView<'_> {
        PositionView::decode(&self.bytes[at..])
    }

    /// Releases spare capacity (after building).
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.starts.shrink_to_fit();
        self.bases.shrink_to_fit();
    }

    /// Bytes of heap memory a set of `positions` positions with
    /// `record_bytes` bytes of records takes (without spare capacity).
    pub fn heap_bytes_for(positions: usize, record_bytes: usize) -> usize {
        record_bytes + positions * 4 + positions.div_ceil(1 << BASE_SHIFT) * 8
    }

    /// Bytes of heap memory used (capacity, not length).
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.starts.capacity() * 4 + self.bases.capacity() * 8
    }

    /// Number of positions with a search score.
    pub fn scored(&self) -> usize {
        (0..self.len())
            .filter(|&i| self.bytes[self.start(i) + 1] & HAS_SCORE != 0)
            .count()
    }

    /// A hash of the content: coefficients, phase and scales, side to
    /// move, king-danger counts, results and search scores (for checking
    /// that a resumed run sees the same data).
    pub fn fingerprint(&self) -> u64 {
        let mut h = Hasher::new();
        h.write_u64(self.len() as u64);
        h.write(&self.bytes);
        h.finish()
    }

    /// The records and the positions' starts, for writing.
    pub fn raw_parts(&self) -> (&[u8], impl Iterator<Item = u64> + '_) {
        (&self.bytes, (0..self.len()).map(|i| self.start(i) as u64))
    }

    /// A set from records and their starts (as [`TraceSet::raw_parts`]
    /// gives them), each record checked.
    ///
    /// # Errors
    /// The first record that is malformed or does not end where the next
    /// begins.
    pub fn from_raw_parts(bytes: Vec<u8>, starts: &[u64]) -> Result<TraceSet, RecordError> {
        use rayon::prelude::*;
        /// Records checked per unit of parallel work.
        const CHECK_CHUNK: usize = 4096;
        let n = starts.len();
        // Every record ends where the next begins (checked in parallel).
        (0..n.div_ceil(CHECK_CHUNK))
            .into_par_iter()
            .try_for_each(|c| {
                for i in c * CHECK_CHUNK..((c + 1) * CHECK_CHUNK).min(n) {
                    let s = starts[i] as usize;
                    let end = starts.get(i + 1).map_or(bytes.len(), |&e| e as usize);
                    if (i == 0 && s != 0) || end < s || end > bytes.len() {
                        return Err(RecordError {
                            at: s,
                            reason: "record starts out of order",
                        });
                    }
                    let len = PositionView::checked_len(&bytes[s..end])
                        .map_err(|reason| RecordError { at: s, reason })?;
                    if len != end - s {
                        return Err(RecordError {
                            at: s,
                            reason: "record length differs from its start table",
                        });
                    }
                }
                Ok(())
            })?;
        if n == 0 && !bytes.is_empty() {
            return Err(RecordError {
                at: 0,
                reason: "bytes after the last record",
            });
        }
        let mut set = TraceSet {
            bytes,
            starts: Vec::with_capacity(n),
            bases: Vec::new(),
        };
        for (i, &s) in starts.iter().enumerate() {
            if i.is_multiple_of(1 << BASE_SHIFT) {
                set.bases.push(s);
            }
            set.starts
                .push((s - set.bases.last().expect("a base")) as u32);
        }
        Ok(set)
    }
}

/// A fast 64-bit hash of bytes (multiply–rotate over 8-byte words; a
/// checksum against corruption, not a cryptographic hash).
#[derive(Clone, Debug)]
pub struct Hasher {
    h: u64,
    length: u64,
}

impl Default for Hasher {
    fn default() -> Self {
        Hasher::new()
    }
}

impl Hasher {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;

    /// A new hasher.
    pub fn new() -> Self {
        Hasher {
            h: 0x243f_6a88_85a3_08d3,
            length: 0,
        }
    }

    #[inline(always)]
    fn mix(&mut self, w: u64) {
        self.h = (self.h ^ w).wrapping_mul(Self::K).rotate_left(29);
    }

    /// Adds bytes. Hashing `a` then `b` equals hashing `a ++ b` only when
    /// `a`'s length is a multiple of 8.
    pub fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.mix(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(last));
        }
        self.length += bytes.len() as u64;
    }

    /// Adds a number.
    pub fn write_u64(&mut self, v: u64) {
        self.mix(v);
        self.length += 8;
    }

    /// The hash.
    pub fn finish(&self) -> u64 {
        let mut h = self.h ^ self.length;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h
    }
}

impl<'a> PositionView<'a> {
    /// Decodes the record at the start of `bytes` (which may go on past
    /// it).
    #[inline(always)]
    pub(crate) fn decode(bytes: &'a [u8]) -> PositionView<'a> {
        let b0 = bytes[0];
        let flags = bytes[1];
        let mut at = 3;
        let mut count = bytes[2] as usize;
        if bytes[2] == LONG_COUNT {
            count = u16::from_le_bytes([bytes[3], bytes[4]]) as usize;
            at = 5;
        }
        let mut large_count = (flags >> LARGE_SHIFT) as usize;
        if flags >> LARGE_SHIFT == LONG_LARGE {
            large_count = u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize;
            at += 2;
        }
        let mut score = None;
        if flags & HAS_SCORE != 0 {
            score = Some(i16::from_le_bytes([bytes[at], bytes[at + 1]]) as f64);
            at += 2;
        }
        let normal = SCALE_NORMAL as u8;
        let (mut scale_white, mut scale_black) = (normal, normal);
        if flags & HAS_SCALES != 0 {
            scale_white = bytes[at];
            scale_black = bytes[at + 1];
            at += 2;
        }
        let danger_at = at;
        for side in 0..2 {
            // No branch: a side without counts reads a mask of 0.
            let present = (flags >> (2 + side)) & 1;
            let mask = bytes.get(at).copied().unwrap_or(0) * present;
            at += (present as u32 + mask.count_ones()) as usize;
        }
        let (symbols, large) = bytes[at..].split_at(count);
        PositionView {
            symbols,
            large_count,
            large,
            phase: b0 & 31,
            scale_white,
            scale_black,
            danger_sides: (flags >> 2) & 3,
            danger: &bytes[danger_at..at],
            turn: if b0 & 32 != 0 {
                Color::Black
            } else {
                Color::White
            },
            outcome: Outcome::from_bits(b0 >> 6).unwrap_or(Outcome::Draw),
            score,
        }
    }

    /// The length of the record at the start of `bytes`, checking every
    /// field (`bytes` may end anywhere).
    fn checked_len(bytes: &[u8]) -> Result<usize, &'static str> {
        let get = |i: usize| bytes.get(i).copied().ok_or("record cut short");
        let b0 = get(0)?;
        let flags = get(1)?;
        if b0 & 31 > MAX_PHASE as u8 {
            return Err("phase out of range");
        }
        if Outcome::from_bits(b0 >> 6).is_none() {
            return Err("unknown result");
        }
        if flags & !FLAGS & ((1 << LARGE_SHIFT) - 1) != 0 {
            return Err("unknown flags");
        }
        // Enough bytes for the header's widest form before decoding it.
        let mut at = 3;
        let count = if get(2)? == LONG_COUNT {
            at = 5;
            u16::from_le_bytes([get(3)?, get(4)?]) as usize
        } else {
            get(2)? as usize
        };
        let mut large_count = (flags >> LARGE_SHIFT) as usize;
        if flags >> LARGE_SHIFT == LONG_LARGE {
            large_count = u16::from_le_bytes([get(at)?, get(at + 1)?]) as usize;
            at += 2;
        }
        if large_count > engine::eval::NUM_ENTRIES {
            return Err("more large coefficients than entries");
        }
        at += 2 * usize::from(flags & HAS_SCORE != 0) + 2 * usize::from(flags & HAS_SCALES != 0);
        for side in 0..2 {
            if flags & HAS_DANGER << side != 0 {
                let mask = get(at)?;
                if mask == 0 {
                    return Err("empty king-danger mask");
                }
                at += 1 + mask.count_ones() as usize;
            }
        }
        get(at.saturating_sub(1))?;
        if bytes.len() - at < count {
            return Err("record cut short");
        }
        let (symbols, rest) = bytes[at..].split_at(count);
        let mut entry: usize = usize::MAX;
        let mut last_coef = 0;
        for &b in symbols {
            let s = SYMBOLS[b as usize];
            entry = entry.wrapping_add(s.delta as usize);
            if entry >= engine::eval::NUM_ENTRIES {
                return Err("entry index out of range");
            }
            last_coef = s.coef;
        }
        if count > 0 && last_coef == 0 {
            return Err("record ends with a jump");
        }
        let mut large = rest.iter();
        for _ in 0..large_count {
            let (entry, coef) = read_large(&mut large).ok_or("record cut short")?;
            if entry as usize >= engine::eval::NUM_ENTRIES {
                return Err("entry index out of range");
            }
            if coef == 0 {
                return Err("large coefficient of 0");
            }
        }
        Ok(bytes.len() - large.len())
    }

    /// The coefficients, `(entry, White-relative count)` (see [`Entries`]
    /// for their order).
    pub fn entries(&self) -> Entries<'a> {
        Entries {
            symbols: self.symbols.iter(),
            large: self.large.iter(),
            large_left: self.large_count,
            entry: usize::MAX,
        }
    }

    /// Number of coefficients (decodes them).
    pub fn len(&self) -> usize {
        self.entries().count()
    }

    /// White's and Black's king-danger counts.
    pub fn danger_counts(&self) -> [DangerCounts; 2] {
        let mut out = [DangerCounts::NONE; 2];
        let mut bytes = self.danger.iter();
        for (side, d) in out.iter_mut().enumerate() {
            if self.danger_sides & 1 << side == 0 {
                continue;
            }
            let mask = *bytes.next().expect("a complete record");
            for (k, slot) in d.0.iter_mut().enumerate() {
                if mask & 1 << k != 0 {
                    *slot = *bytes.next().expect("a complete record");
                }
            }
        }
        out
    }

    /// True without coefficients.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty() && self.large_count == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::eval::{NUM_ENTRIES, TraceEntry, trace};

    use crate::test_data::positions;

    /// Another set's fingerprint differs.
    #[test]
    fn fingerprints_tell_sets_apart() {
        let mut set = TraceSet::new();
        for (pos, result) in positions(300) {
            set.push_position(&pos, result, None);
        }
        let fewer = set.select(&(0..299).collect::<Vec<_>>());
        assert_ne!(fewer.fingerprint(), set.fingerprint());
        assert_eq!(set.clone().fingerprint(), set.fingerprint());
    }

    /// Coefficients, [phase, scales], danger, turn, result, score.
    type Facts = (
        Vec<(usize, i16)>,
        [f64; 3],
        [DangerCounts; 2],
        Color,
        Outcome,
        Option<f64>,
    );

    /// What a view says, in the trace's terms.
    fn facts(v: &PositionView) -> Facts {
        let mut entries: Vec<(usize, i16)> = v.entries().collect();
        entries.sort_unstable();
        (
            entries,
            [v.phase as f64, v.scale_white as f64, v.scale_black as f64],
            v.danger_counts(),
            v.turn,
            v.outcome,
            v.score,
        )
    }

    fn expected(t: &Trace, result: GameResult, score: Option<i32>) -> Facts {
        let mut e: Vec<(usize, i16)> = t
            .entries
            .iter()
            .map(|x| (x.entry as usize, x.coef))
            .collect();
        e.sort_unstable();
        (
            e,
            [
                t.taper.phase as f64,
                t.taper.scale_white as f64,
                t.taper.scale_black as f64,
            ],
            t.danger,
            t.turn,
            result.into(),
            score.map(|s| s as f64),
        )
    }

    #[test]
    fn records_decode_to_the_traces_exactly() {
        let mut set = TraceSet::new();
        let mut want = Vec::new();
        for (i, (pos, result)) in positions(3000).into_iter().enumerate() {
            let score = (i % 3 == 0).then_some(i as i32 * 7 - 9000);
            if i % 2 == 0 {
                set.push_position(&pos, result, score);
            } else {
                set.push(&trace(&pos), result, score);
            }
            want.push(expected(&trace(&pos), result, score));
        }
        assert_eq!(set.len(), 3000);
        for (i, w) in want.iter().enumerate() {
            assert_eq!(&facts(&set.view(i)), w, "position {i}");
        }
        assert_eq!(set.scored(), 1000);
        // Real data: well under the old 4 bytes per coefficient.
        let coefficients: usize = (0..set.len()).map(|i| set.view(i).len()).sum();
        assert!(set.record_bytes() < coefficients * 3 / 2 + 8 * set.len());
    }

    #[test]
    fn escapes_cover_far_entries_and_large_counts() {
        let (pos, _) = positions(1).pop().unwrap();
        let mut t = trace(&pos);
        let last = (NUM_ENTRIES - 1) as u16;
        t.entries = [
            (0, 3),
            (1, -1),
            (63, 1),
            (64, -2),
            (200, 1),
            (456, -1),
            (457, 127),
            (458, -128),
            (459, 300),
            (last, -32768),
        ]
        .into_iter()
        .map(|(entry, coef)| TraceEntry { entry, coef })
        .collect();
        t.taper.scale_white = 64;
        t.taper.scale_black = 0;
        t.danger[1].0 = [0, 3, 0, 255, 1, 0, 0, 1];
        let mut set = TraceSet::new();
        set.push(&t, GameResult::BlackWin, Some(-40000));
        set.push(&t, GameResult::Draw, None);
        let (a, b) = (
            expected(&t, GameResult::BlackWin, Some(i16::MIN as i32)),
            expected(&t, GameResult::Draw, None),
        );
        assert_eq!(facts(&set.view(0)), a);
        assert_eq!(facts(&set.view(1)), b);
        // More than 254 coefficients use the long count.
        t.entries = (0..600)
            .map(|e| TraceEntry {
                entry: e,
                coef: 1 + (e % 5) as i16,
            })
            .collect();
        set.push(&t, GameResult::WhiteWin, None);
        assert_eq!(
            facts(&set.view(2)),
            expected(&t, GameResult::WhiteWin, None)
        );
        let (bytes, starts) = set.raw_parts();
        let starts: Vec<u64> = starts.collect();
        assert_eq!(
            TraceSet::from_raw_parts(bytes.to_vec(), &starts).unwrap(),
            set
        );
    }

    #[test]
    fn splitting_in_place_keeps_both_orders() {
        let mut set = TraceSet::new();
        for (pos, result) in positions(500) {
            set.push_position(&pos, result, None);
        }
        let all = set.clone();
        let taken = set.split_off_where(|i| i % 3 == 1);
        let want_taken: Vec<usize> = (0..500).filter(|i| i % 3 == 1).collect();
        let want_kept: Vec<usize> = (0..500).filter(|i| i % 3 != 1).collect();
        assert_eq!(taken, all.select(&want_taken));
        assert_eq!(set, all.select(&want_kept));
        let mut joined = TraceSet::new();
        joined.extend(&set);
        joined.extend(&taken);
        assert_eq!(joined.len(), 500);
        assert_eq!(facts(&joined.view(set.len())), facts(&all.view(1)));
    }

    #[test]
    fn corrupt_records_are_refused() {
        let mut set = TraceSet::new();
        for (pos, result) in positions(20) {
            set.push_position(&pos, result, Some(5));
        }
        let (bytes, starts) = set.raw_parts();
        let starts: Vec<u64> = starts.collect();
        let bytes = bytes.to_vec();
        let mut cut = bytes.clone();
        cut.pop();
        assert!(TraceSet::from_raw_parts(cut, &starts).is_err());
        let mut bad_phase = bytes.clone();
        bad_phase[starts[3] as usize] |= 31;
        assert!(TraceSet::from_raw_parts(bad_phase, &starts).is_err());
        let mut shifted = starts.clone();
        shifted[5] += 1;
        assert!(TraceSet::from_raw_parts(bytes.clone(), &shifted).is_err());
        assert_eq!(TraceSet::from_raw_parts(bytes, &starts).unwrap(), set);
    }
}
