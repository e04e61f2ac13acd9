//! The machine-readable summary every tool writes with `--summary FILE`:
//! one JSON object with the same shape for every tool, so scripts read
//! figures by name instead of matching the human summary's wording.
//!
//! ```json
//! {
//!   "tool": "pgnselect",
//!   "version": "0.1.0",
//!   "status": "complete",
//!   "inputs": ["games.pgn"],
//!   "output": "positions.epd",
//!   "counts": { "games_read": 4050, "positions_written": 24414 },
//!   "skipped": { "no_result": 12, "malformed": 1 },
//!   "timings": { "total_seconds": 0.31 },
//!   "figures": { "megabytes_per_second": 61.2 }
//! }
//! ```
//!
//! `counts` are whole numbers of things done, `skipped` the things left
//! out by reason (games, positions or lines, as the tool documents),
//! `timings` durations in seconds, `figures` anything else (rates, ratios,
//! settings that explain the counts). Keys are snake_case and sorted. The
//! file is written atomically.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::formats::atomic_file::{AtomicFile, AtomicFileError};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// All input was processed.
    Complete,
    /// Stopped by Ctrl-C/SIGTERM; the tool documents what was written.
    Interrupted,
}

/// A run's summary.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The tool's name.
    pub tool: String,
    /// The tool's version.
    pub version: String,
    /// How the run ended.
    pub status: Status,
    /// The input files, as given.
    pub inputs: Vec<PathBuf>,
    /// The output file, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<PathBuf>,
    /// Things done, by name.
    pub counts: BTreeMap<String, u64>,
    /// Things left out, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Durations in seconds, by name.
    pub timings: BTreeMap<String, f64>,
    /// Other figures, by name.
    pub figures: BTreeMap<String, serde_json::Value>,
}

/// The summary could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    /// The file could not be created or replaced.
    #[error(transparent)]
    File(#[from] AtomicFileError),
    /// Writing the JSON failed.
    #[error("{path}: cannot write the summary: {source}")]
    Write {
        /// The summary file.
        path: PathBuf,
        /// The reason.
        source: std::io::Error,
    },
}

impl Summary {
    /// An empty, complete summary of `tool` at `version` (pass
    /// `env!("CARGO_PKG_VERSION")`).
    pub fn new(tool: &str, version: &str) -> Summary {
        Summary {
            tool: tool.to_string(),
            version: version.to_string(),
            status: Status::Complete,
            inputs: Vec::new(),
            output: None,
            counts: BTreeMap::new(),
            skipped: BTreeMap::new(),
            timings: BTreeMap::new(),
            figures: BTreeMap::new(),
        }
    }

    /// Records a count.
    pub fn count(&mut self, name: &str, value: u64) -> &mut Self {
        self.counts.insert(name.to_string(), value);
        self
    }

    /// Records things left out for `reason`.
    pub fn skip(&mut self, reason: &str, value: u64) -> &mut Self {
        self.skipped.insert(reason.to_string(), value);
        self
    }

    /// Records a duration.
    pub fn timing(&mut self, name: &str, value: Duration) -> &mut Self {
        self.timings.insert(name.to_string(), value.as_secs_f64());
        self
    }

    /// Records any other figure (a number, a string, a list…).
    pub fn figure(&mut self, name: &str, value: impl Into<serde_json::Value>) -> &mut Self {
        self.figures.insert(name.to_string(), value.into());
        self
    }

    /// A rate figure: `count` per second of `elapsed` (0 for no time).
    pub fn rate(&mut self, name: &str, count: f64, elapsed: Duration) -> &mut Self {
        let seconds = elapsed.as_secs_f64();
        let rate = if seconds > 0.0 { count / seconds } else { 0.0 };
        self.figure(name, rate)
    }

    /// The summary as pretty-printed JSON, ending with a newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a summary always serialises");
        text.push('\n');
        text
    }

    /// Writes the summary to `path`, atomically.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write(&self, path: &Path) -> Result<(), SummaryError> {
        let mut file = AtomicFile::create(path)?;
        file.write_all(self.to_json().as_bytes())
            .map_err(|source| SummaryError::Write {
                path: path.to_path_buf(),
                source,
            })?;
        file.commit()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_round_trip_through_json() {
        let mut summary = Summary::new("pgnselect", "0.1.0");
        summary.inputs.push("a.pgn".into());
        summary.output = Some("out.epd".into());
        summary
            .count("games_read", 10)
            .skip("no_result", 2)
            .timing("total_seconds", Duration::from_millis(1500))
            .figure("format", "epd")
            .rate("games_per_second", 10.0, Duration::from_secs(2));
        summary.status = Status::Interrupted;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.json");
        summary.write(&path).unwrap();
        let value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(value["tool"], "pgnselect");
        assert_eq!(value["status"], "interrupted");
        assert_eq!(value["inputs"][0], "a.pgn");
        assert_eq!(value["output"], "out.epd");
        assert_eq!(value["counts"]["games_read"], 10);
        assert_eq!(value["skipped"]["no_result"], 2);
        assert_eq!(value["timings"]["total_seconds"], 1.5);
        assert_eq!(value["figures"]["format"], "epd");
        assert_eq!(value["figures"]["games_per_second"], 5.0);
    }
}
