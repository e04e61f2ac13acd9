//! The benchmark: a fixed search over a fixed set of varied positions
//! (openings, middlegames, tactics, endgames), used to measure speed and as a
//! signature of search behaviour.
//!
//! Invariant: every position is searched from a fresh searcher state
//! (`new_game`) to a fixed depth, so with one thread (the default) the total
//! node count depends only on the search and evaluation code — any change in
//! it means the search's behaviour changed. With several threads the run
//! measures time to depth instead.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::chess::position::parse_fen;
use crate::eval::Params;
use crate::search::{SearchLimits, Searcher};

/// Depth searched per position when none is given.
pub const DEFAULT_BENCH_DEPTH: u32 = 13;
/// Transposition table size used by the benchmark, in MB.
pub const BENCH_HASH_MB: usize = 16;

/// The benchmark positions (FEN).
pub const BENCH_POSITIONS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5",
    "r1bq1rk1/pp2ppbp/2np1np1/8/3NP3/2N1BP2/PPPQ2PP/R3KB1R w KQ - 3 9",
    "8/8/7k/7p/7P/7K/8/8 w - - 0 1",
    "7k/3p4/8/8/3P4/8/8/K7 w - - 0 1",
    "8/PPPk4/8/8/8/8/4Kppp/8 b - - 0 1",
    "8/8/8/8/8/K7/P7/k7 w - - 0 1",
    "6k1/5pp1/4p2p/8/3P4/6P1/5PKP/8 w - - 0 1",
    "8/5k2/8/3R4/8/2r5/5K2/8 w - - 0 1",
    "8/8/4k3/8/1Q6/8/4K3/6q1 w - - 0 1",
    "2r3k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
    "8/3k4/8/2n5/8/4B3/3K4/8 w - - 0 1",
    "5rk1/1ppb3p/p1pb4/6q1/3P1p1r/2P1R2P/PP1BQ1P1/5RKN w - - 0 1",
    "1r1r2k1/4pp1p/2p1b1p1/p3R3/RqBP4/4P3/1PQ2PPP/6K1 b - - 0 1",
    "6k1/6p1/p7/3Pn3/5p2/4rBqP/P4RP1/5QK1 b - - 0 1",
    "r2q3r/ppp2k2/4nbp1/5Q1p/2P1NB2/8/PP3P1P/3RR1K1 w - - 0 1",
    "6k1/2pb1r1p/3p1PpQ/p1nPp3/1q2P3/2N2P2/PrB5/2K3RR w - - 0 1",
    "6rk/1pp2Qrp/3p1B2/1pb1p2R/3n1q2/3P4/PPP3PP/R6K w - - 0 1",
    "2r3k1/q4ppp/p3p3/pnNp4/2rP4/2P2P2/4R1PP/2R1Q1K1 b - - 0 1",
    "3r2k1/p1rn1p1p/1p2pp2/6q1/3PQNP1/5P2/P1P4R/R5K1 w - - 0 1",
    "r4rk1/5ppp/p3q1n1/2p2NQ1/4n3/P3P3/1B3PPP/1R3RK1 w - - 0 1",
    "r4rk1/1bq1bp1p/4p1p1/p2p4/3BnP2/1N1B3R/PPP3PP/R2Q2K1 w - - 0 1",
    "k5r1/p4b2/2P5/5p2/3P1P2/4QBrq/P5P1/4R1K1 w - - 0 1",
    "r2qkb1r/pppb2pp/2np1n2/5pN1/2BQP3/2N5/PPP2PPP/R1B1K2R w KQkq - 0 1",
    "rq2r1k1/5pp1/p7/4bNP1/1p2P2P/5Q2/PP4K1/5R1R w - - 0 1",
    "6k1/2b2p1p/ppP3p1/4p3/PP1B4/5PP1/7P/7K w - - 0 1",
    "5r1k/p1q2pp1/1pb4p/n3R1NQ/7P/3B1P2/2P3P1/7K w - - 0 1",
    "5r1k/1P4pp/3P1p2/4p3/1P5P/3q2P1/Q2b2K1/B3R3 w - - 0 1",
    "3B4/8/2B5/1K6/8/8/3p4/3k4 w - - 0 1",
    "1k1r4/1pp4p/2n5/P6R/2R1p1r1/2P2p2/1PP2B1P/4K3 b - - 0 1",
    "6k1/p3q2p/1nr3pB/8/3Q1P2/6P1/PP5P/3R2K1 b - - 0 1",
    "2krr3/1p4pp/p1bRpp1n/2p5/P1B1PP2/8/1PP3PP/R1K3B1 w - - 0 1",
    "r5k1/pp2p1bp/6p1/n1p1P3/2qP1NP1/2PQB3/P5PP/R4K2 b - - 0 1",
    "2r3k1/1qr1b1p1/p2pPn2/nppPp3/8/1PP1B2P/P1BQ1P2/5KRR w - - 0 1",
    "1br3k1/p4p2/2p1r3/3p1b2/3Bn1p1/1P2P1Pq/P3Q1BP/2R1NRK1 b - - 0 1",
    "8/pp3k2/2p1qp2/2P5/5P2/1R2p1rp/PP2R3/4K2Q b - - 0 1",
    "R4bk1/2Bbp2p/2p2pp1/1rPp4/3P4/4P2P/4BPPK/1q1Q4 w - - 0 1",
    "3r1rk1/q4pp1/n1bNp2p/p7/pn2P1N1/6P1/1P1Q1PBP/2RR2K1 w - - 0 1",
    "2bq1rk1/rpb2p2/2p1p1p1/p1N3Np/P2P1P1P/1Q2R1P1/1P3P2/3R2K1 w - - 0 1",
    "r2q1rk1/p2pn3/bpp2p1p/3Nb1pQ/7B/8/PPB2PPP/R3R1K1 w - - 0 1",
    "r1b1rk2/p1pq2p1/1p1b1p1p/n2P4/2P1NP2/P2B1R2/1BQ3PP/R6K w - - 0 1",
    "5rk1/pp3ppp/3q4/8/2Pp2b1/P5Pn/PBQPr1BP/4RR1K b - - 0 1",
    "3q1k2/p4pb1/3Pp3/p3P3/r6p/2QB3P/3B1P2/6K1 w - - 0 1",
    "1qrrbbk1/1p1nnppp/p3p3/4P3/2P5/1PN1N3/PB2Q1PP/1B2RR1K w - - 0 1",
];

/// Totals of a benchmark run.
#[derive(Clone, Copy, Debug)]
pub struct BenchReport {
    /// Nodes searched over all positions (the signature).
    pub nodes: u64,
    /// Wall time spent searching (table clearing excluded).
    pub elapsed: Duration,
}

impl BenchReport {
    /// Nodes per second.
    pub fn nps(&self) -> u64 {
        (self.nodes as f64 / self.elapsed.as_secs_f64().max(1e-9)) as u64
    }
}

/// Searches every benchmark position to `depth` with `params` and
/// `threads` search threads, calling `on_position(index, fen, nodes)` after
/// each one. With one thread the node count is the signature; with more it
/// varies from run to run, and the elapsed time is the time to depth that
/// measures the parallel search.
pub fn run(
    params: Arc<Params>,
    depth: u32,
    threads: usize,
    mut on_position: impl FnMut(usize, &str, u64),
) -> BenchReport {
    let mut searcher = Searcher::new(params, BENCH_HASH_MB);
    searcher.set_threads(threads);
    let limits = SearchLimits::depth(depth);
    let mut nodes = 0;
    let mut elapsed = Duration::ZERO;
    for (i, fen) in BENCH_POSITIONS.iter().enumerate() {
        let pos = parse_fen(fen).expect("benchmark positions are legal");
        searcher.new_game();
        let start = Instant::now();
        let result = searcher.search(&pos, &[], &limits, |_| {});
        elapsed += start.elapsed();
        nodes += result.nodes;
        on_position(i, fen, result.nodes);
    }
    BenchReport { nodes, elapsed }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_count_is_a_stable_signature() {
        let params = Arc::new(Params::defaults());
        let first = run(params.clone(), 6, 1, |_, _, _| {}).nodes;
        assert!(first > 0);
        assert_eq!(first, run(params, 6, 1, |_, _, _| {}).nodes);
    }

    #[test]
    fn positions_are_legal_and_many() {
        assert!(BENCH_POSITIONS.len() >= 40);
        for fen in BENCH_POSITIONS {
            assert!(parse_fen(fen).is_ok(), "{fen}");
        }
    }
}
