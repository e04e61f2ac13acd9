//! The parameter declaration: the single list of every tunable weight of the
//! evaluation.
//!
//! Each line of [`declare_params!`] below declares one *block*: a name, a
//! length, a group, bounds and a layout. Everything else is derived from it:
//! the flat entry indices ([`blocks`]), the [`BLOCKS`] table of names and
//! bounds used by the text format and the tuner, and the assembly of the
//! compiled defaults from the generated `params.rs` (which holds one constant
//! per block, named after it). Adding a parameter means adding one line here
//! and regenerating `params.rs` (`tuner --defaults`), nothing else.
//!
//! Invariants: every entry is a middlegame/endgame pair ([`S`]); the flat
//! scalar index of an entry's mg value is `2 * entry`, its eg value
//! `2 * entry + 1`; blocks are laid out in declaration order without gaps.

use super::S;

/// Which family of terms a block belongs to (`--tune`/`--freeze` select by
/// group).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    /// Piece values.
    Material,
    /// Piece-square tables.
    Pst,
    /// Pawn structure and passed pawns.
    Pawns,
    /// Mobility by number of safe squares.
    Mobility,
    /// Bishop pair, rooks on files and ranks, outposts.
    Pieces,
    /// Pawn shield, pawn storm and the attack-counter table.
    KingSafety,
    /// Attacked and hanging pieces.
    Threats,
    /// Side-to-move bonus.
    Tempo,
}

impl Group {
    /// Every group, in a stable order.
    pub const ALL: [Group; 8] = [
        Group::Material,
        Group::Pst,
        Group::Pawns,
        Group::Mobility,
        Group::Pieces,
        Group::KingSafety,
        Group::Threats,
        Group::Tempo,
    ];

    /// The group's name on the command line and in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Group::Material => "material",
            Group::Pst => "pst",
            Group::Pawns => "pawns",
            Group::Mobility => "mobility",
            Group::Pieces => "pieces",
            Group::KingSafety => "king_safety",
            Group::Threats => "threats",
            Group::Tempo => "tempo",
        }
    }

    /// Parses a group name as printed by [`Group::name`].
    pub fn from_name(name: &str) -> Option<Group> {
        Group::ALL.into_iter().find(|g| g.name() == name)
    }
}

/// How a block's entries are labelled in the params file and laid out in the
/// generated `params.rs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One entry: `name.mg`, `name.eg`.
    Scalar,
    /// Entries numbered from 0: `name[3].mg`.
    List,
    /// Six entries indexed by piece type: `name[knight].mg`.
    Role,
    /// 64 entries indexed by square from White's side, a1 = 0:
    /// `name[e4].mg`; printed as a board, rank 8 first.
    Board,
}

/// A block's place in the flat entry array. `at(i)` gives the entry index of
/// its `i`-th element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Index of the block's first entry.
    pub start: usize,
    /// Number of entries.
    pub len: usize,
}

impl Block {
    /// Entry index of element `i` (debug-checked against the length).
    #[inline(always)]
    pub const fn at(self, i: usize) -> usize {
        debug_assert!(i < self.len);
        self.start + i
    }

    /// Entry index of the block's only (or first) element.
    #[inline(always)]
    pub const fn one(self) -> usize {
        self.start
    }
}

/// Everything the declaration says about one block.
#[derive(Clone, Copy, Debug)]
pub struct BlockInfo {
    /// Name in the params file and in `params.rs`.
    pub name: &'static str,
    /// Placement in the flat entry array.
    pub block: Block,
    /// Group for `--tune`/`--freeze` and reports.
    pub group: Group,
    /// Smallest value the tuner may give (both phases).
    pub min: i32,
    /// Largest value the tuner may give (both phases).
    pub max: i32,
    /// Labels and printed shape.
    pub layout: Layout,
    /// What the block means.
    pub doc: &'static str,
}

macro_rules! declare_params {
    ($( $(#[doc = $doc:literal])+ $name:ident : [$len:expr], $group:ident, $layout:ident, ($min:expr, $max:expr); )+) => {
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Clone, Copy)]
        enum BlockId { $($name,)+ }

        const LENGTHS: &[usize] = &[$($len,)+];

        const fn start_of(id: usize) -> usize {
            let mut s = 0;
            let mut i = 0;
            while i < id {
                s += LENGTHS[i];
                i += 1;
            }
            s
        }

        /// Entry indices of every block, named as in the declaration.
        #[allow(non_upper_case_globals)]
        pub mod blocks {
            use super::{Block, BlockId, LENGTHS, start_of};
            $(
                $(#[doc = $doc])+
                pub const $name: Block = Block { start: start_of(BlockId::$name as usize), len: LENGTHS[BlockId::$name as usize] };
            )+
        }

        /// Number of entries (mg/eg pairs); the scalar count is twice this.
        pub const NUM_ENTRIES: usize = start_of(LENGTHS.len());

        /// The declaration of every block, in layout order.
        pub const BLOCKS: &[BlockInfo] = &[
            $(BlockInfo {
                name: stringify!($name),
                block: blocks::$name,
                group: Group::$group,
                min: $min,
                max: $max,
                layout: Layout::$layout,
                doc: concat!($($doc),+),
            },)+
        ];

        /// Assembles the compiled defaults from the generated `params.rs`.
        pub(crate) const fn compiled_defaults() -> [S; NUM_ENTRIES] {
            let mut out = [S::ZERO; NUM_ENTRIES];
            $(
                let values: &[S] = &super::params::$name;
                assert!(values.len() == blocks::$name.len, "params.rs does not match the declaration");
                let mut i = 0;
                while i < values.len() {
                    out[blocks::$name.start + i] = values[i];
                    i += 1;
                }
            )+
            out
        }
    };
}

declare_params! {
    /// Piece values, indexed by piece type (the king slot stays 0).
    material: [6], Material, Role, (0, 2500);
    /// Pawn placement by square (White's view; Black's squares are mirrored).
    pst_pawn: [64], Pst, Board, (-200, 200);
    /// Knight placement by square.
    pst_knight: [64], Pst, Board, (-200, 200);
    /// Bishop placement by square.
    pst_bishop: [64], Pst, Board, (-200, 200);
    /// Rook placement by square.
    pst_rook: [64], Pst, Board, (-200, 200);
    /// Queen placement by square.
    pst_queen: [64], Pst, Board, (-200, 200);
    /// King placement by square.
    pst_king: [64], Pst, Board, (-200, 200);
    /// A pawn with another pawn of its colour on the same file in front of it.
    pawn_doubled: [1], Pawns, Scalar, (-100, 50);
    /// A pawn with no friendly pawn on the adjacent files.
    pawn_isolated: [1], Pawns, Scalar, (-100, 50);
    /// A pawn that cannot safely advance and is behind all its neighbours.
    pawn_backward: [1], Pawns, Scalar, (-100, 50);
    /// A pawn defended by a pawn, by relative rank.
    pawn_supported: [8], Pawns, List, (-50, 200);
    /// A pawn with a friendly pawn beside it on the same rank, by relative rank.
    pawn_phalanx: [8], Pawns, List, (-50, 200);
    /// A passed pawn, by relative rank.
    passed_rank: [8], Pawns, List, (-50, 300);
    /// A passed pawn whose path to promotion holds no piece, by relative rank.
    passed_free_path: [8], Pawns, List, (-50, 300);
    /// A passed pawn whose stop square is occupied by an enemy piece, by relative rank.
    passed_blocked: [8], Pawns, List, (-200, 50);
    /// Distance of the own king to the passer's stop square, weighted by the passer's rank.
    passed_own_king_distance: [8], Pawns, List, (-50, 50);
    /// Distance of the enemy king to the passer's stop square, weighted by the passer's rank.
    passed_enemy_king_distance: [8], Pawns, List, (-50, 50);
    /// Knight mobility: safe squares attacked (0–8).
    mobility_knight: [9], Mobility, List, (-150, 150);
    /// Bishop mobility: safe squares attacked (0–13).
    mobility_bishop: [14], Mobility, List, (-150, 150);
    /// Rook mobility: safe squares attacked (0–14).
    mobility_rook: [15], Mobility, List, (-150, 150);
    /// Queen mobility: safe squares attacked (0–27).
    mobility_queen: [28], Mobility, List, (-150, 150);
    /// Both bishops.
    bishop_pair: [1], Pieces, Scalar, (0, 150);
    /// A rook on a file without pawns.
    rook_open_file: [1], Pieces, Scalar, (-50, 150);
    /// A rook on a file without own pawns but with enemy pawns.
    rook_half_open_file: [1], Pieces, Scalar, (-50, 150);
    /// A rook on the 7th rank (relative).
    rook_seventh_rank: [1], Pieces, Scalar, (-50, 150);
    /// A knight on an outpost: ranks 4–6, defended by a pawn, no enemy pawn can chase it.
    knight_outpost: [1], Pieces, Scalar, (-50, 150);
    /// A bishop on an outpost.
    bishop_outpost: [1], Pieces, Scalar, (-50, 150);
    /// Pawn shield on each of the three files around the king: own pawn on
    /// relative rank 2, rank 3, further up, or no pawn in front of the king.
    king_shield: [4], KingSafety, List, (-100, 100);
    /// Pawn storm on the three files around the king: nearest enemy pawn on
    /// relative rank 3, 4, 5, 6–7, or none.
    king_storm: [5], KingSafety, List, (-100, 100);
    /// The king on an open file (no own pawn), by 0 = own pawn present, 1 = half-open, 2 = open.
    king_file: [3], KingSafety, List, (-150, 50);
    /// Attack-counter table: weighted attacks on the king zone plus safe
    /// checks, capped at 63; the counter selects one entry (REBEL style).
    king_attack: [64], KingSafety, List, (-100, 1500);
    /// A piece attacked by an enemy pawn, by the attacked piece type.
    threat_by_pawn: [6], Threats, Role, (-50, 300);
    /// A piece attacked by an enemy knight or bishop, by the attacked piece type.
    threat_by_minor: [6], Threats, Role, (-50, 300);
    /// A piece attacked by an enemy rook, by the attacked piece type.
    threat_by_rook: [6], Threats, Role, (-50, 300);
    /// A piece attacked by an enemy queen, by the attacked piece type.
    threat_by_queen: [6], Threats, Role, (-50, 300);
    /// A piece attacked and not defended, by piece type.
    hanging: [6], Threats, Role, (-50, 300);
    /// Bonus for the side to move.
    tempo: [1], Tempo, Scalar, (0, 100);
}

/// The declaration of a block by name.
pub fn block_by_name(name: &str) -> Option<&'static BlockInfo> {
    BLOCKS.iter().find(|b| b.name == name)
}

/// Element labels of role-shaped blocks, pawn … king.
const ROLE_LABELS: [&str; 6] = ["pawn", "knight", "bishop", "rook", "queen", "king"];

/// The label of element `i` of a block with the given layout (empty for
/// scalars).
pub fn element_label(layout: Layout, i: usize) -> String {
    match layout {
        Layout::Scalar => String::new(),
        Layout::List => format!("[{i}]"),
        Layout::Role => format!("[{}]", ROLE_LABELS[i]),
        Layout::Board => {
            let file = (b'a' + (i % 8) as u8) as char;
            format!("[{file}{}]", i / 8 + 1)
        }
    }
}

/// The name of scalar parameter `i` in the params file.
pub fn scalar_name(i: usize) -> String {
    let entry = i / 2;
    let phase = if i.is_multiple_of(2) { "mg" } else { "eg" };
    let b = BLOCKS
        .iter()
        .find(|b| entry >= b.block.start && entry < b.block.start + b.block.len)
        .expect("every entry belongs to a block");
    format!(
        "{}{}.{phase}",
        b.name,
        element_label(b.layout, entry - b.block.start)
    )
}

/// Every scalar name, in index order.
pub fn scalar_names() -> Vec<String> {
    (0..2 * NUM_ENTRIES).map(scalar_name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_contiguous_and_large_enough() {
        let mut next = 0;
        for b in BLOCKS {
            assert_eq!(b.block.start, next, "{}", b.name);
            next += b.block.len;
            assert!(b.min < b.max, "{}", b.name);
            match b.layout {
                Layout::Scalar => assert_eq!(b.block.len, 1, "{}", b.name),
                Layout::Role => assert_eq!(b.block.len, 6, "{}", b.name),
                Layout::Board => assert_eq!(b.block.len, 64, "{}", b.name),
                Layout::List => {}
            }
        }
        assert_eq!(next, NUM_ENTRIES);
        const _: () = assert!(2 * NUM_ENTRIES >= 500, "at least 500 parameters");
    }
}
