"""Plays a quick match between the engine and another engine with python-chess.

Usage examples (release build first):
  python3 scripts/uci_match.py --opp stockfish --elo 2000 --games 100
  python3 scripts/uci_match.py --opp gnuchess --games 100
  python3 scripts/uci_match.py --opp self --tc 1 --inc 0.01      # time-forfeit check
  python3 scripts/uci_match.py --xboard --opp gnuchess           # via the polyglot adapter
  python3 scripts/uci_match.py --opp bin:/path/to/other/engine   # any UCI binary

Colours alternate; each pair of games shares one of a few short openings. Illegal
moves, crashes and time forfeits (measured by this script, including pipe
latency) lose the game and are reported. Prints W/D/L and an Elo estimate with a
95% interval.
"""
import chess, chess.engine, chess.pgn, sys, time, random, math, argparse

p = argparse.ArgumentParser()
p.add_argument("--engine", default="target/release/engine")
p.add_argument("--opp", default="stockfish")
p.add_argument("--games", type=int, default=4)
p.add_argument("--tc", type=float, default=10.0)
p.add_argument("--inc", type=float, default=0.1)
p.add_argument("--elo", type=int, default=2000)
p.add_argument("--threads", type=int, default=1)
p.add_argument("--xboard", action="store_true")
p.add_argument("--pgn", default="match.pgn")
p.add_argument("--polyglot-ini", default="")
a = p.parse_args()

OPENINGS = ["e2e4 e7e5 g1f3 b8c6", "d2d4 d7d5 c2c4 e7e6", "e2e4 c7c5 g1f3 d7d6", "d2d4 g8f6 c2c4 g7g6",
            "c2c4 e7e5 b1c3 g8f6", "e2e4 e7e6 d2d4 d7d5", "e2e4 c7c6 d2d4 d7d5", "g1f3 d7d5 g2g3 g8f6",
            "e2e4 e7e5 f1c4 g8f6", "d2d4 d7d5 g1f3 g8f6 c2c4 c7c6"]

def opp_cmd():
    if a.opp == "stockfish":
        return ["/usr/games/stockfish"], {"UCI_LimitStrength": True, "UCI_Elo": a.elo, "Threads": 1, "Hash": 16}
    if a.opp == "gnuchess":
        return ["/usr/games/gnuchess", "-u"], {}
    if a.opp.startswith("bin:"):
        return [a.opp[4:]], {}
    if a.opp == "self":
        return [a.engine], {}
    raise SystemExit("unknown opp")

def write_ini():
    import os, tempfile
    fd, path = tempfile.mkstemp(suffix=".ini")
    with os.fdopen(fd, "w") as f:
        f.write(f"[PolyGlot]\nEngineCommand = {os.path.abspath(a.engine)}\nEngineDir = .\nBook = false\n[Engine]\n")
    return path

w = d = l = 0
forfeits = 0
for g in range(a.games):
    ours = chess.engine.SimpleEngine.popen_xboard(["/usr/games/polyglot", a.polyglot_ini or write_ini()]) if a.xboard else chess.engine.SimpleEngine.popen_uci(a.engine)
    if a.threads > 1 and not a.xboard: ours.configure({"Threads": a.threads})
    cmd, opts = opp_cmd()
    theirs = chess.engine.SimpleEngine.popen_uci(cmd)
    if opts: theirs.configure(opts)
    we_white = g % 2 == 0
    board = chess.Board()
    for mv in OPENINGS[(g // 2) % len(OPENINGS)].split():
        board.push_uci(mv)
    clocks = {chess.WHITE: a.tc, chess.BLACK: a.tc}
    result = None
    reason = ""
    while not board.is_game_over(claim_draw=True):
        eng = ours if (board.turn == chess.WHITE) == we_white else theirs
        lim = chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK], white_inc=a.inc, black_inc=a.inc)
        t0 = time.monotonic()
        try:
            r = eng.play(board, lim)
        except Exception as e:
            result = "0-1" if board.turn == chess.WHITE else "1-0"; reason = f"crash/error {e!r}"; break
        dt = time.monotonic() - t0
        clocks[board.turn] -= dt
        if clocks[board.turn] < 0:
            result = "0-1" if board.turn == chess.WHITE else "1-0"; reason = f"time forfeit by {'ours' if eng is ours else 'opp'} ({clocks[board.turn]:.3f})"
            forfeits += 1; break
        clocks[board.turn] += a.inc
        if r.move is None or r.move not in board.legal_moves:
            result = "0-1" if board.turn == chess.WHITE else "1-0"; reason = f"illegal move {r.move}"; break
        board.push(r.move)
    if result is None:
        result = board.result(claim_draw=True); reason = str(board.outcome(claim_draw=True).termination)
    ours.quit(); theirs.quit()
    score = {"1-0": 1, "0-1": 0, "1/2-1/2": 0.5}[result]
    if not we_white: score = 1 - score
    if score == 1: w += 1
    elif score == 0: l += 1
    else: d += 1
    game = chess.pgn.Game.from_board(board)
    game.headers["White"] = "engine" if we_white else a.opp
    game.headers["Black"] = a.opp if we_white else "engine"
    game.headers["Result"] = result
    game.headers["Termination"] = reason
    with open(a.pgn, "a") as f: print(game, file=f, end="\n\n")
    n = w + d + l
    print(f"game {g+1}: {'W' if we_white else 'B'} {result} {reason} plies={len(board.move_stack)} | +{w} ={d} -{l}", flush=True)

n = w + d + l
s = (w + d / 2) / n
def elo_of(score):
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)
var = (w * (1 - s) ** 2 + d * (0.5 - s) ** 2 + l * (0 - s) ** 2) / n
margin = 1.96 * math.sqrt(var / n)
print(f"final: +{w} ={d} -{l} score {s:.3f} elo {elo_of(s):.0f} "
      f"[{elo_of(s - margin):.0f}, {elo_of(s + margin):.0f}] forfeits {forfeits}")
