#!/usr/bin/env bash
# The toolchain end to end, on the bundled data:
#
#   pgnselect -> labeler -> tuner -> params.rs -> rebuilt engine -> makebook
#   -> engine match (tuned vs starting weights) -> report
#
# Every output goes to a new run folder (runs/<timestamp>/ by default); nothing
# in the source tree is changed unless --install is given (then the tuned
# params.rs replaces engine/src/eval/params.rs). A failed step stops the
# pipeline with a message and keeps what the earlier steps produced.
#
# Default sizes finish in about 10 minutes on 2 cores. Scale up with the
# options below, e.g.:
#   scripts/pipeline.sh --positions 20000 --games 400 --epochs 2000 \
#       --pgn ../shared/data/pgn/Carlsen.pgn --labeled ../shared/data/labeled/masters-quiet-labeled.epd
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

usage() {
    cat <<'EOF'
Usage: scripts/pipeline.sh [options]

  --run-dir DIR       run folder (default runs/<UTC timestamp>)
  --pgn FILE          game collection to sample (repeatable; default data/pgn/masters-4050.pgn.gz)
  --annotated FILE    hand-annotated book source (default data/book/arasan-basic.pgn.gz)
  --labeled FILE      extra positions already labeled with game results, added to the
                      tuner's training data (repeatable; default data/labeled/masters-quiet-20k.epd;
                      --labeled none for self-play labels only)
  --positions N       positions to label by self-play (default 2000)
  --label-nodes N     nodes per move in the labeling games (default 3000)
  --epochs N          tuner epochs at most (default 1000; early stopping on validation loss)
  --games N           match games, tuned vs starting weights (default 200)
  --match-nodes N     nodes per move in the match (default 8000)
  --threads N         threads for every step (default: all cores)
  --seed N            seed for sampling, tuning and the match (default 1)
  --init FILE         start tuning from this params file and match against it (default: the
                      compiled weights; data/handset.params shows the gain over hand-set weights)
  --install           also copy the tuned params.rs into engine/src/eval/params.rs
  -h, --help          this text
EOF
}

RUN_DIR=""
PGNS=()
ANNOTATED=data/book/arasan-basic.pgn.gz
LABELED=()
POSITIONS=2000
LABEL_NODES=3000
EPOCHS=1000
GAMES=200
MATCH_NODES=8000
THREADS=$(nproc)
SEED=1
INSTALL=0
INIT=""
while [ $# -gt 0 ]; do
    case "$1" in
        --run-dir) RUN_DIR=$2; shift 2 ;;
        --pgn) PGNS+=("$2"); shift 2 ;;
        --annotated) ANNOTATED=$2; shift 2 ;;
        --labeled) LABELED+=("$2"); shift 2 ;;
        --positions) POSITIONS=$2; shift 2 ;;
        --label-nodes) LABEL_NODES=$2; shift 2 ;;
        --epochs) EPOCHS=$2; shift 2 ;;
        --games) GAMES=$2; shift 2 ;;
        --match-nodes) MATCH_NODES=$2; shift 2 ;;
        --threads) THREADS=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        --install) INSTALL=1; shift ;;
        --init) INIT=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "pipeline: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ ${#PGNS[@]} -gt 0 ] || PGNS=(data/pgn/masters-4050.pgn.gz)
[ ${#LABELED[@]} -gt 0 ] || LABELED=(data/labeled/masters-quiet-20k.epd)
[ "${LABELED[*]}" = none ] && LABELED=()
RUN_DIR=${RUN_DIR:-runs/$(date -u +%Y%m%d-%H%M%S)}
if [ -e "$RUN_DIR" ]; then
    echo "pipeline: $RUN_DIR already exists; choose another --run-dir (nothing is overwritten)" >&2
    exit 2
fi
mkdir -p "$RUN_DIR"
RUN_DIR=$(cd "$RUN_DIR" && pwd)
LOG="$RUN_DIR/pipeline.log"
BIN="$ROOT/target/release"
declare -A SECONDS_OF

step() { # name, command...
    local name=$1; shift
    echo "== $name" | tee -a "$LOG"
    local start=$(date +%s.%N)
    if ! "$@" >>"$LOG" 2>&1; then
        echo "pipeline: step '$name' failed; see $LOG (earlier outputs are kept in $RUN_DIR)" >&2
        tail -n 20 "$LOG" >&2
        exit 1
    fi
    SECONDS_OF[$name]=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')
    printf '   done in %.1fs\n' "${SECONDS_OF[$name]}" | tee -a "$LOG"
}

# A figure of a step's JSON summary (--summary FILE): json STEP JQ-FILTER.
json() { jq -r "$2" "$RUN_DIR/$1.json"; }
command -v jq >/dev/null || { echo "pipeline: jq is needed to read the steps' JSON summaries (apt install jq)" >&2; exit 2; }

echo "pipeline: run folder $RUN_DIR (log: $LOG)"
step build cargo build --release --quiet

# 1. Sample positions (without results: the labeler supplies them).
step pgnselect "$BIN/pgnselect" --no-result --seed "$SEED" --threads "$THREADS" \
    -o "$RUN_DIR/selected.epd" --summary "$RUN_DIR/pgnselect.json" "${PGNS[@]}"
SELECTED=$(json pgnselect .counts.positions_written)
# Keep an evenly spread, deterministic subset of the requested size.
awk -v n="$SELECTED" -v k="$POSITIONS" 'BEGIN { step = n / k; next_pick = 0 }
    NR - 1 >= next_pick && taken < k { print; taken++; next_pick += step }' \
    "$RUN_DIR/selected.epd" >"$RUN_DIR/to-label.epd"

# 2. Label them by self-play.
step labeler "$BIN/labeler" --nodes "$LABEL_NODES" --threads "$THREADS" --no-progress \
    -o "$RUN_DIR/labeled.epd" --summary "$RUN_DIR/labeler.json" "$RUN_DIR/to-label.epd"

# 3. Tune, starting from the compiled weights.
mkdir -p "$RUN_DIR/engine-src"
INIT_ARGS=() START_ARGS=()
if [ -n "$INIT" ]; then
    INIT_ARGS=(-i "$INIT")
    START_ARGS=(--params-b "$INIT")
fi
step tuner "$BIN/tuner" --threads "$THREADS" --seed "$SEED" -n "$EPOCHS" "${INIT_ARGS[@]}" \
    -x "$RUN_DIR/tuned.params" -f "$RUN_DIR/params.rs" --log "$RUN_DIR/tuner.csv" \
    --summary "$RUN_DIR/tuner.json" \
    "$RUN_DIR/labeled.epd" "${LABELED[@]}"
if [ -n "$INIT" ]; then cp "$INIT" "$RUN_DIR/start.params"; else "$BIN/engine" params >"$RUN_DIR/start.params"; fi

# 4. Rebuild the engine with the generated params.rs (a copy of the engine
#    crate, so the source tree is untouched) and check that it carries the
#    tuned weights.
rebuild() {
    local ws="$RUN_DIR/engine-src"
    cp -r "$ROOT/engine" "$ws/engine"
    cp "$ROOT/Cargo.lock" "$ws/"
    sed 's/^members = .*/members = ["engine"]/' "$ROOT/Cargo.toml" >"$ws/Cargo.toml"
    cp "$RUN_DIR/params.rs" "$ws/engine/src/eval/params.rs"
    CARGO_TARGET_DIR="$ROOT/target/pipeline-engine" cargo build --release --quiet \
        --manifest-path "$ws/Cargo.toml" --bin engine
    cp "$ROOT/target/pipeline-engine/release/engine" "$RUN_DIR/engine-tuned"
    "$RUN_DIR/engine-tuned" params | grep -v '^#' >"$RUN_DIR/engine-tuned.params"
    grep -v '^#' "$RUN_DIR/tuned.params" | cmp - "$RUN_DIR/engine-tuned.params"
}
step rebuild rebuild
if [ "$INSTALL" = 1 ]; then
    cp "$RUN_DIR/params.rs" engine/src/eval/params.rs
    echo "installed the tuned params.rs into engine/src/eval/params.rs" | tee -a "$LOG"
fi

# 5. Opening book from the annotated file plus the games.
step makebook "$BIN/makebook" --threads "$THREADS" -o "$RUN_DIR/book.bin" \
    --summary "$RUN_DIR/makebook.json" "$ANNOTATED" "${PGNS[@]}"
"$BIN/makebook" stats "$RUN_DIR/book.bin" >"$RUN_DIR/book-stats.txt"

# 6. Does the tuned engine play better? Tuned weights against the starting
#    weights, each opening of the new book played with both colours.
step match "$BIN/engine" match --params-a "$RUN_DIR/tuned.params" --name-a tuned \
"${START_ARGS[@]}" --name-b start --games "$GAMES" --nodes "$MATCH_NODES" --concurrency "$THREADS" \
    --openings "$RUN_DIR/book.bin" --seed "$SEED" --pgn "$RUN_DIR/match.pgn" \
    --summary "$RUN_DIR/match.json"
MATCH_RESULT=$(json match 'def r: if type == "number" then . * 10 | round / 10 else "n/a" end;
    "  +\(.counts.wins)=\(.counts.draws)-\(.counts.losses) (\(.counts.games) games), score \(.figures.score * 100 | r)%, Elo \(.figures.elo | r) [\(.figures.elo_low | r), \(.figures.elo_high | r)], LOS \(.figures.los * 100 | r)%"')

# 7. Report, from the steps' JSON summaries.
K=$(json tuner '.figures.k * 10000 | round / 10000')
LOSSES=$(json tuner 'def r: . * 1e7 | round / 1e7;
    "  training loss    \(.figures.training_loss_start | r) -> \(.figures.training_loss_end | r)",
    (select(.figures.validation_loss_start) | "  validation loss  \(.figures.validation_loss_start | r) -> \(.figures.validation_loss_end | r)")')
BEST_EPOCH=$(json tuner .counts.best_epoch)
BEST="best epoch $BEST_EPOCH of $(json tuner .counts.epochs)"
ENTRIES=$(json makebook '"\(.counts.entries) entries, \(.counts.positions) positions (\(.counts.annotated_entries) from the annotated file)"')
{
    echo "# Pipeline report ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
    echo
    echo "run folder: $RUN_DIR"
    echo "positions: $SELECTED sampled by pgnselect, $(json labeler .counts.labeled) labeled by self-play ($LABEL_NODES nodes/move)"
    echo "extra labeled data: ${LABELED[*]:-none}"
    echo "K: $K"
    echo "losses (start -> tuned):"
    echo "$LOSSES"
    echo "  $BEST"
    if [[ $BEST_EPOCH == 0 ]]; then
        echo "  (no epoch beat the starting weights on the validation positions, so early stopping"
        echo "   kept them and the match below pits equal weights; --init data/handset.params starts"
        echo "   from hand-set weights and shows the gain)"
    fi
    echo "book: $ENTRIES"
    echo "match (tuned vs start, $GAMES games, $MATCH_NODES nodes/move):"
    echo "$MATCH_RESULT"
    echo
    echo "time per step (s):"
    for s in build pgnselect labeler tuner rebuild makebook match; do
        printf '  %-10s %8.1f\n' "$s" "${SECONDS_OF[$s]:-0}"
    done
} | tee "$RUN_DIR/report.md"
