#!/usr/bin/env bash
# A profile-guided build of the engine: the same program, compiled with the
# branch and call counts of a run of `engine bench`, so that its hot paths are
# laid out and inlined for how a search actually runs (Stockfish's
# `make profile-build`). The search does not change: the script checks that
# the bench signature of the final binary equals the instrumented one's.
#
# Usage: scripts/build-pgo.sh [-n] [-o DIR] [-d DEPTH] [-C SRC]
#   -C  build the checkout SRC (another revision's worktree; default this one)
#   -o  target folder (default target/pgo; relative to SRC); the engine is
#       DIR/release/engine. Kept apart from target/release, which `cargo build
#       --release` would rebuild without the profile
#   -n  compile for this machine's CPU (target-cpu=native) instead of the
#       portable x86-64-v2 of .cargo/config.toml: a binary for here only
#   -d  depth of the training run of `engine bench` (default 13, the bench's)
#
# Needs llvm-profdata of the compiler's LLVM version: `$LLVM_PROFDATA`, else the
# toolchain's own (`rustup component add llvm-tools`, tried when missing),
# else `llvm-profdata` on PATH. Prints the signature and the nps of the plain
# and the PGO build, measured one after the other (wall time: read them on an
# idle machine). Exits with 3 when no usable llvm-profdata can be had, 1 on any
# other failure.
set -euo pipefail
self=$(realpath "$0")
cd "$(dirname "$self")/.."

out=""
native=0
depth=13
while getopts "no:d:C:" opt; do
    case $opt in
        C) cd "$OPTARG" ;;
        n) native=1 ;;
        o) out=$OPTARG ;;
        d) depth=$OPTARG ;;
        *) sed -n '2,22p' "$self"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { sed -n '2,22p' "$self"; exit 2; }

host=$(rustc -vV | sed -n 's/^host: //p')
find_profdata() {
    if [ -n "${LLVM_PROFDATA:-}" ]; then
        echo "$LLVM_PROFDATA"
        return
    fi
    local own
    own="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
    if [ ! -x "$own" ] && command -v rustup >/dev/null; then
        timeout 120 rustup component add llvm-tools >/dev/null 2>&1 || true
    fi
    if [ -x "$own" ]; then
        echo "$own"
    elif command -v llvm-profdata >/dev/null; then
        command -v llvm-profdata
    fi
}
profdata=$(find_profdata)
if [ -z "$profdata" ]; then
    echo "build-pgo.sh: no llvm-profdata: run 'rustup component add llvm-tools' or set LLVM_PROFDATA" >&2
    exit 3
fi

# RUSTFLAGS replaces the rustflags of .cargo/config.toml, so its target CPU is
# repeated here.
cpu=()
if [ "$native" = 1 ]; then
    cpu=(-C target-cpu=native)
elif [ "$host" = x86_64-unknown-linux-gnu ]; then
    cpu=(-C target-cpu=x86-64-v2)
fi

work=$(mktemp -d /tmp/build-pgo.XXXXXX)
trap 'rm -rf "$work"' EXIT
out=${out:-target/pgo}
mkdir -p "$out"
out=$(cd "$out" && pwd)

echo "1/3 instrumented build"
RUSTFLAGS="${cpu[*]} -C profile-generate=$work/profiles" \
    cargo build --release -q -p engine --bin engine --target-dir "$work/target"
echo "2/3 training run: engine bench $depth"
trained=$("$work/target/release/engine" bench "$depth" 2>/dev/null | tail -1 | cut -d' ' -f1)
"$profdata" merge -o "$work/engine.profdata" "$work"/profiles/*.profraw || {
    echo "build-pgo.sh: $profdata could not read the profiles (an LLVM older than rustc's?);" \
        "use the toolchain's: rustup component add llvm-tools" >&2
    exit 3
}
echo "3/3 optimised build into $out/release/engine"
RUSTFLAGS="${cpu[*]} -C profile-use=$work/engine.profdata" \
    cargo build --release -q -p engine --bin engine --target-dir "$out"

read -r signature _ nps _ < <("$out/release/engine" bench "$depth" 2>/dev/null | tail -1)
plain_target=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p engine --bin engine
read -r plain _ plain_nps _ < <("$plain_target/release/engine" bench "$depth" 2>/dev/null | tail -1)
echo "plain build: bench $depth signature $plain, $plain_nps nps"
echo "PGO build:   bench $depth signature $signature, $nps nps ($out/release/engine)"
if [ "$plain" != "$signature" ] || [ "$trained" != "$signature" ]; then
    echo "build-pgo.sh: the builds search differently (bench signatures: plain $plain," \
        "instrumented $trained, PGO $signature)" >&2
    exit 1
fi
