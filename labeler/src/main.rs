//! `labeler` command-line tool (placeholder until its issue is implemented).

use clap::Parser;

/// labeler: part of the engine tuning toolchain (not yet implemented).
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
    eprintln!("labeler: not implemented yet; see --help");
    std::process::exit(2);
}
