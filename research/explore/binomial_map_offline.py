"""The estimate through the binomial map instead of the expected-rank map, read offline from
run files (docs/notes/2026-12-07-binomial-map-revisited.md): the moves are additive shifts on
the binomial map, so `B = Bin(h0) + part_centre + part_spacing`, with `Bin(h0)` the run's
`evt_binomial` (corpus runs of `tailrank validate --exam --json`) or
`realized_parts.other_map_estimate` (web runs of `tailrank simulate --vectors --validate --json`).
Prints mean |error| (mean error) in points per side and family, built against B.
Usage: python binomial_map_offline.py EXAM_RUNS.json [WEB_RUNS.json ...]"""
import collections, json, sys

HELD = {"hubs", "spread-even", "spread-0.3"}


def moved(r, bin_h0):
    d = r["decomposition"]
    return bin_h0 + d.get("part_centre", 0.0) + d.get("part_spacing", 0.0)


def main(exam, webs):
    rows = []  # (fraction, side, family, built error, B error), points
    for r in json.load(open(exam)):
        if r.get("realized") is None:
            continue  # a sweep run: no interval, not in the exam tables
        side = "held out" if r["preset"] in HELD else "tuning"
        b = moved(r, r["evt_binomial"])
        rows.append((r["fraction"], side, r["preset"], 100 * (r["evt"] - r["truth"]), 100 * (b - r["truth"])))
    for path in webs:
        for r in json.load(open(path)):
            t = r["truth"]["map_at_k"]
            b = moved(r, r["realized_parts"]["other_map_estimate"])
            rows.append((r["fraction"], "held out", r["family"], 100 * (r["evt"]["map_at_k"] - t), 100 * (b - t)))
    for f in sorted({r[0] for r in rows}, reverse=True):
        groups = collections.defaultdict(list)
        for fr, side, fam, e0, eb in rows:
            if abs(fr - f) < 1e-12:
                groups[(side, fam)].append((e0, eb))
                groups[(side, "(pooled)")].append((e0, eb))
        print(f"f = {f}")
        for (side, fam), v in sorted(groups.items()):
            n = len(v)
            m = lambda i: sum(abs(x[i]) for x in v) / n
            s = lambda i: sum(x[i] for x in v) / n
            print(f"  {side:8s} {fam:22s} {n:3d}  built {m(0):5.2f} ({s(0):+.2f})  B {m(1):5.2f} ({s(1):+.2f})")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
