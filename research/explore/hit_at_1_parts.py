"""Notes: docs/notes/2026-12-05-hit-at-1-parts.md. hit@1 of a prediction split by the branch of
each query's best positive (immune if any positive is immune, else tail if any is in the tail,
else count): the mean predicted P(K = 0) against the true share of queries whose best positive
has no pool item above it at N, and each part's contribution to the error in points.
Usage: tailrank simulate --preset F --seed S --fraction f --out DIR;
tailrank predict --summary DIR/summary --json > DIR/p.json; python3 hit_at_1_parts.py DIR"""
import collections, json, sys

d = sys.argv[1]
truth = json.load(open(d + "/truth.json"))
pred = json.load(open(d + "/p.json"))
by_id = {q["id"]: q for q in truth["queries"]}
parts = collections.defaultdict(lambda: [0, 0.0, 0.0])
for q in pred["queries"]:
    best = min(by_id[q["query_id"]]["positives"], key=lambda p: p["pool_above_n"])
    branch = "immune" if q["n_immune"] else ("tail" if q["n_tail"] else "count")
    part = parts[branch]
    part[0] += 1
    part[1] += q["hit_at_1"]
    part[2] += best["pool_above_n"] == 0
n = len(pred["queries"])
print(f"predicted {100 * pred['hit_at_1']:.2f}  truth {100 * sum(p[2] for p in parts.values()) / n:.2f}")
for branch, (m, p, t) in sorted(parts.items()):
    print(f"{branch:7s} queries {m:4d}  predicted {p / m:.3f}  true {t / m:.3f}  "
          f"contribution {100 * (p - t) / n:+.2f} points")
