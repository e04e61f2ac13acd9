//! Opening classification by ECO code and name, from the table of
//! lichess-org/chess-openings (`data/eco/*.tsv`). The engine carries it as
//! the generated [`eco_table`](super::eco_table) (the same rows with the
//! moves in UCI notation, checked legal when generated), so the crate needs
//! no file at run time; a test regenerates it from `data/eco` and compares.
//!
//! The table format is tab-separated with a header row
//! `eco<TAB>name<TAB>pgn`: an ECO code (`B90`), a name (`Sicilian Defense:
//! Najdorf Variation` — the family before the colon, the variation after
//! it) and the line as SAN movetext from the standard position (`1. e4 c5
//! 2. Nf3 …`). [`EcoTable::parse`] plays every line and keys its entry by
//! the position it reaches (Polyglot key: placement, side to move, castling
//! rights, en-passant square), so classification follows transpositions:
//! [`EcoTable::classify`] looks up every position of a game, from its start
//! position (which may be any position, for games from a FEN) on, and the
//! deepest entry reached — the one with the longest line, the later one on
//! a tie — names the opening.
//!
//! Invariant: no two entries share a position (a later duplicate is an
//! error), so a position has at most one name.

use std::collections::HashMap;
use std::sync::OnceLock;

use shakmaty::san::San;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Move, Position};

use crate::chess::position::key;

/// The header row of a table.
const HEADER: &str = "eco\tname\tpgn";

/// One named opening.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EcoEntry {
    /// The ECO code, e.g. `B90`.
    pub eco: String,
    /// The full name, e.g. `Sicilian Defense: Najdorf Variation`.
    pub name: String,
    /// Plies of the line that defines it.
    pub plies: usize,
    /// The line in UCI notation, moves separated by spaces.
    pub line: String,
}

impl EcoEntry {
    /// The opening family: the name before the colon (`Sicilian Defense`).
    pub fn opening(&self) -> &str {
        self.name
            .split_once(':')
            .map_or(self.name.as_str(), |(o, _)| o)
            .trim()
    }

    /// The variation: the name after the colon, if any (`Najdorf
    /// Variation`).
    pub fn variation(&self) -> Option<&str> {
        self.name.split_once(':').map(|(_, v)| v.trim())
    }

    /// The ECO family: volume letter and tens digit (`B9` for B90–B99).
    pub fn eco_family(&self) -> &str {
        eco_family(&self.eco)
    }

    /// The PGN tags this entry sets: `ECO`, `Opening` and, when there is
    /// one, `Variation`.
    pub fn tags(&self) -> Vec<(String, String)> {
        let mut tags = vec![
            ("ECO".to_string(), self.eco.clone()),
            ("Opening".to_string(), self.opening().to_string()),
        ];
        if let Some(v) = self.variation() {
            tags.push(("Variation".to_string(), v.to_string()));
        }
        tags
    }
}

/// The ECO family of a code: its first two characters (`B9` of `B90`).
pub fn eco_family(code: &str) -> &str {
    code.get(..2).unwrap_or(code)
}

/// Why a table could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EcoError {
    /// The first line is not the header.
    #[error("{table}:1: expected the header {HEADER:?}")]
    Header {
        /// The table's name.
        table: String,
    },
    /// A row is not `eco<TAB>name<TAB>pgn` with a valid code.
    #[error("{table}:{line}: expected ECO<TAB>name<TAB>moves, found {text:?}")]
    Malformed {
        /// The table's name.
        table: String,
        /// 1-based line number.
        line: usize,
        /// The row.
        text: String,
    },
    /// A move of the line is not legal.
    #[error("{table}:{line}: {san:?} is not a legal move here")]
    IllegalMove {
        /// The table's name.
        table: String,
        /// 1-based line number.
        line: usize,
        /// The move.
        san: String,
    },
    /// Two rows reach the same position.
    #[error("{table}:{line}: the position is already named {other:?}")]
    Duplicate {
        /// The table's name.
        table: String,
        /// 1-based line number.
        line: usize,
        /// The earlier entry's name.
        other: String,
    },
}

/// Named openings by position.
#[derive(Clone, Debug, Default)]
pub struct EcoTable {
    entries: Vec<EcoEntry>,
    by_key: HashMap<u64, usize>,
}

fn valid_code(code: &str) -> bool {
    let b = code.as_bytes();
    b.len() == 3 && (b'A'..=b'E').contains(&b[0]) && b[1..].iter().all(u8::is_ascii_digit)
}

impl EcoTable {
    /// The bundled table (built on first use from the generated
    /// [`eco_table`](super::eco_table)).
    pub fn bundled() -> &'static EcoTable {
        static TABLE: OnceLock<EcoTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            let mut table = EcoTable::default();
            for (eco, name, line) in super::eco_table::LINES {
                let mut pos = Chess::default();
                let mut plies = 0;
                for uci in line.split_whitespace() {
                    let m = uci
                        .parse::<UciMove>()
                        .ok()
                        .and_then(|u| u.to_move(&pos).ok())
                        .expect("the generated ECO table holds legal lines (tested)");
                    pos.play_unchecked(m);
                    plies += 1;
                }
                table.insert(
                    pos,
                    EcoEntry {
                        eco: eco.to_string(),
                        name: name.to_string(),
                        plies,
                        line: line.to_string(),
                    },
                );
            }
            table
        })
    }

    fn insert(&mut self, pos: Chess, entry: EcoEntry) -> Option<&EcoEntry> {
        let k = key(&pos);
        if let Some(&other) = self.by_key.get(&k) {
            return Some(&self.entries[other]);
        }
        self.by_key.insert(k, self.entries.len());
        self.entries.push(entry);
        None
    }

    /// The generated Rust source of [`eco_table`](super::eco_table) for
    /// this table, `sources` naming where its rows came from.
    pub fn to_rust(&self, sources: &str) -> String {
        let mut out = format!(
            "//! The ECO table: {} named openings as (code, name, line in UCI\n\
             //! notation), generated from {sources} (lichess-org/chess-openings,\n\
             //! CC0-1.0) by `UPDATE_ECO_TABLE=1 cargo test --release -p engine\n\
             //! --test eco_table`. Generated: do not edit.\n\n\
             /// The rows in table order.\n\
             #[rustfmt::skip]\n\
             pub static LINES: [(&str, &str, &str); {}] = [\n",
            self.len(),
            self.len()
        );
        for e in &self.entries {
            out.push_str(&format!("    ({:?}, {:?}, {:?}),\n", e.eco, e.name, e.line));
        }
        out.push_str("];\n");
        out
    }

    /// A table read from `text` (`source` names it in errors).
    ///
    /// # Errors
    /// See [`EcoError`].
    pub fn parse(text: &str, source: &str) -> Result<EcoTable, EcoError> {
        let mut table = EcoTable::default();
        table.add(text, source)?;
        Ok(table)
    }

    /// Adds the rows of `text` to the table.
    ///
    /// # Errors
    /// See [`EcoError`].
    pub fn add(&mut self, text: &str, source: &str) -> Result<(), EcoError> {
        let mut lines = text.lines().enumerate();
        if lines.next().map(|(_, l)| l.trim_end()) != Some(HEADER) {
            return Err(EcoError::Header {
                table: source.to_string(),
            });
        }
        for (i, row) in lines {
            let line = i + 1;
            if row.trim().is_empty() {
                continue;
            }
            let malformed = || EcoError::Malformed {
                table: source.to_string(),
                line,
                text: row.to_string(),
            };
            let mut fields = row.split('\t');
            let (Some(eco), Some(name), Some(moves), None) =
                (fields.next(), fields.next(), fields.next(), fields.next())
            else {
                return Err(malformed());
            };
            if !valid_code(eco) || name.trim().is_empty() {
                return Err(malformed());
            }
            let mut pos = Chess::default();
            let mut plies = 0;
            let mut line_uci = Vec::new();
            for word in moves.split_whitespace() {
                // Move numbers ("1." or "1...") and results are not moves.
                if word.ends_with('.') || matches!(word, "*" | "1-0" | "0-1" | "1/2-1/2") {
                    continue;
                }
                let illegal = || EcoError::IllegalMove {
                    table: source.to_string(),
                    line,
                    san: word.to_string(),
                };
                let san: San = word
                    .trim_end_matches(['+', '#', '!', '?'])
                    .parse()
                    .map_err(|_| illegal())?;
                let m = san.to_move(&pos).map_err(|_| illegal())?;
                line_uci.push(m.to_uci(CastlingMode::Standard).to_string());
                pos.play_unchecked(m);
                plies += 1;
            }
            if plies == 0 {
                return Err(malformed());
            }
            let entry = EcoEntry {
                eco: eco.to_string(),
                name: name.trim().to_string(),
                plies,
                line: line_uci.join(" "),
            };
            if let Some(other) = self.insert(pos, entry) {
                return Err(EcoError::Duplicate {
                    table: source.to_string(),
                    line,
                    other: other.name.clone(),
                });
            }
        }
        Ok(())
    }

    /// Number of named positions.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry naming `pos`, if any.
    pub fn lookup(&self, pos: &Chess) -> Option<&EcoEntry> {
        self.by_key.get(&key(pos)).map(|&i| &self.entries[i])
    }

    /// The opening of a game from `start` through `moves` (legal moves):
    /// the deepest entry among the positions reached (see the module
    /// documentation), if any.
    pub fn classify(&self, start: &Chess, moves: &[Move]) -> Option<&EcoEntry> {
        let mut best = self.lookup(start);
        let mut pos = start.clone();
        for m in moves {
            pos.play_unchecked(*m);
            if let Some(e) = self.lookup(&pos)
                && best.is_none_or(|b| e.plies >= b.plies)
            {
                best = Some(e);
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moves(start: &Chess, uci: &str) -> Vec<Move> {
        let mut pos = start.clone();
        uci.split_whitespace()
            .map(|u| {
                let m = u.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
                pos.play_unchecked(m);
                m
            })
            .collect()
    }

    #[test]
    fn bundled_table_names_known_lines() {
        let table = EcoTable::bundled();
        assert_eq!(table.len(), 3807);
        let start = Chess::default();
        let najdorf = moves(&start, "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6 b1c3 a7a6");
        let e = table.classify(&start, &najdorf).unwrap();
        assert_eq!(e.eco, "B90");
        assert_eq!(e.opening(), "Sicilian Defense");
        assert_eq!(e.variation(), Some("Najdorf Variation"));
        assert_eq!(e.eco_family(), "B9");
        // Later moves out of the book keep the deepest name.
        let longer = moves(
            &start,
            "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6 b1c3 a7a6 h2h3 h7h6 a2a3",
        );
        assert_eq!(table.classify(&start, &longer).unwrap().eco, "B90");
        // Nothing known: no name.
        assert!(table.classify(&start, &[]).is_none());
    }

    #[test]
    fn transpositions_are_followed() {
        let table = EcoTable::bundled();
        let start = Chess::default();
        // The Queen's Gambit Declined by 1. c4 e6 2. Nc3 d5 3. d4.
        let english = moves(&start, "c2c4 e7e6 b1c3 d7d5 d2d4");
        let direct = moves(&start, "d2d4 d7d5 c2c4 e7e6 b1c3");
        let a = table.classify(&start, &english).unwrap();
        let b = table.classify(&start, &direct).unwrap();
        assert_eq!(a, b);
        assert!(a.eco.starts_with("D3"), "{a:?}");
        // A game from a FEN is classified by its positions.
        let mut pos = start.clone();
        for m in &direct {
            pos.play_unchecked(*m);
        }
        assert_eq!(table.classify(&pos, &[]), Some(a));
    }

    #[test]
    fn bad_tables_are_reported_with_lines() {
        let err = |t: &str| EcoTable::parse(t, "t.tsv").unwrap_err().to_string();
        assert_eq!(
            err("x\n"),
            format!("t.tsv:1: expected the header {HEADER:?}")
        );
        assert!(err("eco\tname\tpgn\nZ99\tX\t1. e4\n").starts_with("t.tsv:2: expected ECO"));
        assert!(
            err("eco\tname\tpgn\nC20\tX\t1. e4 e5 2. Ke3\n").contains("\"Ke3\" is not a legal")
        );
        assert!(
            err("eco\tname\tpgn\nC20\tX\t1. e4 e5\nC20\tY\t1. e4 e5\n")
                .contains("t.tsv:3: the position is already named \"X\"")
        );
    }
}
