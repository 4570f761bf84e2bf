#!/usr/bin/env python3
"""The corpus read step by step (docs/reference/validation.md, "Growing the sample"): from the
CSV of `examples/next_step_validation.rs` (one row per family and seed: the nested cuts f/2, f
and 2f of one simulated 2f summary), print per step the mean |error| against the truth, the
mean realized width, how often the next-step projection from the previous step was within
±30% of the width at this step, and the verdict's turns.

    cargo run --release -p tailrank --example next_step_validation -- 0..6 0.05 300 \\
        | python3 scripts/grow_corpus_table.py [--families]

The projection is `predict::next_step::WidthParts::projected(1)`, recomputed from the printed
parts: `s + n/√2 + t·(L − 1)/L` with `L = log2(N/S) = log2(1/f)`; each row's recomputed
projection from f must equal the example's own `projected_2f` (the script stops otherwise).
"""

import csv
import math
import sys
from collections import defaultdict


def projected(w, n, t, s, f):
    big_l = math.log2(1 / f)
    return s + n / math.sqrt(2) + t * (big_l - 1) / big_l


def steps(d):
    """The three cuts of one run: (fraction, error, width, verdict, parts or None)."""
    g = lambda k: float(d[k])
    f = g("f")
    return [
        (f / 2, g("err_h"), g("w_h"), d["verdict_h"], (g("w_h"), g("n_h"), g("t_h"), g("s_h"))),
        (f, g("err_f"), g("w_f"), d["verdict_f"], (g("w_f"), g("noise"), g("trend"), g("spread"))),
        (2 * f, g("err_2f"), g("measured_2f"), d["verdict_2f"], None),
    ]


def main():
    by_family = "--families" in sys.argv[1:]
    agg = defaultdict(lambda: defaultdict(list))
    for d in csv.DictReader(sys.stdin):
        key = d["family"] if by_family else ("held out" if d["held_out"] == "true" else "tuned")
        cuts = steps(d)
        mine, rust = projected(*cuts[1][4], cuts[1][0]), float(d["projected_2f"])
        if abs(mine - rust) > 1e-5 + 1e-4 * rust:
            sys.exit(f"{d['family']} seed {d['seed']}: projection {mine:.5f} here, "
                     f"{rust:.5f} in the example's projected_2f")
        for i, (f, err, w, verdict, _) in enumerate(cuts):
            a = agg[(key, f)]
            a["err"].append(abs(100 * err))
            a["width"].append(100 * w)
            a["trusted"].append(verdict == "trusted")
            if i > 0:
                pf, _, _, pv, parts = cuts[i - 1]
                a["proj"].append(abs(projected(*parts, pf) / w - 1) <= 0.3)
                if pv == "doubtful" and verdict == "trusted":
                    a["turned"].append(abs(100 * err))
                a["back"].append(pv == "trusted" and verdict == "doubtful")
    print("| families | f | runs | mean abs error | mean width | projected width within ±30% "
          "| trusted | doubtful → trusted (mean abs error after) | trusted → doubtful |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    order = lambda kv: (kv[0][0] == "held out", kv[0][0] if by_family else "", kv[0][1])
    for (key, f), a in sorted(agg.items(), key=order):
        n = len(a["err"])
        mean = lambda xs: sum(xs) / len(xs)
        first = not a["proj"]
        proj = "–" if first else f"{sum(a['proj'])}/{len(a['proj'])}"
        turned = "–" if first else (
            f"{len(a['turned'])} ({mean(a['turned']):.2f})" if a["turned"] else "0")
        back = "–" if first else str(sum(a["back"]))
        print(f"| {key} | {100 * f:g}% | {n} | {mean(a['err']):.2f} | {mean(a['width']):.1f} "
              f"| {proj} | {sum(a['trusted'])}/{n} | {turned} | {back} |")


if __name__ == "__main__":
    main()
