//! The PGN tags the book builder reads, and where a game starts.
//!
//! Both visitors need the same few tags: `Result` (scored for the side that
//! moved; `*` or a missing result counts as a draw), `FEN` and `Variant` (a
//! game may start from a set-up position of standard chess; other variants
//! are rejected) and `WhiteElo`/`BlackElo` (for `--min-elo`). [`GameTags`]
//! collects them and [`GameTags::start`] turns them into the starting
//! position and its ply number.

use engine::chess::excerpt::excerpt;
use engine::chess::position::parse_fen;
use pgn_reader::RawTag;
use shakmaty::{Chess, Color, Position};

/// The game result as the `Result` tag states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GameResult {
    /// `1-0`.
    WhiteWins,
    /// `0-1`.
    BlackWins,
    /// `1/2-1/2`.
    Draw,
    /// `*`, missing or anything else: scored as a draw.
    #[default]
    Unknown,
}

impl GameResult {
    fn parse(value: &[u8]) -> GameResult {
        match value {
            b"1-0" => GameResult::WhiteWins,
            b"0-1" => GameResult::BlackWins,
            b"1/2-1/2" => GameResult::Draw,
            _ => GameResult::Unknown,
        }
    }

    /// +1 win, 0 draw or unknown, −1 loss, for the given side.
    pub fn for_side(self, side: Color) -> i8 {
        let white = match self {
            GameResult::WhiteWins => 1,
            GameResult::BlackWins => -1,
            GameResult::Draw | GameResult::Unknown => 0,
        };
        if side == Color::White { white } else { -white }
    }
}

/// The tags the book builder looks at.
#[derive(Debug, Clone, Default)]
pub struct GameTags {
    /// Whether any tag was seen at all.
    pub any: bool,
    /// The `Result` tag.
    pub result: GameResult,
    /// The `FEN` tag, if any.
    pub fen: Option<String>,
    /// The `Variant` tag, if any.
    pub variant: Option<String>,
    /// `WhiteElo`, when a number.
    pub white_elo: Option<u32>,
    /// `BlackElo`, when a number.
    pub black_elo: Option<u32>,
}

impl GameTags {
    /// Records one tag.
    pub fn record(&mut self, name: &[u8], value: RawTag<'_>) {
        self.any = true;
        match name {
            b"Result" => self.result = GameResult::parse(value.as_bytes()),
            b"FEN" => self.fen = Some(value.decode_utf8_lossy().into_owned()),
            b"Variant" => self.variant = Some(value.decode_utf8_lossy().into_owned()),
            b"WhiteElo" => self.white_elo = parse_elo(value.as_bytes()),
            b"BlackElo" => self.black_elo = parse_elo(value.as_bytes()),
            _ => {}
        }
    }

    /// The Elo of the given side, when stated.
    pub fn elo(&self, side: Color) -> Option<u32> {
        match side {
            Color::White => self.white_elo,
            Color::Black => self.black_elo,
        }
    }

    /// The starting position and the ply number of its first move (0 for
    /// the standard start; from the FEN's move number otherwise).
    ///
    /// # Errors
    /// A description when the variant is not standard chess or the FEN is
    /// invalid.
    pub fn start(&self) -> Result<(Chess, u32), String> {
        if let Some(variant) = &self.variant {
            let v = variant.to_ascii_lowercase();
            if !matches!(v.as_str(), "" | "standard" | "chess" | "from position") {
                return Err(format!(
                    "variant {:?} is not standard chess",
                    excerpt(variant)
                ));
            }
        }
        match &self.fen {
            None => Ok((Chess::default(), 0)),
            Some(fen) => {
                let pos = parse_fen(fen).map_err(|e| e.to_string())?;
                let ply = 2 * (pos.fullmoves().get() - 1) + u32::from(pos.turn() == Color::Black);
                Ok((pos, ply))
            }
        }
    }
}

fn parse_elo(value: &[u8]) -> Option<u32> {
    std::str::from_utf8(value).ok()?.trim().parse().ok()
}
