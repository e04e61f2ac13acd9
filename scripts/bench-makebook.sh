#!/usr/bin/env bash
# Benchmark: our makebook against Debian's `polyglot make-book` on the same
# PGN with matched settings; prints both times, the speed ratio, and compares
# the (position, move) entry sets of the two books.
#
# usage: scripts/bench-makebook.sh [-p MAX_PLY] [-m MIN_GAME] [-r RUNS] [PGN ...]
#   PGN defaults to every collection in $SHARED_DATA/pgn (SHARED_DATA defaults
#   to ../shared/data beside the repository, else /work/shared/data); the
#   files are concatenated because polyglot reads a single file.
#   Environment: MAKEBOOK (binary to test; default: built with cargo),
#   POLYGLOT (default: /usr/games/polyglot).
set -euo pipefail

max_ply=30
min_game=1
runs=3
while getopts "p:m:r:" opt; do
  case $opt in
    p) max_ply=$OPTARG ;;
    m) min_game=$OPTARG ;;
    r) runs=$OPTARG ;;
    *) sed -n '2,12p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))

root=$(cd "$(dirname "$0")/.." && pwd)
polyglot=${POLYGLOT:-/usr/games/polyglot}
if [[ ! -x $polyglot ]]; then
  echo "bench-makebook: $polyglot not found (apt-get install polyglot)" >&2
  exit 1
fi
if [[ -z ${MAKEBOOK:-} ]]; then
  (cd "$root" && cargo build --release -q -p makebook)
  MAKEBOOK=$root/target/release/makebook
fi

if [[ $# -eq 0 ]]; then
  shared=${SHARED_DATA:-}
  if [[ -z $shared ]]; then
    for candidate in "$root/../shared/data" /work/shared/data; do
      [[ -d $candidate/pgn ]] && { shared=$candidate; break; }
    done
  fi
  [[ -n $shared ]] || { echo "bench-makebook: no PGN given and no shared data found" >&2; exit 1; }
  set -- "$shared"/pgn/*.pgn
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat "$@" > "$work/all.pgn"
games=$(grep -c '^\[Event ' "$work/all.pgn" || true)
bytes=$(stat -c %s "$work/all.pgn")
echo "input: $# file(s), $games games, $((bytes / 1024)) KiB; -max-ply $max_ply, -min-game $min_game; best of $runs runs"

# measure CMD...: runs CMD $runs times; prints the best wall-clock time and
# the best CPU time (user + system, all threads), in seconds. CPU time is the
# steadier figure on a machine shared with other jobs.
measure() {
  local best_wall="" best_cpu=""
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" > /dev/null 2>&1
    local wall cpu
    read -r wall user sys < "$work/time"
    cpu=$(echo "$user + $sys" | bc -l)
    if [[ -z $best_wall ]] || (( $(echo "$wall < $best_wall" | bc -l) )); then best_wall=$wall; fi
    if [[ -z $best_cpu ]] || (( $(echo "$cpu < $best_cpu" | bc -l) )); then best_cpu=$cpu; fi
  done
  echo "$best_wall $best_cpu"
}

read -r t_poly c_poly < <(measure "$polyglot" make-book -pgn "$work/all.pgn" -bin "$work/polyglot.bin" \
  -max-ply "$max_ply" -min-game "$min_game")
read -r t_one c_one < <(measure "$MAKEBOOK" --collections-only --threads 1 -p "$max_ply" -m "$min_game" \
  -o "$work/ours-1.bin" "$work/all.pgn")
read -r t_all c_all < <(measure "$MAKEBOOK" --collections-only -p "$max_ply" -m "$min_game" \
  -o "$work/ours.bin" "$work/all.pgn")
threads=$(nproc)

rate() { echo "$games / $1" | bc -l | xargs printf "%.0f"; }
ratio() { echo "$1 / $2" | bc -l | xargs printf "%.1f"; }
echo "                           wall clock                          cpu time (user+sys)"
printf "polyglot make-book       : %6.3f s %7s games/s               %6.3f s\n" \
  "$t_poly" "$(rate "$t_poly")" "$c_poly"
printf "makebook --threads 1     : %6.3f s %7s games/s %5sx faster  %6.3f s %5sx less\n" \
  "$t_one" "$(rate "$t_one")" "$(ratio "$t_poly" "$t_one")" "$c_one" "$(ratio "$c_poly" "$c_one")"
printf "makebook --threads %-5s : %6.3f s %7s games/s %5sx faster  %6.3f s\n" \
  "$threads" "$t_all" "$(rate "$t_all")" "$(ratio "$t_poly" "$t_all")" "$c_all"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $threads cores"

python3 - "$work/polyglot.bin" "$work/ours.bin" "$work/ours-1.bin" <<'PY'
import struct, sys

def load(path):
    data = open(path, "rb").read()
    return {struct.unpack(">QH", data[i:i + 10]): struct.unpack(">H", data[i + 10:i + 12])[0]
            for i in range(0, len(data), 16)}

poly, ours, ours1 = (load(p) for p in sys.argv[1:4])
common = poly.keys() & ours.keys()
print(f"entries: polyglot {len(poly)}, makebook {len(ours)}; common (position, move) pairs {len(common)}, "
      f"only in polyglot {len(poly.keys() - ours.keys())}, only in makebook {len(ours.keys() - poly.keys())}")
print("entry sets:", "IDENTICAL" if poly.keys() == ours.keys() else "DIFFERENT")
print("makebook with 1 thread and with all threads:", "identical books" if ours == ours1 else "DIFFERENT")
# Weights differ by design: polyglot writes 2*wins + draws; makebook writes
# 100 * b with b = 100 * raw / best raw (see makebook --help). Compare the
# order of the best move instead.
by_pos_p, by_pos_o = {}, {}
for (k, m), w in poly.items():
    by_pos_p.setdefault(k, []).append((w, m))
for (k, m), w in ours.items():
    by_pos_o.setdefault(k, []).append((w, m))
same_top = sum(1 for k in by_pos_p if k in by_pos_o and max(by_pos_p[k])[1] == max(by_pos_o[k])[1])
print(f"positions whose heaviest move is the same in both books: {same_top} of {len(by_pos_p)} "
      "(weights differ by design: polyglot 2W+D, makebook points^2/n scaled per position)")
PY
