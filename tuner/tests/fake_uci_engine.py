#!/usr/bin/env python3
"""A small UCI engine for the SPSA tests (python-chess).

It has one tunable spin option, Skill (0..100, default 50): with probability
1 - |Skill - 70| / 100 it plays its best capture (or a random move when it has
none), otherwise a random legal move, so it plays best at Skill 70. It reports
the material balance as its score, so resign adjudication ends its games.
Moves are drawn from a generator seeded by the position and Skill, so games
are reproducible.

Failure injection: `--crash-file F --crash-at N` exits (as a crash) at the
N-th `go` counted over all processes in F; `--crash-always` exits at every
`go`.
"""

import random
import sys

import chess

VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}


def material(board):
    score = 0
    for piece in board.piece_map().values():
        value = VALUES[piece.piece_type]
        score += value if piece.color == board.turn else -value
    return 100 * score


def crash_now(args):
    if "--crash-always" in args:
        return True
    if "--crash-file" not in args:
        return False
    path = args[args.index("--crash-file") + 1]
    at = int(args[args.index("--crash-at") + 1])
    try:
        with open(path) as f:
            count = int(f.read().strip() or 0)
    except FileNotFoundError:
        count = 0
    count += 1
    with open(path, "w") as f:
        f.write(str(count))
    return count == at


def choose(board, skill):
    rng = random.Random(board.fen() + str(skill))
    moves = sorted(board.legal_moves, key=lambda m: m.uci())
    if rng.random() < 1.0 - abs(skill - 70) / 100.0:
        captures = [m for m in moves if board.is_capture(m)]
        if captures:
            def gain(m):
                victim = board.piece_type_at(m.to_square) or chess.PAWN
                return VALUES[victim]
            best = max(gain(m) for m in captures)
            moves = [m for m in captures if gain(m) == best]
    return rng.choice(moves)


def main():
    args = sys.argv[1:]
    board = chess.Board()
    skill = 50
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        command = words[0]
        if command == "uci":
            print("id name fake")
            print("option name Hash type spin default 1 min 1 max 16")
            print("option name Skill type spin default 50 min 0 max 100")
            print("uciok")
        elif command == "isready":
            print("readyok")
        elif command == "setoption" and len(words) >= 5 and words[2] == "Skill":
            skill = int(words[4])
        elif command == "position":
            if words[1] == "startpos":
                board = chess.Board()
                rest = words[2:]
            else:
                board = chess.Board(" ".join(words[2:8]))
                rest = words[8:]
            if rest and rest[0] == "moves":
                for uci in rest[1:]:
                    board.push_uci(uci)
        elif command == "go":
            if crash_now(args):
                sys.exit(1)
            move = choose(board, skill)
            board.push(move)
            score = -material(board)
            board.pop()
            print(f"info depth 1 score cp {score}")
            print(f"bestmove {move.uci()}")
        elif command == "quit":
            return
        sys.stdout.flush()


if __name__ == "__main__":
    main()
