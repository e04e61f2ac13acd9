//! Fingerprints of inputs: the 64-bit FNV-1a hash with which a resumed or
//! cached run recognises the files it was made from (the match journal, the
//! labeler's progress sidecar, the tuner's checkpoint). Not cryptographic:
//! it tells a changed file from the same one, not an adversary's.

use std::io::{self, Read};
use std::path::Path;

/// FNV-1a 64-bit offset basis: the hash of no bytes.
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a 64-bit prime.
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// `hash` (start from [`FNV_OFFSET`]) continued over `bytes`.
pub fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(hash, |h, &b| (h ^ u64::from(b)).wrapping_mul(FNV_PRIME))
}

/// Size and FNV-1a hash of a whole file, read in blocks (the file may be
/// larger than memory).
///
/// # Errors
/// When the file cannot be opened or read.
pub fn file_fnv1a(path: &Path) -> io::Result<(u64, u64)> {
    let mut file = std::fs::File::open(path)?;
    let mut buffer = vec![0u8; 1 << 16];
    let (mut hash, mut size) = (FNV_OFFSET, 0u64);
    loop {
        let n = match file.read(&mut buffer) {
            Ok(0) => return Ok((size, hash)),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hash = fnv1a(hash, &buffer[..n]);
        size += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_fnv1a_values() {
        // Test vectors of the FNV reference (isthe.com/chongo/tech/comp/fnv).
        assert_eq!(fnv1a(FNV_OFFSET, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(FNV_OFFSET, b"foobar"), 0x8594_4171_f739_67e8);
        // Continuing a hash is hashing the concatenation.
        assert_eq!(
            fnv1a(fnv1a(FNV_OFFSET, b"foo"), b"bar"),
            fnv1a(FNV_OFFSET, b"foobar")
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 200_000]).unwrap();
        assert_eq!(
            file_fnv1a(&path).unwrap(),
            (200_000, fnv1a(FNV_OFFSET, &vec![7u8; 200_000]))
        );
    }
}
