//! Helpers shared by the command-line tests of every crate of the
//! workspace: where the workspace is, files in a test folder, and what a
//! refused run must look like. A test includes it with
//! `#[path = "../../engine/tests/support/cli.rs"] mod cli;` (the engine's
//! own tests with `#[path = "support/cli.rs"]`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

/// The workspace folder (every crate sits one level below it).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Writes `text` to `dir/name`; returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Writes the shell script `text` to `dir/name`, executable; returns the
/// path (a fake engine or tool for a test).
pub fn write_script(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = write(dir, name, text);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

/// Copies the folder `from` with everything below it to `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A run's standard error as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit 1 with a message naming `needle`, and no panic.
pub fn assert_clean_failure(out: &Output, needle: &str) {
    let text = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains(needle), "no {needle:?} in {text}");
    assert!(!text.contains("panicked"), "{text}");
}

/// Sends Ctrl-C (SIGINT) to a running child.
pub fn ctrl_c(child: &std::process::Child) {
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -INT {}", child.id());
}

/// Runs `cmd`; panics with its status and standard error unless it
/// succeeds.
pub fn run_ok(cmd: &mut std::process::Command) -> Output {
    let out = cmd.output().expect("the command runs");
    assert!(
        out.status.success(),
        "{:?} failed: {}\n{}",
        cmd.get_program(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The standard output of a finished run named `what`; panics with both
/// outputs unless it succeeded.
pub fn ok(what: &str, out: &Output) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}
