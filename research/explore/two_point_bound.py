"""Exploration (docs/notes/2026-12-estimator-log.md, "Tried in the fourth session"): a two-point (Le Cam) bound on
what any estimator can promise. Pool B is pool A plus a rare component that puts Poisson(lam)
items above every positive of each query in the full pool; a fraction-f sample of Q queries
holds Poisson(lam f Q) of them in all, so the two samples differ in total variation by
TV = 1 - exp(-lam f Q). For any estimator, max over {A, B} of E|error| >= Delta (1 - TV) / 4,
Delta the mAP@1000 gap between the pools (here on the realized ranks of one simulated run).
Usage: python two_point_bound.py SIMDIR  (a `tailrank simulate` folder with levels.csv)."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
from endpoint_common import load
k = 1000
z = load(sys.argv[1]); j = z['j']; C = z['C']; qid = z['qid']; nq = z['nq']
npq = np.bincount(qid, minlength=nq)
ap = lambda v: 100 * np.mean(np.bincount(qid, weights=v, minlength=nq) / np.minimum(k, npq))
base = j + C + z['KN']
A = ap(np.where(base <= k, j / base, 0)); rng = np.random.default_rng(0)
for Q in [300, 1232]:
    for f in [0.05, 0.01]:
        best = (0, 0, 0, 0)
        for lam in [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0]:
            B = np.mean([ap(np.where(base + D[qid] <= k, j / (base + D[qid]), 0)) for D in (rng.poisson(lam, nq) for _ in range(20))])
            TV = 1 - np.exp(-lam * f * Q); bound = (A - B) / 4 * (1 - TV)
            if bound > best[0]:
                best = (bound, lam, A - B, TV)
        print('Q=%4d f=%.2f: lam %.2f items per query at N, Delta %.2f points, TV %.2f, bound %.2f points' % (Q, f, best[1], best[2], best[3], best[0]))
