//! The README's workflow for a new evaluation term, performed on a scratch
//! copy of the workspace: the README's schema line and term code are
//! inserted (no generated file is edited), the copy builds, its compiled
//! default for the new block is the declared one, the tuner's gradient
//! check passes, tuning only the term's group moves the new weight (so its
//! trace has the term's coefficients) and nothing outside the group, and
//! `tuner codegen` writes the block into `params.rs`. Also: the README's
//! table of groups is the declaration's `Group` list.
//!
//! The copy builds with the workspace's `scratch` profile (fast to compile)
//! in a persistent target directory shared with the other scratch builds
//! (`target/scratch-builds`), so after the first run only the engine and the
//! tuner are recompiled.

#[path = "../../engine/tests/support/cli.rs"]
mod cli;

use std::path::Path;
use std::process::Command;

use cli::{copy_dir, ok, workspace};
use engine::eval::{Group, schema};

/// The code blocks of the README's section on adding a term, in order, with
/// the list indentation removed.
fn readme_snippets(lang: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let start = readme
        .find("### Adding an evaluation term")
        .expect("the README has the section on adding an evaluation term");
    let section = &readme[start..];
    let section = &section[..section[4..].find("\n#").map_or(section.len(), |e| e + 4)];
    let mut out = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in section.lines() {
        let trimmed = line.trim_start();
        match &mut current {
            None if trimmed == format!("```{lang}") => current = Some(Vec::new()),
            Some(lines) if trimmed == "```" => {
                let indent = line.len() - trimmed.len();
                let text: Vec<&str> = lines
                    .iter()
                    .map(|l| l.get(indent..).unwrap_or("").trim_end())
                    .collect();
                out.push(text.join("\n") + "\n");
                current = None;
            }
            Some(lines) => lines.push(line),
            None => {}
        }
    }
    out
}

/// Inserts `text` before the first occurrence of `anchor` after `after`.
fn insert_before(source: &str, after: &str, anchor: &str, text: &str) -> String {
    let from = source
        .find(after)
        .unwrap_or_else(|| panic!("{after:?} not found"));
    let at = from
        + source[from..]
            .find(anchor)
            .unwrap_or_else(|| panic!("{anchor:?} not found after {after:?}"));
    format!("{}{text}{}", &source[..at], &source[at..])
}

/// `name value` pairs of a params file.
fn params(path: &Path) -> Vec<(String, i32)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (name, value) = l.split_once(' ').unwrap();
            (name.to_string(), value.trim().parse().unwrap())
        })
        .collect()
}

#[test]
fn a_new_term_compiles_traces_and_tunes_from_one_declaration_line() {
    let rust = readme_snippets("rust");
    assert_eq!(
        rust.len(),
        2,
        "the README shows the schema line and the term"
    );
    let (declaration, term) = (&rust[0], &rust[1]);
    // The new block's name, group and declared default, from its line.
    let line = declaration
        .lines()
        .find(|l| !l.trim_start().starts_with("///"))
        .unwrap();
    let name = line.split(':').next().unwrap().trim().to_string();
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    let group = Group::ALL
        .iter()
        .find(|g| format!("{g:?}") == fields[1])
        .unwrap_or_else(|| panic!("{line}: group {}", fields[1]))
        .name();
    assert!(schema::block_by_name(&name).is_none(), "{name} is new");
    let sh = readme_snippets("sh").concat();
    assert!(
        sh.contains(&format!("--tune {group} ")),
        "the README tunes {group}"
    );

    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    for member in ["engine", "tuner"] {
        std::fs::create_dir_all(ws.join(member)).unwrap();
        std::fs::copy(
            workspace().join(member).join("Cargo.toml"),
            ws.join(member).join("Cargo.toml"),
        )
        .unwrap();
        copy_dir(
            &workspace().join(member).join("src"),
            &ws.join(member).join("src"),
        );
    }
    let manifest = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    let manifest: String = manifest
        .lines()
        .map(|l| {
            if l.starts_with("members = ") {
                r#"members = ["engine", "tuner"]"#
            } else {
                l
            }
        })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(ws.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(workspace().join("Cargo.lock"), ws.join("Cargo.lock")).unwrap();

    // Step 1: one line at the end of the declaration.
    let schema_rs = ws.join("engine/src/eval/schema.rs");
    let text = std::fs::read_to_string(&schema_rs).unwrap();
    std::fs::write(
        &schema_rs,
        insert_before(
            &text,
            "\ndeclare_params! {",
            "\n}\n",
            &format!("\n{}", declaration.trim_end()),
        ),
    )
    .unwrap();
    // Step 2: the term's code, before the taper.
    let terms_rs = ws.join("engine/src/eval/terms.rs");
    let text = std::fs::read_to_string(&terms_rs).unwrap();
    std::fs::write(
        &terms_rs,
        insert_before(
            &text,
            "pub fn evaluate_terms",
            "    taper_info(board)\n}",
            term,
        ),
    )
    .unwrap();
    let params_rs = std::fs::read_to_string(ws.join("engine/src/eval/params.rs")).unwrap();

    // Step 3: build (only the engine and the tuner are recompiled).
    let target = workspace().join("target/scratch-builds");
    ok(
        "cargo build",
        &Command::new(env!("CARGO"))
            .args(["build", "--profile", "scratch", "--quiet", "--bin", "tuner"])
            .current_dir(&ws)
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .unwrap(),
    );
    let tuner = |args: &[&str]| {
        let out = Command::new(target.join("scratch/tuner"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        ok(&format!("tuner {}", args.join(" ")), &out)
    };

    // The block evaluates with its declared default before params.rs has it.
    let declared: Vec<i32> = line
        .split("s(")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .unwrap()
        .split(',')
        .map(|v| v.trim().parse().unwrap())
        .collect();
    let defaults = dir.path().join("defaults.params");
    tuner(&["-d", "-x", defaults.to_str().unwrap()]);
    let defaults = params(&defaults);
    let new_values = |set: &[(String, i32)]| -> Vec<i32> {
        set.iter()
            .filter(|(n, _)| n.starts_with(&format!("{name}.")))
            .map(|(_, v)| *v)
            .collect()
    };
    assert_eq!(
        new_values(&defaults),
        declared,
        "declared default compiled in"
    );

    // Its gradient is exact and tuning its group moves it.
    let data = dir.path().join("data.epd");
    let lines: String =
        std::fs::read_to_string(workspace().join("data/labeled/masters-quiet-20k.epd"))
            .unwrap()
            .lines()
            .take(4000)
            .map(|l| format!("{l}\n"))
            .collect();
    std::fs::write(&data, lines).unwrap();
    let data = data.to_str().unwrap();
    let out = tuner(&["-V", "--tune", group, data]);
    assert!(out.contains("gradient check passed"), "{out}");
    let tuned = dir.path().join("tuned.params");
    // Validated on the training positions themselves: what is checked is
    // that training moves the new weights. On a held-out tenth of 4,000
    // positions the group overfits from the first epoch, and the best
    // weights written would be the starting ones.
    tuner(&[
        "--tune",
        group,
        "-n",
        "3",
        "--seed",
        "1",
        "--validation-file",
        data,
        "-x",
        tuned.to_str().unwrap(),
        data,
    ]);
    let tuned_set = params(&tuned);
    assert_eq!(tuned_set.len(), defaults.len());
    assert_ne!(
        new_values(&tuned_set),
        declared,
        "the tuner sees the new term"
    );
    for ((n, before), (m, after)) in defaults.iter().zip(&tuned_set) {
        assert_eq!(n, m);
        let block = n.split(['[', '.']).next().unwrap();
        let in_group =
            block == name || schema::block_by_name(block).is_some_and(|b| b.group.name() == group);
        assert!(
            in_group || before == after,
            "{n} moved from {before} to {after}"
        );
    }

    // Installing writes the block into params.rs.
    assert!(!params_rs.contains(&name));
    let installed = ws.join("engine/src/eval/params.rs");
    tuner(&[
        "codegen",
        "--params",
        tuned.to_str().unwrap(),
        "-o",
        installed.to_str().unwrap(),
    ]);
    let generated = std::fs::read_to_string(&installed).unwrap();
    let values = new_values(&tuned_set);
    let block = generated
        .split(&format!("pub const {name}: "))
        .nth(1)
        .unwrap_or_else(|| panic!("{name} not generated:\n{generated}"));
    let first = block.lines().nth(1).unwrap();
    assert_eq!(
        first.trim(),
        format!("s({:4}, {:4}),", values[0], values[1])
    );
}

/// The README's table of groups lists the declaration's groups, in order,
/// with their descriptions.
#[test]
fn readme_lists_the_declared_groups() {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let start = readme
        .find("| group | what it holds |")
        .expect("the group table");
    let rows: Vec<&str> = readme[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let expected: Vec<String> = Group::ALL
        .iter()
        .map(|g| format!("| `{}` | {} |", g.name(), g.doc().trim()))
        .collect();
    assert_eq!(
        rows, expected,
        "README.md: the group table differs from `Group`"
    );
}
