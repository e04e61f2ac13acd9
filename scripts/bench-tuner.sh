#!/usr/bin/env bash
# Tuner benchmark: tracing/resolution rate, epoch throughput on pre-traced
# data with 1 and 2 threads, and peak memory for one million positions.
# Peer figure: Arasan's tuner, measured at ~150,000 positions/s per core.
#
# Usage: scripts/bench-tuner.sh [LABELED.epd]   (default: shared/data's 238k positions)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-../shared/data/labeled/masters-quiet-labeled.epd}
[ -f "$data" ] || data=data/labeled/masters-quiet-20k.epd
cargo build --release --quiet -p tuner
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tuner=target/release/tuner
lines=$(wc -l <"$data")
reps=$(( (1000000 + lines - 1) / lines ))
(for ((i = 0; i < reps; i++)); do cat "$data"; done | head -n 1000000 >"$work/1m.epd") || true

median_rate() { # the median positions/s of the epoch lines (epoch >= 1)
    awk '$1 == "epoch" && $2 >= 1 { print $(NF-2) }' "$1" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}
for threads in 1 2; do
    /usr/bin/time -f "%M %e" -o "$work/time-$threads" "$tuner" -c "$threads" -n 30 --patience 1000 \
        --no-emit-rust -x "$work/t$threads.params" "$work/1m.epd" >"$work/out-$threads" 2>"$work/err-$threads"
    rate=$(median_rate "$work/out-$threads")
    trace=$(grep -o 'in [0-9.]*s ([0-9]* positions/s' "$work/err-$threads" | grep -o '([0-9]*' | tr -d '(')
    read -r kb secs <"$work/time-$threads"
    bytes=$(grep -o '[0-9]* bytes/position' "$work/err-$threads" | grep -o '^[0-9]*')
    printf 'tuner -c %d on 1,000,000 positions: epoch %s positions/s (%.1fx Arasan per core), resolve+trace %s positions/s, peak RSS %.0f MB, traces %s bytes/position\n' \
        "$threads" "$rate" "$(awk -v r="$rate" -v t="$threads" 'BEGIN { print r / t / 150000 }')" "$trace" "$(awk -v k="$kb" 'BEGIN { print k / 1024 }')" "$bytes"
done
cmp -s <(grep -v '^#' "$work/t1.params") <(grep -v '^#' "$work/t2.params") \
    && echo "1 and 2 threads: identical parameters" || echo "1 and 2 threads: DIFFERENT parameters"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
