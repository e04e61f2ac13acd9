#!/usr/bin/env bash
# Benchmark: pgnselect against pgn-extract on the same PGN, and the
# --max-score search filter against Arasan's pgnselect (~1,300 positions/s).
#
# usage: scripts/bench-pgnselect.sh [-r RUNS] [-d DEPTH] [-s MAX_SCORE] [PGN ...]
#   PGN defaults to every collection in $SHARED_DATA/pgn (SHARED_DATA defaults
#   to ../shared/data beside the repository, else /work/shared/data); the
#   files are concatenated into one temporary file so that every tool reads
#   the same bytes. Each figure is the best of RUNS runs (default 5): the
#   machine is shared, so the fastest run is the least disturbed one. CPU
#   (user) seconds are printed too, which load from other processes affects
#   less than wall-clock time.
#   Environment: PGNSELECT (binary to test; default: built with cargo),
#   PGN_EXTRACT (default: pgn-extract on PATH, else /usr/games/pgn-extract).
set -euo pipefail

runs=5
depth=2
max_score=200
while getopts "r:d:s:" opt; do
  case $opt in
    r) runs=$OPTARG ;;
    d) depth=$OPTARG ;;
    s) max_score=$OPTARG ;;
    *) sed -n '2,15p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))

root=$(cd "$(dirname "$0")/.." && pwd)
pgn_extract=${PGN_EXTRACT:-$(command -v pgn-extract || echo /usr/games/pgn-extract)}
if [[ ! -x $pgn_extract ]]; then
  echo "bench-pgnselect: pgn-extract not found (apt-get install pgn-extract)" >&2
  exit 1
fi
if [[ -z ${PGNSELECT:-} ]]; then
  (cd "$root" && cargo build --release -q -p pgnselect)
  PGNSELECT=$root/target/release/pgnselect
fi

if [[ $# -eq 0 ]]; then
  shared=${SHARED_DATA:-}
  if [[ -z $shared ]]; then
    for candidate in "$root/../shared/data" /work/shared/data; do
      [[ -d $candidate/pgn ]] && { shared=$candidate; break; }
    done
  fi
  [[ -n $shared ]] || { echo "bench-pgnselect: no PGN given and no shared data found" >&2; exit 1; }
  set -- "$shared"/pgn/*.pgn
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat "$@" > "$work/all.pgn"
games=$(grep -c '^\[Event ' "$work/all.pgn" || true)
bytes=$(stat -c %s "$work/all.pgn")
mb=$(echo "$bytes / 1000000" | bc -l)
echo "input: $# file(s), $games games, $(printf %.1f "$mb") MB; best of $runs runs; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# best CMD...: runs CMD $runs times; prints "<best wall s> <user s of that run>
# <peak RSS KB of that run>" and leaves the stderr of the best run in
# $work/best.err.
best() {
  local best_wall="" best_user="" best_rss=""
  for _ in $(seq "$runs"); do
    # Wall time from the shell's microsecond clock (time's %e has 10 ms steps).
    local start=$EPOCHREALTIME
    /usr/bin/time -f "%U %M" -o "$work/time" "$@" > /dev/null 2> "$work/run.err"
    local wall
    wall=$(echo "$EPOCHREALTIME - $start" | bc -l | xargs printf "%.3f")
    read -r user rss < "$work/time"
    if [[ -z $best_wall ]] || (( $(echo "$wall < $best_wall" | bc -l) )); then
      best_wall=$wall; best_user=$user; best_rss=$rss; cp "$work/run.err" "$work/best.err"
    fi
  done
  echo "$best_wall $best_user $best_rss"
}

mbps() { echo "$mb / $1" | bc -l | xargs printf "%.1f"; }

read -r t_pe u_pe _ < <(best "$pgn_extract" -s -Wepd -o "$work/pgn-extract.epd" "$work/all.pgn")
read -r t_one u_one m_one < <(best "$PGNSELECT" --threads 1 -o "$work/one.epd" "$work/all.pgn")
read -r t_two u_two m_two < <(best "$PGNSELECT" --threads 2 -o "$work/two.epd" "$work/all.pgn")
written=$(wc -l < "$work/one.epd")

printf "pgn-extract -Wepd          : %6.3f s wall (%5s MB/s)  %5.2f s CPU (%5s MB/s of CPU)\n" \
  "$t_pe" "$(mbps "$t_pe")" "$u_pe" "$(mbps "$u_pe")"
printf "pgnselect --threads 1      : %6.3f s wall (%5s MB/s)  %5.2f s CPU (%5s MB/s of CPU)  %.1fx pgn-extract (wall), %.1fx (CPU)\n" \
  "$t_one" "$(mbps "$t_one")" "$u_one" "$(mbps "$u_one")" \
  "$(echo "$t_pe / $t_one" | bc -l)" "$(echo "$u_pe / $u_one" | bc -l)"
printf "pgnselect --threads 2      : %6.3f s wall (%5s MB/s)  %5.2f s CPU  speed-up over 1 thread %.2fx\n" \
  "$t_two" "$(mbps "$t_two")" "$u_two" "$(echo "$t_one / $t_two" | bc -l)"
echo "positions written: $written; 1 and 2 threads: $(cmp -s "$work/one.epd" "$work/two.epd" && echo identical || echo DIFFERENT)"
read -r _ _ m_nodedup < <(runs=1 best "$PGNSELECT" --threads 2 --no-dedup -o "$work/nodedup.epd" "$work/all.pgn")
echo "peak RSS: 1 thread $((m_one / 1024)) MB, 2 threads $((m_two / 1024)) MB, 2 threads --no-dedup $((m_nodedup / 1024)) MB (the rest is the dedup set)"

read -r t_s u_s _ < <(best "$PGNSELECT" --threads 2 --max-score "$max_score" --search-depth "$depth" \
  -o "$work/search.epd" "$work/all.pgn")
searches=$(grep -o 'searches [0-9]*' "$work/best.err" | grep -o '[0-9]*')
nodes=$(grep -o '[0-9]* nodes each' "$work/best.err" | grep -o '^[0-9]*' || echo '?')
kept=$(wc -l < "$work/search.epd")
rate=$(echo "$searches / $t_s" | bc -l)
printf "pgnselect --max-score %s --search-depth %s --threads 2: %6.3f s wall, %s positions searched (%s nodes each), %s kept\n" \
  "$max_score" "$depth" "$t_s" "$searches" "$nodes" "$kept"
printf "  %.0f searched positions/s = %.1fx Arasan's ~1,300 positions/s (%.0f per CPU second)\n" \
  "$rate" "$(echo "$rate / 1300" | bc -l)" "$(echo "$searches / $u_s" | bc -l)"
