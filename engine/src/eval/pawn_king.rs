//! The memo of the pawn-and-king terms: the evaluation terms that depend on
//! nothing but the pawns of both sides and the two kings' squares (pawn
//! structure, passed pawns' ranks and king distances, king shelter and
//! storm) change far more rarely than the position, so the search keeps
//! their packed sum per pawn-and-king configuration and adds it instead of
//! evaluating them again.
//!
//! Invariant: an entry is used only for exactly the pawns and kings it was
//! computed for (the whole key is stored and compared, so a collision is a
//! miss), and only under the weights it was computed with (the owner clears
//! the cache when its weights change), so the evaluation is the same with or
//! without the memo, bit for bit.

use shakmaty::Square;

/// What the pawn-and-king terms depend on: each side's pawns (White, Black)
/// and each side's king square.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PawnKingKey {
    pawns: [u64; 2],
    /// Both king squares and a bit that an empty slot does not have.
    kings: u16,
}

impl PawnKingKey {
    /// The key of White's and Black's pawns and kings.
    #[inline(always)]
    pub fn new(pawns: [u64; 2], kings: [Square; 2]) -> Self {
        PawnKingKey {
            pawns,
            kings: kings[0] as u16 | (kings[1] as u16) << 6 | 1 << 12,
        }
    }

    /// A well-mixed 64-bit hash of the key.
    #[inline(always)]
    fn hash(&self) -> u64 {
        let h = self.pawns[0].wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ self.pawns[1]
                .wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
                .rotate_left(29)
            ^ u64::from(self.kings).wrapping_mul(0x1656_67b1_9e37_79f9);
        h ^ (h >> 31)
    }
}

/// One memoised configuration, as six words (all zero: empty, as no key
/// is): White's pawns, Black's pawns, the kings (see [`PawnKingKey`]), the
/// packed (middlegame, endgame) sum of the terms, White's and Black's passed
/// pawns. Plain words, so that a new memo is zeroed memory from the
/// allocator, which costs nothing until it is used.
type Entry = [u64; 6];

/// Slots of the memo (a power of two): 8,192 of 48 bytes, 384 KB, enough
/// for the pawn structures of a search, small enough for the L2 cache.
const SLOTS: usize = 1 << 13;

/// A direct-mapped memo of the pawn-and-king terms' packed sums (see the
/// module documentation). Each search thread owns one.
#[derive(Clone, Debug)]
pub struct PawnKingCache {
    entries: Box<[Entry]>,
}

impl Default for PawnKingCache {
    fn default() -> Self {
        Self::new()
    }
}

impl PawnKingCache {
    /// An empty memo.
    pub fn new() -> Self {
        PawnKingCache {
            entries: bytemuck::allocation::zeroed_slice_box(SLOTS),
        }
    }

    /// Forgets every entry (when the weights change).
    pub fn clear(&mut self) {
        self.entries.fill([0; 6]);
    }

    #[inline(always)]
    fn slot(key: &PawnKingKey) -> usize {
        (key.hash() >> (64 - SLOTS.trailing_zeros())) as usize
    }

    /// The memoised sum and passed pawns of `key`, if present.
    #[inline(always)]
    pub(crate) fn get(&self, key: &PawnKingKey) -> Option<(i64, [u64; 2])> {
        let e = &self.entries[Self::slot(key)];
        (e[0] == key.pawns[0] && e[1] == key.pawns[1] && e[2] == u64::from(key.kings))
            .then_some((e[3] as i64, [e[4], e[5]]))
    }

    /// Memoises the sum and passed pawns of `key`, replacing whatever held
    /// its slot.
    #[inline(always)]
    pub(crate) fn put(&mut self, key: &PawnKingKey, sum: i64, passed: [u64; 2]) {
        self.entries[Self::slot(key)] = [
            key.pawns[0],
            key.pawns[1],
            u64::from(key.kings),
            sum as u64,
            passed[0],
            passed[1],
        ];
    }
}
