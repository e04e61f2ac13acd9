#!/usr/bin/env bash
# An SPRT between two revisions of the engine, the evidence every change to
# the search or the evaluation needs: pentanomial (paired) statistics, the
# generalised SPRT of fishtest, at a fixed node count (results independent of
# the machine's load) or a time control.
#
# Usage: scripts/sprt.sh [-n NODES | -t TC] [-b "elo0=0 elo1=5"] [-g GAMES]
#                        [-c CONCURRENCY] [-s SEED] [-d DIR] NEW [BASE]
#   NEW, BASE  git revisions (BASE defaults to NEW's parent); each is built
#              in a temporary worktree outside the checkout
#   -n  nodes per move (default 20000)
#   -t  time control BASE+INC in seconds instead of fixed nodes
#   -b  SPRT bounds in logistic Elo (default "elo0=0 elo1=5"; alpha = beta
#       = 0.05)
#   -g  games at most (default 20000; the SPRT usually stops long before)
#   -c  games at once (default 1)
#   -s  seed of the opening order (default 1)
#   -d  output folder (default runs/sprt-NEW-BASE): the PGN, the --summary
#       JSON, the match log and the two engines' bench signatures
#
# A stopped SPRT (Ctrl-C, a kill) resumes from its match journal when the
# same command is run again; at fixed nodes -c may change on resume.
#
# Openings: data/openings/eco-openings.epd (3,017 named ECO positions) in a
# seeded random order, each played with both colours; resign and draw
# adjudication as in fishtest-style testing.
set -euo pipefail
cd "$(dirname "$0")/.."

nodes=20000
tc=""
bounds="elo0=0 elo1=5"
games=20000
concurrency=1
seed=1
dir=""
while getopts "n:t:b:g:c:s:d:" opt; do
    case $opt in
        n) nodes=$OPTARG ;;
        t) tc=$OPTARG ;;
        b) bounds=$OPTARG ;;
        g) games=$OPTARG ;;
        c) concurrency=$OPTARG ;;
        s) seed=$OPTARG ;;
        d) dir=$OPTARG ;;
        *) sed -n '2,27p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] && [ $# -le 2 ] || { sed -n '2,27p' "$0"; exit 2; }
new=$(git rev-parse --short "$1^{commit}")
base=$(git rev-parse --short "${2:-$1^}^{commit}")
dir=${dir:-runs/sprt-$new-$base}
mkdir -p "$dir/bin"
dir=$(cd "$dir" && pwd)

build=$(mktemp -d /tmp/sprt-build.XXXXXX)
trap 'for r in "$new" "$base"; do git worktree remove --force "$build/$r" >/dev/null 2>&1 || true; done; rm -rf "$build"' EXIT
for rev in "$new" "$base"; do
    if [ ! -x "$dir/bin/engine-$rev" ]; then
        git worktree add --detach -q "$build/$rev" "$rev"
        (cd "$build/$rev" && CARGO_TARGET_DIR="$build/target-$rev" cargo build --release -q -p engine)
        cp "$build/target-$rev/release/engine" "$dir/bin/engine-$rev"
    fi
    "$dir/bin/engine-$rev" bench 2>/dev/null | tail -1 | cut -d' ' -f1 >"$dir/bench-$rev.txt"
done

if [ -n "$tc" ]; then limit=(--tc "$tc"); else limit=(--nodes "$nodes"); fi
read -r -a sprt <<<"$bounds"
echo "SPRT $new (bench $(cat "$dir/bench-$new.txt")) against $base (bench $(cat "$dir/bench-$base.txt")): ${limit[*]}, $bounds, log in $dir/match.log"
# The match runner is this checkout's (it journals, so a stopped SPRT
# resumes); both players are the revisions' programs.
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p engine
"$target/release/engine" match \
    --engine-a "$dir/bin/engine-$new" --name-a "engine-$new" \
    --engine-b "$dir/bin/engine-$base" --name-b "engine-$base" \
    --openings data/openings/eco-openings.epd --openings-order random --seed "$seed" \
    "${limit[@]}" --hash 16 --concurrency "$concurrency" --games "$games" \
    --resign-score 1000 --resign-moves 3 --draw-score 10 --draw-moves 8 --draw-after 80 \
    --sprt "${sprt[@]}" alpha=0.05 beta=0.05 \
    --pgn "$dir/games.pgn" --summary "$dir/summary.json" --event "sprt $new $base" \
    >"$dir/match.log" 2>&1 || { tail -5 "$dir/match.log" >&2; exit 1; }
tail -8 "$dir/match.log"
