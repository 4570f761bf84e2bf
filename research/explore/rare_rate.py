"""Exploration (docs/notes/2026-12-estimator-log.md, "Tried in the fourth session"): one pooled rate of rare items
past the fitted endpoints, solved from the endpoint test's excess, given to every level-0
immune positive. Levels 1-3: sum_i [1 - (1 - p_i) exp(-dS_l r)] = O, p_i the endpoint law's
probability; then immune x = r at N (expected-rank map, or the count law with Poisson((N - S) r)).
Reports the run's error and the immune part (points of mAP@1000; truth for scoring only).
Usage: python rare_rate.py SIMDIR...  (with levels.csv, and boot_200.npz in the current folder)."""
import os, sys
import numpy as np
from scipy.optimize import brentq
sys.path.insert(0, os.path.dirname(__file__))
from endpoint_common import load, immune_rates, ef_single
k = 1000


def solve_rate(p, dS, O):
    f = lambda r: (1 - (1 - p) * np.exp(-dS * r)).sum() - O
    if f(0) >= 0:
        return 0.0
    hi = 1e-12
    while f(hi) < 0:
        hi *= 4
    return brentq(f, 0, hi)


def run(d, levels=(1, 2, 3)):
    z = load(d); S = z['S']; K = z['K']; N = z['N']; j = z['j']; C = z['C']; qid = z['qid']; nq = z['nq']
    ps, dss, O = [], [], 0
    for l in levels:
        imm = np.where((z['br'][l] == 2) & (z['xi'][l] < 0))[0]
        e = (S[0] - S[l]) / S[l]
        L = immune_rates(z['sc'][imm], z['u'][l][imm], z['sg'][l][imm], z['xi'][l][imm], np.full(len(imm), 200)) * e
        ps.append((1 - np.exp(-L)).mean(1)); dss.append(np.full(len(imm), S[0] - S[l]))
        O += (K[imm, 0] > K[imm, l]).sum()
    p = np.concatenate(ps); r = solve_rate(p, np.concatenate(dss), O)
    npq = np.bincount(qid, minlength=nq)
    ap = lambda v: 100 * np.mean(np.bincount(qid, weights=v, minlength=nq) / np.minimum(k, npq))
    f = lambda jj, rk: np.where(rk <= k, jj / np.maximum(rk, 1), 0.0)
    br = z['br'][0]; x = np.where(br == 0, K[:, 0] / S[0], z['xh'][0])
    truth = f(j, j + C + z['KN']); T = ap(truth)
    evt = f(j, j + C + N * x)
    er = f(j, j + C + N * np.where(br == 2, r, x))
    im = br == 2
    pois = evt.copy(); pois[im] = ef_single(j[im], (j + C)[im], np.full(im.sum(), (N - S[0]) * r))
    part = lambda v: ap(np.where(im, v, truth)) - T
    print('%-24s O=%4d P=%6.1f N*r=%5.2f | evt %+5.2f rate(er) %+5.2f rate(count law) %+5.2f | immune part %+5.2f -> %+5.2f / %+5.2f'
          % (os.path.basename(d.rstrip('/')), O, p.sum(), r * N, ap(evt) - T, ap(er) - T, ap(pois) - T, part(evt), part(er), part(pois)), flush=True)


if __name__ == '__main__':
    for d in sys.argv[1:]:
        run(d)
