//! The parameter space the tuner moves in: the engine's scalar parameters
//! (the layout of `engine::eval::schema`) as continuous `f64` weights, with
//! each one's declared bounds and whether this run may change it.
//!
//! Which parameters are tunable is decided by group (`--tune`, `--freeze`),
//! narrowed to named blocks by `--blocks` (a new term tuned on its own)
//! or with named blocks held fixed by `--freeze-blocks` (the king-attack
//! units, whose fractional values rounding would undo); slots that are structurally zero (the king's material value) never are.
//! Weights are rounded to the engine's integers only when written out, and
//! the optimiser keeps them within the bounds, so every rounded set is an
//! in-bounds parameter set of the engine.

use engine::eval::schema::{block_by_name, blocks};
use engine::eval::{BLOCKS, Group, Params};

/// Bounds and the tunable mask of every scalar parameter, in the engine's
/// scalar order (`2 * entry` = mg, `2 * entry + 1` = eg).
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSpace {
    min: Vec<f64>,
    max: Vec<f64>,
    tunable: Vec<bool>,
    tuned_groups: Vec<Group>,
    /// The blocks `--blocks` narrowed the space to (empty: not narrowed).
    only_blocks: Vec<&'static str>,
    /// The blocks `--freeze-blocks` held fixed.
    frozen_blocks: Vec<&'static str>,
}

impl ParamSpace {
    /// The space where the groups of `tune` (every group when empty) minus
    /// those of `freeze` are tunable.
    pub fn new(tune: &[Group], freeze: &[Group]) -> Self {
        let n = Params::NUM_SCALARS;
        let mut space = ParamSpace {
            min: vec![0.0; n],
            max: vec![0.0; n],
            tunable: vec![false; n],
            tuned_groups: Group::ALL
                .iter()
                .copied()
                .filter(|g| (tune.is_empty() || tune.contains(g)) && !freeze.contains(g))
                .collect(),
            only_blocks: Vec::new(),
            frozen_blocks: Vec::new(),
        };
        for b in BLOCKS {
            let on = space.tuned_groups.contains(&b.group);
            for e in b.block.start..b.block.start + b.block.len {
                for i in [2 * e, 2 * e + 1] {
                    space.min[i] = b.min as f64;
                    space.max[i] = b.max as f64;
                    space.tunable[i] = on;
                }
            }
        }
        // The king's material slot is structurally zero.
        let king_material = blocks::material.at(5);
        space.tunable[2 * king_material] = false;
        space.tunable[2 * king_material + 1] = false;
        space
    }

    /// This space narrowed to the blocks named in `names` (within its
    /// groups); `Err` names the first that is not a block.
    pub fn only_blocks(mut self, names: &[String]) -> Result<Self, String> {
        if names.is_empty() {
            return Ok(self);
        }
        if let Some(name) = names.iter().find(|n| block_by_name(n).is_none()) {
            return Err(format!("{name:?} is not a parameter block"));
        }
        for b in BLOCKS {
            if names.iter().any(|n| n == b.name) {
                self.only_blocks.push(b.name);
            } else {
                let scalars = 2 * b.block.start..2 * (b.block.start + b.block.len);
                self.tunable[scalars].fill(false);
            }
        }
        Ok(self)
    }

    /// This space with the blocks named in `names` held fixed.
    ///
    /// # Errors
    /// A name that is not a block, or one this space was narrowed to by
    /// [`ParamSpace::only_blocks`].
    pub fn freeze_blocks(mut self, names: &[String]) -> Result<Self, String> {
        if let Some(name) = names.iter().find(|n| block_by_name(n).is_none()) {
            return Err(format!("{name:?} is not a parameter block"));
        }
        for b in BLOCKS {
            if names.iter().any(|n| n == b.name) {
                if self.only_blocks.contains(&b.name) {
                    return Err(format!("{:?} is named by --blocks too", b.name));
                }
                self.frozen_blocks.push(b.name);
                let scalars = 2 * b.block.start..2 * (b.block.start + b.block.len);
                self.tunable[scalars].fill(false);
            }
        }
        Ok(self)
    }

    /// The blocks `--freeze-blocks` held fixed, in declaration order.
    pub fn frozen_blocks_names(&self) -> &[&'static str] {
        &self.frozen_blocks
    }

    /// The blocks `--blocks` narrowed this space to, in declaration order
    /// (empty when not narrowed).
    pub fn only_blocks_names(&self) -> &[&'static str] {
        &self.only_blocks
    }

    /// Number of scalar parameters.
    pub fn len(&self) -> usize {
        self.min.len()
    }

    /// Always false: the engine has parameters.
    pub fn is_empty(&self) -> bool {
        self.min.is_empty()
    }

    /// Lower bounds.
    pub fn min(&self) -> &[f64] {
        &self.min
    }

    /// Upper bounds.
    pub fn max(&self) -> &[f64] {
        &self.max
    }

    /// Which parameters this run may change.
    pub fn tunable(&self) -> &[bool] {
        &self.tunable
    }

    /// The groups this run tunes, in declaration order.
    pub fn tuned_groups(&self) -> &[Group] {
        &self.tuned_groups
    }

    /// Number of tunable parameters.
    pub fn tunable_count(&self) -> usize {
        self.tunable.iter().filter(|&&t| t).count()
    }

    /// The engine's parameters as weights.
    pub fn weights(params: &Params) -> Vec<f64> {
        params.to_scalars().iter().map(|&v| v as f64).collect()
    }

    /// Weights rounded to the engine's integer parameters.
    pub fn rounded(weights: &[f64]) -> Params {
        let values: Vec<i32> = weights.iter().map(|w| w.round() as i32).collect();
        Params::from_scalars(&values)
    }

    /// Weights rounded to integers one at a time against `loss`
    /// (`--round greedy`): from the nearest integers, each tunable weight in
    /// turn tries its other integer neighbour (the one on the other side of
    /// its unrounded value, within bounds) and keeps it when `loss` is
    /// lower with every choice made so far. One pass, one evaluation of
    /// `loss` per tunable weight that is not already an integer; never
    /// worse than nearest rounding under `loss`. Frozen weights keep their
    /// nearest integer.
    pub fn rounded_greedy(&self, weights: &[f64], mut loss: impl FnMut(&[f64]) -> f64) -> Params {
        let mut current: Vec<f64> = weights.iter().map(|w| w.round()).collect();
        let mut best = loss(&current);
        for (i, &w) in weights.iter().enumerate() {
            let nearest = current[i];
            let other = if w > nearest {
                nearest + 1.0
            } else if w < nearest {
                nearest - 1.0
            } else {
                continue;
            };
            if !self.tunable[i] || other < self.min[i] || other > self.max[i] {
                continue;
            }
            current[i] = other;
            let l = loss(&current);
            if l < best {
                best = l;
            } else {
                current[i] = nearest;
            }
        }
        let values: Vec<i32> = current.iter().map(|&w| w as i32).collect();
        Params::from_scalars(&values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_rounding_never_loses_to_nearest_rounding() {
        let space = ParamSpace::new(&[], &[]);
        let n = space.len();
        let (a, b) = (space.tunable().iter().position(|&t| t).unwrap(), n - 1);
        // Two weights at 0.5 whose sum should be 1 (nearest rounding makes
        // it 2), one at 3.4 whose best value is 3, and every other weight
        // on an integer.
        let c = (a + 1..n).find(|&i| space.tunable()[i] && i != b).unwrap();
        let mut weights = ParamSpace::weights(&Params::defaults());
        weights[a] = 0.5;
        weights[b] = 0.5;
        weights[c] = 3.4;
        let target = |w: &[f64]| (w[a] + w[b] - 1.0).powi(2) + (w[c] - 3.0).powi(2);
        let mut calls = 0;
        let greedy = space.rounded_greedy(&weights, |w| {
            calls += 1;
            target(w)
        });
        let g = ParamSpace::weights(&greedy);
        let nearest = ParamSpace::weights(&ParamSpace::rounded(&weights));
        assert_eq!((nearest[a], nearest[b], nearest[c]), (1.0, 1.0, 3.0));
        assert_eq!((g[a], g[b], g[c]), (0.0, 1.0, 3.0));
        assert!(target(&g) < target(&nearest));
        // The start, then one try for each weight off an integer.
        assert_eq!(calls, 4);
        // A weight that may not move keeps its nearest integer.
        let frozen = ParamSpace::new(&[], Group::ALL);
        let f = ParamSpace::weights(&frozen.rounded_greedy(&weights, target));
        assert_eq!((f[a], f[b], f[c]), (1.0, 1.0, 3.0));
    }

    #[test]
    fn frozen_blocks_keep_still_and_the_rest_moves() {
        let all = ParamSpace::new(&[], &[]);
        let space = ParamSpace::new(&[], &[])
            .freeze_blocks(&[
                "king_check_units".to_string(),
                "king_attack_units".to_string(),
            ])
            .unwrap();
        let units = blocks::king_attack_units.start..blocks::king_check_units.start + 4;
        for i in 0..space.len() {
            let expected = all.tunable()[i] && !units.contains(&(i / 2));
            assert_eq!(space.tunable()[i], expected, "scalar {i}");
        }
        assert_eq!(all.tunable_count() - space.tunable_count(), 16);
        assert_eq!(
            space.frozen_blocks_names(),
            ["king_attack_units", "king_check_units"]
        );
        let err = ParamSpace::new(&[], &[])
            .only_blocks(&["tempo".to_string()])
            .unwrap()
            .freeze_blocks(&["tempo".to_string()])
            .unwrap_err();
        assert!(err.contains("--blocks"), "{err}");
        assert!(
            ParamSpace::new(&[], &[])
                .freeze_blocks(&["no_such_block".to_string()])
                .is_err()
        );
    }

    #[test]
    fn blocks_narrow_the_groups() {
        let space = ParamSpace::new(&[], &[Group::Pieces])
            .only_blocks(&[
                "rook_seventh_rank".to_string(),
                "pawn_supported".to_string(),
            ])
            .unwrap();
        let pawns = blocks::pawn_supported;
        let tunable: Vec<usize> = (0..space.len()).filter(|&i| space.tunable()[i]).collect();
        let expected: Vec<usize> = (2 * pawns.start..2 * (pawns.start + pawns.len)).collect();
        // rook_seventh_rank is in the frozen group: only pawn_supported moves.
        assert_eq!(tunable, expected);
        assert_eq!(
            space.only_blocks_names(),
            ["pawn_supported", "rook_seventh_rank"]
        );
        let err = ParamSpace::new(&[], &[])
            .only_blocks(&["no_such_block".to_string()])
            .unwrap_err();
        assert!(err.contains("no_such_block"), "{err}");
        let unchanged = ParamSpace::new(&[], &[]).only_blocks(&[]).unwrap();
        assert_eq!(unchanged, ParamSpace::new(&[], &[]));
    }

    #[test]
    fn groups_select_what_is_tunable() {
        let all = ParamSpace::new(&[], &[]);
        assert_eq!(all.tuned_groups(), Group::ALL);
        // Everything but the king's material pair.
        assert_eq!(all.tunable_count(), Params::NUM_SCALARS - 2);

        let pst = ParamSpace::new(&[Group::Pst], &[]);
        let pst_scalars: usize = BLOCKS
            .iter()
            .filter(|b| b.group == Group::Pst)
            .map(|b| 2 * b.block.len)
            .sum();
        assert_eq!(pst.tunable_count(), pst_scalars);
        let knight = 2 * blocks::pst_knight.at(0);
        assert!(pst.tunable()[knight] && !pst.tunable()[2 * blocks::tempo.one()]);

        let frozen = ParamSpace::new(&[], &[Group::Pst, Group::Tempo]);
        assert!(!frozen.tunable()[knight]);
        assert!(frozen.tunable()[2 * blocks::material.at(1)]);
        assert!(!frozen.tuned_groups().contains(&Group::Tempo));
    }

    #[test]
    fn bounds_are_the_declared_ones_and_rounding_round_trips() {
        let space = ParamSpace::new(&[], &[]);
        for b in BLOCKS {
            let i = 2 * b.block.start + 1;
            assert_eq!(
                (space.min()[i], space.max()[i]),
                (b.min as f64, b.max as f64)
            );
        }
        let defaults = Params::defaults();
        let mut w = ParamSpace::weights(&defaults);
        assert_eq!(ParamSpace::rounded(&w), defaults);
        w[3] += 0.4;
        assert_eq!(ParamSpace::rounded(&w), defaults);
    }
}
