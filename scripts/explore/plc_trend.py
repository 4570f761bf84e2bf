"""Variant of plc.py (docs/predict.md, "Level-calibrated count law", negative results): the deep
bin's pairs fitted as Y ~ Poisson(mu * (S_l/S_0)^gamma * e), the NPMLE of mu for each gamma of
GAMMAS and the gamma of the largest likelihood kept (gamma = 0 is plc.py). FIXG=g forces one.
Prints truth, the evt (binomial) error, plc.py's error and this variant's, the chosen gamma and
the log-likelihoods relative to the best. Usage: python plc_trend.py SIMDIR...
"""
import os, sys, numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plc
from plc import npmle, load, bins, GRID, EDGES, LEVELS, CMIN, k
from scipy.stats import poisson
GAMMAS = [float(x) for x in os.environ.get('GAMMAS', '0,0.25,0.5,0.75,1').split(',')]
FIXG = os.environ.get('FIXG')

def loglik(y, e, w):
    P = poisson.pmf(y[:, None], GRID[None, :] * e[:, None])
    return np.log(P @ w + 1e-300).sum()

def run(d):
    z = load(d); K, S, N, xh, br, j, C, qid, nq = (z[x] for x in ('K', 'S', 'N', 'xh', 'br', 'j', 'C', 'qid', 'nq'))
    npq = np.bincount(qid, minlength=nq)
    ap = lambda v: 100 * np.mean(np.bincount(qid, weights=v, minlength=nq) / np.minimum(k, npq))
    f = lambda jj, r: np.where(r <= k, jj / np.maximum(r, 1), 0.0)
    truth = ap(f(j, j + C + z['KN']))
    R = N / S[0]; ms = np.arange(k + 1); base = j + C + K[:, 0]
    pm0 = poisson.pmf(ms[None, :], (xh[0] * (N - S[0]))[:, None])
    nb = len(EDGES) + 1; ys = [[] for _ in range(nb)]; es = [[] for _ in range(nb)]; ss = [[] for _ in range(nb)]
    for l in LEVELS:
        dl = xh[l] * S[l]; b = bins(dl, br[l], K[:, l] < CMIN); e = S[0] / S[l] - 1
        for c in range(nb):
            m = b == c
            ys[c].append(K[m, 0] - K[m, l]); es[c].append(e * (np.ones(m.sum()) if c == 0 else dl[m])); ss[c].append(np.full(m.sum(), S[l] / S[0]))
    cat = lambda v, c: np.concatenate(v[c])
    laws = [npmle(cat(ys, c), cat(es, c)) if sum(map(len, ys[c])) else None for c in range(nb)]
    # deep bin: profile over gamma, exposure e * (S_l/S_0)^gamma
    y0, e0, s0 = cat(ys, 0), cat(es, 0), cat(ss, 0)
    best = None
    lls = []
    for g in GAMMAS:
        eg = e0 * s0 ** g
        w = npmle(y0, eg); ll = loglik(y0, eg, w); lls.append(ll)
        if best is None or ll > best[0]: best = (ll, g, w)
    if FIXG is not None:
        g = float(FIXG); w = npmle(y0, e0 * s0 ** g); best = (0, g, w)
    out = {}
    for name, deep in (('cal', laws[0]), ('gam', best[2])):
        pm = pm0.copy()
        L = list(laws); L[0] = deep
        d0 = xh[0] * S[0]; b0 = bins(d0, br[0], K[:, 0] < CMIN)
        for i in np.where(b0 >= 0)[0]:
            w = L[b0[i]]
            if w is None: continue
            scale = (R - 1) * (1.0 if b0[i] == 0 else d0[i]); sel = w > 1e-10
            pm[i] = (poisson.pmf(ms[:, None], GRID[None, sel] * scale) * w[None, sel]).sum(1)
        out[name] = ap((f(j[:, None], base[:, None] + ms[None, :]) * pm).sum(1)) - truth
    evt = ap((f(j[:, None], base[:, None] + ms[None, :]) * pm0).sum(1)) - truth
    return truth, evt, out['cal'], out['gam'], best[1], [round(x - max(lls), 1) for x in lls]

if __name__ == '__main__':
    for d in sys.argv[1:]:
        t, e, c, g, gam, lls = run(d.rstrip('/'))
        print(f"{os.path.basename(d.rstrip('/')):32s} truth {t:6.2f} evt {e:+6.2f} cal {c:+6.2f} gamma-cal {g:+6.2f} (g={gam}) {lls}", flush=True)
