//! The evaluation terms, each written exactly once.
//!
//! Every function here is generic over an [`Accumulator`]: it never reads a
//! weight, it only reports "entry `e` applies `coef` times" (positive
//! coefficients favour White). Summing weights gives the evaluation used in
//! play; recording the coefficients gives the tuner's trace. Because both
//! come from this one code path, `dot(params, trace) == evaluate` holds by
//! construction, and a test checks it on real positions.
//!
//! Conventions: squares are seen from the side being evaluated
//! (`relative(color, sq)` mirrors Black's), ranks are 0-based relative ranks,
//! piece types index role-shaped blocks as pawn = 0 … king = 5. Constants in
//! this file that are *not* weights (phase weights, scale factors) are named
//! at the top; they shape features, the tuner does not change them. King
//! danger is counted here and valued by the accumulator ([`super::danger`]).

use shakmaty::attacks::{
    between, bishop_attacks, king_attacks, knight_attacks, queen_attacks, rook_attacks,
};
use shakmaty::{Bitboard, Board, Color, Position, Role, Square};

use super::schema::{self, Block, Group, blocks};
use super::{Accumulator, DangerCounts, PawnKingKey};

/// Game-phase weight of each piece type (pawn … king); a full board is
/// [`MAX_PHASE`].
pub const PHASE_WEIGHTS: [i32; 6] = [0, 1, 1, 2, 4, 0];
/// Phase of the starting position; the middlegame weight is `phase / MAX_PHASE`.
pub const MAX_PHASE: i32 = 24;
/// The endgame scale factor that leaves the endgame score unchanged.
pub const SCALE_NORMAL: i32 = 128;
/// Scale when the stronger side has only bishops of opposite colours and pawns.
const SCALE_PURE_OPPOSITE_BISHOPS: i32 = 64;
/// Scale with opposite-coloured bishops and other pieces.
const SCALE_OPPOSITE_BISHOPS_WITH_PIECES: i32 = 96;
/// Scale when the stronger side has no pawns and at most a minor piece more.
const SCALE_NO_PAWNS_SMALL_EDGE: i32 = 16;
/// Scale when the stronger side has no pawns and only a minor piece or less.
const SCALE_CANNOT_MATE: i32 = 0;
/// Material units (pawn = 1) used only to classify drawish material.
const SCALE_MATERIAL_UNITS: [i32; 6] = [1, 3, 3, 5, 9, 0];
/// Piece-square table of each piece type, pawn … king.
const PST: [Block; 6] = schema::block_for_every_role(Group::Pst);
/// Mobility table of each piece type (knight … queen have one).
const MOBILITY: [Option<Block>; 6] = schema::blocks_by_role(Group::Mobility);

const FILE_A: u64 = 0x0101_0101_0101_0101;
const NOT_FILE_A: u64 = !FILE_A;
const FILE_H: u64 = FILE_A << 7;
const NOT_FILE_H: u64 = !FILE_H;

/// `WITHIN_DISTANCE[sq][d]`: the squares at most `d` king steps from `sq`.
const WITHIN_DISTANCE: [[u64; 8]; 64] = {
    let mut out = [[0u64; 8]; 64];
    let mut sq: usize = 0;
    while sq < 64 {
        let mut other: usize = 0;
        while other < 64 {
            let df = (sq % 8) as i32 - (other % 8) as i32;
            let dr = (sq / 8) as i32 - (other / 8) as i32;
            let d = if df.abs() > dr.abs() {
                df.abs()
            } else {
                dr.abs()
            } as usize;
            let mut k = d;
            while k < 8 {
                out[sq][k] |= 1u64 << other;
                k += 1;
            }
            other += 1;
        }
        sq += 1;
    }
    out
};

/// What the taper needs besides the accumulated mg/eg sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaperInfo {
    /// 0 (bare kings and pawns) … [`MAX_PHASE`] (all pieces on the board).
    pub phase: i32,
    /// Endgame scale (of [`SCALE_NORMAL`]) when White is the stronger side.
    pub scale_white: i32,
    /// Endgame scale when Black is the stronger side.
    pub scale_black: i32,
}

/// Combines middlegame and endgame sums (White-relative) into one
/// White-relative score. The scale of the side the endgame score favours
/// applies. Integer arithmetic, truncating toward zero, so that a position
/// and its colour mirror get exactly opposite scores.
#[inline]
pub fn taper(mg: i32, eg: i32, info: &TaperInfo) -> i32 {
    let scale = if eg > 0 {
        info.scale_white
    } else {
        info.scale_black
    };
    let numerator = mg as i64 * info.phase as i64 * SCALE_NORMAL as i64
        + eg as i64 * (MAX_PHASE - info.phase) as i64 * scale as i64;
    (numerator / (MAX_PHASE as i64 * SCALE_NORMAL as i64)) as i32
}

#[inline(always)]
fn role_index(role: Role) -> usize {
    role as usize - 1
}

#[inline(always)]
const fn sign(color: Color) -> i32 {
    match color {
        Color::White => 1,
        Color::Black => -1,
    }
}

#[inline(always)]
fn relative(color: Color, sq: Square) -> Square {
    match color {
        Color::White => sq,
        Color::Black => sq.flip_vertical(),
    }
}

#[inline(always)]
fn relative_rank(color: Color, sq: Square) -> usize {
    relative(color, sq).rank() as usize
}

#[inline(always)]
fn pawn_attack_span(color: Color, pawns: u64) -> u64 {
    match color {
        Color::White => ((pawns & NOT_FILE_A) << 7) | ((pawns & NOT_FILE_H) << 9),
        Color::Black => ((pawns & NOT_FILE_A) >> 9) | ((pawns & NOT_FILE_H) >> 7),
    }
}

/// Squares two of `color`'s pawns attack.
#[inline(always)]
fn pawn_attacks_twice(color: Color, pawns: u64) -> u64 {
    match color {
        Color::White => ((pawns & NOT_FILE_A) << 7) & ((pawns & NOT_FILE_H) << 9),
        Color::Black => ((pawns & NOT_FILE_A) >> 9) & ((pawns & NOT_FILE_H) >> 7),
    }
}

/// Squares strictly in front of `sq` (from `color`'s side), all files.
#[inline(always)]
fn ranks_ahead(color: Color, sq: Square) -> u64 {
    let rank = sq.rank() as u32;
    match color {
        Color::White => {
            if rank >= 7 {
                0
            } else {
                !0u64 << (8 * (rank + 1))
            }
        }
        Color::Black => (1u64 << (8 * rank)) - 1,
    }
}

#[inline(always)]
fn file_mask(sq: Square) -> u64 {
    FILE_A << (sq.file() as u32)
}

/// Per-side facts computed once and shared by the terms.
struct Side {
    color: Color,
    pawns: u64,
    pieces: u64,
    king: Square,
    pawn_attacks: u64,
    /// Squares attacked by each piece type of this side.
    attacked_by: [u64; 6],
    /// Squares attacked by any piece of this side.
    attacked: u64,
    /// Squares attacked at least twice by this side's pieces.
    attacked_twice: u64,
    /// Squares around the king (its attacks plus its square).
    king_zone: u64,
}

impl Side {
    /// This side's pieces and pawns without its king.
    fn pieces_but_king(&self) -> u64 {
        self.pieces & !(1u64 << self.king as u32)
    }
}

#[inline(always)]
fn side(board: &Board, color: Color) -> Side {
    let pawns = (board.pawns() & board.by_color(color)).0;
    let king = board
        .king_of(color)
        .expect("a legal position has one king of each colour");
    let pawn_attacks = pawn_attack_span(color, pawns);
    let mut attacked_by = [0u64; 6];
    attacked_by[0] = pawn_attacks;
    attacked_by[5] = king_attacks(king).0;
    Side {
        color,
        pawns,
        pieces: board.by_color(color).0,
        king,
        pawn_attacks,
        attacked_by,
        attacked: pawn_attacks | attacked_by[5],
        attacked_twice: pawn_attacks_twice(color, pawns) | (pawn_attacks & attacked_by[5]),
        king_zone: king_attacks(king).0 | (1u64 << king as u32),
    }
}

/// Evaluates every term of `pos` into `acc` and returns what the taper needs.
#[inline(always)]
pub fn evaluate_terms<P: Position, A: Accumulator>(pos: &P, acc: &mut A) -> TaperInfo {
    let board = pos.board();
    let mut sides = [side(board, Color::White), side(board, Color::Black)];
    let occupied = board.occupied().0;

    material_and_placement(board, acc);
    let closed = closedness(sides[0].pawns, sides[1].pawns);
    let (white, black) = sides.split_at_mut(1);
    let danger_white = pieces(board, occupied, closed, &mut white[0], &black[0], acc);
    let danger_black = pieces(board, occupied, closed, &mut black[0], &white[0], acc);
    // Checks need both sides' attack maps, so the danger counts are
    // finished here.
    king_danger(board, occupied, &sides[0], &sides[1], danger_white, acc);
    king_danger(board, occupied, &sides[1], &sides[0], danger_black, acc);
    // The terms of the pawns and the kings' squares alone, which a play
    // accumulator may take from its memo of the same pawns and kings.
    let key = PawnKingKey::new(
        [sides[0].pawns, sides[1].pawns],
        [sides[0].king, sides[1].king],
    );
    let passed = acc.pawn_king_terms(&key, |acc| {
        [
            pawn_king_terms(&sides[0], &sides[1], acc),
            pawn_king_terms(&sides[1], &sides[0], acc),
        ]
    });
    for (i, (us, them)) in [(&sides[0], &sides[1]), (&sides[1], &sides[0])]
        .into_iter()
        .enumerate()
    {
        passed_pawn_terms(board, occupied, us, them, passed[i], acc);
        king_flank_attacks(us, them, acc);
        threats(board, occupied, us, them, acc);
        space(us, them, acc);
        king_defence(board, occupied, us, them, acc);
        pressure(board, occupied, us, them, acc);
    }
    acc.add(blocks::tempo.one(), sign(pos.turn()));
    if board.pawns().is_empty() {
        mop_up(board, &sides, acc);
    }
    taper_info(board)
}

/// Pawnless endings that the stronger side wins by mating (with a queen, a
/// rook, bishop and knight or two bishops on both colours, and more than a
/// minor piece ahead): the defending king is driven to the edge — with
/// bishop and knight alone, to a corner of the bishop's colour — and the
/// attacking king brought close. Without this gradient every quiet move of
/// such an ending scores the same, and the search, which sees the mate only
/// a few moves before it, lets the fifty-move rule draw the game.
fn mop_up<A: Accumulator>(board: &Board, sides: &[Side; 2], acc: &mut A) {
    let (white, black) = (
        non_pawn_units(board, Color::White),
        non_pawn_units(board, Color::Black),
    );
    let (us, them) = if white >= black + 4 {
        (&sides[0], &sides[1])
    } else if black >= white + 4 {
        (&sides[1], &sides[0])
    } else {
        return;
    };
    let ours = board.by_color(us.color);
    let knights = board.knights() & ours;
    let bishops = board.bishops() & ours;
    let majors = (board.rooks() | board.queens()) & ours;
    let bishop_colours = usize::from((bishops & Bitboard::LIGHT_SQUARES).any())
        + usize::from((bishops & Bitboard::DARK_SQUARES).any());
    if majors.is_empty() && bishop_colours < 2 && (bishops.is_empty() || knights.is_empty()) {
        // Knights alone, or bishops of one colour: no forced mate.
        return;
    }
    let s = sign(us.color);
    let (file, rank) = (them.king.file() as i32, them.king.rank() as i32);
    let lone_king = board.by_color(them.color).count() == 1;
    if lone_king && majors.is_empty() && knights.count() == 1 && bishops.count() == 1 {
        // The long diagonal the mate avoids: a8–h1 (light) for a bishop on
        // dark squares, whose corners a1 and h8 are 7 files-and-ranks from it.
        let dark = (bishops & Bitboard::DARK_SQUARES).any();
        let from_diagonal = if dark {
            (7 - rank - file).abs()
        } else {
            (file - rank).abs()
        };
        acc.add(blocks::mop_up_corner.one(), s * from_diagonal);
    } else {
        let from_centre = |x: i32| (3 - x).max(x - 4);
        acc.add(
            blocks::mop_up_edge.one(),
            s * (from_centre(file) + from_centre(rank)),
        );
    }
    acc.add(
        blocks::mop_up_kings.one(),
        s * (7 - us.king.distance(them.king) as i32),
    );
}

#[inline(always)]
fn material_and_placement<A: Accumulator>(board: &Board, acc: &mut A) {
    for color in Color::ALL {
        let s = sign(color);
        for role in Role::ALL {
            let ri = role_index(role);
            let bb = board.by_role(role) & board.by_color(color);
            if role != Role::King {
                let n = bb.count() as i32;
                if n != 0 {
                    acc.add(blocks::material.at(ri), s * n);
                }
            }
            for sq in bb {
                acc.add(PST[ri].at(relative(color, sq) as usize), s);
            }
        }
    }
}

/// How closed the pawn structure is, 0 (open) … 8 (closed): the pawns,
/// plus twice the pawns an enemy pawn blocks, less twice the files without
/// pawns, over four.
fn closedness(white_pawns: u64, black_pawns: u64) -> usize {
    let pawns = white_pawns | black_pawns;
    let rammed = (forward(Color::White, white_pawns) & black_pawns).count_ones() as i32;
    let open_files = 8 - (files_of(pawns) & 0xff).count_ones() as i32;
    ((pawns.count_ones() as i32 + 2 * rammed - 2 * open_files) / 4).clamp(0, 8) as usize
}

/// Mobility, piece placement terms and this side's attack map; returns the
/// king-danger counts of the attacks on the enemy king zone. Rooks see
/// through our rooks and queens, bishops through our queens (the batteries
/// behind them count their attacks).
#[inline(always)]
fn pieces<A: Accumulator>(
    board: &Board,
    occupied: u64,
    closed: usize,
    us: &mut Side,
    them: &Side,
    acc: &mut A,
) -> DangerCounts {
    let color = us.color;
    let s = sign(color);
    let ours = Bitboard(us.pieces);
    // Safe squares: not occupied by our pawns or king, not attacked by
    // enemy pawns.
    let mobility_area = !(us.pawns | (1u64 << us.king as u32) | them.pawn_attacks);
    let all_pawns = us.pawns | them.pawns;

    let knights = board.knights() & ours;
    let bishops = board.bishops() & ours;
    let rooks = board.rooks() & ours;
    let queens = board.queens() & ours;

    let mut ctx = PieceContext {
        color,
        sign: s,
        occupied,
        mobility_area,
        enemy_king_zone: them.king_zone,
        all_pawns,
        danger: DangerCounts::NONE,
        attackers: 0,
        outposts: relative_ranks_mask(color, 3, 5)
            & us.pawn_attacks
            & !fill_forward(!color, pawn_attack_span(!color, them.pawns)),
        enemy_queens: (board.queens() & board.by_color(!color)).0,
        rook_occupied: occupied & !(rooks | queens).0,
        bishop_occupied: occupied & !queens.0,
        blocked_pawns: us.pawns & backward(color, them.pawns),
    };
    piece_type_terms(Role::Knight, knights, &mut ctx, us, acc);
    piece_type_terms(Role::Bishop, bishops, &mut ctx, us, acc);
    piece_type_terms(Role::Rook, rooks, &mut ctx, us, acc);
    piece_type_terms(Role::Queen, queens, &mut ctx, us, acc);
    let mut danger = ctx.danger;
    if bishops.more_than_one() {
        acc.add(blocks::bishop_pair.one(), s);
    }
    for (n, block) in [
        (knights.count(), blocks::knight_closedness),
        (rooks.count(), blocks::rook_closedness),
    ] {
        if n != 0 {
            acc.add(block.at(closed), s * n as i32);
        }
    }
    if ctx.attackers < 2 && queens.is_empty() {
        // A lone minor or rook near the king is not an attack.
        danger.clear_zone();
    }
    danger
}

/// What the per-piece terms of one side share.
struct PieceContext {
    color: Color,
    sign: i32,
    occupied: u64,
    mobility_area: u64,
    enemy_king_zone: u64,
    all_pawns: u64,
    danger: DangerCounts,
    attackers: i32,
    /// Outpost squares: relative ranks 4–6, defended by an own pawn, never
    /// attackable by an enemy pawn.
    outposts: u64,
    enemy_queens: u64,
    /// The occupancy rooks see through (without our rooks and queens).
    rook_occupied: u64,
    /// The occupancy bishops see through (without our queens).
    bishop_occupied: u64,
    /// Our pawns an enemy pawn blocks.
    blocked_pawns: u64,
}

/// Mobility, attacks and placement terms of every piece of one type;
/// inlined per type so that the type-dependent branches disappear.
#[inline(always)]
fn piece_type_terms<A: Accumulator>(
    role: Role,
    pieces: Bitboard,
    ctx: &mut PieceContext,
    us: &mut Side,
    acc: &mut A,
) {
    let ri = role_index(role);
    let Some(mobility) = MOBILITY[ri] else {
        unreachable!("every piece type with mobility terms has a mobility block")
    };
    let s = ctx.sign;
    let mut all_attacks = 0;
    for sq in pieces {
        let attacks = match role {
            Role::Knight => knight_attacks(sq).0,
            Role::Bishop => bishop_attacks(sq, Bitboard(ctx.bishop_occupied)).0,
            Role::Rook => rook_attacks(sq, Bitboard(ctx.rook_occupied)).0,
            _ => queen_attacks(sq, Bitboard(ctx.occupied)).0,
        };
        all_attacks |= attacks;
        us.attacked_twice |= us.attacked & attacks;
        us.attacked |= attacks;
        let moves = ((attacks & ctx.mobility_area).count_ones() as usize).min(mobility.len - 1);
        acc.add(mobility.at(moves), s);

        let zone_hits = (attacks & ctx.enemy_king_zone).count_ones();
        if zone_hits > 0 {
            ctx.danger.add_zone_hits(ri - 1, zone_hits);
            ctx.attackers += 1;
        }

        let bit = 1u64 << sq as u32;
        match role {
            Role::Knight | Role::Bishop => {
                if ctx.outposts & bit != 0 {
                    let block = if role == Role::Knight {
                        blocks::knight_outpost
                    } else {
                        blocks::bishop_outpost
                    };
                    acc.add(block.one(), s);
                }
                if forward(ctx.color, bit) & ctx.all_pawns != 0 {
                    acc.add(blocks::minor_behind_pawn.one(), s);
                }
                acc.add(
                    blocks::minor_king_distance.at(ri - 1),
                    s * us.king.distance(sq) as i32,
                );
                if role == Role::Knight && attacks & ctx.outposts & !us.pieces != 0 {
                    acc.add(blocks::knight_reachable_outpost.one(), s);
                }
                if role == Role::Bishop {
                    if (bishop_attacks(sq, Bitboard(ctx.all_pawns)).0 & CENTRE).count_ones() > 1 {
                        acc.add(blocks::bishop_long_diagonal.one(), s);
                    }
                    let colour = if Bitboard::LIGHT_SQUARES.0 & bit != 0 {
                        Bitboard::LIGHT_SQUARES.0
                    } else {
                        Bitboard::DARK_SQUARES.0
                    };
                    let n = (us.pawns & colour).count_ones() as i32;
                    if n != 0 {
                        acc.add(blocks::bishop_pawns_same_colour.one(), s * n);
                    }
                    let n = (ctx.blocked_pawns & colour).count_ones() as i32;
                    if n != 0 {
                        acc.add(blocks::bishop_rammed_pawns.one(), s * n);
                    }
                    let enemy_pawns = ctx.all_pawns & !us.pawns;
                    let n = (bishop_attacks(sq, Bitboard(0)).0 & enemy_pawns).count_ones();
                    if n != 0 {
                        acc.add(blocks::bishop_xray_pawns.one(), s * n as i32);
                    }
                }
            }
            Role::Rook => {
                let file = file_mask(sq);
                if file & ctx.all_pawns == 0 {
                    acc.add(blocks::rook_open_file.one(), s);
                } else if file & us.pawns == 0 {
                    acc.add(blocks::rook_half_open_file.one(), s);
                }
                if relative_rank(ctx.color, sq) == 6 {
                    acc.add(blocks::rook_seventh_rank.one(), s);
                }
                if file & ctx.enemy_queens != 0 {
                    acc.add(blocks::rook_on_queen_file.one(), s);
                }
                let (king_file, rook_file) = (us.king.file(), sq.file());
                if moves <= 3
                    && relative_rank(ctx.color, sq) == 0
                    && (king_file < shakmaty::File::E) == (rook_file < king_file)
                {
                    acc.add(blocks::rook_trapped.one(), s);
                }
            }
            _ => {}
        }
    }
    us.attacked_by[ri] |= all_attacks;
}

/// Finishes the king-danger counts of `us` against `them`'s king with the
/// safe checks and hands them to the accumulator.
#[inline(always)]
fn king_danger<A: Accumulator>(
    board: &Board,
    occupied: u64,
    us: &Side,
    them: &Side,
    mut danger: DangerCounts,
    acc: &mut A,
) {
    let ours = board.by_color(us.color);
    if (board.queens() | board.rooks() | board.bishops() | board.knights()).intersects(ours) {
        let king = them.king;
        let occ = Bitboard(occupied);
        let safe = !(them.attacked | us.pieces);
        let bishop_rays = bishop_attacks(king, occ).0;
        let rook_rays = rook_attacks(king, occ).0;
        // The squares each piece type of ours reaches that check the king.
        let reaches = [
            knight_attacks(king).0 & us.attacked_by[1],
            bishop_rays & us.attacked_by[2],
            rook_rays & us.attacked_by[3],
            (bishop_rays | rook_rays) & us.attacked_by[4],
        ];
        let s = sign(us.color);
        let mut all_reaches = 0;
        for (a, reach) in reaches.into_iter().enumerate() {
            all_reaches |= reach;
            let checks = reach & safe;
            if checks != 0 {
                danger.set_check(a);
                acc.add(blocks::safe_checks.at(a), s * checks.count_ones() as i32);
            }
        }
        // Defended checking squares: attacked by the enemy, not ours.
        let unsafe_checks = all_reaches & !safe & !us.pieces;
        if unsafe_checks != 0 {
            acc.add(
                blocks::unsafe_checks.one(),
                s * unsafe_checks.count_ones() as i32,
            );
        }
    }
    acc.king_danger(us.color, &danger);
}

/// `bb` moved one rank toward the enemy (from `color`'s side).
#[inline(always)]
fn forward(color: Color, bb: u64) -> u64 {
    match color {
        Color::White => bb << 8,
        Color::Black => bb >> 8,
    }
}

/// `bb` moved one rank back toward `color`'s own side.
#[inline(always)]
fn backward(color: Color, bb: u64) -> u64 {
    match color {
        Color::White => bb >> 8,
        Color::Black => bb << 8,
    }
}

/// `bb` and every square in front of it (from `color`'s side).
#[inline(always)]
fn fill_forward(color: Color, mut bb: u64) -> u64 {
    match color {
        Color::White => {
            bb |= bb << 8;
            bb |= bb << 16;
            bb | bb << 32
        }
        Color::Black => {
            bb |= bb >> 8;
            bb |= bb >> 16;
            bb | bb >> 32
        }
    }
}

/// `bb` and every square behind it (from `color`'s side).
#[inline(always)]
fn fill_backward(color: Color, bb: u64) -> u64 {
    fill_forward(!color, bb)
}

/// The whole files that hold a square of `bb`.
#[inline(always)]
fn files_of(bb: u64) -> u64 {
    fill_forward(Color::White, fill_backward(Color::White, bb))
}

#[inline(always)]
fn sideways(bb: u64) -> u64 {
    ((bb & NOT_FILE_H) << 1) | ((bb & NOT_FILE_A) >> 1)
}

/// The squares of relative rank `rank` (0-based) for `color`.
#[inline(always)]
fn relative_rank_mask(color: Color, rank: usize) -> u64 {
    let r = match color {
        Color::White => rank,
        Color::Black => 7 - rank,
    };
    0xffu64 << (8 * r)
}

/// Relative ranks `low` to `high` (0-based, inclusive) from `color`'s side.
#[inline(always)]
fn relative_ranks_mask(color: Color, low: usize, high: usize) -> u64 {
    let ranks = (!0u64 >> (8 * (7 - (high - low)))) << (8 * low);
    match color {
        Color::White => ranks,
        Color::Black => ranks.swap_bytes(),
    }
}

/// The pawn-structure and king-shelter terms of `us` that depend on nothing
/// but the pawns and the two kings' squares (see [`PawnKingKey`]); returns
/// `us`'s passed pawns, for [`passed_pawn_terms`]. The structure is computed
/// set-wise; only passed pawns are visited one by one.
fn pawn_king_terms<A: Accumulator>(us: &Side, them: &Side, acc: &mut A) -> u64 {
    king_shelter(us, them, acc);
    let color = us.color;
    let s = sign(color);
    let pawns = us.pawns;
    if pawns == 0 {
        return 0;
    }
    let within = &WITHIN_DISTANCE[us.king as usize];
    let nearest = (1..8).find(|&d| pawns & within[d] != 0).unwrap_or(7);
    acc.add(blocks::king_pawn_distance.at(nearest), s);
    // Pawns with another own pawn in front of them on their file.
    let behind_own = fill_backward(color, backward(color, pawns));
    let doubled = pawns & behind_own;
    // Files holding own pawns, and pawns without a neighbour file.
    let files = files_of(pawns);
    let isolated = pawns & !sideways(files);
    // Squares level with or in front of a pawn on an adjacent file: a pawn
    // outside this set has every neighbour ahead of it.
    let supportable = fill_forward(color, sideways(pawns));
    let stop_attacked = backward(color, them.pawn_attacks);
    let backward_pawns = pawns & !supportable & !isolated & stop_attacked;
    let opposed = pawns & fill_backward(color, backward(color, them.pawns));
    let blocked = pawns & backward(color, them.pawns);
    for (i, rank) in [4, 5].into_iter().enumerate() {
        let n = (blocked & relative_rank_mask(color, rank)).count_ones() as i32;
        if n != 0 {
            acc.add(blocks::pawn_blocked.at(i), s * n);
        }
    }
    let weak_unopposed = (isolated | backward_pawns) & !opposed;
    for (bb, block) in [
        (weak_unopposed, blocks::pawn_weak_unopposed),
        (doubled, blocks::pawn_doubled),
        (isolated, blocks::pawn_isolated),
        (backward_pawns, blocks::pawn_backward),
    ] {
        let n = bb.count_ones() as i32;
        if n != 0 {
            acc.add(block.one(), s * n);
        }
    }
    let supported = pawns & us.pawn_attacks;
    let phalanx = pawns & sideways(pawns);
    if supported | phalanx != 0 {
        for rank in 1..7 {
            let mask = relative_rank_mask(color, rank);
            let n = (supported & mask).count_ones() as i32;
            if n != 0 {
                acc.add(blocks::pawn_supported.at(rank), s * n);
            }
            let n = (phalanx & mask).count_ones() as i32;
            if n != 0 {
                acc.add(blocks::pawn_phalanx.at(rank), s * n);
            }
        }
    }

    // Passed: no enemy pawn in front on this or an adjacent file, and the
    // front-most own pawn of its file.
    let enemy_front = them.pawns | sideways(them.pawns);
    let blocked_by_enemy = fill_backward(color, backward(color, enemy_front));
    let passed = pawns & !blocked_by_enemy & !behind_own;
    let mut candidates = pawns & !passed & !opposed & !behind_own;
    while candidates != 0 {
        let bit = candidates & candidates.wrapping_neg();
        candidates &= candidates - 1;
        let ahead = fill_forward(color, forward(color, bit));
        let sentries = (sideways(ahead) & them.pawns).count_ones();
        let helpers = (sideways(fill_backward(color, bit)) & pawns).count_ones();
        if helpers >= sentries {
            let rank = relative_rank(color, Square::new(bit.trailing_zeros()));
            acc.add(blocks::pawn_candidate.at(rank), s);
        }
    }
    let mut rest = passed;
    while rest != 0 {
        let sq = Square::new(rest.trailing_zeros());
        rest &= rest - 1;
        let rank = relative_rank(color, sq);
        acc.add(blocks::passed_rank.at(rank), s);
        let stop_bit = forward(color, 1u64 << sq as u32);
        if stop_bit != 0 {
            let stop = Square::new(stop_bit.trailing_zeros());
            let own = us.king.distance(stop) as i32;
            let enemy = them.king.distance(stop) as i32;
            acc.add(blocks::passed_own_king_distance.at(rank), s * own);
            acc.add(blocks::passed_enemy_king_distance.at(rank), s * enemy);
        }
    }
    passed
}

/// The terms of `us`'s passed pawns that depend on the pieces: a rook
/// behind, a free or safe path, a piece on the stop square.
#[inline(always)]
fn passed_pawn_terms<A: Accumulator>(
    board: &Board,
    occupied: u64,
    us: &Side,
    them: &Side,
    mut passed: u64,
    acc: &mut A,
) {
    let color = us.color;
    let s = sign(color);
    let rooks = (board.rooks() & board.by_color(color)).0;
    while passed != 0 {
        let sq = Square::new(passed.trailing_zeros());
        passed &= passed - 1;
        let rank = relative_rank(color, sq);
        let bit = 1u64 << sq as u32;
        if fill_backward(color, backward(color, bit)) & rooks != 0 {
            acc.add(blocks::passed_rook_behind.one(), s);
        }
        let path = fill_forward(color, forward(color, bit));
        if path & occupied == 0 {
            acc.add(blocks::passed_free_path.at(rank), s);
        }
        if path & them.attacked == 0 {
            acc.add(blocks::passed_safe_path.at(rank), s);
        }
        if them.pieces & forward(color, bit) != 0 {
            acc.add(blocks::passed_blocked.at(rank), s);
        }
    }
}

/// Pawn shield, pawn storm, the king's file and a pawnless flank: the
/// pawns and the king's square only.
fn king_shelter<A: Accumulator>(us: &Side, them: &Side, acc: &mut A) {
    let color = us.color;
    let s = sign(color);
    let king = us.king;
    let ahead = ranks_ahead(color, king);
    let king_file = king.file() as i32;
    for f in (king_file - 1).max(0)..=(king_file + 1).min(7) {
        let file = FILE_A << f;
        let own = file & ahead & us.pawns;
        let shield = if own == 0 {
            3
        } else {
            let nearest = nearest_square(color, own);
            match relative_rank(color, nearest) {
                0 | 1 => 0,
                2 => 1,
                _ => 2,
            }
        };
        acc.add(blocks::king_shield.at(shield), s);

        let enemy = file & ahead & them.pawns;
        let storm = if enemy == 0 {
            4
        } else {
            match relative_rank(color, nearest_square(color, enemy)) {
                0..=2 => 0,
                3 => 1,
                4 => 2,
                _ => 3,
            }
        };
        acc.add(blocks::king_storm.at(storm), s);
    }
    let file = FILE_A << king_file;
    let open = if file & us.pawns != 0 {
        0
    } else if file & them.pawns != 0 {
        1
    } else {
        2
    };
    acc.add(blocks::king_file.at(open), s);
    if KING_FLANK[king_file as usize] & (us.pawns | them.pawns) == 0 {
        acc.add(blocks::king_pawnless_flank.one(), s);
    }
}

/// Squares of `us`'s king flank, on its first five ranks, that the enemy
/// attacks.
#[inline(always)]
fn king_flank_attacks<A: Accumulator>(us: &Side, them: &Side, acc: &mut A) {
    let flank = KING_FLANK[us.king.file() as usize];
    let camp = relative_ranks_mask(us.color, 0, 4);
    let n = (them.attacked & flank & camp).count_ones() as i32;
    if n != 0 {
        acc.add(blocks::king_flank_attacks.one(), sign(us.color) * n);
    }
}

/// The files of the king's flank, by the king's file: a–d for a king on
/// a–c, c–f for d–e, e–h for f–h.
const KING_FLANK: [u64; 8] = {
    let queen_side = FILE_A | FILE_A << 1 | FILE_A << 2 | FILE_A << 3;
    let centre = FILE_A << 2 | FILE_A << 3 | FILE_A << 4 | FILE_A << 5;
    let king_side = FILE_A << 4 | FILE_A << 5 | FILE_A << 6 | FILE_A << 7;
    [
        queen_side, queen_side, queen_side, centre, centre, king_side, king_side, king_side,
    ]
};

/// The square of `bb` closest to `color`'s first rank.
#[inline(always)]
fn nearest_square(color: Color, bb: u64) -> Square {
    match color {
        Color::White => Square::new(bb.trailing_zeros()),
        Color::Black => Square::new(63 - bb.leading_zeros()),
    }
}

#[inline(always)]
fn threats<A: Accumulator>(board: &Board, occupied: u64, us: &Side, them: &Side, acc: &mut A) {
    let color = us.color;
    let s = sign(color);
    let enemy_non_king = them.pieces_but_king();
    // Pawn pushes (single, and double from the second rank) to squares no
    // enemy pawn attacks and that are defended or not attacked at all; the
    // pieces they would attack that no pawn attacks yet.
    let empty = !occupied;
    let mut pushes = forward(color, us.pawns) & empty;
    pushes |= forward(color, pushes & relative_rank_mask(color, 2)) & empty;
    pushes &= !them.pawn_attacks & (us.attacked | !them.attacked);
    let push_targets =
        pawn_attack_span(color, pushes) & enemy_non_king & !them.pawns & !us.pawn_attacks;
    if push_targets != 0 {
        for ri in 1..5 {
            let n = (push_targets & board.by_role(Role::ALL[ri]).0).count_ones() as i32;
            if n != 0 {
                acc.add(blocks::threat_by_pawn_push.at(ri), s * n);
            }
        }
    }
    let minors = us.attacked_by[1] | us.attacked_by[2];
    let undefended = us.attacked & !them.attacked;
    for (attacks, block, first_role) in [
        // Pawns attacking pawns are pawn structure, not threats.
        (us.pawn_attacks, blocks::threat_by_pawn, 1),
        (minors, blocks::threat_by_minor, 0),
        (us.attacked_by[3], blocks::threat_by_rook, 0),
        (us.attacked_by[4], blocks::threat_by_queen, 0),
        (undefended, blocks::hanging, 0),
    ] {
        let hits = attacks & enemy_non_king;
        if hits == 0 {
            continue;
        }
        // The king is never a target: piece types pawn … queen.
        for ri in first_role..5 {
            let n = (hits & board.by_role(Role::ALL[ri]).0).count_ones() as i32;
            if n != 0 {
                acc.add(block.at(ri), s * n);
            }
        }
    }
}

/// The defence of `us`'s king: pawns and minor pieces in its zone, zone
/// squares the enemy attacks and we do not defend twice, and our pieces
/// that alone block an enemy slider's line to it.
#[inline(always)]
fn king_defence<A: Accumulator>(board: &Board, occupied: u64, us: &Side, them: &Side, acc: &mut A) {
    let s = sign(us.color);
    let minors = (board.knights() | board.bishops()).0 & us.pieces;
    let defenders = ((us.pawns | minors) & us.king_zone).count_ones() as usize;
    acc.add(
        blocks::king_defenders.at(defenders.min(blocks::king_defenders.len - 1)),
        s,
    );
    let weak = (them.attacked & us.king_zone & !us.attacked_twice).count_ones() as i32;
    if weak != 0 {
        acc.add(blocks::king_zone_weak.one(), s * weak);
    }
    let diagonal = (board.bishops() | board.queens()).0;
    let straight = (board.rooks() | board.queens()).0;
    let king_files = sideways(file_mask(us.king)) | file_mask(us.king);
    let open_files = king_files & !files_of(us.pawns);
    let heavies = (open_files & straight & them.pieces).count_ones() as i32;
    if heavies != 0 {
        acc.add(blocks::king_open_file_heavies.one(), s * heavies);
    }
    let snipers = them.pieces
        & ((bishop_attacks(us.king, Bitboard(0)).0 & diagonal)
            | (rook_attacks(us.king, Bitboard(0)).0 & straight));
    let mut blockers = 0;
    for sniper in Bitboard(snipers) {
        let on_line = between(us.king, sniper).0 & occupied;
        if on_line.count_ones() == 1 && on_line & us.pieces != 0 {
            blockers += 1;
        }
    }
    if blockers != 0 {
        acc.add(blocks::king_blockers.one(), s * blockers);
    }
}

/// The pressure of `us` on `them`'s pieces: safe squares from which our
/// knights, bishops and rooks would attack their only queen, and squares
/// both sides attack that they do not protect strongly.
#[inline(always)]
fn pressure<A: Accumulator>(board: &Board, occupied: u64, us: &Side, them: &Side, acc: &mut A) {
    let s = sign(us.color);
    let strongly_protected = them.pawn_attacks | (them.attacked_twice & !us.attacked_twice);
    let restricted = (them.attacked & us.attacked & !strongly_protected).count_ones() as i32;
    if restricted != 0 {
        acc.add(blocks::restricted.one(), s * restricted);
    }
    let enemy_non_king = them.pieces_but_king();
    let weak = enemy_non_king & !strongly_protected & us.attacked;
    for (squares, block) in [
        (weak & them.attacked_by[4], blocks::weak_queen_protection),
        (weak & us.attacked_by[5], blocks::threat_by_king),
    ] {
        if squares != 0 {
            acc.add(block.one(), s * squares.count_ones() as i32);
        }
    }
    let queens = board.queens().0 & them.pieces;
    if queens.count_ones() == 1 {
        let queen = Square::new(queens.trailing_zeros());
        let safe = !us.pieces & !strongly_protected;
        let by_knight = knight_attacks(queen).0 & us.attacked_by[1] & safe;
        let occ = Bitboard(occupied);
        let by_slider = ((bishop_attacks(queen, occ).0 & us.attacked_by[2])
            | (rook_attacks(queen, occ).0 & us.attacked_by[3]))
            & safe
            & us.attacked_twice;
        for (i, squares) in [by_knight, by_slider].into_iter().enumerate() {
            if squares != 0 {
                acc.add(
                    blocks::threat_on_queen.at(i),
                    s * squares.count_ones() as i32,
                );
            }
        }
    }
}

/// The four centre squares d4, e4, d5, e5.
const CENTRE: u64 = 0x0000_0018_1800_0000;
/// The central files, c to f.
const CENTRE_FILES: u64 = 0x3c3c_3c3c_3c3c_3c3c;

#[inline(always)]
fn space<A: Accumulator>(us: &Side, them: &Side, acc: &mut A) {
    let color = us.color;
    let area = CENTRE_FILES & relative_ranks_mask(color, 1, 3);
    let safe = area & !us.pawns & !them.pawn_attacks;
    // Up to three squares behind each own pawn.
    let mut behind = backward(color, us.pawns);
    behind |= backward(color, behind);
    behind |= backward(color, behind);
    let n = safe.count_ones() + (behind & safe & !them.attacked).count_ones();
    if n != 0 {
        acc.add(blocks::space.one(), sign(color) * n as i32);
    }
}

/// Whether `strong`, with one bishop as its only piece, has all its pawns on
/// a rook's file whose promotion square is not of the bishop's colour, and
/// the enemy king stands on or next to that square: a draw, however many
/// pawns, because the king cannot be driven out of the corner.
fn wrong_bishop_draw(board: &Board, strong: Color) -> bool {
    let ours = board.by_color(strong);
    let bishops = board.bishops() & ours;
    if bishops.count() != 1 {
        return false;
    }
    let pawns = (board.pawns() & ours).0;
    let file = if pawns & !FILE_A == 0 {
        shakmaty::File::A
    } else if pawns & !FILE_H == 0 {
        shakmaty::File::H
    } else {
        return false;
    };
    let promotion = Square::from_coords(
        file,
        strong.fold_wb(shakmaty::Rank::Eighth, shakmaty::Rank::First),
    );
    let promotion_is_light = Bitboard::LIGHT_SQUARES.contains(promotion);
    if (bishops & Bitboard::LIGHT_SQUARES).any() == promotion_is_light {
        return false;
    }
    board
        .king_of(!strong)
        .is_some_and(|king| king.distance(promotion) <= 1)
}

/// Whether `color`'s only pieces besides the king are at most two knights.
fn knights_only(board: &Board, color: Color) -> bool {
    let ours = board.by_color(color) & !board.kings() & !board.pawns();
    ours == board.knights() & ours && ours.count() <= 2
}

/// `color`'s knights, bishops, rooks and queens in [`SCALE_MATERIAL_UNITS`].
fn non_pawn_units(board: &Board, color: Color) -> i32 {
    let ours = board.by_color(color);
    [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
        .into_iter()
        .map(|role| {
            SCALE_MATERIAL_UNITS[role_index(role)] * (board.by_role(role) & ours).count() as i32
        })
        .sum()
}

#[inline(always)]
fn taper_info(board: &Board) -> TaperInfo {
    let mut phase = 0;
    for role in Role::ALL {
        phase += PHASE_WEIGHTS[role_index(role)] * board.by_role(role).count() as i32;
    }
    let units = Color::ALL.map(|color| non_pawn_units(board, color));
    let pawns = Color::ALL.map(|color| (board.pawns() & board.by_color(color)).count() as u32);
    let phase = phase.min(MAX_PHASE);
    let white_bishops = board.bishops() & board.white();
    let black_bishops = board.bishops() & board.black();
    let opposite_bishops = white_bishops.count() == 1
        && black_bishops.count() == 1
        && (white_bishops & Bitboard::LIGHT_SQUARES).any()
            != (black_bishops & Bitboard::LIGHT_SQUARES).any();
    let only_bishops = units[0] == 3 && units[1] == 3;
    let scale_for = |strong: usize| -> i32 {
        let weak = 1 - strong;
        if pawns[strong] > 0 && units[strong] == 3 && wrong_bishop_draw(board, Color::ALL[strong]) {
            return SCALE_CANNOT_MATE;
        }
        if pawns[strong] == 0 {
            if units[strong] <= 3 {
                return SCALE_CANNOT_MATE;
            }
            if knights_only(board, Color::ALL[strong]) {
                // Two knights cannot force mate; against pawns they
                // sometimes can (the pawn takes away the stalemate).
                return if pawns[weak] == 0 {
                    SCALE_CANNOT_MATE
                } else {
                    SCALE_NO_PAWNS_SMALL_EDGE
                };
            }
            if units[strong] - units[weak] <= 3 {
                return SCALE_NO_PAWNS_SMALL_EDGE;
            }
        }
        if opposite_bishops {
            if only_bishops {
                return SCALE_PURE_OPPOSITE_BISHOPS;
            }
            return SCALE_OPPOSITE_BISHOPS_WITH_PIECES;
        }
        SCALE_NORMAL
    };
    TaperInfo {
        phase,
        scale_white: scale_for(0),
        scale_black: scale_for(1),
    }
}
