//! The search parameters: every tuned number of the search (pruning
//! margins and depths, reductions, extensions, history bonuses) and of time
//! management, declared once.
//!
//! Each line of the `declare_search_params!` invocation below declares one
//! parameter: its name, default, range and SPSA step (the perturbation
//! `c_end` of OpenBench's SPSA at the end of a tune), with its documentation.
//! From it come the [`SearchParams`] struct the searcher reads, its
//! defaults, the [`SEARCH_PARAMS`] table (the engine's UCI `spin` options,
//! the search params file, `engine search-params --openbench`) and access
//! by index. All values are integers (UCI spins); fractions are given in
//! percent.
//!
//! Invariant: every default lies within its range, and a [`SearchParams`]
//! built by [`SearchParams::set`] keeps every value within its range
//! (out-of-range values are refused by the callers that read them from
//! outside: UCI, files).

/// One declared search parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchParamSpec {
    /// Name: the UCI option and the params-file key.
    pub name: &'static str,
    /// Compiled default.
    pub default: i32,
    /// Smallest allowed value.
    pub min: i32,
    /// Largest allowed value.
    pub max: i32,
    /// SPSA perturbation at the end of a tune (OpenBench's `c_end`).
    pub step: i32,
    /// What the parameter does.
    pub doc: &'static str,
}

impl SearchParamSpec {
    /// Whether `value` lies within the range.
    pub fn allows(&self, value: i32) -> bool {
        (self.min..=self.max).contains(&value)
    }
}

/// Declares the search parameters: `/// doc` then
/// `name = default, min..=max, step s;` for each.
macro_rules! declare_search_params {
    ($(
        $(#[doc = $doc:literal])+
        $name:ident = $default:literal, $min:literal ..= $max:literal, step $step:literal;
    )+) => {
        /// The values of the search parameters (see [`SEARCH_PARAMS`]).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct SearchParams {
            $(
                $(#[doc = $doc])+
                pub $name: i32,
            )+
        }

        impl Default for SearchParams {
            fn default() -> Self {
                SearchParams { $($name: $default,)+ }
            }
        }

        /// Every search parameter, in declaration order.
        pub const SEARCH_PARAMS: &[SearchParamSpec] = &[$(
            SearchParamSpec {
                name: stringify!($name),
                default: $default,
                min: $min,
                max: $max,
                step: $step,
                doc: concat!($($doc),+),
            },
        )+];

        impl SearchParams {
            /// The value of parameter `index` (of [`SEARCH_PARAMS`]).
            ///
            /// # Panics
            /// When `index` is out of range.
            pub fn get(&self, index: usize) -> i32 {
                [$(self.$name),+][index]
            }

            /// Sets parameter `index` (of [`SEARCH_PARAMS`]) to `value`,
            /// clamped into its range.
            ///
            /// # Panics
            /// When `index` is out of range.
            pub fn set(&mut self, index: usize, value: i32) {
                let spec = &SEARCH_PARAMS[index];
                let fields = [$(&mut self.$name),+];
                *fields[index] = value.clamp(spec.min, spec.max);
            }
        }
    };
}

declare_search_params! {
    /// Aspiration windows from this depth.
    aspiration_min_depth = 5, 1..=10, step 1;
    /// Half-width of the first aspiration window (cp).
    aspiration_delta = 20, 5..=100, step 5;
    /// The window grows by this share of itself after each failure (%).
    aspiration_widen_percent = 50, 10..=200, step 10;
    /// Razoring up to this depth.
    razor_max_depth = 3, 0..=8, step 1;
    /// Razoring margin per depth (cp).
    razor_margin = 250, 50..=600, step 25;
    /// Reverse futility pruning up to this depth.
    rfp_max_depth = 8, 1..=14, step 1;
    /// Reverse futility margin per depth (cp).
    rfp_margin = 80, 20..=250, step 8;
    /// Null-move pruning from this depth.
    nmp_min_depth = 3, 1..=8, step 1;
    /// Base null-move reduction (plies).
    nmp_base_reduction = 3, 1..=6, step 1;
    /// One more ply of null-move reduction per this many plies of depth.
    nmp_depth_divisor = 4, 1..=10, step 1;
    /// One more ply of null-move reduction per this much eval over beta (cp).
    nmp_eval_divisor = 200, 50..=600, step 20;
    /// Cap of the eval-based null-move reduction (plies).
    nmp_max_eval_reduction = 3, 0..=6, step 1;
    /// Null-move cutoffs are verified from this depth.
    nmp_verify_depth = 12, 4..=30, step 1;
    /// Internal iterative reduction from this depth.
    iir_min_depth = 4, 2..=10, step 1;
    /// Late move pruning up to this depth.
    lmp_max_depth = 8, 1..=14, step 1;
    /// Quiet moves allowed by late move pruning: this plus depth squared.
    lmp_base = 3, 0..=12, step 1;
    /// Futility pruning of quiet moves up to this depth.
    futility_max_depth = 8, 1..=14, step 1;
    /// Futility margin: this (cp) …
    futility_base = 100, 0..=300, step 10;
    /// … plus this per depth (cp).
    futility_margin = 90, 20..=250, step 8;
    /// … unless the move's history (butterfly plus continuations) is at
    /// least this (half of it when improving).
    futility_history_limit = 12000, 0..=49152, step 1000;
    /// SEE pruning up to this depth.
    see_prune_max_depth = 8, 1..=14, step 1;
    /// Captures may lose this times depth squared (cp) before SEE prunes them.
    see_capture_margin = 25, 5..=100, step 4;
    /// Quiet moves may lose this times depth (cp) before SEE prunes them.
    see_quiet_margin = 60, 10..=200, step 6;
    /// Singular extensions from this depth.
    se_min_depth = 8, 4..=14, step 1;
    /// … when the hash entry is at most this much shallower.
    se_tt_depth_margin = 3, 1..=6, step 1;
    /// Singular margin per depth (cp).
    se_margin_per_depth = 1, 1..=8, step 1;
    /// Late move reductions from this depth.
    lmr_min_depth = 3, 1..=6, step 1;
    /// … after this many moves searched.
    lmr_min_moves = 2, 1..=6, step 1;
    /// LMR table: base reduction (% of a ply) …
    lmr_base_percent = 75, 0..=200, step 8;
    /// … plus ln(depth)·ln(moves) divided by this (%).
    lmr_divisor_percent = 225, 100..=400, step 12;
    /// Extra plies of reduction in an expected cut node.
    lmr_cut_node = 2, 0..=4, step 1;
    /// History score worth one ply of reduction.
    lmr_history_divisor = 16384, 2048..=65536, step 1024;
    /// At most this many plies of reduction at the root, where a move that
    /// fails a reduced search is not looked at again that iteration.
    lmr_root_max = 2, 0..=8, step 1;
    /// A reduced search that beats alpha is searched again one ply deeper
    /// when it beats the best score by this (cp) …
    deeper_margin = 43, 0..=200, step 4;
    /// … plus this per ply of depth (cp).
    deeper_margin_per_depth = 2, 0..=10, step 1;
    /// … and one ply shallower when it beats the best score by less than
    /// this (cp).
    shallower_margin = 11, 0..=60, step 2;
    /// Quiescence delta pruning margin (cp).
    delta_margin = 200, 50..=500, step 20;
    /// History bonus: this times depth squared …
    history_bonus_quadratic = 16, 0..=64, step 2;
    /// … plus this times depth …
    history_bonus_linear = 32, 0..=128, step 4;
    /// … at most this.
    history_bonus_max = 1600, 200..=4000, step 100;
    /// Soft time limit grows by this share when the best move changes (%).
    tm_instability_percent = 40, 0..=150, step 5;
    /// Soft time limit scale when the best move is stable (%).
    tm_stable_percent = 60, 20..=100, step 5;
    /// Soft time limit scale when the best move took every node (%) …
    tm_node_base_percent = 40, 0..=150, step 5;
    /// … plus this share of the nodes the other root moves took (%) …
    tm_node_slope_percent = 200, 0..=400, step 10;
    /// … at least this (%).
    tm_node_min_percent = 50, 10..=100, step 5;
    /// Moves assumed left in a sudden-death game.
    tm_default_moves_to_go = 25, 10..=60, step 2;
    /// Cap on movestogo.
    tm_max_moves_to_go = 50, 10..=100, step 5;
    /// Share of the increment added to the per-move base time (%).
    tm_increment_percent = 100, 0..=100, step 5;
    /// The hard limit is this multiple of the soft limit (%).
    tm_hard_over_soft_percent = 400, 100..=1000, step 25;
    /// The hard limit never exceeds this share of the time left (%).
    tm_hard_max_percent = 35, 10..=90, step 5;
    /// The soft limit never exceeds this share of the time left (%).
    tm_soft_max_percent = 15, 5..=50, step 2;
    /// Soft limit for the last move before the time control (% of the time left).
    tm_last_move_soft_percent = 50, 10..=90, step 5;
    /// Hard limit for the last move before the time control (% of the time left).
    tm_last_move_hard_percent = 75, 10..=95, step 5;
}

impl SearchParams {
    /// The index of the parameter called `name` (ASCII case ignored, as
    /// UCI option names are).
    pub fn index_of(name: &str) -> Option<usize> {
        SEARCH_PARAMS
            .iter()
            .position(|s| s.name.eq_ignore_ascii_case(name))
    }

    /// The history bonus of a beta cutoff at `depth`.
    pub fn history_bonus(&self, depth: i32) -> i32 {
        (depth * depth * self.history_bonus_quadratic + depth * self.history_bonus_linear)
            .min(self.history_bonus_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declaration_is_consistent() {
        let defaults = SearchParams::default();
        let mut names = std::collections::HashSet::new();
        for (i, spec) in SEARCH_PARAMS.iter().enumerate() {
            assert!(names.insert(spec.name), "{} twice", spec.name);
            assert!(
                spec.min <= spec.max && spec.allows(spec.default),
                "{spec:?}"
            );
            assert!(
                spec.step > 0 && spec.step <= spec.max - spec.min,
                "{spec:?}"
            );
            assert_eq!(defaults.get(i), spec.default, "{}", spec.name);
            assert_eq!(SearchParams::index_of(&spec.name.to_uppercase()), Some(i));
            assert!(!spec.doc.trim().is_empty());
        }
        let mut p = defaults;
        let i = SearchParams::index_of("rfp_margin").unwrap();
        p.set(i, 123);
        assert_eq!(p.rfp_margin, 123);
        p.set(i, 100_000);
        assert_eq!(p.rfp_margin, SEARCH_PARAMS[i].max, "clamped");
        // The declared bonus formula is the one the search always used.
        for depth in 0..20 {
            assert_eq!(
                defaults.history_bonus(depth),
                (depth * depth * 16 + depth * 32).min(1600)
            );
        }
    }
}
