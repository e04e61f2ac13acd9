//! `tuner spsa` end to end: a run interrupted by Ctrl-C or killed and
//! resumed ends exactly where an uninterrupted run does (our engine, fixed
//! nodes); any UCI engine can be tuned (a python-chess engine with a
//! `Skill` option) and a crash costs a replayed pair, not a result; an engine
//! that always crashes stops the run with a clear error and nothing lost;
//! bad options are clear errors.

#[path = "../../engine/tests/support/cli.rs"]
mod cli;

use cli::workspace;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Our engine, beside the tuner binary (built when missing).
fn engine() -> PathBuf {
    let tuner = PathBuf::from(env!("CARGO_BIN_EXE_tuner"));
    let engine = tuner.with_file_name(format!("engine{}", std::env::consts::EXE_SUFFIX));
    if !engine.exists() {
        let release = tuner.parent().unwrap().ends_with("release");
        let mut build = Command::new(env!("CARGO"));
        build.args(["build", "-p", "engine", "--bin", "engine"]);
        if release {
            build.arg("--release");
        }
        assert!(build.status().unwrap().success(), "building the engine");
    }
    engine
}

fn fake_engine(args: &str) -> String {
    format!(
        "python3 {}/tests/fake_uci_engine.py {args}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn python_chess() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import chess"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("notice: python-chess is missing (scripts/test.sh installs it)");
    }
    ok
}

/// `tuner spsa` with our engine: two parameters from bad values, fixed
/// nodes, short games.
fn our_run(out: &Path, iterations: usize) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tuner"));
    c.arg("spsa")
        .arg("--engine")
        .arg(engine())
        .args(["--tune", "rfp_margin=200", "--tune", "nmp_base_reduction=1"])
        .args(["--iterations", &iterations.to_string()])
        .args(["--pairs-per-iteration", "1", "--nodes", "300"])
        .args(["--max-plies", "60", "--r-end", "0.05", "--option", "Hash=1"])
        .arg("--openings")
        .arg(workspace().join("data/openings/match-openings.epd"))
        .arg("--output")
        .arg(out);
    c
}

fn rows(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("checkpoint"))
        .map(|t| t.lines().filter(|l| l.starts_with("row ")).count())
        .unwrap_or(0)
}

fn wait_for_rows(child: &mut Child, dir: &Path, n: usize) {
    let start = Instant::now();
    while rows(dir) < n {
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        assert!(start.elapsed() < Duration::from_secs(60), "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn ok(out: Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

#[test]
fn interrupted_and_killed_runs_resume_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    let summary = dir.path().join("summary.json");
    let stderr = ok(our_run(&whole, 5)
        .arg("--summary")
        .arg(&summary)
        .output()
        .unwrap());
    assert!(stderr.contains("done after 5 of 5 iterations"), "{stderr}");
    let json = std::fs::read_to_string(&summary).unwrap();
    assert!(
        json.contains("\"iterations\": 5") && json.contains("\"games\": 10"),
        "{json}"
    );
    assert!(json.contains("\"status\": \"complete\""), "{json}");
    assert_eq!(rows(&whole), 5);
    let csv = read(&whole, "spsa.csv");
    assert_eq!(csv.lines().count(), 6, "{csv}");
    assert!(
        csv.starts_with(
            "iteration,wins,draws,losses,replayed_pairs,rfp_margin,nmp_base_reduction\n"
        )
    );
    let uci = read(&whole, "tuned.uci");
    assert!(uci.starts_with("setoption name rfp_margin value "), "{uci}");
    assert!(read(&whole, "spsa.svg").contains("<polyline"));
    // The values file is one our engine reads.
    let check = Command::new(engine())
        .args(["search-params", "--file"])
        .arg(whole.join("tuned.search"))
        .output()
        .unwrap();
    assert!(check.status.success());

    // Ctrl-C after two iterations: a clean stop, then --resume.
    let stopped = dir.path().join("stopped");
    let mut child = our_run(&stopped, 5).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_rows(&mut child, &stopped, 2);
    signal(&child, "INT");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted after"), "{stderr}");
    assert!(rows(&stopped) < 5);
    ok(our_run(&stopped, 5).arg("--resume").output().unwrap());

    // Killed outright after one iteration, then --resume.
    let killed = dir.path().join("killed");
    let mut child = our_run(&killed, 5).stderr(Stdio::null()).spawn().unwrap();
    wait_for_rows(&mut child, &killed, 1);
    signal(&child, "KILL");
    child.wait().unwrap();
    ok(our_run(&killed, 5).arg("--resume").output().unwrap());

    for dir in [&stopped, &killed] {
        for file in ["checkpoint", "spsa.csv", "tuned.search", "tuned.uci"] {
            assert_eq!(read(dir, file), read(&whole, file), "{file}");
        }
    }

    // Resuming with other settings, or starting over a run, is refused.
    let out = our_run(&whole, 6).arg("--resume").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("was started with other settings")
            && stderr.contains("now:    schedule iterations 6"),
        "{stderr}"
    );
    let out = our_run(&whole, 5).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("pass --resume to continue it"));
}

/// `tuner spsa` on the python-chess engine.
fn fake_run(out: &Path, engine: &str, iterations: usize) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tuner"));
    c.args(["spsa", "--engine", engine])
        .args(["--iterations", &iterations.to_string()])
        .args(["--pairs-per-iteration", "1", "--nodes", "1"])
        .args([
            "--max-plies",
            "30",
            "--resign-score",
            "500",
            "--resign-moves",
            "1",
        ])
        .args(["--engine-timeout", "5"])
        .arg("--openings")
        .arg(workspace().join("data/openings/match-openings.epd"))
        .arg("--output")
        .arg(out);
    c
}

#[test]
fn any_uci_engine_and_crashes_are_replayed() {
    if !python_chess() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The 3rd `go` of all processes crashes: its pair is played again.
    let counter = dir.path().join("gos");
    let engine = fake_engine(&format!("--crash-file {} --crash-at 3", counter.display()));
    let out = dir.path().join("fake");
    let stderr = ok(fake_run(&out, &engine, 2).output().unwrap());
    // Only Skill is tuned (Hash is engine management); c_end is a twentieth
    // of its range.
    assert!(
        stderr.contains("Skill") && stderr.contains("c_end 5 "),
        "{stderr}"
    );
    assert!(!stderr.contains("  Hash"), "{stderr}");
    assert!(
        stderr.contains("engine failure, pair replayed: iteration 1, pair 1"),
        "{stderr}"
    );
    let csv = read(&out, "spsa.csv");
    let replayed: u64 = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(4).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(replayed, 1, "{csv}");
    assert!(read(&out, "tuned.uci").starts_with("setoption name Skill value "));

    // An engine that crashes at every move stops the run with a clear
    // error; the log and checkpoint hold what was completed (nothing).
    let out = dir.path().join("always");
    let result = fake_run(&out, &fake_engine("--crash-always"), 2)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(!result.status.success());
    assert!(
        stderr.contains("the engine failed 3 times in a row on one game pair"),
        "{stderr}"
    );
    assert_eq!(read(&out, "spsa.csv").lines().count(), 1);
}

#[test]
fn bad_options_are_clear_errors() {
    if !python_chess() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let engine = fake_engine("");
    let error = |extra: &[&str]| {
        let out = fake_run(&dir.path().join("x"), &engine, 1)
            .args(extra)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(
        error(&["--tune", "Aggression"])
            .contains("no spin option \"Aggression\"; its spin options are: Hash, Skill")
    );
    assert!(error(&["--tune", "Skill=50,60,40"]).contains("min >= max"));
    assert!(error(&["--tune", "Skill=50,0,200"]).contains("exceeds the engine's 0..100"));
    assert!(error(&["--tune", "Skill=abc"]).contains("START \"abc\" is not a number"));
    assert!(error(&["--option", "Hash"]).contains("is not Name=Value"));
    let out = fake_run(&dir.path().join("y"), "/nonexistent/engine", 1)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("starting the engine"));
}
