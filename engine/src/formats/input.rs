//! Opening the tools' input files: plain, gzip or zstd, or standard input.
//!
//! Every tool of the workspace reads its data through [`open_input`], so a
//! PGN, EPD or CSV file can be given as is, compressed with gzip (`.gz`,
//! including concatenated members) or zstd (`.zst`), or piped in with `-`.
//! The compression is recognised from the file's first bytes (its magic
//! number), not from its name, so a misnamed file still reads correctly.
//! A missing, empty or unreadable input is a typed [`InputError`] naming the
//! path, reported before any work starts. The returned [`Input`] counts the
//! bytes taken from the underlying file (compressed bytes for compressed
//! files) in a shared [`ByteCounter`], which a progress bar can poll from
//! another thread against [`Input::total_bytes`].

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use thiserror::Error;

/// The path that stands for standard input.
pub const STDIN_PATH: &str = "-";

/// Why an input could not be opened.
#[derive(Debug, Error)]
pub enum InputError {
    /// No file exists at the path.
    #[error("{path}: no such file")]
    NotFound {
        /// The path as given.
        path: PathBuf,
    },
    /// The file (or standard input) holds no bytes at all.
    #[error("{path}: the input is empty")]
    Empty {
        /// The path as given.
        path: PathBuf,
    },
    /// The path names a directory.
    #[error("{path}: is a directory, not a file")]
    IsDirectory {
        /// The path as given.
        path: PathBuf,
    },
    /// The file exists but cannot be opened or read (permissions, I/O).
    #[error("{path}: cannot read: {source}")]
    Unreadable {
        /// The path as given.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// The file starts like a compressed stream but the decoder rejects it.
    #[error("{path}: cannot start the {format} decoder: {source}")]
    Decoder {
        /// The path as given.
        path: PathBuf,
        /// "zstd" or "gzip".
        format: &'static str,
        /// The decoder's reason.
        #[source]
        source: io::Error,
    },
}

/// How an input is compressed, as recognised from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed.
    Plain,
    /// gzip (one or more concatenated members).
    Gzip,
    /// Zstandard.
    Zstd,
}

impl Compression {
    /// Recognises the compression from the first bytes of a stream.
    pub fn sniff(first_bytes: &[u8]) -> Compression {
        if first_bytes.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if first_bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::Plain
        }
    }
}

/// A shared count of bytes read, cheap to clone and to poll from another
/// thread (e.g. by a progress bar).
#[derive(Debug, Clone, Default)]
pub struct ByteCounter(Arc<AtomicU64>);

impl ByteCounter {
    /// A counter at zero.
    pub fn new() -> ByteCounter {
        ByteCounter::default()
    }

    /// Bytes counted so far.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Adds `n` bytes.
    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }
}

/// A reader that adds every byte it passes on to a [`ByteCounter`].
#[derive(Debug)]
pub struct CountingReader<R> {
    inner: R,
    counter: ByteCounter,
}

impl<R> CountingReader<R> {
    /// Wraps `inner`, counting into `counter`.
    pub fn new(inner: R, counter: ByteCounter) -> CountingReader<R> {
        CountingReader { inner, counter }
    }

    /// The counter this reader adds to.
    pub fn counter(&self) -> &ByteCounter {
        &self.counter
    }
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.add(n as u64);
        Ok(n)
    }
}

/// An opened input: a decompressed byte stream plus what a progress display
/// needs.
pub struct Input {
    reader: Box<dyn Read + Send>,
    path: PathBuf,
    compression: Compression,
    total_bytes: Option<u64>,
    bytes_read: ByteCounter,
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("path", &self.path)
            .field("compression", &self.compression)
            .field("total_bytes", &self.total_bytes)
            .field("bytes_read", &self.bytes_read.get())
            .finish_non_exhaustive()
    }
}

impl Input {
    /// The path as given (`-` for standard input).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The compression recognised from the first bytes.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Size of the file on disk (compressed size for compressed files);
    /// `None` for standard input.
    pub fn total_bytes(&self) -> Option<u64> {
        self.total_bytes
    }

    /// The live count of bytes taken from the file so far, comparable with
    /// [`Input::total_bytes`].
    pub fn bytes_read(&self) -> ByteCounter {
        self.bytes_read.clone()
    }

    /// The decompressed stream, for readers that need ownership.
    pub fn into_reader(self) -> Box<dyn Read + Send> {
        self.reader
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf)
    }
}

/// Opens `path` (or standard input for `-`), recognising gzip and zstd
/// compression from the first bytes.
///
/// # Errors
/// [`InputError::NotFound`], [`InputError::IsDirectory`],
/// [`InputError::Empty`] (zero bytes), [`InputError::Unreadable`] or
/// [`InputError::Decoder`], each naming the path.
///
/// # Examples
/// ```
/// use std::io::Read;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("games.pgn");
/// std::fs::write(&path, "1. e4 e5 *\n").unwrap();
/// let mut text = String::new();
/// engine::formats::input::open_input(&path).unwrap().read_to_string(&mut text).unwrap();
/// assert_eq!(text, "1. e4 e5 *\n");
/// ```
pub fn open_input(path: &Path) -> Result<Input, InputError> {
    let counter = ByteCounter::new();
    let unreadable = |source: io::Error| InputError::Unreadable {
        path: path.to_path_buf(),
        source,
    };
    let (raw, total_bytes): (Box<dyn Read + Send>, Option<u64>) = if path.as_os_str() == STDIN_PATH
    {
        (Box::new(io::stdin()), None)
    } else {
        let metadata = std::fs::metadata(path).map_err(|source| {
            if source.kind() == io::ErrorKind::NotFound {
                InputError::NotFound {
                    path: path.to_path_buf(),
                }
            } else {
                unreadable(source)
            }
        })?;
        if metadata.is_dir() {
            return Err(InputError::IsDirectory {
                path: path.to_path_buf(),
            });
        }
        let file = File::open(path).map_err(unreadable)?;
        (Box::new(file), Some(metadata.len()))
    };
    let mut buffered = BufReader::with_capacity(1 << 16, CountingReader::new(raw, counter.clone()));
    let first_bytes = buffered.fill_buf().map_err(unreadable)?;
    if first_bytes.is_empty() {
        return Err(InputError::Empty {
            path: path.to_path_buf(),
        });
    }
    let compression = Compression::sniff(first_bytes);
    let reader: Box<dyn Read + Send> = match compression {
        Compression::Plain => Box::new(buffered),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(buffered)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(buffered).map_err(
            |source| InputError::Decoder {
                path: path.to_path_buf(),
                format: "zstd",
                source,
            },
        )?),
    };
    Ok(Input {
        reader,
        path: path.to_path_buf(),
        compression,
        total_bytes,
        bytes_read: counter,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const TEXT: &str = "[Event \"x\"]\n\n1. e4 e5 2. Nf3 *\n";

    fn read_all(path: &Path) -> (String, Input) {
        let mut input = open_input(path).unwrap();
        let mut text = String::new();
        input.read_to_string(&mut text).unwrap();
        (text, input)
    }

    #[test]
    fn plain_gzip_and_zstd_read_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.pgn");
        std::fs::write(&plain, TEXT).unwrap();

        // Two concatenated gzip members must read as one stream.
        let gz = dir.path().join("a.pgn.gz");
        let mut bytes = Vec::new();
        for half in [&TEXT[..10], &TEXT[10..]] {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            enc.write_all(half.as_bytes()).unwrap();
            bytes.extend(enc.finish().unwrap());
        }
        std::fs::write(&gz, &bytes).unwrap();

        let zst = dir.path().join("a.pgn.zst");
        std::fs::write(&zst, zstd::encode_all(TEXT.as_bytes(), 3).unwrap()).unwrap();

        for (path, compression) in [
            (&plain, Compression::Plain),
            (&gz, Compression::Gzip),
            (&zst, Compression::Zstd),
        ] {
            let (text, input) = read_all(path);
            assert_eq!(text, TEXT, "{}", path.display());
            assert_eq!(input.compression(), compression);
            let size = std::fs::metadata(path).unwrap().len();
            assert_eq!(input.total_bytes(), Some(size));
            assert_eq!(input.bytes_read().get(), size);
        }
    }

    #[test]
    fn missing_empty_and_directory_are_typed_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pgn");
        let err = open_input(&missing).unwrap_err();
        assert!(matches!(err, InputError::NotFound { .. }));
        assert!(err.to_string().contains("missing.pgn"));

        let empty = dir.path().join("empty.pgn");
        std::fs::write(&empty, "").unwrap();
        assert!(matches!(
            open_input(&empty).unwrap_err(),
            InputError::Empty { .. }
        ));

        assert!(matches!(
            open_input(dir.path()).unwrap_err(),
            InputError::IsDirectory { .. }
        ));
    }
}
