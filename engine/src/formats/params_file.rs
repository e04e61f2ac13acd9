//! The human-readable params text file: one scalar per line, `name value`.
//!
//! Names are `block.mg`/`block.eg` for one-entry blocks and
//! `block[label].mg` otherwise, where the label is an index (`[3]`), a piece
//! type (`[knight]`) or a square (`[e4]`), as the block's [`Layout`] says.
//! Blank lines and lines starting with `#` are ignored. Files are read *by
//! name*: a name the engine does not know is skipped with a warning, and a
//! parameter the file does not mention keeps its compiled default (also
//! with a warning), so files survive parameters being added or removed. A
//! value outside its block's declared bounds is clamped to them, with a
//! warning naming the line: the evaluation's arithmetic is only checked for
//! weights within their bounds.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use thiserror::Error;

use crate::chess::excerpt::excerpt;

#[cfg(doc)]
use crate::eval::schema::Layout;
use crate::eval::schema::{BLOCKS, block_of_scalar, element_label, scalar_names};
use crate::eval::{DEFAULT_PARAMS, Params};

/// Errors reading a params file.
#[derive(Debug, Error)]
pub enum ParamsFileError {
    /// The file could not be read.
    #[error("cannot read params file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A line is not `name value`.
    #[error("{path}:{line}: expected `name value`, found {:?}", excerpt(.text))]
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The line.
        text: String,
    },
    /// The value is not an integer.
    #[error("{path}:{line}: value of {} is not an integer: {:?}", excerpt(.name), excerpt(.value))]
    BadValue {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The parameter.
        name: String,
        /// The text found.
        value: String,
    },
    /// The same parameter appears twice.
    #[error("{path}:{line}: {} is set twice", excerpt(.name))]
    Duplicate {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The parameter.
        name: String,
    },
}

/// A loaded params file and what did not match the declaration.
#[derive(Debug, Clone)]
pub struct LoadedParams {
    /// The weights (defaults where the file is silent).
    pub params: Params,
    /// Names in the file that the engine does not declare.
    pub unknown: Vec<String>,
    /// Declared names the file does not set.
    pub missing: Vec<String>,
    /// Values outside their declared bounds, clamped: `line N: name value
    /// outside [min, max], clamped to v`.
    pub clamped: Vec<String>,
    /// The comment lines at the top of the file, before the first block
    /// or parameter (the provenance the tuner writes there), without `# `.
    pub header: Vec<String>,
}

impl LoadedParams {
    /// Human-readable warnings for unknown and missing names (summarised
    /// when there are many).
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (what, names) in [
            ("unknown parameter (ignored)", &self.unknown),
            ("parameter not in file (default kept)", &self.missing),
            ("value outside its bounds", &self.clamped),
        ] {
            if names.is_empty() {
                continue;
            }
            let shown: Vec<String> = names.iter().take(5).map(|n| excerpt(n)).collect();
            let more = if names.len() > 5 {
                format!(" and {} more", names.len() - 5)
            } else {
                String::new()
            };
            out.push(format!("{what}: {}{more}", shown.join(", ")));
        }
        out
    }
}

/// Writes `params` in the text format, with a comment header and a comment
/// line before each block.
pub fn to_text(params: &Params, header: &[String]) -> String {
    let mut out = String::new();
    for line in header {
        let _ = writeln!(out, "# {line}");
    }
    for b in BLOCKS {
        let _ = writeln!(out, "# {} ({}): {}", b.name, b.group.name(), b.doc.trim());
        for i in 0..b.block.len {
            let e = params.entries[b.block.start + i];
            let label = element_label(b.layout, i);
            let _ = writeln!(out, "{}{label}.mg {}", b.name, e.mg);
            let _ = writeln!(out, "{}{label}.eg {}", b.name, e.eg);
        }
    }
    out
}

/// Every scalar name, in index order, and the index of each name: built
/// once (a thousand formatted names cost more than parsing a short file).
static NAMES: LazyLock<(Vec<String>, HashMap<String, usize>)> = LazyLock::new(|| {
    let names = scalar_names();
    let index = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i))
        .collect();
    (names, index)
});

/// Parses the text format; `path` only names the source in errors.
///
/// # Errors
/// Malformed lines, non-integer values and duplicates, with line numbers.
pub fn parse(text: &str, path: &Path) -> Result<LoadedParams, ParamsFileError> {
    let (names, index) = &*NAMES;
    let mut params = DEFAULT_PARAMS;
    let mut seen = vec![false; names.len()];
    let mut unknown = Vec::new();
    let mut clamped = Vec::new();
    let mut header = Vec::new();
    let mut in_header = true;
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let trimmed = raw.trim();
        if let Some(comment) = trimmed.strip_prefix('#') {
            let comment = comment.strip_prefix(' ').unwrap_or(comment);
            in_header &= !BLOCKS.iter().any(|b| {
                comment
                    .strip_prefix(b.name)
                    .is_some_and(|r| r.starts_with(" ("))
            });
            if in_header {
                header.push(comment.to_string());
            }
            continue;
        }
        if trimmed.is_empty() {
            continue;
        }
        in_header = false;
        let mut fields = trimmed.split_whitespace();
        let (Some(name), Some(value), None) = (fields.next(), fields.next(), fields.next()) else {
            return Err(ParamsFileError::Malformed {
                path: path.to_path_buf(),
                line,
                text: raw.to_string(),
            });
        };
        let Ok(value) = value.parse::<i32>() else {
            return Err(ParamsFileError::BadValue {
                path: path.to_path_buf(),
                line,
                name: name.to_string(),
                value: value.to_string(),
            });
        };
        match index.get(name) {
            Some(&i) => {
                if seen[i] {
                    return Err(ParamsFileError::Duplicate {
                        path: path.to_path_buf(),
                        line,
                        name: name.to_string(),
                    });
                }
                seen[i] = true;
                let b = block_of_scalar(i);
                let bounded = value.clamp(b.min, b.max);
                if bounded != value {
                    clamped.push(format!(
                        "line {line}: {name} {value} outside [{}, {}], clamped to {bounded}",
                        b.min, b.max
                    ));
                }
                params.set_scalar(i, bounded);
            }
            None => unknown.push(name.to_string()),
        }
    }
    let missing = names
        .iter()
        .zip(seen)
        .filter(|(_, s)| !s)
        .map(|(n, _)| n.clone())
        .collect();
    Ok(LoadedParams {
        params,
        unknown,
        missing,
        clamped,
        header,
    })
}

/// Reads a params file.
///
/// # Errors
/// See [`ParamsFileError`].
pub fn read_file(path: &Path) -> Result<LoadedParams, ParamsFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| ParamsFileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trip() {
        let mut p = Params::defaults();
        p.set_scalar(7, 1234);
        p.set_scalar(Params::NUM_SCALARS - 1, 55);
        let text = to_text(&p, &["test".into()]);
        let loaded = parse(&text, Path::new("x")).unwrap();
        assert_eq!(loaded.params, p);
        assert!(loaded.unknown.is_empty() && loaded.missing.is_empty());
        assert_eq!(loaded.header, vec!["test".to_string()]);
    }

    #[test]
    fn values_outside_their_bounds_are_clamped_with_a_warning() {
        let loaded = parse(
            "# made by hand\n\nmaterial[queen].mg 2147483647\nmaterial[queen].eg -5\ntempo.mg 7\n",
            Path::new("f"),
        )
        .unwrap();
        let queen = loaded.params.entries[crate::eval::schema::blocks::material.at(4)];
        let b = crate::eval::schema::block_by_name("material").unwrap();
        assert_eq!((queen.mg, queen.eg), (b.max, b.min));
        assert_eq!(loaded.clamped.len(), 2);
        assert!(
            loaded.clamped[0]
                .starts_with("line 3: material[queen].mg 2147483647 outside [0, 2500]"),
            "{:?}",
            loaded.clamped
        );
        assert!(
            loaded
                .warnings()
                .iter()
                .any(|w| w.contains("outside its bounds"))
        );
        assert_eq!(loaded.header, vec!["made by hand".to_string()]);
    }

    #[test]
    fn names_are_unique_and_readable() {
        let names = scalar_names();
        let set: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(set.len(), names.len());
        assert!(names.contains(&"material[knight].mg".to_string()));
        assert!(names.contains(&"pst_king[g1].eg".to_string()));
        assert!(names.contains(&"tempo.mg".to_string()));
    }

    #[test]
    fn unknown_and_missing_are_tolerated_and_bad_lines_rejected() {
        let loaded = parse(
            "# c\nmaterial[knight].mg 300\nno_such.mg 5\n",
            Path::new("f"),
        )
        .unwrap();
        assert_eq!(
            loaded.params.entries[crate::eval::schema::blocks::material.at(1)].mg,
            300
        );
        assert_eq!(loaded.unknown, vec!["no_such.mg".to_string()]);
        assert_eq!(loaded.missing.len(), Params::NUM_SCALARS - 1);
        assert!(!loaded.warnings().is_empty());

        let err = parse("tempo.mg 1\ntempo.eg x\n", Path::new("f")).unwrap_err();
        assert!(err.to_string().contains("f:2"), "{err}");
        // Beyond i32: not a value at all.
        let err = parse("tempo.mg 99999999999\n", Path::new("f")).unwrap_err();
        assert!(
            matches!(err, ParamsFileError::BadValue { line: 1, .. }),
            "{err}"
        );
        let err = parse("tempo.mg\n", Path::new("f")).unwrap_err();
        assert!(matches!(err, ParamsFileError::Malformed { line: 1, .. }));
        let err = parse("tempo.mg 1\ntempo.mg 2\n", Path::new("f")).unwrap_err();
        assert!(matches!(err, ParamsFileError::Duplicate { line: 2, .. }));
    }
}
