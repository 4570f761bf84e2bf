"""The top-spacing reading as a lower end of the realized interval, the trend's part of the
width, and the verdict's false alarms (docs/notes/2026-12-05-spacing-reading.md).

Reads `tailrank validate --exam --json` run files. `readings` needs files of a build with
`spacing_reading.patch` applied (each run's `realized_parts.spacing_readings`: six readings
of mAP@k at N with a rate per unsampled pool item and query given to the positives, see the
note); `trend` and `verdict` read the files of any build.

- `readings`: per rule (reading v0-v5, spacing z above 1, 2 or 3), per side and fraction,
  coverage and mean width (points), the lower end moved to `min(lo, reading - h - max(-D, 0))`;
- `trend`: the interval rebuilt (research/explore/interval_width.py) with the trend shift
  as today, dropped, from the estimate, or kept only when it points to the side of `m_cal`;
- `verdict`: which checks fire on the runs under 0.5 point that the verdict doubts, the runs
  over 1 point it trusts, and the fit-choice check's shift on the runs it alone doubts.

Usage: python3 spacing_reading.py readings|trend|verdict RUNS.json [RUNS.json ...]
"""
import json
import os
import sys
from collections import defaultdict
from statistics import NormalDist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import interval_width as iw  # noqa: E402

HELD = {"hubs", "spread-even", "spread-0.3"}


def runs_of(paths):
    out = []
    for p in paths:
        d = json.load(open(p))
        out += [r for r in (d["runs"] if isinstance(d, dict) else d) if r.get("realized_parts")]
    return out


def side(fam):
    return "held" if fam in HELD else "tune"


def readings(paths):
    runs = runs_of(paths)
    z = NormalDist().inv_cdf(0.975)

    def end(r, v, zmin):
        rp = r["realized_parts"]
        lo, hi = r["realized"]["lo"], r["realized"]["hi"]
        sp = (r.get("trust") or {}).get("spacing") or {}
        rd = rp.get("spacing_readings")
        if v is None or rd is None or sp.get("z", 0) <= zmin:
            return lo, hi
        d = rp["trend_shift"]
        return min(lo, max(0.0, rd[v] - z * rp["pool_sd"] - max(-d, 0.0))), hi

    rules = [("today", None, 0)] + [(f"v{v} z>{m}", v, m) for v in range(6) for m in (1, 2, 3)]
    for f in (0.05, 0.01):
        print(f"== f = {f}")
        fams = sorted({r["preset"] for r in runs if r["fraction"] == f}, key=lambda x: (x in HELD, x))
        for name, v, m in rules:
            tot = defaultdict(lambda: [0, 0, 0.0])
            cells = []
            for fam in fams:
                g = [r for r in runs if r["fraction"] == f and r["preset"] == fam]
                ivs = [end(r, v, m) for r in g]
                cov = sum(lo <= r["truth"] <= hi for r, (lo, hi) in zip(g, ivs))
                w = sum(hi - lo for lo, hi in ivs)
                t = tot[side(fam)]
                t[0], t[1], t[2] = t[0] + cov, t[1] + len(g), t[2] + w
                cells.append(f"{fam[:8]} {cov}/{len(g)} {100 * w / len(g):.2f}")
            pooled = " | ".join(
                f"{s} {tot[s][0]}/{tot[s][1]} {100 * tot[s][2] / tot[s][1]:.2f}" for s in ("tune", "held")
            )
            print(f"{name:9s} | {pooled} || " + "; ".join(cells))


def trend(paths):
    def toward_cal(x):
        c = x["readings"].get("cal")
        if not iw.finite(c) or x["delta"] == 0 or (c - x["est"]) * x["delta"] > 0:
            return iw.interval(x)
        return iw.interval(x, trend="none")

    rules = {
        "today": iw.interval,
        "trend dropped": lambda x: iw.interval(x, trend="none"),
        "trend from the estimate": lambda x: iw.interval(x, trend="from_estimate"),
        "trend towards m_cal only": toward_cal,
    }
    for p in paths:
        runs = iw.load([p])
        print("==", p)
        for name, rule in rules.items():
            cells = []
            for s in ("tuning", "held out"):
                for f in (0.05, 0.01):
                    g = [x for x in runs if x["fraction"] == f and x["held_out"] == (s == "held out")]
                    ivs = [rule(x) for x in g]
                    cov = sum(iw.covers(iv, x["truth"]) for x, iv in zip(g, ivs))
                    lost = sum(
                        iw.covers(iw.interval(x), x["truth"]) and not iw.covers(iv, x["truth"])
                        for x, iv in zip(g, ivs)
                    )
                    w = sum(iv[1] - iv[0] for iv in ivs) / len(g)
                    cells.append(f"{s} {f}: {cov}/{len(g)} {100 * w:.2f} lost {lost}")
            print(f"{name:24s} | " + " | ".join(cells))


def checks(r):
    sp = (r["trust"].get("spacing") or {}).get("z", 0)
    names = ["trend_fired", "in_sample_fired", "fit_choice_fired", "endpoint_fired"]
    return [n[:-6] for n in names if r[n]] + (["spacing"] if sp > 3 else [])


def verdict(paths):
    runs = [r for r in runs_of(paths) if r.get("verdict")]
    for f in (0.05, 0.01):
        for s in ("tune", "held"):
            g = [r for r in runs if r["fraction"] == f and side(r["preset"]) == s]
            small = [r for r in g if abs(r["evt"] - r["truth"]) < 0.005]
            large = [r for r in g if abs(r["evt"] - r["truth"]) > 0.01]
            fa = [r for r in small if r["verdict"] == "doubtful"]
            miss = [r for r in large if r["verdict"] == "trusted"]
            print(f"f={f} {s}: false alarms {len(fa)}/{len(small)}, misses {len(miss)}/{len(large)}")
            for r in fa:
                print(f"   false alarm {r['preset']:20s} s{r['seed']} err {100 * (r['evt'] - r['truth']):+.2f} {checks(r)}")
    print("fit-choice check alone: |shift| (points), kind")
    rows = []
    for r in runs:
        if checks(r) == ["fit_choice"]:
            err = 100 * (r["evt"] - r["truth"])
            kind = "false alarm" if abs(err) < 0.5 else ("miss if dropped" if abs(err) > 1 else "-")
            rows.append((100 * abs(r["trust"]["fit_choice_shift"]), kind, r["preset"], r["seed"], r["fraction"], err))
    for x in sorted(rows):
        print(f"  {x[0]:6.2f} {x[1]:15s} {x[2]:20s} s{x[3]} f{x[4]} err {x[5]:+.2f}")


if __name__ == "__main__":
    {"readings": readings, "trend": trend, "verdict": verdict}[sys.argv[1]](sys.argv[2:])
