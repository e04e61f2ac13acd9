//! Every parser of the engine library on thousands of mutated real inputs
//! (the stable-Rust guard of what the fuzz targets in `engine/fuzz` look
//! for): no panic, every error located (file and line where the format has
//! lines) and short, and whatever parses writes back and parses the same.
//! A 10 MB bad line is quoted in part, never whole.

#[path = "support/capture.rs"]
mod capture;
#[path = "support/mutate.rs"]
mod mutate;

use std::io::Cursor;
use std::path::Path;

use capture::Capture;
use engine::chess::position::{fen_of, key, parse_fen, play_uci, polyglot_key};
use engine::formats::book::{BookEntry, PolyglotBook, encode_move};
use engine::formats::labeled::{LabeledPosition, LabeledReader, Labels, parse_line};
use engine::formats::{epd_suite, params_file, perft_suite};
use engine::uci::UciSession;
use mutate::{Mutator, line_count};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use shakmaty::{Chess, Position};

/// Mutated inputs per parser.
const MUTATIONS: usize = 4000;
/// The longest message quoting input.
const MAX_MESSAGE: usize = 400;

fn data(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first `n` lines of a data file.
fn lines(name: &str, n: usize) -> Vec<String> {
    data(name).lines().take(n).map(str::to_string).collect()
}

/// `seeds` joined in groups of `size` lines.
fn blocks(seeds: &[String], size: usize) -> Vec<Vec<u8>> {
    seeds
        .chunks(size)
        .map(|c| (c.join("\n") + "\n").into_bytes())
        .collect()
}

fn mutated(seeds: &[Vec<u8>], seed: u64, count: usize) -> impl Iterator<Item = Vec<u8>> {
    let mut mutator = Mutator::new(seed);
    (0..count).map(move |i| mutator.mutate(&seeds[i % seeds.len()]))
}

/// The board fields of the bundled positions, in the formats the labeled
/// reader knows.
fn labeled_seeds() -> Vec<Vec<u8>> {
    let epd = lines("labeled/masters-quiet-20k.epd", 200);
    let mut seeds = blocks(&epd, 5);
    for line in epd.iter().take(40) {
        let board: Vec<&str> = line.split_whitespace().take(4).collect();
        let board = board.join(" ");
        seeds.push(format!("{board} 0 1 [0.5]\n{board} [1.0]\n").into_bytes());
        seeds.push(format!("{board} 0 1 | 35 | 1-0\n{board} | | 0-1\n").into_bytes());
        seeds.push(format!("fen,result,score\n\"{board} 0 1\",1/2-1/2,12\n").into_bytes());
        seeds.push(format!("{board} hmvc 3; fmvn 20; c2 \"0.0\"; ce -40;\n").into_bytes());
    }
    seeds
}

#[test]
fn fen_and_moves() {
    // Each position with a line of legal moves from it.
    let mut seeds: Vec<Vec<u8>> = lines("labeled/masters-quiet-20k.epd", 300)
        .iter()
        .map(|l| {
            let board: Vec<&str> = l.split_whitespace().take(4).collect();
            let fen = format!("{} 0 1", board.join(" "));
            let mut pos = parse_fen(&fen).expect("bundled positions are legal");
            let mut line = Vec::new();
            for ply in 0..4 {
                let moves = pos.legal_moves();
                let Some(&m) = moves.get(ply * 3 % moves.len().max(1)) else {
                    break;
                };
                line.push(engine::chess::position::uci_of(&m));
                pos.play_unchecked(m);
            }
            format!("{fen}|{}", line.join(" ")).into_bytes()
        })
        .collect();
    seeds.push(b"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1|e2e4 e7e5".to_vec());
    let (mut parsed, mut moves) = (0, 0);
    for input in mutated(&seeds, 1, MUTATIONS) {
        let text = String::from_utf8_lossy(&input);
        let (fen, line) = text.split_once('|').unwrap_or((&text, ""));
        match parse_fen(fen) {
            Ok(pos) => {
                parsed += 1;
                let written = fen_of(&pos);
                let again = parse_fen(&written).expect("a written FEN parses");
                assert_eq!(fen_of(&again), written);
                assert_eq!(key(&again), key(&pos));
                // The written FEN keeps only a usable en-passant square, where the
                // book hash and the key agree.
                assert_eq!(polyglot_key(&again), key(&pos));
                let mut pos = pos;
                for m in line.split_whitespace() {
                    match play_uci(&pos, m) {
                        Ok((next, mv)) => {
                            assert!(pos.is_legal(mv));
                            pos = next;
                            moves += 1;
                        }
                        Err(message) => {
                            assert!(message.len() < MAX_MESSAGE, "{message}");
                            break;
                        }
                    }
                }
            }
            Err(e) => assert!(e.to_string().len() < MAX_MESSAGE, "{e}"),
        }
    }
    // The mutations leave enough valid text to reach the deeper code.
    assert!(parsed > MUTATIONS / 10, "{parsed} parsed");
    assert!(moves > 100, "{moves} moves");
}

#[test]
fn labeled_lines_in_every_format() {
    let seeds = labeled_seeds();
    let (mut records, mut errors, mut ignored_labels) = (0, 0, 0);
    for input in mutated(&seeds, 2, MUTATIONS) {
        let last = line_count(&input);
        let path = Path::new("mutated.epd").to_path_buf();
        // The labeler's reading (labels ignored) of the same input, line by
        // line: the same positions, and never a rejection the strict
        // reading does not make.
        let mut ignoring =
            LabeledReader::new(Cursor::new(&input), Some(path.clone())).labels(Labels::Ignore);
        for item in LabeledReader::new(Cursor::new(&input), Some(path)) {
            let item = item.expect("an in-memory input reads to its end");
            let ignored = ignoring.next().expect("as many items").expect("readable");
            match (&item, &ignored) {
                (Ok((line, record)), _) => assert_eq!(
                    ignored,
                    Ok((*line, LabeledPosition::new(record.position.clone())))
                ),
                (Err(e), Ok((line, _))) => {
                    ignored_labels += 1;
                    assert_eq!(e.line, *line);
                }
                (Err(e), Err(f)) => assert_eq!(e.line, f.line),
            }
            match item {
                Ok((line, record)) => {
                    records += 1;
                    assert!((1..=last).contains(&line));
                    let epd = record.to_epd();
                    let back = parse_line(&epd)
                        .unwrap_or_else(|e| panic!("{epd}: {e}"))
                        .expect("a record");
                    assert_eq!(fen_of(&back.position), fen_of(&record.position));
                    assert_eq!((back.result, back.score), (record.result, record.score));
                }
                Err(e) => {
                    errors += 1;
                    assert!((1..=last).contains(&e.line), "line {} of {last}", e.line);
                    let message = e.to_string();
                    assert!(
                        message.starts_with(&format!("mutated.epd:{}: ", e.line)),
                        "{message}"
                    );
                    assert!(message.len() < MAX_MESSAGE, "{message}");
                }
            }
        }
    }
    assert!(
        records > MUTATIONS / 2 && errors > MUTATIONS / 2,
        "{records} {errors}"
    );
    // Mutated labels reach the label-ignoring reading.
    assert!(ignored_labels > MUTATIONS / 100, "{ignored_labels}");
}

#[test]
fn epd_and_perft_suites() {
    let wac = blocks(&lines("suites/wacnew.epd", 300), 1);
    let mut located = 0;
    for input in mutated(&wac, 3, MUTATIONS) {
        let text = String::from_utf8_lossy(&input);
        for (i, line) in text.lines().enumerate() {
            if let Err(e) = epd_suite::parse_line(line, i + 1) {
                let message = e.to_string();
                assert!(
                    message.starts_with(&format!("line {}:", i + 1)),
                    "{message}"
                );
                assert!(message.len() < MAX_MESSAGE, "{message}");
                located += 1;
            }
        }
    }
    assert!(located > MUTATIONS / 4, "{located}");
    let perft = blocks(&lines("suites/perftsuite.epd", 120), 4);
    for input in mutated(&perft, 4, MUTATIONS) {
        let text = String::from_utf8_lossy(&input);
        match perft_suite::parse_suite(&text) {
            Ok(cases) => assert!(cases.len() <= text.lines().count()),
            Err(e) => {
                let message = e.to_string();
                assert!(message.starts_with("line "), "{message}");
                assert!(message.len() < MAX_MESSAGE, "{message}");
            }
        }
    }
}

#[test]
fn params_files() {
    let text = data("handset.params");
    let all: Vec<String> = text.lines().map(str::to_string).collect();
    let mut seeds = blocks(&all, 40);
    seeds.push(text.clone().into_bytes());
    let path = Path::new("mutated.params");
    let (mut loaded, mut refused) = (0, 0);
    for input in mutated(&seeds, 5, MUTATIONS) {
        let text = String::from_utf8_lossy(&input);
        match params_file::parse(&text, path) {
            Ok(params) => {
                loaded += 1;
                for warning in params.warnings() {
                    assert!(warning.len() < 2 * MAX_MESSAGE, "{warning}");
                }
                let written = params_file::to_text(&params.params, &[]);
                let again = params_file::parse(&written, path).expect("written params load");
                assert_eq!(again.params.to_scalars(), params.params.to_scalars());
            }
            Err(e) => {
                refused += 1;
                let message = e.to_string();
                assert!(message.starts_with("mutated.params:"), "{message}");
                assert!(message.len() < MAX_MESSAGE, "{message}");
            }
        }
    }
    assert!(loaded > 100 && refused > 100, "{loaded} {refused}");
}

/// A real book of random lines from the start position: its bytes.
fn book_bytes() -> Vec<u8> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(6);
    let mut entries = Vec::new();
    for _ in 0..60 {
        let mut pos = Chess::default();
        for _ in 0..8 {
            let moves = pos.legal_moves();
            let Some(&m) = moves.choose(&mut rng) else {
                break;
            };
            entries.push(BookEntry {
                key: key(&pos),
                raw_move: encode_move(&m).expect("a standard move"),
                weight: rng.random_range(0..100),
                learn: 0,
            });
            pos.play_unchecked(m);
        }
    }
    entries.sort_by_key(|e| (e.key, e.raw_move));
    entries.dedup_by_key(|e| (e.key, e.raw_move));
    entries.iter().flat_map(|e| e.to_bytes()).collect()
}

#[test]
fn polyglot_books() {
    let whole = book_bytes();
    let mut seeds = vec![whole.clone()];
    seeds.extend(whole.chunks(16 * 40).map(<[u8]>::to_vec));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let (mut opened, mut played) = (0, 0);
    for input in mutated(&seeds, 8, MUTATIONS) {
        match PolyglotBook::from_bytes(&input, Path::new("mutated.bin")) {
            Ok(book) => {
                opened += 1;
                let start = Chess::default();
                for (m, _) in book.moves(&start) {
                    assert!(start.is_legal(m));
                }
                let mut pos = start;
                for m in book.random_line(&pos, &mut rng, 12) {
                    assert!(pos.is_legal(m));
                    pos.play_unchecked(m);
                    played += 1;
                }
            }
            Err(e) => {
                let message = e.to_string();
                assert!(message.starts_with("mutated.bin:"), "{message}");
            }
        }
    }
    assert!(opened > 100 && played > 100, "{opened} {played}");
}

#[test]
fn uci_sessions() {
    let seeds: Vec<Vec<u8>> = [
        "uci\nisready\nposition startpos moves e2e4 e7e5\ngo depth 2\n",
        "position fen r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3\n\
         go nodes 300\nstop\n",
        "ucinewgame\nposition startpos\ngo wtime 30 btime 30 winc 1 binc 1\n",
        "position startpos moves e2e4\ngo infinite\nisready\nucinewgame\nstop\ngo depth 1\n",
        "setoption name Move Overhead value 10\ngo searchmoves e2e4 d2d4 depth 2\n",
        "go depth -1 nodes x mate 1\nposition fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1\ngo mate 1\n",
        "position fen 8/8/8/8/8/8/8/K1k5 w - - 0 1\ngo movetime 5\nponderhit\nquit\n",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let mut sessions = 0;
    for input in mutated(&seeds, 9, MUTATIONS / 4) {
        let lower = input.to_ascii_lowercase();
        // Options that read files or allocate much are tested elsewhere.
        if [&b"file"[..], b"thread", b"hash"]
            .iter()
            .any(|w| lower.windows(w.len()).any(|x| x == *w))
        {
            continue;
        }
        // A `go` without limits searches a million nodes; keep it short.
        let input: Vec<u8> = String::from_utf8_lossy(&input)
            .replace("go\n", "go nodes 200\n")
            .into_bytes();
        sessions += 1;
        let out = Capture::default();
        let mut session = UciSession::new(out.clone());
        session.run(Cursor::new(&input)).expect("reading a slice");
        let text = out.take();
        for line in text.lines() {
            assert!(line.len() < 2000, "{line}");
            if let Some(best) = line.strip_prefix("bestmove ") {
                let m = best.split_whitespace().next().unwrap_or("");
                assert!(m == "0000" || (4..=5).contains(&m.len()), "{line}");
            }
        }
    }
    assert!(sessions > MUTATIONS / 8, "{sessions}");
}

/// A 10 MB bad line, in every format that quotes input in its errors.
#[test]
fn a_ten_megabyte_line_is_quoted_in_part() {
    let huge = "x".repeat(10_000_000);
    let short = |message: String| {
        assert!(message.len() < MAX_MESSAGE, "{} bytes", message.len());
        assert!(message.contains("bytes)"), "{message}");
    };
    short(parse_fen(&huge).unwrap_err().to_string());
    let line = format!("8/8/8/8/8/8/8/K1k5 w - - c9 \"{huge}\";\n");
    let err = LabeledReader::new(Cursor::new(line), None)
        .next()
        .unwrap()
        .unwrap()
        .unwrap_err();
    short(err.to_string());
    let err = params_file::parse(&format!("tempo.mg {huge}\n"), Path::new("p")).unwrap_err();
    short(err.to_string());
    let err = params_file::parse(&format!("{huge}\n"), Path::new("p")).unwrap_err();
    short(err.to_string());
    let line = format!("8/8/8/8/8/8/8/K1k5 w - - bm {huge};");
    short(epd_suite::parse_line(&line, 1).unwrap_err().to_string());
    short(play_uci(&Chess::default(), &huge).unwrap_err());
}
