"""Notes: docs/notes/2026-12-06-level-probes.md. Two routes for the tail and immune branches,
read from corpus runs kept by `tailrank simulate --preset P --queries 300 --seed S --fraction F
--out DIR` after `web_tail_branch.py hardness DIR` (DIR/an-def.pkl: the level-selected fit's
per-positive x̂ and terms, against the realized K_N) and the per-level fits of the
`hardness_levels` example at that fit (DIR/levels.csv, `hardness_levels DIR/summary M Q`).

  level_probes.py censor K DIR...     # refit each query with its top K excesses censored at
                                      #  y_(K+1); the change of the run's error (ER map)
  level_probes.py calibration DIR...  # level 1 -> level 0: realized / predicted new items above
                                      #  the tail positives, by depth d = S_1·x̂, beside the same
                                      #  ratio read from probe thresholds placed by the fit
  level_probes.py probes LEVELS DIR.. # the probes' per-depth law (NPMLE) applied to level 0:
                                      #  the run's error under the count law, tail / immune parts
  level_probes.py scales LEVELS DIR.. # the positives' own scales (realized / predicted new items
                                      #  per depth band of the tail, the immune positives' new
                                      #  items per exposure) applied to level 0's x̂
Needs numpy, scipy and pandas."""
import collections
import json
import math
import pickle
import sys

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar
from scipy.stats import poisson

K = 1000
DEPTHS = 2.0 ** (-np.arange(0, 13) / 2)  # probe depths d = S_l·x̂ from 1 to 1/64
ZS = np.array([0, 0.02, 0.05, 0.1, 0.2, 0.4, 0.8])  # probes past the fitted endpoint
GRID = np.concatenate([[0.0], np.logspace(-3, 3, 61)])  # support of the NPMLE laws


def survival(y, xi, sg):
    if y <= 0:
        return 1.0
    if abs(xi) < 1e-12:
        return math.exp(-y / sg)
    z = 1 + xi * y / sg
    return 0.0 if z <= 0 else z ** (-1 / xi)


def excess_at_depth(d, nu, sg, xi):
    """The excess y with n_u·P(Y > y) = d."""
    p = d / nu
    return -sg * math.log(p) if abs(xi) < 1e-12 else sg / xi * (p ** (-xi) - 1)


def load(d):
    sm = f"{d}/summary"
    man = json.load(open(f"{sm}/manifest.json"))
    tl = np.load(f"{sm}/top_len.npy")
    ts = np.load(f"{sm}/top_scores.npy")
    starts = np.concatenate([[0], np.cumsum(tl.ravel().astype(np.int64))])[:-1].reshape(tl.shape)

    def top(q, level):
        return ts[starts[q, level]:starts[q, level] + tl[q, level]].astype(np.float64)

    levels = pd.read_csv(f"{d}/levels.csv")
    fits = levels.drop_duplicates(["level", "query"]).set_index(["level", "query"])
    nlev = sum(1 for s in man["subsets"] if s["kind"] == "level")
    return man, top, man["subset_sizes"], nlev, fits, levels


def records(d):
    recs, _ = pickle.load(open(f"{d}/an-def.pkl", "rb"))["summary"]
    byq = collections.defaultdict(list)
    for r in recs:
        byq[r["q"]].append(r)
    return byq


def new_items(top, q, level, t):
    """Items level 0 holds above t that level `level` does not."""
    return (top(q, 0) > t).sum() - (top(q, level) > t).sum()


# --- censor -----------------------------------------------------------------------------------


def censored_loglik(y, k, xi, sg):
    z = 1 + xi * y / sg
    if xi < 0 and np.any(z[k:] <= 0):
        return -np.inf
    if abs(xi) < 1e-9:
        return (-np.log(sg) - y[k:] / sg).sum() - k * y[k] / sg
    return (-np.log(sg) - (1 / xi + 1) * np.log(z[k:])).sum() - k / xi * np.log(z[k])


def censored_fit(y, k):
    """ML over ξ ∈ [−1, 0] (grid of 81) and σ, the top k of the descending y censored."""
    best = (-np.inf, 0.0, y.mean())
    for xi in np.linspace(-1, 0, 81):
        lo = max(1e-12, -xi * y[k] * (1 + 1e-9)) if xi < 0 else 1e-12
        hi = max(10 * y.max(), lo * 10) + 1e-9
        r = minimize_scalar(lambda ls: -censored_loglik(y, k, xi, math.exp(ls)),
                            bounds=(math.log(lo), math.log(hi)), method="bounded",
                            options={"xatol": 1e-6})
        if -r.fun > best[0]:
            best = (-r.fun, xi, math.exp(r.x))
    return best[1], best[2]


def censor(k, dirs):
    for d in dirs:
        man, top, sizes, _, fits, _ = load(d)
        qi = {q: i for i, q in enumerate(man["query_ids"])}
        old = new = 0.0
        byq = records(d)
        for q, ps in byq.items():
            den, nq, fit = min(K, len(ps)), len(byq), None
            for r in ps:
                term = r["est"]
                if r["br"] in ("tail", "immune") and r["nu"] >= 10:
                    if fit is None:
                        row = fits.loc[(0, qi[q])]
                        t = top(qi[q], 0)
                        y = np.sort(t[t > row.u] - row.u)[::-1]
                        xi, sg = censored_fit(y, min(k, len(y) - 10))
                        fit = (row.u, xi, sg, len(y))
                    u, xi, sg, nu = fit
                    rank = r["j"] + r["C"] + r["N"] * nu / r["S"] * survival(r["s"] - u, xi, sg)
                    term = (r["j"] / rank if rank <= K else 0.0) / den / nq
                old += r["est"] - r["tru"]
                new += term - r["tru"]
        print(f"{d.rstrip('/').split('/')[-1]:32s} censor top {k}: error {100 * old:+.2f} -> "
              f"{100 * new:+.2f} points", flush=True)


# --- calibration ------------------------------------------------------------------------------


def probe_counts(d, level):
    """Per depth, the new items above the probe at level `level`'s fitted depth d and the
    count the fit predicts there, summed over queries."""
    man, top, sizes, _, fits, _ = load(d)
    e = (sizes[0] - sizes[level]) / sizes[level]
    y, p = np.zeros(len(DEPTHS)), np.zeros(len(DEPTHS))
    for q in range(man["num_queries"]):
        r = fits.loc[(level, q)]
        if not r.n_u or r.n_u < 10 or not np.isfinite(r.xi):
            continue
        for i, dd in enumerate(DEPTHS):
            y[i] += new_items(top, q, level, r.u + excess_at_depth(dd, r.n_u, r.sigma, r.xi))
            p[i] += e * dd
    return y, p


def calibration(dirs):
    for d in dirs:
        man, top, sizes, _, _, levels = load(d)
        k = np.load(f"{d}/summary/pos_pool_above.npy").astype(float)
        off = np.load(f"{d}/summary/query_offsets.npy")
        x = levels[(levels.level == 1) & (levels.branch == 1)].copy()
        pid = (off[x["query"].values] + x["pos"].values).astype(int)
        x["pred"] = (sizes[0] - sizes[1]) * x.x_hat
        x["real"] = k[pid, 0] - k[pid, 1]
        x["bin"] = np.clip(np.round(-2 * np.log2(np.maximum(sizes[1] * x.x_hat, 1e-30))), 0, 12)
        g = x.groupby(pd.cut(x.bin, [-1, 2, 11, 12], labels=["d >= 1/2", "1/2 > d >= 1/64", "d < 1/64"]),
                      observed=False)[["pred", "real"]].sum()
        y, p = probe_counts(d, 1)
        print(f"{d.rstrip('/').split('/')[-1]:30s} positives (realized/predicted): "
              + ", ".join(f"{b} {r.real / r.pred:.2f}" for b, r in g.iterrows())
              + f" | probes at d = 1, 1/8, 1/64: {y[0] / p[0]:.2f} {y[6] / p[6]:.2f} {y[12] / p[12]:.2f}",
              flush=True)


# --- probes applied -----------------------------------------------------------------------------


def npmle(y, mu, iters=300):
    """Weights on GRID maximising Σ_i ln Σ_g w_g Poisson(y_i; GRID_g·mu_i) (EM from uniform)."""
    lik = poisson.pmf(np.asarray(y)[:, None], GRID[None, :] * np.asarray(mu)[:, None]) + 1e-300
    w = np.full(len(GRID), 1 / len(GRID))
    for _ in range(iters):
        post = lik * w
        post /= post.sum(1, keepdims=True)
        w = post.mean(0)
    return w


def expected_term(j, c, ks, mus, w):
    """E[j/(j + C + K_S + D)·1{≤ k}] with D ~ Σ_g w_g Poisson(mus_g)."""
    last = K - j - c - ks
    if last < 0:
        return 0.0
    m = np.arange(last + 1)
    return float(w @ (poisson.pmf(m[None, :], mus[:, None]) @ (j / (j + c + ks + m))))


def probes(levels_used, dirs):
    for d in dirs:
        man, top, sizes, nlev, fits, _ = load(d)
        tail, imm = collections.defaultdict(lambda: ([], [])), collections.defaultdict(lambda: ([], []))
        for level in (lv for lv in levels_used if lv < nlev):
            e = (sizes[0] - sizes[level]) / sizes[level]
            for q in range(man["num_queries"]):
                r = fits.loc[(level, q)]
                if not r.n_u or r.n_u < 10 or not np.isfinite(r.xi):
                    continue
                for i, dd in enumerate(DEPTHS):
                    t = r.u + excess_at_depth(dd, r.n_u, r.sigma, r.xi)
                    tail[i][0].append(new_items(top, q, level, t))
                    tail[i][1].append(e * dd)
                if r.xi < 0:
                    for i, z in enumerate(ZS):
                        imm[i][0].append(new_items(top, q, level, r.u - r.sigma / r.xi * (1 + z)))
                        imm[i][1].append(e)
        wt = {i: npmle(*v) for i, v in tail.items()}
        wi = {i: npmle(*v) for i, v in imm.items()}
        qi = {q: i for i, q in enumerate(man["query_ids"])}
        n_pool, s0 = man["pool_size"], sizes[0]
        acc = collections.Counter()
        byq = records(d)
        for q, ps in byq.items():
            den, row = min(K, len(ps)), fits.loc[(0, qi[q])]
            for r in ps:
                x, scale = r["xh"], n_pool - r["S"]
                if r["br"] == "tail" and s0 * x < 1:
                    i = int(np.clip(round(-2 * math.log2(max(s0 * x, 1e-30))), 0, len(DEPTHS) - 1))
                    ex = expected_term(r["j"], r["C"], r["KS"], GRID * x * scale, wt[i])
                elif r["br"] == "immune" and row.xi < 0 and wi:
                    z = (r["s"] - row.u) / (-row.sigma / row.xi) - 1
                    i = int(np.clip(np.searchsorted(ZS, z, side="right") - 1, 0, len(ZS) - 1))
                    ex = expected_term(r["j"], r["C"], r["KS"], GRID * scale / s0, wi[i])
                else:
                    ex = expected_term(r["j"], r["C"], r["KS"], np.array([x * scale]), np.ones(1))
                ex /= den * len(byq)
                acc["base"] += r["est"] - r["tru"]
                acc["new"] += ex - r["tru"]
                acc[r["br"] + " base"] += r["est"] - r["tru"]
                acc[r["br"] + " new"] += ex - r["tru"]
        print(f"{d.rstrip('/').split('/')[-1]:30s} levels {levels_used}: error {100 * acc['base']:+.2f}"
              f" -> {100 * acc['new']:+.2f}; tail {100 * acc['tail base']:+.2f} -> {100 * acc['tail new']:+.2f},"
              f" immune {100 * acc['immune base']:+.2f} -> {100 * acc['immune new']:+.2f}", flush=True)


# --- the positives' scales -------------------------------------------------------------------

BANDS = [2, 6, 11]  # depth-bin edges (index of DEPTHS): d ≥ 1/2, ≥ 1/8, ≥ 1/64, below


def band(sl_x):
    b = np.clip(np.round(-2 * np.log2(np.maximum(sl_x, 1e-30))), 0, 12)
    return np.digitize(b, BANDS, right=True)


def positive_scales(d, levels_used):
    """Per depth band, Σ(K_0 − K_l)/Σ(S_0 − S_l)·x̂_l over level l's tail positives; and the
    immune positives' new items per exposure (S_0 − S_l)/S_l, i.e. per level-l-sized sample."""
    man, _, sizes, nlev, _, levels = load(d)
    k = np.load(f"{d}/summary/pos_pool_above.npy").astype(float)
    off = np.load(f"{d}/summary/query_offsets.npy")
    pred, real, exposure, imm = np.zeros(len(BANDS) + 1), np.zeros(len(BANDS) + 1), 0.0, 0.0
    for level in (lv for lv in levels_used if lv < nlev):
        e = (sizes[0] - sizes[level]) / sizes[level]
        x = levels[levels.level == level]
        pid = (off[x["query"].values] + x["pos"].values).astype(int)
        new = k[pid, 0] - k[pid, level]
        tail, b = (x.branch == 1).values, band(sizes[level] * x.x_hat.values)
        for i in range(len(pred)):
            pred[i] += (e * sizes[level] * x.x_hat.values[tail & (b == i)]).sum()
            real[i] += new[tail & (b == i)].sum()
        immune = (x.branch == 2).values
        exposure += e * immune.sum()
        imm += new[immune].sum()
    return real / np.maximum(pred, 1e-300), imm / max(exposure, 1e-300)


def scales(levels_used, dirs):
    for d in dirs:
        man, _, sizes, _, _, _ = load(d)
        c, m = positive_scales(d, levels_used)
        byq, acc = records(d), collections.Counter()
        for ps in byq.values():
            den = min(K, len(ps))
            for r in ps:
                x = r["xh"]
                if r["br"] == "tail":
                    x *= c[int(band(np.array([sizes[0] * x]))[0])]
                elif r["br"] == "immune":
                    x = m / sizes[0]
                ex = expected_term(r["j"], r["C"], r["KS"], np.array([x * (man["pool_size"] - r["S"])]),
                                   np.ones(1)) / den / len(byq)
                rank = r["j"] + r["C"] + man["pool_size"] * x
                er = (r["j"] / rank if rank <= K else 0.0) / den / len(byq)
                acc["base"] += r["est"] - r["tru"]
                acc["er"] += er - r["tru"]
                acc["count law"] += ex - r["tru"]
        print(f"{d.rstrip('/').split('/')[-1]:30s} levels {levels_used}: scales {np.round(c, 2)}, immune"
              f" {m:.3f}; error {100 * acc['base']:+.2f} -> {100 * acc['er']:+.2f} (expected-rank),"
              f" {100 * acc['count law']:+.2f} (count law)", flush=True)


if __name__ == "__main__":
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "censor":
        censor(int(rest[0]), rest[1:])
    elif cmd == "calibration":
        calibration(rest)
    elif cmd == "probes":
        probes(tuple(int(x) for x in rest[0].split(",")), rest[1:])
    elif cmd == "scales":
        scales(tuple(int(x) for x in rest[0].split(",")), rest[1:])
    else:
        sys.exit(__doc__)
