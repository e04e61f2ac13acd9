//! EPD test suites (Win At Chess, Arasan, …): positions with `bm` (best
//! move) and/or `am` (avoid move) operations in SAN, and the check whether a
//! search's move solves them.
//!
//! Invariant: a parsed [`EpdTest`] has at least one `bm` or `am` move, and
//! every listed move is legal in its position (SAN resolved against it).

use std::path::Path;

use shakmaty::san::SanPlus;
use shakmaty::{Chess, Move};
use thiserror::Error;

use crate::chess::excerpt::excerpt;

use crate::chess::position::{PositionParseError, parse_fen};

/// One test position.
#[derive(Clone, Debug)]
pub struct EpdTest {
    /// The `id` operation, or the line number when absent.
    pub id: String,
    /// The position.
    pub position: Chess,
    /// Moves that solve the test (any of them).
    pub best_moves: Vec<Move>,
    /// Moves that fail the test.
    pub avoid_moves: Vec<Move>,
}

impl EpdTest {
    /// Whether playing `m` solves the test.
    pub fn is_solved_by(&self, m: Move) -> bool {
        (self.best_moves.is_empty() || self.best_moves.contains(&m))
            && !self.avoid_moves.contains(&m)
    }
}

/// Why an EPD suite line could not be used.
#[derive(Debug, Error)]
pub enum EpdError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Fewer than four board fields.
    #[error("line {line}: not an EPD record")]
    Truncated {
        /// 1-based line number.
        line: usize,
    },
    /// The board fields are not a legal position.
    #[error("line {line}: {source}")]
    Position {
        /// 1-based line number.
        line: usize,
        /// The parse error.
        source: PositionParseError,
    },
    /// A `bm`/`am` move is not legal SAN in the position.
    #[error("line {line}: move {:?} is not legal here", excerpt(.san))]
    Move {
        /// 1-based line number.
        line: usize,
        /// The SAN text.
        san: String,
    },
    /// The record has neither `bm` nor `am`.
    #[error("line {line}: no bm or am operation")]
    NoOperation {
        /// 1-based line number.
        line: usize,
    },
}

/// Parses one EPD line (1-based `line` for messages).
///
/// # Errors
/// See [`EpdError`].
pub fn parse_line(text: &str, line: usize) -> Result<EpdTest, EpdError> {
    let text = text.trim();
    let fields: Vec<&str> = text.splitn(5, ' ').collect();
    if fields.len() < 4 {
        return Err(EpdError::Truncated { line });
    }
    let position =
        parse_fen(&fields[..4].join(" ")).map_err(|source| EpdError::Position { line, source })?;
    let mut test = EpdTest {
        id: format!("line {line}"),
        position,
        best_moves: Vec::new(),
        avoid_moves: Vec::new(),
    };
    let operations = fields.get(4).copied().unwrap_or("");
    for op in operations
        .split(';')
        .map(str::trim)
        .filter(|o| !o.is_empty())
    {
        let (opcode, operands) = op.split_once(' ').unwrap_or((op, ""));
        match opcode {
            "bm" | "am" => {
                for san in operands.split_whitespace() {
                    let m = san
                        .parse::<SanPlus>()
                        .ok()
                        .and_then(|s| s.san.to_move(&test.position).ok())
                        .ok_or_else(|| EpdError::Move {
                            line,
                            san: san.to_string(),
                        })?;
                    if opcode == "bm" {
                        test.best_moves.push(m);
                    } else {
                        test.avoid_moves.push(m);
                    }
                }
            }
            "id" => test.id = operands.trim().trim_matches('"').to_string(),
            _ => {}
        }
    }
    if test.best_moves.is_empty() && test.avoid_moves.is_empty() {
        return Err(EpdError::NoOperation { line });
    }
    Ok(test)
}

/// Reads a suite file; blank and `#` lines are skipped.
///
/// # Errors
/// [`EpdError::Io`], or the first bad line's error.
pub fn read_suite(path: &Path) -> Result<Vec<EpdTest>, EpdError> {
    let text = std::fs::read_to_string(path).map_err(|source| EpdError::Io {
        path: path.display().to_string(),
        source,
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(i, l)| parse_line(l, i + 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::position::play_uci;

    #[test]
    fn parses_wac_line() {
        let t = parse_line(
            "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - bm Qg6; id \"WAC.001\";",
            1,
        )
        .unwrap();
        assert_eq!(t.id, "WAC.001");
        let (_, qg6) = play_uci(&t.position, "g3g6").unwrap();
        assert!(t.is_solved_by(qg6));
    }
}
