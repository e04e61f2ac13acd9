//! `labeler merge`: restores input order from shard outputs.
//!
//! Each shard output is in record order (see [`crate::shard`]); files may
//! also be concatenations of shard outputs (`cat shard-*.epd > all.epd`),
//! which are cut into their ascending runs by a first pass. The runs are
//! then merged by record number with a heap, one open reader per run, so
//! memory stays bounded by the number of runs. The record-number operation
//! is removed, a record seen twice is an error, and the result is written
//! atomically.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use engine::formats::atomic_file::{AtomicFile, check_outputs};

use crate::shard::untag_line;

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

/// Cuts a file into its ascending runs of record numbers.
fn find_runs(path: &Path) -> Result<Vec<Run>> {
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

/// Merges shard outputs `inputs` into `output` in record order.
///
/// # Errors
/// On unreadable or foreign inputs, duplicated records, or write errors.
pub fn merge(inputs: &[PathBuf], output: &Path) -> Result<MergeSummary> {
    check_outputs(&[output], inputs)?;
    let mut runs = Vec::new();
    for path in inputs {
        runs.extend(find_runs(path)?);
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
