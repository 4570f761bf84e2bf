"""hit@1 on the queries whose pool tail is exactly a GPD (docs/notes/2026-12-estimator-log.md, "hit@1 when the tail
model is right"). DIR is a `tailrank simulate --preset ilias-continuous` folder; HARDNESS a
`predict --hardness-out` file in it. Keeps the queries of one `gpd-tail` component whose top
positive no sampled or core item outranks, and bins them by the true N·x of that positive:
realized hit, predicted hit exp(-(N-S)·x̂), the share called immune (fitted endpoint below the
positive) and the fitted endpoint's error against the positive's gap to the true endpoint.
Truth (DIR/truth.json) is used only for scoring. Usage: hit_gpd_exact.py DIR HARDNESS"""
import csv, json, sys
import numpy as np

d, hf = sys.argv[1], sys.argv[2]
t = json.load(open(f"{d}/truth.json"))
N, S = t["pool_size"], t["sample_size"]
rows = {}
for r in csv.DictReader(l for l in open(f"{d}/{hf}") if not l.startswith("#")):
    if r["j"] == "1":
        rows[r["query_id"]] = r
R = []
for q in t["queries"]:
    c = q["law"]["components"]
    if len(c) != 1 or c[0]["family"] != "gpd-tail":
        continue
    r, p, c = rows[q["id"]], q["positives"][0], c[0]
    if p["core_above"] > 0 or int(r["pool_above"]) > 0 or not r["tail_xi"]:
        continue
    u, sg, xi = float(r["tail_u"]), float(r["tail_sigma"]), float(r["tail_xi"])
    R.append((c["xi"], xi, p["x"], float(r["x_hat"]), c["u0"] + c["sigma"] / abs(c["xi"]),
              u + sg / abs(xi) if xi < 0 else np.inf, p["score"], float(p["pool_above_n"] == 0)))
xi, xih, x, xh, om, omh, s, hit = np.array(R).T
ph = np.exp(-(N - S) * xh)
print(f"{d} {hf}: {len(x)} queries; true xi mean {xi.mean():+.3f}, fitted {xih.mean():+.3f} "
      f"(corr {np.corrcoef(xi, xih)[0, 1]:.2f}); hit realized {hit.mean():.3f}, predicted "
      f"{ph.mean():.3f}, with the true x {np.exp(-(N - S) * x).mean():.3f}")
gap = om - s
print(f"  median |fitted - true endpoint| / (true endpoint - top positive): "
      f"{np.median(np.abs(omh - om) / gap):.1f}")
for lo, hi in [(0, 0.01), (0.01, 0.1), (0.1, 1), (1, 10), (10, np.inf)]:
    m = (N * x >= lo) & (N * x < hi)
    if m.sum():
        print(f"  true N·x in [{lo}, {hi}): {m.sum():4d} queries, realized {hit[m].mean():.3f}, "
              f"predicted {ph[m].mean():.3f}, called immune {np.mean(omh[m] < s[m]):.2f}")
