//! pgnselect on PGN as engine tournaments write it (`data/pgn/engine-fixture.pgn`,
//! made by `scripts/make-engine-fixture.py`): free-text `Termination` tags,
//! `[Variant "normal"]`, TCEC search comments and `[%clk]` comments, long
//! algebraic notation, a promotion without `=`, a Chess960 game, CRLF line
//! endings. Every game of the fixture carries its length in `PlyCount`, so
//! a run that samples every ply must write exactly `PlyCount + 1` positions
//! per used game (none of the games ends without a legal move). One test
//! per class of defect, each on a mutated copy of the fixture.

use std::path::{Path, PathBuf};
use std::process::Command;

use engine::formats::labeled::{LabeledPosition, LabeledReader};
use serde_json::Value;
use shakmaty::{Chess, Position};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/pgn/engine-fixture.pgn")
}

/// The games of a PGN text, split at their `[Event ` lines.
fn games(text: &str) -> Vec<String> {
    let starts: Vec<usize> = text.match_indices("[Event ").map(|(i, _)| i).collect();
    starts
        .iter()
        .enumerate()
        .map(|(k, &start)| {
            text[start..starts.get(k + 1).copied().unwrap_or(text.len())].to_string()
        })
        .collect()
}

fn tag<'a>(game: &'a str, name: &str) -> Option<&'a str> {
    let start = game.find(&format!("[{name} \""))? + name.len() + 3;
    Some(&game[start..start + game[start..].find('"')?])
}

/// What a run that samples every ply wrote, with its JSON summary.
struct Run {
    positions: Vec<LabeledPosition>,
    summary: Value,
    stderr: String,
}

/// Runs pgnselect sampling every ply of every game of `text`.
fn sample_every_ply(text: &str) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    std::fs::write(&pgn, text).unwrap();
    let (out, summary) = (dir.path().join("out.epd"), dir.path().join("summary.json"));
    let args = [
        "--min-ply",
        "0",
        "--max-ply",
        "1000",
        "--min-gap",
        "1",
        "--max-gap",
        "1",
    ];
    let run = Command::new(env!("CARGO_BIN_EXE_pgnselect"))
        .args(args)
        .args(["--no-dedup", "--no-progress", "-o"])
        .arg(&out)
        .arg("--summary")
        .arg(&summary)
        .arg(&pgn)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "{stderr}");
    let positions = LabeledReader::new(std::fs::read(&out).unwrap().as_slice(), None)
        .map(|r| r.unwrap().unwrap().1)
        .collect();
    let summary = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    Run {
        positions,
        summary,
        stderr,
    }
}

fn skipped(run: &Run, reason: &str) -> u64 {
    run.summary["skipped"][reason].as_u64().unwrap()
}

fn counted(run: &Run, name: &str) -> u64 {
    run.summary["counts"][name].as_u64().unwrap()
}

/// Whether each position follows from the one before by a legal move, or
/// starts a game (ply 0 or a FEN start).
fn each_follows_by_a_legal_move(positions: &[LabeledPosition]) -> usize {
    let mut starts = 0;
    for pair in positions.windows(2) {
        let (before, after): (&Chess, &Chess) = (&pair[0].position, &pair[1].position);
        let follows = before.legal_moves().into_iter().any(|m| {
            let mut next = before.clone();
            next.play_unchecked(m);
            next == *after
        });
        if !follows {
            starts += 1;
        }
    }
    starts
}

#[test]
fn real_engine_archives_keep_every_game_whose_result_reflects_the_play() {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let all = games(&text);
    assert_eq!(all.len(), 16);
    let dropped = [
        "time forfeit",
        "abandoned",
        "stalled connection",
        "illegal move",
    ];
    let kept: Vec<&String> = all
        .iter()
        .filter(|g| !dropped.contains(&tag(g, "Termination").unwrap()))
        .filter(|g| tag(g, "Variant") != Some("fischerandom"))
        .collect();
    assert_eq!(kept.len(), 11);
    let expected: u64 = kept
        .iter()
        .map(|g| tag(g, "PlyCount").unwrap().parse::<u64>().unwrap() + 1)
        .sum();
    let run = sample_every_ply(&text);
    assert_eq!(counted(&run, "games_read"), 16, "{}", run.stderr);
    assert_eq!(counted(&run, "games_used"), 11, "{}", run.stderr);
    assert_eq!(skipped(&run, "games_abnormal_termination"), 4);
    assert_eq!(skipped(&run, "games_other_variant"), 1);
    assert_eq!(skipped(&run, "games_malformed"), 0, "{}", run.stderr);
    // Every move of every kept game was read: long algebraic, `a8Q`, CRLF
    // and comment-laden games included.
    assert_eq!(run.positions.len() as u64, expected);
    assert_eq!(counted(&run, "positions_written"), expected);
    // The positions are the games' successive positions: 11 game starts.
    assert_eq!(each_follows_by_a_legal_move(&run.positions), 10);
}

#[test]
fn long_algebraic_and_bare_promotions_are_read_as_the_moves_they_mean() {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let all = games(&text);
    let lan = &all[8];
    assert!(lan.contains("Ng1-") || lan.contains("e2-e4") || lan.contains("-"));
    let plies: usize = tag(lan, "PlyCount").unwrap().parse().unwrap();
    let run = sample_every_ply(lan);
    assert_eq!(run.positions.len(), plies + 1, "{}", run.stderr);
    assert_eq!(each_follows_by_a_legal_move(&run.positions), 0);

    let promotion = &all[10];
    assert!(promotion.contains("40. a8Q"), "{promotion}");
    let run = sample_every_ply(promotion);
    let after_promotion = &run.positions[1].position;
    assert_eq!(
        after_promotion.board().piece_at(shakmaty::Square::A8),
        Some(shakmaty::Piece {
            color: shakmaty::Color::White,
            role: shakmaty::Role::Queen
        })
    );
}

/// The fixture with `from` replaced by `to` in its `game`-th game (from 1).
fn mutated(game: usize, from: &str, to: &str) -> (String, usize) {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let start = text.match_indices("[Event ").nth(game - 1).unwrap().0;
    let at = start + text[start..].find(from).unwrap();
    let line = text[..at].matches('\n').count() + 1;
    let mut out = text.clone();
    out.replace_range(at..at + from.len(), to);
    (out, line)
}

/// Runs on a mutated fixture and expects one malformed game reported as
/// `games.pgn:LINE: game N: MESSAGE…` and the other kept games used.
fn expect_one_malformed(text: &str, game: usize, line: usize, message: &str) {
    let run = sample_every_ply(text);
    let needle = format!("games.pgn:{line}: game {game}: {message}");
    assert!(
        run.stderr.contains(&needle),
        "{needle:?} not in\n{}",
        run.stderr
    );
    assert_eq!(skipped(&run, "games_malformed"), 1, "{}", run.stderr);
    assert_eq!(counted(&run, "games_read"), 16, "{}", run.stderr);
    assert_eq!(counted(&run, "games_used"), 10, "{}", run.stderr);
}

#[test]
fn a_stray_token_is_reported_with_its_line_and_text() {
    let (text, line) = mutated(2, "2. ", "2. xyz ");
    expect_one_malformed(&text, 2, line, "stray token \"xyz\" in the movetext");
}

#[test]
fn an_unclosed_comment_costs_only_its_own_game() {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let start = text.match_indices("[Event ").nth(2).unwrap().0;
    let end = text.match_indices("[Event ").nth(3).unwrap().0;
    // Game 3 loses every '}': its first comment runs into game 4.
    let open = start + text[start..].find('{').unwrap();
    let line = text[..open].matches('\n').count() + 1;
    let broken = format!(
        "{}{}{}",
        &text[..start],
        text[start..end].replace('}', " "),
        &text[end..]
    );
    expect_one_malformed(&broken, 3, line, "unterminated comment");
}

#[test]
fn an_unclosed_variation_is_reported() {
    let (text, line) = mutated(4, "3. ", "( 3. ");
    expect_one_malformed(&text, 4, line, "unclosed variation");
}

#[test]
fn a_game_cut_short_is_reported_not_used_in_part() {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let all = games(&text);
    // The collection ends in game 15, cut before its result marker.
    let game = &all[14];
    let result = tag(game, "Result").unwrap();
    let cut = &game[..game.rfind(result).unwrap()];
    let text = format!("{}{cut}", all[..14].concat());
    let run = sample_every_ply(&text);
    assert!(
        run.stderr.contains("game 15: truncated game"),
        "{}",
        run.stderr
    );
    assert_eq!(skipped(&run, "games_malformed"), 1);
    assert_eq!(counted(&run, "games_used"), 10, "{}", run.stderr);
}

/// TCEC writes why a game ended in `TerminationDetails`, beside a generic
/// `Termination` or none: a loss on time, a stalled connection or a
/// disconnection there drops the game as the same words in `Termination`
/// do; TCEC's other reasons (draw rule, SyzygyTB, mates) keep it.
#[test]
fn termination_details_of_tcec_archives_are_read_too() {
    // Game 1 (adjudication, TCEC draw rule) and game 3 (GUI TB
    // adjudication, SyzygyTB) are kept as they are.
    let (text, _) = mutated(1, "TCEC draw rule", "White loses on time");
    let run = sample_every_ply(&text);
    assert_eq!(skipped(&run, "games_abnormal_termination"), 5);
    assert_eq!(counted(&run, "games_used"), 10, "{}", run.stderr);
    // No Termination at all, the reason in TerminationDetails only.
    for details in [
        "Black's connection stalls",
        "White disconnects",
        "illegal move: c7f7",
    ] {
        let (text, _) = mutated(
            2,
            "[Termination \"GUI adjudication\"]",
            &format!("[TerminationDetails \"{details}\"]"),
        );
        let run = sample_every_ply(&text);
        assert_eq!(skipped(&run, "games_abnormal_termination"), 5, "{details}");
        assert_eq!(counted(&run, "games_used"), 10, "{details}: {}", run.stderr);
    }
    let (text, _) = mutated(
        2,
        "[Termination \"GUI adjudication\"]",
        "[TerminationDetails \"White mates\"]",
    );
    let run = sample_every_ply(&text);
    assert_eq!(skipped(&run, "games_abnormal_termination"), 4);
    assert_eq!(counted(&run, "games_used"), 11, "{}", run.stderr);
}
