"""Exploration (docs/notes/2026-12-estimator-log.md, "Tried in the fourth session"): calibrating the fitted tail's
mass on the held-out half of level 0 (the level-0 items outside level 1), two ways.

- `items`: every held-out item gets its fitted depth under level 1's fit, tau = S_1 x_hat_1(s)
  (0 past the fitted endpoint); m(tau) = held-out items with depth <= tau per query (per S_1
  items) is the realized mass of that region. Level-0 positives then get x = m(S_0 x_hat_0)/S_0
  (immune: the held-out items past level 1's endpoint by at least the positive's relative
  excess).
- `bins`: the same map from positives instead of items: per bin of fitted depth, the level-1
  positives' realized count K_0 - K_1 per unit exposure, printed beside level 0 -> N's
  (truth, for scoring only), and used as every level-0 positive's rate in that bin (`estimate`).

Points of mAP@1000 against the realized truth. Usage: python heldout_calibration.py
{items|bins|estimate} SIMDIR...  (folders of `tailrank simulate` with levels.csv)."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
from endpoint_common import load, ef_single
k = 1000
BINS = (0, 1e-6, 0.01, 0.05, 0.2, 1, 5, np.inf)


def top_lists(d):
    T = np.load(d + '/summary/top_scores.npy'); L = np.load(d + '/summary/top_len.npy').astype(np.int64)
    st = np.r_[0, np.cumsum(L.ravel())[:-1]].reshape(L.shape)
    return lambda q, l: T[st[q, l]:st[q, l] + L[q, l]].astype(float)


def held_out(top0, top1):
    """The multiset top0 minus the level-1 items among it (level 1 is nested in level 0)."""
    a = np.sort(top0); b = np.sort(top1[top1 >= top0[-1]]); out = []; ib = 0
    for v in a:
        while ib < len(b) and b[ib] < v:
            ib += 1
        if ib < len(b) and b[ib] == v:
            ib += 1
        else:
            out.append(v)
    return np.array(out)


def fitted_depth(s, u, sg, xi, nu):
    y = (s - u) / sg
    with np.errstate(all='ignore'):
        t = np.where(abs(xi) < 1e-9, np.exp(-y), np.clip(1 + xi * y, 0, None) ** (-1 / xi))
    return nu * np.where(s < u, np.inf, t)


def common(d):
    z = load(d); qid = z['qid']; nq = z['nq']; j = z['j']; C = z['C']
    npq = np.bincount(qid, minlength=nq)
    ap = lambda v: 100 * np.mean(np.bincount(qid, weights=v, minlength=nq) / np.minimum(k, npq))
    f = lambda jj, rk: np.where(rk <= k, jj / np.maximum(rk, 1), 0.0)
    br = z['br'][0]; x = np.where(br == 0, z['K'][:, 0] / z['S'][0], z['xh'][0])
    truth = f(j, j + C + z['KN'])
    return z, ap, f, br, x, truth


def items(d, lev=1):
    z, ap, f, br, x, truth = common(d); S = z['S']; N = z['N']; j = z['j']; C = z['C']; top = top_lists(d)
    first = np.r_[0, np.cumsum(np.bincount(z['qid'], minlength=z['nq']))[:-1]]
    taus, zs, qn = [], [], 0
    for q in range(z['nq']):
        i = first[q]; u, sg, xi = z['u'][lev][i], z['sg'][lev][i], z['xi'][lev][i]
        if not np.isfinite(u):
            continue
        qn += 1; h = held_out(top(q, 0), top(q, lev)); eh = u - sg / xi if xi < 0 else np.inf
        tau = fitted_depth(h, u, sg, xi, 200); tau[h >= eh] = 0
        taus.append(tau[tau < 5]); zs.append((h[h >= eh] - eh) / (eh - u))
    taus = np.sort(np.concatenate(taus)); zs = np.sort(np.concatenate(zs))
    scale = qn * (S[0] - S[lev]) / S[lev]
    m = lambda t: np.searchsorted(taus, t, side='right') / scale
    m_past = lambda zz: (len(zs) - np.searchsorted(zs, zz, side='left')) / scale
    u0, sg0, xi0 = z['u'][0], z['sg'][0], z['xi'][0]
    xt = x.copy(); tl = br == 1; im = br == 2
    xt[tl] = m(S[0] * z['xh'][0][tl]) / S[0]
    with np.errstate(all='ignore'):
        e0 = u0 - sg0 / xi0; rel = (z['sc'] - e0) / (e0 - u0)
    xt[im] = m_past(rel[im]) / S[0]
    T = ap(truth); new = f(j, j + C + N * xt); evt = f(j, j + C + N * x)
    print('%-24s held-out items at depth <= 0.05: %4d (a right fit: %3.0f), past the endpoint %3d | evt %+6.2f calibrated %+6.2f'
          % (os.path.basename(d.rstrip('/')), np.searchsorted(taus, .05, side='right'), .05 * scale, len(zs), ap(evt) - T, ap(new) - T))


def bins(d, estimate, lev=1):
    z, ap, f, br, x, truth = common(d); S = z['S']; N = z['N']; K = z['K']; j = z['j']; C = z['C']
    b1 = z['br'][lev]; tau1 = np.where(b1 == 2, 0, S[lev] * z['xh'][lev]); e1 = (S[0] - S[lev]) / S[lev]
    tau0 = np.where(br == 2, 0, S[0] * z['xh'][0]); e0 = (N - S[0]) / S[0]
    xt = x.copy(); name = os.path.basename(d.rstrip('/'))
    for a, b in zip(BINS[:-1], BINS[1:]):
        s1 = (b1 > 0) & (tau1 >= a) & (tau1 < b); s0 = (br > 0) & (tau0 >= a) & (tau0 < b)
        rate1 = (K[s1, 0] - K[s1, lev]).mean() / e1 if s1.any() else np.nan
        if not estimate:
            rate0 = (z['KN'][s0] - K[s0, 0]).mean() / e0 if s0.any() else np.nan
            print('%-24s depth [%g, %g): level 1 -> 0: %4d positives, rate %.3f | level 0 -> N: %4d, rate %.3f' % (name, a, b, s1.sum(), rate1, s0.sum(), rate0))
        elif s1.any():
            xt[s0] = rate1 / S[0]
    if estimate:
        T = ap(truth); evt = f(j, j + C + N * x); nb = br > 0
        cl = evt.copy(); cl[nb] = ef_single(j[nb], (j + C + K[:, 0])[nb], (N - S[0]) * xt[nb])
        print('%-24s evt %+6.2f | binned rates, expected rank %+6.2f, count law %+6.2f' % (name, ap(evt) - T, ap(f(j, j + C + N * xt)) - T, ap(cl) - T))


if __name__ == '__main__':
    mode = sys.argv[1]
    for d in sys.argv[2:]:
        items(d) if mode == 'items' else bins(d, mode == 'estimate')
