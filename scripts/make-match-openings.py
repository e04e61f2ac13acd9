#!/usr/bin/env python3
"""Derive data/openings/match-openings.epd from data/pgn/fischer-300.pgn.

Every 5th game of the file, the position after ply 8 + (game number mod 9)
(so plies 8..16), skipping positions already taken, positions in check and
games shorter than that; the first 50 are kept. Deterministic: re-running
reproduces the file byte for byte. Needs python-chess.
"""
import sys
import chess.pgn

SOURCE = "data/pgn/fischer-300.pgn"
TARGET = "data/openings/match-openings.epd"
STRIDE, FIRST_PLY, PLY_SPREAD, WANTED = 5, 8, 9, 50

seen, lines = set(), []
with open(SOURCE, encoding="utf-8", errors="replace") as pgn:
    number = 0
    while len(lines) < WANTED:
        game = chess.pgn.read_game(pgn)
        if game is None:
            break
        number += 1
        if number % STRIDE:
            continue
        ply = FIRST_PLY + number % PLY_SPREAD
        board = game.board()
        moves = list(game.mainline_moves())
        if len(moves) <= ply:
            continue
        for m in moves[:ply]:
            board.push(m)
        epd = board.epd()
        if board.is_check() or epd in seen:
            continue
        seen.add(epd)
        white, black = game.headers.get("White", "?"), game.headers.get("Black", "?")
        lines.append(f'{epd} c0 "{white} - {black}, ply {ply}";')
if len(lines) < WANTED:
    sys.exit(f"only {len(lines)} positions")
with open(TARGET, "w", encoding="utf-8") as out:
    out.write("\n".join(lines) + "\n")
print(f"{TARGET}: {len(lines)} positions")
