//! Cutting a PGN stream into chunks of whole games for parallel parsing.
//!
//! Shared by the tools that read game collections (`makebook`, `pgnselect`).
//! A [`GameChunker`] reads about [`GameChunker::TARGET_CHUNK_BYTES`] at a
//! time and cuts just before the last game start in the block (a `[` tag
//! line preceded by a blank line), carrying the tail over to the next chunk.
//! Each chunk remembers the line number of its first byte, so problems found
//! by a worker can be reported with the line in the original file, and the
//! offset of its first byte in the (decompressed) stream, which identifies
//! a game independently of how the stream was cut; the game numbers are
//! fixed up later from the per-chunk game counts.

use std::io::{self, Read};
use std::sync::OnceLock;

/// A run of whole games cut from a PGN stream (made by [`GameChunker`] or
/// [`GameChunk::new`]; its bytes are not changed afterwards).
#[derive(Debug)]
pub struct GameChunk {
    /// Position of the chunk in its file, from 0.
    pub index: usize,
    /// 1-based line number of the chunk's first byte in its file.
    pub first_line: u64,
    /// Offset of the chunk's first byte in the decompressed stream.
    pub first_byte: u64,
    /// The chunk's bytes (decompressed).
    pub bytes: Vec<u8>,
    /// Offsets of the `\n` bytes, found on the first [`GameChunk::line_at`]
    /// (a chunk with many problems located one by one would otherwise be
    /// scanned from its start for each: quadratic in its size).
    newlines: OnceLock<Vec<usize>>,
}

impl GameChunk {
    /// A chunk of `bytes` starting at line `first_line` and byte
    /// `first_byte` of its file.
    pub fn new(index: usize, first_line: u64, first_byte: u64, bytes: Vec<u8>) -> Self {
        GameChunk {
            index,
            first_line,
            first_byte,
            bytes,
            newlines: OnceLock::new(),
        }
    }

    /// The line number, in the file, of the byte at `offset` in the chunk.
    pub fn line_at(&self, offset: usize) -> u64 {
        let newlines = self.newlines.get_or_init(|| {
            self.bytes
                .iter()
                .enumerate()
                .filter_map(|(i, &b)| (b == b'\n').then_some(i))
                .collect()
        });
        // The newlines before `offset` (all of them past the end).
        self.first_line + newlines.partition_point(|&at| at < offset) as u64
    }
}

/// Number of `\n` bytes.
pub fn count_newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// A reader over a chunk's bytes that publishes how far it has been read,
/// so that a PGN parser's position can be mapped back to file lines.
pub struct TrackedSlice<'a> {
    /// The bytes to read.
    pub bytes: &'a [u8],
    /// Bytes handed out so far.
    pub consumed: &'a std::cell::Cell<usize>,
}

impl Read for TrackedSlice<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let start = self.consumed.get();
        let n = buf.len().min(self.bytes.len() - start);
        buf[..n].copy_from_slice(&self.bytes[start..start + n]);
        self.consumed.set(start + n);
        Ok(n)
    }
}

/// Where the last game of `bytes` starts: the offset of a `[` that opens a
/// line following a blank line, or of an `[Event ` line (for files without
/// blank lines between games), searching backwards, ignoring offset 0.
fn last_game_start(bytes: &[u8]) -> Option<usize> {
    let mut i = bytes.len();
    while i > 2 {
        i -= 1;
        if bytes[i] == b'[' && bytes[i - 1] == b'\n' {
            let before = &bytes[..i - 1];
            let blank = before.ends_with(b"\n") || before.ends_with(b"\n\r");
            if blank || bytes[i..].starts_with(b"[Event ") {
                return Some(i);
            }
        }
    }
    None
}

/// Splits a stream into [`GameChunk`]s at game boundaries.
#[derive(Debug)]
pub struct GameChunker<R> {
    reader: R,
    carry: Vec<u8>,
    at_eof: bool,
    next_index: usize,
    next_line: u64,
    next_byte: u64,
    target_bytes: usize,
}

impl<R: Read> GameChunker<R> {
    /// Chunk size aimed at: large enough to amortise the hand-over between
    /// threads, small enough to balance two workers on modest inputs.
    pub const TARGET_CHUNK_BYTES: usize = 1 << 20;

    /// A chunker with the default target size.
    pub fn new(reader: R) -> GameChunker<R> {
        GameChunker::with_target(reader, Self::TARGET_CHUNK_BYTES)
    }

    /// A chunker aiming at `target_bytes` per chunk.
    pub fn with_target(reader: R, target_bytes: usize) -> GameChunker<R> {
        GameChunker {
            reader,
            carry: Vec::new(),
            at_eof: false,
            next_index: 0,
            next_line: 1,
            next_byte: 0,
            target_bytes: target_bytes.max(1),
        }
    }

    /// Reads until `buf` holds at least `want` bytes or the stream ends.
    fn fill(&mut self, buf: &mut Vec<u8>, want: usize) -> io::Result<()> {
        while buf.len() < want && !self.at_eof {
            let start = buf.len();
            buf.resize(want, 0);
            let n = loop {
                match self.reader.read(&mut buf[start..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        buf.truncate(start);
                        return Err(e);
                    }
                }
            };
            buf.truncate(start + n);
            if n == 0 {
                self.at_eof = true;
            }
        }
        Ok(())
    }

    /// The next chunk, or `None` at the end of the stream.
    ///
    /// # Errors
    /// Read or decompression errors of the underlying stream.
    pub fn next_chunk(&mut self) -> io::Result<Option<GameChunk>> {
        let mut buf = std::mem::take(&mut self.carry);
        let mut want = self.target_bytes.max(buf.len() + 1);
        let cut = loop {
            self.fill(&mut buf, want)?;
            if self.at_eof {
                break buf.len();
            }
            match last_game_start(&buf) {
                Some(cut) => break cut,
                // One game larger than the block: read more.
                None => want = buf.len() * 2,
            }
        };
        if buf.is_empty() {
            return Ok(None);
        }
        self.carry = buf[cut..].to_vec();
        buf.truncate(cut);
        let chunk = GameChunk::new(self.next_index, self.next_line, self.next_byte, buf);
        self.next_index += 1;
        self.next_byte += chunk.bytes.len() as u64;
        self.next_line += count_newlines(&chunk.bytes);
        Ok(Some(chunk))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cut_between_games_and_keep_line_numbers() {
        let game = "[Event \"x\"]\n[Result \"*\"]\n\n1. e4 e5 *\n\n";
        let text = game.repeat(50);
        let mut chunker = GameChunker::with_target(text.as_bytes(), 100);
        let mut joined = Vec::new();
        let mut expected_line = 1;
        while let Some(chunk) = chunker.next_chunk().unwrap() {
            assert!(chunk.bytes.starts_with(b"[Event"), "{:?}", chunk.bytes);
            assert_eq!(chunk.first_line, expected_line);
            assert_eq!(chunk.first_byte, joined.len() as u64);
            expected_line += count_newlines(&chunk.bytes);
            joined.extend_from_slice(&chunk.bytes);
        }
        assert_eq!(joined, text.as_bytes());
    }

    #[test]
    fn event_tags_are_boundaries_without_blank_lines() {
        let text = "[Event \"a\"]\n1. e4 *\n[Event \"b\"]\n1. d4 *\n";
        assert_eq!(last_game_start(text.as_bytes()), text.rfind("[Event"));
        assert_eq!(last_game_start(b"[Site \"a\"]\n[Site \"b\"]\n"), None);
    }

    #[test]
    fn crlf_blank_lines_are_boundaries() {
        let text = "[Event \"a\"]\r\n\r\n1. e4 *\r\n\r\n[Event \"b\"]\r\n\r\n1. d4 *\r\n";
        assert_eq!(last_game_start(text.as_bytes()), text.rfind("[Event"));
    }

    #[test]
    fn line_at_counts_from_the_chunk_start() {
        let chunk = GameChunk::new(0, 10, 0, b"a\nb\nc\n\nd".to_vec());
        assert_eq!(chunk.line_at(0), 10);
        assert_eq!(chunk.line_at(1), 10);
        assert_eq!(chunk.line_at(2), 11);
        assert_eq!(chunk.line_at(99), 14);
        // Any order of calls, every offset: as counting from the start.
        for offset in (0..=chunk.bytes.len() + 1).rev() {
            let end = offset.min(chunk.bytes.len());
            assert_eq!(
                chunk.line_at(offset),
                10 + count_newlines(&chunk.bytes[..end])
            );
        }
    }
}
