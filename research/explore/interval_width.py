"""The realized interval's width, decomposed, and narrower rules tried against it
(docs/notes/2026-12-05-interval-width.md).

Reads `tailrank validate --exam --json` run files (every run carries `realized_parts`, the
estimate, the evaluate-at-S ceiling and the trust tests) and optionally vector-run files
(`--vector FILE`, `tailrank simulate --vectors --validate --json`). For each run it rebuilds
the interval of `predict::realized` from its parts (checked against the recorded interval),
then:

- `decompose`: per side, family and fraction, which reading sets the lower and the upper end,
  each reading's signed distance from the truth (points), and what each component adds to the
  width (leave-one-out: the width with everything minus the width without that component);
- `rules`: coverage and mean width per family of each candidate rule.

- `summary`: per rule and side/fraction, pooled coverage, mean width and the runs it loses.

Usage: python3 interval_width.py decompose|rules|summary RUNS.json [RUNS.json ...]
"""
import json
import sys
from collections import defaultdict
from statistics import NormalDist

HELD_OUT = {"hubs", "spread-even", "spread-0.3"}
READINGS = ["other_map", "fit", "cal", "excess", "count", "unmoved"]


def finite(v):
    return v is not None and v == v and abs(v) != float("inf")


def load(paths):
    runs = []
    for p in paths:
        d = json.load(open(p))
        if isinstance(d, dict) and "runs" in d:
            conf = d["options"].get("confidence", 0.95)
            for r in d["runs"]:
                x = of_corpus_run(r, conf)
                if x:
                    runs.append(x)
        else:
            for r in d:
                x = of_corpus_run(r, 0.95) if "preset" in r else of_vector_run(r)
                if x:
                    runs.append(x)
    return runs


def of_corpus_run(r, conf):
    rp = r.get("realized_parts")
    if not rp:
        return None
    ec = r.get("excess_centre")
    trust = r.get("trust") or {}
    return dict(
        family=r["preset"],
        held_out=r["preset"] in HELD_OUT,
        seed=r["seed"],
        fraction=r["fraction"],
        truth=r["truth"],
        est=r["evt"],
        ceiling=r["evaluate_at_s"],
        count_baseline=r["count"],
        readings=dict(
            other_map=rp["other_map_estimate"],
            fit=spanned_fit(rp, r["evt"], ec),
            cal=rp.get("calibrated_estimate"),
            excess=rp.get("excess_mass_estimate"),
            count=rp.get("count_estimate"),
            unmoved=ec["unmoved_map_at_k"] if ec else None,
        ),
        h=NormalDist().inv_cdf(0.5 + conf / 2) * rp["pool_sd"],
        delta=rp["trend_shift"],
        trend_se=trust.get("trend_std_error"),
        recorded=(r["realized"]["lo"], r["realized"]["hi"]),
        fit_rejection=fit_rejection(r),
        selection_reach=selection_reach(r, conf),
        check_reach=selection_reach(r, conf, with_error=True),
    )


def spanned_fit(rp, est, ec):
    """`m_fit'`, the other fit's reading as the interval spans it: capped at the recorded
    reach `r_fit` (`fit_choice_reach`, files of builds with the cap) around the tail model's
    own value; the raw `m_fit` in files without it."""
    f = rp.get("fit_choice_estimate")
    r = rp.get("fit_choice_reach")
    if not finite(f) or not finite(r):
        return f
    tail = ec["unmoved_map_at_k"] if ec else est
    return tail + max(-r, min(r, f - tail))


def selection_reach(r, conf, with_error=False):
    """`(|e_1| + z·se_1)·ln(N/S_0)/ln(S_0/S_1)` (`with_error`; else without `|e_1|`): the
    level-1 in-sample check of the estimate's own fit (the trust verdict's) at the confidence,
    projected to N as that check projects it (None without a finite SE)."""
    from math import log
    t = r.get("trust") or {}
    if t.get("in_sample_used") is None:
        return None
    u = t["in_sample"][t["in_sample_used"]]
    if not finite(u.get("std_error")):
        return None
    z = NormalDist().inv_cdf(0.5 + conf / 2)
    e = abs(u["error"]) if with_error else 0.0
    s0 = r["sample_size"]
    return (e + z * u["std_error"]) * log(r["pool_size"] / s0) / log(s0 / u["sample_size"])


def fit_rejection(r):
    """How far the level check that chose the estimate's fit rejects the other fit:
    `(|e_1(other)| − |e_1(c*)|)/SE` in the chosen fit's paired SE (None without a
    level-selected fit or a finite SE). The other fit is the options' (paper's) one under
    the default `--fit level-selected`."""
    fc = r.get("level_selected_fit")
    if not fc or not finite(fc.get("in_sample_std_error")):
        return None
    c = fc["candidates"]
    own = [x for x in c if x["fit_top"] == 4000 and x["quantile"] == 0.95]
    if not own:
        return None
    e_c = abs(c[fc["chosen"]]["in_sample_error"])
    return (abs(own[0]["in_sample_error"]) - e_c) / fc["in_sample_std_error"]


def of_vector_run(r):
    rp = r.get("realized_parts")
    if not rp or r.get("realized") is None:
        return None
    return None  # vector runs carry no parts in the files used here


def interval(x, use=READINGS, h_scale=1.0, trend="outer", noise="add"):
    """The interval of `predict::realized` from a run's parts, with the variations the rules
    need: `use` the readings spanned, `h_scale` the pool-noise multiplier, `trend` "outer"
    (today: added past the farthest reading), "from_estimate" (the estimate's projected move,
    a reading of its own) or "none"; `noise` "add" (today) or "quadrature" (h and the
    readings' reach combined as √(reach² + h²))."""
    est = x["est"]
    vals = [est] + [x["readings"][k] for k in use if finite(x["readings"].get(k))]
    lo_m, hi_m = min(vals), max(vals)
    d = x["delta"]
    h = h_scale * x["h"]
    if trend == "from_estimate":
        lo_m = min(lo_m, est + min(d, 0.0))
        hi_m = max(hi_m, est + max(d, 0.0))
        dlo = dhi = 0.0
    elif trend == "none":
        dlo = dhi = 0.0
    else:
        dlo, dhi = max(-d, 0.0), max(d, 0.0)
    if noise == "quadrature":
        lo = est - ((est - lo_m) ** 2 + h * h) ** 0.5 - dlo
        hi = est + ((hi_m - est) ** 2 + h * h) ** 0.5 + dhi
    else:
        lo = lo_m - h - dlo
        hi = hi_m + h + dhi
    hi = min(hi, 1.0)
    lo = max(lo, 0.0)
    cut = max(x["ceiling"], est)
    if finite(cut) and cut < hi:
        hi = cut
    return lo, hi


def covers(iv, t):
    return iv[0] <= t <= iv[1]


def key(x):
    return ("held out" if x["held_out"] else "tuning", x["fraction"], x["family"])


def check(runs):
    bad = [
        x
        for x in runs
        if max(abs(a - b) for a, b in zip(interval(x), x["recorded"])) > 1e-12
    ]
    print(f"rebuilt {len(runs) - len(bad)}/{len(runs)} intervals exactly")
    for x in bad[:5]:
        print("  mismatch", x["family"], x["seed"], x["fraction"], interval(x), x["recorded"])


def setter(x, end):
    """Which component sets an end: the reading at the extreme (or `est`), `+noise`,
    `+trend`, or `ceiling`."""
    est = x["est"]
    items = [("est", est)] + [
        (k, v) for k, v in x["readings"].items() if finite(v)
    ]
    lo, hi = interval(x)
    if end == "lo":
        name = min(items, key=lambda kv: kv[1])[0]
        return name + ("+trend" if x["delta"] < 0 else "") + ("" if lo > 0 else " (0)")
    if finite(x["ceiling"]) and hi == max(x["ceiling"], est) and hi < 1:
        name = max(items, key=lambda kv: kv[1])[0]
        return "ceiling"
    name = max(items, key=lambda kv: kv[1])[0]
    return name + ("+trend" if x["delta"] > 0 else "")


def decompose(runs):
    groups = defaultdict(list)
    for x in runs:
        groups[key(x)].append(x)
    print("\n## Which reading sets each end (runs), covered/runs, mean width (points)\n")
    print("| side | f | family | runs | covers | width | lower end set by | upper end set by |")
    print("|---|---:|---|---:|---:|---:|---|---|")
    for k in sorted(groups):
        g = groups[k]
        lo = defaultdict(int)
        hi = defaultdict(int)
        for x in g:
            lo[setter(x, "lo")] += 1
            hi[setter(x, "hi")] += 1
        cov = sum(covers(interval(x), x["truth"]) for x in g)
        w = 100 * sum(interval(x)[1] - interval(x)[0] for x in g) / len(g)
        fmt = lambda d: ", ".join(f"{n} {c}" for n, c in sorted(d.items(), key=lambda a: -a[1]))
        print(f"| {k[0]} | {k[1]:g} | {k[2]} | {len(g)} | {cov}/{len(g)} | {w:.2f} | {fmt(lo)} | {fmt(hi)} |")

    print("\n## Each reading's signed distance from the truth (mean, points; [min, max])\n")
    print("| side | f | family | est | " + " | ".join(READINGS) + " | ceiling |")
    print("|---|---:|---|" + "---:|" * (len(READINGS) + 2))
    for k in sorted(groups):
        g = groups[k]
        cells = []
        for name in ["est"] + READINGS + ["ceiling"]:
            vs = [
                100 * (val(x, name) - x["truth"])
                for x in g
                if finite(val(x, name))
            ]
            cells.append(
                f"{sum(vs) / len(vs):+.1f} [{min(vs):+.1f}, {max(vs):+.1f}]" if vs else "–"
            )
        print(f"| {k[0]} | {k[1]:g} | {k[2]} | " + " | ".join(cells) + " |")

    print("\n## What each component adds to the mean width (points, leave-one-out)\n")
    comps = ["noise", "trend"] + READINGS
    print("| side | f | family | width | " + " | ".join(comps) + " | ceiling cut |")
    print("|---|---:|---|---:|" + "---:|" * (len(comps) + 1))
    for k in sorted(groups):
        g = groups[k]
        w = lambda f: 100 * sum(f(x)[1] - f(x)[0] for x in g) / len(g)
        full = w(interval)
        cells = [
            full - w(lambda x: interval(x, h_scale=0.0)),
            full - w(lambda x: interval(x, trend="none")),
        ]
        for r in READINGS:
            cells.append(full - w(lambda x, r=r: interval(x, use=[u for u in READINGS if u != r])))
        uncut = w(lambda x: uncut_interval(x))
        cells.append(uncut - full)
        print(f"| {k[0]} | {k[1]:g} | {k[2]} | {full:.2f} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")


def uncut_interval(x):
    y = dict(x, ceiling=float("inf"))
    return interval(y)


def val(x, name):
    if name == "est":
        return x["est"]
    if name == "ceiling":
        return x["ceiling"]
    return x["readings"].get(name)


def without_rejected_fit(x, z=3.0, **kw):
    """m_fit spanned only when the level check does not reject the other fit by more than
    `z` of its SEs."""
    rej = x["fit_rejection"]
    use = [r for r in READINGS if not (r == "fit" and rej is not None and rej > z)]
    return interval(x, use=use, **kw)


def capped_fit(x, when="always", symmetric=False, reach="selection_reach", **kw):
    """The span to the other fit capped at the level check's projected noise `selection_reach`
    (`when`: "always", or "rejected" only when the check rejects the other fit by > 3 SE);
    `symmetric`: the capped reach on both sides of the estimate."""
    r = x[reach]
    f = x["readings"].get("fit")
    if r is None or not finite(f):
        return interval(x, **kw)
    if when == "rejected" and not (x["fit_rejection"] is not None and x["fit_rejection"] > 3):
        return interval(x, **kw)
    est = x["est"]
    base = x["readings"]["unmoved"] if finite(x["readings"].get("unmoved")) else est
    d = f - base
    capped = base + max(-r, min(r, d))
    y = dict(x, readings=dict(x["readings"], fit=capped))
    if symmetric:
        y["readings"]["fit_mirror"] = est - (capped - est)
        return interval(y, use=READINGS + ["fit_mirror"], **kw)
    return interval(y, **kw)


RULES = {
    "today": lambda x: interval(x),
    "no count": lambda x: interval(x, use=[r for r in READINGS if r != "count"]),
    "no cal": lambda x: interval(x, use=[r for r in READINGS if r != "cal"]),
    "no fit": lambda x: interval(x, use=[r for r in READINGS if r != "fit"]),
    "no other_map": lambda x: interval(x, use=[r for r in READINGS if r != "other_map"]),
    "no excess": lambda x: interval(x, use=[r for r in READINGS if r != "excess"]),
    "no unmoved": lambda x: interval(x, use=[r for r in READINGS if r != "unmoved"]),
    "trend from estimate": lambda x: interval(x, trend="from_estimate"),
    "noise in quadrature": lambda x: interval(x, noise="quadrature"),
    "trend from est + quadrature": lambda x: interval(x, trend="from_estimate", noise="quadrature"),
    "fit unless rejected (3 SE)": lambda x: without_rejected_fit(x),
    "fit unless rejected (5 SE)": lambda x: without_rejected_fit(x, z=5.0),
    "fit unless rejected (3 SE) + trend from est": lambda x: without_rejected_fit(x, trend="from_estimate"),
    "fit capped": lambda x: capped_fit(x),
    "fit capped (|e1|+zSE)L": lambda x: capped_fit(x, reach="check_reach"),
    "fit capped (|e1|+zSE)L if rejected": lambda x: capped_fit(x, reach="check_reach", when="rejected"),
    "fit capped (|e1|+zSE)L + quadrature": lambda x: capped_fit(x, reach="check_reach", noise="quadrature"),
    "fit capped if rejected": lambda x: capped_fit(x, when="rejected"),
    "fit capped, both sides": lambda x: capped_fit(x, symmetric=True),
    "fit capped if rejected, both sides": lambda x: capped_fit(x, when="rejected", symmetric=True),
}


def rules(runs, names=None):
    groups = defaultdict(list)
    for x in runs:
        groups[key(x)].append(x)
    names = names or list(RULES)
    print("\n## Rules: covered/runs and mean width (points) per family\n")
    print("| side | f | family | " + " | ".join(names) + " |")
    print("|---|---:|---|" + "---:|" * len(names))
    sides = defaultdict(list)
    for k in sorted(groups):
        g = groups[k]
        sides[(k[0], k[1])].extend(g)
        print(f"| {k[0]} | {k[1]:g} | {k[2]} | " + " | ".join(cell(g, RULES[n]) for n in names) + " |")
    for s in sorted(sides):
        print(f"| {s[0]} | {s[1]:g} | **pooled** | " + " | ".join(cell(sides[s], RULES[n]) for n in names) + " |")


def summary(runs):
    """Per rule and side/fraction: covered/runs, mean width, and the runs covered today that
    the rule loses (the adoption test: none lost, on either side)."""
    sides = defaultdict(list)
    for x in runs:
        sides[(key(x)[0], x["fraction"])].append(x)
    cols = sorted(sides)
    print("\n## Rules, pooled: covered/runs, mean width (points), runs lost against today\n")
    print("| rule | " + " | ".join(f"{s} {f:g}" for s, f in cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for n, rule in RULES.items():
        cells = []
        for c in cols:
            g = sides[c]
            ivs = [rule(x) for x in g]
            cov = sum(covers(iv, x["truth"]) for iv, x in zip(ivs, g))
            lost = sum(
                covers(interval(x), x["truth"]) and not covers(iv, x["truth"])
                for iv, x in zip(ivs, g)
            )
            w = 100 * sum(b - a for a, b in ivs) / len(g)
            cells.append(f"{cov}/{len(g)}, {w:.2f}, lost {lost}")
        print(f"| {n} | " + " | ".join(cells) + " |")


def cell(g, rule):
    ivs = [rule(x) for x in g]
    cov = sum(covers(iv, x["truth"]) for iv, x in zip(ivs, g))
    w = 100 * sum(b - a for a, b in ivs) / len(g)
    return f"{cov}/{len(g)} {w:.2f}"


if __name__ == "__main__":
    what, paths = sys.argv[1], sys.argv[2:]
    runs = load(paths)
    check(runs)
    {"decompose": decompose, "rules": rules, "summary": summary}[what](runs)
