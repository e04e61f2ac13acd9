//! The tuner's outputs never destroy anything and never panic: an output
//! named like an input (or like another output) is refused before reading,
//! devices are written to rather than replaced, and a full device is an
//! error with exit 1 and a message.

#[path = "../../engine/tests/support/cli.rs"]
mod cli;

use cli::{assert_clean_failure, stderr};
use std::path::{Path, PathBuf};
use std::process::Command;

fn tuner(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tuner"));
    cmd.current_dir(dir);
    cmd
}

/// A few hundred real positions.
fn small_data(dir: &Path) -> PathBuf {
    let all = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/labeled/masters-quiet-20k.epd");
    let text = std::fs::read_to_string(all).unwrap();
    let path = dir.join("data.epd");
    let lines: Vec<&str> = text.lines().take(400).collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn defaults_to_a_full_device_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let full = || std::fs::File::create("/dev/full").unwrap();
    let out = tuner(dir.path())
        .args(["-d", "-x", "-"])
        .stdout(full())
        .output()
        .unwrap();
    assert_clean_failure(&out, "standard output");
    let out = tuner(dir.path())
        .args(["-d", "-x", "/dev/full"])
        .output()
        .unwrap();
    assert_clean_failure(&out, "/dev/full");
    assert!(!std::fs::metadata("/dev/full").unwrap().is_file());
}

#[test]
fn outputs_named_like_inputs_or_each_other_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = small_data(dir.path());
    let original = std::fs::read(&data).unwrap();
    let data_arg = data.to_str().unwrap();
    for args in [
        vec!["-n", "1", "-x", "data.epd", data_arg],
        vec!["-n", "1", "--plot", "./data.epd", data_arg],
        vec!["-n", "1", "--log", "data.epd", data_arg],
        vec!["-n", "1", "--checkpoint", "data.epd", data_arg],
        vec!["-n", "1", "-f", "data.epd", data_arg],
        vec![
            "-n",
            "1",
            "-x",
            "out.params",
            "--log",
            "out.params",
            data_arg,
        ],
    ] {
        let out = tuner(dir.path()).args(&args).output().unwrap();
        let text = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {text}");
        assert!(
            text.contains("refusing") || text.contains("same file"),
            "{text}"
        );
        assert_eq!(std::fs::read(&data).unwrap(), original, "{args:?}");
    }
}

#[test]
fn a_run_writes_through_devices_and_links() {
    let dir = tempfile::tempdir().unwrap();
    let data = small_data(dir.path());
    let real = dir.path().join("real.params");
    std::fs::write(&real, "old").unwrap();
    std::os::unix::fs::symlink("real.params", dir.path().join("link.params")).unwrap();
    let out = tuner(dir.path())
        .args(["-n", "1", "--resolve", "none", "--no-emit-rust"])
        .args([
            "-x",
            "link.params",
            "--plot",
            "/dev/null",
            "--log",
            "/dev/null",
        ])
        .args(["--checkpoint", "run.checkpoint"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    assert!(
        std::fs::symlink_metadata(dir.path().join("link.params"))
            .unwrap()
            .is_symlink()
    );
    assert!(std::fs::read_to_string(&real).unwrap().contains("material"));
    let out = tuner(dir.path())
        .args(["-n", "1", "--resolve", "none", "--no-emit-rust"])
        .args(["-x", "out.params", "--plot", "/dev/full"])
        .arg(&data)
        .output()
        .unwrap();
    assert_clean_failure(&out, "/dev/full");
    assert!(!std::fs::metadata("/dev/full").unwrap().is_file());
}
