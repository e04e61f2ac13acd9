//! The EPD perft-suite format (`FEN ;D1 20 ;D2 400`): positions with their
//! expected node counts at each depth, for checking move generation with
//! [`crate::chess::perft`].

use std::path::Path;

use shakmaty::Chess;
use thiserror::Error;

use crate::chess::excerpt::excerpt;

use crate::chess::perft::parse_perft_position;
use crate::chess::position::PositionParseError;

/// One line of a perft suite: a position and its expected node counts.
#[derive(Clone, Debug)]
pub struct PerftCase {
    /// The position's FEN as written in the file.
    pub fen: String,
    /// The position.
    pub position: Chess,
    /// `(depth, expected nodes)` pairs in file order.
    pub expected: Vec<(u32, u64)>,
}

/// Why a perft suite could not be read.
#[derive(Debug, Error)]
pub enum PerftSuiteError {
    /// The file could not be read.
    #[error("cannot read perft suite {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line's position is not a legal FEN.
    #[error("line {line}: {source}")]
    Position {
        /// 1-based line number.
        line: usize,
        /// The parse error.
        source: PositionParseError,
    },
    /// A `;Dn count` field is malformed.
    #[error("line {line}: malformed depth field {:?}", excerpt(.field))]
    DepthField {
        /// 1-based line number.
        line: usize,
        /// The offending field.
        field: String,
    },
}

/// Parses perft-suite text: one `FEN ;D1 n ;D2 n …` per line; blank lines
/// and `#` comments are skipped, CRLF line ends accepted.
///
/// # Errors
/// [`PerftSuiteError::Position`] or [`PerftSuiteError::DepthField`] for the
/// first bad line.
pub fn parse_suite(text: &str) -> Result<Vec<PerftCase>, PerftSuiteError> {
    let mut cases = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split(';');
        let fen = fields.next().unwrap_or_default().trim().to_string();
        let position = parse_perft_position(&fen).map_err(|source| PerftSuiteError::Position {
            line: i + 1,
            source,
        })?;
        let mut expected = Vec::new();
        for field in fields.map(str::trim).filter(|f| !f.is_empty()) {
            let bad = || PerftSuiteError::DepthField {
                line: i + 1,
                field: field.to_string(),
            };
            let (name, count) = field.split_once(char::is_whitespace).ok_or_else(bad)?;
            let depth = name
                .strip_prefix('D')
                .and_then(|d| d.parse().ok())
                .ok_or_else(bad)?;
            let count = count.trim().parse().map_err(|_| bad())?;
            expected.push((depth, count));
        }
        cases.push(PerftCase {
            fen,
            position,
            expected,
        });
    }
    Ok(cases)
}

/// Reads and parses a perft-suite file (see [`parse_suite`]).
///
/// # Errors
/// [`PerftSuiteError::Io`] when the file cannot be read, else as
/// [`parse_suite`].
pub fn read_suite(path: &Path) -> Result<Vec<PerftCase>, PerftSuiteError> {
    let text = std::fs::read_to_string(path).map_err(|source| PerftSuiteError::Io {
        path: path.display().to_string(),
        source,
    })?;
    parse_suite(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_and_crlf_suite() {
        let suite = parse_suite(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ;D1 20 ;D2 400\r\n\r\n",
        )
        .unwrap();
        assert_eq!(suite.len(), 1);
        assert_eq!(suite[0].expected, vec![(1, 20), (2, 400)]);
        assert_eq!(crate::chess::perft::perft(&suite[0].position, 3), 8902);
        let d: u64 = crate::chess::perft::divide(&suite[0].position, 3)
            .iter()
            .map(|(_, n)| n)
            .sum();
        assert_eq!(d, 8902);
    }
}
