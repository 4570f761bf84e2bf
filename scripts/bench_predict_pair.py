"""Paired timing of two `tailrank predict` binaries as whole processes: interleaved rounds, medians.

Usage: python3 scripts/bench_predict_pair.py BEFORE_BIN AFTER_BIN ROUNDS SUMMARY_DIR [predict args...]

Each round runs `BIN predict --summary SUMMARY_DIR --json ARGS` once per binary, the order
alternating between rounds so that a drift of the machine hits both alike. Prints the CPU, each
run, the medians of wall time, CPU time and peak RSS, the after/before ratios, and whether the
two binaries wrote the same JSON (docs/reference/performance.md, "predict on an ILIAS-sized
summary"). An ILIAS-sized summary: `tailrank simulate --preset mixture-tail --out DIR`
writes it to DIR/summary.
"""
import json
import statistics
import subprocess
import sys
import time


def cpu_model():
    model, flags = "unknown CPU", set()
    try:
        for line in open("/proc/cpuinfo"):
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model == "unknown CPU":
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        pass
    isa = [f for f in ("avx2", "avx512f", "amx_tile") if f in flags]
    return f"{model} ({', '.join(isa) or 'no AVX2'})"


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    before, after, rounds, summary = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    extra = sys.argv[5:]
    print("cpu:", cpu_model())
    runs, outputs = {"before": [], "after": []}, {}
    for r in range(rounds):
        for which in (("before", "after") if r % 2 == 0 else ("after", "before")):
            binary = before if which == "before" else after
            cmd = ["/usr/bin/time", "-f", "TIME %e %U %S %M", binary, "predict",
                   "--summary", summary, "--json", *extra]
            t0 = time.perf_counter()
            p = subprocess.run(cmd, check=True, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            line = [x for x in p.stderr.splitlines() if x.startswith("TIME ")][-1].split()
            runs[which].append({"wall": wall, "cpu": float(line[2]) + float(line[3]),
                                "rss_mb": float(line[4]) / 1024})
            outputs.setdefault(which, p.stdout)
            print(which, json.dumps({k: round(v, 3) for k, v in runs[which][-1].items()}), flush=True)
    med = {w: {k: statistics.median(x[k] for x in v) for k in v[0]} for w, v in runs.items()}
    for w in ("before", "after"):
        print(w, "median", json.dumps({k: round(v, 3) for k, v in med[w].items()}))
    print(f"after/before wall {med['after']['wall'] / med['before']['wall']:.3f}  "
          f"cpu {med['after']['cpu'] / med['before']['cpu']:.3f}")
    print("outputs identical:", outputs["before"] == outputs["after"])


if __name__ == "__main__":
    main()
