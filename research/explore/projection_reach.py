"""Offline variants of the next step's projection (#45), from next_step_validation CSVs
with the above-reach columns. Usage: projection_reach.py FILE.csv [...]"""
import csv, math, sys
import statistics as st

ZN, ZF, RAMP = 2.0, 4.0, 0.005


def w(z):
    return min(1.0, max(0.0, (abs(z) - ZN) / (ZF - ZN)))


def side(x):
    return min(1.0, max(0.0, 0.5 + x / (2 * RAMP)))


def num(r, k):
    v = r[k]
    return float(v) if v not in ("NaN", "") else math.nan


def ext(r, zs, wfun=None):
    z = num(r, "above_z_f")
    if math.isnan(z):
        return 0.0
    wf = wfun or (lambda z, zs: w(z * zs))
    est, tail, low = num(r, "above_estimate_f"), num(r, "above_tail_f"), num(r, "above_low_others_f")
    return max(0.0, low - (tail + wf(z, zs) * (est - tail)))


def trend_j(r, zs, wfun=None):
    if r["fit_choice_f"] != "true":
        return num(r, "trend")
    d, se = num(r, "trend_projected_f"), num(r, "trend_se_f")
    if abs(d) <= 1e-12 or se <= 0:
        return 0.0 if abs(d) <= 1e-12 else num(r, "trend")
    z = abs(d / se)
    c = num(r, "cal_minus_est_f")
    v = 0.0 if math.isnan(c) else side(c * math.copysign(1, d))
    wf = wfun or (lambda z, zs: w(z * zs))
    return abs(d * wf(z, zs) * v)


def proj(r, above_w=None, trend_w=None, beta=0.0, zs=math.sqrt(2)):
    W, n, t, s = (num(r, k) for k in ("w_f", "noise", "trend", "spread"))
    L = math.log2(1 / float(r["f"]))
    s1 = max(0.0, s - ext(r, 1.0) + ext(r, zs, above_w))
    tj = trend_j(r, zs, trend_w)
    tr = min(tj * max(0.0, (L - 1) / L), W - n)
    p = s1 + n / math.sqrt(2) + tr
    if beta:
        wh = num(r, "w_h")
        if wh > 0 and not math.isnan(wh):
            p *= (W / wh) ** beta
    return p


def expected_w(sd):
    # E[w(z_2f)], z_2f = (z + z_new)/sqrt2, z_new ~ N(z_hat, 1)
    def f(z, zs):
        if zs == 1.0:
            return w(z)
        m = 2 * z / math.sqrt(2)
        pts = [-2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2]
        ws = [math.exp(-x * x / 2) for x in pts]
        return sum(wi * w(m + x * sd) for x, wi in zip(pts, ws)) / sum(ws)
    return f


def shrunk(k):
    def f(z, zs):
        if zs == 1.0:
            return w(z)
        zt = max(0.0, abs(z) - k)
        return w((abs(z) + zt) / math.sqrt(2))
    return f


VARIANTS = {
    "adopted": {},
    "above held": {"above_w": lambda z, zs: w(z)},
    "above+trend held": {"above_w": lambda z, zs: w(z), "trend_w": lambda z, zs: w(z)},
    "above shrunk z-1": {"above_w": shrunk(1.0)},
    "above E[w] sd=0.7": {"above_w": expected_w(1 / math.sqrt(2))},
    "both shrunk z-1": {"above_w": shrunk(1.0), "trend_w": shrunk(1.0)},
    "damp -0.2": {"beta": -0.2},
    "damp -0.3": {"beta": -0.3},
    "above held, damp -0.3": {"above_w": lambda z, zs: w(z), "beta": -0.3},
    "above shrunk, damp -0.3": {"above_w": shrunk(1.0), "beta": -0.3},
}


def main():
    rows = []
    for p in sys.argv[1:]:
        rows += [(p, r) for r in csv.DictReader(open(p))]
    # sanity: the replica reproduces the built projection
    bad = [r for _, r in rows if abs(proj(r) - num(r, "projected_2f")) > 2e-5]
    print(f"replica mismatches: {len(bad)} of {len(rows)}")
    for r in bad[:5]:
        print(r["family"], r["seed"], r["f"], proj(r), r["projected_2f"])
    files = sorted({p for p, _ in rows})
    print("| variant | " + " | ".join(files) + " |")
    for name, kw in VARIANTS.items():
        cells = []
        for f in files:
            rr = [r for p, r in rows if p == f]
            ok = sum(abs(proj(r, **kw) / num(r, "measured_2f") - 1) <= 0.3 for r in rr)
            cells.append(f"{ok}/{len(rr)} ({100*ok/len(rr):.0f}%)")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
