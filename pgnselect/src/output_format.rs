//! The output formats and the sink the lines are written to.
//!
//! Lines are formatted by [`engine::formats::labeled`]'s writers, so every tool reads
//! them back with the same [`engine::formats::labeled::LabeledReader`]: canonical
//! EPD (`hmvc`, `fmvn`, `c9`), Arasan-compatible EPD (`c1 "0 3"` castle status, `c2 "1.0"` result), or CSV
//! with a `fen,result,score` header (the score column is empty unless
//! `--comment-scores` labels the positions). [`OutputSink`] writes to a file atomically (a
//! temporary file renamed on [`OutputSink::finish`]) or streams to standard
//! output.

use std::io::{self, BufWriter, Stdout, Write};
use std::path::Path;

use anyhow::{Context, Result};
use clap::ValueEnum;
use engine::chess::position::append_fen;
use engine::formats::atomic_file::AtomicFile;
use engine::formats::labeled::{Castled, LabeledPosition};

/// Header line of the CSV format.
pub const CSV_HEADER: &str = "fen,result,score";

/// Buffer of the standard-output writer.
const STDOUT_BUFFER_BYTES: usize = 1 << 16;

/// How positions are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum OutputFormat {
    /// Canonical EPD: board, `hmvc`, `fmvn`, `c9 "1-0"` (and `ce` with
    /// `--comment-scores`).
    #[default]
    Epd,
    /// Arasan's tuner format: board, `c1 "3 5"` (castle statuses), `c2 "1.0"`.
    Arasan,
    /// CSV with a `fen,result,score` header.
    Csv,
}

impl OutputFormat {
    /// The line of one position, without the newline, appended to `out`.
    /// `castled` (the side each colour castled to earlier in the game) is
    /// written only by the Arasan format, whose `c1` tag carries it.
    pub fn append_line(self, record: &LabeledPosition, castled: Castled, out: &mut Vec<u8>) {
        match self {
            OutputFormat::Epd => record.append_epd(out),
            OutputFormat::Arasan => record.append_arasan_epd(castled, out),
            OutputFormat::Csv => {
                append_fen(&record.position, out);
                out.push(b',');
                if let Some(result) = record.result {
                    out.extend_from_slice(result.pgn().as_bytes());
                }
                out.push(b',');
                if let Some(score) = record.score {
                    out.extend_from_slice(score.to_string().as_bytes());
                }
            }
        }
    }

    /// What precedes the first line (the CSV header).
    pub fn preamble(self) -> Option<&'static str> {
        (self == OutputFormat::Csv).then_some(CSV_HEADER)
    }
}

/// Where the lines go.
#[derive(Debug)]
pub enum OutputSink {
    /// A file, replaced atomically at the end.
    File(AtomicFile),
    /// Standard output, streamed.
    Stdout(BufWriter<Stdout>),
}

impl OutputSink {
    /// Opens `path`, or standard output when `None` or `-`.
    ///
    /// # Errors
    /// When the temporary file cannot be created.
    pub fn open(path: Option<&Path>) -> Result<OutputSink> {
        match path {
            Some(path) if path.as_os_str() != "-" => Ok(OutputSink::File(
                AtomicFile::create(path)
                    .with_context(|| format!("cannot write {}", path.display()))?,
            )),
            _ => Ok(OutputSink::Stdout(BufWriter::with_capacity(
                STDOUT_BUFFER_BYTES,
                io::stdout(),
            ))),
        }
    }

    /// What the lines are written to, for messages.
    pub fn name(&self) -> String {
        match self {
            OutputSink::File(file) => file.target().display().to_string(),
            OutputSink::Stdout(_) => "standard output".to_string(),
        }
    }

    /// Flushes, and for a file renames it over the target.
    ///
    /// # Errors
    /// Write or rename failures, naming the file.
    pub fn finish(self) -> Result<()> {
        match self {
            OutputSink::File(file) => {
                let target = file.target().to_path_buf();
                file.commit()
                    .with_context(|| format!("cannot write {}", target.display()))
            }
            OutputSink::Stdout(mut out) => out.flush().context("cannot write standard output"),
        }
    }
}

impl Write for OutputSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            OutputSink::File(file) => file.write(buf),
            OutputSink::Stdout(out) => out.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            OutputSink::File(file) => file.write_all(buf),
            OutputSink::Stdout(out) => out.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            OutputSink::File(file) => file.flush(),
            OutputSink::Stdout(out) => out.flush(),
        }
    }
}
