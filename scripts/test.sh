#!/usr/bin/env bash
# The test command: installs what the tests need, then runs every test of the
# workspace in release mode (perft and data tests are fast there).
set -euo pipefail
cd "$(dirname "$0")/.."

# python-chess is the independent reader our formats are checked against.
if ! python3 -c "import chess" 2>/dev/null; then
    python3 -m pip install --quiet --disable-pip-version-check chess
fi

# Debian peers used by comparison tests (skipped by those tests when absent):
# polyglot and the gnuchess Polyglot book; jq, with which the pipeline smoke run
# reads the tools' JSON summaries. Installed when we can (root + apt).
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    missing=()
    [ -x /usr/games/polyglot ] || missing+=(polyglot)
    dpkg -s gnuchess-book >/dev/null 2>&1 || missing+=(gnuchess-book)
    command -v jq >/dev/null || missing+=(jq)
    if [ ${#missing[@]} -gt 0 ]; then
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") \
            >/dev/null 2>&1 || echo "note: could not install ${missing[*]}; tests that need them are skipped"
    fi
fi

cargo test --release --workspace "$@"

# The README's first command, end to end at toy sizes (about 15 s): every step
# runs and the report is made from the tools' summaries.
if [ $# -eq 0 ]; then
    run=$(mktemp -d)
    trap 'rm -rf "$run"' EXIT
    scripts/pipeline.sh --run-dir "$run/pipeline" --selfplay-games 6 --validation-games 2 \
        --selfplay-nodes 300 --epochs 3 --games 2 --match-nodes 300 --shipped-games 2 >/dev/null
    grep -q '^| 1 | start | ' "$run/pipeline/report.md" || {
        echo "pipeline smoke run: no generation row in its report" >&2
        exit 1
    }
    echo "pipeline smoke run: ok"
fi

# The profile-guided build (scripts/build-pgo.sh, about 4 minutes): it must
# search exactly as the plain build does (the script compares the bench
# signatures and fails otherwise). Skipped where no llvm-profdata can be had
# (the toolchain's llvm-tools component is fetched from the Rust
# distribution server, which a registry-only network may not reach).
if [ $# -eq 0 ]; then
    pgo_status=0
    pgo_log=$(scripts/build-pgo.sh -d 9 -o "$run/pgo" 2>&1) || pgo_status=$?
    if [ "$pgo_status" = 0 ]; then
        echo "PGO build: ok ($(tail -1 <<<"$pgo_log"))"
    elif [ "$pgo_status" = 3 ]; then
        echo "PGO build: skipped ($(tail -1 <<<"$pgo_log"))"
    else
        echo "$pgo_log" >&2
        echo "PGO build: failed" >&2
        exit 1
    fi
fi
