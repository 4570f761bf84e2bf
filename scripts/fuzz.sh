#!/usr/bin/env bash
# Property-based fuzzing of tailrank's readers (crates/tailrank/tests/reliability_fuzz.rs) with
# a large case count, for a bounded time.
#
#   scripts/fuzz.sh [SECONDS]        # default 600 s; PROPTEST_CASES overrides the case count
#
# `cargo fuzz` needs a nightly toolchain; these proptest properties feed arbitrary and mutated
# bytes to the .npy header parser and reader, the HDF5 reader, the results/ground-truth JSON
# readers, id lists, the summary folder reader and the hardness CSV reader, asserting that none
# panics, and arbitrary legal output names to the output-path rule (staging/lock names, atomic
# writes). Each property runs PROPTEST_CASES cases; rounds repeat with fresh random seeds until
# the time budget is spent. A failure prints the minimal failing input: add it to the
# regression tests at the end of reliability_fuzz.rs after fixing the reader.
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-600}
export PROPTEST_CASES=${PROPTEST_CASES:-20000}
export CARGO_PROFILE_RELEASE_INCREMENTAL=${CARGO_PROFILE_RELEASE_INCREMENTAL:-true}
export TAILRANK_PYTHON=${TAILRANK_PYTHON:-$PWD/target/pyenv/bin/python}
cargo test --release --workspace --test reliability_fuzz --no-run
start=$(date +%s)
round=0
while :; do
  now=$(date +%s)
  left=$((budget - (now - start)))
  if [ "$left" -le 0 ]; then break; fi
  round=$((round + 1))
  echo "fuzz round $round: PROPTEST_CASES=$PROPTEST_CASES, ${left}s left"
  # proptest draws a fresh seed per run; `timeout` bounds the round by what is left.
  log=$(mktemp)
  status=0
  timeout --foreground "$left" cargo test --release --workspace --test reliability_fuzz \
    -- --test-threads 2 >"$log" 2>&1 || status=$?
  tail -n 15 "$log"
  if [ "$status" -eq 124 ]; then
    rm -f "$log"
    echo "fuzz: time budget reached during round $round (clean so far)"
    break
  elif [ "$status" -ne 0 ]; then
    echo "fuzz: FAILED in round $round (full log: $log)" >&2
    exit 1
  fi
  rm -f "$log"
done
echo "fuzz: clean, $round round(s) in $(( $(date +%s) - start ))s"
