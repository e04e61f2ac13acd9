//! The journal of a match: what lets a match that was stopped (Ctrl-C, a
//! kill, the machine going down) go on where it stopped instead of starting
//! over, so hours of games are never lost.
//!
//! A journal is a text file beside the match's PGN (`games.pgn.journal`).
//! Its first line names the format, its second is the match's *identity*
//! (a JSON object of every setting and input fingerprint that decides which
//! games are played and how), and each further line is one finished game
//! (a [`GameReport`] as JSON), appended and handed to the operating system
//! before the next game is counted. A kill therefore leaves a prefix of the
//! games, at worst with one torn last line, which is dropped on resume (a
//! journal torn within its header holds no game and starts afresh).
//!
//! Reopening a journal whose identity differs from the match being started
//! is refused with the differing settings named: a resume plays the same
//! match or nothing. The caller may name settings a resume can change
//! because they only schedule the games (the games at once, when every game
//! is decided by its number alone); the journal keeps the values it was
//! started with. The journal is removed once the match is over (all
//! games played or the SPRT decided) and its PGN committed.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::play::match_runner::GameReport;
use crate::runtime::fingerprint::file_fnv1a;

/// First line of every journal; changes when the format does.
const MAGIC: &str = "engine-match-journal v1";
/// Suffix of a journal's file name, after the PGN's name.
pub const JOURNAL_SUFFIX: &str = ".journal";

/// What defines a match, setting name to value: two runs with equal
/// identities play the same games.
pub type MatchIdentity = BTreeMap<String, String>;

/// Why a journal could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Reading or writing failed.
    #[error("match journal {path}: {source}")]
    Io {
        /// The journal.
        path: PathBuf,
        /// The failure.
        source: io::Error,
    },
    /// A line is not what a journal holds.
    #[error("match journal {path}, line {line}: {reason}")]
    Corrupt {
        /// The journal.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The journal belongs to a match with other settings.
    #[error(
        "match journal {path} belongs to a match with other settings:{differences}\n\
         rerun the original command to resume that match, or pass --overwrite to start over"
    )]
    Mismatch {
        /// The journal.
        path: PathBuf,
        /// One line per differing setting: name, journal's value, ours.
        differences: String,
    },
}

/// An open journal, appending the games of the running match.
#[derive(Debug)]
pub struct MatchJournal {
    path: PathBuf,
    file: File,
}

/// The journal beside the PGN file `pgn`.
pub fn journal_path(pgn: &Path) -> PathBuf {
    let mut name = pgn.as_os_str().to_os_string();
    name.push(JOURNAL_SUFFIX);
    PathBuf::from(name)
}

/// Size and FNV-1a hash of a file's bytes, as an identity value (`"1234
/// bytes, fnv 0123abcd…"`): a changed input changes the identity.
///
/// # Errors
/// When the file cannot be read.
pub fn file_fingerprint(path: &Path) -> io::Result<String> {
    let (size, hash) = file_fnv1a(path)?;
    Ok(format!("{size} bytes, fnv {hash:016x}"))
}

/// The error of a failed read or write of the journal at `path`.
fn io_error(path: &Path) -> impl Fn(io::Error) -> JournalError + '_ {
    |source| JournalError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl MatchJournal {
    /// Opens the journal at `path` for the match `identity`: an existing
    /// journal is resumed (its games returned, a torn last line dropped)
    /// unless `overwrite`; a missing one, or any with `overwrite`, is
    /// created empty. The settings named in `may_differ` may have other
    /// values than the journal's without refusing the resume.
    ///
    /// # Errors
    /// When the journal cannot be read or written, is not a regular file,
    /// is corrupt before its last line, or belongs to another match.
    pub fn open(
        path: &Path,
        identity: &MatchIdentity,
        may_differ: &[&str],
        overwrite: bool,
    ) -> Result<(MatchJournal, Vec<GameReport>), JournalError> {
        let io = io_error(path);
        match std::fs::symlink_metadata(path) {
            Ok(meta) if !meta.file_type().is_file() => {
                return Err(io(io::Error::other(
                    "not a regular file (a journal is written in place)",
                )));
            }
            Ok(_) if !overwrite => return Self::resume(path, identity, may_differ),
            Ok(_) | Err(_) => {}
        }
        Self::create(path, identity)
    }

    fn create(
        path: &Path,
        identity: &MatchIdentity,
    ) -> Result<(MatchJournal, Vec<GameReport>), JournalError> {
        let io = io_error(path);
        let mut file = File::create(path).map_err(&io)?;
        let header = format!("{MAGIC}\n{}\n", identity_json(identity));
        file.write_all(header.as_bytes())
            .and_then(|()| file.sync_data())
            .map_err(&io)?;
        Ok((
            MatchJournal {
                path: path.to_path_buf(),
                file,
            },
            Vec::new(),
        ))
    }

    fn resume(
        path: &Path,
        identity: &MatchIdentity,
        may_differ: &[&str],
    ) -> Result<(MatchJournal, Vec<GameReport>), JournalError> {
        let io = io_error(path);
        let corrupt = |line: usize, reason: String| JournalError::Corrupt {
            path: path.to_path_buf(),
            line,
            reason,
        };
        let mut text = String::new();
        File::open(path)
            .and_then(|mut f| f.read_to_string(&mut text))
            .map_err(&io)?;
        // Only newline-terminated lines were fully written; a torn tail is
        // a game that did not make it and is dropped.
        let complete = text.rfind('\n').map_or(0, |i| i + 1);
        if text[..complete].lines().count() < 2 {
            // Killed while writing its header: no game was recorded.
            return Self::create(path, identity);
        }
        let mut lines = text[..complete].lines();
        if lines.next() != Some(MAGIC) {
            return Err(corrupt(1, format!("the first line is not {MAGIC:?}")));
        }
        let recorded: MatchIdentity = lines
            .next()
            .ok_or_else(|| corrupt(2, "the match's settings are missing".into()))
            .and_then(|l| {
                serde_json::from_str(l).map_err(|e| corrupt(2, format!("bad settings: {e}")))
            })?;
        let differences = identity_differences(&recorded, identity, may_differ);
        if !differences.is_empty() {
            return Err(JournalError::Mismatch {
                path: path.to_path_buf(),
                differences,
            });
        }
        let mut games = Vec::new();
        for (number, line) in lines.enumerate() {
            let report: GameReport = serde_json::from_str(line)
                .map_err(|e| corrupt(number + 3, format!("not a game record: {e}")))?;
            games.push(report);
        }
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| {
                f.set_len(complete as u64)?;
                Ok(f)
            })
            .map_err(&io)?;
        let mut journal = MatchJournal {
            path: path.to_path_buf(),
            file,
        };
        journal.file.seek(SeekFrom::End(0)).map_err(&io)?;
        Ok((journal, games))
    }

    /// Appends a finished game, handed to the operating system before this
    /// returns (one write of one line).
    ///
    /// # Errors
    /// When writing fails.
    pub fn record(&mut self, report: &GameReport) -> Result<(), JournalError> {
        let io = io_error(&self.path);
        let mut line = serde_json::to_string(report).map_err(|e| io(io::Error::other(e)))?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(&io)
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Deletes the journal of a match that is over.
    ///
    /// # Errors
    /// When the file cannot be removed.
    pub fn remove(self) -> Result<(), JournalError> {
        drop(self.file);
        std::fs::remove_file(&self.path).map_err(io_error(&self.path))
    }
}

fn identity_json(identity: &MatchIdentity) -> String {
    serde_json::to_string(identity).expect("a map of strings serializes")
}

/// One indented line per setting whose value differs (or that only one
/// side has), settings in `may_differ` left out; empty when the identities
/// agree.
fn identity_differences(
    recorded: &MatchIdentity,
    ours: &MatchIdentity,
    may_differ: &[&str],
) -> String {
    let mut keys: Vec<&String> = recorded.keys().chain(ours.keys()).collect();
    keys.sort();
    keys.dedup();
    let show = |v: Option<&String>| v.map_or("(none)".to_string(), |v| format!("{v:?}"));
    keys.into_iter()
        .filter(|k| recorded.get(*k) != ours.get(*k) && !may_differ.contains(&k.as_str()))
        .map(|k| {
            format!(
                "\n  {k}: {} in the journal, {} now",
                show(recorded.get(k)),
                show(ours.get(k))
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(seed: &str) -> MatchIdentity {
        MatchIdentity::from([("seed".to_string(), seed.to_string())])
    }

    #[test]
    fn a_journal_torn_in_its_header_starts_afresh_and_one_complete_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.pgn.journal");
        // Killed while the header was being written: no game, a fresh start.
        std::fs::write(&path, format!("{MAGIC}\n{{\"se")).unwrap();
        let (journal, games) = MatchJournal::open(&path, &identity("1"), &[], false).unwrap();
        assert!(games.is_empty());
        drop(journal);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, format!("{MAGIC}\n{{\"seed\":\"1\"}}\n"));
        // A complete header of another match is refused, naming the setting.
        let error = MatchJournal::open(&path, &identity("2"), &[], false).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("seed: \"1\" in the journal, \"2\" now"),
            "{error}"
        );
        // A complete line that is not a game is corruption (only an
        // unterminated last line is a torn write, dropped).
        std::fs::write(&path, format!("{MAGIC}\n{{\"seed\":\"1\"}}\nnot a game\n")).unwrap();
        let error = MatchJournal::open(&path, &identity("1"), &[], false).unwrap_err();
        assert!(
            error.to_string().contains("line 3: not a game record"),
            "{error}"
        );
    }

    #[test]
    fn a_setting_named_free_may_change_on_resume_and_the_header_keeps_its_value() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.pgn.journal");
        let with = |concurrency: &str| {
            let mut id = identity("1");
            id.insert("concurrency".into(), concurrency.into());
            id
        };
        drop(MatchJournal::open(&path, &with("1"), &[], false).unwrap());
        // Not named: refused, naming it.
        let error = MatchJournal::open(&path, &with("2"), &[], false).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("concurrency: \"1\" in the journal, \"2\" now"),
            "{error}"
        );
        // Named: resumed, but only that setting may change.
        drop(MatchJournal::open(&path, &with("2"), &["concurrency"], false).unwrap());
        let mut other_seed = with("2");
        other_seed.insert("seed".into(), "2".into());
        let error = MatchJournal::open(&path, &other_seed, &["concurrency"], false).unwrap_err();
        assert!(error.to_string().contains("seed: "), "{error}");
        assert!(!error.to_string().contains("concurrency"), "{error}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            format!("{MAGIC}\n{{\"concurrency\":\"1\",\"seed\":\"1\"}}\n")
        );
    }
}
