#!/usr/bin/env python3
"""Writes data/pgn/engine-fixture.pgn: constructed games that look like the
PGN of engine tournaments (TCEC, CCRL, cutechess-cli), for the tests of the
PGN readers.

Every game is a legal random game (python-chess, fixed seed, moves chosen
from the sorted legal moves, never ending in checkmate or stalemate) with
the tags and comments real archives carry: free-text Termination values,
[Variant "normal"], TCEC's per-move search comments, [%clk]/[%eval]
comments, a game in long algebraic notation, a promotion written without
'=', a Chess960 game, CRLF line endings. PlyCount gives the number of moves
of each game so that tests can tell how many positions a reader must find.
Deterministic: rerunning writes the same bytes.

usage: scripts/make-engine-fixture.py [OUT]   (default data/pgn/engine-fixture.pgn)
"""

import random
import sys

import chess

SEED = 20261123

# (Termination, extra tags, notation, line ending, start FEN, variant)
GAMES = [
    ("adjudication", [("TerminationDetails", "TCEC draw rule")], "san", "\n", None, "normal"),
    ("GUI adjudication", [], "san-clock", "\n", None, None),
    ("GUI TB adjudication", [("TerminationDetails", "SyzygyTB")], "san", "\n", None, "normal"),
    ("3-fold rep", [], "san-clock", "\n", None, None),
    ("50-move rule", [], "san", "\r\n", None, "Standard"),
    ("time forfeit", [("TerminationDetails", "White loses on time")], "san", "\n", None, None),
    ("abandoned", [("TerminationDetails", "Black disconnects")], "san-clock", "\n", None, None),
    ("stalled connection", [], "san", "\n", None, "normal"),
    ("normal", [], "lan", "\n", None, None),
    ("User adjudication", [], "san", "\n", None, "chess"),
    ("TCEC Draw Rule", [], "san-bare-promotion", "\n", "8/P6k/8/8/8/8/6K1/8 w - - 0 40", None),
    ("adjudication", [], "san", "\n", "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", "fischerandom"),
    ("GUI TB Mate in 23", [], "san", "\n", None, None),
    ("insufficient material", [], "lan", "\r\n", None, "normal"),
    ("resign", [], "san-clock", "\n", None, None),
    ("illegal move", [], "san", "\n", None, None),
]

# Games a reader of standard chess must keep (their Termination reflects
# the play and they are standard chess).
DROPPED_TERMINATIONS = {"time forfeit", "abandoned", "stalled connection", "illegal move"}


def random_game(rng, board, plies):
    """Plays up to `plies` random legal moves, never ending in a position
    without a legal move; returns the moves."""
    moves = []
    for _ in range(plies):
        legal = sorted(board.legal_moves, key=lambda m: m.uci())
        choices = []
        for move in legal:
            board.push(move)
            ends = not any(board.legal_moves)
            board.pop()
            if not ends:
                choices.append(move)
        if not choices:
            break
        move = rng.choice(choices)
        moves.append(move)
        board.push(move)
    return moves


def comment(rng, style, ply):
    if style == "san-clock":
        minutes, seconds = divmod(1800 - 7 * ply, 60)
        return f"{{[%clk 0:{minutes:02d}:{seconds:02d}] [%eval {rng.uniform(-1, 1):.2f}]}}"
    depth = rng.randint(20, 40)
    return (f"{{d={depth}, sd={depth + 12}, mt={rng.randint(1000, 60000)}, "
            f"tl={rng.randint(100000, 900000)}, n={rng.randint(10**6, 10**9)}, "
            f"pv=, tb=0, R50={rng.randint(1, 50)}, wv={rng.uniform(-1, 1):.2f},}}")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "data/pgn/engine-fixture.pgn"
    rng = random.Random(SEED)
    parts = []
    for number, (termination, extra, style, eol, fen, variant) in enumerate(GAMES, 1):
        chess960 = variant == "fischerandom"
        board = chess.Board(fen, chess960=chess960) if fen else chess.Board()
        start = board.copy()
        if style == "san-bare-promotion":
            first = chess.Move.from_uci("a7a8q")
            board.push(first)
            moves = [first] + random_game(rng, board, 11)
        else:
            moves = random_game(rng, board, rng.randint(30, 90))
        result = rng.choice(["1-0", "0-1", "1/2-1/2"])
        tags = [
            ("Event", f"Fixture Season 1 - Division {number}"),
            ("Site", "https://example.invalid/engine-fixture"),
            ("Date", "2026.11.23"),
            ("Round", f"{number}.1"),
            ("White", "Engine A 1.0"),
            ("Black", "Engine B 2.0"),
            ("Result", result),
        ]
        if variant:
            tags.append(("Variant", variant))
        if fen:
            tags += [("SetUp", "1"), ("FEN", fen)]
        tags += [("Termination", termination)] + extra
        tags += [("TimeControl", "1800+3"), ("PlyCount", str(len(moves)))]
        tokens = []
        board = start.copy()
        for ply, move in enumerate(moves):
            if board.turn == chess.WHITE:
                tokens.append(f"{board.fullmove_number}.")
            elif ply == 0:
                tokens.append(f"{board.fullmove_number}...")
            if style == "lan":
                text = board.lan(move)
            else:
                text = board.san(move)
                if style == "san-bare-promotion" and move.promotion:
                    text = text.replace("=", "")
            tokens.append(text)
            if style != "lan" and ply % 3 == 0:
                tokens.append(comment(rng, style, ply))
            board.push(move)
        tokens.append(result)
        lines, line = [], ""
        for token in tokens:
            if line and len(line) + 1 + len(token) > 79:
                lines.append(line)
                line = token
            else:
                line = f"{line} {token}" if line else token
        lines.append(line)
        text = "".join(f'[{name} "{value}"]\n' for name, value in tags)
        text += "\n" + "\n".join(lines) + "\n\n"
        parts.append(text.replace("\n", eol))
    with open(out, "w", newline="") as f:
        f.write("".join(parts))


if __name__ == "__main__":
    main()
