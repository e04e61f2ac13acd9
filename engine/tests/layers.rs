//! The engine crate's layers depend one way, and the core has no module
//! cycles. Reads the sources: each `crate::…` path and each `super::…` path
//! is an edge from the file that writes it to the module it names.
//!
//! * core (`chess`, `eval`, `search`): no path into `formats`, `play`, the
//!   front end, or any I/O crate or module (`std::fs`, `std::io`,
//!   `std::process`, `std::net`, `flate2`, `zstd`, `tempfile`, `indicatif`,
//!   `ctrlc`, `pgn_reader`, `rayon`, `clap`, `csv`, `serde`, `anyhow`);
//! * `formats`: no path into `runtime`, `play` or the front end;
//! * `runtime`: no path into `play` or the front end;
//! * `play`: no path into the front end;
//! * the module graph of the core (one node per file) is acyclic.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const CORE: [&str; 3] = ["chess", "eval", "search"];
const IO_PATHS: [&str; 15] = [
    "std::fs",
    "std::io",
    "std::process",
    "std::net",
    "flate2",
    "zstd",
    "tempfile",
    "indicatif",
    "ctrlc",
    "pgn_reader",
    "rayon",
    "clap",
    "csv",
    "serde",
    "anyhow",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, as its module path from the crate root
/// (`search/tt.rs` → `["search", "tt"]`, `search/mod.rs` → `["search"]`).
fn modules(dir: &Path, prefix: &[String], out: &mut Vec<(Vec<String>, String)>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            let mut p = prefix.to_vec();
            p.push(name);
            modules(&path, &p, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let mut p = prefix.to_vec();
            if name != "mod" && !(prefix.is_empty() && name == "lib") {
                p.push(name);
            }
            out.push((p, fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The code of a file without comments (doc links are not dependencies).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths a file refers to through `crate::` and `super::`,
/// including grouped imports such as `use super::{score::X, tt::Y}`.
fn references(module: &[String], is_mod_rs: bool, text: &str) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    let code = code(text);
    let bytes = code.as_bytes();
    for (kind, pat) in [("crate", "crate::"), ("super", "super::")] {
        let mut from = 0;
        while let Some(i) = code[from..].find(pat) {
            let start = from + i;
            from = start + pat.len();
            if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
                continue;
            }
            // `super::super::` chains
            let mut base: Vec<String> = if kind == "crate" {
                Vec::new()
            } else {
                // The parent of a file module is its folder; of a mod.rs, the folder's parent.
                let mut b = module.to_vec();
                if !is_mod_rs || !b.is_empty() {
                    b.pop();
                }
                b
            };
            let mut rest = &code[from..];
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut target = base.clone();
            for seg in path.split("::").filter(|s| !s.is_empty()) {
                if seg.chars().next().is_some_and(|c| c.is_uppercase()) {
                    break;
                }
                target.push(seg.to_string());
            }
            out.insert(target);
        }
    }
    out
}

struct Crate {
    files: Vec<(Vec<String>, bool, String)>,
}

impl Crate {
    fn load() -> Self {
        let mut found = Vec::new();
        modules(&src(), &[], &mut found);
        let mut files = Vec::new();
        for (m, text) in found {
            // mod.rs files map to their folder; recompute whether this was one.
            let is_mod = {
                let mut p = src();
                for s in &m {
                    p.push(s);
                }
                p.join("mod.rs").exists() && !p.with_extension("rs").exists()
            };
            files.push((m, is_mod, text));
        }
        Crate { files }
    }

    /// The file module a path resolves to: its longest prefix that is a file.
    fn resolve(&self, path: &[String]) -> Option<Vec<String>> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|p| self.files.iter().any(|(m, _, _)| m == p))
    }
}

fn layer(module: &[String]) -> &str {
    match module.first().map(String::as_str) {
        Some(top) if CORE.contains(&top) => "core",
        Some("formats") => "formats",
        Some("runtime") => "runtime",
        Some("play") => "play",
        _ => "front end",
    }
}

#[test]
fn layers_depend_one_way() {
    let krate = Crate::load();
    let mut violations = Vec::new();
    for (module, is_mod, text) in &krate.files {
        let from = layer(module);
        if from == "front end" {
            continue;
        }
        for target in references(module, *is_mod, text) {
            let to = layer(&target);
            let allowed = match from {
                "core" => to == "core",
                "formats" => to == "core" || to == "formats",
                "runtime" => to == "core" || to == "formats" || to == "runtime",
                "play" => to != "front end",
                _ => true,
            };
            if !allowed && !target.is_empty() {
                violations.push(format!(
                    "{} ({from}) uses {} ({to})",
                    module.join("::"),
                    target.join("::")
                ));
            }
        }
        if from == "core" {
            let code = code(text);
            for io in IO_PATHS {
                let used = code.match_indices(io).any(|(i, _)| {
                    let before = code[..i].chars().next_back();
                    let after = code[i + io.len()..].chars().next();
                    !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                        && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                if used {
                    violations.push(format!("{} (core) uses {io}", module.join("::")));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "layer violations:\n{}",
        violations.join("\n")
    );
}

#[test]
fn core_has_no_module_cycles() {
    let krate = Crate::load();
    let core: Vec<_> = krate
        .files
        .iter()
        .filter(|(m, _, _)| layer(m) == "core")
        .collect();
    assert!(
        core.len() >= 10,
        "the core modules are found ({})",
        core.len()
    );
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, is_mod, text) in &core {
        let entry = edges.entry(module.clone()).or_default();
        for target in references(module, *is_mod, text) {
            if let Some(file) = krate.resolve(&target) {
                // A module's own children (declared with `mod`) and itself are not cycles.
                if file != *module && layer(&file) == "core" && !file.starts_with(module) {
                    entry.insert(file);
                }
            }
        }
    }
    // Depth-first search for a back edge.
    fn visit(
        node: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<String>> {
        match state.get(node) {
            Some(2) => return None,
            Some(1) => {
                let at = stack.iter().position(|n| n == node).unwrap();
                let mut cycle: Vec<String> = stack[at..].iter().map(|n| n.join("::")).collect();
                cycle.push(node.join("::"));
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(node.clone(), 1);
        stack.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, edges, state, stack) {
                return Some(c);
            }
        }
        stack.pop();
        state.insert(node.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        if let Some(cycle) = visit(node, &edges, &mut state, &mut Vec::new()) {
            panic!("module cycle in the core: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_scanner_sees_references_and_skips_comments() {
    let refs = references(
        &["search".into(), "tt".into()],
        false,
        "use super::score::MAX_PLY;\nuse crate::formats::book::X; // crate::play::no\n",
    );
    assert!(refs.contains(&vec!["search".to_string(), "score".to_string()]));
    assert!(refs.contains(&vec!["formats".to_string(), "book".to_string()]));
    assert!(!refs.iter().any(|r| r.first().is_some_and(|s| s == "play")));
}
