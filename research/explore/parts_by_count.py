"""Exploration (docs/notes/2026-12-estimator-log.md, "Tried in the fourth session"): evt's level-0 error split by
the positives' sample count: immune, tail branch with K_S = 0, tail branch with 1 <= K_S < c_min;
each part is the error the group adds when every other positive gets its realized AP term
(truth for scoring only), beside the same group under the count estimate K_S/S.
Usage: python parts_by_count.py SIMDIR...  (folders of `tailrank simulate` with levels.csv)."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
from endpoint_common import load
k = 1000
for d in sys.argv[1:]:
    z = load(d); S = z['S'][0]; N = z['N']; K = z['K'][:, 0]; j = z['j']; C = z['C']; qid = z['qid']; nq = z['nq']
    br = z['br'][0]
    npq = np.bincount(qid, minlength=nq)
    ap = lambda v: 100 * np.mean(np.bincount(qid, weights=v, minlength=nq) / np.minimum(k, npq))
    f = lambda jj, rk: np.where(rk <= k, jj / np.maximum(rk, 1), 0.0)
    truth = f(j, j + C + z['KN']); T = ap(truth)
    evt = f(j, j + C + N * np.where(br == 0, K / S, z['xh'][0])); count = f(j, j + C + N * K / S)
    out = []
    for name, m in [('immune', br == 2), ('tail K=0', (br == 1) & (K == 0)), ('tail K=1..4', (br == 1) & (K > 0))]:
        out.append('%s n=%d evt %+5.2f count %+5.2f' % (name, m.sum(), ap(np.where(m, evt, truth)) - T, ap(np.where(m, count, truth)) - T))
    print('%-24s evt %+5.2f | ' % (os.path.basename(d.rstrip('/')), ap(evt) - T) + ' | '.join(out))
