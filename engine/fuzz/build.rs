//! Lists the modules of the `pgnselect` and `makebook` binaries (every file
//! of their `src` but `main.rs`) so that the PGN targets compile the tools'
//! own code, whatever modules they have today.

use std::fmt::Write as _;
use std::path::Path;

fn modules_of(tool: &str) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(tool).join("src");
    println!("cargo:rerun-if-changed={}", src.display());
    // `name.rs` files, and folders with a `mod.rs`.
    let mut modules: Vec<(String, std::path::PathBuf)> = std::fs::read_dir(&src)
        .unwrap_or_else(|e| panic!("{}: {e}", src.display()))
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_stem()?.to_string_lossy().into_owned();
            if p.is_dir() && p.join("mod.rs").is_file() {
                Some((name, p.join("mod.rs")))
            } else if p.extension().is_some_and(|e| e == "rs") && name != "main" {
                Some((name, p))
            } else {
                None
            }
        })
        .collect();
    modules.sort();
    let mut out = String::new();
    for (name, path) in modules {
        let _ = writeln!(out, "#[path = {:?}]\nmod {name};", path.display().to_string());
    }
    out
}

fn main() {
    let out = std::env::var("OUT_DIR").unwrap();
    for tool in ["pgnselect", "makebook"] {
        std::fs::write(
            Path::new(&out).join(format!("{tool}_modules.rs")),
            modules_of(tool),
        )
        .unwrap();
    }
}
