//! Writing output files safely: all of the new content or none of it, and
//! never over something that is not a regular file or over an input.
//!
//! An [`AtomicFile`] chooses how to write from what the target path names:
//! - a regular file, or nothing yet: the content goes into a hidden temporary
//!   file in the target's own directory (so the final rename never crosses
//!   file systems), and only [`AtomicFile::commit`] makes it visible: it
//!   flushes, fsyncs the data, renames the temporary file over the target
//!   and fsyncs the directory. Dropped without a commit (an error, a panic,
//!   Ctrl-C unwinding), the temporary file is removed and the previous
//!   version of the target is left untouched.
//! - a symbolic link: the link is followed (also when it dangles) and its
//!   final target is replaced as above; the link itself stays.
//! - a device, FIFO or socket (`/dev/null`, `/dev/stdout`, a named pipe): it
//!   is opened and written to directly, streaming; the commit only flushes.
//!   It is never replaced by a regular file.
//! - a directory: an error.
//!
//! A writer holds an exclusive lock on its temporary file. A process killed
//! outright (SIGKILL, SIGTERM, power loss) cannot remove its temporary file,
//! so every [`AtomicFile::create`] first removes the target's temporary files
//! that nobody holds locked any more: a stale temporary lives only until the
//! next run writing the same output.
//!
//! [`check_outputs`] guards the other way to destroy data: it refuses an
//! output that is one of the inputs (the same file through any spelling, a
//! hard link or a symbolic link: device and inode are compared), or two
//! outputs that are the same file. Tools call it before reading anything.
//! Failures are a typed [`AtomicFileError`] naming the path; the operating
//! system's reason is its [`std::error::Error::source`].

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;
use thiserror::Error;

/// Buffer of the writer.
const BUFFER_BYTES: usize = 1 << 16;
/// Symbolic links followed before giving up (as Linux's `ELOOP`).
const MAX_LINKS: usize = 40;
/// Random characters in a temporary file's name (tempfile's default).
const TEMP_RANDOM_CHARS: usize = 6;
/// Suffix of the temporary files.
const TEMP_SUFFIX: &str = ".tmp";
/// Attempts at creating a temporary file that another run's clean-up does
/// not remove under us (see [`create_locked_temp`]).
const TEMP_ATTEMPTS: usize = 8;
/// The path that stands for standard input or output.
const STDIO_PATH: &str = "-";

/// Why an output could not be written; every variant names the path.
#[derive(Debug, Error)]
pub enum AtomicFileError {
    /// The temporary file could not be created next to the target.
    #[error("{path}: cannot create a temporary file in its directory")]
    Create {
        /// The target path.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// A device or FIFO could not be opened for writing.
    #[error("{path}: cannot open for writing")]
    Open {
        /// The target path.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// The target is a directory.
    #[error("{path}: is a directory, not a file")]
    IsDirectory {
        /// The target path.
        path: PathBuf,
    },
    /// Flushing or syncing the content failed.
    #[error("{path}: cannot write")]
    Write {
        /// The target path.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// The final rename over the target failed.
    #[error("{path}: cannot replace the file")]
    Rename {
        /// The target path.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// An output is one of the inputs.
    #[error("{output}: the output is the input {input}; refusing to overwrite it")]
    OutputIsInput {
        /// The output path as given.
        output: PathBuf,
        /// The input path as given.
        input: PathBuf,
    },
    /// Two outputs are the same file.
    #[error("{first} and {second} are the same file; each output needs its own")]
    SameOutput {
        /// One output path as given.
        first: PathBuf,
        /// The other output path as given.
        second: PathBuf,
    },
}

/// How the content reaches the target.
#[derive(Debug)]
enum Destination {
    /// Into a temporary file, renamed over `path` (the resolved target) on
    /// commit. The file stays locked while it is written.
    Replace {
        writer: BufWriter<NamedTempFile>,
        path: PathBuf,
    },
    /// Straight into a device or FIFO.
    Stream { writer: BufWriter<File> },
}

/// A buffered writer whose content replaces `target` only on
/// [`AtomicFile::commit`] (see the module documentation).
#[derive(Debug)]
pub struct AtomicFile {
    destination: Destination,
    target: PathBuf,
}

impl AtomicFile {
    /// Starts writing to `target`: a replacement for a regular file (or a
    /// new file; a symbolic link is followed), a stream into a device or
    /// FIFO. Removes the target's stale temporary files of killed runs.
    ///
    /// # Errors
    /// [`AtomicFileError::Create`] when the target's directory does not exist
    /// or is not writable, [`AtomicFileError::Open`] when a device cannot be
    /// opened, [`AtomicFileError::IsDirectory`].
    pub fn create(target: &Path) -> Result<AtomicFile, AtomicFileError> {
        let create_error = |source| AtomicFileError::Create {
            path: target.to_path_buf(),
            source,
        };
        let destination = match fs::metadata(target) {
            Ok(meta) if meta.is_dir() => {
                return Err(AtomicFileError::IsDirectory {
                    path: target.to_path_buf(),
                });
            }
            Ok(meta) if !meta.is_file() => {
                // Devices and FIFOs are opened as named: a `/proc` link such
                // as `/dev/stdout` may point at a pipe that has no path.
                let file = OpenOptions::new()
                    .write(true)
                    .open(target)
                    .map_err(|source| AtomicFileError::Open {
                        path: target.to_path_buf(),
                        source,
                    })?;
                Destination::Stream {
                    writer: BufWriter::with_capacity(BUFFER_BYTES, file),
                }
            }
            _ => {
                let path = resolve_links(target).map_err(create_error)?;
                remove_stale_temporaries(&path);
                let temp = create_locked_temp(&path).map_err(create_error)?;
                Destination::Replace {
                    writer: BufWriter::with_capacity(BUFFER_BYTES, temp),
                    path,
                }
            }
        };
        Ok(AtomicFile {
            destination,
            target: target.to_path_buf(),
        })
    }

    /// The path the content will be committed to, as given.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Whether the target is a device or FIFO written to directly (so an
    /// abandoned write cannot be taken back).
    pub fn is_stream(&self) -> bool {
        matches!(self.destination, Destination::Stream { .. })
    }

    /// Flushes, fsyncs and renames the content over the target (for a
    /// device or FIFO: flushes).
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
        match self.destination {
            Destination::Stream { mut writer } => writer.flush().map_err(write_error),
            Destination::Replace { writer, path } => {
                let temp = writer
                    .into_inner()
                    .map_err(|e| write_error(e.into_error()))?;
                set_permissions_like_target(temp.as_file(), &path);
                temp.as_file().sync_all().map_err(write_error)?;
                temp.persist(&path).map_err(|e| AtomicFileError::Rename {
                    path: target.clone(),
                    source: e.error,
                })?;
                if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    // Make the rename itself durable; not all platforms can
                    // open a directory, so this is best effort.
                    if let Ok(dir) = File::open(dir) {
                        let _ = dir.sync_all();
                    }
                }
                Ok(())
            }
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.destination {
            Destination::Replace { writer, .. } => writer.write(buf),
            Destination::Stream { writer } => writer.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.destination {
            Destination::Replace { writer, .. } => writer.write_all(buf),
            Destination::Stream { writer } => writer.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.destination {
            Destination::Replace { writer, .. } => writer.flush(),
            Destination::Stream { writer } => writer.flush(),
        }
    }
}

/// Writes `bytes` to `target` through an [`AtomicFile`] and commits.
///
/// # Errors
/// As [`AtomicFile::create`] and [`AtomicFile::commit`]; a failed write is
/// [`AtomicFileError::Write`].
pub fn write_file(target: &Path, bytes: &[u8]) -> Result<(), AtomicFileError> {
    let mut file = AtomicFile::create(target)?;
    file.write_all(bytes)
        .map_err(|source| AtomicFileError::Write {
            path: target.to_path_buf(),
            source,
        })?;
    file.commit()
}

/// Follows `path` through symbolic links (dangling ones included) to the
/// path that is finally a file or nothing.
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = fs::read_link(&path)?;
                // A relative link is relative to the directory holding it;
                // joining without normalising keeps `..` for the kernel.
                path = match path.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// The directory a path's file lives in (`.` for a bare name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// The prefix of the temporary files of `path`: `.NAME.`.
fn temp_prefix(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.")
}

/// Whether `name` is one of our temporary files for the prefix.
fn is_temp_name(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix(TEMP_SUFFIX))
        .is_some_and(|random| {
            random.len() == TEMP_RANDOM_CHARS && random.bytes().all(|b| b.is_ascii_alphanumeric())
        })
}

/// Creates the temporary file for `path`, locked. A concurrent
/// [`remove_stale_temporaries`] may delete a file between its creation and
/// its lock; the file is therefore checked to be still in place once locked
/// (the remover deletes while holding the lock), and made anew if not.
fn create_locked_temp(path: &Path) -> io::Result<NamedTempFile> {
    let dir = directory_of(path);
    let prefix = temp_prefix(path);
    let mut last_error = None;
    for _ in 0..TEMP_ATTEMPTS {
        let temp = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(TEMP_SUFFIX)
            .rand_bytes(TEMP_RANDOM_CHARS)
            .tempfile_in(dir)?;
        match temp.as_file().lock() {
            Ok(()) => {}
            // No locks on this file system: nobody can tell stale files
            // from live ones, so none are removed; go on unlocked.
            Err(e) if e.kind() == io::ErrorKind::Unsupported => return Ok(temp),
            Err(e) => return Err(e),
        }
        if still_in_place(&temp)? {
            return Ok(temp);
        }
        last_error = Some(io::Error::other(
            "the temporary file was removed while being created",
        ));
    }
    Err(last_error.unwrap_or_else(|| io::Error::other("cannot create a temporary file")))
}

#[cfg(unix)]
fn still_in_place(temp: &NamedTempFile) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let open = temp.as_file().metadata()?;
    Ok(match fs::symlink_metadata(temp.path()) {
        Ok(at_path) => at_path.dev() == open.dev() && at_path.ino() == open.ino(),
        Err(_) => false,
    })
}

#[cfg(not(unix))]
fn still_in_place(temp: &NamedTempFile) -> io::Result<bool> {
    Ok(temp.path().exists())
}

/// Removes the temporary files of `path` that no process holds locked: they
/// were left by a run that was killed. Best effort: anything unexpected
/// leaves the file alone.
fn remove_stale_temporaries(path: &Path) {
    let dir = directory_of(path);
    let prefix = temp_prefix(path);
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !is_temp_name(&name.to_string_lossy(), &prefix) {
            continue;
        }
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let stale = entry.path();
        let Ok(file) = File::open(&stale) else {
            continue;
        };
        // Locked by us, the file is ours to remove; the lock is held until
        // `file` is dropped, after the removal.
        if file.try_lock().is_ok() {
            let _ = fs::remove_file(&stale);
        }
    }
}

/// Temporary files are created private (0600); give the committed file the
/// permissions of the file it replaces, or ordinary 0644 for a new file.
fn set_permissions_like_target(file: &File, target: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let permissions = fs::metadata(target)
            .map(|m| m.permissions())
            .unwrap_or_else(|_| fs::Permissions::from_mode(0o644));
        let _ = file.set_permissions(permissions);
    }
    #[cfg(not(unix))]
    {
        let _ = (file, target);
    }
}

/// What makes two paths the same file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FileIdentity {
    /// An existing file: device and inode (following links).
    Inode(u64, u64),
    /// A file yet to be made: its resolved directory and name.
    Future(PathBuf),
}

/// The identity of an existing regular file at `path` (`-`: standard input
/// or output, `stdio` names which), if it is one.
fn existing_regular_file(path: &Path, stdio: &str) -> Option<FileIdentity> {
    let path = if path.as_os_str() == STDIO_PATH {
        PathBuf::from(stdio)
    } else {
        path.to_path_buf()
    };
    let meta = fs::metadata(&path).ok()?;
    if !meta.is_file() {
        return None;
    }
    inode_of(&meta)
}

#[cfg(unix)]
fn inode_of(meta: &fs::Metadata) -> Option<FileIdentity> {
    use std::os::unix::fs::MetadataExt;
    Some(FileIdentity::Inode(meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn inode_of(_meta: &fs::Metadata) -> Option<FileIdentity> {
    None
}

/// The identity of an output path: its inode if it exists, else where it
/// will be created. `None` for a device, FIFO or standard output that is not
/// a regular file.
fn output_identity(path: &Path) -> Option<FileIdentity> {
    if path.as_os_str() == STDIO_PATH {
        return existing_regular_file(path, "/dev/stdout");
    }
    match fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            inode_of(&meta).or_else(|| fs::canonicalize(path).ok().map(FileIdentity::Future))
        }
        Ok(_) => None,
        Err(_) => {
            let resolved = resolve_links(path).ok()?;
            let dir = fs::canonicalize(directory_of(&resolved)).ok()?;
            Some(FileIdentity::Future(dir.join(resolved.file_name()?)))
        }
    }
}

/// A path for a message: `-` is named for what it stands for.
fn shown(path: &Path, stdio: &str) -> PathBuf {
    if path.as_os_str() == STDIO_PATH {
        PathBuf::from(stdio)
    } else {
        path.to_path_buf()
    }
}

/// Refuses outputs that would destroy an input or each other: an output
/// that is the same regular file as an input (`-` as an input is standard
/// input, as an output standard output), or two outputs that are (or will
/// be) the same file. Inputs that are not regular files (devices, pipes) and
/// missing inputs are not compared. Call it before reading anything.
///
/// # Errors
/// [`AtomicFileError::OutputIsInput`] or [`AtomicFileError::SameOutput`],
/// naming the paths as given.
pub fn check_outputs<O, I>(outputs: &[O], inputs: &[I]) -> Result<(), AtomicFileError>
where
    O: AsRef<Path>,
    I: AsRef<Path>,
{
    let inputs: Vec<(&Path, FileIdentity)> = inputs
        .iter()
        .filter_map(|p| {
            let p = p.as_ref();
            existing_regular_file(p, "/dev/stdin").map(|id| (p, id))
        })
        .collect();
    let mut seen: Vec<(&Path, FileIdentity)> = Vec::new();
    for output in outputs {
        let output = output.as_ref();
        let Some(id) = output_identity(output) else {
            continue;
        };
        if let Some((input, _)) = inputs.iter().find(|(_, i)| *i == id) {
            return Err(AtomicFileError::OutputIsInput {
                output: shown(output, "standard output"),
                input: shown(input, "standard input"),
            });
        }
        if let Some((first, _)) = seen.iter().find(|(_, s)| *s == id) {
            return Err(AtomicFileError::SameOutput {
                first: shown(first, "standard output"),
                second: shown(output, "standard output"),
            });
        }
        seen.push((output, id));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
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
        fs::write(&target, b"old").unwrap();
        let mut out = AtomicFile::create(&target).unwrap();
        out.write_all(b"new content").unwrap();
        // Not visible before the commit.
        assert_eq!(fs::read(&target).unwrap(), b"old");
        assert!(!out.is_stream());
        out.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new content");
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

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = AtomicFile::create(dir.path()).unwrap_err();
        assert!(matches!(err, AtomicFileError::IsDirectory { .. }), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_followed_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("real")).unwrap();
        let real = dir.path().join("real/data.txt");
        fs::write(&real, b"old").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink("real/data.txt", &link).unwrap();
        write_file(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&real).unwrap(), b"new");
        assert_eq!(dir_entries(&dir.path().join("real")), ["data.txt"]);

        // A dangling link: its target is created.
        let dangling = dir.path().join("dangling.txt");
        std::os::unix::fs::symlink("real/new.txt", &dangling).unwrap();
        write_file(&dangling, b"made").unwrap();
        assert!(
            fs::symlink_metadata(&dangling)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(dir.path().join("real/new.txt")).unwrap(), b"made");
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_to_not_replaced() {
        let mut out = AtomicFile::create(Path::new("/dev/null")).unwrap();
        assert!(out.is_stream());
        out.write_all(b"discarded").unwrap();
        out.commit().unwrap();
        let meta = fs::metadata("/dev/null").unwrap();
        assert!(!meta.is_file());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_full_device_is_a_write_error() {
        let err = write_file(Path::new("/dev/full"), &[b'x'; 100]).unwrap_err();
        assert!(matches!(err, AtomicFileError::Write { .. }), "{err}");
        assert!(err.to_string().contains("/dev/full"), "{err}");
        assert!(!fs::metadata("/dev/full").unwrap().is_file());
    }

    #[test]
    fn stale_temporaries_are_removed_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.epd");
        // A killed run's leftover: nobody holds it locked.
        fs::write(dir.path().join(".out.epd.Ab12Cd.tmp"), b"stale").unwrap();
        // Files that merely look alike are not ours.
        fs::write(dir.path().join(".out.epd.notours.tmp"), b"x").unwrap();
        fs::write(dir.path().join(".other.Ab12Cd.tmp"), b"x").unwrap();
        let live = AtomicFile::create(&target).unwrap();
        let names = dir_entries(dir.path());
        assert!(
            !names.contains(&".out.epd.Ab12Cd.tmp".to_string()),
            "{names:?}"
        );
        assert!(names.contains(&".out.epd.notours.tmp".to_string()));
        assert!(names.contains(&".other.Ab12Cd.tmp".to_string()));
        // A second writer of the same target leaves the first one's
        // (locked) temporary file alone, and both can commit.
        let mut second = AtomicFile::create(&target).unwrap();
        assert_eq!(dir_entries(dir.path()).len(), 4);
        second.write_all(b"second").unwrap();
        second.commit().unwrap();
        live.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"");
    }

    #[test]
    fn an_output_that_is_an_input_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("a.pgn");
        fs::write(&input, b"1. e4 *\n").unwrap();
        let other = dir.path().join("b.pgn");
        fs::write(&other, b"1. d4 *\n").unwrap();
        let fresh = dir.path().join("out.epd");
        assert!(check_outputs(&[&fresh], &[&input, &other]).is_ok());
        // The same path, another spelling.
        let spelled = dir.path().join(".").join("a.pgn");
        let err = check_outputs(&[&fresh, &spelled], &[&other, &input]).unwrap_err();
        assert!(
            matches!(err, AtomicFileError::OutputIsInput { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("a.pgn"), "{err}");
        #[cfg(unix)]
        {
            let hard = dir.path().join("hard.pgn");
            fs::hard_link(&input, &hard).unwrap();
            assert!(check_outputs(&[&hard], &[&input]).is_err());
            let soft = dir.path().join("soft.pgn");
            std::os::unix::fs::symlink(&input, &soft).unwrap();
            assert!(check_outputs(&[&soft], &[&input]).is_err());
            assert!(check_outputs(&[&input], &[&soft]).is_err());
            // Devices are never "the same file" as anything.
            assert!(check_outputs(&["/dev/null"], &["/dev/null"]).is_ok());
        }
    }

    #[test]
    fn two_outputs_that_are_one_file_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        let same = dir.path().join(".").join("a.txt");
        let b = dir.path().join("b.txt");
        assert!(check_outputs(&[&a, &b], &[] as &[&Path]).is_ok());
        let err = check_outputs(&[&a, &b, &same], &[] as &[&Path]).unwrap_err();
        assert!(matches!(err, AtomicFileError::SameOutput { .. }), "{err}");
        fs::write(&a, b"x").unwrap();
        assert!(check_outputs(&[&a, &same], &[] as &[&Path]).is_err());
    }
}
