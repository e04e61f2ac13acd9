//! Maps keyed by (position, move) pairs, with a hasher suited to Zobrist keys.
//!
//! Book building accumulates statistics per distinct (position key, Polyglot
//! move) pair, so memory grows with the number of such pairs and nothing
//! else. The position key is already a uniformly random 64-bit Zobrist hash,
//! so hashing it again with SipHash would only cost time: [`BookMoveKey`]
//! folds the move into the key with one multiply and [`ZobristHasher`] uses
//! that word as the hash value directly.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// A (position, move) pair: the Polyglot key of the position and the move
/// in Polyglot encoding.
///
/// Packed to 12 bytes (4-byte alignment) so that a table entry with its
/// 12-byte statistics takes 24 bytes instead of 32: the tables are large and
/// their memory traffic dominates the build time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(C, packed(4))]
pub struct BookMoveKey {
    /// Polyglot Zobrist key of the position before the move.
    pub key: u64,
    /// The move in Polyglot encoding.
    pub raw_move: u16,
}

impl Hash for BookMoveKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // The multiplier spreads the 16 move bits over the whole word.
        let (key, raw_move) = (self.key, self.raw_move);
        state.write_u64(key ^ u64::from(raw_move).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    }
}

/// A hasher that passes an already random 64-bit word through unchanged
/// (other inputs are mixed multiplicatively, so it stays correct if used
/// with other key types).
#[derive(Debug, Default, Clone, Copy)]
pub struct ZobristHasher(u64);

impl Hasher for ZobristHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 ^= word;
    }
}

/// A hash map keyed by (position, move) pairs.
pub type BookMoveMap<V> = HashMap<BookMoveKey, V, BuildHasherDefault<ZobristHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_of_one_position_hash_apart() {
        let hash = |raw_move| {
            let mut h = ZobristHasher::default();
            BookMoveKey {
                key: 0x463b96181691fc9c,
                raw_move,
            }
            .hash(&mut h);
            h.finish()
        };
        assert_ne!(hash(1), hash(2));
        assert_ne!(hash(1) >> 57, hash(2) >> 57, "the top bits differ too");
    }
}
