//! Every rule of the annotated file and of the collection filters, on small
//! PGN fixtures, with the resulting book weights asserted exactly (weight =
//! 100 × b, see `makebook --help`).

mod support;

use support::{Fixtures, book_moves, weight};

fn moves(list: &[(&str, u16)]) -> Vec<(String, u16)> {
    let mut v: Vec<(String, u16)> = list.iter().map(|(m, w)| (m.to_string(), *w)).collect();
    v.sort();
    v
}

#[test]
fn explicit_weights_and_move_glyphs() {
    let pgn = "[Event \"glyphs\"]\n\n\
        1. e4 $1 {weight: 40} (1. d4 {weight:0}) (1. c4!) (1. Nf3!?) (1. b3?!) (1. g4?)\n\
        (1. f4??) (1. Nc3!!) (1. e3) (1. a3 $1) (1. h3 $2) (1. b4 $3) (1. g3 $4) (1. c3 $5)\n\
        (1. d3 $6) *\n";
    let fx = Fixtures::new();
    let (book, _) = fx.build(&[pgn], &[]);
    assert_eq!(
        book_moves(&book, &[]),
        moves(&[
            ("e2e4", 4000),  // explicit weight beats the glyph
            ("d2d4", 0),     // weight 0: kept, never played
            ("c2c4", 7500),  // ! : neutral 50 × 1.5
            ("g1f3", 6250),  // !? : × 1.25
            ("b2b3", 3750),  // ?! : × 0.75
            ("g2g4", 0),     // ? : never played
            ("f2f4", 0),     // ?? : never played
            ("b1c3", 20000), // !! : maximum
            ("e2e3", 5000),  // no mark: neutral
            ("a2a3", 7500),
            ("h2h3", 0),
            ("b2b4", 20000),
            ("g2g3", 0),
            ("c2c3", 6250),
            ("d2d3", 3750),
        ])
    );
    // Weight-0 moves are in the book but never chosen.
    use rand::SeedableRng;
    let start = shakmaty::Chess::default();
    for seed in 0..500 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let m = book.choose_move(&start, &mut rng).unwrap();
        let w = weight(&book, &[], &engine::chess::position::uci_of(&m)).unwrap();
        assert!(w > 0);
    }
}

#[test]
fn line_evaluations_adjust_the_moves_of_their_line() {
    let pgn = "\
[Event \"main line and a variation\"]

1. e4 e5 (1... c5 2. Nf3 $19) 2. Nf3 Nc6 $16 *

[Event \"evaluation in the middle of a line is not an end of line\"]

1. d4 $14 d5 *

[Event \"one move in two evaluated lines: averaged\"]

1. c4 c5 $14 *

[Event \"second line\"]

1. c4 e5 $15 *

[Event \"first weight wins\"]

1. Nf3 {weight:30} *

[Event \"later weight ignored\"]

1. Nf3 {weight:70} *
";
    let fx = Fixtures::new();
    let (book, _) = fx.build(&[pgn], &[]);
    // $16 (White +2) at the end of the main line: White's moves × 1.25,
    // Black's × 0.75.
    assert_eq!(weight(&book, &[], "e2e4"), Some(6250));
    assert_eq!(weight(&book, &["e2e4"], "e7e5"), Some(3750));
    assert_eq!(weight(&book, &["e2e4", "e7e5"], "g1f3"), Some(6250));
    assert_eq!(weight(&book, &["e2e4", "e7e5", "g1f3"], "b8c6"), Some(3750));
    // $19 (Black +3) at the end of the variation: Black × 1.375, White ×
    // 0.625, and only for the variation's own moves.
    assert_eq!(weight(&book, &["e2e4"], "c7c5"), Some(6875));
    assert_eq!(weight(&book, &["e2e4", "c7c5"], "g1f3"), Some(3125));
    // Not at the end of the line: no effect.
    assert_eq!(weight(&book, &[], "d2d4"), Some(5000));
    assert_eq!(weight(&book, &["d2d4"], "d7d5"), Some(5000));
    // 1. c4 is in a +1 line and a −1 line: mean 0.
    assert_eq!(weight(&book, &[], "c2c4"), Some(5000));
    assert_eq!(weight(&book, &["c2c4"], "c7c5"), Some(4375));
    assert_eq!(weight(&book, &["c2c4"], "e7e5"), Some(5625));
    // The first explicit weight wins.
    assert_eq!(weight(&book, &[], "g1f3"), Some(3000));
}

#[test]
fn annotated_moves_combine_with_collection_statistics() {
    let annotated = "[Event \"a\"]\n\n1. e4! (1. d4) (1. c4?) *\n";
    let mut collection = String::new();
    for _ in 0..6 {
        collection.push_str("[Result \"1-0\"]\n\n1. e4 e5 1-0\n\n");
    }
    collection.push_str("[Result \"0-1\"]\n\n1. d4 d5 0-1\n\n");
    for _ in 0..2 {
        collection.push_str("[Result \"1/2-1/2\"]\n\n1. Nf3 d5 1/2-1/2\n\n");
    }
    let fx = Fixtures::new();
    let (book, _) = fx.build(&[annotated, &collection], &[]);
    assert_eq!(
        book_moves(&book, &[]),
        moves(&[
            // 6 games, all won: raw 6, the best move (b = 100), then ! × 1.5.
            ("e2e4", 15000),
            // 2 draws: raw 0.5 → b = 100 × 0.5 / 6.
            ("g1f3", 833),
            // Annotated and rare in the collections (1 game < 5): neutral 50,
            // although it lost its only game.
            ("d2d4", 5000),
            // Annotated ?, absent from the collections: kept with weight 0.
            ("c2c4", 0),
        ])
    );
    // 1... e5 lost all its games: never scored, left out.
    assert_eq!(book_moves(&book, &["e2e4"]), moves(&[]));
    assert_eq!(book_moves(&book, &["d2d4"]), moves(&[("d7d5", 10000)]));
    assert_eq!(book_moves(&book, &["g1f3"]), moves(&[("d7d5", 10000)]));
}

#[test]
fn the_annotated_file_is_exempt_from_max_ply_and_min_count() {
    let annotated = "[Event \"a\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *\n";
    let collection = "[Result \"1-0\"]\n\n1. d4 d5 2. c4 e6 1-0\n\n\
                      [Result \"1-0\"]\n\n1. e4 e5 2. Nf3 Nc6 1-0\n";
    let fx = Fixtures::new();
    let (book, _) = fx.build(&[annotated, collection], &["-p", "2", "-m", "2"]);
    // 1. e4 was played once (< 2) but is annotated; 1. d4 is dropped.
    assert_eq!(book_moves(&book, &[]), moves(&[("e2e4", 5000)]));
    assert_eq!(
        weight(&book, &["e2e4", "e7e5", "g1f3", "b8c6"], "f1b5"),
        Some(5000)
    );
    assert_eq!(
        weight(&book, &["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"], "a7a6"),
        Some(5000)
    );
    assert!(book_moves(&book, &["d2d4"]).is_empty());
    assert!(book_moves(&book, &["d2d4", "d7d5"]).is_empty());
}

#[test]
fn max_ply_counts_plies_from_zero() {
    let collection = "[Result \"1/2-1/2\"]\n\n1. d4 d5 2. c4 e6 1/2-1/2\n";
    let fx = Fixtures::new();
    let (book, _) = fx.build(&[collection], &["--collections-only", "-p", "3"]);
    assert!(weight(&book, &["d2d4", "d7d5"], "c2c4").is_some());
    assert!(book_moves(&book, &["d2d4", "d7d5", "c2c4"]).is_empty());
}

#[test]
fn colour_elo_and_score_filters() {
    let games = "\
[WhiteElo \"2500\"]\n[BlackElo \"2000\"]\n[Result \"1/2-1/2\"]\n\n1. e4 e5 1/2-1/2\n\n\
[WhiteElo \"1800\"]\n[BlackElo \"2600\"]\n[Result \"1/2-1/2\"]\n\n1. d4 d5 1/2-1/2\n\n\
[Result \"1/2-1/2\"]\n\n1. c4 c5 1/2-1/2\n";
    let fx = Fixtures::new();
    let (book, _) = fx.build(&[games], &["--collections-only", "--only-white"]);
    assert_eq!(book_moves(&book, &[]).len(), 3);
    assert!(book_moves(&book, &["e2e4"]).is_empty());

    let (book, _) = fx.build(&[games], &["--collections-only", "--only-black"]);
    assert!(book_moves(&book, &[]).is_empty());
    assert_eq!(book_moves(&book, &["e2e4"]), moves(&[("e7e5", 10000)]));

    // Unrated players' moves (1. c4 c5) are left out too.
    let (book, _) = fx.build(&[games], &["--collections-only", "--min-elo", "2400"]);
    assert_eq!(book_moves(&book, &[]), moves(&[("e2e4", 10000)]));
    assert!(book_moves(&book, &["e2e4"]).is_empty());
    assert_eq!(book_moves(&book, &["d2d4"]), moves(&[("d7d5", 10000)]));

    let scored = "[Result \"1-0\"]\n\n1. e4 1-0\n\n[Result \"0-1\"]\n\n1. e4 0-1\n\n\
                  [Result \"1-0\"]\n\n1. d4 1-0\n";
    let (book, _) = fx.build(&[scored], &["--collections-only", "--min-score", "60"]);
    assert_eq!(book_moves(&book, &[]), moves(&[("d2d4", 10000)]));
    let (book, _) = fx.build(&[scored], &["--collections-only"]);
    // e4: points 1 of 2, raw 0.5; d4: raw 1.
    assert_eq!(
        book_moves(&book, &[]),
        moves(&[("d2d4", 10000), ("e2e4", 5000)])
    );
}

#[test]
fn malformed_games_and_annotations_are_reported_and_skipped() {
    let annotated = "\
[Event \"a\"]

1. e4 {weight: abc} (1. d3
{weight: abc}) *

R[Event \"?\"]
[Site \"?\"]

1. d4 *
";
    let collection = "\
[Event \"good\"]
[Result \"1-0\"]

1. Nf3 d5 1-0

[Event \"illegal\"]
[Result \"1-0\"]

1. c4 e5 2. Ke3 Nf6 1-0

[Event \"bad fen\"]
[FEN \"not a fen\"]
[Result \"1-0\"]

1. b3 1-0

[Event \"good again\"]
[Result \"1-0\"]

1. g3 d5 1-0
";
    let fx = Fixtures::new();
    let (book, stderr) = fx.build(&[annotated, collection], &[]);
    // The malformed weight is ignored: neutral weight, reported with its line.
    assert_eq!(weight(&book, &[], "e2e4"), Some(5000));
    assert!(
        stderr.contains("in0.pgn:3: game 1: weight comment {weight: abc} has no number"),
        "{stderr}"
    );
    // The same malformed comment again, in a variation: its own line.
    assert!(
        stderr.contains("in0.pgn:4: game 1: weight comment {weight: abc}"),
        "{stderr}"
    );
    assert_eq!(weight(&book, &[], "d2d3"), Some(5000));
    // The stray text before a game is reported; the game itself is read.
    assert!(
        stderr.contains("in0.pgn:6: game 2: stray token \"R[Event\" in the movetext"),
        "{stderr}"
    );
    assert_eq!(weight(&book, &[], "d2d4"), Some(5000));
    // The illegal game is skipped whole (1. c4 is not in the book), the
    // others are read.
    assert!(
        stderr.contains("in1.pgn:9: game 2: move 2. Ke3"),
        "{stderr}"
    );
    assert!(
        stderr.contains("in1.pgn:") && stderr.contains("game 3: bad FEN tag: invalid FEN"),
        "{stderr}"
    );
    assert_eq!(weight(&book, &[], "c2c4"), None);
    assert_eq!(weight(&book, &[], "b2b3"), None);
    assert_eq!(weight(&book, &[], "g1f3"), Some(10000));
    assert_eq!(weight(&book, &[], "g2g3"), Some(10000));
}
