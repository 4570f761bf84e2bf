"""Exploration (docs/notes/2026-12-estimator-log.md, "What no estimator can know: the spread of a rare component"):
a Bayes-risk lower bound on the error of ANY estimator of the realized mAP@1000 when a rare
component's total rate is known but its spread over the queries is not.

Two pools built on the realized ranks of one simulated run (SIMDIR, a `tailrank simulate`
folder with levels.csv):
  A (even):          every query gets D_q ~ Poisson(lam) rare items above all of its positives;
  B (concentrated):  a query gets D_q ~ Poisson(lam/pi) with probability pi, else none.
Both put lam rare items per query at N on average. A fraction-f sample holds each rare item with
probability f, and everything else has the same law in A and B, so the sample's only clue is
the rare counts c_q ~ Binomial(D_q, f) (we even let the estimator see which sampled items are
rare). With the prior 1/2 on each pool, the Bayes risk of absolute loss,
  E_X[ E(|M - median(M | X)| | X) ],   M = realized mAP@1000 at N,
is a lower bound on max over {A, B} of E|T - M| for every estimator T. It has two parts, both
printed: the noise floor (the pool is known: the posterior spread of the unsampled rare items)
and what the unknown spread adds. M | X, pool is a sum of independent per-query terms and is
taken as normal (1,232 queries).

With --hit1 the metric is hit@1 instead (docs/notes/2026-12-estimator-log.md, "What no estimator can know about
hit@1"): a query hits at N when its top positive is first without the rare component and no
rare item is drawn for it; pools with pi = 0.5 are added.

Usage: python dispersion_bound.py SIMDIR F [Q] [--hit1]   (F the sample fraction; Q queries,
default all)
"""
import os, sys
import numpy as np
from scipy.stats import norm, poisson
sys.path.insert(0, os.path.dirname(__file__))
from endpoint_common import load

k = 1000
DMAX = 80
d = np.arange(DMAX + 1)


def ap_table(simdir, nq=None):
    """(nq, DMAX+1): AP_q(d), query q's AP@k in points with d more items above every positive,
    on the realized ranks of the run in simdir; and the number of queries."""
    z = load(simdir, levels=False)
    nq = z['nq'] if nq is None else nq
    keep = z['qid'] < nq
    j, qid, base = z['j'][keep], z['qid'][keep], (z['j'] + z['C'] + z['KN'])[keep]
    npq = np.bincount(qid, minlength=nq)
    rank = base[:, None] + d[None, :]
    term = np.where(rank <= k, j[:, None] / rank, 0.0)
    ap = np.zeros((nq, DMAX + 1))
    np.add.at(ap, qid, term)
    return 100 * ap / np.minimum(k, np.maximum(npq, 1))[:, None], nq


def hit_table(simdir, nq=None):
    """(nq, DMAX+1): hit@1 of query q in points with d more items above every positive: 100
    when d = 0 and its first positive is ranked first on the run's realized ranks, else 0."""
    z = load(simdir, levels=False)
    nq = z['nq'] if nq is None else nq
    first = (z['j'] == 1) & (z['qid'] < nq)
    top = np.zeros(nq, bool)
    top[z['qid'][first]] = (z['C'] + z['KN'])[first] == 0
    return 100.0 * top[:, None] * (d[None, :] == 0), nq


def count_pmf(c, lam, pi, f):
    """P(c_q) of each query's rare count under the pool with spread pi (pi = 1: pool A):
    pi * Poisson(c; lam f / pi) + (1 - pi) * [c = 0]."""
    return pi * poisson.pmf(c, lam * f / pi) + (1 - pi) * (c == 0)


def posterior(c, lam, pi, f):
    """(nq, DMAX+1) posterior pmf of D_q given c_q under the pool (pi = 1: pool A), and the
    log-likelihood of the counts."""
    r = lam / pi
    # Given activity, D - c ~ Poisson(r (1 - f)) independently of c (Poisson thinning).
    rest = poisson.pmf(d[None, :] - c[:, None], r * (1 - f))
    p_c = count_pmf(c, lam, pi, f)
    w_active = pi * poisson.pmf(c, r * f) / p_c
    post = w_active[:, None] * rest
    post[:, 0] += 1 - w_active  # inactive: D = 0 (only possible when c = 0)
    return post, np.log(p_c).sum()


def moments(post, APq):
    nq = len(APq)
    m = (post * APq).sum(1); v = (post * APq ** 2).sum(1) - m ** 2
    return m.sum() / nq, np.sqrt(max(v.sum(), 0)) / nq


def mixture_abs_dev(ws, mus, sds):
    """E|M - median| for the mixture sum_i ws_i N(mus_i, sds_i^2)."""
    lo, hi = min(mus) - 10 * max(sds), max(mus) + 10 * max(sds)
    cdf = lambda x: sum(w * norm.cdf(x, m, s) for w, m, s in zip(ws, mus, sds))
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < 0.5 else (lo, mid)
    med = (lo + hi) / 2
    # E|M - a| for a normal: s*(2 phi(t) + t(2 Phi(t) - 1)), t = (a - m)/s
    return sum(w * s * (2 * norm.pdf(t) + t * (2 * norm.cdf(t) - 1))
               for w, m, s, t in ((w, m, s, (med - m) / s) for w, m, s in zip(ws, mus, sds)))


def main():
    args = [a for a in sys.argv[1:] if a != '--hit1']
    hit1 = len(args) < len(sys.argv) - 1
    f = float(args[1])
    table = hit_table if hit1 else ap_table
    APq, nq = table(args[0], None if len(args) < 3 else int(args[2]))
    rng = np.random.default_rng(0)
    print(f'{args[0]}: {nq} queries, f = {f}; points of ' + ('hit@1' if hit1 else f'mAP@{k}'))
    print('lam  pi    | E[M] A  E[M] B  Delta | risk, pool known  risk, spread unknown  P(right pool | X)')
    for lam in [0.1, 0.3, 1.0, 3.0]:
        for pi in [0.5, 0.3, 0.1] if hit1 else [0.3, 0.1]:
            risk_known, risk, right, mA, mB = [], [], [], [], []
            for rep in range(200):
                for pool in (1.0, pi):
                    act = rng.random(nq) < pool
                    D = np.where(act, rng.poisson(lam / pool, nq), 0).clip(0, DMAX)
                    c = rng.binomial(D, f)
                    (pA, lA), (pB, lB) = posterior(c, lam, 1.0, f), posterior(c, lam, pi, f)
                    (muA, sA), (muB, sB) = moments(pA, APq), moments(pB, APq)
                    wA = 1 / (1 + np.exp(lB - lA))
                    risk.append(mixture_abs_dev([wA, 1 - wA], [muA, muB], [sA, sB]))
                    own = (muA, sA) if pool == 1.0 else (muB, sB)
                    risk_known.append(own[1] * np.sqrt(2 / np.pi))
                    right.append(wA if pool == 1.0 else 1 - wA)
                    M = APq[np.arange(nq), D].mean()
                    (mA if pool == 1.0 else mB).append(M)
            print(f'{lam:4.1f} {pi:4.2f}  | {np.mean(mA):6.2f}  {np.mean(mB):6.2f}  {np.mean(mB) - np.mean(mA):5.2f} |'
                  f' {np.mean(risk_known):8.3f}  {np.mean(risk):18.3f}  {np.mean(right):16.2f}')


if __name__ == '__main__':
    main()
