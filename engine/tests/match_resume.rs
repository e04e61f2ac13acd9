//! A stopped match resumes where it stopped: through the library (the
//! games already played count and are not replayed; a decided SPRT plays
//! nothing more) and through the binary (killed mid-match, with a torn last
//! journal line, the rerun, with two games at once where the match had one,
//! ends with the games of a match never stopped; a rerun with other
//! settings is refused, naming them; `--overwrite` starts over; the journal goes once the match is over; a PGN written to a
//! device has none; a terminal's Ctrl-C abandons the games in progress and
//! does not reach the external engines, so no forfeit is journaled).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use engine::eval::Params;
use engine::play::game::SearchBudget;
use engine::play::match_runner::{
    Contestant, GameReport, MatchSettings, MoveLimit, PlayerKind, resume_match, run_match,
};
use engine::play::openings::{OpeningOrder, OpeningSource};
use engine::play::sprt::SprtDecision;
use engine::search::SearchParams;

#[path = "support/pgn_times.rs"]
mod pgn_times;
use pgn_times::without_move_times;

/// A report with the times of its moves left out of its PGN.
fn timeless(report: &GameReport) -> GameReport {
    GameReport {
        pgn: without_move_times(&report.pgn),
        ..report.clone()
    }
}

/// Four quiet opening positions from real games.
const OPENINGS_EPD: &str = "\
r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - c0 \"two knights\";
rnbqkb1r/pp2pppp/3p1n2/8/3NP3/2N5/PPP2PPP/R1BQKB1R b KQkq - c0 \"sicilian\";
rnbqkb1r/ppp2ppp/4pn2/3p4/2PP4/2N5/PP2PPPP/R1BQKBNR w KQkq - c0 \"queen's gambit declined\";
r1bqkbnr/1ppp1ppp/p1n5/4p3/B3P3/5N2/PPPP1PPP/RNBQK2R b KQkq - c0 \"ruy lopez\";
";

fn openings_file(dir: &Path) -> PathBuf {
    let path = dir.join("openings.epd");
    std::fs::write(&path, OPENINGS_EPD).unwrap();
    path
}

fn settings(games: usize, openings: &Path) -> MatchSettings {
    let player = |name: &str| Contestant {
        name: name.to_string(),
        kind: PlayerKind::InProcess {
            params: Arc::new(Params::defaults()),
            search: SearchParams::default(),
        },
    };
    MatchSettings {
        players: [player("a"), player("b")],
        games,
        first_game: 0,
        repeat: 2,
        openings: OpeningSource::load(openings, 0, 0).unwrap(),
        order: OpeningOrder::Sequential,
        limit: MoveLimit::Fixed(SearchBudget::Nodes(500)),
        resign: None,
        draw: None,
        max_plies: Some(50),
        concurrency: 1,
        seed: 1,
        hash_mb: 1,
        sprt: None,
        event: "resume test".into(),
    }
}

#[test]
fn resumed_match_counts_the_played_games_and_plays_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let s = settings(8, &openings_file(dir.path()));
    let mut whole = Vec::new();
    let full = run_match(&s, &AtomicBool::new(false), |r, _| whole.push(r.clone())).unwrap();
    assert_eq!(whole.len(), 8);

    // Games 0, 1, 2 and 5 were over when the match stopped (concurrency
    // leaves gaps): the rest are played, and only they.
    let played: Vec<GameReport> = [0, 1, 2, 5].iter().map(|&i| whole[i].clone()).collect();
    let mut rest = Vec::new();
    let resumed = resume_match(&s, &played, &AtomicBool::new(false), |r, _| {
        rest.push(r.clone())
    })
    .unwrap();
    let indices: Vec<usize> = rest.iter().map(|r| r.index).collect();
    assert_eq!(indices, [3, 4, 6, 7]);
    for report in &rest {
        assert_eq!(
            timeless(report),
            timeless(&whole[report.index]),
            "game {}",
            report.index
        );
    }
    assert_eq!(resumed.games_played, 8);
    assert!(!resumed.stopped_early);
    assert_eq!(resumed.standing.record, full.standing.record);
    assert_eq!(resumed.standing.pairs, full.standing.pairs);
    assert_eq!(resumed.standing.endings, full.standing.endings);

    // A played game outside the match or counted twice is refused.
    let twice = [whole[1].clone(), whole[1].clone()];
    assert!(resume_match(&s, &twice, &AtomicBool::new(false), |_, _| {}).is_err());
    let short = settings(2, &openings_file(dir.path()));
    assert!(resume_match(&short, &whole[..3], &AtomicBool::new(false), |_, _| {}).is_err());

    // An SPRT the played games already decide plays nothing more.
    let mut sprt = settings(8, &openings_file(dir.path()));
    sprt.sprt = Some("elo0=200 elo1=400 alpha=0.2 beta=0.2".parse().unwrap());
    let mut decided = Vec::new();
    run_match(&sprt, &AtomicBool::new(false), |r, standing| {
        decided.push(r.clone());
        assert!(decided.len() <= 8, "{standing:?}");
    })
    .unwrap();
    let mut more = 0;
    let again = resume_match(&sprt, &decided, &AtomicBool::new(false), |_, _| more += 1).unwrap();
    assert!(decided.len() < 8, "the test's SPRT decides early");
    assert_eq!(more, 0);
    assert_ne!(again.standing.sprt, Some(SprtDecision::Continue));
    assert_eq!(again.games_played, decided.len());
}

/// Games of the matches [`engine_match`] runs: enough that a match still
/// has most of them to play when a test that waited for its first games
/// stops it, even when a loaded machine keeps the test waiting a while
/// (with 8 games, a match could end before the test's next look).
const GAMES: usize = 40;

fn engine_match(dir: &Path, pgn: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_engine"));
    let games = GAMES.to_string();
    command
        .args([
            "match",
            "--games",
            &games,
            "--nodes",
            "500",
            "--max-plies",
            "50",
        ])
        .arg("--openings")
        .arg(dir.join("openings.epd"))
        .arg("--pgn")
        .arg(pgn)
        .args(extra);
    command
}

fn run(mut command: Command) -> Output {
    command.output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The games of a PGN text by their `Round` tag (the game's number).
fn games_by_round(pgn: &str) -> std::collections::BTreeMap<usize, String> {
    pgn.split("[Event ")
        .filter(|game| !game.trim().is_empty())
        .map(|game| {
            let round = game
                .split("[Round \"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .and_then(|n| n.parse().ok())
                .expect("every game has a numbered Round tag");
            (round, game.trim_end().to_string())
        })
        .collect()
}

/// Games in a match journal (its first two lines are the header).
fn journaled_games(journal: &Path) -> usize {
    std::fs::read_to_string(journal).map_or(0, |t| t.lines().count().saturating_sub(2))
}

/// Waits until the running match `child` has journaled `games` games.
fn wait_until_journaled(child: &mut Child, journal: &Path, games: usize) {
    let started = Instant::now();
    while journaled_games(journal) < games {
        assert!(child.try_wait().unwrap().is_none(), "the match ended early");
        assert!(started.elapsed() < Duration::from_secs(120), "no games");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn killed_match_resumes_to_the_games_of_a_match_never_stopped() {
    let dir = tempfile::tempdir().unwrap();
    openings_file(dir.path());
    let reference = dir.path().join("reference.pgn");
    let out = run(engine_match(dir.path(), &reference, &[]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(!dir.path().join("reference.pgn.journal").exists());
    let expected = std::fs::read_to_string(&reference).unwrap();
    assert_eq!(expected.matches("[Event ").count(), GAMES);

    // Killed (no chance to clean up) once three games are journaled.
    let pgn = dir.path().join("games.pgn");
    let journal = dir.path().join("games.pgn.journal");
    let mut child = engine_match(dir.path(), &pgn, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until_journaled(&mut child, &journal, 3);
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = journaled_games(&journal);
    assert!((3..GAMES).contains(&kept), "{kept} games journaled");
    assert!(!pgn.exists(), "the PGN is only written when the match ends");
    // The kill tore the last record in half: it is dropped and replayed.
    let mut torn = std::fs::read_to_string(&journal).unwrap();
    let last = torn.trim_end().rsplit('\n').next().unwrap().to_string();
    torn.truncate(torn.len() - last.len() - 1);
    torn.push_str(&last[..last.len() / 2]);
    std::fs::write(&journal, &torn).unwrap();

    // Other settings are refused, naming the difference; the journal stays.
    let out = run(engine_match(dir.path(), &pgn, &["--seed", "2"]));
    assert!(!out.status.success());
    let message = text(&out);
    assert!(
        message.contains("seed: \"1\" in the journal, \"2\" now"),
        "{message}"
    );
    assert!(message.contains("--overwrite"), "{message}");
    assert!(journal.exists());

    // At fixed nodes the games at once may change on resume: each game is
    // decided by its number alone, whichever worker plays it.
    let out = run(engine_match(dir.path(), &pgn, &["--concurrency", "2"]));
    let log = text(&out);
    assert!(out.status.success(), "{log}");
    assert!(
        log.contains(&format!(
            "resuming from {}: {} games played",
            journal.display(),
            kept - 1
        )),
        "{log}"
    );
    assert_eq!(
        log.lines().filter(|l| l.starts_with("game ")).count(),
        GAMES - (kept - 1),
        "{log}"
    );
    assert!(log.contains(&format!(": {GAMES} games")), "{log}");
    // The same games, move for move, score for score; only the times the
    // moves took differ between runs, and the order in which the two
    // workers finished theirs.
    assert_eq!(
        games_by_round(&without_move_times(&std::fs::read_to_string(&pgn).unwrap())),
        games_by_round(&without_move_times(&expected))
    );
    assert!(!journal.exists(), "the journal goes once the match is over");

    // --overwrite discards an unfinished match's journal and starts over.
    std::fs::write(&journal, &torn).unwrap();
    let out = run(engine_match(
        dir.path(),
        &pgn,
        &["--seed", "2", "--overwrite"],
    ));
    let log = text(&out);
    assert!(out.status.success(), "{log}");
    assert!(!log.contains("resuming"), "{log}");
    assert_eq!(
        log.lines().filter(|l| l.starts_with("game ")).count(),
        GAMES
    );
    assert!(!journal.exists());
}

#[test]
fn games_written_to_a_device_have_no_journal_and_dash_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    openings_file(dir.path());
    let out = run(engine_match(dir.path(), Path::new("/dev/null"), &[]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(!Path::new("/dev/null.journal").exists());
    let out = run(engine_match(dir.path(), Path::new("-"), &[]));
    assert!(!out.status.success());
    assert!(
        text(&out).contains("--pgn -: standard output carries"),
        "{}",
        text(&out)
    );
    assert!(!Path::new("-").exists() && !dir.path().join("-").exists());
}

/// A process's parent and process group, from `/proc/PID/stat` (the
/// fields after the command name in parentheses: state, parent, group);
/// `None` once it is gone.
fn parent_and_group(pid: u32) -> Option<(u32, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat[stat.rfind(')')? + 2..].split(' ').skip(1);
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

/// The running children of process `parent`.
fn children_of(parent: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|&pid| parent_and_group(pid).is_some_and(|(p, _)| p == parent))
        .collect()
}

#[test]
fn ctrl_c_to_the_terminal_abandons_the_game_instead_of_forfeiting_it() {
    // A terminal's Ctrl-C signals its whole foreground process group. The
    // match runs in a group of its own here, so the signal reaches the
    // match and whatever shares its group, and nothing of the test's.
    let dir = tempfile::tempdir().unwrap();
    openings_file(dir.path());
    let pgn = dir.path().join("games.pgn");
    let journal = dir.path().join("games.pgn.journal");
    let ours = env!("CARGO_BIN_EXE_engine");
    let external = ["--engine-a", ours, "--engine-b", ours];
    let mut command = engine_match(dir.path(), &pgn, &external);
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let group = child.id();
    assert_eq!(
        parent_and_group(group).unwrap().1,
        group,
        "a group of its own"
    );
    assert_ne!(parent_and_group(std::process::id()).unwrap().1, group);
    wait_until_journaled(&mut child, &journal, 2);
    // The engines were moved out of the match's group: a terminal's Ctrl-C
    // does not reach them.
    let engines = children_of(group);
    assert_eq!(engines.len(), 2, "the two engines run");
    for engine in engines {
        assert_ne!(parent_and_group(engine).unwrap().1, group);
    }
    // Mid-game: the engines are searching or between moves.
    std::thread::sleep(Duration::from_millis(30));
    let status = Command::new("kill")
        .args(["-s", "INT", "--", &format!("-{group}")])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let log = text(&out);
    assert_eq!(out.status.code(), Some(130), "{log}");
    let kept = std::fs::read_to_string(&journal).unwrap();
    assert!(
        !kept.contains("Forfeit"),
        "a forfeit was journaled:\n{kept}"
    );

    // The resumed match plays the rest without a forfeit either.
    let out = run(engine_match(dir.path(), &pgn, &external));
    let log = text(&out);
    assert!(out.status.success(), "{log}");
    let games = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(games.matches("[Event ").count(), GAMES);
    assert!(
        !games.contains("forfeit") && !games.contains("abandoned"),
        "{games}"
    );
}
