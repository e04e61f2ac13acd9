//! The `dump` and `stats` commands: looking into an existing Polyglot book.
//!
//! `dump` lists the book moves of one position (the start position, a FEN,
//! or the position after a sequence of moves) with their weights and their
//! share of the position's total weight, or every entry of the book with
//! `--all`. `stats` summarises a book: entries, positions, weight-0 entries,
//! moves per position, and how far the book reaches from the start position
//! when following its playable moves. Both validate the book first, so a
//! truncated or unsorted file is reported as such.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use engine::chess::position::{fen_of, key, parse_fen, play_uci, uci_of};
use engine::formats::book::{PolyglotBook, decode_move, raw_move_text};
use shakmaty::san::{San, SanPlus};
use shakmaty::{Chess, Position};

/// Opens and validates a book, with the path in the error.
pub fn open_book(path: &Path) -> Result<PolyglotBook> {
    Ok(PolyglotBook::open(path)?)
}

/// Plays moves given in UCI (`e2e4`) or SAN (`e4`, `Nf3`) from `start`.
///
/// # Errors
/// The first move that is neither, or not legal, with its number.
pub fn play_moves(start: Chess, moves: &[String]) -> Result<Chess> {
    let mut pos = start;
    for (i, text) in moves.iter().enumerate() {
        let next = match play_uci(&pos, text) {
            Ok((next, _)) => next,
            Err(uci_error) => {
                let san: SanPlus = text
                    .parse()
                    .map_err(|_| anyhow::anyhow!("move {} {text:?}: {uci_error}", i + 1))?;
                let m = san.san.to_move(&pos).map_err(|e| {
                    anyhow::anyhow!("move {} {text:?} in {}: {e}", i + 1, fen_of(&pos))
                })?;
                let mut next = pos.clone();
                next.play_unchecked(m);
                next
            }
        };
        pos = next;
    }
    Ok(pos)
}

/// The listing of one position's book moves.
pub fn dump_position(book: &PolyglotBook, pos: &Chess) -> String {
    let k = key(pos);
    let entries = book.entries_for(k);
    let mut out = String::new();
    let _ = writeln!(out, "position: {}", fen_of(pos));
    let _ = writeln!(out, "key:      {k:016x}");
    if entries.is_empty() {
        let _ = writeln!(out, "not in the book");
        return out;
    }
    let total: u64 = entries.iter().map(|e| u64::from(e.weight)).sum();
    let _ = writeln!(
        out,
        "{:<8} {:<6} {:>6} {:>7}",
        "move", "uci", "weight", "share"
    );
    for entry in entries {
        match decode_move(pos, entry.raw_move) {
            Some(m) => {
                let san = San::from_move(pos, m).to_string();
                let share = if total == 0 {
                    0.0
                } else {
                    100.0 * f64::from(entry.weight) / total as f64
                };
                let never = if entry.weight == 0 {
                    "  (never played)"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "{san:<8} {:<6} {:>6} {share:>6.1}%{never}",
                    uci_of(&m),
                    entry.weight
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "{:<8} {:<6} {:>6}     -   (not a legal move here: hash collision or corrupt entry)",
                    "?",
                    raw_move_text(entry.raw_move),
                    entry.weight
                );
            }
        }
    }
    let _ = writeln!(out, "{} entries, total weight {total}", entries.len());
    out
}

/// Every entry as `key move weight learn`, one per line, in file order.
pub fn dump_all(book: &PolyglotBook, out: &mut impl std::io::Write) -> std::io::Result<()> {
    for e in book.entries() {
        writeln!(
            out,
            "{:016x} {} {} {}",
            e.key,
            raw_move_text(e.raw_move),
            e.weight,
            e.learn
        )?;
    }
    Ok(())
}

/// The `dump` command.
///
/// # Errors
/// An unreadable or corrupt book, a bad FEN or move.
pub fn dump(book_path: &Path, fen: Option<&str>, moves: &[String]) -> Result<String> {
    let book = open_book(book_path)?;
    let start = match fen {
        Some(fen) => parse_fen(fen).with_context(|| "--fen")?,
        None => Chess::default(),
    };
    let pos = play_moves(start, moves).context("--moves")?;
    Ok(dump_position(&book, &pos))
}

/// The `stats` command.
///
/// # Errors
/// An unreadable or corrupt book.
pub fn stats(book_path: &Path) -> Result<String> {
    let book = open_book(book_path)?;
    let entries = book.entries();
    let mut positions = 0u64;
    let mut max_moves = 0usize;
    let mut zero = 0u64;
    for group in entries.chunk_by(|a, b| a.key == b.key) {
        positions += 1;
        max_moves = max_moves.max(group.len());
        zero += group.iter().filter(|e| e.weight == 0).count() as u64;
    }
    let mut out = String::new();
    let size = entries.len() as u64 * engine::formats::book::ENTRY_SIZE as u64;
    let _ = writeln!(out, "book:       {} ({size} bytes)", book_path.display());
    let _ = writeln!(out, "entries:    {}", entries.len());
    let _ = writeln!(out, "positions:  {positions}");
    let _ = writeln!(out, "weight 0:   {zero} entries (never played)");
    if positions > 0 {
        let _ = writeln!(
            out,
            "moves per position: {:.2} on average, {max_moves} at most",
            entries.len() as f64 / positions as f64
        );
    }
    let (reached, deepest) = reach_from_start(&book);
    let _ = writeln!(
        out,
        "from the start position: {reached} book positions reachable by playable moves, longest line {deepest} plies"
    );
    let start = Chess::default();
    let _ = write!(out, "\n{}", dump_position(&book, &start));
    Ok(out)
}

/// Positions of the book reachable from the start position by playing
/// weight > 0 book moves, and the longest such line (breadth first, each
/// position counted once).
fn reach_from_start(book: &PolyglotBook) -> (u64, u32) {
    let mut seen: HashSet<u64> = HashSet::new();
    let mut frontier = vec![Chess::default()];
    let mut depth = 0;
    let mut reached = 0u64;
    let mut level = 0;
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for pos in frontier {
            if !seen.insert(key(&pos)) {
                continue;
            }
            let moves = book.moves(&pos);
            if moves.is_empty() {
                continue;
            }
            reached += 1;
            depth = level + 1;
            for (m, weight) in moves {
                if weight > 0 {
                    let mut child = pos.clone();
                    child.play_unchecked(m);
                    next.push(child);
                }
            }
        }
        level += 1;
        frontier = next;
    }
    (reached, depth)
}
