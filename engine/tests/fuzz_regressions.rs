//! Inputs the fuzz targets of `engine/fuzz` found, kept as regression tests
//! on stable Rust: each test replays one found input through the same
//! checks as the target that found it (named in the test's comment).

use engine::chess::position::{fen_of, parse_fen, play_uci};

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
