#!/usr/bin/env python3
"""Variants of the realized interval's ends read from the levels' predictions at N, scored on
exam and web run files (docs/notes/2026-12-07-falling-reach.md, where they were fixed before
any run was read).

  falling_reach.py RUNS.json...   # coverage and mean width per side and family, per fraction

V0 is the recorded interval; V1 reaches the upper end to max(levels 1-4) + h when the falling
estimate fired (the adopted rule, predict::realized::levels_high), V2 to levels 1-2 only, V4
is V1 plus the mirror (rising twice: the lower end to min(levels 1-4) - h). Run files of a
build before the adopted rule give V0 as the interval before it.
"""
import collections, json, sys

Z = 1.959963984540054
HELD = {"hubs", "spread-even", "spread-0.3"}


def load(paths):
    out = []
    for p in paths:
        for r in json.load(open(p)):
            if r.get("realized_parts") is None or r.get("realized") is None:
                continue
            web = "preset" not in r
            fam = r["family"] if web else r["preset"]
            side = "web" if web else ("held" if fam in HELD else "tune")
            val = (lambda x: x["map_at_k"]) if web else (lambda x: x)
            out.append(dict(fam=fam, side=side, f=r["fraction"], seed=r["seed"],
                            truth=val(r["truth"]), est=val(r["evt"]),
                            eas=val(r["evaluate_at_s"]), lo=r["realized"]["lo"],
                            hi=r["realized"]["hi"], parts=r["realized_parts"],
                            trust=r["trust"], levels=sorted(r.get("levels") or [],
                                                            key=lambda x: x["level"])))
    return out


def falling(r):
    lr = r["trust"].get("level_rises")
    return lr is not None and lr[0] >= 0 and lr[1] >= 0


def rising(r):
    lr = r["trust"].get("level_rises")
    return lr is not None and lr[0] <= 0 and lr[1] <= 0


def variant(r, kind):
    lo, hi = r["lo"], r["hi"]
    h = Z * r["parts"]["pool_sd"]
    m = {x["level"]: x["estimate"] for x in r["levels"]}
    cap = min(1.0, max(r["eas"], r["est"]))
    if kind == "V0":
        return lo, hi
    deep = 4 if kind in ("V1", "V4") else 2
    ms = [m[l] for l in range(1, deep + 1) if l in m]
    if ms and falling(r):
        hi = min(cap, max(hi, max(ms) + h))
    if kind == "V4" and ms and rising(r):
        lo = max(0.0, min(lo, min(ms) - h))
    return lo, hi


def main(paths):
    runs = load(paths)
    for f in sorted({r["f"] for r in runs}, reverse=True):
        print(f"== f = {f}")
        for kind in ("V0", "V1", "V2", "V4"):
            cov, n, w = collections.Counter(), collections.Counter(), collections.Counter()
            for r in runs:
                if r["f"] != f:
                    continue
                lo, hi = variant(r, kind)
                for key in (r["side"], r["fam"]):
                    n[key] += 1
                    cov[key] += lo <= r["truth"] <= hi
                    w[key] += hi - lo
            line = "  ".join(f"{k} {cov[k]}/{n[k]} {100*w[k]/n[k]:.2f}"
                             for k in ("tune", "held", "web") if n[k])
            print(f" {kind}: {line}")
            fams = sorted(k for k in n if k not in ("tune", "held", "web"))
            print("     " + "; ".join(f"{k} {cov[k]}/{n[k]} {100*w[k]/n[k]:.1f}" for k in fams))


if __name__ == "__main__":
    main(sys.argv[1:])
