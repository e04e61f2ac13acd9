//! The state of an SPSA run after each completed iteration — the current
//! values `θ` and the trajectory — with its checkpoint file and CSV log.
//!
//! The checkpoint is text, written atomically after every iteration: the
//! run's settings (one `setting` line each, compared on `--resume` so that a
//! run continues only with what it was started with), the parameter names,
//! and one `row` per iteration with the values after it as the hexadecimal
//! bits of each `f64`, so a resumed run continues bit for bit.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result, bail, ensure};
use engine::formats::atomic_file::write_file;

const MAGIC: &str = "spsa-checkpoint 1";

/// One completed iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct IterationRow {
    /// 1-based iteration number.
    pub iteration: usize,
    /// Games won by the first player (`θ + δc`).
    pub wins: u64,
    /// Drawn games.
    pub draws: u64,
    /// Games lost by the first player.
    pub losses: u64,
    /// Game pairs played again because an engine crashed or hung.
    pub replayed: u64,
    /// `θ` after the iteration's update.
    pub theta: Vec<f64>,
}

/// Everything a run needs to continue.
#[derive(Clone, Debug, PartialEq)]
pub struct SpsaState {
    /// What defines the run (engine, options, schedule, limits, …).
    pub settings: Vec<String>,
    /// The tuned option names.
    pub names: Vec<String>,
    /// The start values.
    pub start: Vec<f64>,
    /// Completed iterations in order.
    pub rows: Vec<IterationRow>,
}

fn hex(v: f64) -> String {
    format!("{:016x}", v.to_bits())
}

fn unhex(s: &str) -> Result<f64> {
    Ok(f64::from_bits(
        u64::from_str_radix(s, 16).with_context(|| format!("bad number {s:?}"))?,
    ))
}

impl SpsaState {
    /// A run that has not played yet.
    pub fn new(settings: Vec<String>, names: Vec<String>, start: Vec<f64>) -> Self {
        SpsaState {
            settings,
            names,
            start,
            rows: Vec::new(),
        }
    }

    /// Iterations completed.
    pub fn iteration(&self) -> usize {
        self.rows.len()
    }

    /// The current values.
    pub fn theta(&self) -> &[f64] {
        self.rows.last().map_or(&self.start, |r| &r.theta)
    }

    /// The checkpoint text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{MAGIC}");
        for s in &self.settings {
            let _ = writeln!(out, "setting {s}");
        }
        let _ = writeln!(out, "names {}", self.names.join(" "));
        let values: Vec<String> = self.start.iter().map(|v| hex(*v)).collect();
        let _ = writeln!(out, "start {}", values.join(" "));
        for r in &self.rows {
            let values: Vec<String> = r.theta.iter().map(|v| hex(*v)).collect();
            let _ = writeln!(
                out,
                "row {} {} {} {} {} {}",
                r.iteration,
                r.wins,
                r.draws,
                r.losses,
                r.replayed,
                values.join(" ")
            );
        }
        out
    }

    /// Parses a checkpoint text (`path` names it in errors).
    ///
    /// # Errors
    /// A wrong first line, or a malformed line (with its number).
    pub fn from_text(text: &str, path: &Path) -> Result<Self> {
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, MAGIC)) => {}
            _ => bail!("{}: not an SPSA checkpoint", path.display()),
        }
        let mut state = SpsaState::new(Vec::new(), Vec::new(), Vec::new());
        for (i, line) in lines {
            let mut parse = || -> Result<()> {
                let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
                match key {
                    "setting" => state.settings.push(rest.to_string()),
                    "names" => state.names = rest.split_whitespace().map(String::from).collect(),
                    "start" => {
                        state.start = rest.split_whitespace().map(unhex).collect::<Result<_>>()?
                    }
                    "row" => {
                        let words: Vec<&str> = rest.split_whitespace().collect();
                        ensure!(
                            words.len() == 5 + state.names.len(),
                            "wrong number of fields"
                        );
                        let int = |w: &str| w.parse::<u64>().context("bad count");
                        state.rows.push(IterationRow {
                            iteration: int(words[0])? as usize,
                            wins: int(words[1])?,
                            draws: int(words[2])?,
                            losses: int(words[3])?,
                            replayed: int(words[4])?,
                            theta: words[5..].iter().map(|w| unhex(w)).collect::<Result<_>>()?,
                        });
                        ensure!(
                            state.rows.last().unwrap().iteration == state.rows.len(),
                            "iterations out of order"
                        );
                    }
                    _ => bail!("unknown line"),
                }
                Ok(())
            };
            parse().with_context(|| format!("{}:{}", path.display(), i + 1))?;
        }
        ensure!(
            state.start.len() == state.names.len(),
            "{}: the start values do not match the names",
            path.display()
        );
        Ok(state)
    }

    /// Writes the checkpoint atomically.
    ///
    /// # Errors
    /// I/O errors, with the path.
    pub fn save(&self, path: &Path) -> Result<()> {
        Ok(write_file(path, self.to_text().as_bytes())?)
    }

    /// Reads a checkpoint.
    ///
    /// # Errors
    /// I/O errors and malformed checkpoints, with the path.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the checkpoint {}", path.display()))?;
        Self::from_text(&text, path)
    }

    /// The header of the CSV log.
    pub fn csv_header(&self) -> String {
        format!(
            "iteration,wins,draws,losses,replayed_pairs,{}",
            self.names.join(",")
        )
    }

    /// One CSV line.
    pub fn csv_row(row: &IterationRow) -> String {
        let values: Vec<String> = row.theta.iter().map(|v| format!("{v:.4}")).collect();
        format!(
            "{},{},{},{},{},{}",
            row.iteration,
            row.wins,
            row.draws,
            row.losses,
            row.replayed,
            values.join(",")
        )
    }

    /// The whole CSV log.
    pub fn csv(&self) -> String {
        let mut out = self.csv_header();
        out.push('\n');
        for r in &self.rows {
            out.push_str(&Self::csv_row(r));
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_round_trips_exactly() {
        let mut s = SpsaState::new(
            vec!["engine \"x\"".into(), "pairs 4".into()],
            vec!["a".into(), "b".into()],
            vec![1.0, 2.5],
        );
        s.rows.push(IterationRow {
            iteration: 1,
            wins: 3,
            draws: 2,
            losses: 1,
            replayed: 0,
            theta: vec![1.0 / 3.0, -0.1],
        });
        let path = Path::new("cp");
        let back = SpsaState::from_text(&s.to_text(), path).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.theta(), &[1.0 / 3.0, -0.1]);
        assert!(s.csv().starts_with(
            "iteration,wins,draws,losses,replayed_pairs,a,b\n1,3,2,1,0,0.3333,-0.1000\n"
        ));
        let bad = s.to_text().replace("row 1 3", "row 1 x");
        let err = SpsaState::from_text(&bad, path).unwrap_err();
        assert!(format!("{err:#}").starts_with("cp:6: bad count"), "{err:#}");
        assert!(SpsaState::from_text("hello\n", path).is_err());
    }
}
