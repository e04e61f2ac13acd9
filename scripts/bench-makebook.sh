#!/usr/bin/env bash
# Benchmark: our makebook against Debian's `polyglot make-book` on the same
# PGN with matched settings (collections only, same maximum ply and minimum
# game count); prints both times, the speed ratio, and compares the
# (position, move) entry sets of the two books.
#
# usage: scripts/bench-makebook.sh [-p MAX_PLY] [-m MIN_GAME] [-r RUNS] [PGN ...]
#   PGN defaults to every collection in $SHARED_DATA/pgn; the files are
#   concatenated because polyglot reads a single file. The runs are
#   interleaved (polyglot, makebook 1 thread, makebook all threads), RUNS
#   rounds (default 5), and each figure is the median. Book sizes come from
#   makebook's --summary JSON.
#   Environment: MAKEBOOK (binary to test; default: built with cargo),
#   POLYGLOT (default: /usr/games/polyglot), BENCH_JSON (write the figures
#   there as JSON, for scripts/bench.sh).
. "$(dirname "$0")/bench-lib.sh"

max_ply=30
min_game=1
runs=5
while getopts "p:m:r:" opt; do
    case $opt in
        p) max_ply=$OPTARG ;;
        m) min_game=$OPTARG ;;
        r) runs=$OPTARG ;;
        *) sed -n '2,15p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))

polyglot=${POLYGLOT:-/usr/games/polyglot}
if [[ ! -x $polyglot ]]; then
    echo "bench-makebook: $polyglot not found (apt-get install polyglot)" >&2
    exit 1
fi
makebook=$(bench_binary MAKEBOOK makebook)
bench_pgns "$@"
bench_concat "${PGNS[@]}"
threads=$(nproc)
echo "input: ${#PGNS[@]} file(s), $GAMES games, $((BYTES / 1024)) KiB; -max-ply $max_ply, -min-game $min_game; $runs interleaved rounds, medians; $(bench_load)"

ours=(--no-progress --collections-only --max-ply "$max_ply" --min-count "$min_game")
for ((i = 0; i < runs; i++)); do
    bench_add polyglot "$(bench_run polyglot "$polyglot" make-book -pgn "$WORK/all.pgn" \
        -bin "$WORK/polyglot.bin" -max-ply "$max_ply" -min-game "$min_game")"
    bench_add one "$(bench_run one "$makebook" "${ours[@]}" --threads 1 \
        --summary "$WORK/one.json" -o "$WORK/ours-1.bin" "$WORK/all.pgn")"
    bench_add all "$(bench_run all "$makebook" "${ours[@]}" --threads "$threads" \
        --summary "$WORK/all.json" -o "$WORK/ours.bin" "$WORK/all.pgn")"
done

rate() { awk -v g="$GAMES" -v t="$1" 'BEGIN { printf "%.0f", g / t }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
w_p=$(bench_median polyglot 1) c_p=$(bench_median polyglot 2)
w_1=$(bench_median one 1) c_1=$(bench_median one 2)
w_a=$(bench_median all 1) c_a=$(bench_median all 2)
echo "                           wall clock (median)                 cpu time (user+sys)"
printf "polyglot make-book       : %6.3f s %7s games/s                %6.3f s\n" \
    "$w_p" "$(rate "$w_p")" "$c_p"
printf "makebook --threads 1     : %6.3f s %7s games/s %6sx faster  %6.3f s %5sx less\n" \
    "$w_1" "$(rate "$w_1")" "$(ratio "$w_p" "$w_1")" "$c_1" "$(ratio "$c_p" "$c_1")"
printf "makebook --threads %-5s : %6.3f s %7s games/s %6sx faster  %6.3f s\n" \
    "$threads" "$w_a" "$(rate "$w_a")" "$(ratio "$w_p" "$w_a")" "$c_a"
echo "makebook: $(json "$WORK/one.json" .counts.entries) entries for $(json "$WORK/one.json" .counts.positions) positions from $(json "$WORK/one.json" .counts.games_used) games"
figure polyglot_games_per_s "$(rate "$w_p")"
figure polyglot_cpu_games_per_s "$(rate "$c_p")"
figure makebook_1t_games_per_s "$(rate "$w_1")"
figure makebook_1t_cpu_games_per_s "$(rate "$c_1")"
figure makebook_all_games_per_s "$(rate "$w_a")"
figure threads "$threads"
figure games "$GAMES"
figure rounds "$runs"
figure load "$(cut -d' ' -f1 /proc/loadavg)"

python3 - "$WORK/polyglot.bin" "$WORK/ours.bin" "$WORK/ours-1.bin" >"$WORK/compare.txt" <<'PY'
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
cat "$WORK/compare.txt"
figure entry_sets "$(grep -m1 'entry sets:' "$WORK/compare.txt" | awk '{ print $3 }')"
