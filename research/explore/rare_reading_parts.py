"""Notes: docs/notes/2026-12-06-spacing-centre.md, "Why the reading overshoots". For a
`tailrank simulate` folder with the level-0 hardness written beside it
(`tailrank predict --summary D/summary --hardness-out D/h.csv`), the error of the binomial map
(Poisson approximation, E[j/(j+c) 1[j+c <= k]]) per hardness branch against the realized
counts of truth.json, in points of mAP@k: the tail model's own, and with MU extra items per
query added to every positive (the even-spread reading of rare items above the top positive).
Needs numpy and scipy. Usage: python3 rare_reading_parts.py DIR [MU]"""
import csv
import json
import sys
import numpy as np
from scipy.stats import poisson

K = 1000


def term(lam, j):
    if lam < 1e-12:
        return 1.0 if j <= K else 0.0
    c = np.arange(0, max(K - j + 1, 0))
    return float(np.sum(poisson.pmf(c, lam) * j / (j + c)))


def parts(d, mu):
    t = json.load(open(f"{d}/truth.json"))
    n_pool = t["pool_size"]
    count, npos = {}, {}
    for q in t["queries"]:
        npos[q["id"]] = len(q["positives"])
        for p in q["positives"]:
            count[(q["id"], p["id"])] = p["pool_above_n"]
    rows = csv.DictReader(l for l in open(f"{d}/h.csv") if not l.startswith("#"))
    acc = {}
    for r in rows:
        j, qid = int(r["j"]), r["query_id"]
        w = 100 / min(K, npos[qid]) / len(npos)
        c = count[(qid, r["positive_id"])]
        truth = j / (j + c) if j + c <= K else 0.0
        lam = float(r["x_hat"]) * n_pool
        a = acc.setdefault(r["branch"], np.zeros(2))
        a += w * np.array([term(lam, j) - truth, term(lam + mu, j) - truth])
    return t["map_at_k"], acc


d, mu = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
m, acc = parts(d, mu)
print(f"{d}: truth {100 * m:.2f}")
for b, (own, read) in acc.items():
    print(f"  {b:7s} tail model {own:+.2f}  with {mu} items per query {read:+.2f}")
