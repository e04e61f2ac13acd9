#!/usr/bin/env bash
# Which training data to make? Tunes the hand-set weights (data/handset.params)
# on the same number N of positions from
#   selfplay     labeler selfplay (every quiet position of engine games,
#                result + search score; tuned with --lambda 0.5 and 1)
#   pgn          pgnselect on master games (game results only)
#   both         N/2 of each (--lambda 0.5)
# then reports, for each tuned set of weights, the loss on a validation file
# that none of them trained on (self-play and master positions from games
# no training set saw), and a node-limited match against the hand-set
# weights with the Elo and its 95% interval. Prints a Markdown table.
#
# usage: scripts/datagen-quality.sh [-n N] [-g GAMES] [-d DIR] [-p PGN_DIR] [-t THREADS]
#   N        positions per training set (default 200000)
#   GAMES    games of each match (default 400)
#   DIR      work folder (default runs/quality-<timestamp>); rerunning with the
#            same DIR reuses the data already made (self-play resumes)
#   PGN_DIR  master games (default ../shared/data/pgn); Stefanova.pgn is held
#            out for validation, the other files are sampled for training
# Environment: NODES (self-play, default 5000), MATCH_NODES (default 8000),
#   EPOCHS (default 1000), SEED (default 1), BIN (folder of the binaries;
#   default: built with cargo into target/release), PLAY_RESULTS_ONLY=1 (also
#   match the self-play weights tuned on results only), SELFPLAY_DESC (how
#   the self-play files were made, when DIR already holds them).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# Where cargo puts the binaries (CARGO_TARGET_DIR is honoured, relative to the workspace).
TARGET_DIR=$(realpath -m "${CARGO_TARGET_DIR:-target}")

N=200000
GAMES=400
DIR=""
PGN_DIR=../shared/data/pgn
THREADS=$(nproc)
while getopts "n:g:d:p:t:" opt; do
    case $opt in
        n) N=$OPTARG ;;
        g) GAMES=$OPTARG ;;
        d) DIR=$OPTARG ;;
        p) PGN_DIR=$OPTARG ;;
        t) THREADS=$OPTARG ;;
        *) sed -n '2,26p' "$0"; exit 2 ;;
    esac
done
NODES=${NODES:-5000}
MATCH_NODES=${MATCH_NODES:-8000}
EPOCHS=${EPOCHS:-1000}
SEED=${SEED:-1}
HELD_OUT=Stefanova.pgn
VALIDATION=$((N / 10))
DIR=${DIR:-runs/quality-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
LOG="$DIR/log.txt"
if [ -z "${BIN:-}" ]; then
    cargo build --release --quiet
    BIN="$TARGET_DIR/release"
fi
log() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$LOG"; }

# A deterministic shuffle (awk's srand is seeded; sort by the random key).
# take N FILE...: the first N lines of the shuffled files (the whole shuffle is
# read, so that no stage of the pipe dies of SIGPIPE under pipefail).
take() { local n=$1; shift; shuffle "$@" | awk -v n="$n" 'NR <= n'; }
shuffle() { awk -v seed="$SEED" 'BEGIN { srand(seed) } { printf "%.12f\t%s\n", rand(), $0 }' "$@" \
    | sort -t $'\t' -k1,1 | cut -f2-; }

# selfplay OUT SEED POSITIONS: at least POSITIONS self-play positions, from
# consecutive --first-game ranges (each part resumes when rerun).
selfplay() {
    local out=$1 seed=$2 want=$3 first=0 part=0 games have=0
    games=$((want / 85 + 1))
    rm -f "$out"
    while [ "$have" -lt "$want" ]; do
        "$BIN/labeler" selfplay -o "$out.part$part" --first-game "$first" --games "$games" \
            --seed "$seed" --nodes "$NODES" --threads "$THREADS" --no-progress \
            --summary "$out.part$part.json" 2>>"$LOG"
        cat "$out.part$part" >>"$out"
        have=$(wc -l <"$out")
        first=$((first + games))
        games=$(((want - have) / 60 + 10))
        part=$((part + 1))
    done
}

if [ ! -s "$DIR/selfplay-train.epd" ]; then
    log "self-play training data ($N positions, $NODES nodes/move)"
    selfplay "$DIR/selfplay-all.epd" "$SEED" "$N"
    head -n "$N" "$DIR/selfplay-all.epd" >"$DIR/selfplay-train.epd"
fi
if [ ! -s "$DIR/selfplay-validation.epd" ]; then
    log "self-play validation data ($VALIDATION positions, other games)"
    selfplay "$DIR/selfplay-val-all.epd" "$((SEED + 1000))" "$VALIDATION"
    head -n "$VALIDATION" "$DIR/selfplay-val-all.epd" >"$DIR/selfplay-validation.epd"
fi
if [ ! -s "$DIR/pgn-train.epd" ]; then
    log "master-game training data ($N positions, $HELD_OUT held out)"
    train_pgns=()
    for f in "$PGN_DIR"/*.pgn; do [ "$(basename "$f")" = "$HELD_OUT" ] || train_pgns+=("$f"); done
    "$BIN/pgnselect" --quiet --min-gap 1 --max-gap 6 --seed "$SEED" --threads "$THREADS" --no-progress \
        -o "$DIR/pgn-all.epd" "${train_pgns[@]}" 2>>"$LOG"
    take "$N" "$DIR/pgn-all.epd" >"$DIR/pgn-train.epd"
    [ "$(wc -l <"$DIR/pgn-train.epd")" -eq "$N" ] || { log "not enough master positions"; exit 1; }
    "$BIN/pgnselect" --quiet --min-gap 1 --max-gap 6 --seed "$SEED" --no-progress \
        -o "$DIR/pgn-val-all.epd" "$PGN_DIR/$HELD_OUT" 2>>"$LOG"
    take "$VALIDATION" "$DIR/pgn-val-all.epd" >"$DIR/pgn-validation.epd"
fi
if [ ! -s "$DIR/both-train.epd" ]; then
    { head -n "$((N / 2))" "$DIR/selfplay-train.epd"; head -n "$((N - N / 2))" "$DIR/pgn-train.epd"; } \
        | shuffle >"$DIR/both-train.epd"
fi
# The validation file: results only (search scores removed), half self-play,
# half master games, from games no training set saw.
sed 's/ ce -\?[0-9]*;//' "$DIR/selfplay-validation.epd" "$DIR/pgn-validation.epd" >"$DIR/validation.epd"
[ -s "$DIR/book.bin" ] || "$BIN/makebook" -o "$DIR/book.bin" data/book/arasan-basic.pgn.gz \
    data/pgn/masters-4050.pgn.gz 2>>"$LOG" >/dev/null

# Validation loss of a params file: K fitted on the validation file itself.
validation_loss() {
    "$BIN/tuner" -n 0 -i "$1" --threads "$THREADS" --validation-file "$DIR/validation.epd" \
        "$DIR/validation.epd" 2>>"$LOG" | sed -n 's/^validation loss //p'
}

rows=()
row_for() { # name, params, data description [note instead of a match]
    local name=$1 params=$2 what=$3 note=${4:-} loss figures
    loss=$(validation_loss "$params")
    if [ "$params" = data/handset.params ]; then
        rows+=("| $name | $what | $loss | (reference) |")
        return
    fi
    if [ -n "$note" ]; then
        rows+=("| $name | $what | $loss | $note |")
        return
    fi
    if [ ! -s "$DIR/$name-match.json" ]; then
        log "match $name vs hand-set ($GAMES games, $MATCH_NODES nodes/move)"
        "$BIN/engine" match --params-a "$params" --name-a "$name" --params-b data/handset.params \
            --name-b handset --games "$GAMES" --nodes "$MATCH_NODES" --concurrency "$THREADS" \
            --openings "$DIR/book.bin" --seed "$SEED" --summary "$DIR/$name-match.json" \
            >"$DIR/$name-match.txt" 2>>"$LOG"
    fi
    figures=$(python3 - "$DIR/$name-match.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
c, f = s["counts"], s["figures"]
print("+%d =%d -%d, Elo %+.1f [%+.1f, %+.1f]" % (c["wins"], c["draws"], c["losses"],
      f["elo"], f["elo_low"], f["elo_high"]))
PY
)
    rows+=("| $name | $what | $loss | $figures |")
}

tune() { # name, lambda, training file
    local name=$1 lambda=$2 data=$3
    if [ ! -s "$DIR/$name.params" ]; then
        log "tuning $name (lambda $lambda) on $(wc -l <"$data") positions"
        "$BIN/tuner" -i data/handset.params -n "$EPOCHS" --lambda "$lambda" --seed "$SEED" \
            --threads "$THREADS" -x "$DIR/$name.params" -f "$DIR/$name.rs" --log "$DIR/$name.csv" \
            "$data" >>"$LOG" 2>&1
    fi
}

tune selfplay "0.5" "$DIR/selfplay-train.epd"
tune selfplay-results "1" "$DIR/selfplay-train.epd"
tune pgn "1" "$DIR/pgn-train.epd"
tune both "0.5" "$DIR/both-train.epd"

row_for handset data/handset.params "none (hand-set weights)"
row_for selfplay "$DIR/selfplay.params" "$N self-play positions, lambda 0.5"
if [ "${PLAY_RESULTS_ONLY:-0}" = 1 ]; then
    row_for selfplay-results "$DIR/selfplay-results.params" "$N self-play positions, results only"
else
    row_for selfplay-results "$DIR/selfplay-results.params" "$N self-play positions, results only" \
        "match not played (PLAY_RESULTS_ONLY=1)"
fi
row_for pgn "$DIR/pgn.params" "$N master-game positions (results)"
row_for both "$DIR/both.params" "$((N / 2)) + $((N - N / 2)) of both, lambda 0.5"

{
    echo "Tuned from data/handset.params; validation: $(wc -l <"$DIR/validation.epd") positions (self-play"
    echo "and $HELD_OUT games) no training set saw, results only; matches: $GAMES games against the"
    echo "hand-set weights at $MATCH_NODES nodes/move, book openings with both colours; Elo with its 95%"
    echo "interval (pentanomial). Self-play data: ${SELFPLAY_DESC:-$NODES nodes/move, played by the compiled weights}."
    echo
    echo "| weights | training data | validation loss | vs hand-set (W D L, Elo) |"
    echo "|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
} | tee "$DIR/table.md"
