# The setup every benchmark script shares; sourced, not run:
#
#   . "$(dirname "$0")/bench-lib.sh"
#
# Sets ROOT (the repository) and WORK (a temporary folder, removed at exit),
# and defines:
#   bench_binary VAR PACKAGE  the binary named by environment variable VAR, else
#                             PACKAGE built with cargo (target/release/PACKAGE);
#                             prints its path
#   bench_pgns [PGN...]       sets PGNS to the arguments, else to every collection
#                             in $SHARED_DATA/pgn (default ../shared/data beside the
#                             repository, else /work/shared/data)
#   bench_concat FILE...      concatenates FILEs into $WORK/all.pgn (every tool reads
#                             the same bytes) and sets GAMES and BYTES
#   bench_run NAME CMD...     runs CMD once (stdout to /dev/null, stderr to
#                             $WORK/NAME.err); prints "wall_s cpu_s peak_rss_kb"
#                             (CPU = user + system, all threads; wall from the
#                             shell's microsecond clock)
#   bench_add NAME "LINE"     appends LINE ("wall cpu rss") to $WORK/NAME.runs
#   bench_median NAME FIELD   median of FIELD (1 wall, 2 cpu, 3 rss) of NAME's runs
#   bench_load                "load a b c on N cores"
#   json FILE KEY             a value of a JSON summary (KEY a jq path: .counts.games)
#   figure NAME VALUE         records a figure for the caller (bench.sh) when
#                             BENCH_JSON names a file: written there as one JSON
#                             object at exit
# Repeated measurements are interleaved (peer, us, peer, us, ...) by the
# scripts, so that both sides see the same load on average, and reported as
# medians: the machine may be shared.

set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d)
BENCH_FIGURES=()

bench_cleanup() {
    if [[ -n ${BENCH_JSON:-} ]]; then
        if ((${#BENCH_FIGURES[@]})); then
            printf '%s\n' "${BENCH_FIGURES[@]}" | jq -s 'add' >"$BENCH_JSON"
        else
            echo '{}' >"$BENCH_JSON"
        fi
    fi
    rm -rf "$WORK"
}
trap bench_cleanup EXIT

command -v jq >/dev/null || { echo "$(basename "$0"): jq is needed (apt install jq)" >&2; exit 1; }

bench_binary() {
    local var=$1 package=$2
    if [[ -n ${!var:-} ]]; then
        echo "${!var}"
    else
        (cd "$ROOT" && cargo build --release -q -p "$package")
        echo "$(cd "$ROOT" && realpath -m "${CARGO_TARGET_DIR:-target}")/release/$package"
    fi
}

bench_pgns() {
    if (($#)); then
        PGNS=("$@")
        return
    fi
    local shared=${SHARED_DATA:-} candidate
    if [[ -z $shared ]]; then
        for candidate in "$ROOT/../shared/data" /work/shared/data; do
            [[ -d $candidate/pgn ]] && { shared=$candidate; break; }
        done
    fi
    [[ -n $shared ]] || { echo "$(basename "$0"): no PGN given and no shared data found" >&2; exit 1; }
    PGNS=("$shared"/pgn/*.pgn)
}

bench_concat() {
    cat "$@" >"$WORK/all.pgn"
    GAMES=$(grep -c '^\[Event ' "$WORK/all.pgn" || true)
    BYTES=$(stat -c %s "$WORK/all.pgn")
}

bench_run() {
    local name=$1 start wall user sys rss
    shift
    start=$EPOCHREALTIME
    /usr/bin/time -f '%U %S %M' -o "$WORK/$name.time" "$@" >/dev/null 2>"$WORK/$name.err" || {
        echo "$(basename "$0"): $name failed:" >&2
        tail -n 5 "$WORK/$name.err" >&2
        exit 1
    }
    wall=$(awk -v a="$EPOCHREALTIME" -v b="$start" 'BEGIN { printf "%.3f", a - b }')
    read -r user sys rss <"$WORK/$name.time"
    echo "$wall $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }') $rss"
}

bench_add() { echo "$2" >>"$WORK/$1.runs"; }

bench_median() {
    cut -d' ' -f"$2" "$WORK/$1.runs" | sort -g |
        awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

bench_load() { echo "load $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"; }

json() { jq -r "$2" "$1"; }

figure() {
    BENCH_FIGURES+=("$(jq -n --arg k "$1" --arg v "$2" '{($k): ($v | tonumber? // $v)}')")
}
