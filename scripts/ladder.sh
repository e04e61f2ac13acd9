#!/usr/bin/env bash
# The strength ladder: the engine against a fixed set of opponents, each
# rung a paired match from the project's openings (data/openings), with
# W/D/L, the pentanomial pair counts and Elo with its 95% interval per rung.
#
# Usage: scripts/ladder.sh [-g GAMES] [-t TC] [-c CONCURRENCY] [-j RUNGS]
#                          [-d DIR] [-p PARAMS] [-r REV] [-P] [RUNG...]
#   -g  games per rung (default 100; even, every opening with both colours)
#   -t  time control BASE+INC in seconds (default 10+0.1)
#   -c  games at once (default 1: no engine shares a core with another game)
#   -j  rungs played at the same time (default 1); the machine then runs
#       RUNGS x CONCURRENCY games at once, one core each
#   -d  output folder (default runs/ladder-<label>): per rung its PGN, its
#       --summary JSON and the match log; ladder.md, the table
#   -p  params file of the built-in engine (compiled weights otherwise)
#   -r  play the engine of git revision REV instead (built in a temporary
#       worktree outside the checkout): the engine before a change, measured
#       in the same conditions as after it
#   -P  play a profile-guided build of the engine (scripts/build-pgo.sh: the
#       same search, faster); the table then says so
#   RUNG  any of sf2400 sf2600 toga2 glaurung ethereal (default: all five)
#
# A rung whose summary says "complete" is not played again, and a rung that
# was stopped resumes from its match journal: rerun the same command after an
# interruption to finish the ladder. Reports the machine's load beside the
# table (timed games are only comparable on a quiet machine).
set -euo pipefail
cd "$(dirname "$0")/.."

games=100
tc=10+0.1
concurrency=1
rungs_at_once=1
dir=""
params=""
rev=""
pgo=0
while getopts "g:t:c:j:d:p:r:P" opt; do
    case $opt in
        g) games=$OPTARG ;;
        t) tc=$OPTARG ;;
        c) concurrency=$OPTARG ;;
        j) rungs_at_once=$OPTARG ;;
        d) dir=$OPTARG ;;
        p) params=$OPTARG ;;
        r) rev=$OPTARG ;;
        P) pgo=1 ;;
        *) sed -n '2,26p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
rungs=("$@")
[ ${#rungs[@]} -gt 0 ] || rungs=(sf2400 sf2600 toga2 glaurung ethereal)
command -v jq >/dev/null || { echo "ladder.sh needs jq" >&2; exit 1; }

opponent() {
    case $1 in
        sf2400 | sf2600)
            echo --engine-b /usr/games/stockfish --name-b "stockfish-elo${1#sf}" \
                --option-b UCI_LimitStrength=true --option-b "UCI_Elo=${1#sf}" \
                --option-b Threads=1 --option-b Hash=16 ;;
        toga2) echo --engine-b /usr/games/toga2 --name-b toga2 ;;
        glaurung) echo --engine-b /usr/games/glaurung --name-b glaurung ;;
        ethereal) echo --engine-b /usr/games/ethereal-chess --name-b ethereal ;;
        *) echo "unknown rung $1 (sf2400 sf2600 toga2 glaurung ethereal)" >&2; return 1 ;;
    esac
}

# Every opponent is a Debian package: name the missing ones before building.
missing=()
for rung in "${rungs[@]}"; do
    read -r -a them <<<"$(opponent "$rung")"
    [ ${#them[@]} -gt 0 ] || exit 2
    [ -x "${them[1]}" ] || missing+=("$rung: ${them[1]}")
done
if [ ${#missing[@]} -gt 0 ]; then
    printf 'ladder.sh: opponent not installed: %s\n' "${missing[@]}" >&2
    echo "install them with: apt-get install stockfish toga2 glaurung ethereal-chess" >&2
    exit 1
fi

target=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p engine
engine=$target/release/engine
player=(--name-a engine)
label=${rev:-head}
if [ -n "$params" ] && [ -z "$rev" ]; then
    player=(--params-a "$params" --name-a "engine-$(basename "$params" .params)")
    label=$(basename "$params" .params)
fi
if [ "$pgo" = 1 ]; then
    label=$label-pgo
    # The built-in engine is the match runner's own: run the PGO build.
    if [ -z "$rev" ]; then
        scripts/build-pgo.sh -o "$target/pgo"
        engine=$target/pgo/release/engine
    fi
fi
dir=${dir:-runs/ladder-$label}
mkdir -p "$dir"
if [ -n "$rev" ]; then
    # The other revision's engine, as an external UCI player, kept in the
    # output folder so that a rerun resumes its rungs with the same program.
    short=$(git rev-parse --short "$rev^{commit}")
    program=$(cd "$dir" && pwd)/bin/engine-$short$([ "$pgo" = 0 ] || echo -pgo)
    if [ ! -x "$program" ]; then
        build=$(mktemp -d /tmp/ladder-build.XXXXXX)
        trap 'git worktree remove --force "$build/src" >/dev/null 2>&1 || true; rm -rf "$build"' EXIT
        git worktree add --detach -q "$build/src" "$rev"
        if [ "$pgo" = 1 ]; then
            CARGO_TARGET_DIR="$build/target" scripts/build-pgo.sh -C "$build/src" -o "$build/target/pgo"
            built=$build/target/pgo/release/engine
        else
            (cd "$build/src" && CARGO_TARGET_DIR="$build/target" cargo build --release -q -p engine)
            built=$build/target/release/engine
        fi
        mkdir -p "$dir/bin"
        cp "$built" "$program"
    fi
    player=(--engine-a "$program" --name-a "engine-$rev")
fi


# play_rung RUNG: the rung's match, its PGN, summary and log in $dir.
play_rung() {
    local rung=$1 them
    read -r -a them <<<"$(opponent "$rung")"
    echo "$rung: $games games at $tc, concurrency $concurrency ($(cut -d' ' -f1-3 /proc/loadavg) load)"
    if ! "$engine" match "${player[@]}" "${them[@]}" --games "$games" --tc "$tc" \
        --concurrency "$concurrency" --openings data/openings/match-openings.epd \
        --pgn "$dir/$rung.pgn" --summary "$dir/$rung.json" --event "ladder $label $rung" \
        >"$dir/$rung.log" 2>&1; then
        echo "$rung: failed" >&2
        tail -5 "$dir/$rung.log" >&2
        return 1
    fi
    echo "$rung:"
    tail -6 "$dir/$rung.log"
}

running=()
failed=0
for rung in "${rungs[@]}"; do
    summary=$dir/$rung.json
    if [ -f "$summary" ] && [ "$(jq -r .status "$summary")" = complete ] &&
        [ "$(jq -r .counts.games "$summary")" = "$games" ]; then
        echo "$rung: done ($summary)"
        continue
    fi
    # At most -j rungs at once: wait for one to end before starting another.
    while [ ${#running[@]} -ge "$rungs_at_once" ]; do
        wait -n -p ended "${running[@]}" || failed=1
        for i in "${!running[@]}"; do
            [ "${running[$i]}" != "$ended" ] || unset 'running[i]'
        done
        running=("${running[@]}")
    done
    play_rung "$rung" &
    running+=($!)
done
for pid in "${running[@]}"; do
    wait "$pid" || failed=1
done
[ "$failed" = 0 ] || exit 1

{
    echo "| opponent | games | W | D | L | pairs [LL LD DD+WL WD WW] | score | Elo (95%) |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
    for rung in "${rungs[@]}"; do
        jq -r '.figures.score as $s
            | def r: if . == null then (if $s < 0.5 then "-inf" else "+inf" end) else round end;
            "| \(.figures.player_b) | \(.counts.games) | \(.counts.wins) | \(.counts.draws) | \(.counts.losses) | \(.figures.pentanomial_ll_ld_ddwl_wd_ww | map(tostring) | join(" ")) | \(.figures.score * 1000 | round / 10)% | \(.figures.elo | r) [\(.figures.elo_low | r), \(.figures.elo_high | r)] |"' "$dir/$rung.json"
    done
    echo
    echo "engine: $label; tc $tc; concurrency $concurrency; $rungs_at_once rung(s) at once; load at the end $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
} | tee "$dir/ladder.md"
