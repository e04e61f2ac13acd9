#!/usr/bin/env python3
"""Independent reference for engine::play::elo and engine::play::sprt.

Reads lines `KIND ELO0 ELO1 MODEL C0 C1 ...` on standard input, where KIND is
`tri` (counts L D W) or `penta` (counts LL LD DD+WL WD WW) and MODEL is
`logistic` or `normalized`, and prints for each line

    score variance elo low high los nelo llr

Written from the published formulas (Van den Bergh, "Comments on Normalized
Elo"; fishtest's GSPRT), not from the Rust code: Newton's method with
bisection safeguards for the Lagrange multiplier, and Python's NormalDist for
the LOS.
"""

import math
import sys
from statistics import NormalDist

Z95 = NormalDist().inv_cdf(0.975)
K = 800.0 / math.log(10.0)


def elo(score):
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def solve_theta(p_hat, phi):
    """Root of g(t) = sum p_hat*phi/(1 + t*phi) on (-1/max phi, -1/min phi)."""
    lo, hi = -1.0 / max(phi), -1.0 / min(phi)
    g = lambda t: sum(p * f / (1.0 + t * f) for p, f in zip(p_hat, phi))
    dg = lambda t: -sum(p * f * f / (1.0 + t * f) ** 2 for p, f in zip(p_hat, phi))
    t = 0.0 if lo < 0.0 < hi else (lo + hi) / 2.0
    for _ in range(500):
        value = g(t)
        if value == 0.0 or hi - lo <= 1e-15 * max(1.0, abs(t)):
            break
        if value > 0.0:
            lo = t
        else:
            hi = t
        step = t - value / dg(t)
        if step == t:
            break
        # Newton while it stays inside the bracket, bisection otherwise.
        t = step if lo < step < hi else (lo + hi) / 2.0
    return t


def tilt(p_hat, phi):
    t = solve_theta(p_hat, phi)
    return [p / (1.0 + t * f) for p, f in zip(p_hat, phi)]


def mle_mean(a, p_hat, s):
    return tilt(p_hat, [x - s for x in a])


def mle_t(a, p_hat, t_star):
    p = [1.0 / len(a)] * len(a)
    for _ in range(10000):
        mu = sum(x * q for x, q in zip(a, p))
        sigma = math.sqrt(sum(q * (x - mu) ** 2 for x, q in zip(a, p)))
        phi = [x - 0.5 - 0.5 * t_star * sigma * (1.0 + ((x - mu) / sigma) ** 2) for x in a]
        new = tilt(p_hat, phi)
        done = max(abs(x - y) for x, y in zip(new, p)) < 1e-12
        p = new
        if done:
            break
    return p


def main():
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        kind, elo0, elo1, model = words[0], float(words[1]), float(words[2]), words[3]
        counts = [int(c) for c in words[4:]]
        a = [0.0, 0.5, 1.0] if kind == "tri" else [0.0, 0.25, 0.5, 0.75, 1.0]
        g = 1.0 if kind == "tri" else 2.0
        n = sum(counts)
        s = sum(x * c for x, c in zip(a, counts)) / n
        var = sum(c * (x - s) ** 2 for x, c in zip(a, counts)) / n
        se = math.sqrt(var / n)
        los = NormalDist().cdf((s - 0.5) / se)
        nelo = (s - 0.5) / math.sqrt(g * var) * K
        reg = [c if c > 0 else 1e-3 for c in counts]
        total = sum(reg)
        p_hat = [c / total for c in reg]
        if model == "logistic":
            p0 = mle_mean(a, p_hat, 1.0 / (1.0 + 10 ** (-elo0 / 400.0)))
            p1 = mle_mean(a, p_hat, 1.0 / (1.0 + 10 ** (-elo1 / 400.0)))
        else:
            p0 = mle_t(a, p_hat, elo0 * math.sqrt(g) / K)
            p1 = mle_t(a, p_hat, elo1 * math.sqrt(g) / K)
        llr = total * sum(p * (math.log(y) - math.log(x)) for p, x, y in zip(p_hat, p0, p1))
        print(
            "%.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g"
            % (s, var, elo(s), elo(s - Z95 * se), elo(s + Z95 * se), los, nelo, llr)
        )


if __name__ == "__main__":
    main()
