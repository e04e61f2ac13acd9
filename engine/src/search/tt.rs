//! The transposition table: a fixed-size, lockless hash table of search
//! results shared by every thread of one search.
//!
//! Each entry is two [`AtomicU64`]s: the packed data and the position key
//! XOR-ed with that data. A reader accepts an entry only when
//! `stored_key ^ data == key`, so an entry torn by a concurrent writer is
//! simply a miss — no locks, and no `unsafe` but a prefetch hint. Entries live
//! in buckets of [`BUCKET_SIZE`], one cache line each (the table starts its
//! first bucket on a line boundary, so a probe touches one line, which
//! [`TranspositionTable::prefetch`] can request ahead); a store replaces the
//! entry of the same position, else the least valuable one by depth minus an
//! age penalty (depth-preferred with aging). Mate scores are stored relative to
//! the node ("mate in n from here") and converted back to the root distance on
//! probe, see [`score_to_tt`] and [`score_from_tt`]. The best move is stored as
//! a 16-bit code ([`encode_move`]) and must be matched against the legal moves
//! of the position before use, so a key collision can never yield an illegal
//! move.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};

use shakmaty::Move;

use super::score::MATE_BOUND;

/// Entries per bucket: a probe looks at all of them.
pub const BUCKET_SIZE: usize = 4;
/// From this size on, a used table is cleared by allocating a fresh one
/// (zero pages from the operating system, at no cost) rather than by
/// writing zeros over every entry, which would take seconds for gigabytes
/// and bring every page of the table into memory.
pub const LARGE_TABLE_MB: usize = 256;
/// Size of one entry in bytes (two `u64`).
const ENTRY_BYTES: usize = 16;
/// The cache line size the buckets are aligned to (a bucket is one line).
const CACHE_LINE_BYTES: usize = ENTRY_BYTES * BUCKET_SIZE;
/// Generations cycle through 6 bits.
const GENERATION_MASK: u8 = 0x3f;
/// How many depth units one generation of age costs an entry when choosing
/// which entry to replace.
const AGE_PENALTY: i32 = 8;

/// What a stored score says about the true score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The true score is at most the stored one (fail low).
    Upper = 1,
    /// The true score is at least the stored one (fail high).
    Lower = 2,
    /// The stored score is exact (PV node).
    Exact = 3,
}

impl Bound {
    /// The bound of a node's result: a fail high (`score >= beta`) is a
    /// lower bound, a node that found a move inside the window is exact,
    /// anything else (no move raised alpha) is an upper bound.
    pub fn of_result(score: i32, beta: i32, found_move: bool) -> Bound {
        if score >= beta {
            Bound::Lower
        } else if found_move {
            Bound::Exact
        } else {
            Bound::Upper
        }
    }

    fn from_bits(bits: u64) -> Option<Bound> {
        match bits & 3 {
            1 => Some(Bound::Upper),
            2 => Some(Bound::Lower),
            3 => Some(Bound::Exact),
            _ => None,
        }
    }
}

/// A decoded table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TtEntry {
    /// The best (or refuting) move as a 16-bit code, 0 for none.
    pub move_code: u16,
    /// Score, already adjusted to the probing node's ply.
    pub score: i32,
    /// Static evaluation of the position.
    pub static_eval: i32,
    /// Remaining depth the score was searched to.
    pub depth: i32,
    /// Meaning of the score.
    pub bound: Bound,
}

impl TtEntry {
    /// Whether the stored score settles a search of the window
    /// `(alpha, beta)`: it is exact, or a bound on the side that cuts.
    pub fn cuts(&self, alpha: i32, beta: i32) -> bool {
        match self.bound {
            Bound::Exact => true,
            Bound::Lower => self.score >= beta,
            Bound::Upper => self.score <= alpha,
        }
    }

    /// Whether the stored score is a better estimate than `eval`: exact, or
    /// a bound saying the true score lies beyond `eval` on its side.
    pub fn refines(&self, eval: i32) -> bool {
        self.cuts(eval - 1, eval + 1)
    }
}

/// The shared transposition table (see the module documentation).
#[derive(Debug)]
pub struct TranspositionTable {
    /// The buckets, from `entries[first]` on; the entries before `first`
    /// (at most `BUCKET_SIZE - 1`, and as many after the last bucket) are
    /// the slack that lets the first bucket start on a cache line.
    entries: Box<[[AtomicU64; 2]]>,
    /// Index of the first entry of the first bucket.
    first: usize,
    bucket_count: usize,
    generation: AtomicU8,
    /// Whether a search has run since the table was made or cleared (a
    /// fresh table needs no clearing).
    used: AtomicBool,
}

/// Encodes a move in 16 bits: from (6), to (6), promotion role (3). Castling
/// is king square to rook square, as shakmaty represents it. 0 means "none"
/// and never encodes a real move.
pub fn encode_move(m: Move) -> u16 {
    let from = m.from().map_or(0, |s| s as u16);
    let to = m.to() as u16;
    let promo = m.promotion().map_or(0, |r| r as u16);
    from | (to << 6) | (promo << 12)
}

/// Converts a score searched at `ply` into its table form (mate distance
/// counted from the node rather than the root).
pub fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

/// Converts a table score back to the root-relative form at `ply`.
pub fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score - ply as i32
    } else if score <= -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

fn pack(
    move_code: u16,
    score: i32,
    static_eval: i32,
    depth: i32,
    bound: Bound,
    generation: u8,
) -> u64 {
    let score = score.clamp(i16::MIN as i32, i16::MAX as i32) as i16 as u16 as u64;
    let eval = static_eval.clamp(i16::MIN as i32, i16::MAX as i32) as i16 as u16 as u64;
    let depth = depth.clamp(0, 255) as u64;
    move_code as u64
        | (score << 16)
        | (eval << 32)
        | (depth << 48)
        | ((bound as u64) << 56)
        | (((generation & GENERATION_MASK) as u64) << 58)
}

fn unpack_depth(data: u64) -> i32 {
    ((data >> 48) & 0xff) as i32
}

fn unpack_generation(data: u64) -> u8 {
    ((data >> 58) as u8) & GENERATION_MASK
}

/// The table's memory could not be allocated.
#[derive(Debug, thiserror::Error)]
#[error("cannot allocate a {megabytes} MB transposition table")]
pub struct TtAllocError {
    /// The requested size.
    pub megabytes: usize,
}

impl TranspositionTable {
    /// A table of about `megabytes` MB (at least one bucket).
    ///
    /// # Panics
    /// When the memory cannot be allocated; see [`Self::try_new`].
    pub fn new(megabytes: usize) -> Self {
        Self::try_new(megabytes).expect("transposition table allocation")
    }

    /// A table of about `megabytes` MB (at least one bucket).
    ///
    /// # Errors
    /// [`TtAllocError`] when the memory cannot be reserved.
    pub fn try_new(megabytes: usize) -> Result<Self, TtAllocError> {
        let bucket_count =
            (megabytes.max(1).saturating_mul(1024 * 1024) / (ENTRY_BYTES * BUCKET_SIZE)).max(1);
        // Zeroed memory straight from the allocator: the operating system
        // hands out zero pages lazily, so a table of many gigabytes is ready
        // at once and costs memory only where the search writes.
        let entries: Box<[[AtomicU64; 2]]> = bytemuck::allocation::try_zeroed_slice_box(
            bucket_count * BUCKET_SIZE + BUCKET_SIZE - 1,
        )
        .map_err(|()| TtAllocError { megabytes })?;
        // The allocator aligns to 16 bytes (one entry); skip up to three
        // entries so that every bucket is one cache line, not two halves.
        let address = entries.as_ptr() as usize;
        let first = if address.is_multiple_of(ENTRY_BYTES) {
            (CACHE_LINE_BYTES - address % CACHE_LINE_BYTES) % CACHE_LINE_BYTES / ENTRY_BYTES
        } else {
            0
        };
        Ok(TranspositionTable {
            entries,
            first,
            bucket_count,
            generation: AtomicU8::new(0),
            used: AtomicBool::new(false),
        })
    }

    /// Size in megabytes as configured.
    pub fn megabytes(&self) -> usize {
        self.bucket_count * BUCKET_SIZE * ENTRY_BYTES / (1024 * 1024)
    }

    /// Empties the table (between games). Not meant to run during a search.
    pub fn clear(&self) {
        if !self.used.swap(false, Ordering::Relaxed) {
            return;
        }
        for e in &self.entries {
            e[0].store(0, Ordering::Relaxed);
            e[1].store(0, Ordering::Relaxed);
        }
        self.generation.store(0, Ordering::Relaxed);
    }

    /// Whether clearing would touch memory worth handing back instead: the
    /// table is large and has been used.
    pub fn is_large_and_used(&self) -> bool {
        self.megabytes() >= LARGE_TABLE_MB && self.used.load(Ordering::Relaxed)
    }

    /// Starts a new search: older entries become cheaper to replace.
    pub fn new_search(&self) {
        self.used.store(true, Ordering::Relaxed);
        let g = self.generation.load(Ordering::Relaxed);
        self.generation
            .store(g.wrapping_add(1) & GENERATION_MASK, Ordering::Relaxed);
    }

    fn bucket_start(&self, key: u64) -> usize {
        // Multiply-shift maps the key uniformly onto the buckets.
        self.first + (((key as u128) * (self.bucket_count as u128)) >> 64) as usize * BUCKET_SIZE
    }

    /// Asks the processor to bring `key`'s bucket into the cache, so that a
    /// probe soon after (the child node's, when called as a move is made)
    /// finds it there instead of waiting for memory. Only a hint: no effect
    /// on results.
    #[inline]
    #[allow(unsafe_code)] // the workspace's one exception: see SAFETY below
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let bucket: *const [AtomicU64; 2] = &self.entries[self.bucket_start(key)];
            // SAFETY: a prefetch only hints the cache; it reads nothing the
            // program sees, cannot fault, and the pointer is to a live
            // element of the table anyway. SSE, which it needs, is part of
            // every x86-64 processor.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    bucket.cast::<i8>(),
                );
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// Looks `key` up; `ply` converts mate scores to the root distance.
    pub fn probe(&self, key: u64, ply: usize) -> Option<TtEntry> {
        let start = self.bucket_start(key);
        for e in &self.entries[start..start + BUCKET_SIZE] {
            let data = e[1].load(Ordering::Relaxed);
            let stored = e[0].load(Ordering::Relaxed);
            if stored ^ data == key && data != 0 {
                let bound = Bound::from_bits(data >> 56)?;
                return Some(TtEntry {
                    move_code: data as u16,
                    score: score_from_tt((data >> 16) as u16 as i16 as i32, ply),
                    static_eval: (data >> 32) as u16 as i16 as i32,
                    depth: unpack_depth(data),
                    bound,
                });
            }
        }
        None
    }

    /// Stores a search result. `score` is root-relative at `ply`. A move code
    /// of 0 keeps the move already stored for the same position. A search
    /// calls [`Self::new_search`] before its first store, which is how
    /// [`Self::clear`] knows whether there is anything to clear.
    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &self,
        key: u64,
        ply: usize,
        move_code: u16,
        score: i32,
        static_eval: i32,
        depth: i32,
        bound: Bound,
    ) {
        let generation = self.generation.load(Ordering::Relaxed);
        let start = self.bucket_start(key);
        let bucket = &self.entries[start..start + BUCKET_SIZE];
        let mut victim = 0;
        let mut victim_worth = i32::MAX;
        for (i, e) in bucket.iter().enumerate() {
            let data = e[1].load(Ordering::Relaxed);
            let stored = e[0].load(Ordering::Relaxed);
            if data == 0 || stored ^ data == key {
                victim = i;
                break;
            }
            let age = (generation.wrapping_sub(unpack_generation(data)) & GENERATION_MASK) as i32;
            let worth = unpack_depth(data) - AGE_PENALTY * age;
            if worth < victim_worth {
                victim_worth = worth;
                victim = i;
            }
        }
        let e = &bucket[victim];
        let old = e[1].load(Ordering::Relaxed);
        let same = e[0].load(Ordering::Relaxed) ^ old == key && old != 0;
        // Keep a deeper exact-ish result of the same position from this
        // search unless the new one is exact or nearly as deep.
        if same
            && bound != Bound::Exact
            && unpack_generation(old) == generation
            && depth + 2 < unpack_depth(old)
        {
            return;
        }
        let move_code = if move_code == 0 && same {
            old as u16
        } else {
            move_code
        };
        let data = pack(
            move_code,
            score_to_tt(score, ply),
            static_eval,
            depth,
            bound,
            generation,
        );
        e[0].store(key ^ data, Ordering::Relaxed);
        e[1].store(data, Ordering::Relaxed);
    }

    /// Permille of sampled entries written during the current search.
    pub fn hashfull(&self) -> u32 {
        let generation = self.generation.load(Ordering::Relaxed);
        let buckets = &self.entries[self.first..self.first + self.bucket_count * BUCKET_SIZE];
        let sample = buckets.len().min(1000);
        let used = buckets[..sample]
            .iter()
            .filter(|e| {
                let d = e[1].load(Ordering::Relaxed);
                d != 0 && unpack_generation(d) == generation
            })
            .count();
        (used * 1000 / sample.max(1)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Chess, Position};

    #[test]
    fn bounds_of_results_and_what_they_settle() {
        assert_eq!(Bound::of_result(50, 50, false), Bound::Lower);
        assert_eq!(Bound::of_result(10, 50, true), Bound::Exact);
        assert_eq!(Bound::of_result(10, 50, false), Bound::Upper);
        let entry = |score, bound| TtEntry {
            move_code: 0,
            score,
            static_eval: 0,
            depth: 1,
            bound,
        };
        // A lower bound settles a window it fails high on, an upper bound
        // one it fails low on, an exact score any window.
        assert!(entry(60, Bound::Lower).cuts(0, 60));
        assert!(!entry(59, Bound::Lower).cuts(0, 60));
        assert!(entry(0, Bound::Upper).cuts(0, 60));
        assert!(!entry(1, Bound::Upper).cuts(0, 60));
        assert!(entry(30, Bound::Exact).cuts(0, 60));
        // Refining an evaluation: only a bound beyond it on its side.
        assert!(entry(11, Bound::Lower).refines(10));
        assert!(!entry(10, Bound::Lower).refines(10));
        assert!(entry(9, Bound::Upper).refines(10));
        assert!(!entry(10, Bound::Upper).refines(10));
        assert!(entry(10, Bound::Exact).refines(10));
    }

    #[test]
    fn buckets_are_cache_lines_and_the_extreme_ones_work() {
        for megabytes in [1, 3, 16] {
            let tt = TranspositionTable::new(megabytes);
            let line = |key: u64| {
                let start = tt.bucket_start(key);
                let address = &tt.entries[start] as *const [AtomicU64; 2] as usize;
                assert!(start + BUCKET_SIZE <= tt.entries.len());
                address % CACHE_LINE_BYTES
            };
            // The allocator aligns to 16 bytes, so every bucket starts a line.
            if (tt.entries.as_ptr() as usize).is_multiple_of(ENTRY_BYTES) {
                for key in [0, 1 << 40, u64::MAX / 3, u64::MAX] {
                    assert_eq!(line(key), 0, "{megabytes} MB, key {key:#x}");
                }
            }
            // The first and the last bucket store and probe like any other;
            // a prefetch changes nothing.
            for key in [0, u64::MAX] {
                tt.prefetch(key);
                tt.store(key, 0, 0, 55, 7, 3, Bound::Exact);
                assert_eq!(tt.probe(key, 0).map(|e| e.score), Some(55));
            }
        }
    }

    #[test]
    fn store_and_probe_round_trip() {
        let tt = TranspositionTable::new(1);
        let m = Chess::default().legal_moves()[3];
        tt.store(0xdead_beef, 0, encode_move(m), -123, 45, 7, Bound::Lower);
        let e = tt.probe(0xdead_beef, 0).unwrap();
        assert_eq!(e.move_code, encode_move(m));
        assert_eq!(
            (e.score, e.static_eval, e.depth, e.bound),
            (-123, 45, 7, Bound::Lower)
        );
        assert!(tt.probe(0xdead_bee0, 0).is_none());
    }

    #[test]
    fn mate_scores_are_ply_adjusted() {
        let tt = TranspositionTable::new(1);
        let mate_in_3_from_root = crate::search::score::MATE_SCORE - 5;
        tt.store(42, 2, 0, mate_in_3_from_root, 0, 3, Bound::Exact);
        // Same node reached at ply 4: the mate is two plies further away.
        assert_eq!(tt.probe(42, 4).unwrap().score, mate_in_3_from_root - 2);
    }
}
