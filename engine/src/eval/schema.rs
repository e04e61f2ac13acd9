//! The parameter declaration: the single list of every tunable weight of the
//! evaluation, and of the groups they belong to.
//!
//! Each line of `declare_params!` below declares one *block*: a name, a
//! length, a group, bounds, a layout, optionally the piece type it belongs
//! to, and its declared default. Everything else is derived from it: the
//! flat entry indices ([`blocks`]), the [`BLOCKS`] table of names and bounds
//! used by the text format and the tuner, the piece→block tables of the
//! terms ([`blocks_by_role`]), and the compiled defaults: a block's values
//! come from the generated `params.rs` when it has the block, and from the
//! declared default otherwise. So a new block compiles and evaluates as soon
//! as its line is written; `tuner codegen -o engine/src/eval/params.rs`
//! then writes it into `params.rs` (a test fails until it does, naming that
//! command).
//!
//! Invariants: every entry is a middlegame/endgame pair ([`S`]); the flat
//! scalar index of an entry's mg value is `2 * entry`, its eg value
//! `2 * entry + 1`; blocks are laid out in declaration order without gaps.

use shakmaty::Role;

use super::{S, s};

macro_rules! declare_groups {
    ($( $(#[doc = $doc:literal])+ $group:ident = $name:literal; )+) => {
        /// Which family of terms a block belongs to (`--tune`/`--freeze`
        /// select by group, reports sum by group).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Group {
            $( $(#[doc = $doc])+ $group, )+
        }

        impl Group {
            /// Every group, in declaration order.
            pub const ALL: &[Group] = &[$(Group::$group,)+];

            /// The group's name on the command line and in reports.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Group::$group => $name,)+
                }
            }

            /// What the group holds (one line, for `--help`).
            pub const fn doc(self) -> &'static str {
                match self {
                    $(Group::$group => concat!($($doc),+),)+
                }
            }
        }
    };
}

declare_groups! {
    /// Piece values.
    Material = "material";
    /// Piece-square tables.
    Pst = "pst";
    /// Pawn structure and passed pawns.
    Pawns = "pawns";
    /// Mobility by number of safe squares.
    Mobility = "mobility";
    /// Bishop pair, rooks on files and ranks, outposts, bad bishops, space.
    Pieces = "pieces";
    /// Pawn shield, pawn storm, king file, attack units and the attack-counter table.
    KingSafety = "king_safety";
    /// Attacked and hanging pieces, threats by pawn pushes.
    Threats = "threats";
    /// Side-to-move bonus.
    Tempo = "tempo";
    /// Pawnless endings won by mating: the defending king driven to the
    /// edge (or the bishop's corner) and the attacking king brought close.
    Endgame = "endgame";
}

impl Group {
    /// Parses a group name as printed by [`Group::name`].
    pub fn from_name(name: &str) -> Option<Group> {
        Group::ALL.iter().copied().find(|g| g.name() == name)
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
    /// Four entries for the pieces that attack a king zone, knight, bishop,
    /// rook, queen: `name[rook].mg`.
    Attacker,
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
    /// Smallest value the tuner may give and a params file may set (both
    /// phases).
    pub min: i32,
    /// Largest value (both phases).
    pub max: i32,
    /// Labels and printed shape.
    pub layout: Layout,
    /// The piece type the block belongs to, for blocks declared `for Role`
    /// (one block per piece type within a group: see [`blocks_by_role`]).
    pub role: Option<Role>,
    /// The declared default: one value for every element, or one per
    /// element. Used where `params.rs` does not have the block.
    pub default: &'static [S],
    /// What the block means.
    pub doc: &'static str,
}

impl BlockInfo {
    /// The declared default of element `i`.
    pub const fn default_at(&self, i: usize) -> S {
        if self.default.len() == 1 {
            self.default[0]
        } else {
            self.default[i]
        }
    }

    /// Whether scalar value `v` is within the block's bounds.
    pub const fn contains(&self, v: i32) -> bool {
        self.min <= v && v <= self.max
    }
}

macro_rules! declare_params {
    ($(
        $(#[doc = $doc:literal])+
        $name:ident : [$len:expr], $group:ident, $layout:ident, ($min:expr, $max:expr)
            $(, for $role:ident)? = [$($default:expr),+ $(,)?];
    )+) => {
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
                role: declare_params!(@role $($role)?),
                default: &[$($default),+],
                doc: concat!($($doc),+),
            },)+
        ];
    };
    (@role) => { None };
    (@role $role:ident) => { Some(Role::$role) };
}

const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The values `params.rs` holds for the block `name`, if it has it.
const fn generated(name: &str) -> Option<&'static [S]> {
    let mut i = 0;
    while i < super::params::GENERATED.len() {
        let (n, values) = super::params::GENERATED[i];
        if same_name(n, name) {
            return Some(values);
        }
        i += 1;
    }
    None
}

/// The compiled defaults: each block's values from the generated
/// `params.rs` where it has them, the declared default otherwise (a new
/// block, or new elements of a longer block). Checks the declared defaults'
/// lengths at compile time.
pub(crate) const fn compiled_defaults() -> [S; NUM_ENTRIES] {
    let mut out = [S::ZERO; NUM_ENTRIES];
    let mut b = 0;
    while b < BLOCKS.len() {
        let info = &BLOCKS[b];
        assert!(
            info.default.len() == 1 || info.default.len() == info.block.len,
            "a declared default has one value or one per element"
        );
        let from_file: &[S] = match generated(info.name) {
            Some(values) => values,
            None => &[],
        };
        let mut i = 0;
        while i < info.block.len {
            out[info.block.start + i] = if i < from_file.len() {
                from_file[i]
            } else {
                info.default_at(i)
            };
            i += 1;
        }
        b += 1;
    }
    out
}

/// The block of each piece type within `group`, indexed pawn = 0 … king =
/// 5, from the blocks declared `for Role`. Evaluated at compile time by the
/// terms; two blocks of a group for one piece type fail the build.
pub const fn blocks_by_role(group: Group) -> [Option<Block>; 6] {
    let mut out = [None; 6];
    let mut b = 0;
    while b < BLOCKS.len() {
        let info = &BLOCKS[b];
        if info.group as u8 == group as u8
            && let Some(role) = info.role
        {
            let r = role as usize - 1;
            assert!(
                out[r].is_none(),
                "two blocks of one group for one piece type"
            );
            out[r] = Some(info.block);
        }
        b += 1;
    }
    out
}

/// [`blocks_by_role`] for a group that has a block for every piece type.
pub const fn block_for_every_role(group: Group) -> [Block; 6] {
    let by_role = blocks_by_role(group);
    let mut out = [Block { start: 0, len: 0 }; 6];
    let mut r = 0;
    while r < 6 {
        out[r] = match by_role[r] {
            Some(b) => b,
            None => panic!("a piece type has no block in this group"),
        };
        r += 1;
    }
    out
}

const ZERO: S = S::ZERO;

declare_params! {
    /// Piece values, indexed by piece type (the king slot stays 0).
    material: [6], Material, Role, (0, 2500)
        = [s(100, 100), s(300, 300), s(300, 300), s(500, 500), s(900, 900), ZERO];
    /// Pawn placement by square (White's view; Black's squares are mirrored).
    pst_pawn: [64], Pst, Board, (-200, 200), for Pawn = [ZERO];
    /// Knight placement by square.
    pst_knight: [64], Pst, Board, (-200, 200), for Knight = [ZERO];
    /// Bishop placement by square.
    pst_bishop: [64], Pst, Board, (-200, 200), for Bishop = [ZERO];
    /// Rook placement by square.
    pst_rook: [64], Pst, Board, (-200, 200), for Rook = [ZERO];
    /// Queen placement by square.
    pst_queen: [64], Pst, Board, (-200, 200), for Queen = [ZERO];
    /// King placement by square.
    pst_king: [64], Pst, Board, (-200, 200), for King = [ZERO];
    /// A pawn with another pawn of its colour on the same file in front of it.
    pawn_doubled: [1], Pawns, Scalar, (-100, 50) = [ZERO];
    /// A pawn with no friendly pawn on the adjacent files.
    pawn_isolated: [1], Pawns, Scalar, (-100, 50) = [ZERO];
    /// A pawn that cannot safely advance and is behind all its neighbours.
    pawn_backward: [1], Pawns, Scalar, (-100, 50) = [ZERO];
    /// A pawn defended by a pawn, by relative rank.
    pawn_supported: [8], Pawns, List, (-50, 200) = [ZERO];
    /// A pawn with a friendly pawn beside it on the same rank, by relative rank.
    pawn_phalanx: [8], Pawns, List, (-50, 200) = [ZERO];
    /// A passed pawn, by relative rank.
    passed_rank: [8], Pawns, List, (-50, 300) = [ZERO];
    /// A passed pawn whose path to promotion holds no piece, by relative rank.
    passed_free_path: [8], Pawns, List, (-50, 300) = [ZERO];
    /// A passed pawn whose stop square is occupied by an enemy piece, by relative rank.
    passed_blocked: [8], Pawns, List, (-200, 50) = [ZERO];
    /// Distance of the own king to the passer's stop square, weighted by the passer's rank.
    passed_own_king_distance: [8], Pawns, List, (-50, 50) = [ZERO];
    /// Distance of the enemy king to the passer's stop square, weighted by the passer's rank.
    passed_enemy_king_distance: [8], Pawns, List, (-50, 50) = [ZERO];
    /// A passed pawn none of whose squares to promotion the enemy attacks, by relative rank.
    passed_safe_path: [8], Pawns, List, (-50, 300) = [ZERO];
    /// The king's distance to the nearest own pawn (1–7; index 0 is unused).
    king_pawn_distance: [8], Pawns, List, (-100, 100) = [ZERO];
    /// An isolated or backward pawn with no enemy pawn in front of it on its file.
    pawn_weak_unopposed: [1], Pawns, Scalar, (-100, 50) = [ZERO];
    /// A pawn on relative rank 5 or 6 (index 0, 1) blocked by an enemy pawn.
    pawn_blocked: [2], Pawns, List, (-100, 50) = [ZERO];
    /// A passed pawn with an own rook behind it on its file.
    passed_rook_behind: [1], Pawns, Scalar, (-50, 100) = [ZERO];
    /// A candidate passer, by relative rank: not passed, no enemy pawn in
    /// front of it on its file, and at least as many own pawns beside or
    /// behind it on the adjacent files as enemy pawns in front of it there.
    pawn_candidate: [8], Pawns, List, (-50, 200) = [ZERO];
    /// Knight mobility: safe squares attacked (0–8).
    mobility_knight: [9], Mobility, List, (-150, 150), for Knight = [ZERO];
    /// Bishop mobility: safe squares attacked (0–13).
    mobility_bishop: [14], Mobility, List, (-150, 150), for Bishop = [ZERO];
    /// Rook mobility: safe squares attacked (0–14).
    mobility_rook: [15], Mobility, List, (-150, 150), for Rook = [ZERO];
    /// Queen mobility: safe squares attacked (0–27).
    mobility_queen: [28], Mobility, List, (-150, 150), for Queen = [ZERO];
    /// Both bishops.
    bishop_pair: [1], Pieces, Scalar, (0, 150) = [ZERO];
    /// Per knight, by how closed the position is (0 open … 8 closed: the
    /// pawns, plus twice the pawns blocked by a pawn, less twice the files
    /// without pawns, over four).
    knight_closedness: [9], Pieces, List, (-100, 100) = [ZERO];
    /// Per rook, by how closed the position is (as for knights).
    rook_closedness: [9], Pieces, List, (-100, 100) = [ZERO];
    /// Per bishop, the own pawns on squares of its colour that an enemy pawn
    /// blocks (the coefficient is their number).
    bishop_rammed_pawns: [1], Pieces, Scalar, (-50, 50) = [ZERO];
    /// Per bishop, the enemy pawns on its diagonals through any pieces
    /// (the coefficient is their number).
    bishop_xray_pawns: [1], Pieces, Scalar, (-50, 50) = [ZERO];
    /// A rook with at most three safe squares between its own king and the
    /// edge of the board on the king's side.
    rook_trapped: [1], Pieces, Scalar, (-150, 50) = [ZERO];
    /// A rook on a file without pawns.
    rook_open_file: [1], Pieces, Scalar, (-50, 150) = [ZERO];
    /// A rook on a file without own pawns but with enemy pawns.
    rook_half_open_file: [1], Pieces, Scalar, (-50, 150) = [ZERO];
    /// A rook on the 7th rank (relative).
    rook_seventh_rank: [1], Pieces, Scalar, (-50, 150) = [ZERO];
    /// A knight on an outpost: ranks 4–6, defended by a pawn, no enemy pawn can chase it.
    knight_outpost: [1], Pieces, Scalar, (-50, 150) = [ZERO];
    /// A bishop on an outpost.
    bishop_outpost: [1], Pieces, Scalar, (-50, 150) = [ZERO];
    /// Per bishop, the own pawns on squares of its colour (the coefficient is their number).
    bishop_pawns_same_colour: [1], Pieces, Scalar, (-50, 50) = [ZERO];
    /// A knight or bishop with a pawn (either colour) directly in front of it.
    minor_behind_pawn: [1], Pieces, Scalar, (-50, 100) = [ZERO];
    /// A knight attacking an empty outpost square (relative ranks 4–6,
    /// defended by an own pawn, out of reach of enemy pawns).
    knight_reachable_outpost: [1], Pieces, Scalar, (-50, 100) = [ZERO];
    /// A bishop that sees both centre squares of its long diagonal through pieces other than pawns.
    bishop_long_diagonal: [1], Pieces, Scalar, (-50, 100) = [ZERO];
    /// A rook on the file of an enemy queen.
    rook_on_queen_file: [1], Pieces, Scalar, (-50, 100) = [ZERO];
    /// Per knight (index 0) and bishop (1), its distance to the own king.
    minor_king_distance: [2], Pieces, List, (-30, 30) = [ZERO];
    /// Space: safe squares of the central files on relative ranks 2–4 (not
    /// holding an own pawn, not attacked by an enemy pawn), those behind an
    /// own pawn and not attacked at all counted twice.
    space: [1], Pieces, Scalar, (-20, 50) = [ZERO];
    /// Pawn shield on each of the three files around the king: own pawn on
    /// relative rank 2, rank 3, further up, or no pawn in front of the king.
    king_shield: [4], KingSafety, List, (-100, 100) = [ZERO];
    /// Pawn storm on the three files around the king: nearest enemy pawn on
    /// relative rank 3, 4, 5, 6–7, or none.
    king_storm: [5], KingSafety, List, (-100, 100) = [ZERO];
    /// The king on an open file (no own pawn), by 0 = own pawn present, 1 = half-open, 2 = open.
    king_file: [3], KingSafety, List, (-150, 50) = [ZERO];
    /// Squares of the king's flank on its first five ranks that the enemy attacks (the coefficient is their number).
    king_flank_attacks: [1], KingSafety, Scalar, (-30, 30) = [ZERO];
    /// Enemy rooks and queens on the king's file and the files beside it
    /// that hold no own pawn (the coefficient is their number).
    king_open_file_heavies: [1], KingSafety, Scalar, (-100, 50) = [ZERO];
    /// The king on a flank without pawns of either colour.
    king_pawnless_flank: [1], KingSafety, Scalar, (-150, 50) = [ZERO];
    /// Own pawns, knights and bishops in the own king zone (0–8).
    king_defenders: [9], KingSafety, List, (-100, 100) = [ZERO];
    /// Squares of the own king zone the enemy attacks and we do not defend
    /// twice (the coefficient is their number).
    king_zone_weak: [1], KingSafety, Scalar, (-100, 50) = [ZERO];
    /// Own pieces that alone stand between the own king and an enemy slider
    /// on its line (pinned, or shielding; the coefficient is their number).
    king_blockers: [1], KingSafety, Scalar, (-100, 50) = [ZERO];
    /// Safe squares from which a piece can check the enemy king, by
    /// checking piece type (the coefficient is their number).
    safe_checks: [4], KingSafety, Attacker, (-50, 150) = [ZERO];
    /// Squares from which a piece can check the enemy king that the enemy
    /// defends (the coefficient is their number).
    unsafe_checks: [1], KingSafety, Scalar, (-50, 100) = [ZERO];
    /// Attack units per square of the enemy king zone a piece attacks, by
    /// attacker; the middlegame and endgame counters add the .mg and .eg
    /// units.
    king_attack_units: [4], KingSafety, Attacker, (0, 20)
        = [s(2, 2), s(2, 2), s(3, 3), s(5, 5)];
    /// Attack units for a safe check, by checking piece type.
    king_check_units: [4], KingSafety, Attacker, (0, 20)
        = [s(3, 3), s(3, 3), s(4, 4), s(3, 3)];
    /// Attack-counter table: the units of the attacks on the king zone plus
    /// those of the safe checks, capped at the table's last entry, select
    /// one entry (REBEL style); the .mg values by the middlegame counter,
    /// the .eg values by the endgame counter.
    king_attack: [64], KingSafety, List, (-100, 1500) = [ZERO];
    /// A piece attacked by an enemy pawn, by the attacked piece type.
    threat_by_pawn: [6], Threats, Role, (-50, 300) = [ZERO];
    /// A piece attacked by an enemy knight or bishop, by the attacked piece type.
    threat_by_minor: [6], Threats, Role, (-50, 300) = [ZERO];
    /// A piece attacked by an enemy rook, by the attacked piece type.
    threat_by_rook: [6], Threats, Role, (-50, 300) = [ZERO];
    /// A piece attacked by an enemy queen, by the attacked piece type.
    threat_by_queen: [6], Threats, Role, (-50, 300) = [ZERO];
    /// A piece attacked and not defended, by piece type.
    hanging: [6], Threats, Role, (-50, 300) = [ZERO];
    /// Safe squares from which an own knight (0) or bishop or rook (1, on
    /// squares also defended twice) would attack the enemy's only queen
    /// (the coefficient is their number).
    threat_on_queen: [2], Threats, List, (-50, 150) = [ZERO];
    /// Squares both sides attack that the enemy does not protect strongly
    /// (by a pawn, or twice when we attack once): the enemy's pieces are
    /// restricted there (the coefficient is their number).
    restricted: [1], Threats, Scalar, (-30, 30) = [ZERO];
    /// Enemy pieces and pawns we attack that are not strongly protected and
    /// that their queen defends (the coefficient is their number).
    weak_queen_protection: [1], Threats, Scalar, (-50, 100) = [ZERO];
    /// Enemy pieces and pawns our king attacks that are not strongly
    /// protected (the coefficient is their number).
    threat_by_king: [1], Threats, Scalar, (-50, 100) = [ZERO];
    /// A piece that a safe pawn push would attack (and no pawn attacks yet), by piece type.
    threat_by_pawn_push: [6], Threats, Role, (-50, 300) = [ZERO];
    /// Bonus for the side to move.
    tempo: [1], Tempo, Scalar, (0, 100) = [ZERO];
    /// Pawnless endings where the stronger side has mating material and
    /// leads by more than a minor piece: the defending king's distance from
    /// the centre (files plus ranks, 0–6), not with bishop and knight alone.
    mop_up_edge: [1], Endgame, Scalar, (0, 100) = [s(0, 30)];
    /// Bishop and knight against the lone king: its distance from the long
    /// diagonal of the colour the bishop lacks (0–7, 7 in the two corners of
    /// the bishop's colour, the only ones where that mate exists).
    mop_up_corner: [1], Endgame, Scalar, (0, 200) = [s(0, 50)];
    /// In the same endings, the kings' closeness (7 minus their distance,
    /// 1–6).
    mop_up_kings: [1], Endgame, Scalar, (0, 100) = [s(0, 20)];
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
        Layout::Attacker => format!("[{}]", ROLE_LABELS[i + 1]),
        Layout::Board => {
            let file = (b'a' + (i % 8) as u8) as char;
            format!("[{file}{}]", i / 8 + 1)
        }
    }
}

/// The block that scalar parameter `i` belongs to.
///
/// # Panics
/// When `i` is not below `2 * NUM_ENTRIES`.
pub fn block_of_scalar(i: usize) -> &'static BlockInfo {
    let entry = i / 2;
    BLOCKS
        .iter()
        .find(|b| entry >= b.block.start && entry < b.block.start + b.block.len)
        .expect("every entry belongs to a block")
}

/// The name of scalar parameter `i` in the params file.
pub fn scalar_name(i: usize) -> String {
    let entry = i / 2;
    let phase = if i.is_multiple_of(2) { "mg" } else { "eg" };
    let b = block_of_scalar(i);
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
                Layout::Attacker => assert_eq!(b.block.len, 4, "{}", b.name),
                Layout::Board => assert_eq!(b.block.len, 64, "{}", b.name),
                Layout::List => {}
            }
        }
        assert_eq!(next, NUM_ENTRIES);
        const _: () = assert!(2 * NUM_ENTRIES >= 500, "at least 500 parameters");
    }
}
