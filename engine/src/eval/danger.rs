//! King danger: the one evaluation term that is not linear in its weights.
//!
//! A side's attack on the enemy king is described by its [`DangerCounts`]:
//! how many squares of the enemy king zone its knights, bishops, rooks and
//! queens attack (all zero when one minor piece or rook is the whole
//! attack), and which of those piece types can give a safe check. The
//! *counter* is the unit-weighted sum of the counts (`king_attack_units` per
//! zone square, `king_check_units` per safe check), computed separately
//! with the middlegame and the endgame units, and it selects one entry of
//! the `king_attack` table, capped at the last one: the middlegame counter
//! reads the table's `.mg` values, the endgame counter its `.eg` values.
//!
//! In play the units are integers and so are the counters: the term is a
//! table lookup ([`lookup`], [`lookup_packed`]). To give the tuner a
//! gradient in the units as well, the table is also read through a smooth
//! relaxation, [`interpolate`]: a C² piecewise-quintic curve through the
//! table's points (quintic Hermite, with the table's central differences as
//! slopes and second differences as curvatures, flat beyond both ends). It
//! equals the lookup at every integer counter, so the relaxed evaluation is
//! the engine's at integer weights, and its derivatives in the table
//! entries and in the counter are exact everywhere.

use super::schema::{Block, blocks};
use super::{NUM_ENTRIES, S, pack, unpack};

/// Number of counted features per side: zone squares attacked by knights,
/// bishops, rooks and queens, then safe checks by the same four.
pub const FEATURES: usize = 8;

/// Largest counter: the attack table's last entry.
pub const MAX_COUNTER: i32 = blocks::king_attack.len as i32 - 1;

/// The attack table.
pub const TABLE: Block = blocks::king_attack;

/// The entry holding the units of each feature.
pub const UNIT_ENTRY: [usize; FEATURES] = {
    let mut out = [0; FEATURES];
    let mut k = 0;
    while k < 4 {
        out[k] = blocks::king_attack_units.at(k);
        out[4 + k] = blocks::king_check_units.at(k);
        k += 1;
    }
    out
};

/// One side's attack on the enemy king, by feature (see [`FEATURES`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DangerCounts(pub [u8; FEATURES]);

impl DangerCounts {
    /// No attack.
    pub const NONE: DangerCounts = DangerCounts([0; FEATURES]);

    /// Whether every count is zero (both counters are then 0 whatever the
    /// units).
    pub fn is_empty(&self) -> bool {
        self.0 == [0; FEATURES]
    }

    /// Zone squares attacked by pieces of attacker index `a` (knight = 0 …
    /// queen = 3).
    pub fn add_zone_hits(&mut self, a: usize, hits: u32) {
        self.0[a] = self.0[a].saturating_add(hits.min(u8::MAX as u32) as u8);
    }

    /// A safe check by attacker index `a`.
    pub fn set_check(&mut self, a: usize) {
        self.0[4 + a] = 1;
    }

    /// Clears the zone counts (a lone minor or rook is not an attack).
    pub fn clear_zone(&mut self) {
        self.0[..4].fill(0);
    }
}

/// The middlegame and endgame counters of `counts` under `weights`.
#[inline(always)]
pub fn counters(weights: &[S; NUM_ENTRIES], counts: &DangerCounts) -> (i32, i32) {
    let (mut mg, mut eg) = (0, 0);
    for (k, &n) in counts.0.iter().enumerate() {
        if n != 0 {
            let u = weights[UNIT_ENTRY[k]];
            mg += u.mg * i32::from(n);
            eg += u.eg * i32::from(n);
        }
    }
    (mg, eg)
}

/// The table element a counter selects.
#[inline(always)]
pub fn table_index(counter: i32) -> usize {
    counter.clamp(0, MAX_COUNTER) as usize
}

/// The term's middlegame and endgame values for one side's `counts`.
#[inline(always)]
pub fn lookup(weights: &[S; NUM_ENTRIES], counts: &DangerCounts) -> S {
    let (mg, eg) = counters(weights, counts);
    S {
        mg: weights[TABLE.at(table_index(mg))].mg,
        eg: weights[TABLE.at(table_index(eg))].eg,
    }
}

/// [`lookup`] over packed weights (`mg + eg·2³²`), packed.
#[inline(always)]
pub fn lookup_packed(packed: &[i64; NUM_ENTRIES], counts: &DangerCounts) -> i64 {
    let mut sum = 0i64;
    for (k, &n) in counts.0.iter().enumerate() {
        if n != 0 {
            sum = sum.wrapping_add(packed[UNIT_ENTRY[k]].wrapping_mul(i64::from(n)));
        }
    }
    let (mg, eg) = unpack(sum);
    let (im, ie) = (table_index(mg), table_index(eg));
    if im == ie {
        packed[TABLE.at(im)]
    } else {
        pack(
            unpack(packed[TABLE.at(im)]).0,
            unpack(packed[TABLE.at(ie)]).1,
        )
    }
}

/// The relaxed table value at a real counter and its derivatives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interpolation {
    /// Elements of the table (0-based) the value depends on; slots with
    /// weight 0 repeat a valid element.
    pub index: [usize; 4],
    /// d value / d table\[index\[j\]\].
    pub weight: [f64; 4],
    /// The relaxed value.
    pub value: f64,
    /// d value / d counter.
    pub slope: f64,
}

/// The quintic Hermite basis on [0, 1] (value, slope and curvature at 0,
/// then at 1) and its derivatives, at `t`.
#[inline(always)]
fn hermite(t: f64) -> ([f64; 6], [f64; 6]) {
    let t2 = t * t;
    let t3 = t2 * t;
    let t4 = t3 * t;
    let t5 = t4 * t;
    let h = [
        1.0 - 10.0 * t3 + 15.0 * t4 - 6.0 * t5,
        t - 6.0 * t3 + 8.0 * t4 - 3.0 * t5,
        0.5 * t2 - 1.5 * t3 + 1.5 * t4 - 0.5 * t5,
        10.0 * t3 - 15.0 * t4 + 6.0 * t5,
        -4.0 * t3 + 7.0 * t4 - 3.0 * t5,
        0.5 * t3 - t4 + 0.5 * t5,
    ];
    let d = [
        -30.0 * t2 + 60.0 * t3 - 30.0 * t4,
        1.0 - 18.0 * t2 + 32.0 * t3 - 15.0 * t4,
        t - 4.5 * t2 + 6.0 * t3 - 2.5 * t4,
        30.0 * t2 - 60.0 * t3 + 30.0 * t4,
        -12.0 * t2 + 28.0 * t3 - 15.0 * t4,
        1.5 * t2 - 4.0 * t3 + 2.5 * t4,
    ];
    (h, d)
}

/// The smooth relaxation of the table (element `j` is `table(j)`) at the
/// real counter `c`: on `[i, i+1]` the quintic Hermite curve with values
/// `T[i]`, `T[i+1]`, slopes `(T[k+1] − T[k−1]) / 2` and curvatures
/// `T[k+1] − 2T[k] + T[k−1]` at the inner knots, slope and curvature 0 at
/// the first and last element, and constant beyond them. Linear in the
/// table; at an integer `c` the value is `T[c]` (clamped).
#[inline(always)]
pub fn interpolate(table: impl Fn(usize) -> f64, c: f64) -> Interpolation {
    let last = MAX_COUNTER as usize;
    let flat = |e: usize| Interpolation {
        index: [e; 4],
        weight: [1.0, 0.0, 0.0, 0.0],
        value: table(e),
        slope: 0.0,
    };
    if c.is_nan() || c <= 0.0 {
        return flat(0);
    }
    if c >= last as f64 {
        return flat(last);
    }
    let i = c.floor() as usize;
    let t = c - i as f64;
    if t == 0.0 {
        // On a knot (integer weights): the element itself, and the knot's
        // slope (0 < i < last here).
        let (prev, next) = (table(i - 1), table(i + 1));
        return Interpolation {
            index: [i; 4],
            weight: [1.0, 0.0, 0.0, 0.0],
            value: table(i),
            slope: 0.5 * (next - prev),
        };
    }
    let (h, d) = hermite(t);
    // Whether knots i and i + 1 have slopes and curvatures (inner knots).
    let a = if i >= 1 { 1.0 } else { 0.0 };
    let b = if i + 1 < last { 1.0 } else { 0.0 };
    let coefficients = |h: &[f64; 6]| {
        [
            a * (-0.5 * h[1] + h[2]),
            h[0] - 2.0 * a * h[2] + b * (-0.5 * h[4] + h[5]),
            a * (0.5 * h[1] + h[2]) + h[3] - 2.0 * b * h[5],
            b * (0.5 * h[4] + h[5]),
        ]
    };
    let weight = coefficients(&h);
    let dweight = coefficients(&d);
    let index = [i.saturating_sub(1), i, i + 1, (i + 2).min(last)];
    let (mut value, mut slope) = (0.0, 0.0);
    for j in 0..4 {
        let v = table(index[j]);
        value += weight[j] * v;
        slope += dweight[j] * v;
    }
    Interpolation {
        index,
        weight,
        value,
        slope,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(seed: u64) -> Vec<f64> {
        // A deterministic, bumpy table.
        (0..=MAX_COUNTER as u64)
            .map(|j| ((j * 37 + seed * 11) % 97) as f64 * 3.0 - 50.0 + j as f64 * 8.0)
            .collect()
    }

    #[test]
    fn the_relaxation_is_the_table_at_integer_counters() {
        let t = table(1);
        for c in -3..=MAX_COUNTER + 3 {
            let r = interpolate(|j| t[j], c as f64);
            assert_eq!(r.value, t[table_index(c)], "counter {c}");
            let used: f64 = r.weight.iter().sum();
            assert!((used - 1.0).abs() < 1e-12);
        }
    }

    /// Value, slope and curvature are continuous across every knot and both
    /// ends (C²), and the slope is the derivative of the value.
    #[test]
    fn the_relaxation_is_twice_continuously_differentiable() {
        let t = table(2);
        let f = |c: f64| interpolate(|j| t[j], c).value;
        let slope = |c: f64| interpolate(|j| t[j], c).slope;
        let eps = 1e-7;
        for knot in 0..=MAX_COUNTER {
            let c = knot as f64;
            assert!((f(c - eps) - f(c + eps)).abs() < 1e-4, "value at {c}");
            assert!(
                (slope(c - eps) - slope(c + eps)).abs() < 1e-4,
                "slope at {c}"
            );
            let h = 1e-6;
            let curvature_left = (slope(c - h) - slope(c - 2.0 * h)) / h;
            let curvature_right = (slope(c + 2.0 * h) - slope(c + h)) / h;
            assert!(
                (curvature_left - curvature_right).abs() < 0.5,
                "curvature at {c}: {curvature_left} vs {curvature_right}"
            );
        }
        for k in 0..2000 {
            let c = -1.0 + k as f64 * 0.0333;
            let numeric = (f(c + 1e-6) - f(c - 1e-6)) / 2e-6;
            assert!((numeric - slope(c)).abs() < 1e-4, "slope at {c}");
        }
    }

    /// The weights are the derivatives in the table entries: the value is
    /// linear in the table.
    #[test]
    fn the_weights_are_the_table_derivatives() {
        let t = table(3);
        for k in 0..700 {
            let c = k as f64 * 0.1 - 2.0;
            let r = interpolate(|j| t[j], c);
            let by_weights: f64 = (0..4).map(|j| r.weight[j] * t[r.index[j]]).sum();
            assert!((by_weights - r.value).abs() < 1e-9);
            for j in 0..4 {
                if r.weight[j] == 0.0 {
                    continue;
                }
                let mut bumped = t.clone();
                bumped[r.index[j]] += 1.0;
                let rb = interpolate(|e| bumped[e], c);
                let same_entry: f64 = (0..4)
                    .filter(|&m| r.index[m] == r.index[j])
                    .map(|m| r.weight[m])
                    .sum();
                assert!(
                    (rb.value - r.value - same_entry).abs() < 1e-9,
                    "c {c} j {j}"
                );
            }
        }
    }

    #[test]
    fn packed_lookup_equals_the_lookup() {
        let mut w = crate::eval::DEFAULT_PARAMS.entries;
        // Different middlegame and endgame units select different elements.
        w[UNIT_ENTRY[3]] = S { mg: 7, eg: 2 };
        w[UNIT_ENTRY[6]] = S { mg: 1, eg: 9 };
        let packed = crate::eval::PackedParams::new(&crate::eval::Params { entries: w });
        for n in 0..12u8 {
            let counts = DangerCounts([n, 0, n / 2, n, 0, 1, n % 2, 0]);
            let s = lookup(&w, &counts);
            assert_eq!(unpack(lookup_packed(&packed.packed, &counts)), (s.mg, s.eg));
        }
    }
}
