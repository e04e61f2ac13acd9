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
# polyglot and the gnuchess Polyglot book. Installed when we can (root + apt).
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    missing=()
    [ -x /usr/games/polyglot ] || missing+=(polyglot)
    dpkg -s gnuchess-book >/dev/null 2>&1 || missing+=(gnuchess-book)
    if [ ${#missing[@]} -gt 0 ]; then
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") \
            >/dev/null 2>&1 || echo "note: could not install ${missing[*]}; tests that need them are skipped"
    fi
fi

cargo test --release --workspace "$@"
