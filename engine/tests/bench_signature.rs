//! The search signature: `engine bench` at its default depth with one
//! thread searches exactly this many nodes with the compiled weights. Any
//! change to search or evaluation behaviour changes it; such a commit
//! updates the number here and quotes it in its message.

#[path = "support/cli.rs"]
mod cli;

use std::process::Command;

/// Nodes of `engine bench` (default depth, one thread, compiled weights).
const SIGNATURE: u64 = 6_852_710;

#[test]
fn engine_bench_node_count_is_the_signature() {
    let out = cli::run_ok(Command::new(env!("CARGO_BIN_EXE_engine")).arg("bench"));
    let stdout = String::from_utf8(out.stdout).unwrap();
    // Last line: `N nodes M nps`.
    let last = stdout.lines().last().expect("bench prints its totals");
    let nodes: u64 = last
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unexpected last line {last:?}"));
    assert_eq!(
        nodes, SIGNATURE,
        "the bench signature changed: if intended, update SIGNATURE and quote the new count \
         in the commit message"
    );
}
