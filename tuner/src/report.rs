//! What a run tells its user: the per-epoch log (terminal line and CSV), the
//! loss-curve plot (SVG), and the largest parameter changes by group.

use std::fmt::Write as _;

use engine::eval::schema::scalar_name;
use engine::eval::{BLOCKS, Group};

/// The CSV log's header.
pub const CSV_HEADER: &str = "epoch,train_loss,validation_loss,positions_per_sec,elapsed_s";

/// One epoch of the log (epoch 0 is before any step).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpochRow {
    /// Epochs completed.
    pub epoch: usize,
    /// Mean training loss (epoch 0: of the starting weights; later: mean
    /// over the epoch's batches, before each step).
    pub train_loss: f64,
    /// Validation loss after the epoch.
    pub validation_loss: f64,
    /// Training positions processed per second in this epoch.
    pub positions_per_sec: f64,
    /// Seconds since tuning started.
    pub elapsed_s: f64,
}

impl EpochRow {
    /// The CSV line (no newline).
    pub fn csv(&self) -> String {
        format!(
            "{},{:.9},{:.9},{:.0},{:.3}",
            self.epoch,
            self.train_loss,
            self.validation_loss,
            self.positions_per_sec,
            self.elapsed_s
        )
    }
}

/// The whole CSV log.
pub fn csv(rows: &[EpochRow]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for r in rows {
        out.push_str(&r.csv());
        out.push('\n');
    }
    out
}

/// A loss-curve plot: training and validation loss against the epoch.
pub fn svg_plot(rows: &[EpochRow], title: &str) -> String {
    const W: f64 = 720.0;
    const H: f64 = 420.0;
    const M: f64 = 60.0;
    let finite = |v: f64| v.is_finite();
    let values: Vec<f64> = rows
        .iter()
        .flat_map(|r| [r.train_loss, r.validation_loss])
        .filter(|v| finite(*v))
        .collect();
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    let (lo, hi) = if lo < hi {
        (lo, hi)
    } else {
        (lo - 1e-3, lo + 1e-3)
    };
    let max_epoch = rows.last().map_or(1, |r| r.epoch.max(1)) as f64;
    let x = |e: usize| M + (e as f64 / max_epoch) * (W - 2.0 * M);
    let y = |v: f64| H - M - (v - lo) / (hi - lo) * (H - 2.0 * M);
    let line = |f: &dyn Fn(&EpochRow) -> f64| -> String {
        rows.iter()
            .filter(|r| finite(f(r)))
            .map(|r| format!("{:.1},{:.1}", x(r.epoch), y(f(r))))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="{M}" y="24" font-size="14">{title}</text>"#);
    let _ = writeln!(
        s,
        r#"<line x1="{M}" y1="{b}" x2="{r}" y2="{b}" stroke="black"/><line x1="{M}" y1="{M}" x2="{M}" y2="{b}" stroke="black"/>"#,
        b = H - M,
        r = W - M
    );
    for i in 0..=4 {
        let v = lo + (hi - lo) * i as f64 / 4.0;
        let _ = writeln!(s, r#"<text x="4" y="{:.1}">{v:.5}</text>"#, y(v) + 4.0);
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}">epoch {}</text>"#,
        W - M - 60.0,
        H - M + 20.0,
        max_epoch
    );
    let _ = writeln!(
        s,
        r##"<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{}"/>"##,
        line(&|r| r.train_loss)
    );
    let _ = writeln!(
        s,
        r##"<polyline fill="none" stroke="#d62728" stroke-width="2" points="{}"/>"##,
        line(&|r| r.validation_loss)
    );
    let _ = writeln!(
        s,
        r##"<text x="{a}" y="44" fill="#1f77b4">training</text><text x="{b}" y="44" fill="#d62728">validation</text>"##,
        a = W - 220.0,
        b = W - 140.0
    );
    s.push_str("</svg>\n");
    s
}

/// The largest changes between two weight sets, grouped: per group the sum
/// of absolute changes and its `top` largest single changes.
pub fn largest_changes(before: &[i32], after: &[i32], top: usize) -> String {
    let mut out = String::new();
    for &group in Group::ALL {
        let mut changes: Vec<(usize, i32, i32)> = Vec::new();
        for b in BLOCKS.iter().filter(|b| b.group == group) {
            for e in b.block.start..b.block.start + b.block.len {
                for i in [2 * e, 2 * e + 1] {
                    if before[i] != after[i] {
                        changes.push((i, before[i], after[i]));
                    }
                }
            }
        }
        let total: i64 = changes
            .iter()
            .map(|(_, a, b)| (*b as i64 - *a as i64).abs())
            .sum();
        let _ = writeln!(
            out,
            "{:<12} {:>4} parameters changed, total |change| {total}",
            group.name(),
            changes.len()
        );
        changes.sort_by_key(|(i, a, b)| (std::cmp::Reverse((*b - *a).abs()), *i));
        for (i, a, b) in changes.iter().take(top) {
            let _ = writeln!(out, "    {:<36} {a:>6} -> {b:>6}", scalar_name(*i));
        }
    }
    out
}
