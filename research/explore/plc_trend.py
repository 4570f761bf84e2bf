"""Variant of plc.py (docs/notes/2026-12-estimator-log.md, "Level-calibrated count law", negative results): the deep
bin's pairs fitted as Y ~ Poisson(mu * (S_l/S_0)^gamma * e), the NPMLE of mu for each gamma of
GAMMAS and the gamma of the largest likelihood kept (gamma = 0 is plc.py). FIXG=g forces one.
Prints truth, the evt (binomial) error, plc.py's error and this variant's, the chosen gamma and
the log-likelihoods relative to the best. Usage: python plc_trend.py SIMDIR...
"""
import os, sys, numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plc import npmle, load, pairs, metrics, GRID
from scipy.stats import poisson
GAMMAS = [float(x) for x in os.environ.get('GAMMAS', '0,0.25,0.5,0.75,1').split(',')]
FIXG = os.environ.get('FIXG')

def loglik(y, e, w):
    P = poisson.pmf(y[:, None], GRID[None, :] * e[:, None])
    return np.log(P @ w + 1e-300).sum()

def run(d):
    z = load(d)
    pr = pairs(z)
    laws = [npmle(y, e) if len(y) else None for y, e, _ in pr]
    # deep bin: profile over gamma, exposure e * (S_l/S_0)^gamma
    y0, e0, s0 = pr[0]
    best, lls = None, []
    for g in GAMMAS:
        eg = e0 * s0 ** g
        w = npmle(y0, eg); ll = loglik(y0, eg, w); lls.append(ll)
        if best is None or ll > best[0]: best = (ll, g, w)
    if FIXG is not None:
        g = float(FIXG); best = (0, g, npmle(y0, e0 * s0 ** g))
    truth, evt, error = metrics(z)
    return truth, evt, error(laws), error([best[2]] + laws[1:]), best[1], [round(x - max(lls), 1) for x in lls]

if __name__ == '__main__':
    for d in sys.argv[1:]:
        t, e, c, g, gam, lls = run(d.rstrip('/'))
        print(f"{os.path.basename(d.rstrip('/')):32s} truth {t:6.2f} evt {e:+6.2f} cal {c:+6.2f} gamma-cal {g:+6.2f} (g={gam}) {lls}", flush=True)
