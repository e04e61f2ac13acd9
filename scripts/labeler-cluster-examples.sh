#!/usr/bin/env bash
# Worked examples: labeling one big position file on many machines with
# `labeler --shard K/N`, then restoring input order with `labeler merge`.
#
# How sharding works (see `labeler --help`): records are numbered from 0 over
# all inputs in order (bad lines included); shard K/N labels the records whose
# number is K modulo N and appends `id "<record number>";` to each output
# line. `labeler merge` takes the shard outputs, checks with their sidecars
# that every shard is there and finished (otherwise it fails and writes
# nothing), sorts on that number, strips it, and writes exactly what one
# unsharded run would have written. Every shard is resumable on its own: rerunning a shard
# command after a crash, preemption or timeout continues where it stopped.
#
# usage: scripts/labeler-cluster-examples.sh parallel|slurm|merge
#   The variables below describe your cluster; adjust them first.
#
# Slurm reads these directives only before the first command, hence here
# (they are plain comments otherwise); see example 2.
#SBATCH --job-name=labeler
#SBATCH --cpus-per-task=32
#SBATCH --mem=2G
#SBATCH --time=12:00:00
#SBATCH --requeue
#SBATCH --output=labeler-%A_%a.log
set -euo pipefail

# Input visible at the same path on every node (shared filesystem), or copied
# there beforehand.
INPUT=${INPUT:-/shared/positions/unlabeled.epd.zst}
# Where the shard outputs go (shared filesystem).
OUTDIR=${OUTDIR:-/shared/labels}
# Number of shards: one per worker machine (or more, for finer restarts).
SHARDS=${SHARDS:-16}
# Options that change the labels must be identical for all shards.
LABEL_OPTIONS=${LABEL_OPTIONS:---nodes 5000 --resign-score 700 --resign-moves 4}
# The labeler binary at the same path on every node.
LABELER=${LABELER:-/shared/bin/labeler}

# ---------------------------------------------------------------------------
# 1. GNU parallel over SSH.
#    nodes.txt lists the machines, one "user@node01" per line; --jobs 1
#    runs one shard at a time per machine, using all its cores (the core
#    count comes from `nproc` on the remote side).
#    Because every shard resumes, simply rerun the same command after a
#    failure: finished shards are skipped in seconds (--retries retries
#    immediately, --joblog + --resume-failed reruns only failed shards).
# ---------------------------------------------------------------------------
run_gnu_parallel() {
  mkdir -p "$OUTDIR"
  seq 0 $((SHARDS - 1)) | parallel \
    --sshloginfile nodes.txt \
    --jobs 1 \
    --retries 3 \
    --joblog "$OUTDIR/joblog.txt" --resume-failed \
    --tagstring 'shard {}' \
    "$LABELER $INPUT -o $OUTDIR/shard-{}-of-$SHARDS.epd --shard {}/$SHARDS \
       --threads \$(nproc) --no-progress --rejects $OUTDIR/rejects-{}.txt $LABEL_OPTIONS"
  merge_shards
}

# ---------------------------------------------------------------------------
# 2. A Slurm job array: one array task per shard. Submit with
#      sbatch --array=0-15 scripts/labeler-cluster-examples.sh slurm
#    (array size = SHARDS). A task killed by the time limit or preemption
#    leaves a valid prefix; `sbatch --array=<failed ids>` (or --requeue)
#    continues it. After all tasks end, run the merge step
#    (`scripts/labeler-cluster-examples.sh merge`, or submit it with
#    --dependency=afterok:<array job id>).
# ---------------------------------------------------------------------------
run_slurm_task() {
  local k=${SLURM_ARRAY_TASK_ID:?run as an array task: sbatch --array=0-$((SHARDS - 1))}
  local n=${SLURM_ARRAY_TASK_COUNT:-$SHARDS}
  mkdir -p "$OUTDIR"
  # shellcheck disable=SC2086 # LABEL_OPTIONS is a list of words
  srun "$LABELER" "$INPUT" -o "$OUTDIR/shard-$k-of-$n.epd" --shard "$k/$n" \
    --threads "${SLURM_CPUS_PER_TASK:-1}" --no-progress \
    --rejects "$OUTDIR/rejects-$k.txt" $LABEL_OPTIONS
}

# ---------------------------------------------------------------------------
# 3. Merge: input order restored, the id operation removed. The shard
#    outputs may be given in any order; a concatenation of them has no
#    sidecar and is merged only unchecked
#    (cat shard-*.epd > all.epd; labeler merge --unchecked all.epd -o labeled.epd).
# ---------------------------------------------------------------------------
merge_shards() {
  "$LABELER" merge "$OUTDIR"/shard-*-of-"$SHARDS".epd -o "$OUTDIR/labeled.epd"
  # Positions an engine could not label are listed per shard:
  cat "$OUTDIR"/rejects-*.txt > "$OUTDIR/rejects.txt" 2>/dev/null || true
}

case ${1:-} in
  parallel) run_gnu_parallel ;;
  slurm) run_slurm_task ;;
  merge) merge_shards ;;
  *) sed -n '2,14p' "$0"; exit 2 ;;
esac
