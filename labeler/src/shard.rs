//! Scale-out: which records a shard owns (`--shard K/N`), and how a shard's
//! output lines carry their record index so that `labeler merge` can restore
//! the input order.
//!
//! Records are numbered from 0 over all inputs in order: every parsed line
//! (position or bad line) counts, blank lines, comments and a CSV header do
//! not. Shard `K/N` owns the records whose number is ≡ K mod N, so every bad
//! line is also reported by exactly one shard. A shard's output lines end with
//! the EPD operation `id "<record number>";` (readers of labeled formats
//! ignore unknown operations); `labeler merge` sorts on it and removes it.

use std::fmt;
use std::str::FromStr;

/// The EPD operation that carries a record number in shard outputs.
const INDEX_OPERATION: &str = " id \"";

/// One shard of a run: `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// K: which residue this shard owns.
    pub index: u64,
    /// N: number of shards.
    pub count: u64,
}

impl Shard {
    /// Whether record number `record` belongs to this shard.
    pub fn owns(self, record: u64) -> bool {
        record % self.count == self.index
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (k, n) = text
            .split_once('/')
            .ok_or_else(|| format!("{text:?} is not K/N (e.g. 0/4)"))?;
        let index: u64 = k
            .trim()
            .parse()
            .map_err(|_| format!("shard index {k:?} is not a number"))?;
        let count: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("shard count {n:?} is not a number"))?;
        if count == 0 || index >= count {
            return Err(format!(
                "shard {text:?}: need N ≥ 1 and 0 ≤ K < N (shards are numbered from 0)"
            ));
        }
        Ok(Shard { index, count })
    }
}

/// Appends the record number to a canonical EPD line.
pub fn tag_line(line: &str, record: u64) -> String {
    format!("{line}{INDEX_OPERATION}{record}\";")
}

/// Splits a shard output line into the canonical line and its record
/// number; `None` when the line carries no record number.
pub fn untag_line(line: &str) -> Option<(&str, u64)> {
    let start = line.rfind(INDEX_OPERATION)?;
    let number = line[start + INDEX_OPERATION.len()..].strip_suffix("\";")?;
    Some((&line[..start], number.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_own() {
        let s: Shard = "1/3".parse().unwrap();
        assert!(s.owns(4) && !s.owns(3));
        assert!("3/3".parse::<Shard>().is_err());
        assert!("1".parse::<Shard>().is_err());
    }

    #[test]
    fn tags_round_trip() {
        let line = "8/8/8/8/8/8/8/K1k5 w - - hmvc 0; fmvn 1; c9 \"1/2-1/2\";";
        assert_eq!(untag_line(&tag_line(line, 42)), Some((line, 42)));
        assert_eq!(untag_line(line), None);
    }
}
