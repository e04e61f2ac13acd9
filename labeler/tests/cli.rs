//! End-to-end tests of the `labeler` binary: labels of constructed
//! positions, bad input, determinism across threads, sharding and merge,
//! resuming after a real SIGKILL, external-engine failures, and
//! `--score-only` (scores without games).

#[path = "../../engine/tests/support/cli.rs"]
mod cli;

use cli::{ctrl_c, run_ok, write, write_script};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Small node budget: the tests check plumbing, not playing strength.
const TEST_NODES: &str = "1000";
/// Middlegame positions used by the multi-position tests.
const SAMPLE_POSITIONS: usize = 16;

fn labeler() -> Command {
    Command::new(env!("CARGO_BIN_EXE_labeler"))
}

fn sample_positions(count: usize) -> String {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/labeled/masters-quiet-20k.epd");
    let text = std::fs::read_to_string(data).unwrap();
    text.lines().take(count).map(|l| format!("{l}\n")).collect()
}

/// Labels `fens` (one per line) and returns the output lines.
fn label_fens(fens: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in.epd", &(fens.join("\n") + "\n"));
    let output = dir.path().join("out.epd");
    run_ok(
        labeler()
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .args(["--threads", "2"]),
    );
    std::fs::read_to_string(&output)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn result_of(line: &str) -> &str {
    let start = line.find("c9 \"").expect("c9 field") + 4;
    let end = line[start..].find('"').unwrap() + start;
    &line[start..end]
}

#[test]
fn constructed_positions_get_the_right_result() {
    let cases = [
        // Mate in one for White (Ra8#).
        ("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", "1-0"),
        // Stalemate, Black to move.
        ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "1/2-1/2"),
        // Bare kings.
        ("8/8/8/4k3/8/8/8/4K3 w - - 0 1", "1/2-1/2"),
        // KQ vs K, both colours to move, both colours winning.
        ("8/8/8/4k3/8/8/8/3QK3 w - - 0 1", "1-0"),
        ("8/8/8/4k3/8/8/8/3QK3 b - - 0 1", "1-0"),
        ("3qk3/8/8/8/4K3/8/8/8 b - - 0 1", "0-1"),
        ("3qk3/8/8/8/4K3/8/8/8 w - - 0 1", "0-1"),
        // Already checkmated: White to move is mated.
        ("7k/8/8/8/8/8/5PPP/r5K1 w - - 0 1", "0-1"),
    ];
    let fens: Vec<&str> = cases.iter().map(|c| c.0).collect();
    let lines = label_fens(&fens);
    assert_eq!(lines.len(), cases.len());
    for ((fen, expected), line) in cases.iter().zip(&lines) {
        let board = fen.split(' ').take(4).collect::<Vec<_>>().join(" ");
        assert!(line.starts_with(&board), "{line} is not {fen}");
        assert_eq!(result_of(line), *expected, "{fen}: {line}");
    }
}

#[test]
fn score_option_writes_ce() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(
        dir.path(),
        "in.epd",
        "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1\n",
    );
    let output = dir.path().join("out.epd");
    run_ok(
        labeler()
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .args(["--score", "--score-nodes", "2000"]),
    );
    let text = std::fs::read_to_string(&output).unwrap();
    assert!(text.contains("c9 \"1-0\"; ce 31999;"), "{text}");
}

#[test]
fn bad_lines_are_reported_with_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(
        dir.path(),
        "in.epd",
        "8/8/8/4k3/8/8/8/4K3 w - - c9 \"1-0\";\n\
         this is not a position\n\
         \n\
         8/8/8/4k3/8/8/8/4KK2 w - -\n\
         4k3/8/8/8/8/8/8/4RK2 w - -\n\
         7k/8/8/8/8/8/8/K7 b - -\n",
    );
    let output = dir.path().join("out.epd");
    let rejects = dir.path().join("rejects.txt");
    let summary = dir.path().join("summary.json");
    let out = run_ok(
        labeler()
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .arg("--rejects")
            .arg(&rejects)
            .arg("--summary")
            .arg(&summary),
    );
    // The JSON summary counts what the output and the rejects hold.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(json["skipped"]["rejected_lines"], 3);
    assert_eq!(json["counts"]["labeled"], 2);
    assert_eq!(json["counts"]["draws"], 2);
    assert_eq!(json["counts"]["decided_as_given"], 2);
    assert_eq!(json["figures"]["endings"]["insufficient_material"], 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("rejected input lines: 3"), "{stderr}");
    let rejected = std::fs::read_to_string(&rejects).unwrap();
    for line in [":2:", ":4:", ":5:"] {
        assert!(rejected.contains(line), "{line} missing in {rejected}");
        assert!(stderr.contains(line), "{line} missing in {stderr}");
    }
    assert!(rejected.contains("illegal position"), "{rejected}");
    let labeled = std::fs::read_to_string(&output).unwrap();
    assert_eq!(
        labeled,
        "8/8/8/4k3/8/8/8/4K3 w - - hmvc 0; fmvn 1; c9 \"1/2-1/2\";\n\
         7k/8/8/8/8/8/8/K7 b - - hmvc 0; fmvn 1; c9 \"1/2-1/2\";\n"
    );
}

fn label_sample(dir: &Path, input: &Path, name: &str, extra: &[&str]) -> String {
    let output = dir.join(name);
    run_ok(
        labeler()
            .arg(input)
            .arg("-o")
            .arg(&output)
            .args(["--nodes", TEST_NODES, "--no-progress"])
            .args(extra),
    );
    std::fs::read_to_string(&output).unwrap()
}

#[test]
fn output_is_identical_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in.epd", &sample_positions(SAMPLE_POSITIONS));
    let one = label_sample(dir.path(), &input, "one.epd", &["--threads", "1"]);
    let two = label_sample(dir.path(), &input, "two.epd", &["--threads", "2"]);
    let three = label_sample(dir.path(), &input, "three.epd", &["--threads", "3"]);
    assert_eq!(one.lines().count(), SAMPLE_POSITIONS);
    assert_eq!(one, two);
    assert_eq!(one, three);
}

#[test]
fn merged_shards_equal_the_unsharded_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = sample_positions(SAMPLE_POSITIONS);
    text.insert_str(0, "garbage line\n");
    let input = write(dir.path(), "in.epd", &text);
    let whole = label_sample(dir.path(), &input, "whole.epd", &["--threads", "2"]);
    let shards: Vec<PathBuf> = (0..3)
        .map(|k| {
            let name = format!("shard{k}.epd");
            label_sample(
                dir.path(),
                &input,
                &name,
                &["--threads", "2", "--shard", &format!("{k}/3")],
            );
            dir.path().join(name)
        })
        .collect();
    // Shards given separately, in any order.
    let merged = dir.path().join("merged.epd");
    run_ok(
        labeler()
            .arg("merge")
            .args([&shards[2], &shards[0], &shards[1]])
            .arg("-o")
            .arg(&merged),
    );
    assert_eq!(std::fs::read_to_string(&merged).unwrap(), whole);
    // And as one concatenated file.
    let concatenated: String = shards
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let cat = write(dir.path(), "cat.epd", &concatenated);
    let merged_cat = dir.path().join("merged-cat.epd");
    // A concatenation has no sidecar: merged only unchecked.
    let refused = labeler()
        .arg("merge")
        .arg(&cat)
        .arg("-o")
        .arg(&merged_cat)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--unchecked"));
    assert!(!merged_cat.exists());
    run_ok(
        labeler()
            .args(["merge", "--unchecked"])
            .arg(&cat)
            .arg("-o")
            .arg(&merged_cat),
    );
    assert_eq!(std::fs::read_to_string(&merged_cat).unwrap(), whole);
}

/// `labeler merge` of `shards` into `out`: its stderr when it fails (and
/// then `out` must not exist), `None` when it succeeds.
fn merge_error(shards: &[&Path], out: &Path) -> Option<String> {
    let result = labeler()
        .arg("merge")
        .args(shards)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    if result.status.success() {
        return None;
    }
    assert!(!out.exists(), "a failed merge wrote {}", out.display());
    Some(String::from_utf8_lossy(&result.stderr).into_owned())
}

/// Copies a shard output and its sidecar to `name`, with `edit` applied
/// to the (output, sidecar) texts.
fn copy_shard(from: &Path, name: &str, edit: impl Fn(&mut String, &mut String)) -> PathBuf {
    let to = from.with_file_name(name);
    let sidecar = |p: &Path| PathBuf::from(format!("{}.progress", p.display()));
    let mut output = std::fs::read_to_string(from).unwrap();
    let mut progress = std::fs::read_to_string(sidecar(from)).unwrap();
    edit(&mut output, &mut progress);
    std::fs::write(&to, output).unwrap();
    std::fs::write(sidecar(&to), progress).unwrap();
    to
}

#[test]
fn merge_refuses_missing_unfinished_foreign_or_cut_shards() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = sample_positions(8);
    text.insert_str(0, "garbage line\n");
    let input = write(dir.path(), "in.epd", &text);
    let shard = |k: u64, name: &str, max_plies: &str| {
        let spec = format!("{k}/3");
        label_sample(
            dir.path(),
            &input,
            name,
            &["--shard", &spec, "--max-plies", max_plies],
        );
        dir.path().join(name)
    };
    let s0 = shard(0, "s0.epd", "400");
    let s1 = shard(1, "s1.epd", "400");
    let s2 = shard(2, "s2.epd", "400");
    // A finished shard run again: nothing to do, one completion record.
    let before = std::fs::read_to_string(&s0).unwrap();
    shard(0, "s0.epd", "400");
    assert_eq!(std::fs::read_to_string(&s0).unwrap(), before);
    let progress = std::fs::read_to_string(dir.path().join("s0.epd.progress")).unwrap();
    assert_eq!(progress.matches("complete ").count(), 1, "{progress}");
    let out = dir.path().join("merged.epd");
    assert_eq!(merge_error(&[&s2, &s0, &s1], &out), None);
    std::fs::remove_file(&out).unwrap();

    let missing = merge_error(&[&s0, &s2], &out).expect("a shard is missing");
    assert!(missing.contains("missing: 1/3"), "{missing}");
    let twice = merge_error(&[&s0, &s1, &s2, &s1], &out).expect("a shard given twice");
    assert!(twice.contains("shard 1/3 given twice"), "{twice}");
    // A shard stopped before its end has no completion record.
    let unfinished = copy_shard(&s2, "unfinished.epd", |output, progress| {
        let cut = output.lines().count() - 1;
        *output = output.lines().take(cut).map(|l| format!("{l}\n")).collect();
        *progress = progress
            .lines()
            .filter(|l| !l.starts_with("complete "))
            .map(|l| format!("{l}\n"))
            .collect();
    });
    let error = merge_error(&[&s0, &s1, &unfinished], &out).expect("an unfinished shard");
    assert!(error.contains("unfinished"), "{error}");
    // A finished shard that lost its last line afterwards.
    let cut = copy_shard(&s1, "cut.epd", |output, _| {
        let n = output.lines().count() - 1;
        *output = output.lines().take(n).map(|l| format!("{l}\n")).collect();
    });
    let error = merge_error(&[&s0, &cut, &s2], &out).expect("a cut shard");
    assert!(error.contains("lines were lost"), "{error}");
    // A line of another shard mixed in.
    let mixed = copy_shard(&s1, "mixed.epd", |output, _| {
        let other = std::fs::read_to_string(&s0).unwrap();
        *output = other
            .lines()
            .take(1)
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            + output;
    });
    let error = merge_error(&[&s0, &mixed, &s2], &out).expect("a foreign line");
    assert!(error.contains("is not one of shard 1/3"), "{error}");
    // The same shard of a run with other options.
    let other = shard(2, "other.epd", "300");
    let error = merge_error(&[&s0, &s1, &other], &out).expect("another run");
    assert!(error.contains("different runs"), "{error}");
}

#[test]
fn resume_after_sigkill_equals_an_uninterrupted_run() {
    let dir = tempfile::tempdir().unwrap();
    let positions = SAMPLE_POSITIONS * 2;
    let input = write(dir.path(), "in.epd", &sample_positions(positions));
    let reference = label_sample(dir.path(), &input, "reference.epd", &["--threads", "2"]);
    let output = dir.path().join("out.epd");
    let mut child = labeler()
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .args(["--nodes", TEST_NODES, "--threads", "2", "--no-progress"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let done = std::fs::read_to_string(&output)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if done >= 3 {
            break;
        }
        assert!(Instant::now() < deadline, "labeler made no progress");
        assert!(child.try_wait().unwrap().is_none(), "labeler ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let partial = std::fs::read_to_string(&output).unwrap();
    let done = partial.lines().count();
    assert!(done < positions, "the kill came too late to test anything");
    assert!(reference.starts_with(&partial[..partial.rfind('\n').unwrap() + 1]));
    // Simulate a torn write on top of the kill.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&output)
        .unwrap()
        .write_all(b"r1bq1rk1/pp3ppp/2n")
        .unwrap();
    // A rerun with other options is refused.
    let mismatched = labeler()
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .args(["--nodes", "999", "--no-progress"])
        .output()
        .unwrap();
    assert!(!mismatched.status.success());
    let message = String::from_utf8_lossy(&mismatched.stderr);
    assert!(message.contains("different command"), "{message}");
    // The same command continues (with another thread count, too).
    let out = run_ok(labeler().arg(&input).arg("-o").arg(&output).args([
        "--nodes",
        TEST_NODES,
        "--threads",
        "1",
        "--no-progress",
    ]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("resumed:"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&output).unwrap(), reference);
    // Once complete, a rerun changes nothing.
    run_ok(labeler().arg(&input).arg("-o").arg(&output).args([
        "--nodes",
        TEST_NODES,
        "--no-progress",
    ]));
    assert_eq!(std::fs::read_to_string(&output).unwrap(), reference);
}

#[test]
fn ctrl_c_writes_finished_positions_in_order_and_the_rerun_completes() {
    let dir = tempfile::tempdir().unwrap();
    let positions = SAMPLE_POSITIONS * 2;
    let input = write(dir.path(), "in.epd", &sample_positions(positions));
    let reference = label_sample(dir.path(), &input, "reference.epd", &["--threads", "2"]);
    let output = dir.path().join("out.epd");
    let summary = dir.path().join("summary.json");
    let args = ["--nodes", TEST_NODES, "--threads", "2", "--no-progress"];
    let mut child = labeler()
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .args(args)
        .arg("--summary")
        .arg(&summary)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::read_to_string(&output).map_or(0, |t| t.lines().count()) < 3 {
        assert!(Instant::now() < deadline, "labeler made no progress");
        assert!(child.try_wait().unwrap().is_none(), "labeler ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    ctrl_c(&child);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "interrupted runs exit with 130");
    // Whole lines only, in input order: a prefix of the uninterrupted run.
    let partial = std::fs::read_to_string(&output).unwrap();
    assert!(partial.ends_with('\n'), "a torn line after Ctrl-C");
    assert!(partial.lines().count() < positions, "Ctrl-C came too late");
    assert!(
        reference.starts_with(&partial),
        "not a prefix of the full run"
    );
    let json = std::fs::read_to_string(&summary).unwrap();
    assert!(json.contains("\"status\": \"interrupted\""), "{json}");
    run_ok(labeler().arg(&input).arg("-o").arg(&output).args(args));
    assert_eq!(std::fs::read_to_string(&output).unwrap(), reference);
}

/// A fake UCI engine that handshakes and then never answers `go`.
const HANGING_ENGINE: &str = "#!/bin/sh\n\
while read -r line; do\n\
  case \"$line\" in\n\
    uci) echo uciok ;;\n\
    isready) echo readyok ;;\n\
    quit) exit 0 ;;\n\
  esac\n\
done\n";

#[test]
fn hung_engine_is_restarted_then_the_position_reported() {
    let dir = tempfile::tempdir().unwrap();
    let engine = write_script(dir.path(), "hang.sh", HANGING_ENGINE);
    let input = write(
        dir.path(),
        "in.epd",
        "8/8/8/4k3/8/8/8/3QK3 w - - 0 1\n8/8/8/4k3/8/8/8/4K3 w - - 0 1\n",
    );
    let output = dir.path().join("out.epd");
    let rejects = dir.path().join("rejects.txt");
    let args = |cmd: &mut Command| {
        cmd.arg(&input)
            .arg("-o")
            .arg(&output)
            .arg("--engine")
            .arg(&engine)
            .args(["--engine-timeout", "0.3", "--engine-retries", "1"])
            .arg("--rejects")
            .arg(&rejects);
    };
    let mut cmd = labeler();
    args(&mut cmd);
    let out = run_ok(&mut cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("failed positions"), "{stderr}");
    assert!(stderr.contains("in.epd:1"), "{stderr}");
    // The decided position is labeled without the engine; the other is
    // reported, not silently dropped.
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "8/8/8/4k3/8/8/8/4K3 w - - hmvc 0; fmvn 1; c9 \"1/2-1/2\";\n"
    );
    let rejected = std::fs::read_to_string(&rejects).unwrap();
    assert!(
        rejected.contains("in.epd:1: labeling failed: engine timed out"),
        "{rejected}"
    );
    // A rerun treats the failure as done and still reports it.
    let mut cmd = labeler();
    args(&mut cmd);
    let out = run_ok(&mut cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("positions labeled"), "{stderr}");
    assert!(
        std::fs::read_to_string(&rejects)
            .unwrap()
            .contains("in.epd:1")
    );
}

#[test]
fn stockfish_plays_when_available() {
    let stockfish = Path::new("/usr/games/stockfish");
    if !stockfish.exists() {
        eprintln!("skipped: {} not installed", stockfish.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = write(
        dir.path(),
        "in.epd",
        "8/8/8/4k3/8/8/8/3QK3 b - - 0 1\n6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1\n",
    );
    let output = dir.path().join("out.epd");
    run_ok(
        labeler()
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .arg("--engine")
            .arg(stockfish)
            .args(["--engine-option", "Threads=1", "--threads", "1"]),
    );
    let text = std::fs::read_to_string(&output).unwrap();
    let results: Vec<&str> = text.lines().map(result_of).collect();
    assert_eq!(results, ["1-0", "1-0"], "{text}");
    // Its scores alone: mate in one (Ra8#) is 32000 - 1.
    let scored = dir.path().join("scored.epd");
    run_ok(
        labeler()
            .arg(&input)
            .arg("-o")
            .arg(&scored)
            .arg("--engine")
            .arg(stockfish)
            .args(["--engine-option", "Hash=16", "--threads", "1"])
            .args(["--score-only", "--score-nodes", "5000"]),
    );
    let text = std::fs::read_to_string(&scored).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(!text.contains("c9"), "{text}");
    assert!(score_of(lines[0]).is_some_and(|s| s < -500), "{text}");
    assert_eq!(score_of(lines[1]), Some(31_999), "{text}");
}

/// A truncated `.gz` or `.zst` input is an error (exit 1) naming the file,
/// not "one bad line" and a success; a byte-order mark at the start of a file is
/// skipped; labels that are not a result or an integer score (`c9 "2"`,
/// `ce NaN`, `ce inf`) reject their line, located and counted.
#[test]
fn truncated_inputs_are_fatal_and_input_labels_ignored() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let text = sample_positions(200);
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    let gz = e.finish().unwrap();
    let zst = zstd::encode_all(text.as_bytes(), 3).unwrap();
    for (name, bytes) in [("cut.epd.gz", &gz), ("cut.epd.zst", &zst)] {
        let input = dir.path().join(name);
        std::fs::write(&input, &bytes[..bytes.len() / 2]).unwrap();
        let output = dir.path().join(format!("{name}.out"));
        let out = labeler()
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .args(["--nodes", "50"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            stderr.contains(name) && stderr.contains("cannot read past line"),
            "{name}: {stderr}"
        );
    }
    // The labeler computes the labels: those of the input are ignored,
    // malformed or not, and every position is labeled; a bad position is
    // still a located bad line.
    let board = "8/8/8/4k3/8/8/8/4K3 w - -";
    let input = write(
        dir.path(),
        "labels.epd",
        &format!(
            "\u{feff}{board} c9 \"1-0\";\n{board} c9 \"2\";\n{board} ce NaN;\n{board} ce inf;\n{board}\n\
             {board} 0 1 | NaN | 2\n{board} 0 1 [2]\n{board} c9 \"1-0\"; c2 \"0.0\";\n"
        ),
    );
    let output = dir.path().join("labels.out");
    let out = run_ok(labeler().arg(&input).arg("-o").arg(&output));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("labels.epd:"), "{stderr}");
    let text = std::fs::read_to_string(&output).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8, "{text}");
    for line in lines {
        // Bare kings: a draw by insufficient material, whatever the input said.
        assert!(
            line.starts_with(board) && line.ends_with("c9 \"1/2-1/2\";"),
            "{line}"
        );
    }
    let input = write(
        dir.path(),
        "positions.epd",
        &format!("{board} c9 \"2\";\n8/8/8/8/8/8/8/8 w - - c9 \"1-0\";\n{board} ce NaN;\n"),
    );
    let output = dir.path().join("positions.out");
    let out = run_ok(labeler().arg(&input).arg("-o").arg(&output));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("rejected input lines: 1"), "{stderr}");
    assert!(stderr.contains("positions.epd:2:"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&output).unwrap().lines().count(), 2);
}

/// The board fields (the first four) of an EPD or FEN line.
fn board_of(line: &str) -> String {
    line.split(' ').take(4).collect::<Vec<_>>().join(" ")
}

/// The `ce` score of an output line, if it has one.
fn score_of(line: &str) -> Option<i32> {
    let start = line.find(" ce ")? + 4;
    let end = line[start..].find(';')? + start;
    Some(line[start..end].parse().expect("ce is an integer"))
}

/// Mated and stalemated positions: scored without a search.
const NO_MOVE_POSITIONS: &str =
    "7k/8/8/8/8/8/5PPP/r5K1 w - - 0 1\n7k/5Q2/6K1/8/8/8/8/8 b - - 0 1\n";
/// Node budget of the test's `--score` searches.
const TEST_SCORE_NODES: &str = "500";

/// `--score-only` writes `ce` and no `c9` for every position, in input
/// order, byte-identical for any `--threads`, with the score a `--score`
/// run writes beside its game; the summary counts scores, not results; the
/// output shards and merges like any other.
#[test]
fn score_only_writes_scores_without_games_in_input_order() {
    let dir = tempfile::tempdir().unwrap();
    let text = sample_positions(8) + NO_MOVE_POSITIONS;
    let input = write(dir.path(), "in.epd", &text);
    let score_only = |name: &str, extra: &[&str]| {
        let output = dir.path().join(name);
        let out = run_ok(
            labeler()
                .arg(&input)
                .arg("-o")
                .arg(&output)
                .args(["--score-only", "--score-nodes", TEST_SCORE_NODES])
                .arg("--no-progress")
                .args(extra),
        );
        (
            std::fs::read_to_string(&output).unwrap(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let summary = dir.path().join("summary.json");
    let (one, report) = score_only(
        "one.epd",
        &["--threads", "1", "--summary", summary.to_str().unwrap()],
    );
    let (two, _) = score_only("two.epd", &["--threads", "2"]);
    assert_eq!(one, two, "--threads 1 and 2 differ");
    let lines: Vec<&str> = one.lines().collect();
    assert_eq!(lines.len(), text.lines().count(), "{one}");
    for (line, given) in lines.iter().zip(text.lines()) {
        assert!(line.starts_with(&board_of(given)), "{line} is not {given}");
        assert!(!line.contains("c9"), "{line}");
        assert!(score_of(line).is_some(), "{line}");
    }
    // Mated: -32000; stalemate: 0.
    assert_eq!(score_of(lines[8]), Some(-32_000), "{}", lines[8]);
    assert_eq!(score_of(lines[9]), Some(0), "{}", lines[9]);
    // The same search as --score runs before its game.
    let with_games = label_sample(
        dir.path(),
        &input,
        "games.epd",
        &[
            "--score",
            "--score-nodes",
            TEST_SCORE_NODES,
            "--threads",
            "2",
        ],
    );
    for (scored, labeled) in lines.iter().zip(with_games.lines()) {
        assert!(labeled.contains(" c9 \""), "{labeled}");
        assert_eq!(score_of(scored), score_of(labeled), "{scored} / {labeled}");
    }
    // The report and the summary count scores, not results or endings.
    assert!(report.contains("10 positions scored"), "{report}");
    assert!(report.contains("scored: 10 (ce, no c9)"), "{report}");
    assert!(
        !report.contains("results:") && !report.contains("endings"),
        "{report}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(json["counts"]["scored"], 10, "{json}");
    assert_eq!(json["counts"]["labeled"], 10, "{json}");
    assert_eq!(json["figures"]["score_only"], true, "{json}");
    assert!(json["counts"].get("draws").is_none(), "{json}");
    assert!(json["figures"].get("endings").is_none(), "{json}");
    // Sharded, then merged: the unsharded output.
    let shards: Vec<PathBuf> = (0..2)
        .map(|k| {
            let name = format!("shard{k}.epd");
            let (shard, _) = score_only(&name, &["--shard", &format!("{k}/2")]);
            assert!(shard.lines().all(|l| l.ends_with("\";")), "{shard}");
            dir.path().join(name)
        })
        .collect();
    let merged = dir.path().join("merged.epd");
    run_ok(
        labeler()
            .arg("merge")
            .args([&shards[1], &shards[0]])
            .arg("-o")
            .arg(&merged),
    );
    assert_eq!(std::fs::read_to_string(&merged).unwrap(), one);
}

/// A score-only output is not resumed by a command that plays games, nor
/// the reverse (the difference is named); the game options are refused
/// with `--score-only`, and `--score-nodes` needs `--score` or it.
#[test]
fn score_only_runs_resume_only_as_score_only_runs() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in.epd", &sample_positions(3));
    let run = |output: &Path, args: &[&str]| {
        labeler()
            .arg(&input)
            .arg("-o")
            .arg(output)
            .arg("--no-progress")
            .args(args)
            .output()
            .unwrap()
    };
    let score_only = ["--score-only", "--score-nodes", TEST_SCORE_NODES];
    let with_games = ["--score", "--score-nodes", TEST_SCORE_NODES];
    let scored = dir.path().join("scored.epd");
    let labeled = dir.path().join("labeled.epd");
    assert!(run(&scored, &score_only).status.success());
    assert!(run(&labeled, &with_games).status.success());
    let (scored_text, labeled_text) = (
        std::fs::read_to_string(&scored).unwrap(),
        std::fs::read_to_string(&labeled).unwrap(),
    );
    for (output, args) in [(&scored, with_games), (&labeled, score_only)] {
        let refused = run(output, &args);
        let message = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(1), "{message}");
        assert!(message.contains("different command"), "{message}");
        assert!(message.contains("games off (--score-only)"), "{message}");
    }
    assert_eq!(std::fs::read_to_string(&scored).unwrap(), scored_text);
    assert_eq!(std::fs::read_to_string(&labeled).unwrap(), labeled_text);
    // The same command finds the run complete.
    let again = run(&scored, &score_only);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("resumed: 3 positions"));
    assert_eq!(std::fs::read_to_string(&scored).unwrap(), scored_text);
    let fresh = dir.path().join("fresh.epd");
    for extra in [
        &["--nodes", "100"][..],
        &["--depth", "2"],
        &["--movetime", "10"],
        &["--max-plies", "10"],
        &["--resign-moves", "0"],
        &["--draw-after", "10"],
    ] {
        let out = run(&fresh, &[&score_only[..], extra].concat());
        let message = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {message}");
        assert!(message.contains("cannot be used with"), "{message}");
    }
    let out = run(&fresh, &["--score-nodes", "100"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!fresh.exists());
}

/// A fake UCI engine answering by position: a fixed score and a legal move,
/// or (bare kings) a move and no score. It appends every `position` command
/// it receives to the file named by its argument.
const SCORING_ENGINE: &str = "#!/bin/sh\n\
while read -r line; do\n\
  case \"$line\" in\n\
    uci) echo 'id name scoring'; echo uciok ;;\n\
    isready) echo readyok ;;\n\
    'position fen 8/8/8/4k3/8/8/8/3QK3 w '*) info='info depth 7 score cp 777 nodes 5000 pv d1d2'; move=d1d2 ;;\n\
    'position fen 3qk3/8/8/8/4K3/8/8/8 b '*) info='info depth 9 score mate 3 pv d8d7'; move=d8d7 ;;\n\
    'position fen 8/8/8/4k3/8/8/8/4K3 w '*) info=''; move=e1e2 ;;\n\
    go*) [ -n \"$info\" ] && echo \"$info\"; echo \"bestmove $move\" ;;\n\
    quit) exit 0 ;;\n\
  esac\n\
  case \"$line\" in position*) echo \"$line\" >> \"$1\" ;; esac\n\
done\n";

/// `--score-only --engine` writes the engine's reported score (mate scores
/// converted), scores a mated position without asking it, and counts a
/// position it gives no score for as failed — not written, not retried,
/// named with the reason in the rejects and the sidecar.
#[test]
fn score_only_records_the_external_engines_score() {
    let dir = tempfile::tempdir().unwrap();
    let engine = write_script(dir.path(), "scoring.sh", SCORING_ENGINE);
    let seen = dir.path().join("seen.log");
    let input = write(
        dir.path(),
        "in.epd",
        "8/8/8/4k3/8/8/8/3QK3 w - - 0 1\n\
         8/8/8/4k3/8/8/8/4K3 w - - 0 1\n\
         3qk3/8/8/8/4K3/8/8/8 b - - 0 1\n\
         7k/8/8/8/8/8/5PPP/r5K1 w - - 0 1\n",
    );
    let output = dir.path().join("out.epd");
    let rejects = dir.path().join("rejects.txt");
    let summary = dir.path().join("summary.json");
    let out = run_ok(
        labeler()
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .arg("--engine")
            .arg(format!("{} {}", engine.display(), seen.display()))
            .args(["--score-only", "--score-nodes", "5000", "--threads", "1"])
            .args(["--no-progress", "--engine-retries", "2"])
            .arg("--rejects")
            .arg(&rejects)
            .arg("--summary")
            .arg(&summary),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "8/8/8/4k3/8/8/8/3QK3 w - - hmvc 0; fmvn 1; ce 777;\n\
         3qk3/8/8/8/4K3/8/8/8 b - - hmvc 0; fmvn 1; ce 31995;\n\
         7k/8/8/8/8/8/5PPP/r5K1 w - - hmvc 0; fmvn 1; ce -32000;\n"
    );
    // Asked once per position with a move, at the --score budget.
    let asked = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(asked.lines().count(), 3, "{asked}");
    assert_eq!(asked.matches("4K3 w").count(), 1, "retried: {asked}");
    assert!(
        !asked.contains("r5K1"),
        "a mated position was searched: {asked}"
    );
    let rejected = std::fs::read_to_string(&rejects).unwrap();
    assert!(
        rejected.contains("in.epd:2: labeling failed: the engine reported no score"),
        "{rejected}"
    );
    let progress = std::fs::read_to_string(dir.path().join("out.epd.progress")).unwrap();
    assert!(
        progress.contains("failed 1\t") && progress.contains("in.epd:2\t8/8/8/4k3/8/8/8/4K3 w"),
        "{progress}"
    );
    assert!(
        stderr.contains("or gave no score; not in the output): 1"),
        "{stderr}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(json["counts"]["scored"], 3, "{json}");
    assert_eq!(json["skipped"]["failed_positions"], 1, "{json}");
}
