#!/usr/bin/env bash
# Every benchmark named in the issues, summed up in one table:
#   tool | figure | peer | peer's figure | ratio
# Peers (Debian packages, used when installed): pgn-extract, polyglot,
# stockfish. The full output of each benchmark goes to a log file.
#
# The machine's load changes wall-clock figures; each sub-script takes the
# best of several runs and also reports CPU time.
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet || exit 1
log=$(mktemp -t bench-XXXXXX.log)
rows=()
row() { # tool, figure, our value, peer, peer's value, ratio
    rows+=("$(printf '%-10s | %-40s | %-12s | %-20s | %-16s | %s' "$@")")
}
num() { grep -oE "$1" <<<"$2" | head -n1 | grep -oE '[0-9]+(\.[0-9]+)?' | head -n1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2fx", a / b }'; }

echo "benchmarks running; full output in $log" >&2

# engine: static evaluation and search speed.
out=$(target/release/engine bench-eval 2>&1); echo "$out" >>"$log"
play=$(num 'play mode +[0-9]+' "$out"); trace=$(num 'trace mode +[0-9]+' "$out")
row engine "eval, play mode (positions/s)" "$play" "target" "2000000" "$(ratio "$play" 2000000)"
row engine "eval, trace mode (positions/s)" "$trace" "play mode" "$play" "$(ratio "$play" "$trace") cost"
out=$(target/release/engine bench 2>&1); echo "$out" >>"$log"
last=$(tail -n1 <<<"$out")
nps=$(awk '{ print $3 }' <<<"$last"); signature=$(awk '{ print $1 }' <<<"$last")
sf_nps=""
if [ -x /usr/games/stockfish ]; then
    sf=$(/usr/games/stockfish bench 16 1 13 2>&1); echo "$sf" >>"$log"
    sf_nps=$(num 'Nodes/second +: [0-9]+' "$sf")
fi
row engine "bench nps, 1 thread (sig. $signature)" "$nps" "stockfish bench" "${sf_nps:-n/a}" "$(ratio "$nps" "$sf_nps")"
# Lazy SMP: time to depth 13 on the bench positions, 1 against 2 threads.
t1=$(num 'thread\(s\): [0-9.]+' "$out")
out=$(target/release/engine bench --threads 2 2>&1); echo "$out" >>"$log"
t2=$(num 'thread\(s\): [0-9.]+' "$out")
row engine "time to depth 13, 2 threads (s)" "$t2" "1 thread (s)" "${t1:-n/a}" "$(ratio "$t1" "$t2") speed-up"

# pgnselect vs pgn-extract.
if out=$(scripts/bench-pgnselect.sh 2>&1); then :; fi; echo "$out" >>"$log"
pe=$(grep -m1 'pgn-extract -Wepd' <<<"$out" | grep -oE '\( *[0-9.]+ MB/s' | head -n1 | grep -oE '[0-9.]+')
p1=$(grep -m1 'pgnselect --threads 1' <<<"$out" | grep -oE '\( *[0-9.]+ MB/s' | head -n1 | grep -oE '[0-9.]+')
p2=$(grep -m1 'pgnselect --threads 2' <<<"$out" | grep -oE '\( *[0-9.]+ MB/s' | head -n1 | grep -oE '[0-9.]+')
row pgnselect "MB/s, 1 thread" "$p1" "pgn-extract -Wepd" "${pe:-n/a}" "$(ratio "$p1" "$pe")"
row pgnselect "MB/s, 2 threads" "$p2" "pgnselect 1 thread" "${p1:-n/a}" "$(ratio "$p2" "$p1")"
ms=$(grep -oE '[0-9]+ searched positions/s' <<<"$out" | grep -oE '^[0-9]+')
row pgnselect "--max-score positions/s" "$ms" "Arasan pgnselect" "1300" "$(ratio "$ms" 1300)"

# makebook vs polyglot make-book.
if out=$(scripts/bench-makebook.sh 2>&1); then :; fi; echo "$out" >>"$log"
mb=$(grep -m1 -E '^makebook --threads 1 ' <<<"$out" | grep -oE '[0-9]+ games/s' | grep -oE '[0-9]+')
poly=$(grep -m1 -E '^polyglot' <<<"$out" | grep -oE '[0-9]+ games/s' | grep -oE '[0-9]+')
same=$(grep -m1 'entry sets:' <<<"$out" | awk '{ print $3 }')
row makebook "games/s, 1 thread (entries ${same:-?})" "$mb" "polyglot make-book" "${poly:-n/a}" "$(ratio "$mb" "$poly")"

# labeler: in-process self-play, and against the same engine over UCI.
if out=$(scripts/labeler-bench.sh 2>&1); then :; fi; echo "$out" >>"$log"
gps=$(grep -m1 'in-process self-play' <<<"$out" | grep -oE '= [0-9.]+ games/s' | head -n1 | grep -oE '[0-9.]+')
ext=$(grep -m1 'speed ratio' <<<"$out" | grep -oE '[0-9.]+x by wall' | grep -oE '[0-9.]+')
row labeler "games/s at 5000 nodes, 2 threads" "$gps" "target" "5" "$(ratio "$gps" 5)"
row labeler "in-process vs external UCI (wall)" "-" "engine over UCI" "-" "${ext:-n/a}x"

# labeler selfplay vs per-position labeling, same node budget.
if out=$(scripts/bench-selfplay.sh 2>&1); then :; fi; echo "$out" >>"$log"
sp=$(grep -m1 '^selfplay:' <<<"$out" | grep -oE '[0-9.]+ positions per CPU-s' | grep -oE '^[0-9.]+')
lb=$(grep -m1 '^labeler:' <<<"$out" | grep -oE '[0-9.]+ positions per CPU-s' | grep -oE '^[0-9.]+')
row labeler "selfplay positions per CPU-s, 5000 nodes" "$sp" "per-position labeler" "${lb:-n/a}" "$(ratio "$sp" "$lb") (target 40x)"

# tuner.
if out=$(scripts/bench-tuner.sh 2>&1); then :; fi; echo "$out" >>"$log"
figure() { grep -m1 '^summary:' <<<"$out" | grep -oE "$1=[0-9.]+" | cut -d= -f2; }
e1=$(figure epoch_1t); e2=$(figure epoch_2t); x1=$(figure ethereal_1t); x2=$(figure ethereal_2t)
tr=$(figure trace_positions_per_s); load=$(figure cache_load_positions_per_s)
bpp=$(figure peak_rss_bytes_per_position)
row tuner "epoch positions/s, 1 thread" "$e1" "Ethereal tuner, 1 thread" "${x1:-n/a}" "$(ratio "$e1" "$x1")"
row tuner "epoch positions/s, 2 threads" "$e2" "Ethereal tuner, 2 threads" "${x2:-n/a}" "$(ratio "$e2" "$x2")"
row tuner "resolve+trace positions/s" "$tr" "target" "200000" "$(ratio "$tr" 200000)"
row tuner "trace cache load positions/s" "$load" "resolve+trace" "${tr:-n/a}" "$(ratio "$load" "$tr")"
row tuner "peak RSS bytes/position, 1M positions" "$bpp" "target (max)" "100" "$(ratio "$bpp" 100)"

printf '%-10s | %-40s | %-12s | %-20s | %-16s | %s\n' tool figure ours peer "peer's figure" ratio
printf '%s\n' "-----------+------------------------------------------+--------------+----------------------+------------------+------"
printf '%s\n' "${rows[@]}"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); full output: $log"
