//! `labeler merge`: restores input order from shard outputs.
//!
//! Each shard output is in record order (see [`crate::shard`]); files may
//! also be concatenations of shard outputs (`cat shard-*.epd > all.epd`),
//! which are cut into their ascending runs by a first pass. The runs are
//! then merged by record number with a heap, one open reader per run, so
//! memory stays bounded by the number of runs. The record-number operation
//! is removed, a record seen twice is an error, and the result is written
//! atomically.
//!
//! Before anything is written, the shard outputs' sidecars are checked:
//! they must come from one run (same header but for the shard), each must
//! be complete, and their shards must be exactly `0/N … N-1/N`. Every line
//! must then belong to its file's shard and run, and each file must hold as
//! many lines as its run labeled. A missing, unfinished, foreign or cut
//! shard output is an error naming it, never a merged file with holes.
//! Concatenations have no sidecar: they are merged only with `--unchecked`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use engine::formats::atomic_file::{AtomicFile, check_outputs};

use crate::resume::{Completion, read_sidecar, sidecar_path};
use crate::shard::{Shard, untag_line};

/// An ascending run of shard output lines inside a file.
struct Run {
    path: PathBuf,
    /// Byte offset of the run's first line.
    start: u64,
    /// Length of the run in bytes.
    len: u64,
    /// 1-based line number of the run's first line.
    first_line: usize,
}

/// A run being read.
struct RunReader {
    lines: std::io::Lines<BufReader<std::io::Take<File>>>,
    path: PathBuf,
    line_no: usize,
}

impl RunReader {
    fn open(run: &Run) -> Result<Self> {
        let mut file =
            File::open(&run.path).with_context(|| format!("opening {}", run.path.display()))?;
        file.seek(SeekFrom::Start(run.start))
            .with_context(|| format!("seeking in {}", run.path.display()))?;
        Ok(RunReader {
            lines: BufReader::new(file.take(run.len)).lines(),
            path: run.path.clone(),
            line_no: run.first_line - 1,
        })
    }

    /// The next line with its record number.
    fn next_record(&mut self) -> Result<Option<(u64, String)>> {
        let Some(line) = self.lines.next() else {
            return Ok(None);
        };
        self.line_no += 1;
        let line = line.with_context(|| format!("{}:{}", self.path.display(), self.line_no))?;
        let (text, record) = untag_line(&line).with_context(|| {
            format!(
                "{}:{}: line has no record number (id \"N\";): not a complete shard output line",
                self.path.display(),
                self.line_no
            )
        })?;
        Ok(Some((record, text.to_string())))
    }
}

/// A shard output as its sidecar describes it.
struct ShardOutput {
    /// The shard (`0/1` for an unsharded run).
    shard: Shard,
    /// What the finished run recorded.
    completion: Completion,
    /// Positions of the shard that failed (in the sidecar, not the output).
    failures: u64,
}

impl ShardOutput {
    /// Lines the output holds.
    fn lines(&self) -> u64 {
        self.completion.jobs - self.failures
    }
}

/// Reads the sidecar of shard output `path`; also returns its header
/// without the shard line (the identity of the run).
fn shard_output(path: &Path) -> Result<(ShardOutput, String)> {
    let sidecar = sidecar_path(path);
    if !sidecar.is_file() {
        bail!(
            "{}: no {} beside it, so merge cannot check that the shards cover the whole run; \
             give the shard outputs as labeler wrote them (concatenations of them only with \
             --unchecked)",
            path.display(),
            sidecar.display()
        );
    }
    let read = read_sidecar(&sidecar)?;
    let mut shard = Shard { index: 0, count: 1 };
    let mut run = String::new();
    for line in read.header.lines() {
        match line.strip_prefix("shard ") {
            Some("none") => {}
            Some(value) => {
                shard = value
                    .parse()
                    .map_err(anyhow::Error::msg)
                    .with_context(|| format!("{}: shard line", sidecar.display()))?;
            }
            None => {
                run.push_str(line);
                run.push('\n');
            }
        }
    }
    let completion = read.completion.with_context(|| {
        format!(
            "{} (shard {shard}) is unfinished: {} has no completion record; rerun its labeler \
             command to finish it, then merge",
            path.display(),
            sidecar.display()
        )
    })?;
    let failures = read.failures.len() as u64;
    if failures > completion.jobs {
        bail!("{}: more failure records than jobs", sidecar.display());
    }
    Ok((
        ShardOutput {
            shard,
            completion,
            failures,
        },
        run,
    ))
}

/// Checks that `inputs` are the complete outputs of every shard of one run.
fn check_coverage(inputs: &[PathBuf]) -> Result<Vec<ShardOutput>> {
    let mut outputs = Vec::new();
    let mut first_run: Option<(String, &Path)> = None;
    for path in inputs {
        let (output, run) = shard_output(path)?;
        match &first_run {
            None => first_run = Some((run, path)),
            Some((first, first_path)) => {
                if let Some((a, b)) = first
                    .lines()
                    .zip(run.lines())
                    .find(|(a, b)| a != b)
                    .or_else(|| {
                        (first.lines().count() != run.lines().count())
                            .then_some(("(other lines)", "(other lines)"))
                    })
                {
                    bail!(
                        "{} and {} are outputs of different runs:\n  {}: {a}\n  {}: {b}",
                        first_path.display(),
                        path.display(),
                        first_path.display(),
                        path.display()
                    );
                }
            }
        }
        outputs.push(output);
    }
    let (count, records) = (outputs[0].shard.count, outputs[0].completion.records);
    let mut owner: std::collections::BTreeMap<u64, &Path> = std::collections::BTreeMap::new();
    for (output, path) in outputs.iter().zip(inputs) {
        if output.shard.count != count {
            bail!(
                "{} is shard {} but {} is shard {}: outputs of different shardings",
                path.display(),
                output.shard,
                inputs[0].display(),
                outputs[0].shard
            );
        }
        if output.completion.records != records {
            bail!(
                "{} saw {} records but {} saw {records}: the inputs changed between shards",
                path.display(),
                output.completion.records,
                inputs[0].display()
            );
        }
        if let Some(other) = owner.insert(output.shard.index, path) {
            bail!(
                "shard {} given twice: {} and {}",
                output.shard,
                other.display(),
                path.display()
            );
        }
    }
    let missing: Vec<String> = (0..count)
        .filter(|k| !owner.contains_key(k))
        .take(10)
        .map(|k| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        let more = count - owner.len() as u64 - missing.len() as u64;
        bail!(
            "shard outputs missing: {}{}; the merged output would lack their positions \
             (nothing written)",
            missing.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    Ok(outputs)
}

/// Cuts a file into its ascending runs of record numbers; with `check`,
/// every record must belong to the file's shard of its run, and the file
/// must hold as many lines as the run labeled.
fn find_runs(path: &Path, check: Option<&ShardOutput>) -> Result<Vec<Run>> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut reader = BufReader::new(file);
    let mut runs = Vec::new();
    let mut current: Option<Run> = None;
    let mut previous: Option<u64> = None;
    let mut offset = 0u64;
    let mut line_no = 0usize;
    let mut buf = String::new();
    loop {
        buf.clear();
        let n = reader
            .read_line(&mut buf)
            .with_context(|| format!("{}:{}", path.display(), line_no + 1))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if !buf.ends_with('\n') {
            bail!(
                "{}:{line_no}: partial last line; finish (resume) that shard before merging",
                path.display()
            );
        }
        let (_, record) = untag_line(buf.trim_end()).with_context(|| {
            format!(
                "{}:{line_no}: line has no record number (id \"N\";): not a shard output",
                path.display()
            )
        })?;
        if let Some(output) = check
            && (!output.shard.owns(record) || record >= output.completion.records)
        {
            bail!(
                "{}:{line_no}: record {record} is not one of shard {} of a run of {} records; \
                     was the file edited or mixed with another run's lines?",
                path.display(),
                output.shard,
                output.completion.records
            );
        }
        if previous.is_none_or(|p| record <= p) {
            runs.extend(current.take());
            current = Some(Run {
                path: path.to_path_buf(),
                start: offset,
                len: 0,
                first_line: line_no,
            });
        }
        if let Some(run) = current.as_mut() {
            run.len += n as u64;
        }
        previous = Some(record);
        offset += n as u64;
    }
    runs.extend(current);
    if let Some(output) = check
        && line_no as u64 != output.lines()
    {
        bail!(
            "{} has {line_no} lines but its run labeled {} positions ({} failed): lines were \
                 lost or added after the run",
            path.display(),
            output.lines(),
            output.failures
        );
    }
    Ok(runs)
}

/// Statistics of a merge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MergeSummary {
    /// Lines written.
    pub lines: u64,
    /// Ascending runs found in the inputs.
    pub runs: usize,
}

/// Merges shard outputs `inputs` into `output` in record order; unless
/// `unchecked`, the inputs must be the complete outputs of every shard of
/// one run (see the module documentation).
///
/// # Errors
/// On unreadable or foreign inputs, missing or unfinished shards,
/// duplicated records, or write errors.
pub fn merge(inputs: &[PathBuf], output: &Path, unchecked: bool) -> Result<MergeSummary> {
    check_outputs(&[output], inputs)?;
    let shards = if unchecked {
        None
    } else {
        Some(check_coverage(inputs)?)
    };
    let mut runs = Vec::new();
    for (i, path) in inputs.iter().enumerate() {
        runs.extend(find_runs(path, shards.as_ref().map(|s| &s[i]))?);
    }
    let mut readers = runs
        .iter()
        .map(RunReader::open)
        .collect::<Result<Vec<_>>>()?;
    let mut heap = BinaryHeap::new();
    let mut pending: Vec<Option<String>> = vec![None; readers.len()];
    for (i, reader) in readers.iter_mut().enumerate() {
        if let Some((record, text)) = reader.next_record()? {
            heap.push(Reverse((record, i)));
            pending[i] = Some(text);
        }
    }
    let mut out =
        AtomicFile::create(output).with_context(|| format!("creating {}", output.display()))?;
    let mut summary = MergeSummary {
        lines: 0,
        runs: runs.len(),
    };
    let mut last: Option<u64> = None;
    while let Some(Reverse((record, i))) = heap.pop() {
        if last == Some(record) {
            bail!(
                "record {record} appears twice (near {}:{}); was a shard output given twice?",
                readers[i].path.display(),
                readers[i].line_no
            );
        }
        last = Some(record);
        let text = pending[i].take().expect("a pending line per heap entry");
        writeln!(out, "{text}").with_context(|| format!("writing {}", output.display()))?;
        summary.lines += 1;
        if let Some((next, text)) = readers[i].next_record()? {
            heap.push(Reverse((next, i)));
            pending[i] = Some(text);
        }
    }
    out.commit()
        .with_context(|| format!("writing {}", output.display()))?;
    Ok(summary)
}
