//! The SVG plot of an SPSA run: one panel per parameter with its value
//! after each iteration, the start value (dashed grey) and, when known, a
//! reference value such as the engine's default (dashed green).

use std::fmt::Write as _;

use super::state::SpsaState;

/// Panel width and height, and the margin inside a panel.
const PANEL_W: f64 = 360.0;
const PANEL_H: f64 = 180.0;
const MARGIN: f64 = 40.0;
/// Panels per row.
const COLUMNS: usize = 3;

/// The plot of `state`; `reference[i]` is drawn for parameter `i` when
/// given.
pub fn svg(state: &SpsaState, reference: &[Option<f64>], title: &str) -> String {
    let n = state.names.len();
    let rows = n.div_ceil(COLUMNS).max(1);
    let width = PANEL_W * COLUMNS.min(n.max(1)) as f64;
    let height = 30.0 + PANEL_H * rows as f64;
    let iterations = state.iteration().max(1) as f64;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="10" y="20" font-size="14">{}</text>"#,
        escape(title)
    );
    for (i, name) in state.names.iter().enumerate() {
        let left = PANEL_W * (i % COLUMNS) as f64;
        let top = 30.0 + PANEL_H * (i / COLUMNS) as f64;
        let path: Vec<f64> = std::iter::once(state.start[i])
            .chain(state.rows.iter().map(|r| r.theta[i]))
            .collect();
        let marks: Vec<f64> = path
            .iter()
            .copied()
            .chain(reference.get(i).copied().flatten())
            .collect();
        let (mut lo, mut hi) = marks
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(*v), b.max(*v))
            });
        let pad = ((hi - lo) * 0.08).max(0.5);
        lo -= pad;
        hi += pad;
        let x = |k: usize| left + MARGIN + k as f64 / iterations * (PANEL_W - 1.5 * MARGIN);
        let y = |v: f64| top + PANEL_H - MARGIN + (lo - v) / (hi - lo) * (PANEL_H - 1.6 * MARGIN);
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}">{} = {:.2}</text>"#,
            left + MARGIN,
            top + 16.0,
            escape(name),
            path.last().copied().unwrap_or_default()
        );
        let (bottom, right) = (y(lo), x(state.iteration()));
        let _ = writeln!(
            s,
            r#"<line x1="{l:.1}" y1="{bottom:.1}" x2="{right:.1}" y2="{bottom:.1}" stroke="black"/><line x1="{l:.1}" y1="{t:.1}" x2="{l:.1}" y2="{bottom:.1}" stroke="black"/>"#,
            l = left + MARGIN,
            t = y(hi)
        );
        for v in [lo + pad, hi - pad] {
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{v:.0}</text>"#,
                left + MARGIN - 4.0,
                y(v) + 4.0
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{right:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            bottom + 14.0,
            state.iteration()
        );
        let mut hline = |v: f64, colour: &str| {
            let _ = writeln!(
                s,
                r#"<line x1="{:.1}" y1="{y:.1}" x2="{right:.1}" y2="{y:.1}" stroke="{colour}" stroke-dasharray="4 3"/>"#,
                left + MARGIN,
                y = y(v)
            );
        };
        hline(state.start[i], "#999999");
        if let Some(Some(r)) = reference.get(i) {
            hline(*r, "#2ca02c");
        }
        let points: Vec<String> = path
            .iter()
            .enumerate()
            .map(|(k, v)| format!("{:.1},{:.1}", x(k), y(*v)))
            .collect();
        let _ = writeln!(
            s,
            r##"<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="{}"/>"##,
            points.join(" ")
        );
    }
    s.push_str("</svg>\n");
    s
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spsa::state::IterationRow;

    #[test]
    fn one_panel_per_parameter() {
        let mut state = SpsaState::new(vec![], vec!["a".into(), "b<c".into()], vec![1.0, 5.0]);
        for k in 1..=3 {
            state.rows.push(IterationRow {
                iteration: k,
                wins: 1,
                draws: 0,
                losses: 0,
                replayed: 0,
                theta: vec![1.0 + k as f64, 5.0],
            });
        }
        let svg = svg(&state, &[Some(3.0), None], "run");
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("a = 4.00") && svg.contains("b&lt;c = 5.00"));
        assert_eq!(svg.matches("#2ca02c").count(), 1);
        assert!(svg.ends_with("</svg>\n"));
    }
}
