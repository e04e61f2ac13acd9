//! Inputs the fuzz targets of `engine/fuzz` found, kept as regression tests
//! on stable Rust: each test replays one found input through the same
//! checks as the target that found it (named in the test's comment).

use engine::chess::position::{fen_of, key, parse_fen, play_uci};

/// Target `fen`: a move token of 78 control characters. The message quoted
/// it escaped (`\u{3}`, six characters each) and was 500 bytes long: the
/// excerpt now counts a character as wide as it is shown.
#[test]
fn control_characters_in_a_move_are_quoted_short() {
    let input = format!(
        "8/r4p2/5k2/8/5p1P/5P1K/6R1/8 b - - 0 1|{}e -  e7e5",
        "\u{3}".repeat(78)
    );
    let (fen, moves) = input.split_once('|').unwrap();
    let pos = parse_fen(fen).unwrap();
    assert_eq!(fen_of(&parse_fen(&fen_of(&pos)).unwrap()), fen_of(&pos));
    let token = moves.split_whitespace().next().unwrap();
    let message = play_uci(&pos, token).unwrap_err();
    assert!(message.len() < 400, "{} bytes: {message}", message.len());
    // Shown with {:?}, as every message shows quoted input, it stays short.
    assert!(format!("{message:?}").len() < 400, "{message:?}");
}

/// Target `fen`: a pawn ready to capture en passant that may not (pinned on
/// the g2 bishop's diagonal). The key hashed the square, the written FEN left
/// it out, and the re-read FEN had another key. The board's `R22RK1` (two
/// digits in a row, refused by python-chess) is refused too.
#[test]
fn en_passant_square_that_cannot_be_used_keeps_the_key_through_fen() {
    let found = "r4rn1/pb2bppp/np3n2/2pkN3/N2pPB2/6P1/PPP2PBP/R22RK1 b - e3";
    let error = parse_fen(found).unwrap_err().to_string();
    assert!(error.contains("two digits in a row in rank 1"), "{error}");
    let pos = parse_fen(&found.replace("R22RK1", "R4RK1")).unwrap();
    let written = fen_of(&pos);
    let again = parse_fen(&written).unwrap();
    assert_eq!(fen_of(&again), written);
    assert_eq!(key(&again), key(&pos));
}
