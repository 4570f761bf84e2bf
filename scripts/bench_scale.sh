#!/usr/bin/env bash
# Scale benchmark of the scan engine for full ILIAS (docs/reference/performance.md, "Scale: a 100M-row
# pool, and full ILIAS extrapolated").
#
# Scans a pool of ROWS synthetic unit vectors streamed from a seeded generator (never stored:
# `scan_bench synth`, row i generated from (seed, i)), D = 64, Q queries, exact mode (every row
# scanned, M = 4000, 5 levels, 4 drift shards), and prints rows/s and the peak resident memory
# of the process (`/usr/bin/time -v`). Then measures the f32 kernel (the GEMM tile) and the
# whole scan at D = 1024, the rates the full-ILIAS extrapolation of docs/reference/performance.md uses.
#
# usage: scripts/bench_scale.sh [ROWS...]      default: 10000000 100000000
# env:   THREADS (2), Q (300), D (64), Q1024 (2232), N1024 (500000)
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-2}
Q=${Q:-300}
D=${D:-64}
Q1024=${Q1024:-2232}
N1024=${N1024:-500000}
ROWS=("$@")
[ ${#ROWS[@]} -gt 0 ] || ROWS=(10000000 100000000)

cargo build --release -p tailrank --examples
BIN=target/release/examples
echo "machine: $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "${ROWS[@]}"; do
    log=$(mktemp)
    json=$(/usr/bin/time -v "$BIN/scan_bench" synth "$Q" "$D" "$n" --threads "$THREADS" 2>"$log")
    rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
    secs=$(echo "$json" | sed -E 's/.*"seconds": ([0-9.]+).*/\1/')
    python3 - "$n" "$secs" "$rss_kb" "$json" <<'PY'
import json, sys
n, secs, rss_kb, j = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
print(f"rows {n:,}: scan {secs:.1f} s wall, {j['cpu_seconds']:.1f} CPU-s, {n / secs / 1e6:.2f} M rows/s "
      f"({j['gflops']:.1f} GFLOP/s), peak RSS {rss_kb / 1e6:.2f} GB "
      f"(engine above the inputs: {j['peak_extra_anon_mb'] / 1e3:.2f} GB)")
PY
    rm -f "$log"
    echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "--- D = 1024"
"$BIN/kernel_bench" "$THREADS" 100 1024 | grep "f32 kernel"
"$BIN/scan_bench" synth "$Q1024" 1024 "$N1024" --threads "$THREADS"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
