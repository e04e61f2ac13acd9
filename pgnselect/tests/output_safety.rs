//! Outputs never destroy anything: an output that is an input is refused
//! before anything is read, devices and FIFOs are written to rather than
//! replaced, symbolic links are followed, a full disk is an error (exit 1,
//! a message, no panic), and no temporary file outlives a run, whether it
//! was stopped by Ctrl-C or killed outright.

#[path = "../../engine/tests/support/cli.rs"]
mod cli;

use cli::{assert_clean_failure, ctrl_c, stderr};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn fischer() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/pgn/fischer-300.pgn")
}

fn pgnselect() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgnselect"));
    cmd.arg("--no-progress");
    cmd
}

fn hidden_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect()
}

#[test]
fn an_output_that_is_an_input_is_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("a.pgn");
    std::fs::copy(fischer(), &pgn).unwrap();
    let original = std::fs::read(&pgn).unwrap();
    let hard = dir.path().join("hard.pgn");
    std::fs::hard_link(&pgn, &hard).unwrap();
    let soft = dir.path().join("soft.pgn");
    std::os::unix::fs::symlink(&pgn, &soft).unwrap();
    let spelled = dir.path().join(".").join("a.pgn");
    let other = dir.path().join("b.pgn");
    std::fs::copy(fischer(), &other).unwrap();
    for (output, inputs) in [
        (&pgn, vec![&pgn]),
        (&spelled, vec![&other, &pgn]),
        (&hard, vec![&pgn]),
        (&soft, vec![&other, &pgn]),
        (&pgn, vec![&soft]),
    ] {
        let out = pgnselect()
            .arg("-o")
            .arg(output)
            .args(&inputs)
            .output()
            .unwrap();
        assert_clean_failure(&out, "the output is the input");
        assert_eq!(std::fs::read(&pgn).unwrap(), original, "{output:?}");
    }
    // Standard output redirected to an input (appending to it would make
    // the run read its own output).
    let appended = std::fs::OpenOptions::new().append(true).open(&pgn).unwrap();
    let out = pgnselect().arg(&pgn).stdout(appended).output().unwrap();
    assert_clean_failure(&out, "standard output");
    assert_eq!(std::fs::read(&pgn).unwrap(), original);
    // An input on standard input that is the output file.
    let out = pgnselect()
        .args(["-o"])
        .arg(&pgn)
        .arg("-")
        .stdin(std::fs::File::open(&pgn).unwrap())
        .output()
        .unwrap();
    assert_clean_failure(&out, "standard input");
    assert_eq!(std::fs::read(&pgn).unwrap(), original);
}

#[test]
fn devices_fifos_and_links_are_written_through() {
    let dir = tempfile::tempdir().unwrap();
    // A full device: an error naming it, and the device stays a device.
    let out = pgnselect()
        .args(["-o", "/dev/full"])
        .arg(fischer())
        .output()
        .unwrap();
    assert_clean_failure(&out, "/dev/full");
    assert!(!std::fs::metadata("/dev/full").unwrap().is_file());
    // Standard output on a full device.
    let out = pgnselect()
        .arg(fischer())
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_clean_failure(&out, "No space left");
    // /dev/null is written to, not replaced.
    let out = pgnselect()
        .args(["-o", "/dev/null"])
        .arg(fischer())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());

    // A FIFO streams to its reader and stays a FIFO.
    let fifo = dir.path().join("out.fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let out = pgnselect()
        .arg("-o")
        .arg(&fifo)
        .arg(fischer())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let streamed = reader.join().unwrap();
    let expected = pgnselect().arg(fischer()).output().unwrap().stdout;
    assert!(!expected.is_empty());
    assert_eq!(streamed, expected);
    assert!(!std::fs::metadata(&fifo).unwrap().is_file());
    assert!(hidden_files(dir.path()).is_empty());

    // A symbolic link: its target gets the output, the link stays.
    let target = dir.path().join("target.epd");
    std::fs::write(&target, "old").unwrap();
    let link = dir.path().join("link.epd");
    std::os::unix::fs::symlink("target.epd", &link).unwrap();
    let out = pgnselect()
        .arg("-o")
        .arg(&link)
        .arg(fischer())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), expected);
}

/// Starts pgnselect on standard input and feeds it the first games, so that
/// it runs (waiting for more) with its temporary output file open.
fn start_on_stdin(output: &Path) -> Child {
    let mut child = pgnselect()
        .arg("-o")
        .arg(output)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let text = std::fs::read(fischer()).unwrap();
    child
        .stdin
        .as_mut()
        .unwrap()
        .write_all(&text[..text.len() / 2])
        .unwrap();
    let dir = output.parent().unwrap();
    let start = Instant::now();
    while hidden_files(dir).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no temporary file"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child
}

#[test]
fn no_temporary_file_outlives_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out.epd");
    std::fs::write(&output, "previous\n").unwrap();

    // Ctrl-C: the run stops, exit 130, the previous output is untouched and
    // the temporary file is gone.
    let mut child = start_on_stdin(&output);
    ctrl_c(&child);
    // The signal reaches the run through the handler's own thread: give it
    // time to raise the flag before the input ends, or the run may see the
    // end of its input first and finish normally (a loaded machine).
    std::thread::sleep(Duration::from_millis(500));
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&output).unwrap(), "previous\n");
    assert!(hidden_files(dir.path()).is_empty());

    // Killed outright: the temporary file stays behind, and the next run
    // writing the same output removes it.
    let mut child = start_on_stdin(&output);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(hidden_files(dir.path()).len(), 1);
    let out = pgnselect()
        .arg("-o")
        .arg(&output)
        .arg(fischer())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(hidden_files(dir.path()).is_empty());
    assert_ne!(std::fs::read_to_string(&output).unwrap(), "previous\n");
}

#[test]
fn a_closed_pipe_stops_quietly() {
    let mut child = pgnselect()
        .arg(fischer())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"));
}
