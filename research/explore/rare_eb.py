"""Exploration (docs/notes/2026-12-estimator-log.md, "The excess-mass reading"): a per-query rate of rare items past
the fitted endpoints, pooled over queries by empirical Bayes. The levels 1-3 immune positives of
query q are outranked at level 0 with probability 1 - (1 - p_i) exp(-dS_l r_q), p_i the
endpoint law's; the mixing law of r_q over queries is the NPMLE on a grid (EM), and each level-0
immune positive's expected AP term is averaged over its query's posterior, with
D ~ Poisson((N - S) r). Printed beside evt and the pooled rate of rare_rate.py (one r for all).
Points of mAP@1000; the truth is used for scoring only.
Usage: python rare_eb.py SIMDIR...  (with levels.csv, and boot_200.npz in the current folder)."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
from endpoint_common import load, immune_rates, ef_single
from rare_rate import solve_rate
k = 1000

def run(d, levels=(1, 2, 3)):
    z = load(d); S = z['S']; K = z['K']; N = z['N']; j = z['j']; C = z['C']; qid = z['qid']; nq = z['nq']
    P_, DS, O_, Q_ = [], [], [], []
    for l in levels:
        imm = np.where((z['br'][l] == 2) & (z['xi'][l] < 0))[0]
        e = (S[0] - S[l]) / S[l]
        L = immune_rates(z['sc'][imm], z['u'][l][imm], z['sg'][l][imm], z['xi'][l][imm], np.full(len(imm), 200)) * e
        P_.append((1 - np.exp(-L)).mean(1)); DS.append(np.full(len(imm), S[0] - S[l]))
        O_.append((K[imm, 0] > K[imm, l]).astype(float)); Q_.append(qid[imm])
    p = np.concatenate(P_); ds = np.concatenate(DS); o = np.concatenate(O_); qq = np.concatenate(Q_)
    r1 = solve_rate(p, ds, o.sum())
    grid = np.concatenate([[0.0], np.logspace(-11, -5, 49)])
    # per-case likelihood on grid
    stay = (1 - p)[:, None] * np.exp(-ds[:, None] * grid[None, :])
    lik = np.where(o[:, None] > 0, 1 - stay, stay)
    ll = np.zeros((nq, len(grid)))
    np.add.at(ll, qq, np.log(np.maximum(lik, 1e-300)))
    Lq = np.exp(ll - ll.max(1, keepdims=True))
    w = np.full(len(grid), 1.0 / len(grid))
    for _ in range(500):
        post = Lq * w; post /= post.sum(1, keepdims=True)
        w = post.mean(0)
    post = Lq * w; post /= post.sum(1, keepdims=True)
    npq = np.bincount(qid, minlength=nq)
    ap = lambda v: 100 * np.mean(np.bincount(qid, weights=v, minlength=nq) / np.minimum(k, npq))
    f = lambda jj, rk: np.where(rk <= k, jj / np.maximum(rk, 1), 0.0)
    br = z['br'][0]; x = np.where(br == 0, K[:, 0] / S[0], z['xh'][0])
    T = ap(f(j, j + C + z['KN']))
    evt = f(j, j + C + N * x)
    im = np.where(br == 2)[0]
    eb = evt.copy(); pooled = evt.copy()
    pooled[im] = ef_single(j[im], (j + C)[im], np.full(len(im), (N - S[0]) * r1))
    acc = np.zeros(len(im))
    for g, rg in enumerate(grid):
        wt = post[qid[im], g]
        if rg == 0:
            acc += wt * evt[im]
        else:
            acc += wt * ef_single(j[im], (j + C)[im], np.full(len(im), (N - S[0]) * rg))
    eb[im] = acc
    mean_r = (w * grid).sum()
    print('%-18s O=%3d P=%5.1f N*r1=%5.2f N*E[r]=%5.2f P(r>0)=%.2f | evt %+5.2f pooled %+6.2f eb %+6.2f' % (
        os.path.basename(d.rstrip('/')), o.sum(), p.sum(), r1 * N, mean_r * N, w[1:].sum(), ap(evt) - T, ap(pooled) - T, ap(eb) - T), flush=True)

if __name__ == '__main__':
    for d in sys.argv[1:]:
        run(d)
