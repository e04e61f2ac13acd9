#!/usr/bin/env bash
# Benchmark of labeler:
#  1. games/s and average game length with in-process self-play on
#     typical middlegame positions (default: 100 positions, 5,000 nodes per
#     move, 2 threads);
#  2. in-process labeling against the same engine driven as an external UCI
#     process per worker (--engine target/release/engine) on 50 positions at
#     the same node budget, printing the speed ratio.
# Each measurement is repeated (-r) and the best run is reported, because the
# machine may be shared and load varies.
#
# usage: scripts/labeler-bench.sh [-n NODES] [-p POSITIONS] [-c COMPARE_POSITIONS]
#                                 [-t THREADS] [-r RUNS] [EPD]
#   EPD defaults to data/labeled/masters-quiet-20k.epd (positions are taken
#   from its start; the file is shuffled, so this is a random sample).
#   Environment: LABELER, ENGINE (binaries; default: built with cargo),
#   BENCH_JSON (write the figures there as JSON, for scripts/bench.sh).
. "$(dirname "$0")/bench-lib.sh"

nodes=5000
positions=100
compare_positions=50
threads=2
runs=2
while getopts "n:p:c:t:r:" opt; do
  case $opt in
    n) nodes=$OPTARG ;;
    p) positions=$OPTARG ;;
    c) compare_positions=$OPTARG ;;
    t) threads=$OPTARG ;;
    r) runs=$OPTARG ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))

epd=${1:-$ROOT/data/labeled/masters-quiet-20k.epd}
labeler=$(bench_binary LABELER labeler)
engine=$(bench_binary ENGINE engine)
work=$WORK
head -n "$positions" "$epd" > "$work/sample.epd"
head -n "$compare_positions" "$epd" > "$work/compare.epd"

# run NAME INPUT [labeler options...]: labels INPUT, prints
# "wall_seconds cpu_seconds average_plies" (CPU = user + system, engine
# child processes included).
run() {
  local name=$1 input=$2
  shift 2
  local timing plies
  timing=$( { TIMEFORMAT='%R %U %S'; time "$labeler" "$input" -o "$work/$name.epd" \
    --overwrite --no-progress --nodes "$nodes" --threads "$threads" \
    --summary "$work/$name.json" "$@" 2> "$work/$name.log"; } 2>&1 )
  read -r wall user sys <<< "$timing"
  plies=$(json "$work/$name.json" '.figures.average_plies * 10 | round / 10')
  echo "$wall $(echo "$user + $sys" | bc -l) $plies"
}

# keep_best VAR LINE: keeps in VAR the line with the smallest wall time.
keep_best() {
  local -n best_ref=$1
  if [[ -z $best_ref ]] || (($(echo "${2%% *} < ${best_ref%% *}" | bc -l))); then
    best_ref=$2
  fi
}

echo "labeler benchmark: $threads threads, $nodes nodes/move, best of $runs runs ($(bench_load))"
echo "(wall-clock figures depend on the machine's load; the CPU figures estimate"
echo " an unloaded machine: games per CPU-second x $threads threads)"

selfplay=""
for ((i = 0; i < runs; i++)); do keep_best selfplay "$(run selfplay "$work/sample.epd")"; done
read -r wall cpu plies <<< "$selfplay"
printf 'in-process self-play: %d positions, average %s plies: %.2f s wall = %.2f games/s; %.2f CPU-s = %.2f games/s on %d free cores\n' \
  "$positions" "$plies" "$wall" "$(echo "$positions / $wall" | bc -l)" \
  "$cpu" "$(echo "$positions * $threads / $cpu" | bc -l)" "$threads"
figure selfplay_games_per_s "$(echo "$positions / $wall" | bc -l)"

# Interleaved, so that both sides see the same load on average.
inprocess="" external=""
for ((i = 0; i < runs; i++)); do
  keep_best inprocess "$(run inprocess "$work/compare.epd")"
  keep_best external "$(run external "$work/compare.epd" --engine "$engine")"
done
read -r in_wall in_cpu in_plies <<< "$inprocess"
read -r ext_wall ext_cpu ext_plies <<< "$external"
for side in in ext; do
  wall_var=${side}_wall cpu_var=${side}_cpu plies_var=${side}_plies
  label=$([[ $side == in ]] && echo "in-process:     " || echo "external engine:")
  printf '%s %d positions, average %s plies: %.2f s wall = %.2f games/s; %.2f CPU-s\n' \
    "$label" "$compare_positions" "${!plies_var}" "${!wall_var}" \
    "$(echo "$compare_positions / ${!wall_var}" | bc -l)" "${!cpu_var}"
done
printf 'in-process / external speed ratio: %.2fx by wall clock, %.2fx by CPU time\n' \
  "$(echo "$ext_wall / $in_wall" | bc -l)" "$(echo "$ext_cpu / $in_cpu" | bc -l)"
figure external_over_inprocess_wall "$(echo "$ext_wall / $in_wall" | bc -l)"
if cmp -s "$work/inprocess.epd" "$work/external.epd"; then
  echo "labels: identical"
else
  echo "labels: $(diff <(cut -d'"' -f2 "$work/inprocess.epd") <(cut -d'"' -f2 "$work/external.epd") | grep -c '^<') of $compare_positions differ"
fi
