//! Resumable output: the output file plus its `.progress` sidecar, and how a
//! rerun finds where the previous run stopped.
//!
//! The labeler works through *jobs*: the positions of its shard, in input
//! order, numbered from 0. Every job ends as exactly one event, written in
//! job order: a labeled line in the output, or (when the engine failed for
//! good) a `failed` record appended to the sidecar. Each event is handed to
//! the operating system (flushed) before the next one is written, so what a
//! kill leaves on disk is always a prefix of the event sequence, possibly
//! with one torn last line.
//!
//! On start, an existing, non-empty output is resumed: a trailing partial
//! line is truncated (in the output and in the sidecar), and the jobs done
//! are the complete output lines plus the `failed` records. The sidecar's
//! header (everything before the first `failed` record) records the input
//! identity (paths, sizes and a fingerprint of the first bytes) and every
//! option that changes the labels; a rerun whose header differs stops with
//! an error naming the difference, and `--overwrite` starts over. An empty
//! or missing output always starts fresh.
//!
//! A run that has labeled every position of its inputs ends its sidecar with
//! a `complete` record: the number of records of the inputs (all shards
//! together) and the jobs of its shard. `labeler merge` relies on it to check
//! that the shard outputs it is given cover the whole run. A rerun of a
//! complete run removes the record and writes it again when it ends.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use engine::runtime::fingerprint::{FNV_OFFSET, fnv1a};

/// First line of every sidecar; changes when the format does.
const SIDECAR_MAGIC: &str = "labeler-progress v1";
/// Prefix of a sidecar record of a job that failed for good.
const FAILED_PREFIX: &str = "failed ";
/// Prefix of the sidecar record of a run that labeled all its positions.
const COMPLETE_PREFIX: &str = "complete ";
/// Suffix of the sidecar's file name, after the output's name.
pub const SIDECAR_SUFFIX: &str = ".progress";
/// How many leading bytes of each input are fingerprinted.
const FINGERPRINT_BYTES: usize = 1 << 16;

/// A job that failed for good, as recorded in the sidecar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailedJob {
    /// Job number within this run's shard.
    pub job: u64,
    /// Where the position came from (`file:line`).
    pub location: String,
    /// The position (FEN).
    pub fen: String,
    /// The last error.
    pub reason: String,
}

impl FailedJob {
    fn to_line(&self) -> String {
        let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
        format!(
            "{FAILED_PREFIX}{}\t{}\t{}\t{}",
            self.job,
            clean(&self.location),
            clean(&self.fen),
            clean(&self.reason)
        )
    }

    fn parse(line: &str) -> Option<FailedJob> {
        let rest = line.strip_prefix(FAILED_PREFIX)?;
        let mut fields = rest.splitn(4, '\t');
        Some(FailedJob {
            job: fields.next()?.parse().ok()?,
            location: fields.next()?.to_string(),
            fen: fields.next()?.to_string(),
            reason: fields.next()?.to_string(),
        })
    }
}

/// What the sidecar of a finished run records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// Records of all inputs (of every shard), bad lines included.
    pub records: u64,
    /// Jobs of this run's shard: its output lines plus its failed records.
    pub jobs: u64,
}

impl Completion {
    fn to_line(self) -> String {
        format!(
            "{COMPLETE_PREFIX}records={} jobs={}",
            self.records, self.jobs
        )
    }

    fn parse(line: &str) -> Option<Completion> {
        let (records, jobs) = line.strip_prefix(COMPLETE_PREFIX)?.split_once(' ')?;
        Some(Completion {
            records: records.strip_prefix("records=")?.parse().ok()?,
            jobs: jobs.strip_prefix("jobs=")?.parse().ok()?,
        })
    }
}

/// A sidecar as read back.
#[derive(Clone, Debug)]
pub struct Sidecar {
    /// The identity header (magic line included), one line per entry.
    pub header: String,
    /// The failed jobs, in job order.
    pub failures: Vec<FailedJob>,
    /// The completion record, when the run finished.
    pub completion: Option<Completion>,
    /// Bytes before the completion record (the whole file without one).
    len_before_completion: u64,
}

/// Reads a sidecar: its header, then `failed` records, then at most one
/// `complete` record, in that order.
///
/// # Errors
/// When the file cannot be read or its records are out of order or
/// malformed.
pub fn read_sidecar(path: &Path) -> Result<Sidecar> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut sidecar = Sidecar {
        header: String::new(),
        failures: Vec::new(),
        completion: None,
        len_before_completion: text.len() as u64,
    };
    let mut offset = 0u64;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        if sidecar.completion.is_some() {
            bail!(
                "{}:{}: unexpected line after the completion record",
                path.display(),
                i + 1
            );
        }
        if line.starts_with(COMPLETE_PREFIX) {
            sidecar.completion = Some(Completion::parse(line).with_context(|| {
                format!("{}:{}: malformed completion record", path.display(), i + 1)
            })?);
            sidecar.len_before_completion = offset;
        } else if line.starts_with(FAILED_PREFIX) {
            sidecar
                .failures
                .push(FailedJob::parse(line).with_context(|| {
                    format!("{}:{}: malformed failure record", path.display(), i + 1)
                })?);
        } else if sidecar.failures.is_empty() {
            sidecar.header.push_str(line);
            sidecar.header.push('\n');
        } else {
            bail!(
                "{}:{}: unexpected line after the failure records",
                path.display(),
                i + 1
            );
        }
        offset += raw.len() as u64;
    }
    Ok(sidecar)
}

/// Builds the identity header of a run.
#[derive(Clone, Debug, Default)]
pub struct RunIdentity {
    lines: Vec<String>,
}

impl RunIdentity {
    /// Adds an input file: its path as given, size and fingerprint.
    ///
    /// # Errors
    /// When the file cannot be read.
    pub fn add_input(&mut self, path: &Path) -> Result<()> {
        if path.as_os_str() == engine::formats::input::STDIN_PATH {
            self.lines.push("input - (standard input)".into());
            return Ok(());
        }
        let mut file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let size = file
            .metadata()
            .with_context(|| format!("reading metadata of {}", path.display()))?
            .len();
        let mut head = Vec::with_capacity(FINGERPRINT_BYTES);
        Read::by_ref(&mut file)
            .take(FINGERPRINT_BYTES as u64)
            .read_to_end(&mut head)
            .with_context(|| format!("reading {}", path.display()))?;
        let fingerprint = fnv1a(FNV_OFFSET, &head);
        self.lines.push(format!(
            "input {} bytes={size} head-fnv1a={fingerprint:016x}",
            path.display()
        ));
        Ok(())
    }

    /// Adds a `key value` line describing options that change the labels.
    pub fn add_setting(&mut self, key: &str, value: &str) {
        self.lines.push(format!("{key} {value}"));
    }

    /// The sidecar header: the magic line, then every line added.
    pub fn header(&self) -> String {
        let mut text = format!("{SIDECAR_MAGIC}\n");
        for line in &self.lines {
            text.push_str(line);
            text.push('\n');
        }
        text
    }
}

/// The sidecar path of an output.
pub fn sidecar_path(output: &Path) -> PathBuf {
    let mut name = output.as_os_str().to_owned();
    name.push(SIDECAR_SUFFIX);
    PathBuf::from(name)
}

/// An output opened for appending, with what earlier runs did.
pub struct ResumedOutput {
    /// Where labeled lines go (append mode).
    pub output: BufWriter<File>,
    /// The sidecar, for `failed` records (append mode).
    pub sidecar: BufWriter<File>,
    /// Jobs finished by earlier runs (complete lines plus failures).
    pub jobs_done: u64,
    /// Failures recorded by earlier runs.
    pub earlier_failures: Vec<FailedJob>,
}

impl ResumedOutput {
    /// Records a failed job in the sidecar, after flushing every labeled
    /// line before it (so that the on-disk order is the job order).
    ///
    /// # Errors
    /// When writing fails.
    pub fn record_failure(&mut self, failure: &FailedJob) -> Result<()> {
        self.output.flush().context("flushing the output")?;
        writeln!(self.sidecar, "{}", failure.to_line()).context("writing the sidecar")?;
        self.sidecar.flush().context("flushing the sidecar")
    }

    /// Records that the run labeled all its positions (after flushing the
    /// output, so that the record never precedes a line it counts).
    ///
    /// # Errors
    /// When writing fails.
    pub fn record_completion(&mut self, completion: Completion) -> Result<()> {
        self.output.flush().context("flushing the output")?;
        writeln!(self.sidecar, "{}", completion.to_line()).context("writing the sidecar")?;
        self.sidecar.flush().context("flushing the sidecar")
    }
}

/// Truncates `path` after its last newline; returns the number of complete
/// lines and whether anything was cut.
pub fn truncate_partial_line(path: &Path) -> Result<(u64, bool)> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    let mut reader = BufReader::new(&file);
    let mut lines = 0u64;
    let mut complete_bytes = 0u64;
    let mut total = 0u64;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if buf.ends_with(b"\n") {
            lines += 1;
            complete_bytes = total;
        }
    }
    let cut = complete_bytes < total;
    if cut {
        file.set_len(complete_bytes)
            .with_context(|| format!("truncating the partial last line of {}", path.display()))?;
    }
    Ok((lines, cut))
}

/// Opens `path` for appending (created when missing).
///
/// # Errors
/// When the file cannot be opened.
pub fn open_append(path: &Path) -> Result<BufWriter<File>> {
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .with_context(|| format!("opening {} for appending", path.display()))?;
    file.seek(SeekFrom::End(0))
        .with_context(|| format!("seeking in {}", path.display()))?;
    Ok(BufWriter::new(file))
}

/// Opens `output` for a run with `identity`: resumes a matching earlier run,
/// starts fresh when there is nothing to resume (or `overwrite`), and fails
/// when the existing output belongs to another command.
///
/// # Errors
/// On a mismatched or foreign existing output, or on I/O errors.
pub fn open_output(
    output: &Path,
    identity: &RunIdentity,
    overwrite: bool,
) -> Result<ResumedOutput> {
    let sidecar = sidecar_path(output);
    let output_len = match std::fs::metadata(output) {
        Ok(m) if m.is_dir() => bail!("output {} is a directory", output.display()),
        Ok(m) => m.len(),
        Err(_) => 0,
    };
    if output_len == 0 || overwrite {
        return start_fresh(output, &sidecar, identity);
    }
    if !sidecar.exists() {
        bail!(
            "{} exists and is not empty, but has no {} sidecar, so it was not written by a \
             labeler run that can be resumed; pass --overwrite to replace it or choose another \
             output",
            output.display(),
            sidecar.display()
        );
    }
    truncate_partial_line(&sidecar)?;
    let Sidecar {
        header,
        failures: earlier_failures,
        completion,
        len_before_completion,
    } = read_sidecar(&sidecar)?;
    let expected = identity.header();
    if header != expected {
        let found: Vec<&str> = header.lines().collect();
        let wanted: Vec<&str> = expected.lines().collect();
        let mut differences = String::new();
        for i in 0..found.len().max(wanted.len()) {
            let (f, w) = (found.get(i), wanted.get(i));
            if f != w {
                differences.push_str(&format!(
                    "\n  earlier run: {}\n  this run:    {}",
                    f.unwrap_or(&"(nothing)"),
                    w.unwrap_or(&"(nothing)")
                ));
            }
        }
        bail!(
            "{} was written by a different command (inputs or labeling options differ), so it \
             cannot be resumed:{differences}\nrerun the original command, or pass --overwrite to \
             start over",
            output.display()
        );
    }
    if completion.is_some() {
        // This run writes it again when it ends.
        OpenOptions::new()
            .write(true)
            .open(&sidecar)
            .and_then(|f| f.set_len(len_before_completion))
            .with_context(|| format!("rewriting {}", sidecar.display()))?;
    }
    let (lines_done, _) = truncate_partial_line(output)?;
    let jobs_done = lines_done + earlier_failures.len() as u64;
    if let Some(bad) = earlier_failures.iter().find(|f| f.job >= jobs_done) {
        bail!(
            "{}: failure record of job {} lies beyond the {jobs_done} jobs the output accounts \
             for; the files are inconsistent (pass --overwrite to start over)",
            sidecar.display(),
            bad.job
        );
    }
    Ok(ResumedOutput {
        output: open_append(output)?,
        sidecar: open_append(&sidecar)?,
        jobs_done,
        earlier_failures,
    })
}

fn start_fresh(output: &Path, sidecar: &Path, identity: &RunIdentity) -> Result<ResumedOutput> {
    // Empty the output first: an empty output always means "start fresh",
    // whatever a stale sidecar says, so a crash between the two steps is
    // harmless.
    let (output, sidecar) = create_fresh(output, sidecar, identity)?;
    Ok(ResumedOutput {
        output,
        sidecar,
        jobs_done: 0,
        earlier_failures: Vec::new(),
    })
}

/// Empties (or creates) `output`, writes `identity`'s header as the new
/// `sidecar` (atomically), and opens both for appending.
///
/// # Errors
/// When a file cannot be created or written, naming it.
pub fn create_fresh(
    output: &Path,
    sidecar: &Path,
    identity: &RunIdentity,
) -> Result<(BufWriter<File>, BufWriter<File>)> {
    File::create(output).with_context(|| format!("creating {}", output.display()))?;
    let mut header = engine::formats::atomic_file::AtomicFile::create(sidecar)
        .with_context(|| format!("creating {}", sidecar.display()))?;
    header
        .write_all(identity.header().as_bytes())
        .with_context(|| format!("writing {}", sidecar.display()))?;
    header
        .commit()
        .with_context(|| format!("writing {}", sidecar.display()))?;
    Ok((open_append(output)?, open_append(sidecar)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_line_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.epd");
        std::fs::write(&path, "a\nb\nc").unwrap();
        assert_eq!(truncate_partial_line(&path).unwrap(), (2, true));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\nb\n");
    }

    #[test]
    fn failure_records_round_trip() {
        let f = FailedJob {
            job: 7,
            location: "in.epd:9".into(),
            fen: "8/8/8/8/8/8/8/K1k5 w - - 0 1".into(),
            reason: "engine timed out".into(),
        };
        assert_eq!(FailedJob::parse(&f.to_line()), Some(f));
    }
}
