//! The trace cache: a traced data set in a binary file, so that repeated
//! runs on the same data skip parsing, resolving and tracing
//! (`tuner --save-traces F`, then `tuner --traces F`), and so that data
//! larger than memory can be streamed block by block (`--stream`).
//!
//! Layout (little-endian):
//!
//! * `TUNERTRC`, the format version (`u32`), the length of the text header
//!   (`u32`), the text header, and its checksum (`u64`). The header names
//!   the evaluation schema (every scalar weight's name and the king-danger
//!   feature count: a cache traced under another schema is refused), how
//!   the positions were resolved, a hash of the parameters they were
//!   resolved with, and the input files.
//! * Blocks of at most [`BLOCK_POSITIONS`] positions (a multiple of
//!   [`RUN_POSITIONS`] but for the last): the count (`u32`), the record
//!   bytes (`u64`), the coefficients the records store (`u64`), the
//!   records' starts in the block (`u32` each), the bitmap of whole records
//!   (`u64` per 64 positions), the coefficients the positions of each run
//!   have (`u32` per run), the records, and the block's checksum (`u64`).
//!   The positions are stored as runs ([`crate::run_set`], runs starting
//!   at the block's first position; whole records when differences would
//!   not pay, [`RunSet::encode_or_whole`]): on self-play data most records
//!   hold only how their coefficients differ from the previous position's,
//!   so that the file is smaller and training takes the runs as they are
//!   read, with no encoding.
//! * A count of 0, then the trailer: positions, record bytes and blocks
//!   (`u64` each), the checksum of the header and block checksums, and
//!   `TRCEND\0\0`.
//!
//! The writer appends blocks as positions arrive, so a cache can be made
//! without holding the data set; the reader checks every block's checksum
//! and every record's structure as it reads it.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use engine::eval::danger::FEATURES;
use engine::eval::schema::scalar_names;
use engine::formats::atomic_file::{AtomicFile, AtomicFileError};
use thiserror::Error;

use crate::run_set::{RUN_POSITIONS, RunSet};
use crate::trace_set::{Hasher, RecordError, TraceSet};

/// The file's first bytes.
const MAGIC: &[u8; 8] = b"TUNERTRC";
/// The trailer's last bytes.
const END_MAGIC: &[u8; 8] = b"TRCEND\0\0";
/// The format version this build reads and writes.
pub const VERSION: u32 = 3;
/// Positions per block (the unit of streaming and of checksums).
pub const BLOCK_POSITIONS: usize = 1 << 16;
const _: () = assert!(BLOCK_POSITIONS.is_multiple_of(RUN_POSITIONS));
/// Bytes of a block's header: count, record bytes and stored coefficients.
const BLOCK_HEADER: u64 = 4 + 8 + 8;
/// Trailer size: four `u64` and the end magic.
const TRAILER: u64 = 5 * 8;
/// Largest text header accepted (a corrupt length must not allocate much).
const MAX_HEADER: u32 = 64 << 20;

/// Why a cache cannot be written or read.
#[derive(Debug, Error)]
pub enum CacheError {
    /// Reading failed.
    #[error("{path}: {source}")]
    Io {
        /// The cache.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] AtomicFileError),
    /// Not a trace cache.
    #[error("{path}: not a trace cache (no TUNERTRC header)")]
    NotACache {
        /// The file.
        path: PathBuf,
    },
    /// Made by another version of the format.
    #[error(
        "{path}: trace cache format version {found}, this tuner reads version {VERSION}; re-create it with --save-traces"
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u32,
    },
    /// Traced under another evaluation schema.
    #[error(
        "{path}: the traces were made with another evaluation schema ({difference}); re-create the cache with --save-traces"
    )]
    Schema {
        /// The file.
        path: PathBuf,
        /// The first difference.
        difference: String,
    },
    /// Damaged: a checksum, a record or the structure is wrong.
    #[error("{path}: corrupt trace cache: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        reason: String,
    },
}

/// What a cache says about its positions besides the traces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheMeta {
    /// How the positions were resolved before tracing (`--resolve`).
    pub resolve: String,
    /// A hash of the parameters they were resolved with.
    pub params: String,
    /// The input files, as the provenance describes them.
    pub inputs: Vec<String>,
}

/// The schema lines of this build: the king-danger feature count and every
/// scalar's name.
fn schema_lines() -> Vec<String> {
    let mut lines = vec![format!("features {FEATURES}")];
    lines.extend(scalar_names().into_iter().map(|n| format!("scalar {n}")));
    lines
}

fn header_text(meta: &CacheMeta) -> String {
    let mut text = String::new();
    text.push_str(&format!("resolve {}\n", meta.resolve));
    text.push_str(&format!("params {}\n", meta.params));
    for input in &meta.inputs {
        text.push_str(&format!("input {}\n", input.replace('\n', " ")));
    }
    for line in schema_lines() {
        text.push_str(&line);
        text.push('\n');
    }
    text
}

/// Writes a cache block by block.
///
/// The header names the inputs, which a cache made while loading knows only
/// at the end: [`CacheWriter::spooled`] writes the blocks to a spool file
/// beside the target and the header, the blocks and the trailer to the
/// target on [`CacheWriter::finish_with`], so that memory holds one block.
pub struct CacheWriter {
    target: PathBuf,
    /// `None` once finished.
    out: Option<Out>,
    block_positions: usize,
    pending: TraceSet,
    positions: u64,
    /// Bytes of the records written (runs).
    record_bytes: u64,
    /// Bytes the positions take as whole records.
    whole_record_bytes: u64,
    /// Checksum of each block written.
    sums: Vec<u64>,
}

/// Where the blocks go.
enum Out {
    /// The header is written (its checksum): blocks follow it.
    File(AtomicFile, u64),
    /// No header yet: blocks go to a spool file.
    Spool(Spool),
}

/// A temporary file of blocks, removed when dropped (on Unix at once: it
/// lives on only through its handle).
struct Spool {
    file: BufWriter<File>,
    _name: RemoveOnDrop,
}

/// A file name removed when this is dropped.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl Spool {
    /// A spool file beside `target` (in the temporary directory when that
    /// is not writable).
    fn create(target: &Path) -> std::io::Result<Spool> {
        let name = format!(
            ".{}.spool-{}",
            target
                .file_name()
                .map_or("traces".into(), |n| n.to_string_lossy()),
            std::process::id()
        );
        let beside = target
            .parent()
            .map(|d| {
                if d.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    d
                }
            })
            .map(|d| d.join(&name));
        let open = |path: &Path| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(path)
        };
        let (file, path) = match beside.as_deref().map(|p| (open(p), p)) {
            Some((Ok(file), path)) => (file, path.to_path_buf()),
            _ => {
                let path = std::env::temp_dir().join(&name);
                (open(&path)?, path)
            }
        };
        // Unix keeps an open file after its name is gone: nothing is left
        // behind if the process dies.
        if cfg!(unix) {
            let _ = std::fs::remove_file(&path);
        }
        Ok(Spool {
            file: BufWriter::with_capacity(1 << 20, file),
            _name: RemoveOnDrop(path),
        })
    }
}

/// Writes the header for `meta`; returns its checksum.
fn write_header(file: &mut AtomicFile, meta: &CacheMeta) -> std::io::Result<u64> {
    let text = header_text(meta);
    let mut h = Hasher::new();
    h.write(text.as_bytes());
    file.write_all(MAGIC)?;
    file.write_all(&VERSION.to_le_bytes())?;
    file.write_all(&(text.len() as u32).to_le_bytes())?;
    file.write_all(text.as_bytes())?;
    file.write_all(&h.finish().to_le_bytes())?;
    Ok(h.finish())
}

impl CacheWriter {
    /// Starts a cache at `path` (replaced atomically on
    /// [`CacheWriter::finish`]).
    ///
    /// # Errors
    /// When the file cannot be created or written.
    pub fn create(path: &Path, meta: &CacheMeta) -> Result<CacheWriter, CacheError> {
        Self::with_block_positions(path, meta, BLOCK_POSITIONS)
    }

    /// As [`CacheWriter::create`], with blocks of `block_positions`
    /// positions (rounded up to a multiple of [`RUN_POSITIONS`], at most
    /// [`BLOCK_POSITIONS`]; smaller blocks shuffle finer when streamed).
    ///
    /// # Errors
    /// When the file cannot be created or written.
    pub fn with_block_positions(
        path: &Path,
        meta: &CacheMeta,
        block_positions: usize,
    ) -> Result<CacheWriter, CacheError> {
        let mut file = AtomicFile::create(path)?;
        let header = write_header(&mut file, meta).map_err(|source| CacheError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self::new(path, Out::File(file, header), block_positions))
    }

    /// Starts a cache at `path` whose header (see [`CacheMeta`]) is given
    /// at the end, to [`CacheWriter::finish_with`]; until then the blocks
    /// go to a spool file beside it.
    ///
    /// # Errors
    /// When the spool file cannot be created.
    pub fn spooled(path: &Path) -> Result<CacheWriter, CacheError> {
        let spool = Spool::create(path).map_err(|source| CacheError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self::new(path, Out::Spool(spool), BLOCK_POSITIONS))
    }

    fn new(path: &Path, out: Out, block_positions: usize) -> Self {
        CacheWriter {
            target: path.to_path_buf(),
            out: Some(out),
            block_positions: block_positions
                .clamp(1, BLOCK_POSITIONS)
                .next_multiple_of(RUN_POSITIONS),
            pending: TraceSet::new(),
            positions: 0,
            record_bytes: 0,
            whole_record_bytes: 0,
            sums: Vec::new(),
        }
    }

    fn io(&self, source: std::io::Error) -> CacheError {
        CacheError::Io {
            path: self.target.clone(),
            source,
        }
    }

    /// Positions appended so far.
    pub fn positions(&self) -> u64 {
        self.positions + self.pending.len() as u64
    }

    /// Bytes of the positions appended so far as whole records.
    pub fn whole_record_bytes(&self) -> u64 {
        self.whole_record_bytes + self.pending.record_bytes() as u64
    }

    /// Appends the positions of `set`.
    ///
    /// # Errors
    /// When writing fails.
    pub fn append(&mut self, set: &TraceSet) -> Result<(), CacheError> {
        for i in 0..set.len() {
            self.pending.push_record_of(set, i);
            if self.pending.len() == self.block_positions {
                self.write_block()?;
            }
        }
        Ok(())
    }

    fn write_block(&mut self) -> Result<(), CacheError> {
        let block = std::mem::take(&mut self.pending);
        if block.is_empty() {
            return Ok(());
        }
        let (positions, whole_bytes) = (block.len(), block.record_bytes());
        let runs = RunSet::encode_or_whole(block);
        let (records, starts) = runs.records().raw_parts();
        let mut start_bytes = Vec::with_capacity(positions * 4);
        for s in starts {
            start_bytes.extend_from_slice(&(s as u32).to_le_bytes());
        }
        let mut table_bytes: Vec<u8> = runs
            .whole_words()
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        table_bytes.extend(runs.run_coefficients().iter().flat_map(|c| c.to_le_bytes()));
        let stored = runs.coefficients().0 as u64;
        let sum = block_checksum(stored, &start_bytes, &table_bytes, records);
        let out: &mut dyn Write = match self.out.as_mut().expect("an unfinished cache") {
            Out::File(file, _) => file,
            Out::Spool(spool) => &mut spool.file,
        };
        let result = (|| {
            out.write_all(&(positions as u32).to_le_bytes())?;
            out.write_all(&(records.len() as u64).to_le_bytes())?;
            out.write_all(&stored.to_le_bytes())?;
            out.write_all(&start_bytes)?;
            out.write_all(&table_bytes)?;
            out.write_all(records)?;
            out.write_all(&sum.to_le_bytes())
        })();
        result.map_err(|e| self.io(e))?;
        self.sums.push(sum);
        self.positions += positions as u64;
        self.record_bytes += records.len() as u64;
        self.whole_record_bytes += whole_bytes as u64;
        Ok(())
    }

    /// Writes the last block and the trailer and commits the file.
    ///
    /// # Panics
    /// For a [`CacheWriter::spooled`] cache, which needs
    /// [`CacheWriter::finish_with`].
    ///
    /// # Errors
    /// When writing fails.
    pub fn finish(self) -> Result<u64, CacheError> {
        assert!(
            matches!(self.out, Some(Out::File(..))),
            "a spooled cache is finished with its header (finish_with)"
        );
        self.finish_inner(None)
    }

    /// Writes the header for `meta` (for a [`CacheWriter::spooled`] cache;
    /// a cache whose header is written ignores `meta`), the blocks and the
    /// trailer, and commits the file.
    ///
    /// # Errors
    /// When writing fails.
    pub fn finish_with(self, meta: &CacheMeta) -> Result<u64, CacheError> {
        self.finish_inner(Some(meta))
    }

    fn finish_inner(mut self, meta: Option<&CacheMeta>) -> Result<u64, CacheError> {
        self.write_block()?;
        let (mut file, header) = match self.out.take().expect("an unfinished cache") {
            Out::File(file, header) => (file, header),
            Out::Spool(spool) => {
                let meta = meta.expect("a spooled cache needs its header");
                let mut file = AtomicFile::create(&self.target)?;
                let header = write_header(&mut file, meta)
                    .and_then(|header| spool.copy_to(&mut file).map(|()| header))
                    .map_err(|e| self.io(e))?;
                (file, header)
            }
        };
        let mut chain = Hasher::new();
        chain.write_u64(header);
        for &sum in &self.sums {
            chain.write_u64(sum);
        }
        let mut trailer = Vec::with_capacity(4 + TRAILER as usize);
        trailer.extend_from_slice(&0u32.to_le_bytes());
        for v in [
            self.positions,
            self.record_bytes,
            self.sums.len() as u64,
            chain.finish(),
        ] {
            trailer.extend_from_slice(&v.to_le_bytes());
        }
        trailer.extend_from_slice(END_MAGIC);
        file.write_all(&trailer).map_err(|e| self.io(e))?;
        file.commit()?;
        Ok(self.positions)
    }
}

impl Spool {
    /// Copies the blocks written so far to `out`.
    fn copy_to(self, out: &mut impl Write) -> std::io::Result<()> {
        let mut file = self.file.into_inner().map_err(|e| e.into_error())?;
        file.seek(SeekFrom::Start(0))?;
        std::io::copy(&mut BufReader::with_capacity(1 << 20, file), out)?;
        Ok(())
    }
}

/// The checksum of a block's parts.
fn block_checksum(stored: u64, starts: &[u8], tables: &[u8], records: &[u8]) -> u64 {
    let mut h = Hasher::new();
    h.write_u64(stored);
    h.write(starts);
    h.write(tables);
    h.write(records);
    h.finish()
}

/// Bytes of a block's tables of `n` positions: the bitmap of whole records
/// and the coefficient counts of the runs.
fn table_bytes(n: usize) -> usize {
    8 * n.div_ceil(64) + 4 * n.div_ceil(RUN_POSITIONS)
}

/// Writes `set` as a cache at `path`.
///
/// # Errors
/// When writing fails.
pub fn save(path: &Path, set: &TraceSet, meta: &CacheMeta) -> Result<(), CacheError> {
    let mut w = CacheWriter::create(path, meta)?;
    w.append(set)?;
    w.finish()?;
    Ok(())
}

/// Reads a cache: the header at once, the blocks in any order.
pub struct CacheReader {
    path: PathBuf,
    file: BufReader<File>,
    meta: CacheMeta,
    positions: u64,
    record_bytes: u64,
    /// File offset, position count and first position of every block.
    blocks: Vec<(u64, usize, u64)>,
    checksum: u64,
}

impl CacheReader {
    /// Opens `path`, checks the header, the schema and the trailer, and
    /// finds the blocks.
    ///
    /// # Errors
    /// [`CacheError`] naming the file and what is wrong.
    pub fn open(path: &Path) -> Result<CacheReader, CacheError> {
        let io = |source| CacheError::Io {
            path: path.to_path_buf(),
            source,
        };
        let corrupt = |reason: String| CacheError::Corrupt {
            path: path.to_path_buf(),
            reason,
        };
        let file = File::open(path).map_err(io)?;
        let length = file.metadata().map_err(io)?.len();
        let mut file = BufReader::with_capacity(1 << 20, file);
        let mut magic = [0u8; 8];
        if file.read_exact(&mut magic).is_err() || &magic != MAGIC {
            return Err(CacheError::NotACache {
                path: path.to_path_buf(),
            });
        }
        let version = read_u32(&mut file).map_err(io)?;
        if version != VERSION {
            return Err(CacheError::Version {
                path: path.to_path_buf(),
                found: version,
            });
        }
        let header_len = read_u32(&mut file).map_err(io)?;
        if header_len > MAX_HEADER || header_len as u64 > length {
            return Err(corrupt(format!("header length {header_len}")));
        }
        let mut text = vec![0u8; header_len as usize];
        file.read_exact(&mut text).map_err(io)?;
        let sum = read_u64(&mut file).map_err(io)?;
        let mut h = Hasher::new();
        h.write(&text);
        if h.finish() != sum {
            return Err(corrupt("header checksum mismatch".into()));
        }
        let text = String::from_utf8(text).map_err(|_| corrupt("header is not UTF-8".into()))?;
        let mut meta = CacheMeta {
            resolve: String::new(),
            params: String::new(),
            inputs: Vec::new(),
        };
        let mut schema = Vec::new();
        for line in text.lines() {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "resolve" => meta.resolve = value.to_string(),
                "params" => meta.params = value.to_string(),
                "input" => meta.inputs.push(value.to_string()),
                _ => schema.push(line.to_string()),
            }
        }
        let ours = schema_lines();
        if schema != ours {
            let difference = match schema.iter().zip(&ours).position(|(a, b)| a != b) {
                Some(i) => format!("`{}` in the cache, `{}` in this build", schema[i], ours[i]),
                None => format!(
                    "{} schema lines in the cache, {} in this build",
                    schema.len(),
                    ours.len()
                ),
            };
            return Err(CacheError::Schema {
                path: path.to_path_buf(),
                difference,
            });
        }
        let body = 8 + 4 + 4 + header_len as u64 + 8;
        // The trailer.
        if length < body + 4 + TRAILER {
            return Err(corrupt("truncated (no trailer)".into()));
        }
        file.seek(SeekFrom::Start(length - TRAILER)).map_err(io)?;
        let positions = read_u64(&mut file).map_err(io)?;
        let record_bytes = read_u64(&mut file).map_err(io)?;
        let block_count = read_u64(&mut file).map_err(io)?;
        let chain_sum = read_u64(&mut file).map_err(io)?;
        file.read_exact(&mut magic).map_err(io)?;
        if &magic != END_MAGIC {
            return Err(corrupt("truncated (no end marker)".into()));
        }
        // The blocks: counts and sizes, and the chain of their checksums.
        let mut blocks = Vec::new();
        let mut chain = Hasher::new();
        chain.write_u64(sum);
        let mut at = body;
        let (mut seen_positions, mut seen_bytes) = (0u64, 0u64);
        loop {
            file.seek(SeekFrom::Start(at)).map_err(io)?;
            let n = read_u32(&mut file).map_err(io)? as usize;
            if n == 0 {
                break;
            }
            let bytes = read_u64(&mut file).map_err(io)?;
            let size = BLOCK_HEADER + 4 * n as u64 + table_bytes(n) as u64 + bytes + 8;
            if n > BLOCK_POSITIONS || at + size > length - TRAILER - 4 {
                return Err(corrupt(format!(
                    "block {} at byte {at}: bad size",
                    blocks.len()
                )));
            }
            file.seek(SeekFrom::Start(at + size - 8)).map_err(io)?;
            chain.write_u64(read_u64(&mut file).map_err(io)?);
            blocks.push((at, n, seen_positions));
            seen_positions += n as u64;
            seen_bytes += bytes;
            at += size;
        }
        if at + 4 + TRAILER != length
            || seen_positions != positions
            || seen_bytes != record_bytes
            || blocks.len() as u64 != block_count
            || chain.finish() != chain_sum
        {
            return Err(corrupt("blocks and trailer disagree".into()));
        }
        // Runs restart at block starts: only the last block may end inside
        // a run (readers join blocks' runs).
        if let Some(k) = blocks
            .iter()
            .rev()
            .skip(1)
            .position(|&(_, n, _)| !n.is_multiple_of(RUN_POSITIONS))
        {
            let k = blocks.len() - 2 - k;
            return Err(corrupt(format!(
                "block {k} holds {} positions, not whole runs of {RUN_POSITIONS}",
                blocks[k].1
            )));
        }
        Ok(CacheReader {
            path: path.to_path_buf(),
            file,
            meta,
            positions,
            record_bytes,
            blocks,
            checksum: chain_sum,
        })
    }

    /// The header's facts.
    pub fn meta(&self) -> &CacheMeta {
        &self.meta
    }

    /// Number of positions.
    pub fn positions(&self) -> u64 {
        self.positions
    }

    /// Bytes of records (as stored: runs).
    pub fn record_bytes(&self) -> u64 {
        self.record_bytes
    }

    /// The checksum of the header and every block (from the trailer,
    /// checked when the cache was opened).
    pub fn content_checksum(&self) -> u64 {
        self.checksum
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Positions in block `k`, and the index of its first position.
    pub fn block_span(&self, k: usize) -> (u64, usize) {
        (self.blocks[k].2, self.blocks[k].1)
    }

    /// Reads block `k` as it is stored, runs starting at its first
    /// position, checking its checksum and records.
    ///
    /// # Errors
    /// A read error or a corrupt block.
    pub fn read_block_runs(&mut self, k: usize) -> Result<RunSet, CacheError> {
        let (at, n, first) = self.blocks[k];
        let io = |source| CacheError::Io {
            path: self.path.clone(),
            source,
        };
        self.file.seek(SeekFrom::Start(at + 4)).map_err(io)?;
        let bytes = read_u64(&mut self.file).map_err(io)? as usize;
        let stored = read_u64(&mut self.file).map_err(io)?;
        let mut start_bytes = vec![0u8; 4 * n];
        self.file.read_exact(&mut start_bytes).map_err(io)?;
        let mut table = vec![0u8; table_bytes(n)];
        self.file.read_exact(&mut table).map_err(io)?;
        let mut records = vec![0u8; bytes];
        self.file.read_exact(&mut records).map_err(io)?;
        let sum = read_u64(&mut self.file).map_err(io)?;
        let corrupt = |reason: String| CacheError::Corrupt {
            path: self.path.clone(),
            reason: format!("block {k} (positions from {first}): {reason}"),
        };
        if block_checksum(stored, &start_bytes, &table, &records) != sum {
            return Err(corrupt("checksum mismatch".into()));
        }
        let starts: Vec<u64> = start_bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")) as u64)
            .collect();
        let (word_bytes, count_bytes) = table.split_at(8 * n.div_ceil(64));
        let words = word_bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        let counts = count_bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        let records = TraceSet::from_raw_parts(records, &starts)
            .map_err(|e: RecordError| corrupt(e.to_string()))?;
        RunSet::from_parts(records, words, counts, stored as usize).map_err(|e| corrupt(e.into()))
    }

    /// Reads block `k` into `set` as whole records (appending; into an
    /// empty set without a copy when the block stores every record whole),
    /// checking its checksum and records.
    ///
    /// # Errors
    /// A read error or a corrupt block.
    pub fn read_block(&mut self, k: usize, set: &mut TraceSet) -> Result<(), CacheError> {
        let block = self.read_block_runs(k)?.into_whole().map_err(|e| {
            let (_, _, first) = self.blocks[k];
            CacheError::Corrupt {
                path: self.path.clone(),
                reason: format!("block {k} (positions from {first}): {e}"),
            }
        })?;
        set.append(block);
        Ok(())
    }

    /// Reads every position, in order.
    ///
    /// # Errors
    /// A read error or a corrupt block.
    pub fn read_all(&mut self, mut on_progress: impl FnMut(usize)) -> Result<TraceSet, CacheError> {
        let mut set = TraceSet::with_capacity(self.positions as usize, self.record_bytes as usize);
        for k in 0..self.blocks.len() {
            self.read_block(k, &mut set)?;
            on_progress(set.len());
        }
        Ok(set)
    }
}

fn read_u32(r: &mut impl Read) -> std::io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn read_u64(r: &mut impl Read) -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// Reads the whole cache at `path`.
///
/// # Errors
/// [`CacheError`] naming the file and what is wrong.
pub fn load(path: &Path) -> Result<(TraceSet, CacheMeta), CacheError> {
    let mut r = CacheReader::open(path)?;
    let set = r.read_all(|_| {})?;
    Ok((set, r.meta().clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_data::positions;

    fn set(n: usize) -> TraceSet {
        let mut set = TraceSet::new();
        for (i, (position, result)) in positions(n).into_iter().enumerate() {
            set.push_position(&position, result, (i % 2 == 0).then_some(i as i32));
        }
        set
    }

    fn meta() -> CacheMeta {
        CacheMeta {
            resolve: "qsearch".into(),
            params: "0123456789abcdef".into(),
            inputs: vec!["a.epd (3 positions, fnv64 0)".into(), "b.epd".into()],
        }
    }

    #[test]
    fn a_cache_round_trips_across_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.traces");
        let original = set(300);
        // Several blocks: repeat the positions past one block.
        let mut big = TraceSet::new();
        while big.len() < BLOCK_POSITIONS + 700 {
            big.extend(&original);
        }
        save(&path, &big, &meta()).unwrap();
        let mut reader = CacheReader::open(&path).unwrap();
        assert_eq!(reader.blocks(), 2);
        assert_eq!(reader.positions(), big.len() as u64);
        assert_eq!(reader.meta(), &meta());
        let mut second = TraceSet::new();
        reader.read_block(1, &mut second).unwrap();
        assert_eq!(second.len(), big.len() - BLOCK_POSITIONS);
        let (back, m) = load(&path).unwrap();
        assert_eq!(m, meta());
        assert_eq!(back, big);
        assert_eq!(back.fingerprint(), big.fingerprint());
        // An empty set is a valid cache too.
        save(&path, &TraceSet::new(), &meta()).unwrap();
        assert!(load(&path).unwrap().0.is_empty());
    }

    /// Positions of games are stored as runs of differences, block by
    /// block (blocks rounded to whole runs): the records are smaller than
    /// whole ones, each block reads as the runs of its positions, and the
    /// cache reads back as the positions.
    #[test]
    fn game_positions_are_stored_as_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.traces");
        let games = crate::test_data::game_positions(60, 50);
        let mut w = CacheWriter::with_block_positions(&path, &meta(), 1000).unwrap();
        w.append(&games).unwrap();
        let whole = w.whole_record_bytes();
        assert_eq!(whole, games.record_bytes() as u64);
        w.finish().unwrap();
        let mut reader = CacheReader::open(&path).unwrap();
        assert!(
            reader.record_bytes() * 4 < whole * 3,
            "{} of {whole}",
            reader.record_bytes()
        );
        let mut at = 0;
        for k in 0..reader.blocks() {
            let (first, n) = reader.block_span(k);
            assert_eq!((first as usize, n), (at, 1008.min(games.len() - at)));
            let block = games.select(&(at..at + n).collect::<Vec<_>>());
            assert_eq!(reader.read_block_runs(k).unwrap(), RunSet::encode(&block));
            at += n;
        }
        assert_eq!(at, games.len());
        assert_eq!(load(&path).unwrap().0, games);
        // Positions that share little stay whole records, read as they are.
        let scattered = set(3000);
        let mut w = CacheWriter::with_block_positions(&path, &meta(), 1000).unwrap();
        w.append(&scattered).unwrap();
        w.finish().unwrap();
        let mut reader = CacheReader::open(&path).unwrap();
        for k in 0..reader.blocks() {
            assert!(
                reader.read_block_runs(k).unwrap().is_all_whole(),
                "block {k}"
            );
        }
        assert_eq!(load(&path).unwrap().0, scattered);
    }

    /// The header's bytes: (start, text) of a cache file.
    fn header(bytes: &[u8]) -> (usize, String) {
        let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        (16, String::from_utf8(bytes[16..16 + len].to_vec()).unwrap())
    }

    /// `bytes` with its header replaced by `text` (checksum fixed).
    fn with_header(bytes: &[u8], text: &str) -> Vec<u8> {
        let (start, old) = header(bytes);
        let mut out = bytes[..12].to_vec();
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
        let mut h = Hasher::new();
        h.write(text.as_bytes());
        out.extend_from_slice(&h.finish().to_le_bytes());
        // The chain of checksums starts with the header's.
        let rest = &bytes[start + old.len() + 8..];
        let mut rest = rest.to_vec();
        let n = rest.len();
        let mut chain = Hasher::new();
        chain.write_u64(h.finish());
        let mut at = 0;
        loop {
            let count = u32::from_le_bytes(rest[at..at + 4].try_into().unwrap()) as u64;
            if count == 0 {
                break;
            }
            let records = u64::from_le_bytes(rest[at + 4..at + 12].try_into().unwrap());
            let end =
                at as u64 + BLOCK_HEADER + 4 * count + table_bytes(count as usize) as u64 + records;
            chain.write_u64(u64::from_le_bytes(
                rest[end as usize..end as usize + 8].try_into().unwrap(),
            ));
            at = end as usize + 8;
        }
        rest[n - 16..n - 8].copy_from_slice(&chain.finish().to_le_bytes());
        out.extend_from_slice(&rest);
        out
    }

    #[test]
    fn a_cache_of_another_schema_or_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.traces");
        save(&path, &set(50), &meta()).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let (_, text) = header(&bytes);
        // Unchanged header, rewritten: still accepted (the test's rewriting
        // is right).
        std::fs::write(&path, with_header(&bytes, &text)).unwrap();
        assert!(CacheReader::open(&path).is_ok());
        // A renamed weight: another schema.
        let first = text.lines().find(|l| l.starts_with("scalar ")).unwrap();
        let renamed = text.replacen(first, "scalar material[X].mg", 1);
        std::fs::write(&path, with_header(&bytes, &renamed)).unwrap();
        let e = CacheReader::open(&path).err().expect("refused");
        assert!(matches!(e, CacheError::Schema { .. }), "{e}");
        assert!(e.to_string().contains("material[X].mg"), "{e}");
        // One weight more.
        let longer = format!("{text}scalar extra[0].mg\n");
        std::fs::write(&path, with_header(&bytes, &longer)).unwrap();
        assert!(matches!(
            CacheReader::open(&path),
            Err(CacheError::Schema { .. })
        ));
        // Another format version.
        let mut other = bytes.clone();
        other[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
        std::fs::write(&path, &other).unwrap();
        assert!(
            matches!(CacheReader::open(&path), Err(CacheError::Version { found, .. }) if found == VERSION + 1)
        );
        // Not a cache at all.
        std::fs::write(&path, b"8/8/8/8/8/8/8/8 w - - c9 \"1-0\";\n").unwrap();
        assert!(matches!(
            CacheReader::open(&path),
            Err(CacheError::NotACache { .. })
        ));
    }

    #[test]
    fn damaged_caches_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.traces");
        save(&path, &set(200), &meta()).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let (start, text) = header(&bytes);
        let body = start + text.len() + 8;
        // A flipped bit in the records: the block's checksum.
        let mut flipped = bytes.clone();
        flipped[body + 12 + 4 * 200 + 100] ^= 4;
        std::fs::write(&path, &flipped).unwrap();
        let e = load(&path).expect_err("refused");
        assert!(e.to_string().contains("checksum"), "{e}");
        // Cut short: no trailer.
        for cut in [bytes.len() - 1, bytes.len() / 2, body + 3] {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            assert!(
                matches!(CacheReader::open(&path), Err(CacheError::Corrupt { .. })),
                "cut at {cut}"
            );
        }
        // A block before the last that ends inside a run (the writer never
        // makes one): readers could not join the runs.
        let mut w = CacheWriter::create(&path, &meta()).unwrap();
        w.block_positions = 100;
        w.append(&set(200)).unwrap();
        w.finish().unwrap();
        let e = CacheReader::open(&path).err().expect("refused");
        assert!(e.to_string().contains("block 0 holds 100 positions"), "{e}");
        // A damaged header.
        let mut header_bit = bytes.clone();
        header_bit[start + 3] ^= 1;
        std::fs::write(&path, &header_bit).unwrap();
        assert!(matches!(
            CacheReader::open(&path),
            Err(CacheError::Corrupt { .. })
        ));
    }
}
