//! The floor of an epoch: the least work an exact gradient needs over the
//! positions of a trace cache, run as a plain loop on this machine.
//!
//! The positions are the cache's, held as the tuner holds them in memory
//! (runs of differences where they pay, whole records elsewhere) and
//! visited in the tuner's order (groups of runs shuffled every epoch), but
//! decoded beforehand into plain `(u16 entry, i16 count)` arrays, so that nothing
//! is left but: per stored coefficient one weight read and multiply-add
//! forward, one gradient multiply-add backward; per position a taper, a
//! sigmoid and its derivative; per mini-batch a plain gradient step. No
//! king danger, no endgame scale, no escapes, no symbol decoding, no
//! threads: the tuner does all of that on top, so this shows what is left
//! to win by tuning its kernel (`scripts/bench-tuner.sh` prints it beside
//! ours and Ethereal's).
//!
//! Usage: `cargo run --release -p tuner --example epoch_floor -- FILE.traces [EPOCHS]`

use std::time::Instant;

use engine::eval::{MAX_PHASE, NUM_ENTRIES};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tuner::cache::CacheReader;
use tuner::run_set::{RUN_POSITIONS, RunSet};
use tuner::source::runs_by_groups;

/// Positions per mini-batch (Ethereal's and the benchmark's default).
const BATCH: usize = 16384;
/// A sigmoid scale in the range the tuner fits (per centipawn).
const K: f64 = 0.0045;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or_else(|| {
        anyhow::anyhow!("usage: epoch_floor FILE.traces [EPOCHS] (a cache of tuner --save-traces)")
    })?;
    let epochs: usize = args.next().map_or(Ok(5), |s| s.parse())?;
    let set = CacheReader::open(path.as_ref())?.read_all(|_| {})?;
    let runs = RunSet::encode_or_whole(set);
    let n = runs.len();

    // Decoded records: coefficients of record i at starts[i]..starts[i + 1].
    let mut entries: Vec<u16> = Vec::new();
    let mut counts: Vec<i16> = Vec::new();
    let mut starts = vec![0u32];
    let mut taper = Vec::with_capacity(n);
    let mut target = Vec::with_capacity(n);
    let mut whole = Vec::with_capacity(n);
    for i in 0..n {
        let v = runs.view(i);
        for (e, c) in v.entries() {
            entries.push(u16::try_from(e)?);
            counts.push(c);
        }
        starts.push(u32::try_from(entries.len())?);
        taper.push(f64::from(v.phase) / f64::from(MAX_PHASE));
        target.push(v.outcome.white_score());
        whole.push(runs.is_whole(i));
    }
    eprintln!(
        "{n} positions, {:.1} stored coefficients per position ({} whole records)",
        entries.len() as f64 / n as f64,
        whole.iter().filter(|&&w| w).count()
    );

    let mut weights = vec![[0.0f64; 2]; NUM_ENTRIES];
    for (i, w) in weights.iter_mut().enumerate() {
        *w = [(i % 7) as f64, (i % 5) as f64];
    }
    let mut grad = vec![[0.0f64; 2]; NUM_ENTRIES];
    let mut g = vec![[0.0f64; 2]; n];
    let batch_runs = BATCH / RUN_POSITIONS;
    let started = Instant::now();
    let mut loss = 0.0;
    for epoch in 0..epochs {
        // The tuner's order: groups of runs shuffled anew every epoch.
        let order = runs_by_groups(
            runs.runs(),
            Some(&mut ChaCha8Rng::seed_from_u64(epoch as u64)),
        );
        for batch in order.chunks(batch_runs) {
            grad.iter_mut().for_each(|x| *x = [0.0; 2]);
            for &r in batch {
                let range = runs.run_range(r as usize);
                // Forward: sums carried along the run, restarted at a whole record.
                let (mut mg, mut eg) = (0.0, 0.0);
                for i in range.clone() {
                    if whole[i] {
                        (mg, eg) = (0.0, 0.0);
                    }
                    let (a, b) = (starts[i] as usize, starts[i + 1] as usize);
                    for (&e, &c) in entries[a..b].iter().zip(&counts[a..b]) {
                        let w = weights[e as usize];
                        let c = f64::from(c);
                        mg += w[0] * c;
                        eg += w[1] * c;
                    }
                    let t = taper[i];
                    let s = 1.0 / (1.0 + (-K * (mg * t + eg * (1.0 - t))).exp());
                    let d = s - target[i];
                    loss += d * d;
                    let f = 2.0 * d * s * (1.0 - s) * K;
                    g[i] = [f * t, f * (1.0 - t)];
                }
                // Backward: a record's coefficients count for every position
                // up to the next whole record, so each gets that suffix sum.
                let mut suffix = [0.0f64; 2];
                for i in range.rev() {
                    suffix = [suffix[0] + g[i][0], suffix[1] + g[i][1]];
                    let (a, b) = (starts[i] as usize, starts[i + 1] as usize);
                    for (&e, &c) in entries[a..b].iter().zip(&counts[a..b]) {
                        let (x, c) = (&mut grad[e as usize], f64::from(c));
                        *x = [x[0] + suffix[0] * c, x[1] + suffix[1] * c];
                    }
                    if whole[i] {
                        suffix = [0.0; 2];
                    }
                }
            }
            for (w, d) in weights.iter_mut().zip(&grad) {
                *w = [w[0] - 1e-3 * d[0], w[1] - 1e-3 * d[1]];
            }
        }
    }
    let rate = (n * epochs) as f64 / started.elapsed().as_secs_f64();
    println!(
        "epoch floor: {rate:.0} positions/s on one core (pre-decoded coefficients, no king danger; loss {:.6})",
        loss / (n * epochs) as f64
    );
    Ok(())
}
