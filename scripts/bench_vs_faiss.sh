#!/usr/bin/env bash
# Benchmark the tailrank scan against faiss and numpy (see scripts/bench_vs_faiss.py and
# docs/reference/performance.md). Arguments are passed to the Python script, e.g. --pool 1000000.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=target/bench-venv
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet faiss-cpu numpy threadpoolctl
fi
cargo build --release --workspace --examples
# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE may be set on this machine for old OpenBLAS builds; they
# slow a current numpy and faiss down, so unset them for the benchmark only.
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$VENV/bin/python" scripts/bench_vs_faiss.py "$@"
