"""Paired timing of two `tailrank scan` binaries as whole processes: interleaved rounds, medians.

Usage: bench_cli_pair.py BEFORE_BIN AFTER_BIN ROUNDS WORKDIR Q D N
(data as in bench_vs_faiss.py, written once to WORKDIR; docs/reference/performance.md). Prints each run,
the medians of wall, CPU and peak RSS, the after/before ratios, and whether the two outputs are
byte-identical.
"""
import json, os, shutil, statistics, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_vs_faiss as b
before, after, rounds, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
nq, d, n = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
b.generate(work, nq, d, n)
res = {"before": [], "after": []}
for r in range(rounds):
    order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
    for which in order:
        binp = before if which == "before" else after
        out = os.path.join(work, "cli-summary-" + which)
        shutil.rmtree(out, ignore_errors=True)
        cmd = ["/usr/bin/time", "-f", "TIME %e %U %S %M", binp, "scan",
               "--queries", f"{work}/queries.npy", "--core", f"{work}/core.npy",
               "--gt", f"{work}/gt.json", "--pool", f"{work}/pool.npy", "--output", out]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, check=True, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        line = [x for x in p.stderr.splitlines() if x.startswith("TIME ")][-1].split()
        res[which].append({"wall": wall, "cpu": float(line[2]) + float(line[3]), "rss_mb": float(line[4]) / 1024})
        print(which, json.dumps(res[which][-1]), flush=True)
med = {w: {k: statistics.median(x[k] for x in v) for k in v[0]} for w, v in res.items()}
for w in med: print(w, "median", json.dumps(med[w]))
print(f"after/before wall {med['after']['wall']/med['before']['wall']:.3f}  cpu {med['after']['cpu']/med['before']['cpu']:.3f}")
# identical outputs
a = os.path.join(work, "cli-summary-after"); bb = os.path.join(work, "cli-summary-before")
diff = subprocess.run(["diff", "-r", a, bb], capture_output=True, text=True)
print("outputs identical:", diff.returncode == 0, diff.stdout[:500])
