"""Notes: docs/notes/2026-12-06-verdict-parts.md, "The control spacings as the move's null".
Scores the spacing move (docs/method.md §9, "Centre of the rare items above the top positive")
with the null rate of the count above the top positive taken from the run's own control
spacings instead of alpha: p0 = max(alpha, mean share of tested queries whose R_2 ... R_6
exceed their 1% points), so that a run whose tail the GPD does not fit (every spacing exceeds
more often) moves less. z_a and the rate's excess (D_a - p0*Q_a) both use p0; the move's size
is scaled by the excess ratio (the reading is nearly linear in the rate at these rates).
Reads the CSVs of crates/tailrank/examples/spacing_controls.rs (per query) and
above_reading.rs (per run), as docs/notes/2026-12-06-spacing-centre.md made them.
Needs numpy, pandas and scipy.
Usage: python3 spacing_control_null.py a05.csv r_a05.csv 0.05 [a01.csv r_a01.csv 0.01 ...]"""
import sys

import numpy as np
import pandas as pd
from scipy.stats import binom, norm

from spacing_controls import exceedances

HELD_OUT = {"hubs", "spread-even", "spread-0.3"}


def ramp(z):
    return np.clip((z - 3.0) / 2.0, 0.0, 1.0)


def z_above(d, q, p):
    tail = binom.sf(d - 1, q, p)
    return np.where(d > 0, norm.isf(np.clip(tail, 1e-15, 1.0)), 0.0)


def score(controls_csv, runs_csv, fraction):
    c = exceedances(controls_csv)
    c = c[np.isclose(c.f, fraction)]
    rate = c.groupby(["family", "seed"])[[f"e{k}" for k in range(2, 7)]].mean().mean(axis=1)
    r = pd.read_csv(runs_csv).merge(rate.rename("control").reset_index(), on=["family", "seed"])
    err = (r.estimate - r.truth) * 100
    gap = ((r.m_above - r.m_tail) * 100).fillna(0.0)
    d, q = r.exceeding_above.values, r.tested_above.values
    p0 = np.maximum(0.01, r.control.values)
    excess = np.maximum(d - 0.01 * q, 0.0)
    scale = np.where(excess > 0, np.maximum(d - p0 * q, 0.0) / np.where(excess > 0, excess, 1), 0.0)
    r["built"] = err + 0.5 * ramp(z_above(d, q, 0.01)) * gap
    r["control_null"] = err + 0.5 * ramp(z_above(d, q, p0)) * gap * scale
    return r


def main(args):
    for i in range(0, len(args), 3):
        r = score(args[i], args[i + 1], float(args[i + 2]))
        held = r.family.isin(HELD_OUT)
        print(f"{args[i + 1]} (f = {args[i + 2]}): mean |error|, built -> control null: "
              f"tuning {r.built[~held].abs().mean():.2f} -> {r.control_null[~held].abs().mean():.2f}, "
              f"held out {r.built[held].abs().mean():.2f} -> {r.control_null[held].abs().mean():.2f}")
        t = r.groupby("family").agg(
            built=("built", lambda x: x.abs().mean()), control_null=("control_null", lambda x: x.abs().mean()),
            built_mean=("built", "mean"), control_null_mean=("control_null", "mean"),
            control_rate=("control", "mean"))
        print(t.round(2).to_string())


if __name__ == "__main__":
    main(sys.argv[1:])
