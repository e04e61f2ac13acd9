#!/usr/bin/env bash
# Benchmark of self-play data generation against per-position labeling:
# labeled positions per CPU-second of
#   labeler selfplay --games G --nodes N        (every quiet position of a game)
#   labeler --nodes N POSITIONS                  (one game per position)
# at the same node budget, interleaved run by run (best of -r runs each), so
# that both see the same machine load. Also reports games/s, positions/s,
# positions per game and peak memory (RSS) of the self-play run.
#
# usage: scripts/bench-selfplay.sh [-n NODES] [-g GAMES] [-p POSITIONS] [-t THREADS] [-r RUNS]
#   defaults: 5,000 nodes/move, 40 self-play games, 40 positions to label,
#   2 threads, 2 runs. Positions to label come from the start of
#   data/labeled/masters-quiet-20k.epd (a shuffled file: a random sample).
#   Environment: LABELER (binary; default: built with cargo).
set -euo pipefail

nodes=5000
games=40
positions=40
threads=2
runs=2
while getopts "n:g:p:t:r:" opt; do
  case $opt in
    n) nodes=$OPTARG ;;
    g) games=$OPTARG ;;
    p) positions=$OPTARG ;;
    t) threads=$OPTARG ;;
    r) runs=$OPTARG ;;
    *) sed -n '2,15p' "$0"; exit 2 ;;
  esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
if [[ -z ${LABELER:-} ]]; then
  (cd "$root" && cargo build --release -q -p labeler)
fi
labeler=${LABELER:-$root/target/release/labeler}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -n "$positions" "$root/data/labeled/masters-quiet-20k.epd" > "$work/to-label.epd"

# measure NAME COMMAND...: runs it under /usr/bin/time; prints
# "wall_s cpu_s peak_rss_kb" (CPU = user + system).
measure() {
  local name=$1
  shift
  /usr/bin/time -f '%e %U %S %M' -o "$work/$name.time" "$@" 2> "$work/$name.log" || {
    cat "$work/$name.log" >&2
    exit 1
  }
  read -r wall user sys rss < "$work/$name.time"
  echo "$wall $(echo "$user + $sys" | bc -l) $rss"
}

# keep_best VAR LINE: keeps in VAR the line with the smallest CPU time.
keep_best() {
  local -n best_ref=$1
  if [[ -z $best_ref ]] || (($(echo "$(cut -d' ' -f2 <<< "$2") < $(cut -d' ' -f2 <<< "$best_ref")" | bc -l))); then
    best_ref=$2
  fi
}

echo "self-play benchmark: $nodes nodes/move, $threads threads, best of $runs runs ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
selfplay="" labeling=""
for ((i = 0; i < runs; i++)); do
  keep_best selfplay "$(measure selfplay "$labeler" selfplay -o "$work/selfplay.epd" --overwrite \
    --no-progress --games "$games" --nodes "$nodes" --threads "$threads" \
    --summary "$work/selfplay.json")"
  keep_best labeling "$(measure labeling "$labeler" "$work/to-label.epd" -o "$work/labeled.epd" \
    --overwrite --no-progress --nodes "$nodes" --threads "$threads")"
done
read -r sp_wall sp_cpu sp_rss <<< "$selfplay"
read -r lb_wall lb_cpu lb_rss <<< "$labeling"
read -r kept plies < <(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(s["counts"]["positions_kept"], s["figures"]["average_plies"])' "$work/selfplay.json")
labeled=$(wc -l < "$work/labeled.epd")
sp_rate=$(echo "$kept / $sp_cpu" | bc -l)
lb_rate=$(echo "$labeled / $lb_cpu" | bc -l)
printf 'selfplay: %d games, %d positions kept (%.1f per game, games %.1f plies long): %.2f s wall, %.2f CPU-s = %.2f games/s, %.0f positions/s wall; %.1f positions per CPU-s; peak RSS %.1f MB\n' \
  "$games" "$kept" "$(echo "$kept / $games" | bc -l)" "$plies" "$sp_wall" "$sp_cpu" \
  "$(echo "$games / $sp_wall" | bc -l)" "$(echo "$kept / $sp_wall" | bc -l)" "$sp_rate" \
  "$(echo "$sp_rss / 1024" | bc -l)"
printf 'labeler:  %d positions labeled: %.2f s wall, %.2f CPU-s = %.2f positions per CPU-s; peak RSS %.1f MB\n' \
  "$labeled" "$lb_wall" "$lb_cpu" "$lb_rate" "$(echo "$lb_rss / 1024" | bc -l)"
printf 'selfplay / labeler: %.1fx labeled positions per CPU-second\n' "$(echo "$sp_rate / $lb_rate" | bc -l)"
