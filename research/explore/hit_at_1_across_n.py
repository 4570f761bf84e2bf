"""Notes: docs/notes/2026-12-07-hit-at-1-across-n.md. hit@1 at a pool size N: the calibrated
estimate (`predict`'s hit@1) against the count law's own reading (`hit_calibration`'s
`uncalibrated_hit_at_1`), seed 0 of each tuning family at f = 5%, truth from `truth.json`
(a query hits when its top positive has no core or pool item above it). A measurement: no
rule is fitted to it.

usage: python3 hit_at_1_across_n.py TAILRANK N WORKDIR
"""
import json, subprocess, sys, os
T = sys.argv[1]; N = sys.argv[2]; out = sys.argv[3]
fams = ["ilias-like", "mixture-tail", "ilias-continuous", "beta-mixture",
        "truncnormal-mixture", "kumaraswamy", "bursts", "heterogeneous"]
rows = []
for f in fams:
    d = f"{out}/{f}-{N}"
    subprocess.run([T, "simulate", "--preset", f, "--pool-size", N, "--seed", "0", "-o", d],
                   check=True, capture_output=True)
    p = json.loads(subprocess.run([T, "predict", "--summary", f"{d}/summary", "--json"],
                                  check=True, capture_output=True, text=True).stdout)
    t = json.load(open(f"{d}/truth.json"))
    k = t["k"]
    hit = sum(1 for q in t["queries"] if q["positives"] and
              1 + q["positives"][0]["core_above"] + q["positives"][0]["pool_above_n"] == 1) / len(t["queries"])
    hc = p["hit_calibration"]
    rows.append((f, 100 * hit, 100 * (p["hit_at_1"] - hit), 100 * (hc["uncalibrated_hit_at_1"] - hit),
                 hc["scales"]))
    print(f, f"{100*hit:.1f}", f"{rows[-1][2]:+.2f}", f"{rows[-1][3]:+.2f}", hc["scales"], flush=True)
    subprocess.run(["rm", "-rf", d])
m = lambda i: sum(r[i] for r in rows) / len(rows)
ma = lambda i: sum(abs(r[i]) for r in rows) / len(rows)
print(f"mean estimate {m(2):+.2f} (|{ma(2):.2f}|), uncalibrated {m(3):+.2f} (|{ma(3):.2f}|)")
