//! Deterministic mutations of real inputs for the parsers' mutation tests
//! (the stable-Rust counterpart of the fuzz targets in `engine/fuzz`): byte
//! flips, insertions of bytes and of tokens that matter to the formats,
//! deletions, duplications, line swaps and truncations, one to four per
//! input.

#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Tokens that tend to reach deep into the parsers.
const TOKENS: [&[u8]; 32] = [
    b"\n",
    b"\r\n",
    b" ",
    b"\"",
    b";",
    b"[",
    b"]",
    b"{",
    b"}",
    b"(",
    b")",
    b"|",
    b",",
    b"-",
    b"\xff",
    b"\xc3",
    b"0",
    b"1-0",
    b"1/2-1/2",
    b"*",
    b"O-O",
    b"e8=Q",
    b"c9 ",
    b"ce ",
    b"bm ",
    b"[Event \"",
    b"[FEN \"",
    b"w",
    b"KQkq",
    b"99999999999999999999",
    b"go ",
    b"depth ",
];

/// A mutator with its own seed.
pub struct Mutator {
    rng: ChaCha8Rng,
}

impl Mutator {
    pub fn new(seed: u64) -> Mutator {
        Mutator {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// `input` with one to four random mutations.
    pub fn mutate(&mut self, input: &[u8]) -> Vec<u8> {
        let mut bytes = input.to_vec();
        let count = self.rng.random_range(1..=4);
        for _ in 0..count {
            self.mutate_once(&mut bytes);
        }
        bytes
    }

    fn position(&mut self, bytes: &[u8]) -> usize {
        self.rng.random_range(0..=bytes.len())
    }

    fn mutate_once(&mut self, bytes: &mut Vec<u8>) {
        match self.rng.random_range(0..8) {
            0 if !bytes.is_empty() => {
                let i = self.rng.random_range(0..bytes.len());
                bytes[i] = self.rng.random();
            }
            1 => {
                let i = self.position(bytes);
                let b = self.rng.random();
                bytes.insert(i, b);
            }
            2 | 3 => {
                let i = self.position(bytes);
                let token = TOKENS[self.rng.random_range(0..TOKENS.len())];
                bytes.splice(i..i, token.iter().copied());
            }
            4 if !bytes.is_empty() => {
                let i = self.rng.random_range(0..bytes.len());
                let n = self.rng.random_range(1..=16.min(bytes.len() - i));
                bytes.drain(i..i + n);
            }
            5 if !bytes.is_empty() => {
                let i = self.rng.random_range(0..bytes.len());
                let n = self.rng.random_range(1..=32.min(bytes.len() - i));
                let copy: Vec<u8> = bytes[i..i + n].to_vec();
                let at = self.position(bytes);
                bytes.splice(at..at, copy);
            }
            6 => {
                let mut lines: Vec<Vec<u8>> =
                    bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
                if lines.len() > 1 {
                    let a = self.rng.random_range(0..lines.len());
                    let b = self.rng.random_range(0..lines.len());
                    lines.swap(a, b);
                    *bytes = lines.join(&b'\n');
                }
            }
            _ => {
                let keep = self.position(bytes);
                bytes.truncate(keep);
            }
        }
    }
}

/// The 1-based line number of the last line of `bytes` (a text without
/// newline has 1 line).
pub fn line_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count() + 1
}

/// The games of a PGN text: cut before every `[Event ` that starts a line
/// (each game keeps the blank lines after it).
pub fn split_games(text: &[u8]) -> Vec<Vec<u8>> {
    let mut games = Vec::new();
    let mut start = 0;
    for (i, window) in text.windows(8).enumerate() {
        if i > start && window == b"\n[Event " {
            games.push(text[start..=i].to_vec());
            start = i + 1;
        }
    }
    games.push(text[start..].to_vec());
    games
}

/// A PGN text of `count` games taken in turn from `games`, starting at
/// game `first`: every other one mutated, so that the damage stays local.
pub fn mutated_pgn(
    games: &[Vec<u8>],
    first: usize,
    count: usize,
    mutator: &mut Mutator,
) -> Vec<u8> {
    let mut text = Vec::new();
    for i in 0..count {
        let game = &games[(first + i) % games.len()];
        if i % 2 == 0 {
            text.extend(mutator.mutate(game));
            text.extend_from_slice(b"\n\n");
        } else {
            text.extend_from_slice(game);
        }
    }
    text
}
