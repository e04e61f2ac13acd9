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
#   Environment: LABELER (binary; default: built with cargo), BENCH_JSON
#   (write the figures there as JSON, for scripts/bench.sh).
. "$(dirname "$0")/bench-lib.sh"

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

labeler=$(bench_binary LABELER labeler)
work=$WORK
head -n "$positions" "$ROOT/data/labeled/masters-quiet-20k.epd" > "$work/to-label.epd"

# keep_best VAR LINE: keeps in VAR the line with the smallest CPU time.
keep_best() {
  local -n best_ref=$1
  if [[ -z $best_ref ]] || (($(echo "$(cut -d' ' -f2 <<< "$2") < $(cut -d' ' -f2 <<< "$best_ref")" | bc -l))); then
    best_ref=$2
  fi
}

echo "self-play benchmark: $nodes nodes/move, $threads threads, best of $runs runs ($(bench_load))"
selfplay="" labeling=""
for ((i = 0; i < runs; i++)); do
  keep_best selfplay "$(bench_run selfplay "$labeler" selfplay -o "$work/selfplay.epd" --overwrite \
    --no-progress --games "$games" --nodes "$nodes" --threads "$threads" \
    --summary "$work/selfplay.json")"
  keep_best labeling "$(bench_run labeling "$labeler" "$work/to-label.epd" -o "$work/labeled.epd" \
    --overwrite --no-progress --nodes "$nodes" --threads "$threads" --summary "$work/labeled.json")"
done
read -r sp_wall sp_cpu sp_rss <<< "$selfplay"
read -r lb_wall lb_cpu lb_rss <<< "$labeling"
kept=$(json "$work/selfplay.json" .counts.positions_kept)
plies=$(json "$work/selfplay.json" .figures.average_plies)
labeled=$(json "$work/labeled.json" .counts.labeled)
sp_rate=$(echo "$kept / $sp_cpu" | bc -l)
lb_rate=$(echo "$labeled / $lb_cpu" | bc -l)
printf 'selfplay: %d games, %d positions kept (%.1f per game, games %.1f plies long): %.2f s wall, %.2f CPU-s = %.2f games/s, %.0f positions/s wall; %.1f positions per CPU-s; peak RSS %.1f MB\n' \
  "$games" "$kept" "$(echo "$kept / $games" | bc -l)" "$plies" "$sp_wall" "$sp_cpu" \
  "$(echo "$games / $sp_wall" | bc -l)" "$(echo "$kept / $sp_wall" | bc -l)" "$sp_rate" \
  "$(echo "$sp_rss / 1024" | bc -l)"
printf 'labeler:  %d positions labeled: %.2f s wall, %.2f CPU-s = %.2f positions per CPU-s; peak RSS %.1f MB\n' \
  "$labeled" "$lb_wall" "$lb_cpu" "$lb_rate" "$(echo "$lb_rss / 1024" | bc -l)"
printf 'selfplay / labeler: %.1fx labeled positions per CPU-second\n' "$(echo "$sp_rate / $lb_rate" | bc -l)"
figure selfplay_positions_per_cpu_s "$sp_rate"
figure labeler_positions_per_cpu_s "$lb_rate"
