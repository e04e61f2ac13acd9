//! The search params text file: one search parameter per line,
//! `name value` (the names of [`SEARCH_PARAMS`], ASCII case ignored), as
//! written by `tuner spsa` and `engine search-params`. Blank lines and lines
//! starting with `#` are ignored.
//!
//! A file sets only the parameters it names; the others keep their compiled
//! defaults. A name the engine does not declare is skipped with a warning
//! (so files survive parameters being removed); a value that is not an
//! integer or lies outside the declared range is an error naming the file
//! and line.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::search::{SEARCH_PARAMS, SearchParams};

/// Errors reading a search params file.
#[derive(Debug, Error)]
pub enum SearchParamsFileError {
    /// The file could not be read.
    #[error("cannot read search params file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A line is not `name value`.
    #[error("{path}:{line}: expected `name value`, found {text:?}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The line.
        text: String,
    },
    /// The value is not an integer within the declared range.
    #[error("{path}:{line}: {name} must be an integer in {min}..={max}, found {value:?}")]
    BadValue {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The parameter.
        name: String,
        /// The text found.
        value: String,
        /// Smallest allowed value.
        min: i32,
        /// Largest allowed value.
        max: i32,
    },
    /// The same parameter appears twice.
    #[error("{path}:{line}: {name} is set twice")]
    Duplicate {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The parameter.
        name: String,
    },
}

/// A loaded search params file.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedSearchParams {
    /// The values (defaults where the file is silent).
    pub params: SearchParams,
    /// Names in the file that the engine does not declare.
    pub unknown: Vec<String>,
}

/// Parses the text of a search params file; `path` names it in errors.
///
/// # Errors
/// A malformed line, a bad or out-of-range value, a duplicate name.
pub fn parse(text: &str, path: &Path) -> Result<LoadedSearchParams, SearchParamsFileError> {
    let mut params = SearchParams::default();
    let mut seen = vec![false; SEARCH_PARAMS.len()];
    let mut unknown = Vec::new();
    for (number, raw) in text.lines().enumerate() {
        let line = number + 1;
        let content = raw.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = content.split_whitespace().collect();
        let [name, value] = words[..] else {
            return Err(SearchParamsFileError::Malformed {
                path: path.to_path_buf(),
                line,
                text: raw.to_string(),
            });
        };
        let Some(index) = SearchParams::index_of(name) else {
            unknown.push(name.to_string());
            continue;
        };
        let spec = &SEARCH_PARAMS[index];
        if std::mem::replace(&mut seen[index], true) {
            return Err(SearchParamsFileError::Duplicate {
                path: path.to_path_buf(),
                line,
                name: spec.name.to_string(),
            });
        }
        match value.parse::<i32>() {
            Ok(v) if spec.allows(v) => params.set(index, v),
            _ => {
                return Err(SearchParamsFileError::BadValue {
                    path: path.to_path_buf(),
                    line,
                    name: spec.name.to_string(),
                    value: value.to_string(),
                    min: spec.min,
                    max: spec.max,
                });
            }
        }
    }
    Ok(LoadedSearchParams { params, unknown })
}

/// Reads a search params file.
///
/// # Errors
/// As [`parse`], and when the file cannot be read.
pub fn read_file(path: &Path) -> Result<LoadedSearchParams, SearchParamsFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| SearchParamsFileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path)
}

/// Writes every parameter in the text format, with a comment header and
/// each parameter's documentation and range as a comment.
pub fn to_text(params: &SearchParams, header: &[String]) -> String {
    let mut out = String::new();
    for line in header {
        let _ = writeln!(out, "# {line}");
    }
    for (i, spec) in SEARCH_PARAMS.iter().enumerate() {
        let _ = writeln!(
            out,
            "# {} (default {}, {}..={}, step {})",
            spec.doc.trim(),
            spec.default,
            spec.min,
            spec.max,
            spec.step
        );
        let _ = writeln!(out, "{} {}", spec.name, params.get(i));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let p = SearchParams {
            rfp_margin: 120,
            lmr_base_percent: 50,
            ..SearchParams::default()
        };
        let text = to_text(&p, &["test".into()]);
        let path = Path::new("x.search");
        assert_eq!(parse(&text, path).unwrap().params, p);
        // Partial files keep the defaults; unknown names are reported.
        let loaded = parse("# c\nRFP_MARGIN 100\nfoo 3\n", path).unwrap();
        assert_eq!(loaded.params.rfp_margin, 100);
        assert_eq!(loaded.params.lmp_base, SearchParams::default().lmp_base);
        assert_eq!(loaded.unknown, ["foo"]);
        let err = |t: &str| parse(t, path).unwrap_err().to_string();
        assert_eq!(
            err("rfp_margin 100000"),
            "x.search:1: rfp_margin must be an integer in 20..=250, found \"100000\""
        );
        assert!(err("\nrfp_margin x").starts_with("x.search:2: rfp_margin must be"));
        assert!(err("rfp_margin").contains("expected `name value`"));
        assert!(err("rfp_margin 80\nrfp_margin 81").contains(":2: rfp_margin is set twice"));
    }
}
