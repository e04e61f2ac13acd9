//! `tuner`: fits the engine's evaluation weights to labeled positions by
//! logistic regression (Texel tuning) with exact gradients, and writes the
//! tuned weights as a params file and as the engine's generated `params.rs`.

use engine::runtime::exit::is_broken_pipe;
use engine::{say, say_raw};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use anyhow::{Context, Result, anyhow, bail, ensure};
use clap::{Args, Parser, Subcommand};
use engine::eval::{BLOCKS, Group, Params, codegen};
use engine::formats::atomic_file::{check_outputs, write_file};
use engine::formats::params_file;
use engine::runtime::interrupt::Interrupt;
use engine::runtime::progress::Progress;
use engine::runtime::summary::{Status as SummaryStatus, Summary};
use tuner::cache::{CacheMeta, CacheReader, CacheWriter};
use tuner::checkpoint::Checkpoint;
use tuner::dataset::{self, Resolve};
use tuner::gradient_check;
use tuner::objective::{Objective, ObjectiveKind};
use tuner::optimizer::OptimizerKind;
use tuner::provenance::{self, RunDescription};
use tuner::report::{self, EpochRow};
use tuner::source::{Holdout, TraceData, TraceLoader};
use tuner::space::ParamSpace;
use tuner::stream::StreamData;
use tuner::trace_set::TraceSet;
use tuner::trainer::{Split, Stop, Trainer, TrainerSettings, TrainingData, fit_objective};

/// Texel tuning of the engine's evaluation.
///
/// Reads labeled positions (EPD `c9`/`c2`, `FEN [1.0]`, `FEN | score |
/// result` (bullet's text format), CSV, or bullet's binary 32-byte records,
/// recognised by content or a `.bullet` name), resolves each to the quiet
/// leaf of its quiescence PV, traces it once into sparse coefficients, then minimises the loss of
/// `σ(K·eval/400)` against the results (`σ` is the logistic function, `K` is
/// fitted first). The best weights on the validation set are written to
/// `--output` (params text file) whenever they improve, and at the end as
/// Rust in the engine's `params.rs` format beside it (`OUTPUT.rs`; the
/// engine's source is changed only with `-f PATH`). Ctrl-C stops cleanly
/// and still writes the best weights; `--resume` continues from the
/// checkpoint written after every epoch.
///
/// Arasan's options map as: -c threads, -d defaults, -f emit-rust, -i init,
/// -x output, -n epochs, -o optimizer, -O objective, -R recompute-pv,
/// -V validate-gradient. These short options differ from the other tools'
/// (where -o is --output and -t is --threads); the long options are the
/// same everywhere (--output, --threads, --seed, --summary).
///
/// `tuner codegen` writes the engine's generated `params.rs` from the
/// parameter declaration and a params file (see `tuner codegen --help`);
/// `tuner spsa` tunes a UCI engine's spin options by SPSA (see `tuner spsa
/// --help`).
#[derive(Parser, Debug)]
#[command(
    version,
    about,
    long_about,
    args_conflicts_with_subcommands = true,
    disable_version_flag = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// Print version (long form only: -V is the gradient check, as in
    /// Arasan's tuner).
    #[arg(long, action = clap::ArgAction::Version)]
    version: Option<bool>,

    #[command(flatten)]
    train: TrainArgs,
}

/// How the final weights are rounded (`--round`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Rounding {
    /// Each weight to its nearest integer.
    Nearest,
    /// Nearest, then each tunable weight's other neighbour when it lowers
    /// the training loss.
    Greedy,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Write the engine's generated `params.rs`.
    ///
    /// From the parameter declaration (`engine/src/eval/schema.rs`) and the
    /// values of `--params FILE`, or of the compiled defaults, where a block
    /// not yet in `params.rs` has its declared default. After adding or
    /// changing a block, regenerate the committed file from the workspace
    /// root with `tuner codegen -o engine/src/eval/params.rs`, then rebuild.
    Codegen(CodegenArgs),
    /// SPSA tuning of a UCI engine's spin options (ours by default), in
    /// OpenBench's form.
    #[command(long_about = tuner::spsa::ABOUT)]
    Spsa(Box<tuner::spsa::SpsaArgs>),
}

#[derive(Args, Debug)]
struct CodegenArgs {
    /// Params text file with the values (default: the compiled defaults).
    #[arg(long)]
    params: Option<PathBuf>,

    /// Where to write the Rust source (`-` for standard output).
    #[arg(short = 'o', long, default_value = "-")]
    output: PathBuf,
}

#[derive(Args, Debug)]
struct TrainArgs {
    /// Labeled position files (any text format, or bullet binary; plain,
    /// .gz or .zst).
    inputs: Vec<PathBuf>,

    /// Worker threads (default: all cores). Results are identical for any
    /// count.
    #[arg(short = 'c', long)]
    threads: Option<usize>,

    /// Write the compiled default parameters to --output (or stdout) and exit.
    #[arg(short = 'd', long)]
    defaults: bool,

    /// Where to write the generated Rust parameters at the end (default:
    /// OUTPUT.rs, beside the params file). The engine's compiled weights
    /// change only when asked: `-f engine/src/eval/params.rs`, or later
    /// `tuner codegen --params OUTPUT -o engine/src/eval/params.rs`.
    #[arg(short = 'f', long)]
    emit_rust: Option<PathBuf>,

    /// Do not write the generated Rust file.
    #[arg(long)]
    no_emit_rust: bool,

    /// How the best weights become the engine's integers at the end:
    /// nearest (each to its nearest integer) or greedy (from there, each
    /// tunable weight in turn tries its other integer neighbour and keeps it
    /// when the training loss is lower: one loss evaluation per weight, never
    /// worse than nearest on the training set; with --stream that is one
    /// pass over the cache per weight). The weights written after an
    /// improving epoch are rounded to nearest; the final ones by this.
    #[arg(long, value_enum, default_value_t = Rounding::Nearest)]
    round: Rounding,

    /// Start from this params file instead of the compiled defaults.
    #[arg(short = 'i', long)]
    init: Option<PathBuf>,

    /// Start from material only: every non-material parameter set to zero.
    #[arg(long)]
    material_only: bool,

    /// Params text file with the best weights (written atomically whenever
    /// the validation loss improves).
    #[arg(short = 'x', long, default_value = "tuned.params")]
    output: PathBuf,

    /// Number of epochs (0: only measure the losses of the starting weights).
    #[arg(short = 'n', long, default_value_t = 400)]
    epochs: usize,

    /// Optimiser.
    #[arg(short = 'o', long, value_enum, default_value_t = OptimizerKind::Adam)]
    optimizer: OptimizerKind,

    /// Objective: mse (Texel), log (cross-entropy) or ordinal (loss/draw/win
    /// with a fitted draw margin).
    #[arg(short = 'O', long, value_enum, default_value_t = ObjectiveKind::Mse)]
    objective: ObjectiveKind,

    /// Re-resolve and re-trace all positions every R epochs with the current
    /// weights (0: never). Keeps the positions in memory.
    #[arg(short = 'R', long, default_value_t = 0)]
    recompute_pv: usize,

    /// Check the analytic gradient against finite differences on a sample,
    /// print the worst relative error, exit non-zero on a mismatch.
    #[arg(short = 'V', long)]
    validate_gradient: bool,

    /// How positions are resolved before tracing: qsearch, none or depth:N.
    #[arg(long, default_value = "qsearch")]
    resolve: Resolve,

    /// Seed for the validation split, shuffling and checks.
    #[arg(long, default_value_t = 1)]
    seed: u64,

    /// Fraction of the positions held out for validation, in [0, 1): runs of
    /// consecutive positions (a thousandth of the data, at most 256, a
    /// multiple of 16 from 16,000 positions on), so that
    /// the positions of one game stay on one side and the validation loss
    /// shows overfitting.
    #[arg(long, default_value_t = 0.1, value_parser = fraction)]
    validation: f64,

    /// Use this file as the validation set instead of a held-out fraction.
    #[arg(long)]
    validation_file: Option<PathBuf>,

    /// Fix the sigmoid scale K (positive) instead of fitting it.
    #[arg(long, value_parser = positive)]
    k: Option<f64>,

    /// Target blend with search scores (`ce`): L·result + (1−L)·σ(K·ce/400),
    /// L in [0, 1]. With 0 (and -O mse or log) positions with a score and no
    /// result (`labeler --score-only`) are kept, except with --save-traces.
    #[arg(long, default_value_t = 1.0, value_parser = unit_interval)]
    lambda: f64,

    /// Base learning rate (per 1000 cp of a parameter's range; default
    /// depends on the optimiser: adam 2, adagrad 20, momentum 0.5).
    #[arg(long, value_parser = positive)]
    learning_rate: Option<f64>,

    /// Multiply the learning rate by this (positive) after every epoch.
    #[arg(long, default_value_t = 1.0, value_parser = positive)]
    lr_decay: f64,

    /// Positions per optimiser step (0: full batch). In memory, a
    /// mini-batch is made of runs of 16 consecutive positions, so the size
    /// is rounded up to a multiple of 16.
    #[arg(long, default_value_t = 0)]
    batch_size: usize,

    /// L2 regularisation toward the starting weights (per cp², added to the
    /// mean loss). It keeps rarely seen parameters (a king on f6 in the
    /// middlegame, queen mobility 2 in the endgame) near their start: Adam
    /// moves every parameter at the same pace whatever its evidence, and
    /// without this they drift to their bounds and cost playing strength.
    /// 0 turns it off.
    #[arg(long, default_value_t = 1e-8, value_parser = non_negative)]
    l2: f64,

    /// Tune only these groups of parameters (comma-separated).
    #[arg(long, value_name = "GROUPS", value_delimiter = ',', value_parser = group_parser())]
    tune: Vec<Group>,

    /// Tune only these parameter blocks (comma-separated names as in the
    /// params file, e.g. `pawn_supported,rook_seventh_rank`), within the groups
    /// of --tune/--freeze: how a new term is tuned on its own before
    /// everything is.
    #[arg(long, value_name = "BLOCKS", value_delimiter = ',', value_parser = block_name)]
    blocks: Vec<String>,

    /// Keep these parameter blocks fixed (comma-separated names as in the
    /// params file). For a tune of everything, freeze
    /// `king_attack_units,king_check_units`: tuned, those units become
    /// fractional, the king-attack table learns the fractional counters they
    /// give, and rounding them to the engine's integers undoes much of the
    /// gain.
    #[arg(long, value_name = "BLOCKS", value_delimiter = ',', value_parser = block_name)]
    freeze_blocks: Vec<String>,

    /// Keep these groups fixed (comma-separated; the groups of --tune).
    #[arg(long, value_name = "GROUPS", value_delimiter = ',', value_parser = group_parser(), hide_possible_values = true)]
    freeze: Vec<Group>,

    /// Stop after this many epochs without a better validation loss.
    #[arg(long, default_value_t = 30)]
    patience: usize,

    /// Checkpoint written after every epoch (default: OUTPUT.checkpoint).
    #[arg(long)]
    checkpoint: Option<PathBuf>,

    /// Continue the run saved in this checkpoint. The data and every
    /// option that changes the result (-O, -o, --k, --lambda,
    /// --learning-rate, --lr-decay, --batch-size, --l2, --tune/--freeze,
    /// --seed, -R, -i/--material-only, --resolve, --validation…) must be
    /// those of the run; a difference is refused and named. -n and
    /// --patience may differ: they say how long to go on; so may --round,
    /// which only rounds the checkpoint's unrounded best weights at the end.
    #[arg(long)]
    resume: Option<PathBuf>,

    /// Save the resolved, traced positions of the inputs to this trace
    /// cache (before the validation split), for later runs with --traces.
    /// The positions stream to it as they are traced; with -n 0 nothing
    /// else is done and memory stays bounded whatever the size of the
    /// inputs.
    #[arg(long, value_name = "FILE")]
    save_traces: Option<PathBuf>,

    /// Read the traced positions from this trace cache instead of input
    /// files: no parsing, resolving or tracing. The positions stay as they
    /// were resolved when the cache was made (its --resolve and starting
    /// parameters); a cache made with another evaluation schema is refused.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["inputs", "save_traces", "recompute_pv"])]
    traces: Option<PathBuf>,

    /// Train from the --traces cache without loading it: every epoch reads
    /// its blocks in a seeded order, four at a time, shuffling the
    /// positions of each window into mini-batches (set --batch-size).
    /// Memory holds one window, the validation positions and a sample of
    /// ~1M training positions, on which K is fitted and the training loss
    /// before and after is measured.
    #[arg(long, requires = "traces", conflicts_with = "validation_file")]
    stream: bool,

    /// Write the per-epoch log as CSV here.
    #[arg(long)]
    log: Option<PathBuf>,

    /// Loss-curve plot (SVG; default: OUTPUT.svg).
    #[arg(long)]
    plot: Option<PathBuf>,

    /// Also write the run's summary as JSON to FILE (positions, K, losses
    /// before and after, best epoch, timings).
    #[arg(long, value_name = "FILE")]
    summary: Option<PathBuf>,
}

fn with_extension(path: &Path, ext: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

/// Parses a group name; `--help` lists the groups of the declaration.
fn group_parser() -> impl clap::builder::TypedValueParser<Value = Group> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        Group::ALL
            .iter()
            .map(|g| PossibleValue::new(g.name()).help(g.doc())),
    )
    .map(|name| Group::from_name(&name).expect("a declared group"))
}

/// The name of a declared parameter block.
fn block_name(text: &str) -> Result<String, String> {
    match engine::eval::schema::block_by_name(text.trim()) {
        Some(b) => Ok(b.name.to_string()),
        None => Err(format!(
            "{text:?} is not a parameter block (`engine params` lists them)"
        )),
    }
}

/// A finite number (NaN and infinities are refused).
fn finite(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("{text:?} is not a finite number"))
    }
}

fn positive(text: &str) -> Result<f64, String> {
    finite(text).and_then(|v| {
        if v > 0.0 {
            Ok(v)
        } else {
            Err(format!("{v} is not positive"))
        }
    })
}

fn non_negative(text: &str) -> Result<f64, String> {
    finite(text).and_then(|v| {
        if v >= 0.0 {
            Ok(v)
        } else {
            Err(format!("{v} is negative"))
        }
    })
}

fn unit_interval(text: &str) -> Result<f64, String> {
    finite(text).and_then(|v| {
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(format!("{v} is not in [0, 1]"))
        }
    })
}

fn fraction(text: &str) -> Result<f64, String> {
    finite(text).and_then(|v| {
        if (0.0..1.0).contains(&v) {
            Ok(v)
        } else {
            Err(format!("{v} is not in [0, 1)"))
        }
    })
}

fn starting_params(cli: &TrainArgs) -> Result<Params> {
    let mut p = match &cli.init {
        Some(path) => {
            let loaded = params_file::read_file(path)?;
            for w in loaded.warnings() {
                eprintln!("warning: {}: {w}", path.display());
            }
            loaded.params
        }
        None => Params::defaults(),
    };
    if cli.material_only {
        for b in BLOCKS.iter().filter(|b| b.group != Group::Material) {
            for e in b.block.start..b.block.start + b.block.len {
                p.entries[e] = engine::eval::S::ZERO;
            }
        }
    }
    Ok(p)
}

/// What loading keeps besides the traces: the samples for `-R`, and the
/// positions without a result for their search score when the target
/// ignores results (`--lambda 0`, not `-O ordinal`, which models the results
/// themselves) and no trace cache is written (it could be trained with
/// results later).
fn what_to_keep(cli: &TrainArgs) -> dataset::Keep {
    dataset::Keep {
        samples: cli.recompute_pv > 0,
        score_only: cli.lambda == 0.0
            && cli.objective != ObjectiveKind::Ordinal
            && cli.save_traces.is_none(),
    }
}

/// Loads, resolves and traces the inputs, streaming them to the
/// `--save-traces` cache as they come; keeps them when `collect` (else the
/// returned set is empty and memory stays bounded). Also returns the number
/// of positions.
fn trace_inputs(
    cli: &TrainArgs,
    params: &Arc<Params>,
    collect: bool,
) -> Result<(TraceSet, Vec<dataset::Sample>, dataset::LoadStats, usize)> {
    let keep = what_to_keep(cli);
    let start = Instant::now();
    let bar = Progress::spinner(true);
    let mut writer = cli
        .save_traces
        .as_deref()
        .map(CacheWriter::spooled)
        .transpose()?;
    let mut all = TraceSet::new();
    let mut positions = 0;
    let (samples, stats) = dataset::load_each(
        &cli.inputs,
        cli.resolve,
        params,
        keep,
        |traces| {
            if let Some(w) = writer.as_mut() {
                w.append(traces)?;
            }
            if collect {
                all.extend(traces);
            }
            positions += traces.len();
            Ok(())
        },
        |n| show_positions(&bar, "tracing", n),
    )?;
    bar.finish();
    let secs = start.elapsed().as_secs_f64();
    let score_only = if stats.score_only > 0 {
        format!(
            " ({} of them without a result, kept for --lambda 0)",
            stats.score_only
        )
    } else {
        String::new()
    };
    eprintln!(
        "loaded {positions} positions in {secs:.2}s ({:.0} positions/s resolved with {} and traced); \
         {} without a result rejected, {} malformed lines skipped, {} with a search score{score_only}",
        positions as f64 / secs.max(1e-9),
        cli.resolve,
        stats.without_result,
        stats.malformed,
        stats.with_score
    );
    if let (Some(w), Some(path)) = (writer, &cli.save_traces) {
        ensure!(positions > 0, "no usable positions in the inputs");
        let start = Instant::now();
        let meta = CacheMeta {
            resolve: cli.resolve.to_string(),
            params: params_hash(params),
            inputs: dataset::describe_inputs(&stats),
        };
        let record_bytes = w.whole_record_bytes() as usize;
        w.finish_with(&meta)?;
        let memory = TraceSet::heap_bytes_for(positions, record_bytes);
        let file = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        eprintln!(
            "saved {positions} traced positions to {} ({:.2}s to finish; {:.0} bytes/position in \
             the file, as runs); as whole records they take {:.1} MB ({:.0} bytes/position)",
            path.display(),
            start.elapsed().as_secs_f64(),
            file as f64 / positions as f64,
            memory as f64 / 1e6,
            memory as f64 / positions as f64
        );
    }
    Ok((all, samples, stats, positions))
}

/// Loads, resolves and traces the inputs and splits them into training and
/// validation sets; returns the data and the provenance lines of the inputs.
fn load_data(cli: &TrainArgs, params: &Arc<Params>) -> Result<(TraceData, Vec<String>)> {
    let keep = what_to_keep(cli);
    let (holdout, validation_inputs) = match &cli.validation_file {
        Some(vpath) => {
            let (v, vs, vstats) = dataset::load(
                std::slice::from_ref(vpath),
                cli.resolve,
                params,
                keep,
                |_| {},
            )?;
            let inputs = dataset::describe_inputs(&vstats)
                .into_iter()
                .map(|s| format!("{s} [validation]"))
                .collect();
            (Holdout::Set(v, vs), inputs)
        }
        None => (Holdout::Fraction(cli.validation), Vec::new()),
    };
    let start = Instant::now();
    let (data, mut inputs) = match &cli.traces {
        Some(path) => {
            // Block by block into the training runs and the validation set:
            // the whole records are never all held.
            let bar = Progress::spinner(true);
            let mut reader = CacheReader::open(path)?;
            let total = reader.positions() as usize;
            ensure!(total > 0, "no usable positions in the inputs");
            let (fraction, set) = holdout.into_parts();
            let validation = set.map(|(v, _)| v);
            let mut loader = TraceLoader::new(total, fraction, cli.seed);
            let mut read = 0;
            for k in 0..reader.blocks() {
                let block = reader.read_block_runs(k)?;
                read += block.len();
                loader
                    .push_runs(block)
                    .map_err(|e| anyhow!("{}: block {k}: {e}", path.display()))?;
                show_positions(&bar, "reading traces", read);
            }
            bar.finish();
            let secs = start.elapsed().as_secs_f64();
            let meta = reader.meta();
            eprintln!(
                "read {total} positions from {} in {secs:.2}s ({:.0} positions/s, {:.0} MB/s); \
                 resolved with {}, parameters {}",
                path.display(),
                total as f64 / secs.max(1e-9),
                reader.record_bytes() as f64 / 1e6 / secs.max(1e-9),
                meta.resolve,
                meta.params
            );
            let inputs = meta
                .inputs
                .iter()
                .map(|i| format!("{i} [trace cache {}]", path.display()))
                .collect();
            let data = loader
                .finish(validation, None)
                .map_err(|e| anyhow!("{}: {e}", path.display()))?;
            (data, inputs)
        }
        None => {
            let (all, samples, stats, _) = trace_inputs(cli, params, true)?;
            ensure!(!all.is_empty(), "no usable positions in the inputs");
            let data = TraceData::split(
                all,
                samples,
                holdout,
                cli.seed,
                keep.samples.then_some(cli.resolve),
            );
            (data, dataset::describe_inputs(&stats))
        }
    };
    inputs.extend(validation_inputs);
    let (train, validation) = (data.train(), &data.validation);
    ensure!(!train.is_empty(), "the training set is empty");
    let bytes = train.heap_bytes() + validation.heap_bytes();
    let (stored, own) = train.coefficients();
    eprintln!(
        "training {} positions, validation {}; traces use {:.1} MB ({:.0} bytes/position); \
         the training runs store {:.1} of {:.1} coefficients per position",
        train.len(),
        validation.len(),
        bytes as f64 / 1e6,
        bytes as f64 / (train.len() + validation.len()) as f64,
        stored as f64 / train.len() as f64,
        own as f64 / train.len() as f64
    );
    Ok((data, inputs))
}

/// A hash of the parameters positions are resolved with (for the trace
/// cache's header).
fn params_hash(params: &Params) -> String {
    let mut h = tuner::trace_set::Hasher::new();
    for v in params.to_scalars() {
        h.write_u64(v as i64 as u64);
    }
    format!("{:016x}", h.finish())
}

/// Shows `count` positions done by the step `what` on `progress`.
fn show_positions(progress: &Progress, what: &str, count: usize) {
    if !progress.is_hidden() {
        let rate = progress.rate(count as u64);
        progress.set_message(format!("{what}: {count} positions ({rate:.0}/s)"));
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Some(Command::Codegen(args)) => codegen(&args),
        Some(Command::Spsa(args)) => match tuner::spsa::run(&args) {
            Ok(tuner::spsa::Ending::Interrupted) => {
                std::process::exit(engine::runtime::interrupt::EXIT_INTERRUPTED.into());
            }
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        },
        None => train(cli.train),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of standard output has gone (e.g. `| head`): stop
        // quietly, as a program killed by SIGPIPE would.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tuner: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Every file a training run may write, for [`check_outputs`].
fn output_paths(cli: &TrainArgs) -> Vec<PathBuf> {
    let mut outputs = vec![
        cli.output.clone(),
        cli.plot
            .clone()
            .unwrap_or_else(|| with_extension(&cli.output, "svg")),
        cli.checkpoint
            .clone()
            .unwrap_or_else(|| with_extension(&cli.output, "checkpoint")),
    ];
    if !cli.no_emit_rust {
        outputs.push(
            cli.emit_rust
                .clone()
                .unwrap_or_else(|| with_extension(&cli.output, "rs")),
        );
    }
    outputs.extend(cli.log.clone());
    outputs.extend(cli.save_traces.clone());
    outputs.extend(cli.summary.clone());
    outputs
}

/// `tuner codegen`: the generated Rust for a params file or the compiled
/// defaults. The provenance is the params file's header, or, for the
/// compiled defaults, that of the file being replaced (its values are the
/// same apart from blocks new in the declaration).
fn codegen(args: &CodegenArgs) -> Result<()> {
    check_outputs(&[&args.output], &args.params.iter().collect::<Vec<_>>())?;
    let (params, provenance) = match &args.params {
        Some(path) => {
            let loaded = params_file::read_file(path)?;
            for w in loaded.warnings() {
                eprintln!("warning: {}: {w}", path.display());
            }
            let mut provenance = vec![format!("values: {}", path.display())];
            provenance.extend(loaded.header);
            (loaded.params, provenance)
        }
        None => {
            let previous = std::fs::read_to_string(&args.output)
                .ok()
                .and_then(|text| codegen::provenance_of(&text));
            (
                Params::defaults(),
                previous.unwrap_or_else(|| vec!["values: compiled defaults".to_string()]),
            )
        }
    };
    let rust = codegen::generate(&params, &provenance);
    if args.output.as_os_str() == "-" {
        say_raw!("{rust}")?;
    } else {
        write_file(&args.output, rust.as_bytes())?;
        eprintln!("wrote {}", args.output.display());
    }
    Ok(())
}

/// Everything a training run writes besides the trainer's state.
struct Outputs<'a> {
    cli: &'a TrainArgs,
    run: RunDescription,
    checkpoint: PathBuf,
}

impl Outputs<'_> {
    fn provenance(&self, trainer: &Trainer) -> Vec<String> {
        provenance::lines(
            &self.run,
            trainer.objective(),
            trainer.state(),
            SystemTime::now(),
        )
    }

    /// Writes the best weights so far to `--output`, atomically.
    fn write_best(&self, trainer: &Trainer) -> Result<()> {
        self.write_params(trainer, &trainer.best_params())
    }

    /// Writes `params` (the run's best weights, rounded) to `--output`,
    /// atomically.
    fn write_params(&self, trainer: &Trainer, params: &Params) -> Result<()> {
        let text = params_file::to_text(params, &self.provenance(trainer));
        Ok(write_file(&self.cli.output, text.as_bytes())?)
    }

    /// After each epoch: the log line, the best weights when they improved,
    /// the checkpoint and the CSV log.
    fn after_epoch(&self, trainer: &Trainer, report: &tuner::trainer::EpochReport) -> Result<()> {
        if report.retraced {
            eprintln!(
                "epoch {}: re-resolved and re-traced with the current weights",
                report.row.epoch
            );
        }
        print_row(&report.row)?;
        if report.improved {
            self.write_best(trainer)?;
        }
        trainer.state().save(&self.checkpoint)?;
        if let Some(log) = &self.cli.log {
            write_file(log, report::csv(&trainer.state().history).as_bytes())?;
        }
        Ok(())
    }
}

fn train(cli: TrainArgs) -> Result<()> {
    let started = Instant::now();
    if let Some(t) = cli.threads {
        ensure!(t > 0, "--threads must be at least 1");
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .context("starting the thread pool")?;
    }
    if cli.defaults {
        let text = params_file::to_text(&Params::defaults(), &["compiled defaults".into()]);
        if cli.output.as_os_str() == "-" {
            say_raw!("{text}")?;
        } else {
            write_file(&cli.output, text.as_bytes())?;
            eprintln!("wrote the default parameters to {}", cli.output.display());
        }
        return Ok(());
    }
    ensure!(
        !cli.inputs.is_empty() || cli.traces.is_some(),
        "no input files or --traces (see --help)"
    );
    // At --lambda 0 the target σ(K·ce/400) moves with K, so a fitted K would
    // shrink toward 0 instead of matching the scores to the results.
    ensure!(
        cli.lambda != 0.0 || cli.objective == ObjectiveKind::Ordinal || cli.k.is_some(),
        "--lambda 0 needs --k: the target is then the search score itself, which cannot fix \
         the sigmoid scale (fit K on results first: tuner -n 0 --validation 0 FILE with results)"
    );
    let inputs = cli
        .inputs
        .iter()
        .chain(&cli.validation_file)
        .chain(&cli.init)
        .chain(&cli.traces)
        .collect::<Vec<_>>();
    check_outputs(&output_paths(&cli), &inputs)?;
    let start_params = starting_params(&cli)?;
    if cli.stream {
        let path = cli.traces.as_ref().context("--stream reads --traces")?;
        let start = Instant::now();
        let bar = Progress::spinner(true);
        let data = StreamData::open(path, cli.validation, cli.seed, |n| {
            show_positions(&bar, "reading validation positions and the sample", n)
        })?;
        bar.finish();
        eprintln!(
            "streaming {} training positions from {}; validation {} and a training sample of {} \
             held in memory ({:.1} MB), read in {:.2}s",
            data.train_len(),
            path.display(),
            data.validation_len(),
            data.sample().len(),
            data.heap_bytes() as f64 / 1e6,
            start.elapsed().as_secs_f64()
        );
        let inputs = data
            .meta()
            .inputs
            .iter()
            .map(|i| format!("{i} [trace cache {}, streamed]", path.display()))
            .collect();
        return train_on(cli, data, inputs, start_params, started);
    }
    if cli.save_traces.is_some() && cli.epochs == 0 && !cli.validate_gradient {
        // Only the cache: the positions stream to it, nothing is kept.
        let (_, _, stats, positions) = trace_inputs(&cli, &Arc::new(start_params), false)?;
        if let Some(path) = &cli.summary {
            let mut json = Summary::new("tuner", env!("CARGO_PKG_VERSION"));
            json.inputs.clone_from(&cli.inputs);
            json.output.clone_from(&cli.save_traces);
            json.count("positions", positions as u64)
                .skip("without_result", stats.without_result as u64)
                .skip("malformed", stats.malformed as u64)
                .timing("total_seconds", started.elapsed());
            json.write(path)?;
        }
        return Ok(());
    }
    let (data, inputs) = load_data(&cli, &Arc::new(start_params.clone()))?;
    train_on(cli, data, inputs, start_params, started)
}

/// What the command needs of its data besides training.
trait Held: TrainingData {
    /// The positions the gradient check samples.
    fn check_set(&self) -> Cow<'_, TraceSet>;
}

impl Held for TraceData {
    /// The training positions with their own coefficients again.
    fn check_set(&self) -> Cow<'_, TraceSet> {
        Cow::Owned(self.train().decode())
    }
}

impl Held for StreamData {
    fn check_set(&self) -> Cow<'_, TraceSet> {
        Cow::Borrowed(self.sample())
    }
}

/// Trains on loaded data: the gradient check, a measurement, or the run.
fn train_on(
    cli: TrainArgs,
    mut data: impl Held,
    inputs: Vec<String>,
    start_params: Params,
    started: Instant,
) -> Result<()> {
    let space = ParamSpace::new(&cli.tune, &cli.freeze)
        .only_blocks(&cli.blocks)
        .map_err(|e| anyhow!("--blocks: {e}"))?
        .freeze_blocks(&cli.freeze_blocks)
        .map_err(|e| anyhow!("--freeze-blocks: {e}"))?;
    let initial = ParamSpace::weights(&start_params);
    let settings = TrainerSettings {
        objective: cli.objective,
        k: cli.k,
        lambda: cli.lambda,
        optimizer: cli.optimizer,
        learning_rate: cli
            .learning_rate
            .unwrap_or_else(|| cli.optimizer.default_learning_rate()),
        lr_decay: cli.lr_decay,
        batch_size: cli.batch_size,
        l2: cli.l2,
        seed: cli.seed,
        recompute_every: cli.recompute_pv,
        epochs: cli.epochs,
        patience: cli.patience,
    };

    if cli.validate_gradient || cli.epochs == 0 {
        let objective = fit_objective(&settings, &data, &initial);
        print_objective(&objective);
        if cli.validate_gradient {
            return validate_gradient(&data.check_set(), &initial, &objective, cli.seed);
        }
        let train_loss = data.mean_loss(Split::Train, &initial, &objective);
        let validation_loss = data.mean_loss(Split::Validation, &initial, &objective);
        say!("training loss {train_loss:.9}")?;
        say!("validation loss {validation_loss:.9}")?;
        if let Some(path) = &cli.summary {
            let mut json = run_summary(&cli, data.train_len(), data.validation_len(), &objective);
            json.figure("training_loss", train_loss)
                .figure("validation_loss", validation_loss)
                .timing("total_seconds", started.elapsed());
            json.write(path)?;
        }
        return Ok(());
    }
    let groups: Vec<&str> = space.tuned_groups().iter().map(|g| g.name()).collect();
    let blocks = match space.only_blocks_names() {
        [] => String::new(),
        names => format!("; blocks {}", names.join(", ")),
    };
    let blocks = match space.frozen_blocks_names() {
        [] => blocks,
        names => format!("{blocks}; frozen blocks {}", names.join(", ")),
    };
    eprintln!(
        "tuning {} of {} weights ({}{blocks})",
        space.tunable_count(),
        space.len(),
        groups.join(", ")
    );
    let mut trainer = match &cli.resume {
        Some(path) => {
            let cp = Checkpoint::load(path)?;
            let epoch = cp.epoch;
            let trainer = Trainer::resume(settings, space, initial, &mut data, cp)
                .with_context(|| format!("cannot resume from {}", path.display()))?;
            eprintln!("resuming after epoch {epoch} from {}", path.display());
            print_objective(trainer.objective());
            trainer
        }
        None => {
            let trainer = Trainer::new(settings, space, initial, &data);
            print_objective(trainer.objective());
            trainer
        }
    };

    let outputs = Outputs {
        cli: &cli,
        run: RunDescription {
            command: std::env::args().collect(),
            inputs,
            train_positions: data.train_len(),
            validation_positions: data.validation_len(),
            resolve: cli.resolve,
            optimizer: cli.optimizer,
        },
        checkpoint: cli
            .checkpoint
            .clone()
            .unwrap_or_else(|| with_extension(&cli.output, "checkpoint")),
    };
    for row in &trainer.state().history {
        print_row(row)?;
    }
    if cli.resume.is_none() {
        outputs.write_best(&trainer)?;
    }

    // The first Ctrl-C finishes the epoch and writes the best weights; a
    // second one exits at once.
    let interrupt = Interrupt::new();
    interrupt
        .install(Some(
            "interrupted: finishing the epoch and writing the best weights",
        ))
        .context("installing the Ctrl-C handler")?;
    let why = trainer.run(&mut data, interrupt.flag(), |t, report| {
        outputs.after_epoch(t, report)
    })?;
    if why == Stop::EarlyStop {
        eprintln!(
            "early stop: no better validation loss for {} epochs",
            cli.patience
        );
    }
    finish(
        &outputs,
        &data,
        &trainer,
        &start_params,
        started,
        interrupt.requested(),
    )
}

/// The JSON summary's common part: the run's data and objective.
fn run_summary(
    cli: &TrainArgs,
    train_positions: usize,
    validation_positions: usize,
    objective: &Objective,
) -> Summary {
    let mut json = Summary::new("tuner", env!("CARGO_PKG_VERSION"));
    json.inputs.clone_from(&cli.inputs);
    json.output = Some(cli.output.clone());
    json.count("training_positions", train_positions as u64)
        .count("validation_positions", validation_positions as u64)
        .figure("k", objective.k)
        .figure("objective", format!("{:?}", objective.kind).to_lowercase())
        .figure("rounding", format!("{:?}", cli.round).to_lowercase())
        .figure("seed", cli.seed);
    if objective.kind == ObjectiveKind::Ordinal {
        json.figure("draw_margin", objective.draw_margin);
    }
    json
}

fn print_objective(objective: &Objective) {
    if objective.kind == ObjectiveKind::Ordinal {
        eprintln!(
            "K = {:.4}, draw margin = {:.4}",
            objective.k, objective.draw_margin
        );
    } else {
        eprintln!("K = {:.4}", objective.k);
    }
}

fn print_row(r: &EpochRow) -> Result<()> {
    say!(
        "epoch {:>5}  train {:.7}  validation {:.7}  {:>10.0} positions/s  {:>8.1}s",
        r.epoch,
        r.train_loss,
        r.validation_loss,
        r.positions_per_sec,
        r.elapsed_s
    )
}

/// How the summary names the final rounding.
fn rounding_note(round: Rounding) -> &'static str {
    match round {
        Rounding::Nearest => "",
        Rounding::Greedy => ", greedy",
    }
}

fn finish(
    outputs: &Outputs,
    data: &impl TrainingData,
    trainer: &Trainer,
    start: &Params,
    started: Instant,
    interrupted: bool,
) -> Result<()> {
    let cli = outputs.cli;
    let state = trainer.state();
    let objective = trainer.objective();
    let best = match cli.round {
        Rounding::Nearest => trainer.best_params(),
        Rounding::Greedy => {
            let start = Instant::now();
            let best = trainer.space().rounded_greedy(&state.best_weights, |w| {
                data.mean_loss(Split::Train, w, objective)
            });
            eprintln!(
                "greedy rounding: {} tunable weights tried in {:.1}s",
                trainer.space().tunable_count(),
                start.elapsed().as_secs_f64()
            );
            best
        }
    };
    outputs.write_params(trainer, &best)?;
    eprintln!(
        "best weights (epoch {}) written to {}",
        state.best_epoch,
        cli.output.display()
    );
    if !cli.no_emit_rust {
        let rust = codegen::generate(&best, &outputs.provenance(trainer));
        let path = cli
            .emit_rust
            .clone()
            .unwrap_or_else(|| with_extension(&cli.output, "rs"));
        write_file(&path, rust.as_bytes())?;
        eprintln!("generated Rust parameters written to {}", path.display());
    }
    let plot = cli
        .plot
        .clone()
        .unwrap_or_else(|| with_extension(&cli.output, "svg"));
    write_file(
        &plot,
        report::svg_plot(&state.history, &format!("tuner: {}", cli.output.display())).as_bytes(),
    )?;
    let best_f = ParamSpace::weights(&best);
    let start_f = ParamSpace::weights(start);
    let first = &state.history[0];
    say!("summary:")?;
    say!(
        "  positions        {} training, {} validation",
        data.train_len(),
        data.validation_len()
    )?;
    say!("  K                {:.4}", objective.k)?;
    let training_loss = (
        data.mean_loss(Split::Train, &start_f, objective),
        data.mean_loss(Split::Train, &best_f, objective),
    );
    say!(
        "  training loss    {:.7} -> {:.7} (rounded weights{})",
        training_loss.0,
        training_loss.1,
        rounding_note(cli.round)
    )?;
    let validation_loss = (data.validation_len() > 0).then(|| {
        (
            first.validation_loss,
            data.mean_loss(Split::Validation, &best_f, objective),
        )
    });
    if let Some((before, after)) = validation_loss {
        say!(
            "  validation loss  {before:.7} -> {after:.7} (rounded weights{})",
            rounding_note(cli.round)
        )?;
    }
    say!("  best epoch       {} of {}", state.best_epoch, state.epoch)?;
    say!("  plot             {}", plot.display())?;
    if let Some(path) = &cli.summary {
        let mut json = run_summary(cli, data.train_len(), data.validation_len(), objective);
        if interrupted {
            json.status = SummaryStatus::Interrupted;
        }
        json.count("epochs", state.epoch as u64)
            .count("best_epoch", state.best_epoch as u64)
            .figure("training_loss_start", training_loss.0)
            .figure("training_loss_end", training_loss.1)
            .timing("total_seconds", started.elapsed());
        if let Some((before, after)) = validation_loss {
            json.figure("validation_loss_start", before)
                .figure("validation_loss_end", after);
        }
        json.write(path)?;
    }
    say!("largest changes by group:")?;
    say_raw!(
        "{}",
        report::largest_changes(&start.to_scalars(), &best.to_scalars(), 5)
    )?;
    Ok(())
}

fn validate_gradient(
    set: &TraceSet,
    weights: &[f64],
    objective: &Objective,
    seed: u64,
) -> Result<()> {
    const POSITIONS: usize = 5000;
    const PARAMS: usize = 60;
    let results = gradient_check::check(set, weights, objective, POSITIONS, PARAMS, seed);
    let worst = results
        .iter()
        .max_by(|a, b| a.relative_error.total_cmp(&b.relative_error))
        .context("no parameters to check")?;
    say!(
        "gradient check ({:?}): {} parameters on {} positions; worst relative error {:.3e} \
         ({}: analytic {:.6e}, numeric {:.6e})",
        objective.kind,
        results.len(),
        POSITIONS.min(set.len()),
        worst.relative_error,
        engine::eval::schema::scalar_name(worst.param),
        worst.analytic,
        worst.numeric
    )?;
    let is_unit = |i: usize| engine::eval::danger::UNIT_ENTRY.contains(&(i / 2));
    if let Some(units) = results
        .iter()
        .filter(|r| is_unit(r.param))
        .max_by(|a, b| a.relative_error.total_cmp(&b.relative_error))
    {
        say!(
            "king-danger units ({} checked): worst relative error {:.3e} ({}: analytic {:.6e}, \
             numeric {:.6e})",
            results.iter().filter(|r| is_unit(r.param)).count(),
            units.relative_error,
            engine::eval::schema::scalar_name(units.param),
            units.analytic,
            units.numeric
        )?;
    }
    if worst.relative_error > gradient_check::TOLERANCE {
        bail!(
            "gradient mismatch: relative error {:.3e} above {:.0e}",
            worst.relative_error,
            gradient_check::TOLERANCE
        );
    }
    say!("gradient check passed")?;
    Ok(())
}
