//! Writing output files atomically: all of the new content or none of it.
//!
//! An [`AtomicFile`] writes into a hidden temporary file in the target's own
//! directory (so the final rename never crosses file systems). Only
//! [`AtomicFile::commit`] makes the result visible: it flushes, fsyncs the
//! data, renames the temporary file over the target and fsyncs the directory.
//! If the writer is dropped without a commit (an error, a panic, Ctrl-C
//! unwinding), the temporary file is removed and a previous version of the
//! target is left untouched, so a reader never sees a half-written book or
//! data set. Failures are a typed [`AtomicFileError`] naming the target.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;
use thiserror::Error;

/// Why an atomic write failed; every variant names the target path.
#[derive(Debug, Error)]
pub enum AtomicFileError {
    /// The temporary file could not be created next to the target.
    #[error("{path}: cannot create a temporary file in its directory: {source}")]
    Create {
        /// The target path.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// Flushing or syncing the content failed.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The target path.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// The final rename over the target failed.
    #[error("{path}: cannot replace the file: {source}")]
    Rename {
        /// The target path.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
}

/// A buffered writer whose content replaces `target` only on
/// [`AtomicFile::commit`].
#[derive(Debug)]
pub struct AtomicFile {
    writer: BufWriter<NamedTempFile>,
    target: PathBuf,
}

impl AtomicFile {
    /// Starts writing a replacement for `target`.
    ///
    /// # Errors
    /// [`AtomicFileError::Create`] when the target's directory does not exist
    /// or is not writable.
    pub fn create(target: &Path) -> Result<AtomicFile, AtomicFileError> {
        let dir = match target.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{name}.");
        let temp = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|source| AtomicFileError::Create {
                path: target.to_path_buf(),
                source,
            })?;
        Ok(AtomicFile {
            writer: BufWriter::with_capacity(1 << 16, temp),
            target: target.to_path_buf(),
        })
    }

    /// The path the content will be committed to.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Flushes, fsyncs and renames the content over the target.
    ///
    /// # Errors
    /// [`AtomicFileError::Write`] when flushing or syncing fails,
    /// [`AtomicFileError::Rename`] when the rename fails; the temporary file
    /// is removed in both cases.
    pub fn commit(self) -> Result<(), AtomicFileError> {
        let target = self.target;
        let write_error = |source: io::Error| AtomicFileError::Write {
            path: target.clone(),
            source,
        };
        let temp = self
            .writer
            .into_inner()
            .map_err(|e| write_error(e.into_error()))?;
        set_permissions_like_target(temp.as_file(), &target);
        temp.as_file().sync_all().map_err(write_error)?;
        temp.persist(&target).map_err(|e| AtomicFileError::Rename {
            path: target.clone(),
            source: e.error,
        })?;
        if let Some(dir) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
            // Make the rename itself durable; not all platforms can open a
            // directory, so this is best effort.
            if let Ok(dir) = File::open(dir) {
                let _ = dir.sync_all();
            }
        }
        Ok(())
    }
}

/// Temporary files are created private (0600); give the committed file the
/// permissions of the file it replaces, or ordinary 0644 for a new file.
fn set_permissions_like_target(file: &File, target: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let permissions = std::fs::metadata(target)
            .map(|m| m.permissions())
            .unwrap_or_else(|_| std::fs::Permissions::from_mode(0o644));
        let _ = file.set_permissions(permissions);
    }
    #[cfg(not(unix))]
    {
        let _ = (file, target);
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn commit_replaces_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.bin");
        std::fs::write(&target, b"old").unwrap();
        let mut out = AtomicFile::create(&target).unwrap();
        out.write_all(b"new content").unwrap();
        // Not visible before the commit.
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        out.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new content");
        assert_eq!(dir_entries(dir.path()), ["out.bin"]);
    }

    #[test]
    fn drop_without_commit_leaves_no_trace() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.bin");
        {
            let mut out = AtomicFile::create(&target).unwrap();
            out.write_all(b"partial").unwrap();
        }
        assert!(dir_entries(dir.path()).is_empty());
    }

    #[test]
    fn missing_directory_is_a_create_error() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("no/such/dir/out.bin");
        let err = AtomicFile::create(&target).unwrap_err();
        assert!(matches!(err, AtomicFileError::Create { .. }));
        assert!(err.to_string().contains("out.bin"));
    }
}
