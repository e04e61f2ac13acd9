//! The labeler's outputs never destroy anything: an output, its sidecar or
//! the rejects file named like an input is refused before anything is read
//! (also with --overwrite), `merge` refuses to write over a shard, and the
//! rejects file is written atomically (complete, or not at all).

#[path = "../../engine/tests/support/cli.rs"]
mod cli;

use cli::{assert_clean_failure, stderr, write};
use std::path::Path;
use std::process::Command;

const POSITIONS: &str = "\
8/8/8/8/8/2k5/8/K1q5 w - - 0 1 c9 \"0-1\";
this line is not a position
4k3/8/8/8/8/8/4P3/4K3 w - - 0 1 c9 \"1-0\";
";

fn labeler() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_labeler"));
    cmd.args(["--nodes", "200", "--threads", "1", "--no-progress"]);
    cmd
}

#[test]
fn an_output_named_like_an_input_is_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "f.epd", POSITIONS);
    let link = dir.path().join("link.epd");
    std::os::unix::fs::symlink("f.epd", &link).unwrap();
    let out_path = dir.path().join("out.epd");
    let cases: Vec<Vec<&Path>> = vec![
        vec![Path::new("--overwrite"), Path::new("-o"), &input, &input],
        vec![Path::new("-o"), &link, &input],
        vec![
            Path::new("-o"),
            &out_path,
            Path::new("--rejects"),
            &input,
            &input,
        ],
    ];
    for args in cases {
        let out = labeler().args(&args).output().unwrap();
        assert_clean_failure(&out, "the output is the input");
        assert_eq!(std::fs::read_to_string(&input).unwrap(), POSITIONS);
    }
    // The sidecar of an output is an output too.
    let sidecar = write(dir.path(), "out.epd.progress", POSITIONS);
    let out = labeler()
        .arg("-o")
        .arg(&out_path)
        .arg(&sidecar)
        .output()
        .unwrap();
    assert_clean_failure(&out, "the output is the input");
    assert_eq!(std::fs::read_to_string(&sidecar).unwrap(), POSITIONS);
    // The rejects file and the output must differ.
    let out = labeler()
        .arg("-o")
        .arg(&out_path)
        .arg("--rejects")
        .arg(dir.path().join("./out.epd"))
        .arg(&input)
        .output()
        .unwrap();
    assert_clean_failure(&out, "same file");
}

#[test]
fn rejects_are_written_atomically_and_merge_never_overwrites_a_shard() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in.epd", POSITIONS);
    let output = dir.path().join("out.epd");
    let rejects = dir.path().join("rejects.txt");
    let out = labeler()
        .arg("-o")
        .arg(&output)
        .arg("--rejects")
        .arg(&rejects)
        .arg(&input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&rejects).unwrap();
    assert!(text.contains("in.epd:2"), "{text}");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
    // A rejects file on a full device: an error, and the device stays.
    let again = dir.path().join("again.epd");
    let out = labeler()
        .arg("-o")
        .arg(&again)
        .args(["--rejects", "/dev/full"])
        .arg(&input)
        .output()
        .unwrap();
    assert_clean_failure(&out, "/dev/full");
    assert!(!std::fs::metadata("/dev/full").unwrap().is_file());

    // Shards, then a merge told to write over one of them.
    let shard = dir.path().join("shard0.epd");
    let out = labeler()
        .arg("-o")
        .arg(&shard)
        .args(["--shard", "0/1"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let before = std::fs::read_to_string(&shard).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_labeler"))
        .arg("merge")
        .arg(&shard)
        .arg("-o")
        .arg(&shard)
        .output()
        .unwrap();
    assert_clean_failure(&out, "the output is the input");
    assert_eq!(std::fs::read_to_string(&shard).unwrap(), before);
}

#[test]
fn selfplay_outputs_named_like_its_inputs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let openings = write(dir.path(), "openings.epd", POSITIONS);
    let summary = dir.path().join("summary.json");
    let out_path = dir.path().join("out.epd");
    let cases: Vec<Vec<&Path>> = vec![
        // The output, with --overwrite (which empties an output at once).
        vec![Path::new("--overwrite"), Path::new("-o"), &openings],
        // The summary.
        vec![
            Path::new("-o"),
            &out_path,
            Path::new("--summary"),
            &openings,
        ],
    ];
    for args in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_labeler"))
            .args([
                "selfplay",
                "--games",
                "1",
                "--nodes",
                "200",
                "--no-progress",
            ])
            .arg("--openings")
            .arg(&openings)
            .args(&args)
            .output()
            .unwrap();
        assert_clean_failure(&out, "the output is the input");
        assert_eq!(std::fs::read_to_string(&openings).unwrap(), POSITIONS);
        assert!(!summary.exists());
    }
}
