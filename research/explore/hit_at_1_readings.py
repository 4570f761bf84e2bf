"""Notes: docs/notes/2026-12-05-hit-at-1-readings.md. Scores the per-query readings of hit@1 that
`cargo run --release -p tailrank --example hit_at_1_readings -- SEEDS F FAMILIES > FILE.csv`
prints (truth used only for scoring): per family and fraction, the mean error of each reading
in points (prediction − truth, mean over seeds) and its split by the branch of the query's top
positive (immune / tail / count: each part is the branch's contribution to the error).
`--levels` adds the same readings at nested levels 1 and 2 against the known level-0 outcome
(the check a sample can make of itself). A reading `a+b` takes `a` for immune top positives and
`b` for the others. Columns: `moved` is the prediction's own hit@1 (calibrated on the levels
since that was built; the count law's, moved, in files written before), `count_law` the count
law with the move, `base` without it, `pivot`, `boot` (the example's docs), `oracle` the count
law at the true hardness. Usage: hit_at_1_readings.py FILE.csv... [--levels] [--readings r1,r2,...]"""
import csv, collections, sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
opts = [a for a in sys.argv[1:] if a.startswith("--")]
readings = ["moved", "base", "pivot", "boot", "pivot+base", "base+pivot", "pivot+boot", "boot+base"]
for o in opts:
    if o.startswith("--readings="):
        readings = o.split("=", 1)[1].split(",")
rows = []
for fn in args:
    rows += list(csv.DictReader(open(fn)))


def value(r, name, suffix=""):
    if "+" in name:
        a, b = name.split("+")
        return value(r, a if r["branch" + suffix] == "immune" else b, suffix)
    if name == "oracle":
        if int(r["core"]) > 0 or int(r["k_s"]) > 0:
            return 0.0
        import math
        return math.exp(-(float(r["N"]) - float(r["S"])) * float(r["x_true"]))
    v = float(r[name + suffix])
    return v


groups = collections.defaultdict(list)
for r in rows:
    groups[(float(r["f"]), r["family"])].append(r)

print("| family | f | runs | truth | " + " | ".join(readings) + " |")
print("|---|---:|---:|---:|" + "---:|" * len(readings))
pooled = collections.defaultdict(list)
for (f, fam), rs in sorted(groups.items(), key=lambda k: (-k[0][0], k[0][1])):
    seeds = sorted({r["seed"] for r in rs})
    cells = []
    truth = sum(int(r["truth_hit"]) for r in rs) / len(rs)
    for name in readings:
        errs = []
        for s in seeds:
            sr = [r for r in rs if r["seed"] == s]
            errs.append(100 * sum(value(r, name) - int(r["truth_hit"]) for r in sr) / len(sr))
        m = sum(errs) / len(errs)
        mabs = sum(abs(e) for e in errs) / len(errs)
        pooled[(f, name)].append(mabs)
        cells.append(f"{m:+.2f} ({mabs:.2f})")
    print(f"| {fam} | {f:g} | {len(seeds)} | {100 * truth:.2f} | " + " | ".join(cells) + " |")
for f in sorted({k[0] for k in pooled}, reverse=True):
    print(f"| **mean of \\|err\\|** | {f:g} | | | " + " | ".join(
        f"{sum(pooled[(f, n)]) / len(pooled[(f, n)]):.2f}" for n in readings) + " |")

print()
print("Parts (points, mean over seeds): immune / tail / count; each cell `predicted → true` share on the branch, then its part")
print("| family | f | reading | immune: q, pred/true, part | tail: q, pred/true, part | count part | total |")
print("|---|---:|---|---|---|---:|---:|")
for (f, fam), rs in sorted(groups.items(), key=lambda k: (-k[0][0], k[0][1])):
    seeds = sorted({r["seed"] for r in rs})
    n = len(rs)
    for name in readings:
        cells = []
        tot = 0.0
        for b in ["immune", "tail", "count"]:
            br = [r for r in rs if r["branch"] == b]
            if not br:
                cells.append("–")
                continue
            pred = sum(value(r, name) for r in br) / len(br)
            tr = sum(int(r["truth_hit"]) for r in br) / len(br)
            part = 100 * sum(value(r, name) - int(r["truth_hit"]) for r in br) / n
            tot += part
            if b == "count":
                cells.append(f"{part:+.2f}")
            else:
                cells.append(f"{len(br) / len(seeds):.0f}, {pred:.3f}/{tr:.3f}, {part:+.2f}")
        print(f"| {fam} | {f:g} | {name} | " + " | ".join(cells) + f" | {tot:+.2f} |")

if "--levels" in opts:
    print()
    print("Levels: the readings at level l for the step to level 0, top positives with K_l = 0 "
          "(immune / tail at level l): predicted / observed share with K_0 = 0, and the error "
          "in points of all queries")
    print("| family | f | l | reading | immune: q, pred/obs | tail: q, pred/obs | error |")
    print("|---|---:|---:|---|---|---|---:|")
    for (f, fam), rs in sorted(groups.items(), key=lambda k: (-k[0][0], k[0][1])):
        for l in (1, 2):
            sfx = f"_{l}"
            for name in [x for x in readings if x not in ("moved",)]:
                cells = []
                err = 0.0
                for b in ["immune", "tail"]:
                    br = [r for r in rs if r["branch" + sfx] == b and int(r["k" + sfx]) == 0
                          and int(r["core"]) == 0]
                    if not br:
                        cells.append("–")
                        continue
                    pred = sum(value(r, name, sfx) for r in br) / len(br)
                    obs = sum(int(r["k_s"]) == 0 for r in br) / len(br)
                    err += 100 * (pred - obs) * len(br) / len(rs)
                    cells.append(f"{len(br)}, {pred:.3f}/{obs:.3f}")
                print(f"| {fam} | {f:g} | {l} | {name} | " + " | ".join(cells) + f" | {err:+.2f} |")
