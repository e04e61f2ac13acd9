//! Where a run's outputs came from: the header lines of the tuned params
//! file and of the generated Rust (command line, date, inputs, data sizes,
//! objective, best epoch and losses), so that a result can always be traced
//! to how it was made. The date is read from the system clock.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::checkpoint::Checkpoint;
use crate::dataset::Resolve;
use crate::objective::Objective;
use crate::optimizer::OptimizerKind;

/// What the provenance says about a run besides its state.
#[derive(Clone, Debug)]
pub struct RunDescription {
    /// The command line (program and arguments).
    pub command: Vec<String>,
    /// One line per input file (name, positions, content hash).
    pub inputs: Vec<String>,
    /// Training positions.
    pub train_positions: usize,
    /// Validation positions.
    pub validation_positions: usize,
    /// How positions were resolved before tracing.
    pub resolve: Resolve,
    /// The optimiser.
    pub optimizer: OptimizerKind,
}

/// The provenance lines of a run in state `state` with objective
/// `objective`, dated `now`.
pub fn lines(
    run: &RunDescription,
    objective: &Objective,
    state: &Checkpoint,
    now: SystemTime,
) -> Vec<String> {
    let mut lines = vec![
        format!("command: {}", run.command.join(" ")),
        format!("date: {}", utc_timestamp(now)),
    ];
    for i in &run.inputs {
        lines.push(format!("input: {i}"));
    }
    lines.push(format!(
        "positions: {} training, {} validation; resolve {}; objective {:?}, optimizer {}",
        run.train_positions,
        run.validation_positions,
        run.resolve,
        objective.kind,
        run.optimizer.name()
    ));
    lines.push(format!(
        "K {:.6}; best epoch {} of {}; train loss {:.9}; validation loss {:.9}",
        objective.k,
        state.best_epoch,
        state.epoch,
        state
            .history
            .iter()
            .find(|r| r.epoch == state.best_epoch)
            .map_or(f64::NAN, |r| r.train_loss),
        state.best_validation
    ));
    lines
}

/// `t` as an ISO 8601 UTC timestamp to the second (`2026-11-22T01:01:26Z`);
/// times before 1970 print as 1970-01-01T00:00:00Z.
pub fn utc_timestamp(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// The proleptic Gregorian date `days` days after 1970-01-01 (H. Hinnant's
/// `civil_from_days`, for non-negative day counts).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_match_the_calendar() {
        // Reference values from Python's datetime.
        for (secs, expected) in [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_700_000_000, "2023-11-14T22:13:20Z"),
            (1_795_309_286, "2026-11-22T01:01:26Z"),
            (4_107_542_399, "2100-02-28T23:59:59Z"),
        ] {
            let t = UNIX_EPOCH + Duration::from_secs(secs);
            assert_eq!(utc_timestamp(t), expected);
        }
    }

    #[test]
    fn the_clock_gives_a_current_date() {
        let now = utc_timestamp(SystemTime::now());
        assert!(
            now.as_str() > "2024-01-01T00:00:00Z" && now.ends_with('Z'),
            "{now}"
        );
    }
}
