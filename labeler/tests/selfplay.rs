//! End-to-end tests of `labeler selfplay`: identical output for any thread
//! count and for split runs, the three formats read back by independent
//! readers (python-chess for EPD, the `bulletformat` crate for bullet's
//! text and binary formats), resuming after SIGKILL and Ctrl-C, external
//! engines (ours over UCI gives the in-process games; a hung one fails its
//! games without stopping the run) and bad input.

#[path = "../../engine/tests/support/cli.rs"]
mod cli;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::str::FromStr;
use std::time::{Duration, Instant};

use bulletformat::{ChessBoard, DataLoader};
use cli::{ctrl_c, run_ok, write_script};

/// Small node budget: the tests check plumbing, not playing strength.
const TEST_NODES: &str = "400";

fn labeler() -> Command {
    Command::new(env!("CARGO_BIN_EXE_labeler"))
}

/// `labeler selfplay -o OUTPUT --nodes TEST_NODES --no-progress ARGS…`.
fn selfplay(output: &Path, args: &[&str]) -> Command {
    let mut cmd = labeler();
    cmd.arg("selfplay")
        .arg("-o")
        .arg(output)
        .args(["--nodes", TEST_NODES, "--no-progress"])
        .args(args);
    cmd
}

fn run_err(cmd: &mut Command) -> String {
    let started = Instant::now();
    let out = cmd.output().expect("labeler runs");
    assert!(!out.status.success(), "labeler should have failed");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "an error should come quickly"
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// Asserts two outputs are equal, naming the first difference (not
/// printing megabytes).
fn assert_same(found: &[u8], expected: &[u8], what: &str) {
    if found != expected {
        let at = found
            .iter()
            .zip(expected)
            .position(|(a, b)| a != b)
            .unwrap_or(found.len().min(expected.len()));
        panic!(
            "{what}: {} bytes, expected {}; first difference at byte {at}",
            found.len(),
            expected.len()
        );
    }
}

#[test]
fn output_is_the_same_for_any_thread_count_and_split() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.epd");
    run_ok(&mut selfplay(&one, &["--games", "6", "--threads", "1"]));
    let whole = read(&one);
    assert!(whole.len() > 1000, "six games give positions");
    let two = dir.path().join("two.epd");
    run_ok(&mut selfplay(&two, &["--games", "6", "--threads", "3"]));
    assert_same(&read(&two), &whole, "3 threads");
    // Shards in order, and --first-game ranges, concatenate to the run.
    let mut shards = Vec::new();
    for k in 0..3 {
        let path = dir.path().join(format!("shard{k}.epd"));
        let shard = format!("{k}/3");
        run_ok(&mut selfplay(&path, &["--games", "6", "--shard", &shard]));
        shards.extend(read(&path));
    }
    assert_same(&shards, &whole, "shards");
    let head = dir.path().join("head.epd");
    let tail = dir.path().join("tail.epd");
    run_ok(&mut selfplay(&head, &["--games", "4"]));
    run_ok(&mut selfplay(&tail, &["--games", "2", "--first-game", "4"]));
    let mut joined = read(&head);
    joined.extend(read(&tail));
    assert_same(&joined, &whole, "first-game ranges");
    // Another seed gives other games.
    let other = dir.path().join("other.epd");
    run_ok(&mut selfplay(&other, &["--games", "6", "--seed", "2"]));
    assert_ne!(read(&other), whole);
}

/// What python-chess reads from each EPD line: the eight bitboards in
/// bullet's order (White, Black, P, N, B, R, Q, K), the side to move (0
/// White), the search score (side to move), the result (White's score),
/// and whether the move counters agree with the position.
const PYTHON_READER: &str = r#"
import sys, chess
for line in open(sys.argv[1]):
    board = chess.Board()
    ops = board.set_epd(line.strip())
    assert board.is_valid(), line
    assert not board.is_check(), line
    assert board.halfmove_clock == ops["hmvc"] and board.fullmove_number == ops["fmvn"], line
    result = {"1-0": 1.0, "1/2-1/2": 0.5, "0-1": 0.0}[ops["c9"]]
    bbs = [board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK]]
    bbs += [board.pieces_mask(pt, chess.WHITE) | board.pieces_mask(pt, chess.BLACK)
            for pt in (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)]
    stm = 0 if board.turn == chess.WHITE else 1
    print(" ".join(str(b) for b in bbs), stm, int(ops["ce"]), result)
"#;

/// One position as python-chess reads it from our EPD.
struct PythonRecord {
    bbs: [u64; 8],
    stm: usize,
    score: i16,
    result: f32,
}

fn python_records(epd: &Path) -> Vec<PythonRecord> {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("read.py");
    std::fs::write(&script, PYTHON_READER).unwrap();
    let out = Command::new("python3")
        .arg(&script)
        .arg(epd)
        .output()
        .expect("python3 (with python-chess, see scripts/test.sh) is needed");
    assert!(
        out.status.success(),
        "python-chess rejected our EPD: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split(' ').collect();
            let mut bbs = [0u64; 8];
            for (b, text) in bbs.iter_mut().zip(&f[..8]) {
                *b = text.parse().unwrap();
            }
            PythonRecord {
                bbs,
                stm: f[8].parse().unwrap(),
                score: f[9].parse().unwrap(),
                result: f[10].parse().unwrap(),
            }
        })
        .collect()
}

#[test]
fn formats_describe_the_same_positions() {
    let dir = tempfile::tempdir().unwrap();
    let epd = dir.path().join("out.epd");
    let text = dir.path().join("out.txt");
    let binary = dir.path().join("out.bullet");
    let summary = dir.path().join("summary.json");
    for (path, format) in [(&epd, "epd"), (&text, "bullet-text"), (&binary, "bullet")] {
        run_ok(
            selfplay(path, &["--games", "4", "--format", format])
                .arg("--summary")
                .arg(&summary),
        );
    }
    let expected = python_records(&epd);
    // The JSON summary (of the last run) counts what was written.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(json["status"], "complete");
    assert_eq!(json["counts"]["games"], 4);
    assert_eq!(json["counts"]["positions_kept"], expected.len() as u64);
    let results: u64 = ["white_wins", "draws", "black_wins"]
        .iter()
        .map(|k| json["counts"][k].as_u64().unwrap())
        .sum();
    assert_eq!(results, 4);
    let dropped: u64 = json["skipped"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| !k.starts_with("starts_"))
        .map(|(_, v)| v.as_u64().unwrap())
        .sum();
    assert_eq!(
        json["counts"]["positions_searched"].as_u64().unwrap(),
        expected.len() as u64 + dropped
    );
    assert!(expected.len() > 100, "four games give positions");
    assert!(expected.iter().any(|r| r.stm == 1) && expected.iter().any(|r| r.result != 0.5));
    // bulletformat reads the binary file...
    let mut records = Vec::new();
    DataLoader::<ChessBoard>::new(&binary, 1)
        .unwrap()
        .map_positions(|board| records.push(*board));
    assert_eq!(
        std::fs::metadata(&binary).unwrap().len(),
        32 * records.len() as u64
    );
    // ...and the text file, line by line.
    let lines = std::fs::read_to_string(&text).unwrap();
    let from_text: Vec<ChessBoard> = lines
        .lines()
        .map(|l| ChessBoard::from_str(l).expect("bulletformat reads our text line"))
        .collect();
    assert_eq!(records.len(), expected.len());
    assert_eq!(from_text, records);
    for (i, (record, python)) in records.iter().zip(&expected).enumerate() {
        // bulletformat's constructor from what python-chess read, with
        // White-relative score and result as it expects.
        let white_score = if python.stm == 0 {
            python.score
        } else {
            -python.score
        };
        let built = ChessBoard::from_raw(python.bbs, python.stm, white_score, python.result)
            .expect("python-chess gave a board");
        assert_eq!(*record, built, "position {i}");
    }
}

/// Games and written bytes of the last checkpoint in the sidecar.
fn last_checkpoint(output: &Path) -> Option<(u64, u64)> {
    let mut sidecar = output.as_os_str().to_owned();
    sidecar.push(".progress");
    let text = std::fs::read_to_string(PathBuf::from(sidecar)).ok()?;
    let line = text.lines().rev().find(|l| l.starts_with("done "))?;
    let mut fields = line["done ".len()..].split(' ');
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

/// Starts `cmd` and waits until its output holds `games` checkpointed
/// games.
fn spawn_until(cmd: &mut Command, output: &Path, games: u64) -> std::process::Child {
    let mut child = cmd.stderr(Stdio::null()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while last_checkpoint(output).is_none_or(|(g, _)| g < games) {
        assert!(Instant::now() < deadline, "selfplay made no progress");
        assert!(child.try_wait().unwrap().is_none(), "selfplay ended early");
        std::thread::sleep(Duration::from_millis(10));
    }
    child
}

#[test]
fn resume_after_sigkill_equals_an_uninterrupted_run() {
    let dir = tempfile::tempdir().unwrap();
    let games = ["--games", "10", "--format", "bullet"];
    let reference = dir.path().join("reference.bullet");
    run_ok(&mut selfplay(&reference, &games));
    let reference = read(&reference);
    let output = dir.path().join("out.bullet");
    let mut child = spawn_until(
        selfplay(&output, &games).args(["--threads", "2"]),
        &output,
        2,
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let (done, bytes) = last_checkpoint(&output).unwrap();
    assert!(done < 10, "the kill came too late to test anything");
    let partial = read(&output);
    assert_same(
        &partial[..bytes as usize],
        &reference[..bytes as usize],
        "checkpointed prefix",
    );
    // A torn record after the checkpoint.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&output)
        .unwrap()
        .write_all(&[7; 13])
        .unwrap();
    // A rerun with other options is refused, and changes nothing.
    let message = run_err(&mut selfplay(
        &output,
        &["--games", "10", "--format", "bullet", "--seed", "9"],
    ));
    assert!(message.contains("different command"), "{message}");
    assert!(message.contains("seed"), "{message}");
    // The same command continues, with another thread count.
    let out = run_ok(selfplay(&output, &games).args(["--threads", "1"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("resumed: {done} of 10 games")),
        "{stderr}"
    );
    assert_same(&read(&output), &reference, "resumed run");
    // Once complete, a rerun plays nothing and changes nothing.
    let out = run_ok(&mut selfplay(&output, &games));
    assert!(String::from_utf8_lossy(&out.stderr).contains("selfplay: 0 games"));
    assert_same(&read(&output), &reference, "rerun of a complete run");
}

#[test]
fn ctrl_c_stops_cleanly_and_the_rerun_completes() {
    let dir = tempfile::tempdir().unwrap();
    // Enough games that the run cannot finish between the first
    // checkpoint and the signal, even on a loaded machine.
    let games = ["--games", "96", "--threads", "2"];
    let reference = dir.path().join("reference.epd");
    run_ok(&mut selfplay(&reference, &games));
    let output = dir.path().join("out.epd");
    let mut child = spawn_until(&mut selfplay(&output, &games), &output, 1);
    ctrl_c(&child);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "interrupted runs exit with 130");
    let text = std::fs::read_to_string(&output).unwrap();
    assert!(text.is_empty() || text.ends_with('\n'), "only whole games");
    run_ok(&mut selfplay(&output, &games));
    assert_same(&read(&output), &read(&reference), "resumed run");
}

/// The engine binary of this workspace (built by `cargo test --workspace`
/// and by scripts/test.sh), next to the labeler.
fn engine_binary() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_BIN_EXE_labeler")).with_file_name("engine");
    path.exists().then_some(path)
}

#[test]
fn our_engine_over_uci_plays_the_in_process_games() {
    let Some(engine) = engine_binary() else {
        eprintln!("skipped: build the engine binary (cargo build --release) first");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let inprocess = dir.path().join("in.epd");
    let external = dir.path().join("ext.epd");
    run_ok(&mut selfplay(
        &inprocess,
        &["--games", "2", "--threads", "1"],
    ));
    run_ok(selfplay(&external, &["--games", "2", "--threads", "1", "--engine"]).arg(&engine));
    assert_same(&read(&external), &read(&inprocess), "over UCI");
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
fn a_hung_engine_fails_its_games_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let engine = write_script(dir.path(), "hang.sh", HANGING_ENGINE);
    let output = dir.path().join("out.epd");
    let args = ["--games", "2", "--threads", "2", "--engine-timeout", "0.2"];
    let mut cmd = selfplay(&output, &args);
    cmd.arg("--engine")
        .arg(&engine)
        .args(["--engine-retries", "1"]);
    let out = run_ok(&mut cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("failed games (engine failed after all retries; nothing written): 2"),
        "{stderr}"
    );
    assert!(stderr.contains("engine timed out"), "{stderr}");
    assert_eq!(read(&output), b"");
    // The failures are remembered: a rerun has nothing left to do.
    let out = run_ok(&mut cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("selfplay: 0 games"), "{stderr}");
    assert!(
        stderr.contains("failed games (engine failed after all retries; nothing written): 2"),
        "{stderr}"
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out.epd");
    let message = run_err(&mut selfplay(&output, &["--games", "0"]));
    assert!(message.contains("--games must be at least 1"), "{message}");
    let message = run_err(&mut selfplay(&output, &["--games", "2", "--shard", "0/3"]));
    assert!(message.contains("holds no game"), "{message}");
    // Openings: missing, unusable, an empty book.
    let missing = dir.path().join("missing.epd");
    let message = run_err(selfplay(&output, &["--games", "1", "--openings"]).arg(&missing));
    assert!(
        message.contains("missing.epd") && message.contains("no such file"),
        "{message}"
    );
    let garbage = dir.path().join("garbage.epd");
    std::fs::write(&garbage, "not a position\nnor this\n").unwrap();
    let message = run_err(selfplay(&output, &["--games", "1", "--openings"]).arg(&garbage));
    // A bad line of an openings file is named (it is a mistake to fix).
    assert!(
        message.contains("garbage.epd:1: invalid FEN syntax"),
        "{message}"
    );
    let unplayable = dir.path().join("unplayable.epd");
    std::fs::write(&unplayable, "7k/5QQ1/8/8/8/8/8/K7 b - -\n").unwrap();
    let message = run_err(selfplay(&output, &["--games", "1", "--openings"]).arg(&unplayable));
    assert!(
        message.contains("unplayable.epd: no usable opening"),
        "{message}"
    );
    let book = dir.path().join("empty.bin");
    std::fs::write(&book, b"").unwrap();
    let message = run_err(selfplay(&output, &["--games", "1", "--openings"]).arg(&book));
    assert!(message.contains("empty.bin"), "{message}");
    // Starts that can never be found end with the reason, not a hang.
    let message = run_err(&mut selfplay(
        &output,
        &["--games", "1", "--random-plies", "700", "--max-plies", "0"],
    ));
    assert!(
        message.contains("no playable start in 1000 draws: 1000 ended"),
        "{message}"
    );
    // Random plies that reach --max-plies would make only adjudicated draws
    // without a kept position.
    let message = run_err(&mut selfplay(
        &output,
        &["--games", "1", "--random-plies", "400"],
    ));
    assert!(
        message.contains("--random-plies 400 leaves no ply to play before --max-plies 400"),
        "{message}"
    );
    let message = run_err(&mut selfplay(
        &output,
        &[
            "--games",
            "1",
            "--random-plies",
            "0",
            "--max-start-score",
            "0",
            "--start-nodes",
            "50",
        ],
    ));
    assert!(
        message.contains("1000 scored beyond --max-start-score 0"),
        "{message}"
    );
    let message = run_err(&mut selfplay(
        &output,
        &["--games", "1", "--max-score", "40000", "--format", "bullet"],
    ));
    assert!(
        message.contains("--max-score must be between 0 and 32767"),
        "{message}"
    );
    // A file no selfplay run wrote is not overwritten.
    let foreign = dir.path().join("foreign.epd");
    std::fs::write(&foreign, "something precious\n").unwrap();
    let message = run_err(&mut selfplay(&foreign, &["--games", "1"]));
    assert!(message.contains("--overwrite"), "{message}");
    assert_eq!(read(&foreign), b"something precious\n");
}
