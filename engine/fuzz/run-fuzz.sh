#!/usr/bin/env bash
# Runs one fuzz target (release, debug assertions and overflow checks, no
# sanitizer: the code under test is safe Rust) on its corpus with its
# dictionary: run-fuzz.sh TARGET [libFuzzer options, e.g. -runs=10000000].
set -euo pipefail
cd "$(dirname "$0")"
target=$1
shift
case $target in
    fen | labeled | suites | params_file) dict=dict/epd.dict ;;
    uci) dict=dict/uci.dict ;;
    pgnselect_pgn | makebook_pgn) dict=dict/pgn.dict ;;
    *) dict= ;;
esac
mkdir -p "corpus/$target"
# A fixed mmap threshold: every large table comes zeroed from the OS (no
# memset of a reused heap block at each run).
export GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1048576
exec cargo +nightly fuzz run -O -a -s none "$target" "corpus/$target" -- \
    ${dict:+-dict=$dict} -timeout=20 -rss_limit_mb=4096 -max_len=65536 \
    -print_final_stats=1 "$@"
