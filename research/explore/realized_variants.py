#!/usr/bin/env python3
"""Variants of the realized interval recomputed from an exam's run files
(docs/notes/2026-12-06-projection-fresh-seeds.md, "Side result for issue #43").

Each run of `tailrank validate --exam --json RUNS` carries the interval's parts
(`realized_parts`: the opinions, `pool_sd`, `trend_shift`) and the evaluate-at-S ceiling, so
the interval of crates/tailrank-predict/src/predict/realized.rs can be rebuilt exactly (the
script checks it: `current` must reproduce `realized` to 1e-12) and a variant rebuilt beside it.

  realized_variants.py RUNS.json...   # coverage and mean width per family, per fraction
"""
import collections
import json
import sys

Z = 1.959963984540054  # Φ⁻¹(0.975), the default confidence 0.95
HELD_OUT = {"hubs", "spread-even", "spread-0.3"}


def parts(r):
    """The estimate, the opinions M (None where absent) and the raw parts of run r."""
    p = r["realized_parts"]
    est = r["evt"]
    ec = r.get("excess_centre") or {}
    unmoved = ec.get("unmoved_map_at_k") if isinstance(ec, dict) else None
    tail = unmoved if unmoved is not None else est
    fc, reach = p["fit_choice_estimate"], p["fit_choice_reach"]
    fit = None
    if fc is not None:
        fit = tail + max(-reach, min(reach, fc - tail)) if reach is not None else fc
    ops = {
        "other_map": p["other_map_estimate"],
        "fit": fit,
        "cal": p["calibrated_estimate"],
        "excess": p["excess_mass_estimate"],
        "count": p["count_estimate"],
        "unmoved": unmoved,
    }
    return est, ops, p


def interval(r, kind):
    """`current`: realized.rs; `farther`: the trend reaches from the estimate, not past M."""
    est, ops, p = parts(r)
    vals = [est] + [v for v in ops.values() if v is not None]
    lo, hi = min(vals), max(vals)
    h, t = Z * p["pool_sd"], p["trend_shift"]
    if kind == "current":
        hi, lo = hi + h + max(t, 0), lo - h - max(-t, 0)
    elif kind == "farther":
        hi, lo = max(hi + h, est + h + max(t, 0)), min(lo - h, est - h - max(-t, 0))
    else:
        raise ValueError(kind)
    hi, lo = min(1.0, hi), max(0.0, lo)
    ceiling = max(r["evaluate_at_s"], est)
    return lo, min(hi, ceiling)


def main(files):
    runs = [r for f in files for r in json.load(open(f)) if r["realized"] is not None]
    for r in runs:
        lo, hi = interval(r, "current")
        assert abs(lo - r["realized"]["lo"]) < 1e-12 and abs(hi - r["realized"]["hi"]) < 1e-12, r
    for f in sorted({r["fraction"] for r in runs}, reverse=True):
        print(f"== f = {f}")
        for kind in ("current", "farther"):
            cov, n, w = collections.Counter(), collections.Counter(), collections.Counter()
            for r in (r for r in runs if r["fraction"] == f):
                lo, hi = interval(r, kind)
                fam = r["preset"]
                n[fam] += 1
                cov[fam] += lo <= r["truth"] <= hi
                w[fam] += hi - lo
            tuned = [k for k in n if k not in HELD_OUT]
            width = 100 * sum(w[k] for k in tuned) / sum(n[k] for k in tuned)
            covered = sum(cov[k] for k in tuned)
            print(f"  {kind:8} tuning covers {covered}/{sum(n[k] for k in tuned)}, "
                  f"mean width {width:.2f} points")
            for k in sorted(n):
                print(f"    {k:22} {cov[k]}/{n[k]}  {100 * w[k] / n[k]:.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
