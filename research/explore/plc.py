"""Exploration for issue #15 (docs/notes/2026-12-estimator-log.md, "Level-calibrated count law"): the law of each
positive's unsampled count D = K_N - K_S learned on the nested levels, never on the truth.

For each level l in LEVELS (default 1..4) and every positive with K_l < c_min, the covariate is
the evt fit at level l: immune (x_hat = 0) or d = x_hat*S_l below EDGES[0] -> the "deep" bin, else d (the expected
count at level l) binned by EDGES. The response is Y = K_0 - K_l ~ Poisson(lambda*e) with
e = S_0/S_l - 1 (deep bin: lambda = S_l*x) or e = (S_0/S_l - 1)*d (tail bins: lambda is the
ratio x/x_hat). Per bin, the law of lambda is the NPMLE (EM on a log grid, ITERS steps) of the
pooled pairs of all levels. At level 0 a positive with K_0 < c_min in bin b gets
D ~ mixture of Poisson(lambda*(N/S_0 - 1)*[d_0]) over that law; the others keep the evt
x_hat (D ~ Poisson(x_hat*(N - S_0))). mAP@k is the expectation over those laws.

Needs per-level evt fits: `levels.csv` beside `summary/`, written by the example
`cargo run --release --example hardness_levels -- SIMDIR/summary > SIMDIR/levels.csv`
(done here when missing). Usage: python plc.py SIMDIR...  (folders of `tailrank simulate`).
"""
import os, sys, json, subprocess, numpy as np
from scipy.stats import poisson
k = 1000; CMIN = 5
LEVELS = [int(x) for x in os.environ.get('LEVELS', '1,2,3,4').split(',')]
EDGES = [float(x) for x in os.environ.get('EDGES', '1e-3,1e-2,0.05,0.2,1').split(',')]
ITERS = int(os.environ.get('ITERS', '300'))
GRID = np.concatenate([[0.0], np.logspace(-4, 3, 120)])
ROOT = os.path.join(os.path.dirname(__file__), '..', '..')

def npmle(y, e):
    """Weights on GRID maximising prod_i sum_g w_g Poisson(y_i; GRID_g * e_i) (EM from uniform)."""
    P = poisson.pmf(y[:, None], GRID[None, :] * e[:, None])
    w = np.full(len(GRID), 1.0 / len(GRID))
    for _ in range(ITERS):
        m = P @ w + 1e-300
        w = (P * w / m[:, None]).mean(0)
    return w

def load(d):
    s = d + '/summary'; m = json.load(open(s + '/manifest.json')); t = json.load(open(d + '/truth.json'))
    if not os.path.exists(d + '/levels.csv'):
        exe = os.path.join(ROOT, 'target/release/examples/hardness_levels')
        with open(d + '/levels.csv', 'w') as out:
            subprocess.run([exe, s], stdout=out, check=True)
    off = np.load(s + '/query_offsets.npy').astype(np.int64)
    K = (np.load(s + '/pos_pool_above.npy') + np.load(s + '/pos_pool_ties.npy')).astype(np.int64)
    C = (np.load(s + '/pos_core_above.npy') + np.load(s + '/pos_core_ties.npy')).astype(np.int64)
    KN = np.array([p['pool_above_n'] for q in t['queries'] for p in q['positives']])
    nq = len(off) - 1; qid = np.repeat(np.arange(nq), np.diff(off))
    j = np.concatenate([np.arange(1, n + 1) for n in np.diff(off)])
    lv = np.genfromtxt(d + '/levels.csv', delimiter=',', names=True)
    nl = int(lv['level'].max()) + 1; P = len(qid)
    return dict(K=K, C=C, KN=KN, S=np.array(m['subset_sizes'], float), N=float(m['pool_size']),
                nq=nq, qid=qid, j=j, xh=lv['x_hat'].reshape(nl, P), br=lv['branch'].reshape(nl, P).astype(int))

def bins(d, branch, low):
    """-1: not calibrated (count branch); 0: deep (immune, or d < EDGES[0]); 1..: tail bins of d."""
    out = np.full(len(d), -1)
    out[low & (branch == 2)] = 0
    tail = low & (branch == 1)
    out[tail] = np.searchsorted(EDGES, d[tail], side='right')
    return out

def pairs(z):
    """Per bin, the calibration pairs of every level: responses Y, exposures e and S_l/S_0."""
    K, S, xh, br = z['K'], z['S'], z['xh'], z['br']
    nb = len(EDGES) + 1; ys, es, ss = ([[] for _ in range(nb)] for _ in range(3))
    for l in LEVELS:
        dl = xh[l] * S[l]; b = bins(dl, br[l], K[:, l] < CMIN); e = S[0] / S[l] - 1
        for c in range(nb):
            m = b == c
            ys[c].append(K[m, 0] - K[m, l]); es[c].append(e * (np.ones(m.sum()) if c == 0 else dl[m]))
            ss[c].append(np.full(m.sum(), S[l] / S[0]))
    return [(np.concatenate(ys[c]), np.concatenate(es[c]), np.concatenate(ss[c])) for c in range(nb)]

def metrics(z):
    """(truth, evt-binomial error, error of the level-0 prediction given per-bin laws)."""
    K, S, N, xh, br, j, C, qid, nq = (z[x] for x in ('K', 'S', 'N', 'xh', 'br', 'j', 'C', 'qid', 'nq'))
    npq = np.bincount(qid, minlength=nq)
    ap = lambda v: 100 * np.mean(np.bincount(qid, weights=v, minlength=nq) / np.minimum(k, npq))
    f = lambda jj, r: np.where(r <= k, jj / np.maximum(r, 1), 0.0)
    truth = ap(f(j, j + C + z['KN']))
    R = N / S[0]; ms = np.arange(k + 1); base = j + C + K[:, 0]
    pm0 = poisson.pmf(ms[None, :], (xh[0] * (N - S[0]))[:, None])
    expected = lambda pm: ap((f(j[:, None], base[:, None] + ms[None, :]) * pm).sum(1))
    d0 = xh[0] * S[0]; b0 = bins(d0, br[0], K[:, 0] < CMIN)

    def error(laws):
        pm = pm0.copy()
        for i in np.where(b0 >= 0)[0]:
            w = laws[b0[i]]
            if w is None: continue
            scale = (R - 1) * (1.0 if b0[i] == 0 else d0[i]); sel = w > 1e-10
            pm[i] = (poisson.pmf(ms[:, None], GRID[None, sel] * scale) * w[None, sel]).sum(1)
        return expected(pm) - truth
    return truth, expected(pm0) - truth, error

def run(d):
    z = load(d)
    laws = [npmle(y, e) if len(y) else None for y, e, _ in pairs(z)]
    truth, evt, error = metrics(z)
    return truth, evt, error(laws)

if __name__ == '__main__':
    for d in sys.argv[1:]:
        t, e, p = run(d.rstrip('/'))
        print(f"{os.path.basename(d.rstrip('/')):32s} truth {t:6.2f}  evt-binomial {e:+6.2f}  level-calibrated {p:+6.2f}", flush=True)
