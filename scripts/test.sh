#!/usr/bin/env bash
# The test command of the README: installs the Python reference implementations the tests
# compare against, then runs the whole suite in the optimised profile.
set -euo pipefail
cd "$(dirname "$0")/.."
TAILRANK_PYTHON="$(scripts/setup-python.sh)"
export TAILRANK_PYTHON
cargo test --release --workspace "$@"
