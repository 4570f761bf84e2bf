"""Notes: docs/notes/2026-12-06-spacing-centre.md. Reads the CSVs of
`crates/tailrank/examples/above_reading.rs` (one row per family, seed and fraction: truth,
estimate, the top-spacing counts and the reading m_above against m_tail) and scores the move
of the estimate by c * w(z) * (m_above - m_tail), w a linear ramp from z = a to z = b, with z
the pooled test's z or z_a, the exact binomial tail of the count above the top positive.
Prints mean |error| in points, tuning and held-out families side by side, and per family.
Needs numpy, pandas and scipy. Usage: python3 spacing_centre.py r_a05.csv r_a01.csv ..."""
import sys
import numpy as np
import pandas as pd
from scipy.stats import binom, norm

HELD = {"hubs", "spread-even", "spread-0.3"}


def load(paths):
    d = pd.concat([pd.read_csv(p) for p in paths])
    d["err"] = (d.estimate - d.truth) * 100
    d["gap"] = ((d.m_above - d.m_tail) * 100).fillna(0)
    p = binom.sf(d.exceeding_above - 1, d.tested_above, 0.01)
    d["z_above"] = np.where(d.exceeding_above > 0, norm.isf(np.clip(p, 1e-15, 1)), 0.0)
    return d


def moved(d, zcol, c=0.5, a=3.0, b=5.0):
    w = ((d[zcol].fillna(0) - a) / (b - a)).clip(0, 1)
    return d.assign(moved=d.err + c * w * d.gap)


d = load(sys.argv[1:])
for zcol in ["z", "z_above"]:
    for c, a, b in [(0.5, 3, 5), (0.5, 2, 4), (0.4, 3, 5)]:
        m = moved(d, zcol, c, a, b)
        rows = []
        for f, g in m.groupby("f"):
            t, h = g[~g.family.isin(HELD)], g[g.family.isin(HELD)]
            worse = ((g.moved.abs() > g.err.abs() + 0.25)).sum()
            rows.append(
                f"f={f}: tuning {t.err.abs().mean():.2f} -> {t.moved.abs().mean():.2f}, "
                f"held out {h.err.abs().mean():.2f} -> {h.moved.abs().mean():.2f}, "
                f"{worse} runs worse by > 0.25"
            )
        print(f"{zcol:8s} c={c} ramp {a}-{b}: " + "; ".join(rows))
m = moved(d, "z_above")
per = m.groupby(["f", "family"]).agg(
    runs=("err", "size"),
    err=("err", lambda x: x.abs().mean()),
    moved=("moved", lambda x: x.abs().mean()),
    mean_err=("err", "mean"),
    mean_moved=("moved", "mean"),
)
print(per.round(2).to_string())
