#!/usr/bin/env bash
# Tuner benchmark, in one run: bytes per position (traces, cache file, peak
# RSS of a run holding them), tracing and trace-cache load rates, epoch
# positions/s per core with 1 and 2 threads, and Ethereal's Texel tuner
# (tuner.c) on the same positions with the same number of weights, run
# interleaved with ours, with the ratio; and the epoch floor of the same
# positions (tuner/examples/epoch_floor.rs): the least work of an exact
# gradient, run as a plain loop.
#
# Usage: scripts/bench-tuner.sh [LABELED.epd] [POSITIONS]
#   default: shared/data's 238k labeled positions, repeated to 1,000,000.
#   Positions sampled from many games (these) stay whole records in training;
#   a self-play file (a game's positions one after another) is held as runs of
#   differences: pass one to measure that case.
# Environment: EPOCHS (default 5), ROUNDS (interleaved repetitions, default 2),
#   BATCH (mini-batch size of both tuners, default 16384 = Ethereal's),
#   ETHEREAL_GIT (a clone or bare git dir of AndyGrant/Ethereal; skipped if absent),
#   BENCH_JSON (write the figures there as JSON, for scripts/bench.sh).
#
# Ethereal's source is exported into a temporary folder, its tuner.h is set
# to this data (NPOSITIONS), a batch-loop timer is added to tuner.c, and it
# is built with its Makefile's `tune` target (gcc, OpenMP, -march=native).
# Its tuned terms are all NORMAL and COMPLEXITY terms but KingShelter,
# KingStorm and PawnConnected32: 636 terms x (mg, eg), like our 636 entries.
# Nothing of Ethereal's is kept.
. "$(dirname "$0")/bench-lib.sh"
cd "$ROOT"
root=$ROOT
data=${1:-../shared/data/labeled/masters-quiet-labeled.epd}
[ -f "$data" ] || data=data/labeled/masters-quiet-20k.epd
positions=${2:-1000000}
epochs=${EPOCHS:-5}
rounds=${ROUNDS:-2}
batch=${BATCH:-16384}
ethereal_git=${ETHEREAL_GIT:-/work/.mirror/AndyGrant+Ethereal/repo}
cargo build --release --quiet -p tuner
tuner=$(cd "$root" && realpath -m "${CARGO_TARGET_DIR:-target}")/release/tuner
work=$WORK

lines=$(wc -l <"$data")
reps=$(((positions + lines - 1) / lines))
(for ((i = 0; i < reps; i++)); do cat "$data"; done | head -n "$positions" >"$work/set.epd") || true
echo "data: $data repeated to $positions positions; $epochs epochs, mini-batch $batch, $rounds interleaved rounds"

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "nan" }'; }
rss_mb() { awk '{ printf "%.1f", $1 / 1024 }' "$1"; }

# 1. Resolve and trace once, streaming the trace cache (-n 0: nothing else
#    is kept); its peak memory.
/usr/bin/time -f "%M" -o "$work/time-trace" "$tuner" -n 0 --k 1 --save-traces "$work/set.traces" \
    --no-emit-rust -x "$work/t.params" "$work/set.epd" >/dev/null 2>"$work/err-trace"
trace_rate=$(grep -o 'in [0-9.]*s ([0-9]* positions/s' "$work/err-trace" | grep -o '([0-9]*' | tr -d '(')
bytes=$(grep -o '([0-9]* bytes/position)' "$work/err-trace" | grep -o '[0-9]*')
cache_bytes=$(stat -c %s "$work/set.traces")
printf 'traces: %s bytes/position as whole records, cache file %.1f bytes/position; resolve+trace %s positions/s, streamed to the cache with peak RSS %s MB\n' \
    "$bytes" "$(awk -v b="$cache_bytes" -v n="$positions" 'BEGIN { print b / n }')" "$trace_rate" \
    "$(rss_mb "$work/time-trace")"

# 2. Loading the trace cache (twice: the second read is from the page cache);
#    peak memory of a run that holds every position (and measures the loss).
for pass in 1 2; do
    /usr/bin/time -f "%M" -o "$work/time-load" "$tuner" -n 0 --k 1 --traces "$work/set.traces" \
        --no-emit-rust -x "$work/t.params" >/dev/null 2>"$work/err-load"
    grep -o 'read [0-9]* positions .* MB/s)' "$work/err-load" | sed "s/^/cache load $pass: /"
done
load_rate=$(grep -o '([0-9]* positions/s' "$work/err-load" | grep -o '[0-9]*')
peak_kb=$(cat "$work/time-load")
held=$(grep -o 'traces use .* bytes/position' "$work/err-load" | grep -o '([0-9]* bytes' | grep -o '[0-9]*')
printf 'holding the traces: %s bytes/position as held (training runs and validation set); peak RSS %s MB (%.0f bytes/position)\n' \
    "$held" "$(rss_mb "$work/time-load")" "$(awk -v k="$peak_kb" -v n="$positions" 'BEGIN { print k * 1024 / n }')"

# 3. Ethereal's tuner, built for this data.
ethereal=""
if [ -e "$ethereal_git" ] && command -v gcc >/dev/null; then
    mkdir -p "$work/ethereal"
    git --git-dir="$ethereal_git" archive HEAD 2>/dev/null | tar -x -C "$work/ethereal" 2>/dev/null \
        || git -C "$ethereal_git" archive HEAD | tar -x -C "$work/ethereal"
    src=$work/ethereal/src
    sed -i -E \
        -e "s/^#define NPOSITIONS .*/#define NPOSITIONS ($positions)/" \
        -e "s/^#define NTERMS .*/#define NTERMS (636)/" \
        -e "s/^#define MAXEPOCHS .*/#define MAXEPOCHS ($epochs)/" \
        -e "s/^#define BATCHSIZE .*/#define BATCHSIZE ($batch)/" \
        -e "s/^#define REPORTING .*/#define REPORTING (1000000)/" \
        -e "s/^#define TuneNormal .*/#define TuneNormal (1)/" \
        -e "s/^#define TuneComplexity .*/#define TuneComplexity (1)/" \
        -e "s/^#define (TuneKingShelter|TuneKingStorm|TunePawnConnected32) .*/#define \1 (0)/" \
        "$src/tuner.h"
    # Time the mini-batch loop of every epoch (what our positions/s measures).
    sed -i \
        -e 's|^#include "tuner.h"|#include "tuner.h"\n#include <omp.h>|' \
        -e 's|^        for (int batch = 0; batch < NPOSITIONS / BATCHSIZE; batch++) {|        double bench_start = omp_get_wtime();\n&|' \
        -e 's|^        error = tunedEvaluationErrors(entries, params, methods, K);|        printf("\\nbench-epoch %d %.6f\\n", epoch, omp_get_wtime() - bench_start);\n&|' \
        "$src/tuner.c"
    grep -q bench-epoch "$src/tuner.c" || { echo "could not instrument Ethereal's tuner.c" >&2; exit 1; }
    if make -C "$src" tune CC=gcc EXE=ethereal-tune >"$work/ethereal-build.log" 2>&1; then
        ethereal=$src/ethereal-tune
        # Ethereal reads "FEN [1.0]" lines from a file named FENS.
        awk '{ r = ($0 ~ /"1-0"/) ? "[1.0]" : ($0 ~ /"0-1"/) ? "[0.0]" : "[0.5]";
               print $1, $2, $3, $4, 0, 1, r }' "$work/set.epd" >"$src/FENS"
    else
        echo "Ethereal's tuner did not build (see below); comparing without it" >&2
        tail -5 "$work/ethereal-build.log" >&2
    fi
else
    echo "no Ethereal source at $ethereal_git (set ETHEREAL_GIT) or no gcc: comparing without it"
fi

# 4. Epochs, interleaved: ours then Ethereal's, for 1 and 2 threads, ROUNDS times.
for ((round = 1; round <= rounds; round++)); do
    for threads in 1 2; do
        "$tuner" -c "$threads" -n "$epochs" --k 1 --patience 1000 --batch-size "$batch" --traces "$work/set.traces" \
            --no-emit-rust -x "$work/o$threads.params" >"$work/ours-$threads-$round" 2>"$work/ours-err"
        awk '$1 == "epoch" && $2 >= 1 { print $(NF-2) }' "$work/ours-$threads-$round" >>"$work/rates-ours-$threads"
        if [ -n "$ethereal" ]; then
            (cd "$src" && OMP_NUM_THREADS=$threads ./ethereal-tune >"$work/eth-$threads-$round" 2>&1)
            awk -v n="$positions" -v b="$batch" '$1 == "bench-epoch" { print int(n / b) * b / $3 }' \
                "$work/eth-$threads-$round" >>"$work/rates-eth-$threads"
        fi
    done
done
ours_weights=$(grep -o 'tuning [0-9]* of [0-9]* weights' "$work/ours-err" | head -1)
echo "weights: ours ${ours_weights#tuning } (every group); Ethereal 1272 (636 terms x mg/eg)"
cmp -s <(grep -v '^#' "$work/o1.params") <(grep -v '^#' "$work/o2.params") \
    && same="identical" || same="DIFFERENT"
declare -A summary=([bytes_per_position]=$held [whole_record_bytes_per_position]=$bytes [peak_rss_bytes_per_position]=$(awk -v k="$peak_kb" -v n="$positions" 'BEGIN { printf "%.0f", k * 1024 / n }')
    [trace_positions_per_s]=$trace_rate [cache_load_positions_per_s]=$load_rate)
for threads in 1 2; do
    ours=$(median <"$work/rates-ours-$threads")
    summary[epoch_${threads}t]=$(printf '%.0f' "$ours")
    line=$(printf 'epoch, %d thread(s): ours %.0f positions/s (%.0f per core)' "$threads" "$ours" \
        "$(awk -v r="$ours" -v t="$threads" 'BEGIN { print r / t }')")
    if [ -n "$ethereal" ]; then
        eth=$(median <"$work/rates-eth-$threads")
        summary[ethereal_${threads}t]=$(printf '%.0f' "$eth")
        summary[ratio_${threads}t]=$(awk -v a="$ours" -v b="$eth" 'BEGIN { printf "%.2f", a / b }')
        line+=$(printf '; Ethereal %.0f positions/s (%.0f per core); ratio %.2fx' "$eth" \
            "$(awk -v r="$eth" -v t="$threads" 'BEGIN { print r / t }')" \
            "$(awk -v a="$ours" -v b="$eth" 'BEGIN { print a / b }')")
    fi
    echo "$line"
done
echo "our tuned parameters with 1 and 2 threads: $same"

# 5. The floor: the same positions through the least work any exact kernel
#    does (tuner/examples/epoch_floor.rs: pre-decoded coefficients, one core),
#    against which ours and Ethereal's show what is left to win.
cargo build --release --quiet -p tuner --example epoch_floor
floor_bin=$(cd "$root" && realpath -m "${CARGO_TARGET_DIR:-target}")/release/examples/epoch_floor
for ((round = 1; round <= rounds; round++)); do
    "$floor_bin" "$work/set.traces" "$epochs" 2>"$work/floor-err" | grep -o 'floor: [0-9]*' | grep -o '[0-9]*' >>"$work/rates-floor"
done
floor=$(median <"$work/rates-floor")
summary[floor_1t]=$(printf '%.0f' "$floor")
line=$(printf 'epoch floor (pre-decoded coefficients, no king danger), 1 thread: %.0f positions/s; %s; ours at %.0f%% of it' \
    "$floor" "$(cat "$work/floor-err")" "$(awk -v a="${summary[epoch_1t]}" -v b="$floor" 'BEGIN { print 100 * a / b }')")
if [ -n "$ethereal" ]; then
    summary[floor_over_ethereal_1t]=$(awk -v a="$floor" -v b="${summary[ethereal_1t]}" 'BEGIN { printf "%.2f", a / b }')
    line+=$(printf '; the floor is %sx Ethereal' "${summary[floor_over_ethereal_1t]}")
fi
echo "$line"
line="summary:"
for key in bytes_per_position whole_record_bytes_per_position peak_rss_bytes_per_position trace_positions_per_s cache_load_positions_per_s \
    epoch_1t epoch_2t ethereal_1t ethereal_2t ratio_1t ratio_2t floor_1t floor_over_ethereal_1t; do
    line+=" $key=${summary[$key]:-n/a}"
done
echo "$line"
for key in "${!summary[@]}"; do figure "$key" "${summary[$key]}"; done
echo "median of $((rounds * epochs)) epochs each; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
