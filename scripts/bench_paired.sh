#!/usr/bin/env bash
# Paired before/after benchmark of the scan engine: two `scan_bench` binaries (e.g. one built
# from the commit before a change, one after) run in interleaved rounds on the same synthetic
# data, and the median wall time and GFLOP/s of each are printed (docs/reference/performance.md).
#
#   scripts/bench_paired.sh BEFORE_BIN AFTER_BIN ROUNDS [scan_bench synth arguments...]
#   scripts/bench_paired.sh /tmp/before target/release/examples/scan_bench 7 synth 400 768 150000 --threads 2
set -euo pipefail
before=$1 after=$2 rounds=$3
shift 3
out=$(mktemp)
for r in $(seq 1 "$rounds"); do
    # Alternate which binary goes first, so that a drift of the machine hits both alike.
    if [ $((r % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
    for which in $order; do
        bin=$before
        [ "$which" = after ] && bin=$after
        line=$("$bin" "$@" | tail -n 1)
        echo "$which $line" | tee -a "$out"
    done
done
python3 - "$out" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    which, js = line.split(" ", 1)
    rows.setdefault(which, []).append(json.loads(js))
med = {}
for which, rs in rows.items():
    keys = [k for k in rs[0] if isinstance(rs[0][k], (int, float))]
    med[which] = {k: statistics.median(r[k] for r in rs) for k in keys}
    print(which, "median", json.dumps(med[which]))
b, a = med["before"], med["after"]
wall = next(k for k in b if "second" in k or k in ("wall_s", "seconds"))
print(f"after/before wall time: {a[wall] / b[wall]:.3f}")
PY
