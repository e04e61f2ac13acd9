//! The self-play output: its formats and how a run resumes.
//!
//! Formats ([`OutputFormat`]): canonical EPD (`hmvc`, `fmvn`, `c9`, `ce`),
//! bullet's text line or bullet's 32-byte binary record (see
//! [`engine::formats::bullet`]). Games are written whole and in game order.
//!
//! Resuming works for every format, binary included, because it never
//! reads the output: beside `OUTPUT`, the sidecar `OUTPUT.progress` holds
//! the run's identity (the settings that change the output, see
//! [`crate::resume::RunIdentity`]) and then checkpoint records `done G B`
//! ("the first G games of this run are in the first B bytes of the
//! output"), appended after the output was flushed up to B, plus a
//! `failed G<TAB>reason` record for each game an external engine could not
//! finish. A rerun with the same identity truncates the output to the last
//! checkpoint's B (a kill can leave a partial game after it) and goes on
//! with game G; a rerun with another identity is refused (`--overwrite`
//! starts over). Without a sidecar, a missing or empty output starts fresh
//! and a non-empty one is refused, since no resumable run wrote it.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use engine::formats::bullet::{self, EncodeError};
use engine::formats::labeled::LabeledPosition;

use crate::resume::{RunIdentity, create_fresh, open_append, sidecar_path, truncate_partial_line};

/// Prefix of a checkpoint record.
const DONE_PREFIX: &str = "done ";
/// Prefix of a failed-game record.
const FAILED_PREFIX: &str = "failed ";

/// How kept positions are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Canonical EPD: `<board> hmvc H; fmvn F; c9 "1-0"; ce 35;` (`ce` from
    /// the side to move's view).
    Epd,
    /// bullet's text format: `<fen> | <score> | <result>`, both
    /// White-relative (`1.0`, `0.5`, `0.0`).
    BulletText,
    /// bullet's binary format: 32-byte `ChessBoard` records.
    Bullet,
}

impl OutputFormat {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Epd => "epd",
            OutputFormat::BulletText => "bullet-text",
            OutputFormat::Bullet => "bullet",
        }
    }

    /// Appends `record` (with its newline, for text formats) to `out`.
    ///
    /// # Errors
    /// When a bullet format cannot hold the record (no score or result, a
    /// score beyond 16 bits).
    pub fn append(self, record: &LabeledPosition, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        match self {
            OutputFormat::Epd => {
                record.append_epd(out);
                out.push(b'\n');
            }
            OutputFormat::BulletText => {
                bullet::append_text(record, out)?;
                out.push(b'\n');
            }
            OutputFormat::Bullet => out.extend_from_slice(&bullet::encode(record)?),
        }
        Ok(())
    }
}

/// A game an external engine could not finish, as the sidecar records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailedGame {
    /// The game's index in the run (its seed index).
    pub game: u64,
    /// The last error.
    pub reason: String,
}

/// The output of a run, opened for appending after what earlier runs did.
pub struct SelfplayOutput {
    output: BufWriter<File>,
    sidecar: BufWriter<File>,
    bytes: u64,
    /// Games of this run's range finished by earlier runs.
    pub games_done: u64,
    /// Failures recorded by earlier runs.
    pub earlier_failures: Vec<FailedGame>,
}

impl SelfplayOutput {
    /// Opens `path` for a run with `identity` (see the module
    /// documentation).
    ///
    /// # Errors
    /// When the output belongs to another command or run, or on I/O errors.
    pub fn open(path: &Path, identity: &RunIdentity, overwrite: bool) -> Result<Self> {
        let sidecar = sidecar_path(path);
        let output_len = match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => bail!("output {} is a directory", path.display()),
            Ok(m) if !m.is_file() => bail!(
                "output {} is not a regular file (the output is truncated on resume)",
                path.display()
            ),
            Ok(m) => Some(m.len()),
            Err(_) => None,
        };
        if overwrite || !sidecar.exists() {
            if !overwrite && output_len.unwrap_or(0) > 0 {
                bail!(
                    "{} exists and is not empty, but has no {} sidecar, so no resumable run \
                     wrote it; pass --overwrite to replace it or choose another output",
                    path.display(),
                    sidecar.display()
                );
            }
            return start_fresh(path, &sidecar, identity);
        }
        truncate_partial_line(&sidecar)?;
        let text = std::fs::read_to_string(&sidecar)
            .with_context(|| format!("reading {}", sidecar.display()))?;
        let expected = identity.header();
        let header_lines = expected.lines().count();
        let found: Vec<&str> = text.lines().take(header_lines).collect();
        let wanted: Vec<&str> = expected.lines().collect();
        if found != wanted {
            if output_len.unwrap_or(0) == 0 {
                // Nothing to lose: a stale sidecar of another run.
                return start_fresh(path, &sidecar, identity);
            }
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
                "{} was written by a different command (options, seed or inputs differ), so \
                 it cannot be resumed:{differences}\nrerun the original command, or pass \
                 --overwrite to start over",
                path.display()
            );
        }
        let (mut games_done, mut bytes) = (0u64, 0u64);
        let mut earlier_failures = Vec::new();
        for (i, line) in text.lines().enumerate().skip(header_lines) {
            let bad = || format!("{}:{}: malformed record {line:?}", sidecar.display(), i + 1);
            if let Some(rest) = line.strip_prefix(DONE_PREFIX) {
                let (g, b) = rest.split_once(' ').with_context(bad)?;
                games_done = g.parse().ok().with_context(bad)?;
                bytes = b.parse().ok().with_context(bad)?;
            } else if let Some(rest) = line.strip_prefix(FAILED_PREFIX) {
                let (g, reason) = rest.split_once('\t').with_context(bad)?;
                earlier_failures.push(FailedGame {
                    game: g.parse().ok().with_context(bad)?,
                    reason: reason.to_string(),
                });
            } else {
                bail!(bad());
            }
        }
        let length = output_len.unwrap_or(0);
        if length < bytes {
            bail!(
                "{} holds {length} bytes but {} says {bytes} were written: the files are \
                 inconsistent (pass --overwrite to start over)",
                path.display(),
                sidecar.display()
            );
        }
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        file.set_len(bytes)
            .with_context(|| format!("cutting {} back to its last checkpoint", path.display()))?;
        drop(file);
        earlier_failures.retain(|f| f.game < games_done);
        Ok(SelfplayOutput {
            output: open_append(path)?,
            sidecar: open_append(&sidecar)?,
            bytes,
            games_done,
            earlier_failures,
        })
    }

    /// Appends the bytes of one game.
    ///
    /// # Errors
    /// When writing fails.
    pub fn write_game(&mut self, bytes: &[u8]) -> Result<()> {
        self.output.write_all(bytes).context("writing the output")?;
        self.bytes += bytes.len() as u64;
        Ok(())
    }

    /// Records a game that failed for good (covered by the next checkpoint).
    ///
    /// # Errors
    /// When writing fails.
    pub fn record_failure(&mut self, failure: &FailedGame) -> Result<()> {
        let reason = failure.reason.replace(['\t', '\n', '\r'], " ");
        writeln!(self.sidecar, "{FAILED_PREFIX}{}\t{reason}", failure.game)
            .context("writing the sidecar")
    }

    /// Flushes the output, then records that the first `games_done` games
    /// are in it.
    ///
    /// # Errors
    /// When writing fails.
    pub fn checkpoint(&mut self, games_done: u64) -> Result<()> {
        self.output.flush().context("flushing the output")?;
        writeln!(self.sidecar, "{DONE_PREFIX}{games_done} {}", self.bytes)
            .context("writing the sidecar")?;
        self.sidecar.flush().context("flushing the sidecar")
    }
}

fn start_fresh(path: &Path, sidecar: &PathBuf, identity: &RunIdentity) -> Result<SelfplayOutput> {
    // Old sidecar first, then the output, then the new sidecar: a crash at
    // any point leaves either no sidecar (an empty output starts fresh, a
    // non-empty one is refused) or the new header over an empty output.
    match std::fs::remove_file(sidecar) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("removing {}", sidecar.display())),
    }
    let (output, sidecar) = create_fresh(path, sidecar, identity)?;
    Ok(SelfplayOutput {
        output,
        sidecar,
        bytes: 0,
        games_done: 0,
        earlier_failures: Vec::new(),
    })
}
