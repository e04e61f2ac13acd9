#!/usr/bin/env python3
"""TD(lambda) targets for the tuner from scored positions in game order.

Usage: scripts/td-labels.py LAMBDA K IN.epd OUT.epd

IN.epd is what `pgnselect --comment-scores` writes (or `labeler selfplay`):
one position per line with its game result (c9) and the search score of the
move played from it (ce, side to move's view), the positions of a game in
order. The games are told apart without their headers: a new game starts
where the move number drops, the number of pieces rises or the result
changes. Each position's ce is replaced by the TD(lambda) average of the win
probabilities of its own and the later positions' scores,
y_t = (1 - l) * sum_k l^k p_{t+k}, the tail's weight on the game's last
position, written back as a score (the inverse of the tuner's sigmoid
p = 1 / (1 + exp(-K s / 400)), so K should be the tuner's --k). Tune on OUT
with `--lambda 0`. This is how the weights of ab7b21e were made (LAMBDA 0.9,
K 2.8): a score that the rest of its game contradicted counts for less.
"""
import math
import re
import sys

lam = float(sys.argv[1])
K = float(sys.argv[2])
src, dst = sys.argv[3], sys.argv[4]

ce_re = re.compile(r"ce (-?\d+);")
fmvn_re = re.compile(r"fmvn (\d+);")
c9_re = re.compile(r'c9 "([^"]+)";')


def flush(game, out):
    """Writes one game's positions with their TD targets; returns how many
    games it wrote (0 for an empty one)."""
    if not game:
        return 0
    # Win probabilities from White's view: the positions alternate sides.
    probs = [1.0 / (1.0 + math.exp(-K * w / 400.0)) for _, _, w in game]
    acc = probs[-1]
    ys = [acc]
    for p in reversed(probs[:-1]):
        acc = (1 - lam) * p + lam * acc
        ys.append(acc)
    ys.reverse()
    for (line, white, _), y in zip(game, ys):
        y = min(max(y, 1e-6), 1 - 1e-6)
        w = 400.0 / K * math.log(y / (1 - y))
        stm = round(w if white else -w)
        out.write(ce_re.sub(f"ce {stm};", line, count=1))
    return 1


games = 0
with open(src) as f, open(dst, "w") as out:
    game = []
    last = None
    for line in f:
        m = ce_re.search(line)
        if not m:
            continue
        board, side, _ = line.split(" ", 2)
        pieces = sum(c.isalpha() for c in board)
        fmvn = int(fmvn_re.search(line).group(1))
        c9 = c9_re.search(line).group(1)
        if last is not None and (fmvn < last[0] or pieces > last[1] or c9 != last[2]):
            games += flush(game, out)
            game = []
        white = side == "w"
        score = int(m.group(1))
        game.append((line, white, score if white else -score))
        last = (fmvn, pieces, c9)
    games += flush(game, out)
print(f"{games} games", file=sys.stderr)
