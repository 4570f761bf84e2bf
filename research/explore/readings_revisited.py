#!/usr/bin/env python3
"""Four offline studies of the prediction's readings (docs/notes/2026-12-06-readings-revisited.md).

Inputs: `interval_readings` JSON lines (crates/tailrank/examples/interval_readings.rs; cuts 2f,
f, f/2 of 300-query corpus runs), `tailrank validate --exam --json` run files and
`tailrank simulate --vectors --validate --json` run files (the web families).

  readings_revisited.py projection R05.jsonl R01.jsonl   # #45: the width at 2f, by seed set
  readings_revisited.py fitcheck   FILES...              # #43: the fit-choice check's variants
  readings_revisited.py estimates  FILES...              # #43: point estimates from the readings
  readings_revisited.py excess     FILES...              # #43: the excess reading, reach and move
  readings_revisited.py spacing    FILES...              # #43: the reading above the top positive

The interval and its parts are rebuilt as crates/tailrank-predict/src/predict/realized.rs
builds them (`interval` checks itself against the recorded interval of a current build's file).
"""
import collections
import glob
import json
import math
import statistics as st
import sys

Z = 1.959963984540054  # Φ⁻¹(0.975)
Z_CRIT, TOL, FIT_TOL = 3.0, 0.005, 0.01
HELD_OUT = {"hubs", "spread-even", "spread-0.3"}


# ---------------------------------------------------------------- records
def rec(fam, side, f, seed, truth, est, cut):
    return dict(fam=fam, side=side, f=f, seed=seed, truth=truth, est=est, t=cut["trust"],
                levels=cut.get("levels") or [], parts=cut["realized"], N=cut["pool_size"],
                S=cut["sample_size"], ec=cut.get("excess_centre"), eas=cut.get("evaluate_at_s"))


def load(paths, cut=1):
    """Runs of every kind of file as records (cut: which cut of a readings line)."""
    out = []
    for p in paths:
        if p.endswith(".jsonl"):
            for line in open(p):
                r = json.loads(line)
                c = r["cuts"][cut]
                if c and c["realized"]:
                    out.append(rec(r["family"], "held" if r["held_out"] else "tune", r["f"],
                                   r["seed"], r["truth"], c["estimate"], c))
            continue
        for r in json.load(open(p)):
            if r.get("realized_parts") is None:
                continue
            web = "preset" not in r
            fam = r["family"] if web else r["preset"]
            c = dict(trust=r["trust"], levels=r.get("levels"), realized=r["realized_parts"],
                     pool_size=r["pool_size"], sample_size=r["sample_size"],
                     excess_centre=r.get("excess_centre"),
                     evaluate_at_s=r["evaluate_at_s"]["map_at_k"] if web else r["evaluate_at_s"])
            truth = r["truth"]["map_at_k"] if web else r["truth"]
            est = r["evt"]["map_at_k"] if web else r["evt"]
            side = "web" if web else ("held" if fam in HELD_OUT else "tune")
            out.append(rec(fam, side, r["fraction"], r["seed"], truth, est, c))
    return out


def readings(r):
    """The estimate and the opinions the interval spans, by name."""
    p, est = r["parts"], r["est"]
    ec = r["ec"] if isinstance(r["ec"], dict) else {}
    unmoved = ec.get("unmoved_map_at_k")
    tail = unmoved if unmoved is not None else est
    v = {"est": est}
    for key, name in (("other_map_estimate", "other"), ("calibrated_estimate", "cal"),
                      ("excess_mass_estimate", "excess"), ("count_estimate", "count")):
        if p.get(key) is not None:
            v[name] = p[key]
    fc, reach = p.get("fit_choice_estimate"), p.get("fit_choice_reach")
    if fc is not None:
        v["fit"] = tail + max(-reach, min(reach, fc - tail)) if reach is not None else fc
    if unmoved is not None:
        v["unmoved"] = unmoved
    if ABOVE is not None:
        sr, z = p.get("spacing_readings"), (r["t"].get("spacing") or {}).get("z") or 0.0
        if sr is not None and (z > Z_CRIT if not ABOVE_RAMP else z > 2.0):
            w = min(1.0, (z - 2.0) / 2.0) if ABOVE_RAMP else 1.0
            v["above"] = tail + w * (sr[ABOVE] - tail)
    return v


# With `--above C` (0, 1, 2 for r_a, 2 r_a, 3 r_a): span the reading of rare items above the
# top positive as an opinion (files of a build with research/explore/spacing_reading.patch).
ABOVE = None
# With `--above-ramp C`: the reach towards it weighted by the spacing z as the trend's is
# (0 at z = 2, 1 at z = 4) instead of switched on at z = 3.
ABOVE_RAMP = False


# ---------------------------------------------------------------- the interval
def trend_reach(r, z_scale=1.0):
    """(Δ, w(z), v): the level trend's move, its z weight (0 at 2, 1 at 4) and m_cal's side."""
    p, t, est = r["parts"], r["t"], r["est"]
    d, se = t["trend_projected"], t["trend_std_error"]
    if p.get("fit_choice_estimate") is None:
        return p["trend_shift"], 1.0, 1.0  # the count estimator: Trust::shift as recorded
    if abs(d) <= TOL:
        return 0.0, 0.0, 0.0
    z = z_scale * abs(d) / se if se and se > 0 else 0.0
    w = min(1.0, max(0.0, (z - 2.0) / 2.0))
    cal = p.get("calibrated_estimate")
    side = 0.0
    if cal is not None:
        x = (cal - est) * math.copysign(1, d)
        side = min(1.0, max(0.0, 0.5 + x / 0.01))
    return d, w, side


def interval(r, values=None):
    """(lo, hi, noise half-width, signed trend part) of the realized interval."""
    v = list((values or readings(r)).values())
    lo, hi = min(v), max(v)
    h = Z * r["parts"]["pool_sd"]
    d, w, side = trend_reach(r)
    t = d * w * side
    hi, lo = min(1.0, hi + h + max(t, 0.0)), max(0.0, lo - h - max(-t, 0.0))
    if r.get("eas") is not None:
        hi = min(hi, max(r["eas"], r["est"]))
    return lo, hi, h, t


def check_interval(runs):
    bad = [r for r in runs if abs(interval(r)[0] - r["parts"]["interval"]["lo"]) > 1e-9
           or abs(interval(r)[1] - r["parts"]["interval"]["hi"]) > 1e-9]
    if bad:
        print(f"note: {len(bad)} of {len(runs)} intervals differ from the recorded ones "
              "(a file of an older build)")


def width_parts(r):
    lo, hi, h, t = interval(r)
    w = hi - lo
    n = min(2 * h, w)
    tt = min(abs(t), w - n)
    return w, n, tt, max(0.0, w - n - tt), max(0.0, math.log2(r["N"] / r["S"]))


def projected(r):
    """The next step's projection of the width at 2f (predict::next_step::WidthParts)."""
    w, n, t, s, L = width_parts(r)
    if L <= 0:
        return w
    d, wz, side = trend_reach(r, math.sqrt(2))
    t_next = min(abs(d) * wz * side * (L - 1) / L, max(0.0, w - n))
    return s + n / math.sqrt(2) + t_next


# ---------------------------------------------------------------- studies
def projection(paths):
    """Within ±30% at 2f, by seed set: the projection, a mean-reverting one, per-reading."""
    for p in paths:
        lines = [json.loads(x) for x in open(p)]
        runs = [(load_line(x, 0), load_line(x, 1), load_line(x, 2)) for x in lines]
        sets = sorted({x["seed"] // 6 for x in lines})
        print(f"== {p}")
        for name, rule in PROJECTIONS.items():
            row = []
            for s6 in sets:
                k = {"tune": 0, "held": 0}
                for (c2, c1, c0), x in zip(runs, lines):
                    if x["seed"] // 6 != s6:
                        continue
                    k["held" if x["held_out"] else "tune"] += abs(rule(c1, c0) / width_parts(c2)[0] - 1) <= 0.3
                row.append(f"seeds {6 * s6}–{6 * s6 + 5}: {k['tune']}/{k['held']}")
            print(f"  {name:28} " + "  ".join(row))


def load_line(x, cut):
    c = x["cuts"][cut]
    if not c or not c["realized"]:
        return None
    return rec(x["family"], "", x["f"], x["seed"], x["truth"], c["estimate"], c)


def per_reading(c1, shrink):
    """Each reading's offset from the estimate scaled by shrink(name, (L−1)/L)."""
    w, n, t, s, L = width_parts(c1)
    v = readings(c1)
    q = (L - 1) / L if L > 1 else 0.0
    est = v["est"]
    moved = [est] + [est + (x - est) * shrink(k, q) for k, x in v.items() if k != "est"]
    d, wz, side = trend_reach(c1, math.sqrt(2))
    return max(moved) - min(moved) + n / math.sqrt(2) + min(abs(d) * wz * side * q, max(0.0, w - n))


PROJECTIONS = {
    "adopted": lambda c1, c0: projected(c1),
    "mean-reverting, β = −0.2": lambda c1, c0: projected(c1) * (
        (width_parts(c1)[0] / width_parts(c0)[0]) ** -0.2 if c0 else 1.0),
    "mean-reverting, β = −0.3": lambda c1, c0: projected(c1) * (
        (width_parts(c1)[0] / width_parts(c0)[0]) ** -0.3 if c0 else 1.0),
    "fit, excess × (L−1)/L": lambda c1, c0: per_reading(
        c1, lambda k, q: q if k in ("fit", "excess") else 1.0),
    "fit, excess, count × (L−1)/L": lambda c1, c0: per_reading(
        c1, lambda k, q: q if k in ("fit", "excess", "count") else 1.0),
    "every reading × (L−1)/L": lambda c1, c0: per_reading(c1, lambda k, q: q),
}


def verdict(r, fit_rule):
    """Doubtful? with the fit-choice check replaced by fit_rule(δ, r_fit, L)."""
    t = r["t"]
    if t["verdict"] not in ("trusted", "doubtful"):
        return None

    def z(a, s):
        return a / s if s and s > 0 else 0.0
    trend = abs(t["trend_projected"]) > TOL and abs(z(t["trend_projected"], t["trend_std_error"])) > Z_CRIT
    u = t["in_sample"][t["in_sample_used"]] if t.get("in_sample_used") is not None and t["in_sample"] else None
    ins = bool(u) and abs(u["projected_error"]) > TOL and abs(z(u["error"], u["std_error"])) > Z_CRIT
    e = t.get("endpoint") or {}
    end = e.get("std_error") is not None and e["observed"] > e["predicted"] and e["z"] > Z_CRIT
    spacing = ((t.get("spacing") or {}).get("z") or 0.0) > Z_CRIT
    m = [x["estimate"] for x in sorted(r["levels"], key=lambda x: x["level"])]
    falling = len(m) >= 3 and m[1] >= m[0] and m[2] >= m[0]
    d = t.get("fit_choice_shift")
    fit = d is not None and fit_rule(d, r["parts"].get("fit_choice_reach"), math.log2(r["N"] / r["S"]))
    return trend or ins or end or spacing or falling or fit


FIT_RULES = {
    "|δ| > 1 point (adopted)": lambda d, reach, L: abs(d) > FIT_TOL,
    "no fit-choice check": lambda d, reach, L: False,
    "1 point < |δ| ≤ r_fit": lambda d, reach, L: abs(d) > FIT_TOL and (reach is None or abs(d) <= reach),
    "|δ| > 1 point · L/log2(20)": lambda d, reach, L: abs(d) > FIT_TOL * L / math.log2(20),
    "|δ| > 1 point and r_fit > 1 point": lambda d, reach, L: abs(d) > FIT_TOL and (reach or 0) > FIT_TOL,
}


def by_file_kind(paths):
    corpus = [p for p in paths if not p.endswith(".jsonl")]
    small = [p for p in paths if p.endswith(".jsonl")]
    return [(name, load(ps)) for name, ps in (("ILIAS size + web", corpus), ("300 queries", small)) if ps]


def fitcheck(paths):
    for name, runs in by_file_kind(paths):
        print(f"== {name}: misses (trusted, |e| > 1) and false alarms (doubtful, |e| < 0.5)")
        for f in (0.05, 0.01):
            for rn, rule in FIT_RULES.items():
                c = collections.defaultdict(lambda: [0, 0, 0, 0])
                for r in (r for r in runs if r["f"] == f):
                    doubt = verdict(r, rule)
                    if doubt is None:
                        continue
                    e, k = abs(r["est"] - r["truth"]), c[r["side"]]
                    if e > 0.01:
                        k[0] += not doubt
                        k[1] += 1
                    elif e < 0.005:
                        k[2] += doubt
                        k[3] += 1
                print(f"  {f:.2f} {rn:34} " + "  ".join(
                    f"{s}: {v[0]}/{v[1]}, {v[2]}/{v[3]}" for s, v in sorted(c.items())))


ESTIMATES = {
    "the estimate": lambda v, r: v["est"],
    "median of the readings": lambda v, r: st.median(v.values()),
    "mean of the readings": lambda v, r: st.mean(v.values()),
    "the interval's midpoint": lambda v, r: 0.5 * sum(interval(r)[:2]),
    "mean of estimate and m_cal": lambda v, r: 0.5 * (v["est"] + v.get("cal", v["est"])),
    "mean of estimate and the other fit": lambda v, r: 0.5 * (v["est"] + v.get("fit", v["est"])),
}


def mean_abs_by_side(runs, value):
    d = collections.defaultdict(list)
    for r in runs:
        d[r["side"]].append(100 * abs(value(r) - r["truth"]))
    return "  ".join(f"{s} {st.mean(x):.2f}" for s, x in sorted(d.items()))


def estimates(paths):
    for name, runs in by_file_kind(paths):
        print(f"== {name}: mean |error| (points)")
        for f in (0.05, 0.01):
            rs = [r for r in runs if r["f"] == f]
            for en, fn in ESTIMATES.items():
                print(f"  {f:.2f} {en:36} " + mean_abs_by_side(rs, lambda r: fn(readings(r), r)))


def spacing_move(r):
    """The estimate moved halfway to the excess-mass reading when both the endpoint test
    (with its shrink weight 1 − 1/z²) and the top-spacing test fire."""
    e = r["parts"].get("excess_mass_estimate")
    t = r["t"]
    end, sz = t.get("endpoint") or {}, (t.get("spacing") or {}).get("z") or 0.0
    fires = e is not None and end.get("observed", 0) > end.get("predicted", 0) and end.get("z", 0) > Z_CRIT
    if not fires or sz <= Z_CRIT:
        return r["est"]
    v = readings(r)
    tail = v.get("unmoved", r["est"])
    return tail + 0.5 * (1 - 1 / end["z"] ** 2) * (e - tail)


def excess(paths):
    for name, runs in by_file_kind(paths):
        check_interval(runs)
        print(f"== {name}: the excess reading's reach clamped to r_fit (covered/runs, width)")
        for f in (0.05, 0.01):
            rs = [r for r in runs if r["f"] == f]
            for label, k in (("as built", None), ("clamped to r_fit", 1.0), ("clamped to 2 r_fit", 2.0)):
                c = collections.defaultdict(lambda: [0, 0, 0.0])
                for r in rs:
                    v = readings(r)
                    reach = r["parts"].get("fit_choice_reach")
                    if k and "excess" in v and reach is not None:
                        v["excess"] = v["est"] + max(-k * reach, min(k * reach, v["excess"] - v["est"]))
                    lo, hi, _, _ = interval(r, v)
                    x = c[r["side"]]
                    x[0] += lo <= r["truth"] <= hi
                    x[1] += 1
                    x[2] += hi - lo
                print(f"  {f:.2f} {label:20} " + "  ".join(
                    f"{s} {x[0]}/{x[1]}, {100 * x[2] / x[1]:.2f}" for s, x in sorted(c.items())))
        print(f"== {name}: the estimate moved halfway to the excess reading where spacing fires too")
        for f in (0.05, 0.01):
            rs = [r for r in runs if r["f"] == f]
            print(f"  {f:.2f} as built      " + mean_abs_by_side(rs, lambda r: r["est"]))
            print(f"  {f:.2f} moved         " + mean_abs_by_side(rs, spacing_move))
            fams = collections.Counter(r["fam"] for r in rs if spacing_move(r) != r["est"])
            print(f"       moved runs: {dict(fams)}")


def spacing(paths):
    """The lower end reaching the top-spacing reading above the top positive,
    `r_a = max(0, D_a − α·Q_a)/(Q_t·S)` times c added to every positive, where the pooled
    top-spacing z exceeds 3 (files of a build with research/explore/spacing_reading.patch:
    `spacing_readings` = the readings at c·r_a for c = 1, 2, 3, then at c·r for the pooled
    excess)."""
    for name, runs in by_file_kind(paths):
        runs = [r for r in runs if r["parts"].get("spacing_readings") is not None
                or (r["t"].get("spacing") or {}).get("excess", 1) <= 0]
        print(f"== {name}: covered/runs, mean width (points), by family")
        for f in (0.05, 0.01):
            rs = [r for r in runs if r["f"] == f]
            fams = sorted({(r["side"], r["fam"]) for r in rs})
            for label, c in (("as built", None), ("r_a", 0), ("2 r_a", 1), ("3 r_a", 2)):
                c_fam = collections.defaultdict(lambda: [0, 0, 0.0])
                for r in rs:
                    lo, hi, h, t = interval(r)
                    sr = r["parts"].get("spacing_readings")
                    z = (r["t"].get("spacing") or {}).get("z") or 0.0
                    if c is not None and sr is not None and z > Z_CRIT:
                        lo = min(lo, max(0.0, sr[c] - h - max(-t, 0.0)))
                    for key in ((r["side"], r["fam"]), (r["side"], "all")):
                        x = c_fam[key]
                        x[0] += lo <= r["truth"] <= hi
                        x[1] += 1
                        x[2] += hi - lo
                keys = fams + sorted({(s, "all") for s, _ in fams})
                print(f"  {f:.2f} {label:9} " + "  ".join(
                    f"{k[1][:12]} {c_fam[k][0]}/{c_fam[k][1]} {100 * c_fam[k][2] / c_fam[k][1]:.2f}" for k in keys))


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("projection", "fitcheck", "estimates", "excess", "spacing"):
        sys.exit(__doc__)
    args = sys.argv[2:]
    if args[:1] in (["--above"], ["--above-ramp"]):
        ABOVE, ABOVE_RAMP, args = int(args[1]), args[0] == "--above-ramp", args[2:]
    files = [p for a in args for p in sorted(glob.glob(a)) or [a]]
    globals()[sys.argv[1]](files)
