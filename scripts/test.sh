#!/usr/bin/env bash
# The test command of the README: installs the Python references the Rust tests compare against
# (target/pyenv) and the headless browser of the HTML report test (scripts/setup-browser.sh),
# runs the whole Rust suite in the optimised profile, checks docs/reference/cli.md against the
# help (scripts/cli_reference.py), then builds the Python
# package and runs its pytest suite (scripts/test-python.sh; Ray included).
# Arguments go to `cargo test` (e.g. a test-name filter); TAILRANK_SKIP_PYTHON=1 skips pytest,
# TAILRANK_SKIP_BROWSER=1 the browser install and the browser test.
set -euo pipefail
cd "$(dirname "$0")/.."
TAILRANK_PYTHON="$(scripts/setup-python.sh)"
export TAILRANK_PYTHON
if [ "${TAILRANK_SKIP_BROWSER:-0}" != 1 ]; then
  TAILRANK_CHROMIUM="$(scripts/setup-browser.sh)"
  export TAILRANK_CHROMIUM
fi
cargo test --release --workspace "$@"
# docs/reference/cli.md's flag tables are the help text (the test build left the binary).
"$TAILRANK_PYTHON" scripts/cli_reference.py --check
if [ "${TAILRANK_SKIP_PYTHON:-0}" != 1 ]; then
  scripts/test-python.sh
fi
