//! Static evaluation (placeholder: material only, replaced by the tunable
//! evaluation; the public API below is stable).

use shakmaty::{Chess, Color, Position, Role};

/// The evaluation's weights.
#[derive(Clone, Debug, Default)]
pub struct Params {}

impl Params {
    /// The compiled default weights.
    pub fn defaults() -> Self {
        Params {}
    }
}

/// Evaluates `pos` in centipawns from the side to move's point of view.
pub fn evaluate(pos: &Chess, _params: &Params) -> i32 {
    let b = pos.board();
    let mut s = 0;
    for (role, v) in [
        (Role::Pawn, 100),
        (Role::Knight, 320),
        (Role::Bishop, 330),
        (Role::Rook, 500),
        (Role::Queen, 950),
    ] {
        s += v
            * ((b.by_role(role) & b.white()).count() as i32
                - (b.by_role(role) & b.black()).count() as i32);
    }
    if pos.turn() == Color::White { s } else { -s }
}
