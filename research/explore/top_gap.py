"""Exploration (docs/notes/2026-12-estimator-log.md, "Tried in the fourth session"): can one query's own sample say
that a rare component sits above its main tail? Among the queries with level-0 immune positives,
compare those whose immune positives the full pool outranks (truth, for scoring only) with the
others, on two per-query statistics of the sample's top scores t_1 >= t_2 >= ...: the top gap
(t_1 - t_2)/(t_2 - t_20) and the room left under the fitted endpoint (e_hat - t_1)/(t_1 - t_200)
(Mann-Whitney p-values). Usage: python top_gap.py SIMDIR...  (with levels.csv)."""
import os, sys
import numpy as np
from scipy.stats import mannwhitneyu
sys.path.insert(0, os.path.dirname(__file__))
from endpoint_common import load
for d in sys.argv[1:]:
    z = load(d); T = np.load(d + '/summary/top_scores.npy'); L = np.load(d + '/summary/top_len.npy').astype(np.int64)
    st = np.r_[0, np.cumsum(L.ravel())[:-1]].reshape(L.shape)
    t = np.stack([T[st[q, 0]:st[q, 0] + 200] for q in range(L.shape[0])]).astype(float)
    qid = z['qid']; nq = z['nq']; br = z['br'][0]; K = z['K'][:, 0]; imm = br == 2
    outranked = np.zeros(nq, bool); has = np.zeros(nq, bool)
    np.logical_or.at(outranked, qid[imm], (z['KN'] - K)[imm] > 0); np.logical_or.at(has, qid[imm], True)
    first = np.r_[0, np.cumsum(np.bincount(qid, minlength=nq))[:-1]]
    with np.errstate(all='ignore'):
        eh = (z['u'][0] - z['sg'][0] / z['xi'][0])[first]
    gap = (t[:, 0] - t[:, 1]) / (t[:, 1] - t[:, 19]); room = (eh - t[:, 0]) / (t[:, 0] - t[:, 199])
    a, b = has & outranked, has & ~outranked
    print('%-24s queries with immune positives %d, outranked at N %d | top gap median %.3f vs %.3f (p %.2g) | room %.3f vs %.3f (p %.2g)'
          % (os.path.basename(d.rstrip('/')), has.sum(), a.sum(), np.median(gap[a]), np.median(gap[b]), mannwhitneyu(gap[a], gap[b]).pvalue,
             np.median(room[a]), np.median(room[b]), mannwhitneyu(room[a], room[b]).pvalue))
