//! The set of position keys already written, for deduplication.
//!
//! Keys are Polyglot Zobrist hashes, already uniformly distributed, so the
//! set hashes them by identity instead of running SipHash over them. Its
//! memory (about 16 bytes per distinct position written) is what bounds the
//! memory of a run.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher that passes a `u64` key through.
#[derive(Debug, Default, Clone, Copy)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

/// Keys seen so far.
#[derive(Debug, Default)]
pub struct KeySet(HashSet<u64, BuildHasherDefault<KeyHasher>>);

impl KeySet {
    /// An empty set.
    pub fn new() -> KeySet {
        KeySet::default()
    }

    /// Adds `key`; `true` when it was not in the set yet.
    pub fn insert(&mut self, key: u64) -> bool {
        self.0.insert(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_once() {
        let mut set = KeySet::new();
        assert!(set.insert(0x463b96181691fc9c));
        assert!(!set.insert(0x463b96181691fc9c));
        assert!(set.insert(1));
        assert!(!set.insert(1));
    }
}
