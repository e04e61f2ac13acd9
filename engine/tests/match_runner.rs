//! `engine match`: short matches through the library and the binary —
//! results add up, each opening is played with both colours, the PGN is
//! readable by python-chess with every move's score, depth and time in its
//! comment, a crippled evaluation loses, failing external
//! engines lose with the reason recorded while the match continues, and a
//! node-limited match is reproducible.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use engine::eval::Params;
use engine::formats::params_file;
use engine::play::game::{ResignRule, SearchBudget};
use engine::play::match_runner::{
    Contestant, ForfeitReason, GameEnd, GameReport, MatchSettings, MatchSummary, MoveLimit,
    PlayerKind, Side, run_match,
};
use engine::play::openings::{OpeningOrder, OpeningSource};
use engine::play::sprt::SprtDecision;
use engine::play::uci_client::EngineSpec;
use engine::search::SearchParams;

#[path = "support/pgn_times.rs"]
mod pgn_times;
use pgn_times::without_move_times;

/// Two quiet opening positions from real games (White and Black to move).
const OPENINGS_EPD: &str = "\
r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - c0 \"two knights\";
rnbqkb1r/pp2pppp/3p1n2/8/3NP3/2N5/PPP2PPP/R1BQKB1R b KQkq - c0 \"sicilian\";
";

fn openings_file(dir: &Path) -> PathBuf {
    let path = dir.join("openings.epd");
    std::fs::write(&path, OPENINGS_EPD).unwrap();
    path
}

fn defaults(name: &str) -> Contestant {
    Contestant {
        name: name.to_string(),
        kind: PlayerKind::InProcess {
            params: Arc::new(Params::defaults()),
            search: SearchParams::default(),
        },
    }
}

fn settings(a: Contestant, b: Contestant, games: usize, openings: OpeningSource) -> MatchSettings {
    MatchSettings {
        players: [a, b],
        games,
        first_game: 0,
        repeat: 2,
        openings,
        order: OpeningOrder::Sequential,
        limit: MoveLimit::Fixed(SearchBudget::Nodes(800)),
        resign: Some(ResignRule {
            score: 800,
            moves: 3,
        }),
        draw: None,
        max_plies: Some(160),
        concurrency: 1,
        seed: 1,
        hash_mb: 1,
        sprt: None,
        event: "test".into(),
    }
}

fn play(settings: &MatchSettings) -> (MatchSummary, Vec<GameReport>) {
    let mut reports = Vec::new();
    let summary = run_match(settings, &AtomicBool::new(false), |report, _| {
        reports.push(report.clone())
    })
    .expect("the match runs");
    (summary, reports)
}

#[test]
fn binary_match_adds_up_and_writes_readable_pgn() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args([
            "match",
            "--games",
            "4",
            "--nodes",
            "600",
            "--max-plies",
            "120",
        ])
        .arg("--openings")
        .arg(openings_file(dir.path()))
        .arg("--pgn")
        .arg(&pgn)
        .arg("--report-openings")
        .arg("--summary")
        .arg(dir.path().join("summary.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().filter(|l| l.starts_with("game ")).count(), 4);
    let totals = stdout
        .lines()
        .skip_while(|l| !l.starts_with("final:"))
        .nth(1)
        .expect("a final summary");
    let counts: Vec<u64> = totals
        .split_whitespace()
        .skip(1)
        .take(3)
        .map(|w| w[1..].parse().unwrap())
        .collect();
    assert_eq!(counts.iter().sum::<u64>(), 4, "{totals}");
    assert!(
        stdout.contains("score by ECO family of the opening:"),
        "{stdout}"
    );

    let check = Command::new("python3")
        .args(["-c", "import chess.pgn"])
        .status();
    if !check.is_ok_and(|s| s.success()) {
        eprintln!("notice: python-chess is missing; PGN readability not checked");
        return;
    }
    let script = r#"
import re, sys, chess.pgn
games = []
with open(sys.argv[1]) as f:
    while (g := chess.pgn.read_game(f)) is not None:
        assert not g.errors, g.errors
        board = g.end().board()
        h = g.headers
        assert int(h["PlyCount"]) == len(list(g.mainline_moves()))
        # Every move carries the mover's score, depth and time.
        for node in g.mainline():
            assert re.match(r"[+-](\d+\.\d\d|M\d+)/\d+ \d+\.\d{3}s", node.comment), node.comment
        games.append((h["FEN"], h["White"], h["Black"], h["Result"], h["Termination"]))
assert len(games) == 4, games
for first, second in (games[0:2], games[2:4]):
    assert first[0] == second[0], "a pair shares its opening"
    assert (first[1], first[2]) == (second[2], second[1]), "colours swap"
assert games[0][0] != games[2][0]
print("ok", len(games))
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(&pgn)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn library_match_plays_each_opening_with_both_colours() {
    let dir = tempfile::tempdir().unwrap();
    let openings = OpeningSource::load(&openings_file(dir.path()), 0, 0).unwrap();
    let (summary, reports) = play(&settings(defaults("a"), defaults("b"), 4, openings));
    let r = summary.standing.record;
    assert_eq!(r.wins + r.draws + r.losses, 4);
    assert_eq!(summary.games_played, 4);
    let whites: Vec<Side> = reports.iter().map(|g| g.white).collect();
    assert_eq!(whites, [Side::A, Side::B, Side::A, Side::B]);
    assert_eq!(fen_tag(&reports[0]), fen_tag(&reports[1]));
    assert_eq!(fen_tag(&reports[2]), fen_tag(&reports[3]));
    assert_ne!(fen_tag(&reports[0]), fen_tag(&reports[2]));
}

/// The `[FEN …]` tag of a game (the opening of an EPD list).
fn fen_tag(g: &GameReport) -> String {
    g.pgn
        .lines()
        .find(|l| l.starts_with("[FEN "))
        .unwrap()
        .to_string()
}

#[test]
fn pairs_are_counted_whatever_order_games_finish_in() {
    let dir = tempfile::tempdir().unwrap();
    let openings = OpeningSource::load(&openings_file(dir.path()), 0, 0).unwrap();
    let mut s = settings(defaults("a"), defaults("b"), 9, openings);
    s.concurrency = 3;
    let (summary, reports) = play(&s);
    let standing = &summary.standing;
    assert!(standing.paired);
    assert_eq!(standing.pairs.pairs(), 4, "the 9th game has no partner");
    assert_eq!(standing.waiting.keys().copied().collect::<Vec<_>>(), [8]);
    // The pairs' games are the record minus the unpaired game.
    let mut games = standing.pairs.games();
    games.add(reports.iter().find(|g| g.index == 8).unwrap().score_of_a());
    assert_eq!(games, standing.record);
    // Each pair as the reports say it.
    let mut expected = engine::play::elo::Pentanomial::default();
    for first in (0..8).step_by(2) {
        let score = |i: usize| reports.iter().find(|g| g.index == i).unwrap().score_of_a();
        expected.add(score(first), score(first + 1));
    }
    assert_eq!(standing.pairs, expected);
}

#[test]
fn repeat_plays_each_opening_that_many_times() {
    let dir = tempfile::tempdir().unwrap();
    let openings = OpeningSource::load(&openings_file(dir.path()), 0, 0).unwrap();
    let mut s = settings(defaults("a"), defaults("b"), 8, openings);
    s.repeat = 4;
    s.limit = MoveLimit::Fixed(SearchBudget::Nodes(200));
    let (summary, mut reports) = play(&s);
    reports.sort_by_key(|g| g.index);
    let whites: Vec<Side> = reports.iter().map(|g| g.white).collect();
    assert_eq!(whites, [Side::A, Side::B].repeat(4));
    let fens: Vec<String> = reports.iter().map(fen_tag).collect();
    assert!(fens[..4].iter().all(|f| *f == fens[0]));
    assert!(fens[4..].iter().all(|f| *f == fens[4]) && fens[0] != fens[4]);
    assert_eq!(summary.standing.pairs.pairs(), 4);

    // Repeat 1: one game per opening, colours alternating, no pairs; the
    // SPRT then runs on the games.
    s.repeat = 1;
    s.games = 4;
    s.sprt = Some("elo0=0 elo1=5".parse().unwrap());
    let (summary, mut reports) = play(&s);
    reports.sort_by_key(|g| g.index);
    let fens: Vec<String> = reports.iter().map(fen_tag).collect();
    assert_ne!(fens[0], fens[1]);
    assert_eq!(
        (fens[0].clone(), fens[1].clone()),
        (fens[2].clone(), fens[3].clone())
    );
    assert!(!summary.standing.paired && summary.standing.pairs.pairs() == 0);
    let sprt = s.sprt.unwrap();
    assert_eq!(
        summary.standing.llr,
        Some(sprt.llr_games(&summary.standing.record))
    );

    // A later part of a match plays that part's openings and colours.
    let (_, whole) = play(&settings(
        defaults("a"),
        defaults("b"),
        4,
        OpeningSource::load(&openings_file(dir.path()), 0, 0).unwrap(),
    ));
    let mut later = settings(
        defaults("a"),
        defaults("b"),
        2,
        OpeningSource::load(&openings_file(dir.path()), 0, 0).unwrap(),
    );
    later.first_game = 2;
    let (_, part) = play(&later);
    let pgns = |r: &[GameReport]| {
        r.iter()
            .map(|g| without_move_times(&g.pgn))
            .collect::<Vec<_>>()
    };
    assert_eq!(pgns(&part), pgns(&whole[2..]));
}

#[test]
fn games_carry_their_opening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("najdorf.pgn");
    std::fs::write(
        &path,
        "[Event \"x\"]\n\n1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 *\n",
    )
    .unwrap();
    let openings = OpeningSource::load(&path, 10, 0).unwrap();
    let mut s = settings(defaults("a"), defaults("b"), 2, openings);
    s.max_plies = Some(30);
    let (_, reports) = play(&s);
    for g in &reports {
        let eco = g.eco.as_ref().expect("a named opening");
        // The Najdorf (B90) or a deeper line of it.
        assert!(eco.eco.starts_with("B9"), "{eco:?}");
        assert_eq!(eco.opening(), "Sicilian Defense");
        assert!(
            g.pgn.contains(&format!("[ECO \"{}\"]", eco.eco)),
            "{}",
            g.pgn
        );
        assert!(g.pgn.contains("[Opening \"Sicilian Defense\"]"));
    }
}

#[test]
fn node_limited_match_is_reproducible() {
    let run = || {
        let (_, reports) = play(&settings(
            defaults("a"),
            defaults("b"),
            2,
            OpeningSource::Standard,
        ));
        reports
            .into_iter()
            .map(|g| without_move_times(&g.pgn))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}

#[test]
fn crippled_material_loses_to_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = params_file::to_text(&Params::defaults(), &[])
        .lines()
        .map(|line| {
            let piece = ["knight", "bishop", "rook", "queen"]
                .iter()
                .any(|p| line.starts_with(&format!("material[{p}]")));
            if piece {
                let name = line.split_whitespace().next().unwrap();
                format!("{name} 0\n")
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    let path = dir.path().join("crippled.params");
    std::fs::write(&path, text).unwrap();
    let crippled = params_file::read_file(&path).unwrap().params;
    let a = Contestant {
        name: "crippled".into(),
        kind: PlayerKind::InProcess {
            params: Arc::new(crippled),
            search: SearchParams::default(),
        },
    };
    let openings = OpeningSource::load(&openings_file(dir.path()), 0, 0).unwrap();
    let mut s = settings(a, defaults("defaults"), 4, openings);
    s.limit = MoveLimit::Fixed(SearchBudget::Nodes(2000));
    let (summary, _) = play(&s);
    let r = summary.standing.record;
    assert!(r.losses >= 3 && r.wins == 0, "{r:?}");

    // An SPRT stops the match early, accepting H0 (not stronger). Losing
    // every pair, the LLR falls by ln((1 - s(30))/(1 - s(0))) = 0.089 a
    // pair: H0 after 34 pairs.
    s.games = 200;
    s.limit = MoveLimit::Fixed(SearchBudget::Nodes(500));
    s.sprt = Some("elo0=0 elo1=30 alpha=0.05 beta=0.05".parse().unwrap());
    let (summary, _) = play(&s);
    assert!(summary.stopped_early, "{summary:?}");
    assert_eq!(summary.standing.sprt, Some(SprtDecision::AcceptH0));
    assert!(summary.games_played < 100, "{summary:?}");
}

/// A fake UCI engine: handshake, then `on_go` (shell) for every `go`.
fn fake_engine(dir: &Path, name: &str, on_go: &str) -> EngineSpec {
    let path = dir.join(format!("{name}.sh"));
    let mut file = std::fs::File::create(&path).unwrap();
    write!(
        file,
        "while read -r line; do\n  case \"$line\" in\n    uci) echo \"id name {name}\"; echo uciok;;\n    \
         isready) echo readyok;;\n    go*) {on_go};;\n    quit) exit 0;;\n  esac\ndone\n"
    )
    .unwrap();
    EngineSpec {
        command: format!("sh {}", path.display()),
        options: vec![("Hash".into(), "1".into())],
        timeout: Duration::from_millis(500),
    }
}

fn assert_all_forfeited_by_b(reports: &[GameReport], reason: ForfeitReason, detail: &str) {
    assert_eq!(reports.len(), 2, "the match continues after a failure");
    for g in reports {
        let GameEnd::Forfeit {
            loser,
            reason: got,
            detail: text,
        } = &g.end
        else {
            panic!("a forfeit: {g:?}")
        };
        assert_eq!((*loser, *got), (Side::B, reason));
        assert!(text.contains(detail), "{text}");
        assert_eq!(g.score_of_a(), 1.0);
        assert!(
            g.pgn.contains(&format!("fake loses by {}", reason.name())),
            "{}",
            g.pgn
        );
        assert!(
            g.pgn
                .contains(&format!("[Termination \"{}\"]", reason.pgn_termination()))
        );
    }
}

#[test]
fn failing_external_engines_lose_and_the_match_continues() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "echo 'bestmove a1a2'",
            ForfeitReason::IllegalMove,
            "a1a2 is not legal",
        ),
        ("exit 1", ForfeitReason::Crash, "exited"),
        ("true", ForfeitReason::Hang, "timed out"),
    ];
    for (i, (on_go, reason, detail)) in cases.into_iter().enumerate() {
        let b = Contestant {
            name: "fake".into(),
            kind: PlayerKind::External(fake_engine(dir.path(), &format!("fake{i}"), on_go)),
        };
        let (summary, reports) = play(&settings(defaults("a"), b, 2, OpeningSource::Standard));
        assert_eq!(summary.standing.record.wins, 2);
        assert_eq!(summary.standing.forfeits[&(Side::B, reason)], 2);
        assert_all_forfeited_by_b(&reports, reason, detail);
    }
}
