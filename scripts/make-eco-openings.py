#!/usr/bin/env python3
"""Derive data/openings/eco-openings.epd from the ECO table data/eco/*.tsv.

The position at the end of every named line of at least 6 plies, once each
(the first line reaching it names it in `c0`), skipping finished games. The
openings of SPRTs (scripts/sprt.sh): thousands of distinct, named, human
openings, so that fixed-node games do not repeat. Deterministic: re-running
reproduces the file byte for byte. Needs python-chess.
"""
import csv
import glob

import chess

TARGET = "data/openings/eco-openings.epd"
MIN_PLIES = 6

seen, lines = set(), []
for path in sorted(glob.glob("data/eco/*.tsv")):
    with open(path, encoding="utf-8") as table:
        for row in csv.DictReader(table, delimiter="\t"):
            board = chess.Board()
            for token in row["pgn"].split():
                if not token.rstrip(".").isdigit():
                    board.push_san(token)
            if board.ply() < MIN_PLIES or board.is_game_over():
                continue
            epd = board.epd()
            if epd in seen:
                continue
            seen.add(epd)
            name = f'{row["eco"]} {row["name"]}'.replace('"', "'")
            lines.append(f'{epd} c0 "{name}";')
with open(TARGET, "w", encoding="utf-8", newline="\n") as out:
    out.write("\n".join(lines) + "\n")
print(f"{TARGET}: {len(lines)} positions")
