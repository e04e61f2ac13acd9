#!/usr/bin/env bash
# Seeds corpus/<target>/ from the bundled data (real positions, games,
# suites, params, a small Polyglot book built by makebook) and hand-written
# UCI sessions. Run from anywhere; needs the workspace's release binaries
# for the book (cargo build --release -p makebook).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
data=$root/data
corpus=$here/corpus
mkdir -p "$corpus"/{fen,labeled,suites,params_file,polyglot,uci,pgnselect_pgn,makebook_pgn}

python3 - "$data" "$corpus" <<'PY'
import gzip, os, sys, hashlib
data, corpus = sys.argv[1], sys.argv[2]

def put(target, blob):
    if isinstance(blob, str):
        blob = blob.encode()
    name = hashlib.sha1(blob).hexdigest()[:16]
    with open(os.path.join(corpus, target, name), 'wb') as f:
        f.write(blob)

epd = open(os.path.join(data, 'labeled/masters-quiet-20k.epd')).read().splitlines()
for i in range(0, 400, 4):
    put('labeled', '\n'.join(epd[i:i + 4]) + '\n')
    board = ' '.join(epd[i].split()[:4])
    put('fen', board + ' 0 1|e2e4 e7e5')
    put('fen', board)
# Other labeled formats of the same positions.
for i in range(0, 40):
    board = ' '.join(epd[i].split()[:4])
    put('labeled', f'{board} 0 1 [0.5]\n{board} [1.0]\n')
    put('labeled', f'{board} 0 1 | 35 | 1-0\n{board} | | 0-1\n')
    put('labeled', f'fen,result,score\n"{board} 0 1",1/2-1/2,12\n')
for name in ['suites/wacnew.epd', 'suites/arasan2024.epd', 'suites/perftsuite.epd']:
    lines = open(os.path.join(data, name)).read().splitlines()
    for i in range(0, min(len(lines), 200), 5):
        put('suites', '\n'.join(lines[i:i + 5]) + '\n')
params = open(os.path.join(data, 'handset.params')).read().splitlines()
for i in range(0, len(params), 60):
    put('params_file', '\n'.join(params[i:i + 60]) + '\n')
put('params_file', '\n'.join(params) + '\n')

def games(text):
    out, cur = [], []
    for line in text.splitlines(keepends=True):
        if line.startswith('[Event ') and cur:
            out.append(''.join(cur)); cur = []
        cur.append(line)
    if cur:
        out.append(''.join(cur))
    return out

fischer = games(open(os.path.join(data, 'pgn/fischer-300.pgn'), encoding='utf-8', errors='replace').read())
basic = games(gzip.open(os.path.join(data, 'book/arasan-basic.pgn.gz')).read().decode('utf-8', 'replace'))
for i, g in enumerate(fischer[:120]):
    put('pgnselect_pgn', bytes([i % 6]) + g.encode())
    put('makebook_pgn', bytes([i]) + g.encode())
for i in range(0, 120, 3):
    put('pgnselect_pgn', bytes([i % 6]) + ''.join(fischer[i:i + 3]).encode())
for i, g in enumerate(basic[:150]):
    put('makebook_pgn', bytes([i]) + g.encode())

sessions = [
    'uci\nisready\nposition startpos moves e2e4 e7e5\ngo depth 3\n',
    'position fen r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3\ngo nodes 500\nstop\n',
    'ucinewgame\nposition startpos\ngo wtime 100 btime 100 winc 1 binc 1\n',
    'position startpos moves e2e4\ngo infinite\nisready\nucinewgame\nstop\ngo depth 1\n',
    'setoption name Move Overhead value 10\nsetoption name OwnBook value false\ngo searchmoves e2e4 d2d4 depth 2\n',
    'go depth -1 nodes x mate 2\nposition fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1\ngo mate 1\n',
    'position fen 8/8/8/8/8/8/8/K1k5 w - - 0 1\ngo movetime 5\nponderhit\nquit\n',
]
for s in sessions:
    put('uci', s)
PY

# A small real book.
book=$(mktemp -d)
"$root/target/release/makebook" -o "$book/book.bin" -p 12 --collections-only \
    "$data/pgn/fischer-300.pgn" >/dev/null 2>&1
python3 - "$book/book.bin" "$corpus/polyglot" <<'PY'
import sys, os, hashlib
blob = open(sys.argv[1], 'rb').read()
parts = [blob]
for size in [1, 4, 16, 64]:
    for start in range(0, len(blob), 16 * 97):
        parts.append(blob[start:start + size * 16])
for part in parts:
    name = hashlib.sha1(part).hexdigest()[:16]
    open(os.path.join(sys.argv[2], name), 'wb').write(part)
PY
rm -rf "$book"
for t in "$corpus"/*; do echo "$(basename "$t"): $(ls "$t" | wc -l) seeds"; done
