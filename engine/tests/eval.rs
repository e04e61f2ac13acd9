//! Evaluation invariants on real positions: the trace reproduces the
//! evaluation exactly, colour symmetry, exact finite differences, the
//! generated `params.rs` round trips, and no parameter set within the
//! declared bounds can overflow the evaluation's arithmetic.

use std::path::Path;

use engine::chess::position::fen_of;
use engine::chess::position::{mirrored, parse_fen};
use engine::eval::{
    self, DEFAULT_PARAMS, NUM_ENTRIES, PackedParams, Params, PawnKingCache, codegen, evaluate,
    evaluate_packed, evaluate_packed_memo, schema, trace,
};
use engine::formats::labeled::LabeledReader;
use engine::formats::params_file;
use engine::search::{SearchLimits, Searcher};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{Chess, Position};

fn data_path(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

/// The bundled labeled positions plus the WAC and Arasan suites (tactical,
/// unbalanced positions) plus positions from random play (promotions, bare
/// kings, odd material).
fn real_positions() -> Vec<Chess> {
    let file = std::fs::File::open(data_path("data/labeled/masters-quiet-20k.epd")).unwrap();
    let mut out: Vec<Chess> = LabeledReader::new(std::io::BufReader::new(file), None)
        .map(|r| r.unwrap().unwrap().1.position)
        .collect();
    for suite in ["data/suites/wacnew.epd", "data/suites/arasan2024.epd"] {
        let text = std::fs::read_to_string(data_path(suite)).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let board: Vec<&str> = line.split_whitespace().take(4).collect();
            out.push(parse_fen(&board.join(" ")).unwrap());
        }
    }
    out.extend(random_play_positions(2000, 7));
    out
}

fn random_play_positions(count: usize, seed: u64) -> Vec<Chess> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    while out.len() < count {
        let mut pos = Chess::default();
        for _ in 0..300 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves[rng.random_range(0..moves.len())];
            pos.play_unchecked(m);
            out.push(pos.clone());
        }
    }
    out.truncate(count);
    out
}

fn random_params(rng: &mut ChaCha8Rng) -> Params {
    let mut p = DEFAULT_PARAMS;
    for b in schema::BLOCKS {
        for e in b.block.start..b.block.start + b.block.len {
            p.entries[e].mg = rng.random_range(b.min..=b.max);
            p.entries[e].eg = rng.random_range(b.min..=b.max);
        }
    }
    p
}

#[test]
fn trace_dot_params_equals_evaluate_exactly() {
    let positions = real_positions();
    assert!(positions.len() >= 10_000);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let random = random_params(&mut rng);
    let (packed_default, packed_random) = (
        PackedParams::new(&DEFAULT_PARAMS),
        PackedParams::new(&random),
    );
    for pos in &positions {
        let t = trace(pos);
        assert_eq!(t.evaluate(&DEFAULT_PARAMS), evaluate(pos, &DEFAULT_PARAMS));
        assert_eq!(t.evaluate(&random), evaluate(pos, &random));
        // The search's packed form gives the same value.
        assert_eq!(
            evaluate_packed(pos, &packed_default),
            evaluate(pos, &DEFAULT_PARAMS)
        );
        assert_eq!(evaluate_packed(pos, &packed_random), evaluate(pos, &random));
    }
}

#[test]
fn the_pawn_king_memo_changes_no_evaluation() {
    // Real positions share pawn structures, so a memo sees hits, misses
    // and slots taken over by other structures; with random weights (so
    // that every term counts) and a memo cleared when they change, every
    // value is the plain packed evaluation's.
    let positions = real_positions();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut memo = PawnKingCache::new();
    for params in [DEFAULT_PARAMS, random_params(&mut rng)] {
        memo.clear();
        let packed = PackedParams::new(&params);
        for pass in 0..2 {
            for pos in &positions {
                assert_eq!(
                    evaluate_packed_memo(pos, &packed, &mut memo),
                    evaluate_packed(pos, &packed),
                    "pass {pass}: {}",
                    fen_of(pos)
                );
            }
        }
    }
}

#[test]
fn colour_mirror_has_the_same_evaluation() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let random = random_params(&mut rng);
    for pos in real_positions() {
        let m = mirrored(&pos);
        assert_eq!(
            evaluate(&pos, &DEFAULT_PARAMS),
            evaluate(&m, &DEFAULT_PARAMS),
            "{}",
            engine::chess::position::fen_of(&pos)
        );
        assert_eq!(evaluate(&pos, &random), evaluate(&m, &random));
    }
}

/// Nudging one scalar by δ changes the (untruncated) evaluation by exactly
/// the traced gradient × δ; each integer evaluation is truncated by less than
/// one centipawn, so their difference is within two of the prediction.
#[test]
fn finite_differences_match_the_trace_gradient() {
    let positions = real_positions();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut checked = 0;
    for _ in 0..3000 {
        let pos = &positions[rng.random_range(0..positions.len())];
        let t = trace(pos);
        if t.entries.is_empty() {
            continue;
        }
        // Half the time pick a parameter the position uses, otherwise any.
        let scalar = if rng.random_bool(0.5) {
            let e = t.entries[rng.random_range(0..t.entries.len())].entry as usize;
            2 * e + rng.random_range(0..2)
        } else {
            rng.random_range(0..Params::NUM_SCALARS)
        };
        // The evaluation is a step function of the king-danger units (see
        // king_danger_units_follow_the_relaxation).
        if engine::eval::danger::UNIT_ENTRY.contains(&(scalar / 2)) {
            continue;
        }
        let delta = rng.random_range(1..=40);
        let base = DEFAULT_PARAMS;
        let mut nudged = DEFAULT_PARAMS;
        nudged.set_scalar(scalar, base.scalar(scalar) + delta);
        // Skip the rare nudge that flips the sign of the endgame sum (the
        // scale factor that applies changes there: a kink, not a gradient).
        if (t.sums(&base).1 > 0) != (t.sums(&nudged).1 > 0) {
            continue;
        }
        let grad: f64 = t
            .gradient(&base)
            .iter()
            .filter(|(i, _)| *i == scalar)
            .map(|(_, g)| g)
            .sum();
        let change = (evaluate(pos, &nudged) - evaluate(pos, &base)) as f64;
        assert!(
            (change - grad * delta as f64).abs() < 2.0,
            "param {} delta {delta}: change {change}, predicted {}",
            engine::eval::schema::scalar_name(scalar),
            grad * delta as f64
        );
        checked += 1;
    }
    assert!(checked > 2000);
}

/// The committed `params.rs` is exactly what the generator writes for the
/// compiled defaults; after a change to the declaration it is not (a new
/// block evaluates with its declared default until then), and this test
/// names the command that regenerates it.
/// The evaluation is a step function of the king-danger units; the trace's
/// gradient for them (and for the attack table) is that of the smooth
/// relaxation the tuner follows, which equals the evaluation at integer
/// weights. Checked against central differences of the relaxation,
/// computed here from the trace's parts.
#[test]
fn king_danger_units_follow_the_relaxation() {
    use engine::eval::danger::{self, interpolate};
    let relaxed = |t: &eval::Trace, w: &[f64]| -> f64 {
        let (mut mg, mut eg) = (0.0, 0.0);
        for e in &t.entries {
            mg += w[2 * e.entry as usize] * e.coef as f64;
            eg += w[2 * e.entry as usize + 1] * e.coef as f64;
        }
        for (side, counts) in t.danger.iter().enumerate() {
            let sign = if side == 0 { 1.0 } else { -1.0 };
            for phase in 0..2 {
                let c: f64 = (0..danger::FEATURES)
                    .map(|k| w[2 * danger::UNIT_ENTRY[k] + phase] * counts.0[k] as f64)
                    .sum();
                let v = interpolate(|j| w[2 * danger::TABLE.at(j) + phase], c).value;
                if phase == 0 {
                    mg += sign * v
                } else {
                    eg += sign * v
                }
            }
        }
        let (fm, fe) = t.phase_factors(if eg > 0.0 { 1 } else { 0 });
        mg * fm + eg * fe
    };
    let positions = real_positions();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut checked = 0;
    for _ in 0..400 {
        let params = random_params(&mut rng);
        let pos = &positions[rng.random_range(0..positions.len())];
        let t = trace(pos);
        if t.danger.iter().all(|d| d.is_empty()) {
            continue;
        }
        let w: Vec<f64> = params.to_scalars().iter().map(|&v| v as f64).collect();
        // At integer weights the relaxation is the evaluation (untruncated).
        let exact = relaxed(&t, &w);
        assert!((exact - evaluate(pos, &params) as f64).abs() < 1.0);
        let grad = t.gradient(&params);
        let table = 2 * danger::TABLE.start..2 * (danger::TABLE.start + danger::TABLE.len);
        let units = danger::UNIT_ENTRY.iter().flat_map(|&e| [2 * e, 2 * e + 1]);
        for i in units.chain(table.step_by(7)) {
            let analytic: f64 = grad.iter().filter(|(j, _)| *j == i).map(|(_, g)| g).sum();
            // Central differences, Richardson-extrapolated (the relaxation
            // curves strongly with random tables).
            let central = |h: f64| {
                let mut up = w.clone();
                up[i] += h;
                let mut down = w.clone();
                down[i] -= h;
                (relaxed(&t, &up) - relaxed(&t, &down)) / (2.0 * h)
            };
            let numeric = (4.0 * central(5e-5) - central(1e-4)) / 3.0;
            assert!(
                (numeric - analytic).abs() <= 1e-4 * analytic.abs().max(1.0),
                "{}: analytic {analytic}, numeric {numeric}",
                engine::eval::schema::scalar_name(i)
            );
            checked += 1;
        }
    }
    assert!(checked > 5000, "{checked}");
}

#[test]
fn committed_params_rs_is_the_generator_output_for_the_defaults() {
    let committed = include_str!("../src/eval/params.rs");
    let regenerate = format!(
        "engine/src/eval/params.rs is not the generator's output for the declaration: \
         regenerate it from the workspace root with `{}`",
        codegen::REGENERATE_COMMAND
    );
    let provenance = codegen::provenance_of(committed).unwrap_or_else(|| panic!("{regenerate}"));
    let expected = codegen::generate(&DEFAULT_PARAMS, &provenance);
    if let Some((n, (want, have))) = expected
        .lines()
        .zip(committed.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b)
    {
        panic!(
            "{regenerate}\nfirst difference at line {}:\n  generated: {want}\n  committed: {have}",
            n + 1
        );
    }
    assert!(expected == committed, "{regenerate} (the lengths differ)");
}

#[test]
fn text_file_to_generated_rust_round_trip() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let random = random_params(&mut rng);
    let text = params_file::to_text(&random, &[]);
    let loaded = params_file::parse(&text, Path::new("random.txt")).unwrap();
    assert_eq!(loaded.params, random);
    // The generated Rust states every value where the block constant holds it.
    let rust = codegen::generate(&loaded.params, &["test".into()]);
    let knight = random.entries[schema::blocks::material.at(1)];
    assert!(rust.contains(&format!("s({:4}, {:4}), // knight", knight.mg, knight.eg)));
    assert_eq!(NUM_ENTRIES * 2, Params::NUM_SCALARS);
}

#[test]
fn compiled_defaults_are_within_their_declared_bounds() {
    for b in schema::BLOCKS {
        for e in b.block.start..b.block.start + b.block.len {
            let v = DEFAULT_PARAMS.entries[e];
            assert!(b.contains(v.mg) && b.contains(v.eg), "{} {v:?}", b.name);
        }
    }
}

#[test]
fn default_evaluation_is_sane() {
    let start = Chess::default();
    assert!(evaluate(&start, &DEFAULT_PARAMS).abs() <= 30);
    // A queen up is winning for the side that has it, whoever moves.
    let white_queen = parse_fen("4k3/pppppppp/8/8/8/8/PPPPPPPP/3QK3 w - - 0 1").unwrap();
    assert!(evaluate(&white_queen, &DEFAULT_PARAMS) > 700);
    let black_to_move = parse_fen("4k3/pppppppp/8/8/8/8/PPPPPPPP/3QK3 b - - 0 1").unwrap();
    assert!(evaluate(&black_to_move, &DEFAULT_PARAMS) < -700);
    // Bare minor piece: cannot win, scaled to a draw in the endgame.
    let kbk = parse_fen("4k3/8/8/8/8/8/8/2B1K3 w - - 0 1").unwrap();
    assert!(evaluate(&kbk, &DEFAULT_PARAMS).abs() < 50);
    let bd = eval::breakdown(&white_queen, &DEFAULT_PARAMS);
    assert_eq!(bd.score, evaluate(&white_queen, &DEFAULT_PARAMS));
}

/// The compiled weights' evaluation of `fen` (White's view).
fn eval_of(fen: &str) -> i32 {
    evaluate(&parse_fen(fen).unwrap(), &DEFAULT_PARAMS)
}

#[test]
fn a_wrong_bishop_with_rook_pawns_is_a_draw() {
    // The h-pawns promote on h8, a dark square; a light-squared bishop
    // cannot drive the king from the corner, however many pawns.
    let wrong = eval_of("7k/8/8/8/8/7P/7P/3BK3 w - - 0 1");
    assert!(wrong.abs() < 60, "wrong bishop: {wrong}");
    // The same with the bishop on dark squares wins, and so does the wrong
    // bishop while the king is away from the corner.
    let right = eval_of("7k/8/8/8/8/7P/7P/2B1K3 w - - 0 1");
    assert!(right > 300, "right bishop: {right}");
    let king_away = eval_of("8/8/8/8/2k5/7P/7P/3BK3 w - - 0 1");
    assert!(king_away > 300, "king away: {king_away}");
    // Black's a-pawns promote on a1, a dark square: Black's light-squared
    // bishop is the wrong one, with White's king in that corner.
    let black = eval_of("3kb3/p7/p7/8/8/8/8/K7 b - - 0 1");
    assert!(black.abs() < 60, "black's wrong bishop: {black}");
}

#[test]
fn two_knights_without_pawns_are_a_draw() {
    // Two knights cannot mate a lone king: a draw, whoever has them (the
    // endgame score scaled to 0; the middlegame share of the knights'
    // phase remains).
    let white = eval_of("8/8/8/3N4/3NK3/8/8/k7 w - - 0 1");
    assert!(white.abs() < 100, "KNN v K: {white}");
    let black = eval_of("8/8/4k3/2n5/3n4/8/8/6K1 w - - 0 1");
    assert!(black.abs() < 100, "K v KNN: {black}");
    // Against a pawn they may win: scaled down, still ahead.
    let pawn = eval_of("8/8/8/3N4/3NK3/8/p7/k7 w - - 0 1");
    assert!(pawn > 30 && pawn < 200, "KNN v KP: {pawn}");
    // A pawn of their own, or a bishop instead, wins as before.
    let own_pawn = eval_of("8/8/8/3N4/3NK3/6P1/8/k7 w - - 0 1");
    assert!(own_pawn > 500, "KNNP v K: {own_pawn}");
    let bishop = eval_of("8/8/8/3N4/4K3/3B4/8/k7 w - - 0 1");
    assert!(bishop > 500, "KBN v K: {bishop}");
}

#[test]
fn mop_up_drives_the_lone_king_to_the_bishops_corner() {
    // White's bishop on c1 is dark-squared: the mate exists in a1 and h8.
    let with_black_king = |black_king: &str| eval_of(&format!("{black_king} w - - 0 1"));
    let right_corner = with_black_king("7k/8/8/8/8/8/8/2B1KN2");
    let wrong_corner = with_black_king("k7/8/8/8/8/8/8/2B1KN2");
    let centre = with_black_king("8/8/8/3k4/8/8/8/2B1KN2");
    assert!(right_corner > centre + 200, "{right_corner} {centre}");
    assert!(
        right_corner > wrong_corner + 200,
        "{right_corner} {wrong_corner}"
    );
    // Against a lone king with a rook, the edge is better than the centre,
    // and the attacking king's approach counts too.
    let rook_edge = with_black_king("3k4/8/8/8/8/8/8/R3K3");
    let rook_centre = with_black_king("8/8/8/3k4/8/8/8/R3K3");
    let rook_centre_near = with_black_king("8/8/8/3k4/8/3K4/8/R7");
    assert!(rook_edge > rook_centre, "{rook_edge} {rook_centre}");
    assert!(
        rook_centre_near > rook_centre,
        "{rook_centre_near} {rook_centre}"
    );
}

/// Legal positions with as much on the board as the rules allow (checked
/// with python-chess): nine queens a side, every pawn passed,
/// a king in a crowd of attackers.
const EXTREME_FENS: &[&str] = &[
    "Knqq1q2/2Bkq1Q1/1Qn4Q/1N2Qr1q/2b1Q3/1Rb1qQq1/r1QqqQR1/2N2Q1B w - - 0 1",
    "1B1Q2Q1/3Q4/K1R1Q3/2Q1R3/3Q2QN/1B6/k6Q/3N1Q2 b - - 0 1",
    "n3b3/1q1q4/3q4/1qk2q2/2q5/2r4q/1q3r2/1q2bn1K w - - 0 1",
    "Q2BQ2K/QQq3bN/2q1RQnQ/qb1qq3/2r2Qr1/1R2q1Q1/2kq2BN/q3nQ1q w - - 0 1",
    "Q1Q5/7p/2Kp1Q1Q/3p1Qp1/3pQ3/5pk1/2Q1Q1pp/7Q w - - 0 1",
    "8/PPPPPPPP/8/7k/K7/8/pppppppp/8 w - - 0 1",
];

/// The evaluation of a traced position under `params`, in 128-bit
/// arithmetic that cannot overflow: the reference the engine's `i32`
/// arithmetic is checked against. Also returns the largest magnitude of the
/// untapered middlegame and endgame sums.
fn wide_evaluation(t: &eval::Trace, params: &Params) -> (i128, i128) {
    let (mut mg, mut eg) = (0i128, 0i128);
    for e in &t.entries {
        let w = params.entries[e.entry as usize];
        mg += i128::from(w.mg) * i128::from(e.coef);
        eg += i128::from(w.eg) * i128::from(e.coef);
    }
    for (side, counts) in [1i128, -1].into_iter().zip(&t.danger) {
        let (mut cm, mut ce) = (0i128, 0i128);
        for (k, &n) in counts.0.iter().enumerate() {
            let u = params.entries[eval::danger::UNIT_ENTRY[k]];
            cm += i128::from(u.mg) * i128::from(n);
            ce += i128::from(u.eg) * i128::from(n);
        }
        let last = i128::from(eval::danger::MAX_COUNTER);
        let at = |c: i128| eval::danger::TABLE.at(c.clamp(0, last) as usize);
        mg += side * i128::from(params.entries[at(cm)].mg);
        eg += side * i128::from(params.entries[at(ce)].eg);
    }
    let scale = if eg > 0 {
        t.taper.scale_white
    } else {
        t.taper.scale_black
    };
    let phase = i128::from(t.taper.phase);
    let max = i128::from(eval::MAX_PHASE);
    let normal = i128::from(eval::SCALE_NORMAL);
    let white = (mg * phase * normal + eg * (max - phase) * i128::from(scale)) / (max * normal);
    let stm = if t.turn == shakmaty::Color::White {
        white
    } else {
        -white
    };
    (stm, mg.abs().max(eg.abs()))
}

/// Every scalar's declared bounds, in index order.
fn scalar_bounds() -> Vec<(i32, i32)> {
    (0..Params::NUM_SCALARS)
        .map(|i| {
            let b = schema::block_of_scalar(i);
            (b.min, b.max)
        })
        .collect()
}

/// Every parameter at its lower or upper bound.
fn at_bounds(bounds: &[(i32, i32)], choose_max: impl Fn(usize) -> bool) -> Params {
    let mut p = DEFAULT_PARAMS;
    for (i, &(min, max)) in bounds.iter().enumerate() {
        p.set_scalar(i, if choose_max(i) { max } else { min });
    }
    p
}

/// For any parameter set within the declared bounds the evaluation's
/// arithmetic cannot overflow: with every parameter at its bound (all at
/// the maximum, all at the minimum, random corners, and per position the
/// corner that pushes each term's sum furthest for White or for Black),
/// on real and extreme positions, the play, packed and trace evaluations
/// equal a 128-bit reference, with the untapered sums far inside `i32`.
/// The search then still returns a legal move.
#[test]
fn every_parameter_at_its_bound_cannot_overflow() {
    let mut positions = real_positions();
    positions.extend(EXTREME_FENS.iter().map(|f| parse_fen(f).unwrap()));
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let bounds = scalar_bounds();
    let mut fixed = vec![at_bounds(&bounds, |_| true), at_bounds(&bounds, |_| false)];
    for _ in 0..3 {
        let corner: Vec<bool> = (0..Params::NUM_SCALARS).map(|_| rng.random()).collect();
        fixed.push(at_bounds(&bounds, |i| corner[i]));
    }
    let mut danger = vec![false; NUM_ENTRIES];
    for e in eval::danger::UNIT_ENTRY {
        danger[e] = true;
    }
    danger[eval::danger::TABLE.start..eval::danger::TABLE.start + eval::danger::TABLE.len]
        .fill(true);
    let packed: Vec<PackedParams> = fixed.iter().map(PackedParams::new).collect();
    let mut largest = 0i128;
    for pos in &positions {
        let t = trace(pos);
        // The corners that maximise the sums for White and for Black: a
        // weight at the bound its coefficient's sign favours, the
        // king-danger units and table at their maximum.
        let mut coef = vec![0i32; NUM_ENTRIES];
        for e in &t.entries {
            coef[e.entry as usize] = i32::from(e.coef);
        }
        let for_white = at_bounds(&bounds, |i| coef[i / 2] > 0 || danger[i / 2]);
        let for_black = at_bounds(&bounds, |i| coef[i / 2] < 0 || danger[i / 2]);
        for (k, params) in fixed.iter().chain([&for_white, &for_black]).enumerate() {
            let (reference, sums) = wide_evaluation(&t, params);
            largest = largest.max(sums);
            assert!(sums < 1 << 24, "sums {sums} at {}", fen_of(pos));
            assert_eq!(
                i128::from(evaluate(pos, params)),
                reference,
                "{}",
                fen_of(pos)
            );
            assert_eq!(i128::from(t.evaluate(params)), reference, "{}", fen_of(pos));
            if let Some(p) = packed.get(k) {
                assert_eq!(
                    i128::from(evaluate_packed(pos, p)),
                    reference,
                    "{}",
                    fen_of(pos)
                );
            } else {
                let p = PackedParams::new(params);
                assert_eq!(
                    i128::from(evaluate_packed(pos, &p)),
                    reference,
                    "{}",
                    fen_of(pos)
                );
            }
        }
    }
    // The extremes reach far beyond any real evaluation, and still leave a
    // factor of more than 100 to the `i32` limit.
    assert!(largest > 40_000, "largest sum {largest}");
    // Not with every weight at its minimum: no piece is then worth
    // anything, and the quiescence search of the pawn race explodes (92M
    // nodes before depth 1 completes, which no node limit interrupts).
    let limits = SearchLimits {
        nodes: Some(20_000),
        ..SearchLimits::depth(3)
    };
    for params in fixed.iter().filter(|p| **p != fixed[1]) {
        let mut searcher = Searcher::new(std::sync::Arc::new(params.clone()), 1);
        for fen in EXTREME_FENS {
            let pos = parse_fen(fen).unwrap();
            let r = searcher.search(&pos, &[], &limits, |_| {});
            let m = r
                .best_move
                .unwrap_or_else(|| panic!("no move in {fen}: {r:?}"));
            assert!(pos.is_legal(m), "{fen}");
        }
    }
}

/// The net White-relative coefficient of block element `entry` in `fen`'s
/// trace.
fn coefficient(fen: &str, entry: usize) -> i32 {
    let pos = parse_fen(fen).unwrap();
    trace(&pos)
        .entries
        .iter()
        .filter(|t| t.entry as usize == entry)
        .map(|t| i32::from(t.coef))
        .sum()
}

#[test]
fn king_defence_terms_count_defenders_and_blockers() {
    use engine::eval::schema::blocks;
    // White's bishop d2 alone blocks the black bishop b4, its pawn e2 alone
    // the rook e8: two blockers; both stand in the white king's zone.
    let fen = "4r2k/8/8/8/1b6/8/3BP3/4K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::king_blockers.one()), 2);
    assert_eq!(coefficient(fen, blocks::king_defenders.at(2)), 1);
    assert_eq!(coefficient(fen, blocks::king_defenders.at(0)), -1);
    // A second piece on the line is no blocker.
    let fen = "4r2k/8/8/8/1b6/2N5/3BP3/4K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::king_blockers.one()), 1);
    // An enemy piece on the line is not ours to count.
    let fen = "4r2k/8/8/4p3/1b6/8/3B4/4K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::king_blockers.one()), 1);
}

#[test]
fn threats_on_the_queen_count_safe_knight_squares() {
    use engine::eval::schema::blocks;
    // The knight d4 reaches c6 and e6, both a knight's jump from the queen
    // d8 and attacked by nothing black.
    let fen = "3q3k/8/8/8/3N4/8/8/4K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::threat_on_queen.at(0)), 2);
    // A black pawn b7 protects c6.
    let fen = "3q3k/1p6/8/8/3N4/8/8/4K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::threat_on_queen.at(0)), 1);
    // Two queens: no single queen to threaten.
    let fen = "3q2qk/8/8/8/3N4/8/8/4K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::threat_on_queen.at(0)), 0);
}

#[test]
fn rooks_see_through_their_own_rooks() {
    use engine::eval::schema::blocks;
    // The rook a1 sees a2 and, through it, a3–a8, and b1–d1: 10 squares
    // (4 without the x-ray); the rook a2 sees a1, a3–a8 and b2–h2: 14.
    let fen = "4k3/8/8/8/8/8/R7/R3K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::mobility_rook.at(10)), 1);
    assert_eq!(coefficient(fen, blocks::mobility_rook.at(14)), 1);
    assert_eq!(coefficient(fen, blocks::mobility_rook.at(4)), 0);
    // An enemy rook in between is not seen through.
    let fen = "4k3/8/8/8/8/8/r7/R3K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::mobility_rook.at(4)), 1);
}

#[test]
fn a_candidate_passer_has_as_many_helpers_as_sentries() {
    use engine::eval::schema::blocks;
    // c4: no black pawn ahead on the c-file, one sentry (b6), one helper
    // (b4); b4 and b6 oppose each other.
    let fen = "4k3/8/1p6/8/1PP5/8/8/4K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::pawn_candidate.at(3)), 1);
    // A second sentry (d6) outnumbers the helper; d6 itself has a sentry
    // (c4) and no helper.
    let fen = "4k3/8/1p1p4/8/1PP5/8/8/4K3 w - - 0 1";
    for rank in 0..8 {
        assert_eq!(coefficient(fen, blocks::pawn_candidate.at(rank)), 0);
    }
    // The same for Black, mirrored: c5 is Black's candidate on its rank 4.
    let fen = "4k3/8/8/1pp5/8/1P6/8/4K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::pawn_candidate.at(3)), -1);
}

#[test]
fn closedness_counts_pawns_rams_and_open_files() {
    use engine::eval::schema::blocks;
    // Sixteen pawns, none blocked, no open file: (16 + 0 − 0) / 4 = 4.
    let fen = "4k3/pppppppp/8/8/8/8/PPPPPPPP/1N2K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::knight_closedness.at(4)), 1);
    // Every pawn blocked: (16 + 2 × 8) / 4 = 8.
    let fen = "4k3/8/8/pppppppp/PPPPPPPP/8/8/1N2K2R w - - 0 1";
    assert_eq!(coefficient(fen, blocks::knight_closedness.at(8)), 1);
    assert_eq!(coefficient(fen, blocks::rook_closedness.at(8)), 1);
    // Two rammed pawns and seven open files: below 0, clamped.
    let fen = "4k3/8/8/3p4/3P4/8/8/1n2K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::knight_closedness.at(0)), -1);
}

#[test]
fn bishops_count_their_blocked_pawns_and_kings_the_open_files() {
    use engine::eval::schema::blocks;
    // The bishop c1 (dark) and the pawn d4 (dark) that d5 blocks.
    let fen = "4k3/8/8/3p4/3P4/8/8/2B1K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::bishop_rammed_pawns.one()), 1);
    // On light squares it does not count the dark pawn.
    let fen = "4k3/8/8/3p4/3P4/8/8/3BK3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::bishop_rammed_pawns.one()), 0);
    // The black king g8 has no pawn on the h-file, where the white rook
    // stands: it counts against Black.
    let fen = "6k1/5pp1/8/8/8/8/8/4K2R w - - 0 1";
    assert_eq!(coefficient(fen, blocks::king_open_file_heavies.one()), -1);
    let fen = "6k1/5ppp/8/8/8/8/8/4K2R w - - 0 1";
    assert_eq!(coefficient(fen, blocks::king_open_file_heavies.one()), 0);
}

#[test]
fn bishops_x_ray_pawns_rooks_get_trapped_kings_and_queens_threaten() {
    use engine::eval::schema::blocks;
    // The bishop b2's diagonals hold the black pawn d4 (and, behind it,
    // nothing else).
    let fen = "4k3/8/8/8/3p4/8/1B6/4K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::bishop_xray_pawns.one()), 1);
    // Through a piece too.
    let fen = "4k3/8/5p2/8/3n4/8/1B6/4K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::bishop_xray_pawns.one()), 1);
    // The rook g1 beside the king f1, its one safe square h1: trapped.
    let fen = "4k3/8/8/8/8/8/5PPP/5KR1 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::rook_trapped.one()), 1);
    // On the king's other side it is not.
    let fen = "4k3/8/8/8/8/8/3PPP2/3RK3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::rook_trapped.one()), 0);
    // The white king attacks the undefended knight d2.
    let fen = "4k3/8/8/8/8/8/3n4/4K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::threat_by_king.one()), 1);
    assert_eq!(coefficient(fen, blocks::weak_queen_protection.one()), 0);
    // The black queen c3 defends it, once: still weak, and the queen's.
    let fen = "4k3/8/8/8/8/2q5/3n4/4K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::threat_by_king.one()), 1);
    assert_eq!(coefficient(fen, blocks::weak_queen_protection.one()), 1);
    // A pawn e3 defends it: strongly protected.
    let fen = "4k3/8/8/8/8/2q1p3/3n4/4K3 w - - 0 1";
    assert_eq!(coefficient(fen, blocks::threat_by_king.one()), 0);
}
