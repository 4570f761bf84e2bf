import json, sys, warnings
import numpy as np
from scipy import stats, optimize
warnings.filterwarnings("ignore")

def bounded_ref(y):
    ymax = y.max()
    def nll(p):
        xi = -1.0 / (1.0 + np.exp(-p[0]))
        sigma = -xi * ymax + np.exp(p[1])
        ll = stats.genpareto.logpdf(y, xi, 0, sigma).sum()
        return -ll if np.isfinite(ll) else 1e300
    best = None
    for a0 in (-2.0, 2.0):
        for e0 in (np.log(y.mean()),):
            r = optimize.minimize(nll, [a0, e0], method="Nelder-Mead",
                                  options=dict(xatol=1e-10, fatol=1e-12, maxiter=20000))
            if best is None or r.fun < best.fun:
                best = r
    xi = -1.0 / (1.0 + np.exp(-best.x[0]))
    sigma = -xi * ymax + np.exp(best.x[1])
    return xi, sigma, -best.fun

out = []
spec = json.loads(sys.argv[1])
for name, c, n, seed, rnd in spec:
    rng = np.random.default_rng(seed)
    y = stats.genpareto.rvs(c, loc=0, scale=0.02, size=n, random_state=rng)
    if rnd:
        y = np.round(y, rnd)
    y = np.abs(y)
    c_s, _, s_s = stats.genpareto.fit(y, floc=0)
    ll_s = stats.genpareto.logpdf(y, c_s, 0, s_s).sum()
    xi_r, s_r, ll_r = bounded_ref(y)
    out.append(dict(name=name, y=y.tolist(), scipy=[c_s, s_s, ll_s], bounded=[xi_r, s_r, ll_r]))
print(json.dumps(out))
