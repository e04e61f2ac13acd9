//! End-to-end tests of the `pgnselect` binary on real games: counts, the
//! sampling window and gaps, legality of every output position,
//! deduplication, reproducibility across thread counts, malformed games,
//! the random move, labels and output formats.

#[path = "../../engine/tests/support/cli.rs"]
mod cli;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cli::ctrl_c;
use engine::chess::position::key;
use engine::formats::labeled::{GameResult, LabeledPosition, LabeledReader};
use shakmaty::{Color, Position};

/// The bundled slice of real games: the first 300 games of Fischer.pgn.
fn fischer() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/pgn/fischer-300.pgn")
}

/// A real collection of the shared data (larger than one 1 MB chunk), or
/// `None` when the shared data is not available.
fn shared_pgn(name: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    [
        root.join("../shared/data/pgn"),
        PathBuf::from("/work/shared/data/pgn"),
    ]
    .into_iter()
    .map(|dir| dir.join(name))
    .find(|p| p.is_file())
}

fn pgnselect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pgnselect"))
        .args(args)
        .args(["--no-progress"])
        .output()
        .expect("pgnselect runs")
}

/// Runs and expects success; returns (stdout, stderr).
fn run_ok(args: &[&str]) -> (String, String) {
    let out = pgnselect(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "pgnselect {args:?} failed:\n{stderr}");
    (String::from_utf8(out.stdout).expect("UTF-8 output"), stderr)
}

/// The number printed just before `label` in the summary.
fn count(stderr: &str, label: &str) -> u64 {
    let at = stderr
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in {stderr}"));
    stderr[..at]
        .split(|c: char| !c.is_ascii_digit())
        .rev()
        .find(|s| !s.is_empty())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no count before {label:?} in {stderr}"))
}

/// The number printed just after `label` in the summary.
fn count_after(stderr: &str, label: &str) -> u64 {
    let at = stderr.find(label).unwrap_or_else(|| panic!("no {label:?}")) + label.len();
    stderr[at..]
        .split(|c: char| !c.is_ascii_digit())
        .find(|s| !s.is_empty())
        .and_then(|s| s.parse().ok())
        .unwrap()
}

fn read_back(text: &str) -> Vec<LabeledPosition> {
    LabeledReader::new(text.as_bytes(), None)
        .map(|r| {
            r.expect("readable")
                .expect("every output line reads back")
                .1
        })
        .collect()
}

fn ply(record: &LabeledPosition) -> u32 {
    let pos = &record.position;
    2 * (pos.fullmoves().get() - 1) + u32::from(pos.turn() == Color::Black)
}

#[test]
fn counts_and_legal_positions_on_real_games() {
    let path = fischer();
    let (stdout, stderr) = run_ok(&[path.to_str().unwrap()]);
    assert_eq!(count(&stderr, " games read"), 300);
    assert_eq!(count_after(&stderr, "games used "), 300);
    assert_eq!(count_after(&stderr, "malformed "), 0);
    let records = read_back(&stdout);
    assert_eq!(
        records.len() as u64,
        count_after(&stderr, "positions written ")
    );
    assert!(records.len() > 1500, "{}", records.len());
    // Legal (LabeledReader parses with full legality checks), labeled.
    assert!(
        records
            .iter()
            .all(|r| r.result.is_some() && r.score.is_none())
    );
    assert!(stdout.lines().all(|l| l.contains(" c9 \"")));
}

#[test]
fn every_position_of_a_shared_collection_is_legal_and_counted() {
    let Some(path) = shared_pgn("Capablanca.pgn") else {
        eprintln!("shared data not found; skipped");
        return;
    };
    let games = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("[Event "))
        .count() as u64;
    let (stdout, stderr) = run_ok(&[path.to_str().unwrap(), "--threads", "2"]);
    assert_eq!(count(&stderr, " games read"), games);
    let records = read_back(&stdout);
    assert_eq!(
        records.len() as u64,
        count_after(&stderr, "positions written ")
    );
}

#[test]
fn window_and_gaps_are_respected() {
    let path = fischer();
    let (min_ply, max_ply, min_gap, max_gap) = (10, 60, 4, 7);
    let (stdout, _) = run_ok(&[
        path.to_str().unwrap(),
        "--no-dedup",
        "--min-ply=10",
        "--max-ply=60",
        "--min-gap=4",
        "--max-gap=7",
        "--min-game-plies=70",
    ]);
    let plies: Vec<u32> = read_back(&stdout).iter().map(ply).collect();
    assert!(plies.len() > 500);
    let mut games = 0;
    let mut previous: Option<u32> = None;
    for &p in &plies {
        assert!((min_ply..=max_ply).contains(&p), "ply {p}");
        match previous {
            // Every game reaches max-ply, so a new game starts lower.
            Some(last) if p > last => {
                let gap = p - last;
                assert!((min_gap..=max_gap).contains(&gap), "gap {gap}");
            }
            _ => {
                games += 1;
                assert!(p < min_ply + max_gap, "first sample at {p}");
                if let Some(last) = previous {
                    assert!(last > max_ply - max_gap, "game ended early at {last}");
                }
            }
        }
        previous = Some(p);
    }
    assert!(games > 50, "{games}");
}

#[test]
fn dedup_really_dedups_across_inputs() {
    let path = fischer();
    let p = path.to_str().unwrap();
    let (twice, stderr) = run_ok(&[p, p]);
    let keys: Vec<u64> = read_back(&twice).iter().map(|r| key(&r.position)).collect();
    let distinct: HashSet<u64> = keys.iter().copied().collect();
    assert_eq!(distinct.len(), keys.len(), "duplicate keys in the output");
    assert!(count_after(&stderr, "duplicates dropped ") > 0);

    // Without dedup, the same file twice with every position sampled
    // repeats each position of the first copy.
    let every = ["--min-gap=1", "--max-gap=1", "--min-ply=0", "--max-ply=30"];
    let (once, _) = run_ok(&[&[p, "--no-dedup"][..], &every].concat());
    let (both, _) = run_ok(&[&[p, p, "--no-dedup"][..], &every].concat());
    assert_eq!(both.lines().count(), 2 * once.lines().count());
    let (deduped, _) = run_ok(&[&[p, p][..], &every].concat());
    let (deduped_once, _) = run_ok(&[&[p][..], &every].concat());
    assert_eq!(deduped, deduped_once);
    assert!(deduped.lines().count() < once.lines().count());
}

#[test]
fn seed_reproduces_output_byte_for_byte_with_1_and_2_threads() {
    // More than one 1 MB chunk, so that the two workers share the file.
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.pgn");
    let text = std::fs::read(fischer()).unwrap();
    std::fs::write(&big, text.repeat(7)).unwrap();
    let big = big.to_str().unwrap();
    let f = fischer();
    let inputs = [big, f.to_str().unwrap()];
    let run = |threads: &str, seed: &str| {
        run_ok(&[&inputs[..], &["--seed", seed, "--threads", threads, "-r"]].concat()).0
    };
    let one = run("1", "42");
    assert!(one.lines().count() > 1000);
    assert_eq!(one, run("2", "42"));
    assert_eq!(one, run("1", "42"));
    assert_ne!(one, run("2", "43"));
    // Through a file written atomically, the same bytes.
    let out = dir.path().join("out.epd");
    run_ok(
        &[
            &inputs[..],
            &["--seed", "42", "-t", "2", "-r", "-o", out.to_str().unwrap()],
        ]
        .concat(),
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), one);
}

/// Replaces the first occurrence of `from` after the `game`-th (1-based)
/// `[Event ` line.
fn corrupt(text: &mut String, game: usize, from: &str, to: &str) {
    let start = text.match_indices("[Event ").nth(game - 1).unwrap().0;
    let at = start + text[start..].find(from).unwrap();
    text.replace_range(at..at + from.len(), to);
}

#[test]
fn malformed_games_are_reported_skipped_and_counted() {
    let mut text = std::fs::read_to_string(fischer()).unwrap();
    // Game 1, move 22: Qxf4 becomes an illegal queen move.
    corrupt(&mut text, 1, "22.Qxf4", "22.Qa8");
    // Game 3: a broken tag line.
    corrupt(&mut text, 3, "[Round \"?\"]", "[Round \"?]");
    // Game 5: a bad FEN tag.
    corrupt(&mut text, 5, "[Round \"?\"]", "[FEN \"8/8/8/8 w - - 0 1\"]");
    // Game 7: a first move no piece can play.
    corrupt(&mut text, 7, "1.", "1.Nd5 ");
    // Game 11: a comment that is never closed (it would swallow the games
    // up to the next '}' if reading did not start again at game 12).
    corrupt(&mut text, 11, "1.", "{ never closed 1.");
    // Game 13: a comment that is closed, so only game 12 is swallowed; the
    // '}' is then a stray token of game 13.
    corrupt(&mut text, 13, "1.", "} 1.");
    let mut bytes = text.into_bytes();
    // Game 9: invalid UTF-8 in a tag.
    let ninth = String::from_utf8_lossy(&bytes)
        .match_indices("[Site \"")
        .nth(8)
        .unwrap()
        .0;
    bytes[ninth + 7] = 0xff;
    // Game 15: invalid UTF-8 in the movetext (pgn-reader skips the token).
    let fifteenth = String::from_utf8_lossy(&bytes)
        .match_indices("[Event ")
        .nth(14)
        .unwrap()
        .0;
    let first_move = fifteenth
        + bytes[fifteenth..]
            .windows(3)
            .position(|w| w == b"\n1.")
            .unwrap();
    bytes.splice(first_move + 3..first_move + 3, [b' ', 0xfe, b' ']);
    // The last game is cut short in its movetext.
    let last = bytes.len() - 40;
    bytes.truncate(last);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corrupt.pgn");
    std::fs::write(&path, &bytes).unwrap();

    let (stdout, stderr) = run_ok(&[path.to_str().unwrap()]);
    assert_eq!(count(&stderr, " games read"), 300, "{stderr}");
    assert_eq!(count_after(&stderr, "malformed "), 9, "{stderr}");
    assert_eq!(count_after(&stderr, "games used "), 291, "{stderr}");
    for game in [1, 3, 5, 7, 9, 11, 13, 15, 300] {
        let needle = format!(": game {game}: ");
        let line = stderr
            .lines()
            .find(|l| l.contains(&needle))
            .unwrap_or_else(|| panic!("game {game} not reported:\n{stderr}"));
        assert!(line.contains("corrupt.pgn:"), "{line}");
    }
    // Game 1's illegal move is on line 14 of the file.
    assert!(stderr.contains("corrupt.pgn:14: game 1: "), "{stderr}");
    assert!(
        stderr.contains("game 13: stray token \"}\" in the movetext"),
        "{stderr}"
    );
    assert!(stderr.contains("game 300: truncated game"), "{stderr}");
    assert!(read_back(&stdout).len() > 1500);
}

#[test]
fn compressed_files_and_standard_input_read_the_same() {
    use std::io::Write;
    let text = std::fs::read(fischer()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("games.pgn.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(&text).unwrap();
    std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
    let zst = dir.path().join("games.pgn.zst");
    std::fs::write(&zst, zstd::encode_all(&text[..], 3).unwrap()).unwrap();
    let (plain, _) = run_ok(&[fischer().to_str().unwrap()]);
    assert_eq!(run_ok(&[gz.to_str().unwrap()]).0, plain);
    assert_eq!(run_ok(&[zst.to_str().unwrap()]).0, plain);
    let mut child = Command::new(env!("CARGO_BIN_EXE_pgnselect"))
        .args(["-", "--no-progress"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&text).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), plain);
}

#[test]
fn missing_and_empty_inputs_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.pgn");
    let out = pgnselect(&[missing.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.pgn: no such file"));
    let empty = dir.path().join("empty.pgn");
    std::fs::write(&empty, "").unwrap();
    let out = pgnselect(&[empty.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("empty"));
    // Inconsistent options are refused up front.
    let out = pgnselect(&[fischer().to_str().unwrap(), "--min-gap=5", "--max-gap=4"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--min-gap"));
}

/// The files left in `dir`, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_read_error_mid_stream_fails_the_run_and_writes_nothing() {
    use std::io::Write;
    let text = std::fs::read(fischer()).unwrap().repeat(8);
    let dir = tempfile::tempdir().unwrap();
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(&text).unwrap();
    let gz = encoder.finish().unwrap();
    let truncated = dir.path().join("games.pgn.gz");
    // Cut well after the first chunks, so workers are busy when it fails.
    std::fs::write(&truncated, &gz[..gz.len() * 3 / 4]).unwrap();
    let out_path = dir.path().join("out.epd");
    for threads in ["1", "2"] {
        let out = pgnselect(&[
            truncated.to_str().unwrap(),
            "--threads",
            threads,
            "-o",
            out_path.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert!(stderr.contains("games.pgn.gz: read error"), "{stderr}");
        assert_eq!(files_in(dir.path()), ["games.pgn.gz"], "{stderr}");
    }
}

#[test]
fn ctrl_c_stops_the_run_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("games.pgn");
    // About four seconds of searching: long enough to be interrupted.
    std::fs::write(&input, std::fs::read(fischer()).unwrap().repeat(20)).unwrap();
    let out_path = dir.path().join("out.epd");
    let child = Command::new(env!("CARGO_BIN_EXE_pgnselect"))
        .args([input.to_str().unwrap(), "-o", out_path.to_str().unwrap()])
        .args(["--no-dedup", "--max-score", "100", "--search-depth", "4"])
        .args(["--threads", "2", "--no-progress"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    ctrl_c(&child);
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(started.elapsed().as_secs() < 3, "slow to stop: {stderr}");
    assert_eq!(files_in(dir.path()), ["games.pgn"], "{stderr}");
}

#[test]
fn random_move_plays_one_more_ply() {
    let path = fischer();
    let p = path.to_str().unwrap();
    let (plain, _) = run_ok(&[p, "--no-dedup"]);
    let (random, _) = run_ok(&[p, "--no-dedup", "-r"]);
    let plain = read_back(&plain);
    let random = read_back(&random);
    // Same candidates, each one ply further (a few may be dropped at mate).
    assert!(random.len() + 5 >= plain.len() && random.len() <= plain.len());
    assert!(random.iter().all(|r| (21..=151).contains(&ply(r))));
    let plain_keys: HashSet<u64> = plain.iter().map(|r| key(&r.position)).collect();
    let moved = random
        .iter()
        .filter(|r| !plain_keys.contains(&key(&r.position)))
        .count();
    assert!(moved * 10 > random.len() * 9, "{moved} of {}", random.len());
}

#[test]
fn no_result_and_formats_read_back_alike() {
    let path = fischer();
    let p = path.to_str().unwrap();
    let (epd, _) = run_ok(&[p]);
    let (unlabeled, _) = run_ok(&[p, "--no-result"]);
    let (arasan, _) = run_ok(&[p, "--format", "arasan"]);
    let (csv, _) = run_ok(&[p, "--format", "csv"]);
    assert!(csv.starts_with("fen,result,score\n"));
    assert!(arasan.lines().all(|l| l.contains(" c2 \"")));
    let epd = read_back(&epd);
    let unlabeled = read_back(&unlabeled);
    assert!(unlabeled.iter().all(|r| r.result.is_none()));
    assert!(!unlabeled.iter().any(|r| r.result.is_some()));
    let board = |r: &LabeledPosition| engine::chess::position::epd_board_of(&r.position);
    let results = |v: &[LabeledPosition]| -> Vec<(String, Option<GameResult>)> {
        v.iter().map(|r| (board(r), r.result)).collect()
    };
    assert_eq!(results(&read_back(&arasan)), results(&epd));
    let csv = read_back(&csv);
    assert_eq!(results(&csv), results(&epd));
    // CSV keeps the clocks, as EPD does.
    assert_eq!(csv, epd);
    let boards: Vec<String> = unlabeled.iter().map(board).collect();
    assert_eq!(boards, epd.iter().map(board).collect::<Vec<_>>());
}

#[test]
fn arasan_format_tracks_castling_through_the_game() {
    // Game 1: White castles king side at ply 7, Black queen side at ply 12,
    // then White's king walks on (it stays "castled king side").
    // Game 2: the rooks leave their corners (White keeps queen side only,
    // Black king side only), then White's king walks without castling.
    let pgn = "[Event \"castles\"]\n[Result \"1/2-1/2\"]\n\n\
        1. e4 e5 2. Nf3 Nc6 3. Bc4 d6 4. O-O Be6 5. d3 Qd7 6. Nc3 O-O-O \
        7. a3 a6 8. Kh1 h6 1/2-1/2\n\n\
        [Event \"walks\"]\n[Result \"1-0\"]\n\n\
        1. h4 a5 2. Rh3 Ra6 3. e4 e5 4. Ke2 1-0\n";
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("castles.pgn");
    std::fs::write(&input, pgn).unwrap();
    let (out, _) = run_ok(&[
        input.to_str().unwrap(),
        "--format=arasan",
        "--no-dedup",
        "--min-ply=1",
        "--min-gap=1",
        "--max-gap=1",
        "--min-game-plies=0",
    ]);
    let statuses: Vec<&str> = out
        .lines()
        .map(|line| {
            let at = line.find(" c1 \"").expect("a c1 tag") + 5;
            &line[at..at + 3]
        })
        .collect();
    let mut expected = vec!["0 0"; 6];
    expected.extend(["3 0"; 5]);
    expected.extend(["3 4"; 5]);
    expected.extend(["0 0", "0 0", "2 0", "2 1", "2 1", "2 1", "5 1"]);
    assert_eq!(statuses, expected, "{out}");
    assert!(
        out.lines()
            .all(|l| l.ends_with("c2 \"0.5\";") || l.ends_with("c2 \"1.0\";"))
    );
}

#[test]
fn quiet_and_search_filters() {
    let path = fischer();
    let p = path.to_str().unwrap();
    let (quiet, stderr) = run_ok(&[p, "--quiet", "--max-ply=60"]);
    assert!(count_after(&stderr, "not quiet ") > 0);
    assert!(read_back(&quiet).iter().all(|r| !r.position.is_check()));
    let (resolved, _) = run_ok(&[p, "--quiet=resolve", "--max-ply=60"]);
    assert!(!read_back(&resolved).is_empty());
    let (bounded, stderr) = run_ok(&[
        p,
        "--max-score=50",
        "--search-depth=1",
        "--max-ply=40",
        "-t",
        "2",
    ]);
    assert!(count_after(&stderr, "beyond max score ") > 0);
    let (again, _) = run_ok(&[
        p,
        "--max-score=50",
        "--search-depth=1",
        "--max-ply=40",
        "-t",
        "1",
    ]);
    assert_eq!(bounded, again);
}

#[test]
fn help_documents_every_option_and_arasan_names() {
    let (help, _) = run_ok(&["--help"]);
    for option in [
        "--output",
        "--min-ply",
        "--max-ply",
        "--min-gap",
        "--max-gap",
        "--random-move",
        "--quiet",
        "--max-score",
        "--result-check",
        "--search-depth",
        "--min-elo",
        "--min-game-plies",
        "--min-pieces",
        "--no-dedup",
        "--no-result",
        "--format",
        "--seed",
        "--threads",
        "-min N = --min-ply",
        "-max N =\n--max-ply",
        "-d N = -d/--min-gap",
        "-s N =\n-s/--max-gap",
        "-r =",
    ] {
        assert!(help.contains(option), "--help lacks {option}");
    }
}

#[test]
fn arasan_options_mean_what_they_mean_in_arasan() {
    let path = fischer();
    let p = path.to_str().unwrap();
    let (arasan, _) = run_ok(&[p, "-min", "30", "-max", "60", "-d", "5", "-s", "9", "-r"]);
    let (long, _) = run_ok(&[
        p,
        "--min-ply=30",
        "--max-ply=60",
        "--min-gap=5",
        "--max-gap=9",
        "--random-move",
    ]);
    assert!(!arasan.is_empty());
    assert_eq!(arasan, long);
    let (default, _) = run_ok(&[p]);
    assert_ne!(arasan, default);
}

/// Games whose result the final position confirms or contradicts.
const RESULT_CHECK_GAMES: &str = r#"[Event "queen up, 1-0"]
[SetUp "1"]
[FEN "4k3/8/8/8/8/8/8/3QK3 w - - 0 1"]
[Result "1-0"]

1. Qd2 Kf7 1-0

[Event "queen down, 1-0"]
[SetUp "1"]
[FEN "3qk3/8/8/8/8/8/8/4K3 w - - 0 1"]
[Result "1-0"]

1. Ke2 Qd7 1-0

[Event "rook up, agreed drawn"]
[SetUp "1"]
[FEN "4k3/8/8/8/8/8/8/R3K3 w - - 0 1"]
[Result "1/2-1/2"]

1. Kd2 Kd7 1/2-1/2

[Event "mated, 0-1"]
[Result "0-1"]

1. f3 e5 2. g4 Qh4# 0-1

[Event "mated, 1-0"]
[Result "1-0"]

1. f3 e5 2. g4 Qh4# 1-0

[Event "level, drawn"]
[Result "1/2-1/2"]

1. e4 e5 1/2-1/2
"#;

#[test]
fn result_check_drops_games_the_final_position_contradicts() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    std::fs::write(&pgn, RESULT_CHECK_GAMES).unwrap();
    let p = pgn.to_str().unwrap();
    let window = ["--min-ply=0", "--min-gap=1", "--max-gap=1", "--no-dedup"];
    let mut args = vec![p];
    args.extend(window);
    let (all, stderr) = run_ok(&args);
    assert_eq!(count(&stderr, " games read"), 6, "{stderr}");
    assert_eq!(count_after(&stderr, "games used "), 6, "{stderr}");
    args.extend(["--result-check", "300"]);
    let (checked, stderr) = run_ok(&args);
    assert_eq!(count_after(&stderr, "games used "), 3, "{stderr}");
    assert_eq!(
        count_after(&stderr, "result contradicted by search "),
        3,
        "{stderr}"
    );
    let kept = read_back(&checked);
    assert!(!kept.is_empty() && kept.len() < read_back(&all).len());
    // The kept games are the three whose result the board confirms: the
    // queen-up win (3 pieces), the mate against White and the level draw
    // (32 pieces each).
    let kinds: HashSet<(Option<GameResult>, usize)> = kept
        .iter()
        .map(|r| (r.result, r.position.board().occupied().count()))
        .collect();
    let expected: HashSet<(Option<GameResult>, usize)> = [
        (Some(GameResult::WhiteWin), 3),
        (Some(GameResult::BlackWin), 32),
        (Some(GameResult::Draw), 32),
    ]
    .into_iter()
    .collect();
    assert_eq!(kinds, expected, "{checked}");
    // --search-depth alone has nothing to apply to.
    let out = pgnselect(&[p, "--search-depth", "3"]);
    assert!(!out.status.success());
}

/// Found by the fuzz target `pgnselect_pgn` (option set 4: every ply with a
/// depth-1 score bound): a Fischer game whose moves have no space after the
/// move numbers and empty Elo tags. Replayed through the binary: it runs,
/// and every written line is a legal position within the bound's game.
#[test]
fn fuzz_found_game_with_a_score_bound() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("found.pgn");
    std::fs::write(
        &pgn,
        "[Event \"Washington\"]\n[Site \"Washington\"]\n[Date \"1956.??.??\"]\n[Round \"?\"]\n\
         [White \"Fischer, Robert James\"]\n[Black \"Hurttlen, N.\"]\n[Result \"1/2-1/2\"]\n\
         [WhiteElo \"\"]\n[BlackElo \"\"]\n[ECO \"C84\"]\n\n\
         1.Nf3 Nc6 2.e4 e5 3.Bb5 a6 4.Ba4 Nf6 5.O-O Be7 6.Re1 O-O 7.Bxc6 dxc6 8.Nxe5 Bc5\n\
         9.c3 Re8 10.d4 Bd6 11.Bg5 Bxe5 12.dxe5 Qxd1 13.Rxd1 Nxe4 14.Be3 Bf5  1/2-1/2\n\n\n",
    )
    .unwrap();
    let (stdout, stderr) = run_ok(&[
        "--min-ply",
        "0",
        "-d",
        "1",
        "-s",
        "1",
        "--max-score",
        "300",
        "--search-depth",
        "1",
        "--threads",
        "1",
        "-o",
        "-",
        pgn.to_str().unwrap(),
    ]);
    assert_eq!(count(&stderr, "games read"), 1, "{stderr}");
    let written = read_back(&stdout);
    assert!(!written.is_empty() && written.len() <= 29, "{stderr}");
}
