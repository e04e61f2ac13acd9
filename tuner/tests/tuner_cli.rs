//! End-to-end tests of the `tuner` binary on the bundled real positions:
//! gradient checks for every objective, thread-count independence, exact
//! resume, bad-line handling, measurement-only runs, and the generated
//! `params.rs` compiling into the engine with the same values.

#[path = "../../engine/tests/support/cli.rs"]
mod cli;

use cli::{copy_dir, ok, workspace};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data() -> PathBuf {
    workspace().join("data/labeled/masters-quiet-20k.epd")
}

fn tuner(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tuner"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tuner")
}

/// The first `n` lines of the labeled file `path`, as text.
fn head(path: &Path, n: usize) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .take(n)
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Positions as self-play lists them, a game's one after another: `games`
/// sequences of `plies` positions, each from one of the bundled positions
/// on by legal moves chosen deterministically, with its result (EPD text).
fn game_ordered(games: usize, plies: usize) -> String {
    use shakmaty::fen::Fen;
    use shakmaty::{EnPassantMode, Position};
    let mut out = String::new();
    for (g, line) in head(&data(), games).lines().enumerate() {
        let record = engine::formats::labeled::parse_line(line).unwrap().unwrap();
        let result = line.split('"').nth(1).unwrap().to_string();
        let mut pos = record.position;
        for p in 0..plies {
            let fen = Fen::from_position(&pos, EnPassantMode::Legal);
            out.push_str(&format!("{fen} c9 \"{result}\";\n"));
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos.play_unchecked(moves[(g * 7 + p * 3) % moves.len()]);
        }
    }
    out
}

/// `text` compressed with gzip.
fn gzip(text: &str) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap()
}

/// The parameter lines of a params file (its header names the command).
fn values(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// The CSV log without the timing columns.
fn losses(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split(',').take(3).collect::<Vec<_>>().join(","))
        .collect()
}

#[test]
fn gradient_check_passes_for_every_objective() {
    let dir = tempfile::tempdir().unwrap();
    for objective in ["mse", "log", "ordinal"] {
        let out = ok(
            "tuner",
            &tuner(
                &["-V", "-O", objective, data().to_str().unwrap()],
                dir.path(),
            ),
        );
        assert!(out.contains("gradient check passed"), "{out}");
    }
    // With blended search scores too.
    let scored = dir.path().join("scored.epd");
    let text: String = std::fs::read_to_string(data())
        .unwrap()
        .lines()
        .take(3000)
        .enumerate()
        .map(|(i, l)| format!("{l} ce {};\n", (i as i32 % 400) - 200))
        .collect();
    std::fs::write(&scored, text).unwrap();
    let out = ok(
        "tuner",
        &tuner(
            &["-V", "--lambda", "0.5", scored.to_str().unwrap()],
            dir.path(),
        ),
    );
    assert!(out.contains("gradient check passed"), "{out}");
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    // Positions sampled from many games (whole records), and positions of
    // games one after another (runs of differences).
    let games = dir.path().join("games.epd");
    std::fs::write(&games, game_ordered(150, 40)).unwrap();
    for input in [data(), games.clone()] {
        thread_count_independence(dir.path(), &input);
    }
    // The game-ordered positions are stored as runs of differences (the
    // layout takes them below 80% of the coefficients).
    let out = tuner(
        &[
            "-n",
            "0",
            "--no-emit-rust",
            "-x",
            "m.params",
            games.to_str().unwrap(),
        ],
        dir.path(),
    );
    ok("tuner", &out);
    let err = String::from_utf8_lossy(&out.stderr);
    let figures: Vec<f64> = err
        .split("store ")
        .nth(1)
        .and_then(|t| t.split(" coefficients").next())
        .map(|t| t.split(" of ").map(|x| x.parse().unwrap()).collect())
        .unwrap_or_else(|| panic!("no coefficient figures in {err}"));
    assert!(figures[0] < 0.8 * figures[1], "{figures:?}");
}

fn thread_count_independence(dir: &Path, input: &Path) {
    let run = |threads: &str, batch: &str| {
        let out = dir.join(format!("t{threads}-{batch}.params"));
        let log = dir.join(format!("t{threads}-{batch}.csv"));
        ok(
            "tuner",
            &tuner(
                &[
                    "-c",
                    threads,
                    "-n",
                    "15",
                    "--batch-size",
                    batch,
                    "--no-emit-rust",
                    "-x",
                    out.to_str().unwrap(),
                    "--log",
                    log.to_str().unwrap(),
                    input.to_str().unwrap(),
                ],
                dir,
            ),
        );
        (values(&out), losses(&log))
    };
    for batch in ["0", "5000"] {
        let one = run("1", batch);
        let two = run("2", batch);
        assert_eq!(one, two, "batch {batch}");
        assert_eq!(one.1.len(), 17, "header + epochs 0..=15");
    }
}

#[test]
fn resume_equals_an_uninterrupted_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = data();
    let common = |x: &str, log: &str, epochs: &str| -> Vec<String> {
        vec![
            "-n".into(),
            epochs.into(),
            "--batch-size".into(),
            "4000".into(),
            "--no-emit-rust".into(),
            "-x".into(),
            dir.path().join(x).to_str().unwrap().into(),
            "--log".into(),
            dir.path().join(log).to_str().unwrap().into(),
            d.to_str().unwrap().into(),
        ]
    };
    let straight = common("straight.params", "straight.csv", "12");
    ok(
        "tuner",
        &tuner(
            &straight.iter().map(String::as_str).collect::<Vec<_>>(),
            dir.path(),
        ),
    );
    let first = common("resumed.params", "resumed.csv", "5");
    ok(
        "tuner",
        &tuner(
            &first.iter().map(String::as_str).collect::<Vec<_>>(),
            dir.path(),
        ),
    );
    let mut second = common("resumed.params", "resumed.csv", "12");
    let cp = dir.path().join("resumed.params.checkpoint");
    second.extend(["--resume".into(), cp.to_str().unwrap().into()]);
    ok(
        "tuner",
        &tuner(
            &second.iter().map(String::as_str).collect::<Vec<_>>(),
            dir.path(),
        ),
    );
    assert_eq!(
        values(&dir.path().join("straight.params")),
        values(&dir.path().join("resumed.params"))
    );
    assert_eq!(
        losses(&dir.path().join("straight.csv")),
        losses(&dir.path().join("resumed.csv"))
    );
    // A checkpoint is refused with other data (here: fewer positions) or any
    // other setting that changes the result, naming what differs.
    let other = dir.path().join("other.epd");
    let text = head(&d, 500);
    std::fs::write(&other, text).unwrap();
    let refused = |extra: &[&str], input: &str| -> String {
        let mut args = common("r.params", "r.csv", "12");
        args.pop();
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend(["--resume".into(), cp.to_str().unwrap().into(), input.into()]);
        let out = tuner(
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            dir.path(),
        );
        assert!(!out.status.success(), "{extra:?} was accepted");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = refused(&[], other.to_str().unwrap());
    assert!(
        err.contains("data: ") && err.contains("search scores differ"),
        "{err}"
    );
    let d = d.to_str().unwrap();
    for (extra, named) in [
        (
            &["-O", "log"][..],
            "-O/--objective: mse in the checkpoint, log now",
        ),
        (&["--l2", "0"], "--l2: 1e-8 in the checkpoint, 0.0 now"),
        (&["--learning-rate", "3"], "--learning-rate"),
        (&["--lr-decay", "0.99"], "--lr-decay"),
        (&["--tune", "pst"], "--tune/--freeze"),
        (&["--k", "2.5"], "--k: fitted in the checkpoint, 2.5 now"),
        (&["--lambda", "0.5"], "--lambda"),
        (&["--seed", "2"], "--seed"),
        (&["--material-only"], "starting weights"),
        (&["-o", "momentum"], "-o/--optimizer"),
    ] {
        let err = refused(extra, d);
        assert!(err.contains(named), "{extra:?}: {err}");
    }
    // --batch-size differs: the straight run's checkpoint, resumed with another.
    let mut args = common("b.params", "b.csv", "12");
    args[3] = "3000".into();
    args.extend([
        "--resume".into(),
        dir.path()
            .join("straight.params.checkpoint")
            .to_str()
            .unwrap()
            .into(),
    ]);
    let out = tuner(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        dir.path(),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--batch-size: 4000 in the checkpoint, 3000 now"),
        "{err}"
    );
}

/// Re-resolving every few epochs (`-R`) resumes exactly too: the resumed
/// run re-traces its data with the weights of the last re-trace.
/// A --stream run stopped after some epochs and resumed ends as the
/// uninterrupted one: same weights, same losses.
#[test]
fn resume_with_stream_equals_an_uninterrupted_run() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("set.traces");
    let d = data();
    ok(
        "tuner",
        &tuner(
            &[
                "-n",
                "0",
                "--save-traces",
                cache.to_str().unwrap(),
                d.to_str().unwrap(),
            ],
            dir.path(),
        ),
    );
    let run = |x: &str, epochs: &str, resume: bool| {
        let out = dir.path().join(format!("{x}.params"));
        let log = dir.path().join(format!("{x}.csv"));
        let checkpoint = format!("{}.checkpoint", out.display());
        let mut args = vec![
            "-n",
            epochs,
            "--stream",
            "--traces",
            cache.to_str().unwrap(),
            "--batch-size",
            "3000",
            "--no-emit-rust",
            "-x",
            out.to_str().unwrap(),
            "--log",
            log.to_str().unwrap(),
        ];
        if resume {
            args.extend(["--resume", &checkpoint]);
        }
        let output = tuner(&args, dir.path());
        ok("tuner", &output);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            stderr.contains("resuming after epoch 3"),
            resume,
            "{stderr}"
        );
        (values(&out), losses(&log))
    };
    let straight = run("straight", "6", false);
    run("resumed", "3", false);
    let resumed = run("resumed", "6", true);
    assert_eq!(straight.1.len(), 8, "header + epochs 0..=6");
    assert_eq!(resumed, straight);
}

#[test]
fn resume_with_recompute_pv_equals_an_uninterrupted_run() {
    // Positions sampled from many games, and positions of games one after
    // another (re-traced into runs of differences).
    resume_with_recompute_pv(&head(&data(), 3000));
    resume_with_recompute_pv(&game_ordered(100, 30));
}

fn resume_with_recompute_pv(text: &str) {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.epd");
    std::fs::write(&small, text).unwrap();
    let run = |name: &str, epochs: &str, resume: bool| {
        let x = dir.path().join(format!("{name}.params"));
        let mut args = vec![
            "-n".to_string(),
            epochs.into(),
            "-R".into(),
            "2".into(),
            "--no-emit-rust".into(),
            "-x".into(),
            x.to_str().unwrap().into(),
            "--log".into(),
            dir.path()
                .join(format!("{name}.csv"))
                .to_str()
                .unwrap()
                .into(),
            small.to_str().unwrap().into(),
        ];
        if resume {
            args.extend(["--resume".into(), format!("{}.checkpoint", x.display())]);
        }
        ok(
            "tuner",
            &tuner(
                &args.iter().map(String::as_str).collect::<Vec<_>>(),
                dir.path(),
            ),
        );
    };
    run("straight", "7", false);
    run("resumed", "5", false);
    run("resumed", "7", true);
    assert_eq!(
        values(&dir.path().join("straight.params")),
        values(&dir.path().join("resumed.params"))
    );
    assert_eq!(
        losses(&dir.path().join("straight.csv")),
        losses(&dir.path().join("resumed.csv"))
    );
}

/// Option values that are not finite numbers, or out of their range, are
/// refused when the command line is read.
#[test]
fn non_finite_and_out_of_range_options_are_refused_at_parse_time() {
    let dir = tempfile::tempdir().unwrap();
    for (option, value) in [
        ("--k", "nan"),
        ("--k", "inf"),
        ("--k", "0"),
        ("--learning-rate", "nan"),
        ("--learning-rate", "-1"),
        ("--lr-decay", "NaN"),
        ("--l2", "-inf"),
        ("--l2", "-1e-8"),
        ("--lambda", "nan"),
        ("--lambda", "1.5"),
        ("--validation", "1"),
        ("--validation", "nan"),
        ("--blocks", "no_such_block"),
        ("--freeze-blocks", "no_such_block"),
    ] {
        // The input does not exist: parsing fails before anything is read.
        let out = tuner(&[&format!("{option}={value}"), "missing.epd"], dir.path());
        assert_eq!(out.status.code(), Some(2), "{option} {value}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("invalid value '{value}' for '{option}")),
            "{err}"
        );
    }
}

#[test]
fn tuning_lowers_validation_loss_and_measure_only_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let x = dir.path().join("t.params");
    let summary = dir.path().join("t.json");
    let out = ok(
        "tuner",
        &tuner(
            &[
                "-n",
                "40",
                "--no-emit-rust",
                "-x",
                x.to_str().unwrap(),
                "--summary",
                summary.to_str().unwrap(),
                data().to_str().unwrap(),
            ],
            dir.path(),
        ),
    );
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("validation loss"))
        .unwrap();
    let nums: Vec<f64> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(nums[1] < nums[0], "{line}");
    // The JSON summary carries the printed figures.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let figure = |name: &str| json["figures"][name].as_f64().unwrap();
    assert_eq!(
        format!("{:.7}", figure("validation_loss_start")),
        format!("{:.7}", nums[0])
    );
    assert_eq!(
        format!("{:.7}", figure("validation_loss_end")),
        format!("{:.7}", nums[1])
    );
    assert!(figure("training_loss_end") < figure("training_loss_start"));
    assert_eq!(json["counts"]["training_positions"], 18000);
    assert_eq!(json["counts"]["validation_positions"], 2000);
    let best = json["counts"]["best_epoch"].as_u64().unwrap();
    assert!(best > 0 && best <= json["counts"]["epochs"].as_u64().unwrap());
    assert!(
        out.contains(&format!("best epoch       {best} of")),
        "{out}"
    );
    assert!(dir.path().join("t.params.svg").exists());
    // -n 0 with -i and a validation file only measures.
    let v = dir.path().join("v.epd");
    let text: String = std::fs::read_to_string(data())
        .unwrap()
        .lines()
        .skip(19000)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&v, text).unwrap();
    let before = std::fs::read_to_string(&x).unwrap();
    let out = ok(
        "tuner",
        &tuner(
            &[
                "-n",
                "0",
                "-i",
                x.to_str().unwrap(),
                "--validation-file",
                v.to_str().unwrap(),
                data().to_str().unwrap(),
            ],
            dir.path(),
        ),
    );
    assert!(out.contains("validation loss"), "{out}");
    assert_eq!(std::fs::read_to_string(&x).unwrap(), before);
}

#[test]
fn bad_lines_are_reported_with_line_numbers_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.epd");
    let good: Vec<String> = std::fs::read_to_string(data())
        .unwrap()
        .lines()
        .take(300)
        .map(str::to_string)
        .collect();
    let mut lines = good.clone();
    lines.insert(10, "garbage line".into());
    lines.insert(20, "8/8/8/8/8/8/8/8 w - - c9 \"1-0\";".into());
    lines.insert(
        30,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -".into(),
    );
    // The tuner trains on the labels: a malformed one rejects its line,
    // located, with the reason (the labeler ignores the same lines).
    let board = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -";
    lines.insert(40, format!("{board} c9 \"2\";"));
    lines.insert(50, format!("{board} c9 \"1-0\"; ce NaN;"));
    std::fs::write(&f, lines.join("\n")).unwrap();
    let out = tuner(&["-n", "0", f.to_str().unwrap()], dir.path());
    ok("tuner", &out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.epd:11:"), "{err}");
    assert!(err.contains("bad.epd:21:"), "{err}");
    assert!(
        err.contains("bad.epd:41: unrecognised result \"\\\"2\\\"\""),
        "{err}"
    );
    assert!(
        err.contains("bad.epd:51: score is not an integer: \"NaN\""),
        "{err}"
    );
    assert!(err.contains("4 malformed lines skipped"), "{err}");
    assert!(err.contains("1 without a result rejected"), "{err}");
}

/// Run from the workspace root, the tuner leaves the engine's source alone:
/// the generated Rust goes beside the params output unless `-f` says where.
#[test]
fn the_default_run_does_not_touch_the_engine_source() {
    let dir = tempfile::tempdir().unwrap();
    let eval_dir = dir.path().join("engine/src/eval");
    std::fs::create_dir_all(&eval_dir).unwrap();
    let source = eval_dir.join("params.rs");
    std::fs::write(&source, "// the engine's own file\n").unwrap();
    ok(
        "tuner",
        &tuner(&["-n", "1", data().to_str().unwrap()], dir.path()),
    );
    assert_eq!(
        std::fs::read_to_string(&source).unwrap(),
        "// the engine's own file\n"
    );
    let beside = std::fs::read_to_string(dir.path().join("tuned.params.rs")).unwrap();
    assert!(beside.starts_with(engine::eval::codegen::GENERATED_MARKER));
}

/// The tuner's generated file, compiled into a copy of the engine, gives the
/// engine exactly the tuned values.
#[test]
fn emitted_params_rs_compiles_into_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let x = dir.path().join("t.params");
    let copy = dir.path().join("ws");
    std::fs::create_dir_all(&copy).unwrap();
    copy_dir(&workspace().join("engine"), &copy.join("engine"));
    let rs = copy.join("engine/src/eval/params.rs");
    ok(
        "tuner",
        &tuner(
            &[
                "-n",
                "5",
                "-x",
                x.to_str().unwrap(),
                "-f",
                rs.to_str().unwrap(),
                data().to_str().unwrap(),
            ],
            dir.path(),
        ),
    );
    let generated = std::fs::read_to_string(&rs).unwrap();
    assert!(generated.contains("command: "), "provenance header");
    assert!(generated.contains("masters-quiet-20k.epd (20000 positions"));
    let root = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    let root = root.replace(
        r#"members = ["engine", "tuner", "pgnselect", "labeler", "makebook"]"#,
        r#"members = ["engine"]"#,
    );
    std::fs::write(copy.join("Cargo.toml"), root).unwrap();
    std::fs::copy(workspace().join("Cargo.lock"), copy.join("Cargo.lock")).unwrap();
    // A persistent target directory, shared with the other scratch builds
    // (tests/new_term.rs), keeps the dependencies compiled.
    let target = workspace().join("target/scratch-builds");
    let out = Command::new(env!("CARGO"))
        .args([
            "run",
            "--profile",
            "scratch",
            "--quiet",
            "--bin",
            "engine",
            "--",
            "params",
        ])
        .current_dir(&copy)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    let printed = ok("tuner", &out);
    let printed_values: Vec<&str> = printed.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(printed_values, values(&x));
}

/// bullet's text and binary formats (the self-play outputs) read as the
/// same training data as EPD: the losses of one set written three ways
/// agree exactly. The binary record keeps the position from the side to
/// move's view only, which changes no evaluation (it is colour-symmetric),
/// and no en-passant square. The positions are traced as they are
/// (`--resolve none`): the quiescence search breaks ties between lines of
/// equal score by move order, which the mirrored board changes, so a
/// resolved leaf may be another position of the same score whose
/// untruncated evaluation, and so loss, differs (1 of these 3,000
/// positions since the evaluation of c6074a6).
#[test]
fn bullet_text_and_binary_inputs_give_the_epd_losses() {
    use engine::formats::bullet;
    use engine::formats::labeled::{LabeledPosition, parse_line};
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(data()).unwrap();
    let records: Vec<LabeledPosition> = text
        .lines()
        .map(|line| parse_line(line).unwrap().unwrap())
        .take(3000)
        .enumerate()
        .map(|(i, r)| LabeledPosition {
            score: Some((i as i32 * 37) % 401 - 200),
            ..r
        })
        .collect();
    let (mut epd, mut bullet_text, mut binary) = (Vec::new(), Vec::new(), Vec::new());
    for record in &records {
        record.append_epd(&mut epd);
        epd.push(b'\n');
        bullet::append_text(record, &mut bullet_text).unwrap();
        bullet_text.push(b'\n');
        binary.extend_from_slice(&bullet::encode(record).unwrap());
    }
    let files = [
        ("set.epd", epd),
        ("set.txt", bullet_text),
        // Recognised by content: no .bullet extension.
        ("set.data", binary),
    ];
    let mut outputs = Vec::new();
    for (name, bytes) in &files {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = tuner(
            &[
                "-n",
                "0",
                "--lambda",
                "0.5",
                "--resolve",
                "none",
                "--no-emit-rust",
                path.to_str().unwrap(),
            ],
            dir.path(),
        );
        let stdout = ok("tuner", &out);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(stderr.contains("3000 positions"), "{name}: {stderr}");
        outputs.push(stdout);
    }
    assert!(outputs[0].contains("validation loss"), "{}", outputs[0]);
    assert_eq!(outputs[1], outputs[0], "bullet text");
    // The binary record's colour flip changes only rounding (σ(−z) and
    // 1 − σ(z) differ in the last bits): equal to the printed precision.
    let numbers = |s: &str| -> Vec<f64> {
        s.lines()
            .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
            .collect()
    };
    let (epd, flipped) = (numbers(&outputs[0]), numbers(&outputs[2]));
    assert_eq!(epd.len(), flipped.len(), "bullet binary: {}", outputs[2]);
    for (a, b) in epd.iter().zip(&flipped) {
        assert!((a - b).abs() <= 1.5e-9, "bullet binary: {a} against {b}");
    }
    // A binary file cut inside a record is an error naming it.
    let cut = dir.path().join("cut.bullet");
    std::fs::write(&cut, &files[2].1[..32 * 10 + 7]).unwrap();
    let out = tuner(&["-n", "0", cut.to_str().unwrap()], dir.path());
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cut.bullet") && stderr.contains("truncated"),
        "{stderr}"
    );
}

/// The same positions read as plain EPD (saving a trace cache), gzip and
/// zstd EPD, and from the trace cache train identically; a cache cannot be
/// combined with input files, and a damaged one is refused by name.
#[test]
fn trace_cache_and_compressed_inputs_train_identically() {
    let dir = tempfile::tempdir().unwrap();
    let text = head(&data(), 4000);
    let plain = dir.path().join("set.epd");
    std::fs::write(&plain, &text).unwrap();
    let gz = dir.path().join("set.epd.gz");
    std::fs::write(&gz, gzip(&text)).unwrap();
    let zst = dir.path().join("set.epd.zst");
    std::fs::write(&zst, zstd::encode_all(text.as_bytes(), 3).unwrap()).unwrap();
    let cache = dir.path().join("set.traces");
    let run = |name: &str, source: &[&str]| {
        let out = dir.path().join(format!("{name}.params"));
        let log = dir.path().join(format!("{name}.csv"));
        let mut args = vec![
            "-n",
            "4",
            "--batch-size",
            "1000",
            "--no-emit-rust",
            "-x",
            out.to_str().unwrap(),
            "--log",
            log.to_str().unwrap(),
        ];
        args.extend_from_slice(source);
        let output = tuner(&args, dir.path());
        ok("tuner", &output);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("training 3600 positions"), "{stderr}");
        (values(&out), losses(&log))
    };
    let epd = run(
        "plain",
        &[
            "--save-traces",
            cache.to_str().unwrap(),
            plain.to_str().unwrap(),
        ],
    );
    assert_eq!(epd.1.len(), 6, "header + epochs 0..=4");
    assert_eq!(run("gz", &[gz.to_str().unwrap()]), epd, "gzip");
    assert_eq!(run("zst", &[zst.to_str().unwrap()]), epd, "zstd");
    assert_eq!(
        run("cache", &["--traces", cache.to_str().unwrap()]),
        epd,
        "trace cache"
    );
    // With -n 0 only the cache is made, streamed as the positions are
    // traced: the same file, and no spool file left beside it.
    let streamed = dir.path().join("streamed.traces");
    let out = tuner(
        &[
            "-n",
            "0",
            "--save-traces",
            streamed.to_str().unwrap(),
            plain.to_str().unwrap(),
        ],
        dir.path(),
    );
    ok("tuner", &out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("saved 4000 traced positions"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&streamed).unwrap(),
        std::fs::read(&cache).unwrap()
    );
    let spools: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("spool"))
        .collect();
    assert!(spools.is_empty(), "{spools:?}");
    let both = tuner(
        &["--traces", cache.to_str().unwrap(), plain.to_str().unwrap()],
        dir.path(),
    );
    assert!(!both.status.success());
    // A damaged cache: the error names the file and the checksum.
    let mut bytes = std::fs::read(&cache).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0x10;
    std::fs::write(&cache, &bytes).unwrap();
    let out = tuner(
        &["-n", "1", "--traces", cache.to_str().unwrap()],
        dir.path(),
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("set.traces") && stderr.contains("checksum"),
        "{stderr}"
    );
}

/// A truncated `.gz` or `.zst` (the end of the file lost) is an error
/// naming the file, never training on the part that could be read; a file
/// starting with a UTF-8 byte-order mark reads whole.
#[test]
fn truncated_compressed_inputs_are_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let text = head(&data(), 3000);
    let gz = gzip(&text);
    let zst = zstd::encode_all(text.as_bytes(), 3).unwrap();
    for (name, bytes) in [("cut.epd.gz", &gz), ("cut.epd.zst", &zst)] {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes[..bytes.len() * 9 / 10]).unwrap();
        let out = tuner(&["-n", "0", path.to_str().unwrap()], dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        // Found while sniffing the format (a short zstd file) or while
        // reading the lines.
        assert!(stderr.contains(name), "{name}: {stderr}");
        assert!(!stderr.contains("malformed"), "{name}: {stderr}");
    }
    let bom = dir.path().join("bom.epd");
    std::fs::write(&bom, format!("\u{feff}{text}")).unwrap();
    let out = tuner(&["-n", "0", bom.to_str().unwrap()], dir.path());
    ok("tuner", &out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("loaded 3000 positions"), "{stderr}");
    assert!(stderr.contains(" 0 malformed lines skipped"), "{stderr}");
}

/// Positions with a search score and no result (`labeler --score-only`) are
/// kept at `--lambda 0` with `mse`/`log`, where the target is the score
/// alone: the losses equal those of the same positions with any results.
/// Otherwise (another lambda, `-O ordinal`, `--save-traces`) they are
/// rejected as positions without a result.
#[test]
fn scores_without_results_train_at_lambda_zero_only() {
    let dir = tempfile::tempdir().unwrap();
    let with_results: String = std::fs::read_to_string(data())
        .unwrap()
        .lines()
        .take(3000)
        .enumerate()
        .map(|(i, l)| format!("{l} ce {};\n", (i as i32 * 37) % 401 - 200))
        .collect();
    let scores_only: String = with_results
        .lines()
        .map(|l| {
            let (board, rest) = l.split_once(" c9 ").unwrap();
            let (_, ce) = rest.split_once("; ").unwrap();
            format!("{board} {ce}\n")
        })
        .collect();
    assert!(!scores_only.contains("c9"), "{scores_only}");
    let (labeled, scored) = (
        dir.path().join("labeled.epd"),
        dir.path().join("scored.epd"),
    );
    std::fs::write(&labeled, &with_results).unwrap();
    std::fs::write(&scored, &scores_only).unwrap();
    let measure = |path: &Path, lambda: &str, extra: &[&str]| {
        let mut args = vec![
            "-n",
            "0",
            "--lambda",
            lambda,
            "--k",
            "2.9",
            "--validation",
            "0",
        ];
        args.extend(extra);
        args.push(path.to_str().unwrap());
        tuner(&args, dir.path())
    };
    for objective in ["mse", "log"] {
        let out = measure(&scored, "0", &["-O", objective]);
        let stdout = ok("tuner", &out);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("loaded 3000 positions")
                && stderr.contains("0 without a result rejected")
                && stderr.contains("3000 of them without a result, kept for --lambda 0"),
            "{stderr}"
        );
        assert!(stdout.contains("training loss"), "{stdout}");
        let expected = ok("tuner", &measure(&labeled, "0", &["-O", objective]));
        assert_eq!(stdout, expected, "-O {objective}");
    }
    // Without --k the scale cannot be fitted: the target moves with it.
    let out = tuner(
        &["-n", "0", "--lambda", "0", scored.to_str().unwrap()],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("--lambda 0 needs --k"), "{stderr}");
    for (lambda, refused) in [
        ("0.5", &[][..]),
        ("0", &["-O", "ordinal"]),
        ("0", &["--save-traces", "t.traces"]),
    ] {
        let out = measure(&scored, lambda, refused);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{refused:?}: {stderr}");
        assert!(
            stderr.contains("3000 without a result rejected"),
            "{refused:?}: {stderr}"
        );
    }
}

/// `--round greedy` writes weights whose training loss is at most that of
/// nearest rounding (the same run otherwise), and says so in the report and
/// the JSON summary; the two runs' params files differ.
#[test]
fn greedy_rounding_is_never_worse_on_the_training_set() {
    let dir = tempfile::tempdir().unwrap();
    let mut losses = Vec::new();
    let mut params = Vec::new();
    for round in ["nearest", "greedy"] {
        let out_params = format!("{round}.params");
        let summary = format!("{round}.json");
        let out = tuner(
            &[
                "-n",
                "3",
                "--round",
                round,
                "--no-emit-rust",
                "-x",
                &out_params,
                "--summary",
                &summary,
                data().to_str().unwrap(),
            ],
            dir.path(),
        );
        let stdout = ok("tuner", &out);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let greedy = round == "greedy";
        assert_eq!(stderr.contains("greedy rounding:"), greedy, "{stderr}");
        assert_eq!(
            stdout.contains("(rounded weights, greedy)"),
            greedy,
            "{stdout}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(&summary)).unwrap())
                .unwrap();
        assert_eq!(json["figures"]["rounding"], round, "{json}");
        losses.push(json["figures"]["training_loss_end"].as_f64().unwrap());
        let text = std::fs::read_to_string(dir.path().join(&out_params)).unwrap();
        params.push(
            text.lines()
                .filter(|l| !l.starts_with('#'))
                .map(str::to_string)
                .collect::<Vec<_>>(),
        );
    }
    assert!(losses[1] <= losses[0], "{losses:?}");
    assert_ne!(params[0], params[1], "greedy rounding changed no weight");
}
