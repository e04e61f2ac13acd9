//! Compact storage of traced positions and the two kernels of an epoch:
//! the evaluation of a position under continuous weights, and the
//! accumulation of the loss gradient.
//!
//! A position is one variable-length record in a shared byte array, found
//! through a 32-bit start (relative to a 64-bit base every 2¹⁶ positions).
//! The record holds, exactly (nothing is rounded):
//!
//! * a header byte: phase (0 … 24, 5 bits), side to move (1 bit), result
//!   (2 bits); a flags byte (search score, endgame scales other than
//!   normal, king danger of White, of Black); the number of coefficients
//!   (one byte, or 255 and a `u16`);
//! * when flagged: the search score (`i16`, White-relative), both endgame
//!   scales (`u8` each), and per side with king danger a mask of its nonzero
//!   counts followed by those counts;
//! * the coefficients in ascending entry order, each as the difference to
//!   the previous entry and its count. One byte holds a difference of 1 … 63
//!   and a count of ±1 or ±2 (88% of coefficients are ±1, 93% of the
//!   differences are at most 63); an escape byte (difference bits 0) is
//!   followed by a `u8` difference with a count of +1 or −1, by a `u8`
//!   difference and an `i8` count, or by a `u16` difference and an `i16`
//!   count.
//!
//! On real data (`masters-quiet-labeled.epd`, 35 coefficients per position)
//! this is about 50 bytes per position, starts included, against 167 for
//! separate `u16`/`i16` arrays.
//!
//! Weights are `f64` scalars in the engine's layout (`2 * entry` = mg,
//! `+ 1` = eg). The evaluation here is the engine's taper *without* its
//! final integer truncation, and reads the king-danger table through its
//! smooth relaxation ([`engine::eval::danger::interpolate`]), so its
//! gradient is exact in every weight, the attack units included, and
//! [`PositionView::evaluate`] differs from the engine's `evaluate` by less
//! than one centipawn for integer weights.

use engine::eval::danger::{self, FEATURES, Interpolation};
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
/// Coefficient count escape: a `u16` follows.
const LONG_COUNT: u8 = 255;
/// The count of a one-byte coefficient, by its top two bits.
const SHORT_COEF: [i16; 4] = [1, -1, 2, -2];
/// Escape forms (top two bits of a byte whose difference bits are 0).
const ESCAPE_PLUS: u8 = 0;
const ESCAPE_MINUS: u8 = 1;
const ESCAPE_BYTE: u8 = 2;
const ESCAPE_WIDE: u8 = 3;

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
    /// The coefficients (see [`PositionView::entries`]).
    coefficients: &'a [u8],
    /// Number of coefficients.
    count: usize,
    /// Phase (0 … 24).
    pub phase: f64,
    /// Endgame scale when White is stronger, of 128.
    pub scale_white: f64,
    /// Endgame scale when Black is stronger.
    pub scale_black: f64,
    /// White's and Black's king-danger counts.
    pub danger: [DangerCounts; 2],
    /// The side to move.
    pub turn: Color,
    /// The result.
    pub outcome: Outcome,
    /// Search score, White-relative, if known.
    pub score: Option<f64>,
}

/// The coefficients of a position: `(entry, White-relative count)` in
/// ascending entry order.
#[derive(Clone, Debug)]
pub struct Entries<'a> {
    bytes: &'a [u8],
    pos: usize,
    entry: usize,
    left: usize,
}

impl Iterator for Entries<'_> {
    type Item = (usize, i16);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, i16)> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let b = self.bytes[self.pos];
        let delta = (b & 63) as usize;
        if delta != 0 {
            self.pos += 1;
            self.entry = self.entry.wrapping_add(delta);
            return Some((self.entry, SHORT_COEF[(b >> 6) as usize]));
        }
        Some(self.escape(b >> 6))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl Entries<'_> {
    #[cold]
    fn escape(&mut self, form: u8) -> (usize, i16) {
        let mut rest = self.bytes[self.pos + 1..].iter();
        let (delta, coef) = read_escape(&mut rest, form);
        self.pos = self.bytes.len() - rest.len();
        self.entry = self.entry.wrapping_add(delta);
        (self.entry, coef)
    }
}

/// Reads the rest of an escaped coefficient of escape form `form`: the
/// entry difference and the count.
#[inline(always)]
fn read_escape(bytes: &mut std::slice::Iter<u8>, form: u8) -> (usize, i16) {
    let mut next = || *bytes.next().expect("a complete record");
    match form {
        ESCAPE_PLUS => (next() as usize, 1),
        ESCAPE_MINUS => (next() as usize, -1),
        ESCAPE_BYTE => (next() as usize, next() as i8 as i16),
        _ => (
            u16::from_le_bytes([next(), next()]) as usize,
            i16::from_le_bytes([next(), next()]),
        ),
    }
}

/// Appends one coefficient, `delta` (≥ 1) after the previous entry.
fn encode_entry(out: &mut Vec<u8>, delta: usize, coef: i16) {
    debug_assert!(delta >= 1 && coef != 0);
    let short = SHORT_COEF.iter().position(|&c| c == coef);
    match short {
        Some(code) if delta < 64 => out.push(delta as u8 | (code as u8) << 6),
        _ if delta < 256 && (coef == 1 || coef == -1) => {
            let form = if coef == 1 { ESCAPE_PLUS } else { ESCAPE_MINUS };
            out.extend_from_slice(&[form << 6, delta as u8]);
        }
        _ if delta < 256 && i8::try_from(coef).is_ok() => {
            out.extend_from_slice(&[ESCAPE_BYTE << 6, delta as u8, coef as i8 as u8]);
        }
        _ => {
            let d = u16::try_from(delta).expect("entry indices fit in u16");
            out.push(ESCAPE_WIDE << 6);
            out.extend_from_slice(&d.to_le_bytes());
            out.extend_from_slice(&coef.to_le_bytes());
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

    fn push_record(&mut self, coefs: &mut Vec<(u16, i16)>, l: &Labels) {
        coefs.sort_unstable_by_key(|&(e, _)| e);
        // Merge repeated entries (a trace lists each once; be safe).
        coefs.dedup_by(|b, a| {
            if a.0 == b.0 {
                a.1 += b.1;
                true
            } else {
                false
            }
        });
        coefs.retain(|&(_, c)| c != 0);
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
        self.bytes.push(flags);
        match u8::try_from(coefs.len()) {
            Ok(n) if n < LONG_COUNT => self.bytes.push(n),
            _ => {
                self.bytes.push(LONG_COUNT);
                let n = u16::try_from(coefs.len()).expect("coefficient count fits in u16");
                self.bytes.extend_from_slice(&n.to_le_bytes());
            }
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
        let mut previous: isize = -1;
        for &(e, c) in coefs.iter() {
            encode_entry(&mut self.bytes, (e as isize - previous) as usize, c);
            previous = e as isize;
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
        PositionView::decode(&self.bytes[self.start(i)..]).0
    }

    /// Releases spare capacity (after building).
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.starts.shrink_to_fit();
        self.bases.shrink_to_fit();
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
    /// Decodes the record at the start of `bytes`; also returns the length
    /// of its header (the coefficients follow).
    #[inline(always)]
    fn decode(bytes: &'a [u8]) -> (PositionView<'a>, usize) {
        let b0 = bytes[0];
        let flags = bytes[1];
        let mut at = 3;
        let mut count = bytes[2] as usize;
        if bytes[2] == LONG_COUNT {
            count = u16::from_le_bytes([bytes[3], bytes[4]]) as usize;
            at = 5;
        }
        let mut score = None;
        if flags & HAS_SCORE != 0 {
            score = Some(i16::from_le_bytes([bytes[at], bytes[at + 1]]) as f64);
            at += 2;
        }
        let (mut scale_white, mut scale_black) = (SCALE_NORMAL as f64, SCALE_NORMAL as f64);
        if flags & HAS_SCALES != 0 {
            scale_white = bytes[at] as f64;
            scale_black = bytes[at + 1] as f64;
            at += 2;
        }
        let mut danger = [DangerCounts::NONE; 2];
        for (side, d) in danger.iter_mut().enumerate() {
            if flags & HAS_DANGER << side != 0 {
                let mask = bytes[at];
                at += 1;
                for k in 0..FEATURES {
                    if mask & 1 << k != 0 {
                        d.0[k] = bytes[at];
                        at += 1;
                    }
                }
            }
        }
        let view = PositionView {
            coefficients: &bytes[at..],
            count,
            phase: (b0 & 31) as f64,
            scale_white,
            scale_black,
            danger,
            turn: if b0 & 32 != 0 {
                Color::Black
            } else {
                Color::White
            },
            outcome: Outcome::from_bits(b0 >> 6).unwrap_or(Outcome::Draw),
            score,
        };
        (view, at)
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
        if flags & !FLAGS != 0 {
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
        let mut rest = bytes[at..].iter();
        let mut entry: usize = usize::MAX;
        for _ in 0..count {
            let b = *rest.next().ok_or("record cut short")?;
            if b & 63 != 0 {
                entry = entry.wrapping_add((b & 63) as usize);
                continue;
            }
            let mut next = || rest.next().copied().ok_or("record cut short");
            let (delta, coef) = match b >> 6 {
                ESCAPE_PLUS => (next()? as usize, 1),
                ESCAPE_MINUS => (next()? as usize, -1),
                ESCAPE_BYTE => (next()? as usize, next()? as i8 as i16),
                _ => (
                    u16::from_le_bytes([next()?, next()?]) as usize,
                    i16::from_le_bytes([next()?, next()?]),
                ),
            };
            if delta == 0 || coef == 0 {
                return Err("zero entry difference or count");
            }
            entry = entry.wrapping_add(delta);
            if entry >= engine::eval::NUM_ENTRIES {
                return Err("entry index out of range");
            }
        }
        // Entries only grow: the last one bounds them all.
        if count > 0 && entry >= engine::eval::NUM_ENTRIES {
            return Err("entry index out of range");
        }
        let pos = bytes.len() - rest.len();
        Ok(pos)
    }

    /// The coefficients, `(entry, White-relative count)` in ascending entry
    /// order.
    #[inline(always)]
    pub fn entries(&self) -> Entries<'a> {
        Entries {
            bytes: self.coefficients,
            pos: 0,
            entry: usize::MAX,
            left: self.count,
        }
    }

    /// Number of coefficients.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True without coefficients.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// What the gradient of a position needs from its evaluation: the phase
/// factors and the king-danger interpolations.
#[derive(Clone, Copy, Debug)]
pub struct Partials {
    /// d eval / d mg-sum and d eval / d eg-sum (White-relative).
    pub factors: (f64, f64),
    /// Per side (White, Black) and phase (mg, eg): the relaxed table read
    /// (the table's first element, slope 0, for a side without counts).
    pub danger: [[Interpolation; 2]; 2],
}

/// A position's coefficients, decoded once by [`PositionView::evaluate`]
/// for [`PositionView::add_gradient`] (a buffer reused across positions).
#[derive(Clone, Debug, Default)]
pub struct Decoded {
    entries: Vec<u32>,
    coefs: Vec<f64>,
    len: usize,
}

/// Entry sign of each side's king danger in the White-relative sums.
const SIDE_SIGN: [f64; 2] = [1.0, -1.0];

/// [`SHORT_COEF`] as the kernels use it.
const SHORT_COEF_F64: [f64; 4] = [1.0, -1.0, 2.0, -2.0];

impl PositionView<'_> {
    /// The White-relative middlegame and endgame sums of the linear terms
    /// under `weights`; the coefficients are left in `decoded`.
    #[inline(always)]
    pub fn sums(&self, weights: &[f64], decoded: &mut Decoded) -> (f64, f64) {
        let pairs = weights.as_chunks::<2>().0;
        let n = self.count;
        decoded.len = n;
        if decoded.entries.len() < n {
            decoded.entries.resize(n, 0);
            decoded.coefs.resize(n, 0.0);
        }
        let (entries, coefs) = (&mut decoded.entries[..n], &mut decoded.coefs[..n]);
        let mut bytes = self.coefficients.iter();
        let mut entry = usize::MAX;
        for (slot_e, slot_c) in entries.iter_mut().zip(coefs.iter_mut()) {
            let b = *bytes.next().expect("a complete record");
            let (delta, c) = if b & 63 != 0 {
                ((b & 63) as usize, SHORT_COEF_F64[(b >> 6) as usize])
            } else {
                let (d, c) = read_escape(&mut bytes, b >> 6);
                (d, c as f64)
            };
            entry = entry.wrapping_add(delta);
            *slot_e = entry as u32;
            *slot_c = c;
        }
        // Four independent (mg, eg) sums: no chain of dependent additions.
        let mut acc = [[0.0f64; 2]; 4];
        let mut quads_e = entries.chunks_exact(4);
        let mut quads_c = coefs.chunks_exact(4);
        for (e4, c4) in (&mut quads_e).zip(&mut quads_c) {
            for j in 0..4 {
                let w = pairs[e4[j] as usize];
                acc[j][0] += w[0] * c4[j];
                acc[j][1] += w[1] * c4[j];
            }
        }
        for (j, (&e, &c)) in quads_e
            .remainder()
            .iter()
            .zip(quads_c.remainder())
            .enumerate()
        {
            let w = pairs[e as usize];
            acc[j][0] += w[0] * c;
            acc[j][1] += w[1] * c;
        }
        let mg = (acc[0][0] + acc[1][0]) + (acc[2][0] + acc[3][0]);
        let eg = (acc[0][1] + acc[1][1]) + (acc[2][1] + acc[3][1]);
        (mg, eg)
    }

    /// d eval / d mg-sum and d eval / d eg-sum (White-relative eval) for an
    /// endgame sum `eg`.
    #[inline(always)]
    pub fn factors(&self, eg: f64) -> (f64, f64) {
        let scale = if eg > 0.0 {
            self.scale_white
        } else {
            self.scale_black
        };
        let max = MAX_PHASE as f64;
        (
            self.phase / max,
            (max - self.phase) / max * scale / SCALE_NORMAL as f64,
        )
    }

    /// The king-danger reads of both sides under `weights`, and their
    /// White-relative (mg, eg) contribution.
    #[inline(always)]
    fn danger(&self, weights: &[f64]) -> ([[Interpolation; 2]; 2], f64, f64) {
        let table = 2 * danger::TABLE.start;
        let none = Interpolation {
            index: [0; 4],
            weight: [1.0, 0.0, 0.0, 0.0],
            value: 0.0,
            slope: 0.0,
        };
        let mut reads = [[none; 2]; 2];
        let (mut mg, mut eg) = (0.0, 0.0);
        for (side, counts) in self.danger.iter().enumerate() {
            let sign = SIDE_SIGN[side];
            if counts.is_empty() {
                mg += sign * weights[table];
                eg += sign * weights[table + 1];
                continue;
            }
            let (mut cm, mut ce) = (0.0, 0.0);
            for (k, &n) in counts.0.iter().enumerate() {
                if n != 0 {
                    let e = 2 * danger::UNIT_ENTRY[k];
                    cm += weights[e] * n as f64;
                    ce += weights[e + 1] * n as f64;
                }
            }
            let rm = danger::interpolate(|j| weights[table + 2 * j], cm);
            let re = danger::interpolate(|j| weights[table + 2 * j + 1], ce);
            mg += sign * rm.value;
            eg += sign * re.value;
            reads[side] = [rm, re];
        }
        (reads, mg, eg)
    }

    /// The White-relative evaluation under `weights`, with what its
    /// gradient needs.
    #[inline(always)]
    pub fn evaluate(&self, weights: &[f64], decoded: &mut Decoded) -> (f64, Partials) {
        let (mg, eg) = self.sums(weights, decoded);
        let (danger, dmg, deg) = self.danger(weights);
        let (mg, eg) = (mg + dmg, eg + deg);
        let factors = self.factors(eg);
        (
            mg * factors.0 + eg * factors.1,
            Partials { factors, danger },
        )
    }

    /// Adds `d_loss_d_eval` × d eval / d weight into `grad`, for the
    /// coefficients [`PositionView::evaluate`] left in `decoded`.
    #[inline(always)]
    pub fn add_gradient(
        &self,
        d_loss_d_eval: f64,
        partials: &Partials,
        decoded: &Decoded,
        grad: &mut [f64],
    ) {
        let gm = d_loss_d_eval * partials.factors.0;
        let ge = d_loss_d_eval * partials.factors.1;
        let pairs = grad.as_chunks_mut::<2>().0;
        let n = decoded.len;
        for (&e, &c) in decoded.entries[..n].iter().zip(&decoded.coefs[..n]) {
            let g = &mut pairs[e as usize];
            g[0] += gm * c;
            g[1] += ge * c;
        }
        let table = 2 * danger::TABLE.start;
        for (side, counts) in self.danger.iter().enumerate() {
            let (gm, ge) = (gm * SIDE_SIGN[side], ge * SIDE_SIGN[side]);
            if counts.is_empty() {
                grad[table] += gm;
                grad[table + 1] += ge;
                continue;
            }
            let [rm, re] = &partials.danger[side];
            for j in 0..4 {
                grad[table + 2 * rm.index[j]] += gm * rm.weight[j];
                grad[table + 2 * re.index[j] + 1] += ge * re.weight[j];
            }
            let (sm, se) = (gm * rm.slope, ge * re.slope);
            for (k, &n) in counts.0.iter().enumerate() {
                if n != 0 {
                    let e = 2 * danger::UNIT_ENTRY[k];
                    grad[e] += sm * n as f64;
                    grad[e + 1] += se * n as f64;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::eval::{NUM_ENTRIES, TraceEntry, trace};
    use engine::formats::labeled::parse_line;

    /// The first `n` positions of the bundled data, with their results.
    fn positions(n: usize) -> Vec<(Chess, GameResult)> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../data/labeled/masters-quiet-20k.epd"
        );
        let text = std::fs::read_to_string(path).expect("bundled data");
        text.lines()
            .take(n)
            .map(|l| {
                let r = parse_line(l).expect("a good line").expect("a record");
                (r.position, r.result.expect("a result"))
            })
            .collect()
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
        (
            v.entries().collect(),
            [v.phase, v.scale_white, v.scale_black],
            v.danger,
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
    fn kernels_read_the_decoded_coefficients() {
        let mut set = TraceSet::new();
        for (pos, result) in positions(200) {
            set.push_position(&pos, result, None);
        }
        let weights: Vec<f64> = (0..2 * NUM_ENTRIES)
            .map(|i| (i % 17) as f64 - 8.0)
            .collect();
        let mut decoded = Decoded::default();
        for i in 0..set.len() {
            let v = set.view(i);
            let (mg, eg) = v.sums(&weights, &mut decoded);
            let (wm, we) = v.entries().fold((0.0, 0.0), |(m, e), (k, c)| {
                (
                    m + weights[2 * k] * c as f64,
                    e + weights[2 * k + 1] * c as f64,
                )
            });
            assert_eq!((mg, eg), (wm, we));
            let mut grad = vec![0.0; weights.len()];
            let (_, partials) = v.evaluate(&weights, &mut decoded);
            v.add_gradient(1.0, &partials, &decoded, &mut grad);
            for (k, c) in v.entries() {
                assert_eq!(grad[2 * k], partials.factors.0 * c as f64);
            }
        }
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
