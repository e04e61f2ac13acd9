//! Time management: how much of the clock one move may use.
//!
//! A search gets two limits: the *soft* limit, after which no new iteration
//! is started (scaled by how stable the best move is), and the *hard* limit,
//! at which the search is aborted wherever it is. Invariant: the hard limit
//! never exceeds the time left minus the move overhead (and a safety share of
//! the remaining time), so a search that honours it cannot lose on time, even
//! at 1s+0.01s; both limits are at least [`MIN_THINK`].

use std::time::{Duration, Instant};

/// The clock situation of the side to move, as UCI `go` gives it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Clock {
    /// Time left on our clock.
    pub time_left: Duration,
    /// Our increment per move.
    pub increment: Duration,
    /// Moves until the next time control, if the control is not sudden death.
    pub moves_to_go: Option<u32>,
}

/// Default time reserved per move for communication and process latency.
pub const DEFAULT_MOVE_OVERHEAD: Duration = Duration::from_millis(30);
/// The least time any search is given.
pub const MIN_THINK: Duration = Duration::from_millis(1);
/// Moves we assume are left in a sudden-death game.
const DEFAULT_MOVES_TO_GO: u32 = 30;
/// Cap on `movestogo`, so long controls don't hoard time.
const MAX_MOVES_TO_GO: u32 = 50;
/// Share of the increment added to the per-move base time, in percent.
const INCREMENT_SHARE_PERCENT: u32 = 75;
/// The hard limit is this multiple of the soft limit …
const HARD_OVER_SOFT: u32 = 4;
/// … but never more than this share of the (overhead-reduced) time left, in
/// percent.
const HARD_MAX_SHARE_PERCENT: u32 = 35;
/// The soft limit never exceeds this share of the time left, in percent.
const SOFT_MAX_SHARE_PERCENT: u32 = 15;

/// The two limits of one search, measured from its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBudget {
    /// Do not start a new iteration after this (before stability scaling).
    pub soft: Duration,
    /// Abort the search at this point.
    pub hard: Duration,
}

impl TimeBudget {
    /// The budget for a move under `clock`, keeping `overhead` in reserve.
    pub fn for_clock(clock: &Clock, overhead: Duration) -> TimeBudget {
        let available = clock.time_left.saturating_sub(overhead).max(MIN_THINK);
        let moves_to_go = clock
            .moves_to_go
            .unwrap_or(DEFAULT_MOVES_TO_GO)
            .clamp(1, MAX_MOVES_TO_GO);
        let base = available / moves_to_go + clock.increment * INCREMENT_SHARE_PERCENT / 100;
        let soft_cap = if moves_to_go == 1 {
            available / 2
        } else {
            available * SOFT_MAX_SHARE_PERCENT / 100
        };
        let soft = base.min(soft_cap).max(MIN_THINK);
        let hard_cap = if moves_to_go == 1 {
            available * 3 / 4
        } else {
            available * HARD_MAX_SHARE_PERCENT / 100
        };
        let hard = (soft * HARD_OVER_SOFT).min(hard_cap).max(soft);
        TimeBudget { soft, hard }
    }

    /// The budget for a fixed time per move.
    pub fn for_movetime(movetime: Duration, overhead: Duration) -> TimeBudget {
        let t = movetime.saturating_sub(overhead).max(MIN_THINK);
        TimeBudget { soft: t, hard: t }
    }
}

/// A running search's deadline.
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    /// When the search started.
    pub start: Instant,
    /// Its budget, if it is timed at all.
    pub budget: Option<TimeBudget>,
}

impl Deadline {
    /// Starts the clock now.
    pub fn start(budget: Option<TimeBudget>) -> Deadline {
        Deadline {
            start: Instant::now(),
            budget,
        }
    }

    /// Time since the search started.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Whether the hard limit has passed.
    pub fn hard_expired(&self) -> bool {
        self.budget.is_some_and(|b| self.elapsed() >= b.hard)
    }

    /// Whether a new iteration should not be started; `scale` stretches the
    /// soft limit (above 1 when the best move is unstable), capped by the
    /// hard limit.
    pub fn soft_expired(&self, scale: f64) -> bool {
        self.budget.is_some_and(|b| {
            let soft = b.soft.mul_f64(scale.max(0.0)).min(b.hard);
            self.elapsed() >= soft
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hard_limit_leaves_time_on_the_clock() {
        for (left_ms, inc_ms) in [(1000, 10), (50, 10), (10_000, 100), (5, 0), (100, 1000)] {
            let clock = Clock {
                time_left: Duration::from_millis(left_ms),
                increment: Duration::from_millis(inc_ms),
                moves_to_go: None,
            };
            let b = TimeBudget::for_clock(&clock, DEFAULT_MOVE_OVERHEAD);
            assert!(b.soft <= b.hard);
            assert!(
                b.hard + DEFAULT_MOVE_OVERHEAD
                    <= clock.time_left.max(DEFAULT_MOVE_OVERHEAD + MIN_THINK),
                "{left_ms}+{inc_ms}: {b:?}"
            );
        }
    }
}
