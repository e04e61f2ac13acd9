//! Which plies of a game are sampled, and the per-game random numbers.
//!
//! [`SamplingRules`] hold the window (`--min-ply`..=`--max-ply`) and the gap
//! between two samples (`--min-gap`..=`--max-gap`). The first candidate of a
//! game is drawn uniformly in `min_ply .. min_ply + max_gap`, every next one
//! `min_gap..=max_gap` plies after the previous candidate, so two positions
//! of one game written are always at least `min_gap` plies apart (a
//! candidate dropped by a filter still counts as the previous candidate).
//! Plies are absolute: a game starting from a `FEN` tag starts at the ply of
//! that FEN's move number and side to move, so `fmvn` of the output tells
//! the ply back. [`game_rng`] gives each game its own generator, seeded from
//! the run's seed, the file's index and the game's byte offset in the file:
//! the draws do not depend on the thread count or on how a file is cut into
//! chunks.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The random generator type used for sampling.
pub type GameRng = ChaCha8Rng;

/// The sampling window and gaps, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SamplingRules {
    /// First ply that may be sampled.
    pub min_ply: u32,
    /// Last ply that may be sampled.
    pub max_ply: u32,
    /// Minimum plies between two candidates of a game (at least 1).
    pub min_gap: u32,
    /// Maximum plies between two candidates of a game.
    pub max_gap: u32,
}

impl SamplingRules {
    /// Checks the rules are consistent.
    ///
    /// # Errors
    /// A message naming the options in conflict.
    pub fn validate(&self) -> Result<(), String> {
        if self.min_ply > self.max_ply {
            return Err(format!(
                "--min-ply ({}) must not exceed --max-ply ({})",
                self.min_ply, self.max_ply
            ));
        }
        if self.min_gap == 0 {
            return Err("--min-gap must be at least 1".to_string());
        }
        if self.min_gap > self.max_gap {
            return Err(format!(
                "--min-gap ({}) must not exceed --max-gap ({})",
                self.min_gap, self.max_gap
            ));
        }
        Ok(())
    }

    /// The first ply of a game to sample.
    pub fn first_candidate(&self, rng: &mut GameRng) -> u32 {
        self.min_ply
            .saturating_add(rng.random_range(0..self.max_gap))
    }

    /// The candidate after the one at `ply`.
    pub fn next_candidate(&self, ply: u32, rng: &mut GameRng) -> u32 {
        ply.saturating_add(rng.random_range(self.min_gap..=self.max_gap))
    }

    /// Whether `ply` lies in the sampling window.
    pub fn in_window(&self, ply: u32) -> bool {
        (self.min_ply..=self.max_ply).contains(&ply)
    }
}

/// The generator of one game: a function of the seed, the input file's
/// index and the game's byte offset in that (decompressed) file only.
pub fn game_rng(seed: u64, file_index: usize, game_offset: u64) -> GameRng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&(file_index as u64).to_le_bytes());
    key[16..24].copy_from_slice(&game_offset.to_le_bytes());
    GameRng::from_seed(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: SamplingRules = SamplingRules {
        min_ply: 20,
        max_ply: 150,
        min_gap: 3,
        max_gap: 16,
    };

    #[test]
    fn draws_stay_in_their_ranges() {
        let mut rng = game_rng(7, 0, 0);
        for _ in 0..1000 {
            let first = RULES.first_candidate(&mut rng);
            assert!((20..36).contains(&first));
            let next = RULES.next_candidate(first, &mut rng);
            assert!((first + 3..=first + 16).contains(&next));
        }
    }

    #[test]
    fn validation_names_the_options() {
        let bad = SamplingRules {
            min_gap: 5,
            max_gap: 4,
            ..RULES
        };
        assert!(bad.validate().unwrap_err().contains("--min-gap"));
        let bad = SamplingRules {
            min_ply: 200,
            ..RULES
        };
        assert!(bad.validate().unwrap_err().contains("--max-ply"));
        assert!(RULES.validate().is_ok());
    }

    #[test]
    fn generators_differ_by_game_and_repeat_by_identity() {
        let a: u64 = game_rng(1, 0, 100).random();
        let b: u64 = game_rng(1, 0, 101).random();
        let c: u64 = game_rng(1, 1, 100).random();
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, game_rng(1, 0, 100).random::<u64>());
    }
}
