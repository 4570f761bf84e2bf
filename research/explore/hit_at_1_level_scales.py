"""Notes: docs/notes/2026-12-05-hit-at-1-readings.md. The prototype of hit@1 calibrated on the
levels (`predict::hit_calibration`, docs/method.md §7) on the per-query rows of the
`hit_at_1_readings` example (truth used only for scoring). Per run, from the top positives
with C_1 = 0 and K_l = 0 at levels 1-3 and their known level-0 outcome:

- tail scale c_t: sum_i exp(-c_t (S_0 - S_l) x_l,i) = hits (searched on [1e-4, 100]);
- immune scale c_i in [2^-6, 1]: the endpoint law's pivot at scale c_i (the example's
  `pivot_c*` columns, interpolated in log2 c) summed = hits;

then at N the tail top positives read exp(-c_t (N - S) x_hat), the immune ones the pivot at
c_i, and the move to the centre of the excess the prediction made (`count_law - base`) is
added. Prints, per family and fraction, the immune / tail parts and the total of the error for
the count law with its move (`count_law`; the `moved` column of files written before the
calibration was built) and for the calibrated reading.
`--decay`: instead, the tail scale with a survivor decay of the hazard, c·d·W(R, gamma)
(d = x_l S_l, R = S_0/S_l, W = int_1^R t^-gamma dt), (c, gamma) by maximum likelihood on the
same cases; the tail part only (needs numpy and scipy).
Usage: hit_at_1_level_scales.py FILE.csv... [--decay]"""
import collections, csv, math, sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
rows = [r for fn in args for r in csv.DictReader(open(fn))]
runs = collections.defaultdict(list)
for r in rows:
    runs[(r["family"], r["f"], r["seed"])].append(r)
NS, LEVELS = 7, (1, 2, 3)


def bisect(f, lo, hi):
    """The root of the decreasing f on [lo, hi] in log space (an end when none inside)."""
    if f(lo) < 0:
        return lo
    if f(hi) > 0:
        return hi
    for _ in range(80):
        m = math.sqrt(lo * hi)
        lo, hi = (m, hi) if f(m) > 0 else (lo, m)
    return math.sqrt(lo * hi)


def pivot(r, c, sfx=""):
    v = [float(r[f"pivot_c{i}{sfx}"]) for i in range(NS)]
    t = -math.log2(c)
    if t <= 0:
        return v[0]
    if t >= NS - 1:
        return v[-1]
    i = int(t)
    return v[i] * (1 - (t - i)) + v[i + 1] * (t - i)


def cases(rs, branch):
    s0 = float(rs[0]["S"])
    for l in LEVELS:
        sfx = f"_{l}"
        for r in rs:
            if r["core"] == "0" and r["k" + sfx] == "0" and r["branch" + sfx] == branch:
                yield l, s0 / 2 ** l, sfx, r, r["k_s"] == "0"


def scales(rs):
    s0 = float(rs[0]["S"])
    tc = [((s0 - sl) * float(r["x_hat" + sfx]), o) for _, sl, sfx, r, o in cases(rs, "tail")]
    ic = [(r, sfx, o) for _, _, sfx, r, o in cases(rs, "immune")
          if not math.isnan(float(r["pivot_c0" + sfx]))]
    ct = bisect(lambda c: sum(math.exp(-c * h) for h, _ in tc) - sum(o for _, o in tc), 1e-4, 100.0)
    ci = bisect(lambda c: sum(pivot(r, c, s) for r, s, _ in ic) - sum(o for *_, o in ic), 2 ** -(NS - 1), 1.0)
    return ct, ci


def decay_tail_part(rs):
    import numpy as np
    from scipy.optimize import minimize_scalar
    s0, n = float(rs[0]["S"]), float(rs[0]["N"])
    data = [(float(r["x_hat" + sfx]) * sl, s0 / sl, o) for _, sl, sfx, r, o in cases(rs, "tail")]
    d, ratio, obs = (np.array(v, float) for v in zip(*data))
    w = lambda R, g: np.log(R) if abs(g - 1) < 1e-9 else (R ** (1 - g) - 1) / (1 - g)
    best = None
    for g in np.arange(0, 3.01, 0.05):
        h = d * w(ratio, g)
        def nll(lc):
            q = np.clip(np.exp(-np.exp(lc) * h), 1e-12, 1 - 1e-12)
            return -(obs * np.log(q) + (1 - obs) * np.log(1 - q)).sum()
        m = minimize_scalar(nll, bounds=(-12, 3), method="bounded")
        if best is None or m.fun < best[0]:
            best = (m.fun, g, math.exp(m.x))
    _, g, c = best
    tail = [r for r in rs if r["core"] == "0" and r["k_s"] == "0" and r["branch"] == "tail"]
    pred = sum(math.exp(-c * float(r["x_hat"]) * s0 * w(n / s0, g)) for r in tail)
    return g, c, 100 * (pred - sum(int(r["truth_hit"]) for r in tail)) / len(rs)


if "--decay" in sys.argv:
    print("| family | f | seed | gamma | c | tail part |")
    print("|---|---:|---:|---:|---:|---:|")
    for k in sorted(runs):
        g, c, part = decay_tail_part(runs[k])
        print(f"| {k[0]} | {k[1]} | {k[2]} | {g:.2f} | {c:.3f} | {part:+.2f} |")
    sys.exit()

res = collections.defaultdict(lambda: collections.defaultdict(list))
for k in sorted(runs):
    rs = runs[k]
    s0, n = float(rs[0]["S"]), float(rs[0]["N"])
    ct, ci = scales(rs)
    parts = {"moved": [0.0] * 3, "cal": [0.0] * 3}
    for r in rs:
        b = {"immune": 0, "tail": 1}.get(r["branch"], 2)
        base, t = float(r["base"]), int(r["truth_hit"])
        moved = float(r["count_law"] if "count_law" in r else r["moved"])
        if r["core"] != "0" or r["k_s"] != "0":
            cal = 0.0
        elif r["branch"] == "tail":
            cal = math.exp(-ct * (n - s0) * float(r["x_hat"]))
        elif r["branch"] == "immune" and not math.isnan(float(r["pivot_c0"])):
            cal = pivot(r, ci)
        else:
            cal = base
        parts["moved"][b] += 100 * (moved - t) / len(rs)
        parts["cal"][b] += 100 * (cal + moved - base - t) / len(rs)
    for name, p in parts.items():
        res[(k[1], k[0])][name].append(p)
    res[(k[1], k[0])]["c"].append((ct, ci))
print("| family | f | seeds | c_t | c_i | as built: immune / tail / total (mean \\|total\\|) | calibrated: immune / tail / total (mean \\|total\\|) |")
print("|---|---:|---:|---:|---:|---|---|")
for key in sorted(res, key=lambda k: (-float(k[0]), k[1])):
    R = res[key]
    ns = len(R["moved"])
    cells = []
    for name in ("moved", "cal"):
        m = [sum(p[i] for p in R[name]) / ns for i in range(3)]
        tot = [sum(p) for p in R[name]]
        cells.append(f"{m[0]:+.2f} / {m[1]:+.2f} / {sum(tot) / ns:+.2f} ({sum(abs(t) for t in tot) / ns:.2f})")
    c = R["c"]
    print(f"| {key[1]} | {key[0]} | {ns} | {sum(x[0] for x in c) / ns:.3f} | {sum(x[1] for x in c) / ns:.3f} | " + " | ".join(cells) + " |")
