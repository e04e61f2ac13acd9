#!/usr/bin/env python3
"""Where a player spends its time and where it misjudges, from match PGN.

Reads the games of `engine match` (or cutechess/fastchess), whose moves carry
comments like {+0.35/12 0.523s} (the mover's score in pawns, or +M3/-M3, the
depth, the time), and prints for PLAYER (its name in the White/Black tags):

  * time and depth per move, PLAYER against its opponents, by game phase
    (blocks of 20 plies);
  * the drawn-score illusions: moves after which PLAYER said exactly 0.00 and
    the opponent's reply said |score| >= 1;
  * the turning points of its lost games: the first opponent move scored
    >= +1.5 right after PLAYER's own score was >= -0.3, with the position.

Usage: scripts/match_report.py PLAYER GAMES.pgn...
Needs python-chess (pip package `chess`).
"""
import collections
import re
import sys

import chess.pgn

COMMENT = re.compile(r"([+-])(M?)(\d+(?:\.\d+)?)/(\d+) (\d+(?:\.\d+)?)s")
PHASE_PLIES = 20
PHASES = 6


def score_of(match):
    sign = 1 if match.group(1) == "+" else -1
    return sign * (100.0 if match.group(2) else float(match.group(3)))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    player, paths = sys.argv[1], sys.argv[2:]
    time_used = collections.defaultdict(list)
    depth = collections.defaultdict(list)
    turning_points = []
    illusions = games = illusion_games = own_moves = 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            while (game := chess.pgn.read_game(f)) is not None:
                if player not in (game.headers["White"], game.headers["Black"]):
                    continue
                games += 1
                white = game.headers["White"] == player
                result = game.headers["Result"]
                lost = result == ("0-1" if white else "1-0")
                board = game.board()
                last_own = None
                turned = False
                game_illusions = 0
                for ply, node in enumerate(game.mainline()):
                    own = (board.turn == chess.WHITE) == white
                    m = COMMENT.match(node.comment)
                    if m:
                        score = score_of(m)
                        phase = min(ply // PHASE_PLIES, PHASES - 1)
                        time_used[(phase, own)].append(float(m.group(5)))
                        depth[(phase, own)].append(int(m.group(4)))
                        if own:
                            own_moves += 1
                            last_own = (score, board.fen(), node.move.uci(), ply)
                        elif last_own is not None:
                            if last_own[0] == 0.0 and abs(score) >= 1.0:
                                game_illusions += 1
                            if lost and not turned and score >= 1.5 and last_own[0] >= -0.3:
                                turning_points.append((path, game.headers["Round"], last_own, score))
                                turned = True
                    board.push(node.move)
                illusions += game_illusions
                illusion_games += game_illusions > 0
    print(f"{player}: {games} games")
    print("plies     its time (s) / depth   opponents' time (s) / depth")
    for phase in range(PHASES):
        ours, theirs = time_used[(phase, True)], time_used[(phase, False)]
        if ours and theirs:
            first = phase * PHASE_PLIES
            last = f"{first + PHASE_PLIES - 1:3}" if phase < PHASES - 1 else "   "
            print(
                f"{first:3}-{last}   {sum(ours) / len(ours):.3f} / {sum(depth[(phase, True)]) / len(ours):4.1f}"
                f"           {sum(theirs) / len(theirs):.3f} / {sum(depth[(phase, False)]) / len(theirs):4.1f}"
                f"   ({len(ours)} moves)"
            )
    print(
        f"\ndrawn-score illusions: {illusions} of {own_moves} moves, in {illusion_games} games "
        f"(it said 0.00, the reply said |score| >= 1)"
    )
    at_zero = sum(1 for _, _, (score, *_), _ in turning_points if score == 0.0)
    print(f"\n{len(turning_points)} lost games turned (opponent >= +1.5 right after it said >= -0.3), {at_zero} at 0.00:")
    for path, round_, (score, fen, move, ply), theirs in turning_points:
        print(f"  {path} round {round_} ply {ply}: {move} at {score:+.2f}, reply at {theirs:+.2f}  {fen}")


if __name__ == "__main__":
    main()
