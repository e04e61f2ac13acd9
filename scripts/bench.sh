#!/usr/bin/env bash
# Every benchmark of the toolchain against its peer, summed up in one table:
#   tool | figure | peer | peer's figure | ratio
# Peers (Debian packages, used when installed): pgn-extract, polyglot,
# stockfish. The full output of each benchmark goes to a log file; every
# figure is read from JSON: the engine's --summary files, and the figures
# each sub-script writes to BENCH_JSON (made from the tools' --summary
# files and /usr/bin/time), never from the tools' printed prose.
#
# The machine's load changes wall-clock figures; the sub-scripts interleave
# peer and us, repeat, and report medians (pgnselect, makebook, tuner) or the
# best run, with CPU time as well.
set -uo pipefail
cd "$(dirname "$0")/.."
command -v jq >/dev/null || { echo "bench: jq is needed (apt install jq)" >&2; exit 1; }
cargo build --release --quiet || exit 1
# Where cargo puts the binaries (CARGO_TARGET_DIR is honoured, relative to the workspace).
BIN_DIR=$(realpath -m "${CARGO_TARGET_DIR:-target}")/release
log=$(mktemp -t bench-XXXXXX.log)
figures=$(mktemp -d -t bench-figures-XXXXXX)
rows=()
row() { # tool, figure, our value, peer, peer's value, ratio
    rows+=("$(printf '%-10s | %-44s | %-12s | %-24s | %-16s | %s' "$@")")
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "null" || b == "null" || b == 0) print "n/a"; else printf "%.2fx", a / b }'; }
# get FILE KEY: a figure of a JSON file (empty when absent).
get() { [ -s "$1" ] && jq -r --arg k "$2" '.[$k] // .figures[$k] // .counts[$k] // .timings[$k] // empty' "$1"; }
# bench NAME SCRIPT [ARGS...]: runs a benchmark script, its output to the log
# and its figures (BENCH_JSON) to $figures/NAME.json.
bench() {
    local name=$1
    shift
    echo "== $*" >>"$log"
    BENCH_JSON="$figures/$name.json" "$@" >>"$log" 2>&1 || echo "bench: $* failed (see $log)" >&2
}

echo "benchmarks running; full output in $log" >&2

# engine: static evaluation and search speed (their --summary JSON).
"$BIN_DIR"/engine bench-eval --summary "$figures/eval.json" >>"$log" 2>&1
play=$(get "$figures/eval.json" play_positions_per_second | xargs printf '%.0f')
trace=$(get "$figures/eval.json" trace_positions_per_second | xargs printf '%.0f')
row engine "eval, play mode (positions/s)" "$play" "target" "2000000" "$(ratio "$play" 2000000)"
row engine "eval, trace mode (positions/s)" "$trace" "play mode" "$play" "$(ratio "$play" "$trace") cost"
"$BIN_DIR"/engine bench --summary "$figures/bench1.json" >>"$log" 2>&1
nps=$(get "$figures/bench1.json" nps); signature=$(get "$figures/bench1.json" nodes)
sf_nps=""
if [ -x /usr/games/stockfish ]; then
    sf=$(/usr/games/stockfish bench 16 1 13 2>&1); echo "$sf" >>"$log"
    # Stockfish has no JSON summary: its own bench line.
    sf_nps=$(grep -oE 'Nodes/second +: [0-9]+' <<<"$sf" | grep -oE '[0-9]+$')
fi
row engine "bench nps, 1 thread (sig. $signature)" "$nps" "stockfish bench" "${sf_nps:-n/a}" "$(ratio "$nps" "$sf_nps")"
# Lazy SMP: time to depth 13 on the bench positions, 1 against 2 threads.
"$BIN_DIR"/engine bench --threads 2 --summary "$figures/bench2.json" >>"$log" 2>&1
t1=$(get "$figures/bench1.json" search_seconds | xargs printf '%.3f')
t2=$(get "$figures/bench2.json" search_seconds | xargs printf '%.3f')
row engine "time to depth 13, 2 threads (s)" "$t2" "1 thread (s)" "${t1:-n/a}" "$(ratio "$t1" "$t2") speed-up"

# pgnselect vs pgn-extract, both writing every position (medians of interleaved runs).
bench pgnselect scripts/bench-pgnselect.sh
f=$figures/pgnselect.json
pe=$(get "$f" pgn_extract_mb_per_s); p1=$(get "$f" every_1t_mb_per_s); p2=$(get "$f" every_2t_mb_per_s)
row pgnselect "MB/s writing every position, 1 thread" "$p1" "pgn-extract -Wepd" "${pe:-n/a}" "$(ratio "$p1" "$pe")"
row pgnselect "MB/s writing every position, 2 threads" "$p2" "pgn-extract -Wepd" "${pe:-n/a}" "$(ratio "$p2" "$pe")"
row pgnselect "MB/s of CPU, every position" "$(get "$f" every_1t_cpu_mb_per_s)" "pgn-extract -Wepd" \
    "$(get "$f" pgn_extract_cpu_mb_per_s)" "$(ratio "$(get "$f" every_1t_cpu_mb_per_s)" "$(get "$f" pgn_extract_cpu_mb_per_s)")"
ms=$(get "$f" searched_positions_per_s)
row pgnselect "--max-score positions/s" "$ms" "Arasan pgnselect" "1300" "$(ratio "$ms" 1300)"

# makebook vs polyglot make-book (medians of interleaved runs).
bench makebook scripts/bench-makebook.sh
f=$figures/makebook.json
mb=$(get "$f" makebook_1t_games_per_s); poly=$(get "$f" polyglot_games_per_s)
row makebook "games/s, 1 thread (entry sets $(get "$f" entry_sets))" "$mb" "polyglot make-book" "${poly:-n/a}" "$(ratio "$mb" "$poly")"
mbc=$(get "$f" makebook_1t_cpu_games_per_s); polyc=$(get "$f" polyglot_cpu_games_per_s)
row makebook "games per CPU-second, 1 thread" "$mbc" "polyglot make-book" "${polyc:-n/a}" "$(ratio "$mbc" "$polyc")"

# labeler: in-process self-play, and against the same engine over UCI.
bench labeler scripts/labeler-bench.sh
f=$figures/labeler.json
gps=$(get "$f" selfplay_games_per_s | xargs printf '%.2f')
ext=$(get "$f" external_over_inprocess_wall | xargs printf '%.2f')
row labeler "games/s at 5000 nodes, 2 threads" "$gps" "target" "5" "$(ratio "$gps" 5)"
row labeler "in-process vs external UCI (wall)" "-" "engine over UCI" "-" "${ext:-n/a}x"

# labeler selfplay vs per-position labeling, same node budget.
bench selfplay scripts/bench-selfplay.sh
f=$figures/selfplay.json
sp=$(get "$f" selfplay_positions_per_cpu_s | xargs printf '%.1f')
lb=$(get "$f" labeler_positions_per_cpu_s | xargs printf '%.2f')
row labeler "selfplay positions per CPU-s, 5000 nodes" "$sp" "per-position labeler" "${lb:-n/a}" "$(ratio "$sp" "$lb") (target 40x)"

# tuner.
bench tuner scripts/bench-tuner.sh
f=$figures/tuner.json
e1=$(get "$f" epoch_1t); e2=$(get "$f" epoch_2t); x1=$(get "$f" ethereal_1t); x2=$(get "$f" ethereal_2t)
tr=$(get "$f" trace_positions_per_s); load=$(get "$f" cache_load_positions_per_s)
bpp=$(get "$f" peak_rss_bytes_per_position)
row tuner "epoch positions/s, 1 thread" "$e1" "Ethereal tuner, 1 thread" "${x1:-n/a}" "$(ratio "$e1" "$x1")"
row tuner "epoch positions/s, 2 threads" "$e2" "Ethereal tuner, 2 threads" "${x2:-n/a}" "$(ratio "$e2" "$x2")"
fl=$(get "$f" floor_1t)
row tuner "epoch floor positions/s, 1 thread" "${fl:-n/a}" "Ethereal tuner, 1 thread" "${x1:-n/a}" "$(ratio "$fl" "$x1") (the least work, a plain loop)"
row tuner "resolve+trace positions/s" "$tr" "target" "200000" "$(ratio "$tr" 200000)"
row tuner "trace cache load positions/s" "$load" "resolve+trace" "${tr:-n/a}" "$(ratio "$load" "$tr")"
row tuner "peak RSS bytes/position, 1M positions" "$bpp" "target (max)" "100" "$(ratio "$bpp" 100)"

printf '%-10s | %-44s | %-12s | %-24s | %-16s | %s\n' tool figure ours peer "peer's figure" ratio
printf '%s\n' "-----------+----------------------------------------------+--------------+--------------------------+------------------+------"
printf '%s\n' "${rows[@]}"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); full output: $log; figures (JSON): $figures"
