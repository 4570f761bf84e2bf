"""Exploration (docs/notes/2026-12-estimator-log.md, "The plausible fits as the verdict's fit-choice test"): score
verdict rules that replace the fit-choice test (the paper's fit against the estimate) by the
spread at N of the *plausible* fits: the candidates of the level-selected grid whose level-1
in-sample error is within z paired SEs of the chosen one's, `|e_1(c)| − |e_1(c*)| ≤ z·SE(e_1(c) −
e_1(c*))`. Needs run files written by a binary that records each candidate's `map_at_n` and
`paired_se`: `git apply research/explore/plausible_spread.patch`, a throwaway patch that also
fits every candidate at level 0. Hit = flagged among runs with |error| > 1
point, FA = flagged among runs under 0.5 point; tuned families (hubs left out).
Usage: plausible_spread.py RUNS.json..."""
import json, sys

from verdict_rules import FIT_TOL, fired, score


def spread(r, z):
    c = r["level_selected_fit"]
    cs, k = c["candidates"], c["chosen"]
    e0 = abs(cs[k]["in_sample_error"])
    vals = [x["map_at_n"] for x in cs if abs(x["in_sample_error"]) - e0 <= z * x["paired_se"] or x is cs[k]]
    return max(vals) - min(vals), len(vals)


for path in sys.argv[1:]:
    runs = [r for r in json.load(open(path))["runs"] if r.get("trust") and r["preset"] != "hubs"]
    print(path, len(runs), "runs")
    other = lambda r: r["verdict"] == "doubtful" and not any(fired(r).values())  # degenerate input
    rules = {"as built": lambda r: r["verdict"] == "doubtful",
             "without the fit-choice test": lambda r: other(r) or any(v for k, v in fired(r).items() if k != "fit")}
    for z in (1, 2, 3):
        rules[f"plausible spread (z = {z}) > 1 point"] = (
            lambda r, z=z: rules["without the fit-choice test"](r) or spread(r, z)[0] > FIT_TOL)
    for name, f in rules.items():
        score(runs, lambda r, f=f: bool(f(r)), name)
    print("  per family (as built | z = 2): error, plausible fits, spread")
    for fam in sorted({r["preset"] for r in runs}):
        rs = [r for r in runs if r["preset"] == fam]
        cells = [f"{100 * (r['evt'] - r['truth']):+.1f}/{spread(r, 2)[1]}/{100 * spread(r, 2)[0]:.1f}"
                 f"{'*' if r['verdict'] == 'doubtful' else ''}" for r in rs]
        print(f"    {fam:20s} " + " ".join(cells))
