#!/usr/bin/env python3
"""Runs within ±30% of the width at 2f for the projections read from the CSV of
`crates/tailrank/examples/projection_law.rs` (docs/notes/2026-12-05-projection-law.md): the
adopted part-by-part projection, the stand-in's width (the mean over its draws, or its first
draw), the stand-in's spread with the adopted noise and trend, and their geometric means with
the adopted projection. Tuned and held-out families apart, and the median |ratio − 1|.

    cargo run --release -p tailrank --example projection_law -- 0..6 0.05 300 > tune05.csv
    python3 research/explore/projection_law_table.py tune05.csv [--families RULE]

`--families RULE` prints one row per family instead: projected/measured − 1 of each run.
"""

import csv
import math
import statistics
import sys


def rules(r):
    """Each rule's projection of the width at 2f for CSV row `r`."""
    g = lambda k: float(r[k])  # noqa: E731
    f = g("f")
    doublings = math.log2(1.0 / f)
    draws = sum(1 for k in r if k.startswith("w_") and k[2:].isdigit())
    mean = lambda key: sum(g(f"{key}_{d}") for d in range(draws)) / draws  # noqa: E731
    adopted = g("projected")
    n, t, s = g("n_f"), g("t_f"), g("s_f")
    trend = t * max(0.0, doublings - 1.0) / doublings
    stand_in = mean("w")
    spread = mean("s") + n / math.sqrt(2.0) + trend
    return {
        "adopted": adopted,
        "stand-in": stand_in,
        "stand-in, one draw": g("w_0"),
        "stand-in spread": spread,
        "stand-in spread and noise": mean("s") + mean("n") + trend,
        "sqrt(adopted * stand-in)": math.sqrt(adopted * stand_in),
        "sqrt(adopted * stand-in spread)": math.sqrt(adopted * spread),
        "spread max(stand-in, 0.8 s_f)": max(mean("s"), 0.8 * s) + n / math.sqrt(2.0) + trend,
        "W_f/sqrt2": g("w_f") / math.sqrt(2.0),
    }


def main():
    args = sys.argv[1:]
    by_family = None
    if "--families" in args:
        i = args.index("--families")
        by_family = args[i + 1]
        del args[i : i + 2]
    rows = [r for p in args for r in csv.DictReader(open(p))]
    rows = [r for r in rows if math.isfinite(float(r["measured"]))]
    if by_family:
        out = {}
        for r in rows:
            e = rules(r)[by_family] / float(r["measured"]) - 1.0
            out.setdefault(r["family"], []).append(e)
        for fam, es in out.items():
            hits = sum(abs(e) <= 0.3 for e in es)
            print(f"| {fam} | " + ", ".join(f"{100 * e:+.0f}%" for e in es) + f" ({hits}/{len(es)}) |")
        return
    print("| rule | tuned | held out | all | median abs(ratio − 1) |")
    print("|---|---:|---:|---:|---:|")
    for name in rules(rows[0]):
        hit = {"true": 0, "false": 0}
        runs = {"true": 0, "false": 0}
        errs = []
        for r in rows:
            e = rules(r)[name] / float(r["measured"]) - 1.0
            errs.append(abs(e))
            runs[r["held_out"]] += 1
            hit[r["held_out"]] += abs(e) <= 0.3
        total, n = hit["true"] + hit["false"], len(rows)
        print(
            f"| {name} | {hit['false']}/{runs['false']} | {hit['true']}/{runs['true']} | "
            f"{total} of {n} ({100 * total / n:.0f}%) | {statistics.median(errs):.3f} |"
        )


if __name__ == "__main__":
    main()
