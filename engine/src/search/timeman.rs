//! Time management: how much of the clock one move may use.
//!
//! A search gets two limits: the *soft* limit, after which no new iteration
//! is started (scaled by how stable the best move is, under a clock; a fixed
//! time per move is spent whole, as UCI's `go movetime` asks), and the *hard*
//! limit, at which the search is aborted wherever it is. Invariant: the hard
//! limit never exceeds the time left minus the move overhead (and a safety
//! share of the remaining time), so a search that honours it cannot lose on
//! time, even at 1s+0.01s, as long as the `tm_*` search parameters keep their
//! shares below 100%; both limits are at least [`MIN_THINK`]. The factors are
//! search parameters ([`SearchParams`]).

use std::time::{Duration, Instant};

use super::params::SearchParams;

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
/// The two limits of one search, measured from its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBudget {
    /// Do not start a new iteration after this (before stability scaling).
    pub soft: Duration,
    /// Abort the search at this point.
    pub hard: Duration,
    /// Whether the soft limit may be scaled by the best move's stability:
    /// yes under a clock, no for a fixed time per move (it is all used).
    pub scalable: bool,
}

impl TimeBudget {
    /// The budget for a move under `clock`, keeping `overhead` in reserve,
    /// with the `tm_*` factors of `params`.
    pub fn for_clock(clock: &Clock, overhead: Duration, params: &SearchParams) -> TimeBudget {
        // The declared ranges keep every factor positive.
        let factor = |v: i32| v.max(0) as u32;
        let percent_of = |d: Duration, v: i32| d * factor(v) / 100;
        let available = clock.time_left.saturating_sub(overhead).max(MIN_THINK);
        let moves_to_go = clock
            .moves_to_go
            .unwrap_or(factor(params.tm_default_moves_to_go))
            .clamp(1, factor(params.tm_max_moves_to_go).max(1));
        let base =
            available / moves_to_go + percent_of(clock.increment, params.tm_increment_percent);
        let soft_cap = if moves_to_go == 1 {
            percent_of(available, params.tm_last_move_soft_percent)
        } else {
            percent_of(available, params.tm_soft_max_percent)
        };
        let soft = base.min(soft_cap).max(MIN_THINK);
        let hard_cap = if moves_to_go == 1 {
            percent_of(available, params.tm_last_move_hard_percent)
        } else {
            percent_of(available, params.tm_hard_max_percent)
        };
        let hard = percent_of(soft, params.tm_hard_over_soft_percent)
            .min(hard_cap)
            .max(soft);
        TimeBudget {
            soft,
            hard,
            scalable: true,
        }
    }

    /// The budget for a fixed time per move.
    pub fn for_movetime(movetime: Duration, overhead: Duration) -> TimeBudget {
        let t = movetime.saturating_sub(overhead).max(MIN_THINK);
        TimeBudget {
            soft: t,
            hard: t,
            scalable: false,
        }
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
    /// hard limit, where the budget is scalable.
    pub fn soft_expired(&self, scale: f64) -> bool {
        self.budget.is_some_and(|b| {
            let scale = if b.scalable { scale.max(0.0) } else { 1.0 };
            let soft = b.soft.mul_f64(scale).min(b.hard);
            self.elapsed() >= soft
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_time_is_spent_whole_a_clock_budget_scales() {
        let movetime = TimeBudget::for_movetime(Duration::from_millis(200), Duration::ZERO);
        let clock = TimeBudget::for_clock(
            &Clock {
                time_left: Duration::from_secs(10),
                increment: Duration::from_millis(100),
                moves_to_go: None,
            },
            DEFAULT_MOVE_OVERHEAD,
            &SearchParams::default(),
        );
        let started = |budget: TimeBudget, elapsed: Duration| Deadline {
            start: Instant::now() - elapsed,
            budget: Some(budget),
        };
        // A stable best move (scale 0.5) ends a clock search at half its
        // soft limit, not a fixed-time one before its time is up.
        let half_clock = clock.soft.mul_f64(0.6);
        assert!(started(clock, half_clock).soft_expired(0.5));
        assert!(!started(clock, half_clock).soft_expired(1.0));
        assert!(!started(movetime, Duration::from_millis(150)).soft_expired(0.5));
        assert!(started(movetime, Duration::from_millis(200)).soft_expired(0.5));
    }

    #[test]
    fn hard_limit_leaves_time_on_the_clock() {
        for (left_ms, inc_ms) in [(1000, 10), (50, 10), (10_000, 100), (5, 0), (100, 1000)] {
            let clock = Clock {
                time_left: Duration::from_millis(left_ms),
                increment: Duration::from_millis(inc_ms),
                moves_to_go: None,
            };
            let b = TimeBudget::for_clock(&clock, DEFAULT_MOVE_OVERHEAD, &SearchParams::default());
            assert!(b.soft <= b.hard);
            assert!(
                b.hard + DEFAULT_MOVE_OVERHEAD
                    <= clock.time_left.max(DEFAULT_MOVE_OVERHEAD + MIN_THINK),
                "{left_ms}+{inc_ms}: {b:?}"
            );
        }
    }
}
