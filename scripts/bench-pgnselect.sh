#!/usr/bin/env bash
# Benchmark: pgnselect against pgn-extract on the same PGN, like for like:
# both write every position of every game (pgn-extract -Wepd; pgnselect from
# ply 0 with gaps of 1 ply, no dedup). Also pgnselect's default sampling, and
# the --max-score search filter against Arasan's pgnselect (~1,300 positions/s).
#
# usage: scripts/bench-pgnselect.sh [-r RUNS] [-d DEPTH] [-s MAX_SCORE] [PGN ...]
#   PGN defaults to every collection in $SHARED_DATA/pgn; the files are
#   concatenated into one, so every tool reads the same bytes. The runs are
#   interleaved (pgn-extract, pgnselect 1 thread, pgnselect 2 threads,
#   sampling), RUNS rounds (default 5), and each figure is the median; CPU
#   seconds (user + system) are affected less by other processes' load than
#   wall-clock seconds. Counts come from pgnselect's --summary JSON.
#   Environment: PGNSELECT (binary to test; default: built with cargo),
#   PGN_EXTRACT (default: pgn-extract on PATH, else /usr/games/pgn-extract),
#   BENCH_JSON (write the figures there as JSON, for scripts/bench.sh).
. "$(dirname "$0")/bench-lib.sh"

runs=5
depth=2
max_score=200
while getopts "r:d:s:" opt; do
    case $opt in
        r) runs=$OPTARG ;;
        d) depth=$OPTARG ;;
        s) max_score=$OPTARG ;;
        *) sed -n '2,17p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))

pgn_extract=${PGN_EXTRACT:-$(command -v pgn-extract || echo /usr/games/pgn-extract)}
if [[ ! -x $pgn_extract ]]; then
    echo "bench-pgnselect: pgn-extract not found (apt-get install pgn-extract)" >&2
    exit 1
fi
pgnselect=$(bench_binary PGNSELECT pgnselect)
bench_pgns "$@"
bench_concat "${PGNS[@]}"
mb=$(awk -v b="$BYTES" 'BEGIN { print b / 1e6 }')
echo "input: ${#PGNS[@]} file(s), $GAMES games, $(printf %.1f "$mb") MB; $runs interleaved rounds, medians; $(bench_load)"

every=(--no-progress --min-ply 0 --max-ply 100000 --min-gap 1 --max-gap 1 --no-dedup)
for ((i = 0; i < runs; i++)); do
    bench_add extract "$(bench_run extract "$pgn_extract" -s -Wepd -o "$WORK/extract.epd" "$WORK/all.pgn")"
    bench_add every1 "$(bench_run every1 "$pgnselect" "${every[@]}" --threads 1 \
        --summary "$WORK/every1.json" -o "$WORK/every1.epd" "$WORK/all.pgn")"
    bench_add every2 "$(bench_run every2 "$pgnselect" "${every[@]}" --threads 2 \
        --summary "$WORK/every2.json" -o "$WORK/every2.epd" "$WORK/all.pgn")"
    bench_add sampled "$(bench_run sampled "$pgnselect" --no-progress --threads 1 \
        --summary "$WORK/sampled.json" -o "$WORK/sampled.epd" "$WORK/all.pgn")"
done
# pgn-extract ends each game's positions with an empty line.
extract_positions=$(grep -c . "$WORK/extract.epd")
every_positions=$(json "$WORK/every1.json" .counts.positions_written)
sampled_positions=$(json "$WORK/sampled.json" .counts.positions_written)
same=$(cmp -s "$WORK/every1.epd" "$WORK/every2.epd" && echo identical || echo DIFFERENT)

rate() { awk -v m="$mb" -v t="$1" 'BEGIN { printf "%.1f", m / t }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
w_x=$(bench_median extract 1) c_x=$(bench_median extract 2)
w_1=$(bench_median every1 1) c_1=$(bench_median every1 2)
w_2=$(bench_median every2 1) c_2=$(bench_median every2 2)
w_s=$(bench_median sampled 1) c_s=$(bench_median sampled 2)
printf 'every position  pgn-extract -Wepd      : %6.3f s wall (%5s MB/s)  %6.2f s CPU (%5s MB/s of CPU)  %s positions\n' \
    "$w_x" "$(rate "$w_x")" "$c_x" "$(rate "$c_x")" "$extract_positions"
printf 'every position  pgnselect --threads 1  : %6.3f s wall (%5s MB/s)  %6.2f s CPU (%5s MB/s of CPU)  %s positions; %sx pgn-extract (wall), %sx (CPU)\n' \
    "$w_1" "$(rate "$w_1")" "$c_1" "$(rate "$c_1")" "$every_positions" "$(ratio "$w_x" "$w_1")" "$(ratio "$c_x" "$c_1")"
printf 'every position  pgnselect --threads 2  : %6.3f s wall (%5s MB/s)  %6.2f s CPU; %sx 1 thread (wall); output %s\n' \
    "$w_2" "$(rate "$w_2")" "$c_2" "$(ratio "$w_1" "$w_2")" "$same"
printf 'sampled         pgnselect --threads 1  : %6.3f s wall (%5s MB/s)  %6.2f s CPU  %s positions (default sampling and dedup)\n' \
    "$w_s" "$(rate "$w_s")" "$c_s" "$sampled_positions"
echo "peak RSS (median): pgn-extract $(($(bench_median extract 3) / 1024)) MB, pgnselect 1 thread $(($(bench_median every1 3) / 1024)) MB, 2 threads $(($(bench_median every2 3) / 1024)) MB"
figure pgn_extract_mb_per_s "$(rate "$w_x")"
figure pgn_extract_cpu_mb_per_s "$(rate "$c_x")"
figure every_1t_mb_per_s "$(rate "$w_1")"
figure every_1t_cpu_mb_per_s "$(rate "$c_1")"
figure every_2t_mb_per_s "$(rate "$w_2")"
figure sampled_1t_mb_per_s "$(rate "$w_s")"
figure every_positions "$every_positions"
figure pgn_extract_positions "$extract_positions"
figure rounds "$runs"
figure load "$(cut -d' ' -f1 /proc/loadavg)"

# The search filter: positions searched per second (2 threads).
search_runs=$(((runs + 1) / 2))
for ((i = 0; i < search_runs; i++)); do
    bench_add search "$(bench_run search "$pgnselect" --no-progress --threads 2 --max-score "$max_score" \
        --search-depth "$depth" --summary "$WORK/search.json" -o "$WORK/search.epd" "$WORK/all.pgn")"
done
searches=$(json "$WORK/search.json" .counts.searches)
nodes=$(json "$WORK/search.json" '.counts.search_nodes / .counts.searches | floor')
kept=$(json "$WORK/search.json" .counts.positions_written)
w_q=$(bench_median search 1) c_q=$(bench_median search 2)
searched=$(awk -v n="$searches" -v t="$w_q" 'BEGIN { printf "%.0f", n / t }')
printf 'pgnselect --max-score %s --search-depth %s --threads 2: %6.3f s wall (median of %s), %s positions searched (%s nodes each), %s kept\n' \
    "$max_score" "$depth" "$w_q" "$search_runs" "$searches" "$nodes" "$kept"
printf '  %s searched positions/s = %sx Arasan'"'"'s ~1,300 positions/s (%.0f per CPU second)\n' \
    "$searched" "$(ratio "$searched" 1300)" "$(awk -v n="$searches" -v t="$c_q" 'BEGIN { print n / t }')"
figure searched_positions_per_s "$searched"
