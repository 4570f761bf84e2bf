#!/usr/bin/env python3
"""Growth validation (docs/reference/validation.md, "Growing the sample"): on simulated vector benchmarks,
grow a hash sample 1% -> 2% -> 5% -> 10% with `sample --after`, `scan --after` and `grow`, predict
mAP@1000 at each step, and compare with the exact mAP@1000 of a whole-pool scan and with the
prediction from a direct scan of the same sample.

    python3 scripts/grow_validation.py --out /tmp/growval --seeds 3 [--pool-size 200000] \
        [--geometry clustered,burst] [--tailrank target/release/tailrank]

Prints one row per (geometry, seed, fraction): error of the grown prediction, realized interval
width, verdict, the grown prediction minus the direct scan's, and whether the next step's
projected width at 2f (`next_step.projected_width` of the previous step) was within ±30% of
this width (the doubling steps 1% -> 2% and 5% -> 10% only). Needs numpy.
"""

import argparse
import json
import os
import subprocess

import numpy as np

CHAIN = [0.01, 0.02, 0.05, 0.1]


def run(tr, *args):
    r = subprocess.run([tr, *map(str, args)], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"tailrank {' '.join(map(str, args))} failed:\n{r.stderr}")
    return r.stdout


def rows(d, ids_file, name):
    """The pool rows of the ids listed in `ids_file` (the user's embedding step)."""
    ids = open(os.path.join(d, "sim/pool.ids.txt")).read().split()
    want = set(open(ids_file).read().split())
    keep = [j for j, i in enumerate(ids) if i in want]
    np.save(os.path.join(d, name + ".npy"), np.load(os.path.join(d, "sim/pool.npy"))[keep])
    with open(os.path.join(d, name + ".ids.txt"), "w") as f:
        f.write("".join(ids[j] + "\n" for j in keep))
    return os.path.join(d, name + ".npy")


def predict(tr, summary, n):
    p = json.loads(run(tr, "predict", "--summary", summary, "--pool-size", n, "--json"))
    lo, hi = p["realized"]["map_at_k_realized_interval"]
    return dict(map=100 * p["map_at_k"], lo=100 * lo, hi=100 * hi,
                verdict=p["trust"]["verdict"],
                projected=100 * (p["next_step"].get("projected_width") or float("nan")))


def one(tr, d, geometry, seed, n):
    os.makedirs(d, exist_ok=True)
    run(tr, "simulate", "--vectors", "--geometry", geometry, "--pool-size", n, "--seed", seed,
        "-o", os.path.join(d, "sim"))
    s = os.path.join(d, "sim")
    common = ["--queries", f"{s}/queries.npy", "--core", f"{s}/core.npy", "--gt", f"{s}/gt.json",
              "--pool-size", n, "--seed", seed]
    run(tr, "scan", *common, "--pool", f"{s}/pool.npy", "-o", f"{d}/full")
    truth = 100 * json.loads(run(tr, "eval", "--summary", f"{d}/full", "--json"))["sets"][0]["map_at_k"]
    out, prev, prev_projected = [], None, None
    for f in CHAIN:
        ids = f"{d}/ids{f}.txt"
        after = [] if prev is None else ["--after", prev]
        run(tr, "sample", "--ids", f"{s}/pool.ids.txt", "--fraction", f, "--seed", seed, *after,
            "-o", ids)
        pool = rows(d, ids, f"rows{f}")
        if prev is None:
            run(tr, "scan", *common, "--pool", pool, "--fraction", f, "-o", f"{d}/grown{f}")
        else:
            run(tr, "scan", *common, "--pool", pool, "--fraction", f, *after, "-o", f"{d}/part{f}")
            run(tr, "grow", f"{d}/grown{prev}", f"{d}/part{f}", "-o", f"{d}/grown{f}")
        run(tr, "scan", *common, "--pool", f"{s}/pool.npy", "--fraction", f, "-o", f"{d}/direct{f}")
        g, di = predict(tr, f"{d}/grown{f}", n), predict(tr, f"{d}/direct{f}", n)
        doubled = prev is not None and abs(f / prev - 2) < 1e-9
        within = (abs(prev_projected / (g["hi"] - g["lo"]) - 1) <= 0.3) if doubled else None
        out.append(dict(geometry=geometry, seed=seed, fraction=f, truth=truth,
                        error=g["map"] - truth, width=g["hi"] - g["lo"],
                        covers=g["lo"] <= truth <= g["hi"], verdict=g["verdict"],
                        minus_direct=g["map"] - di["map"], direct_verdict=di["verdict"],
                        projected_before=prev_projected if doubled else None,
                        projection_within_30=within))
        prev, prev_projected = f, g["projected"]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--pool-size", type=int, default=200000)
    ap.add_argument("--geometry", default="clustered")
    ap.add_argument("--tailrank", default="target/release/tailrank")
    ap.add_argument("--json", default=None, help="also write the rows as JSON here")
    a = ap.parse_args()
    tr = os.path.abspath(a.tailrank)
    rows_all = []
    print("geometry   seed  f(%)  truth  error  width  covers  verdict    grown-direct  "
          "projected  within30")
    for g in a.geometry.split(","):
        for seed in range(a.seeds):
            for r in one(tr, os.path.join(a.out, f"{g}-{seed}"), g, seed, a.pool_size):
                rows_all.append(r)
                print(f"{g:<10} {seed:>4} {100 * r['fraction']:>5g} {r['truth']:6.2f} "
                      f"{r['error']:+6.2f} {r['width']:6.2f} {str(r['covers']):>6}  "
                      f"{r['verdict']:<10} {r['minus_direct']:+6.2f}        "
                      f"{'' if r['projected_before'] is None else format(r['projected_before'], '6.2f'):>6}"
                      f"  {'' if r['projection_within_30'] is None else r['projection_within_30']}",
                      flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows_all, f, indent=1)


if __name__ == "__main__":
    main()
