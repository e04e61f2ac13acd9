//! Streaming from a trace cache: the same validation set as in memory, the
//! same full-batch epochs, a deterministic order independent of the thread
//! count, and bounded memory.

use std::sync::atomic::AtomicBool;

use engine::eval::Params;
use engine::formats::labeled::parse_line;
use tuner::cache::{CacheMeta, CacheWriter};
use tuner::objective::ObjectiveKind;
use tuner::optimizer::OptimizerKind;
use tuner::source::{Holdout, TraceData};
use tuner::space::ParamSpace;
use tuner::stream::StreamData;
use tuner::trace_set::TraceSet;
use tuner::trainer::{DataError, Trainer, TrainerSettings, TrainingData};

fn positions(n: usize) -> TraceSet {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../data/labeled/masters-quiet-20k.epd"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut set = TraceSet::new();
    for line in text.lines().take(n) {
        let r = parse_line(line).unwrap().unwrap();
        set.push_position(&r.position, r.result.unwrap(), None);
    }
    set
}

/// `games` sequences of `plies` consecutive positions, as self-play data
/// lists them: from the bundled positions on by deterministic legal moves.
fn game_positions(games: usize, plies: usize) -> TraceSet {
    use shakmaty::Position;
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../data/labeled/masters-quiet-20k.epd"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut set = TraceSet::new();
    for (g, line) in text.lines().take(games).enumerate() {
        let r = parse_line(line).unwrap().unwrap();
        let mut pos = r.position;
        for p in 0..plies {
            set.push_position(&pos, r.result.unwrap(), None);
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos.play_unchecked(moves[(g * 7 + p * 3) % moves.len()]);
        }
    }
    set
}

/// A cache of `set` in blocks of `block` positions.
fn cache(dir: &std::path::Path, set: &TraceSet, block: usize) -> std::path::PathBuf {
    let path = dir.join("set.traces");
    let meta = CacheMeta {
        resolve: "qsearch".into(),
        params: "test".into(),
        inputs: vec!["test".into()],
    };
    let mut w = CacheWriter::with_block_positions(&path, &meta, block).unwrap();
    w.append(set).unwrap();
    w.finish().unwrap();
    path
}

fn settings(batch: usize) -> TrainerSettings {
    TrainerSettings {
        objective: ObjectiveKind::Mse,
        k: Some(1.0),
        lambda: 1.0,
        optimizer: OptimizerKind::Adam,
        learning_rate: 2.0,
        lr_decay: 1.0,
        batch_size: batch,
        l2: 1e-8,
        seed: 7,
        recompute_every: 0,
        epochs: 3,
        patience: 100,
    }
}

fn train(data: &mut impl TrainingData, batch: usize) -> (Vec<f64>, Vec<(f64, f64)>) {
    let initial = ParamSpace::weights(&Params::defaults());
    let mut t = Trainer::new(settings(batch), ParamSpace::new(&[], &[]), initial, data);
    t.run(
        data,
        &AtomicBool::new(false),
        |_, _| Ok::<(), DataError>(()),
    )
    .unwrap();
    let losses = t
        .state()
        .history
        .iter()
        .map(|r| (r.train_loss, r.validation_loss))
        .collect();
    (t.state().weights.clone(), losses)
}

/// Streams the cache of `set` (blocks of `block`) and trains on it in memory:
/// the same validation positions, the same full-batch epochs (weights and
/// losses up to the order of the sums), and mini-batches spanning windows
/// identical for 1 and 2 threads and for a second run, unlike full batches.
fn stream_matches_memory(set: &TraceSet, block: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = cache(dir.path(), set, block);
    let mut stream = StreamData::open(&path, 0.1, 7, |_| {}).unwrap();
    let mut memory = TraceData::split(set.clone(), Vec::new(), Holdout::Fraction(0.1), 7, None);
    assert_eq!(stream.validation(), &memory.validation.decode());
    assert_eq!(stream.train_len(), memory.train_len());
    let (ws, ls) = train(&mut stream, 0);
    let (wm, lm) = train(&mut memory, 0);
    for (a, b) in ws.iter().zip(&wm) {
        assert!((a - b).abs() <= 1e-9 * a.abs().max(1.0), "{a} against {b}");
    }
    for ((ta, va), (tb, vb)) in ls.iter().skip(1).zip(lm.iter().skip(1)) {
        assert!((ta - tb).abs() < 1e-12 && (va - vb).abs() < 1e-12);
    }
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut s = StreamData::open(&path, 0.1, 7, |_| {}).unwrap();
            train(&mut s, 700)
        })
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(1));
    assert_ne!(one.0, ws);
}

/// Master positions, 3,000 (the validation split holds out runs of 3, so
/// the stream decodes and encodes its windows).
#[test]
fn streaming_matches_memory_and_is_deterministic() {
    stream_matches_memory(&positions(3000), 500);
}

/// Positions of games, 16,000 (runs of 16 held out): the stream trains on
/// the runs of differences as the cache stores them.
#[test]
fn streaming_runs_matches_memory() {
    let set = game_positions(320, 60).select(&(0..16_000).collect::<Vec<_>>());
    let (stored, own) = TraceData::new(set.clone(), TraceSet::new(), None)
        .train()
        .coefficients();
    assert!(stored * 2 < own, "{stored} of {own}: stored as differences");
    stream_matches_memory(&set, 1000);
}
