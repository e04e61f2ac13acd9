#!/usr/bin/env bash
# The toolchain end to end:
#
#   build -> makebook -> [ labeler selfplay -> tuner -> engine match ] x generations
#   -> engine rebuilt with the winner -> match against the shipped weights -> report
#
# Each generation makes self-play data with the current champion's weights
# (every quiet position of every game, labeled with the game's result and the
# search score), tunes from the champion on it (validation on other self-play
# games, which the tuner never trains on), and plays the tuned weights against
# the champion; the tuned weights become the champion only when that match
# says they are better (LOS >= 95%, or an SPRT accepting H1 with --sprt).
# By default tuning starts from the hand-set weights (data/handset.params):
# the compiled weights are tuned on far more data than a 15-minute run makes,
# so a run from them could not show a gain.
#
# Every step writes a JSON summary (--summary FILE), and the report is made
# from those (read with jq), never from the tools' printed prose. Every
# output goes to a new run folder (runs/<timestamp>/ by default); nothing in
# the source tree is changed unless --install is given (then the winner's
# params.rs replaces engine/src/eval/params.rs). A failed step stops the
# pipeline with a message and keeps what the earlier steps produced. Needs jq
# (to read the JSON summaries).
#
# Default sizes finish in about 15 minutes on 2 otherwise idle cores, the first
# build included (the report gives each step's wall and CPU time). Scale up
# with the options below, e.g.:
#   scripts/pipeline.sh --selfplay-games 5000 --games 400 --generations 3
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# Where cargo puts the binaries (CARGO_TARGET_DIR is honoured, relative to the workspace).
TARGET_DIR=$(realpath -m "${CARGO_TARGET_DIR:-target}")

usage() {
    cat <<'USAGE'
Usage: scripts/pipeline.sh [options]

  --run-dir DIR         run folder (default runs/<UTC timestamp>)
  --init FILE           weights tuning starts from and the first generation plays with
                        (default data/handset.params, the hand-set weights; "compiled" for
                        the weights compiled into the engine)
  --generations G       datagen -> tune -> match rounds; each round's data is made by the
                        previous round's winner (default 1)
  --selfplay-games N    self-play games per generation (default 1300, about 110,000
                        positions at ~85 per game)
  --validation-games N  further self-play games whose positions are the tuner's validation
                        set (default 100; other seeds, never trained on)
  --selfplay-nodes N    nodes per move in the self-play games (default 2500)
  --labeled FILE        extra labeled positions added to every generation's training data
                        (repeatable; default none: adding data/labeled/masters-quiet-20k.epd
                        left the validation loss where it was, 0.026402 against 0.026396)
  --lambda L            tuner target blend: L x result + (1 - L) x search score (default 0.5;
                        with 1, results only, the same data tuned weights 87 Elo weaker than
                        the start)
  --epochs N            tuner epochs at most (default 1000; early stopping on validation loss)
  --games N             games of each generation's match (default 400)
  --match-nodes N       nodes per move in the matches (default 5000)
  --sprt                accept a generation by SPRT (elo0=0 elo1=10) instead of LOS >= 95%
  --shipped-games N     games of the final match, winner against the compiled weights
                        (default 100; 0 skips it)
  --pgn FILE            games for the match book (repeatable; default data/pgn/masters-4050.pgn.gz)
  --annotated FILE      hand-annotated book source (default data/book/arasan-basic.pgn.gz)
  --threads N           threads for every step (default: all cores)
  --seed N              seed of self-play, tuning and matches (default 1)
  --install             also copy the winner's params.rs into engine/src/eval/params.rs
  -h, --help            this text
USAGE
}

RUN_DIR=""
INIT=data/handset.params
GENERATIONS=1
SELFPLAY_GAMES=1300
VALIDATION_GAMES=100
SELFPLAY_NODES=2500
LABELED=()
LAMBDA=0.5
EPOCHS=1000
GAMES=400
MATCH_NODES=5000
SPRT=0
SHIPPED_GAMES=100
PGNS=()
ANNOTATED=data/book/arasan-basic.pgn.gz
THREADS=$(nproc)
SEED=1
INSTALL=0
while [ $# -gt 0 ]; do
    case "$1" in
        --run-dir) RUN_DIR=$2; shift 2 ;;
        --init) INIT=$2; shift 2 ;;
        --generations) GENERATIONS=$2; shift 2 ;;
        --selfplay-games) SELFPLAY_GAMES=$2; shift 2 ;;
        --validation-games) VALIDATION_GAMES=$2; shift 2 ;;
        --selfplay-nodes) SELFPLAY_NODES=$2; shift 2 ;;
        --labeled) LABELED+=("$2"); shift 2 ;;
        --lambda) LAMBDA=$2; shift 2 ;;
        --epochs) EPOCHS=$2; shift 2 ;;
        --games) GAMES=$2; shift 2 ;;
        --match-nodes) MATCH_NODES=$2; shift 2 ;;
        --sprt) SPRT=1; shift ;;
        --shipped-games) SHIPPED_GAMES=$2; shift 2 ;;
        --pgn) PGNS+=("$2"); shift 2 ;;
        --annotated) ANNOTATED=$2; shift 2 ;;
        --threads) THREADS=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        --install) INSTALL=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "pipeline: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ ${#PGNS[@]} -gt 0 ] || PGNS=(data/pgn/masters-4050.pgn.gz)
for n in GENERATIONS SELFPLAY_GAMES VALIDATION_GAMES SELFPLAY_NODES EPOCHS GAMES MATCH_NODES THREADS; do
    if ! [[ ${!n} =~ ^[1-9][0-9]*$ ]]; then
        echo "pipeline: --$(tr 'A-Z_' 'a-z-' <<<"$n") must be a positive number, not '${!n}'" >&2
        exit 2
    fi
done
if ! [[ $SHIPPED_GAMES =~ ^[0-9]+$ ]]; then
    echo "pipeline: --shipped-games must be a number" >&2
    exit 2
fi
if [ "$INIT" != compiled ] && [ ! -f "$INIT" ]; then
    echo "pipeline: --init $INIT: no such file" >&2
    exit 2
fi
for f in "${LABELED[@]}" "${PGNS[@]}" "$ANNOTATED"; do
    [ -f "$f" ] || { echo "pipeline: $f: no such file" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "pipeline: jq is needed to read the tools' JSON summaries (apt install jq)" >&2; exit 2; }
RUN_DIR=${RUN_DIR:-runs/$(date -u +%Y%m%d-%H%M%S)}
if [ -e "$RUN_DIR" ]; then
    echo "pipeline: $RUN_DIR already exists; choose another --run-dir (nothing is overwritten)" >&2
    exit 2
fi
mkdir -p "$RUN_DIR"
RUN_DIR=$(cd "$RUN_DIR" && pwd)
LOG="$RUN_DIR/pipeline.log"
BIN="$TARGET_DIR/release"
STEPS=()
declare -A WALL CPU

# CHILD_CPU: CPU seconds (user + system) of all finished child processes so
# far (bash's `times`, run in this shell: a subshell would count its own).
child_cpu() {
    times >"$RUN_DIR/.times"
    CHILD_CPU=$(tail -n 1 "$RUN_DIR/.times" | awk '{ for (i = 1; i <= 2; i++) {
        split($i, p, "m"); s += p[1] * 60 + p[2] } } END { print s }')
}

# step NAME COMMAND...: runs it with its output in the log, records its wall
# and CPU time; a failure stops the pipeline.
step() {
    local name=$1 start cpu
    shift
    echo "== $name" | tee -a "$LOG"
    start=$(date +%s.%N)
    child_cpu
    cpu=$CHILD_CPU
    if ! "$@" >>"$LOG" 2>&1; then
        echo "pipeline: step '$name' failed; see $LOG (earlier outputs are kept in $RUN_DIR)" >&2
        tail -n 20 "$LOG" >&2
        exit 1
    fi
    STEPS+=("$name")
    WALL[$name]=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')
    child_cpu
    CPU[$name]=$(awk -v a="$CHILD_CPU" -v b="$cpu" 'BEGIN { print a - b }')
    printf '   done in %.1f s (%.1f CPU-s)\n' "${WALL[$name]}" "${CPU[$name]}" | tee -a "$LOG"
}

# json FILE KEY...: the values at KEY (dotted paths, e.g. counts.games) of a
# JSON summary, one per line ("-" for a null); a missing key is an error.
json() {
    local file=$1
    shift
    jq -r --arg file "$file" '
        def at($path): reduce ($path | split("."))[] as $k (.;
            if type == "object" and has($k) then .[$k]
            else error("pipeline: \($file) has no \($path)") end);
        . as $summary | $ARGS.positional[] | . as $path | $summary | at($path)
        | if . == null then "-" else . end' "$file" --args "$@"
}

# match NAME PARAMS_A PARAMS_B GAMES [extra engine match options]: A ("tuned")
# against B ("reference"; "compiled" for the compiled weights); the output
# goes to RUN_DIR/NAME.txt and the summary to RUN_DIR/NAME.json.
match() {
    local name=$1 a=$2 b=$3 games=$4
    shift 4
    local b_args=()
    [ "$b" = compiled ] || b_args=(--params-b "$b")
    "$BIN/engine" match --params-a "$a" --name-a tuned "${b_args[@]}" --name-b reference \
        --games "$games" --nodes "$MATCH_NODES" --concurrency "$THREADS" \
        --openings "$RUN_DIR/book.bin" --seed "$SEED" --pgn "$RUN_DIR/$name.pgn" \
        --summary "$RUN_DIR/$name.json" "$@" >"$RUN_DIR/$name.txt"
}

# elo VALUE: an Elo figure with its sign ("-" from json, an infinite bound
# of too few games, prints as n/a).
elo() {
    if [ "$1" = - ]; then printf 'n/a'; else printf '%+.1f' "$1"; fi
}

# match_row NAME: "+W =D -L | elo [low, high] | LOS%" of a match summary.
match_row() {
    local w d l elo low high los figures
    figures=$(json "$RUN_DIR/$1.json" counts.wins counts.draws counts.losses figures.elo \
        figures.elo_low figures.elo_high figures.los)
    { read -r w; read -r d; read -r l; read -r elo; read -r low; read -r high; read -r los; } \
        <<<"$figures"
    printf '+%s =%s -%s | %s [%s, %s] | %.1f%%' "$w" "$d" "$l" "$(elo "$elo")" "$(elo "$low")" \
        "$(elo "$high")" "$(awk -v p="$los" 'BEGIN { print 100 * p }')"
}

echo "pipeline: run folder $RUN_DIR (log: $LOG)"
step build cargo build --release --quiet

# Start weights as a params file (the compiled ones when asked for).
if [ "$INIT" = compiled ]; then
    "$BIN/engine" params >"$RUN_DIR/start.params"
else
    cp "$INIT" "$RUN_DIR/start.params"
fi

# Openings of every match: an opening book from the annotated file plus the
# games, each line played with both colours.
step makebook "$BIN/makebook" --threads "$THREADS" -o "$RUN_DIR/book.bin" \
    --summary "$RUN_DIR/makebook.json" "$ANNOTATED" "${PGNS[@]}"
BOOK=$(json "$RUN_DIR/makebook.json" counts.entries counts.positions counts.annotated_entries \
    | paste -sd' ' | awk '{ printf "%s entries, %s positions (%s from the annotated file)", $1, $2, $3 }')

CHAMPION="$RUN_DIR/start.params"
CHAMPION_RS=""
CHAMPION_NAME="start"
ROWS=()
for ((g = 1; g <= GENERATIONS; g++)); do
    dir="$RUN_DIR/gen$g"
    mkdir -p "$dir"
    # 1. Self-play data made by the champion: training games, and validation
    #    games from another seed.
    selfplay=("$BIN/labeler" selfplay --params "$CHAMPION" --nodes "$SELFPLAY_NODES"
        --threads "$THREADS" --no-progress)
    step "selfplay$g" "${selfplay[@]}" --games "$SELFPLAY_GAMES" --seed "$((SEED + g - 1))" \
        -o "$dir/selfplay.epd" --summary "$dir/selfplay.json"
    step "validation$g" "${selfplay[@]}" --games "$VALIDATION_GAMES" \
        --seed "$((SEED + g - 1 + 1000000))" -o "$dir/validation.epd" --summary "$dir/validation.json"
    figures=$(json "$dir/selfplay.json" counts.positions_kept figures.positions_per_game \
        figures.games_per_second)
    { read -r positions; read -r per_game; read -r gps; } <<<"$figures"
    val_positions=$(json "$dir/validation.json" counts.positions_kept)
    # 2. Tune from the champion.
    step "tuner$g" "$BIN/tuner" --threads "$THREADS" --seed "$SEED" -n "$EPOCHS" \
        -i "$CHAMPION" --lambda "$LAMBDA" --validation-file "$dir/validation.epd" \
        -x "$dir/tuned.params" -f "$dir/params.rs" --log "$dir/tuner.csv" --summary "$dir/tuner.json" \
        "$dir/selfplay.epd" "${LABELED[@]}"
    figures=$(json "$dir/tuner.json" figures.validation_loss_start figures.validation_loss_end \
        counts.best_epoch)
    { read -r first; read -r best; read -r best_epoch; } <<<"$figures"
    first=$(printf '%.6f' "$first") best=$(printf '%.6f' "$best")
    # 3. Tuned against the champion.
    sprt_args=()
    [ "$SPRT" = 1 ] && sprt_args=(--sprt elo0=0 elo1=10 alpha=0.05 beta=0.05)
    step "match$g" match "gen$g-match" "$dir/tuned.params" "$CHAMPION" "$GAMES" "${sprt_args[@]}"
    if [ "$SPRT" = 1 ]; then
        verdict=$(json "$RUN_DIR/gen$g-match.json" figures.sprt)
        accepted=$([ "$verdict" = "H1 accepted" ] && echo yes || echo no)
    else
        los=$(json "$RUN_DIR/gen$g-match.json" figures.los)
        accepted=$(awk -v los="$los" 'BEGIN { print (los >= 0.95) ? "yes" : "no" }')
    fi
    ROWS+=("| $g | $CHAMPION_NAME | $positions ($(printf '%.1f' "$per_game")/game, $(printf '%.2f' "$gps") games/s) | $val_positions | $first -> $best (epoch $best_epoch) | $(match_row "gen$g-match") | $accepted |")
    if [ "$accepted" = yes ]; then
        CHAMPION="$dir/tuned.params"
        CHAMPION_RS="$dir/params.rs"
        CHAMPION_NAME="gen $g"
    fi
done

# The winner compiled into the engine (a copy of its crate, so the source
# tree is untouched), checked to carry exactly the tuned weights.
rebuild() {
    local ws="$RUN_DIR/engine-src"
    mkdir -p "$ws"
    cp -r "$ROOT/engine" "$ws/engine"
    cp "$ROOT/Cargo.lock" "$ws/"
    sed 's/^members = .*/members = ["engine"]/' "$ROOT/Cargo.toml" >"$ws/Cargo.toml"
    cp "$CHAMPION_RS" "$ws/engine/src/eval/params.rs"
    CARGO_TARGET_DIR="$TARGET_DIR/pipeline-engine" cargo build --release --quiet \
        --manifest-path "$ws/Cargo.toml" --bin engine
    cp "$TARGET_DIR/pipeline-engine/release/engine" "$RUN_DIR/engine-tuned"
    "$RUN_DIR/engine-tuned" params | grep -v '^#' >"$RUN_DIR/engine-tuned.params"
    grep -v '^#' "$CHAMPION" | cmp - "$RUN_DIR/engine-tuned.params"
}
if [ -n "$CHAMPION_RS" ]; then
    step rebuild rebuild
    if [ "$INSTALL" = 1 ]; then
        cp "$CHAMPION_RS" engine/src/eval/params.rs
        echo "installed the winner's params.rs into engine/src/eval/params.rs" | tee -a "$LOG"
    fi
fi

# How the winner compares with the weights the engine ships with.
SHIPPED="skipped (--shipped-games 0)"
if [ "$SHIPPED_GAMES" -gt 0 ]; then
    step shipped match shipped "$CHAMPION" compiled "$SHIPPED_GAMES"
    SHIPPED="$(match_row shipped) ($SHIPPED_GAMES games)"
fi

# Report.
{
    echo "# Pipeline report ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
    echo
    echo "run folder: $RUN_DIR"
    echo "start weights: $INIT$([ "$INIT" = data/handset.params ] && echo ' (the hand-set weights, before any tuning)')"
    echo "self-play: $SELFPLAY_GAMES games per generation (+ $VALIDATION_GAMES for validation) at $SELFPLAY_NODES nodes/move, played by the champion"
    echo "tuner: lambda $LAMBDA (target = lambda x result + (1 - lambda) x search score), extra labeled data: ${LABELED[*]:-none};"
    echo "  validation loss on the validation games' positions (never trained on), start -> best epoch (rounded weights)"
    echo "book: $BOOK"
    echo "matches: $GAMES games at $MATCH_NODES nodes/move, tuned vs champion, book openings with both colours;"
    echo "  a generation is accepted when $([ "$SPRT" = 1 ] && echo 'its SPRT (elo0=0 elo1=10) accepts H1' || echo 'LOS >= 95%')"
    echo
    echo "| gen | data by | training positions | validation positions | validation loss | tuned vs champion | Elo (95%) | LOS | accepted |"
    echo "|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${ROWS[@]}"
    echo
    if [ -n "$CHAMPION_RS" ]; then
        echo "winner: $CHAMPION_NAME ($CHAMPION; compiled into $RUN_DIR/engine-tuned and checked)"
    else
        echo "winner: the start weights (no generation was accepted)"
    fi
    echo "winner vs the shipped (compiled) weights: $SHIPPED"
    echo
    echo "time per step: wall s, CPU s"
    for s in "${STEPS[@]}"; do
        printf '  %-12s %8.1f %8.1f\n' "$s" "${WALL[$s]}" "${CPU[$s]}"
    done
    total_wall=0 total_cpu=0
    for s in "${STEPS[@]}"; do
        total_wall=$(awk -v a="$total_wall" -v b="${WALL[$s]}" 'BEGIN { print a + b }')
        total_cpu=$(awk -v a="$total_cpu" -v b="${CPU[$s]}" 'BEGIN { print a + b }')
    done
    printf '  %-12s %8.1f %8.1f  (load average at the end: %s)\n' total "$total_wall" "$total_cpu" \
        "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)"
} | tee "$RUN_DIR/report.md"
rm -f "$RUN_DIR/.times"
