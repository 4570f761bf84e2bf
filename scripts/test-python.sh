#!/usr/bin/env bash
# Build the Python package `tailrank` (PyO3 + maturin, abi3 wheel) into target/pyenv-tailrank
# and run its pytest suite (crates/tailrank-py/tests). Idempotent: the venv and its PyPI
# packages (scripts/requirements-python.txt) are installed once; cargo reuses target/.
# Extra arguments go to pytest (e.g. `-k ray`).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
venv="$root/target/pyenv-tailrank"
req="$root/scripts/requirements-python.txt"
stamp="$venv/.requirements-installed"
py="${TAILRANK_PY_BASE:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv" >&2
fi
if [ ! -f "$stamp" ] || ! cmp -s "$req" "$stamp"; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" >&2
  cp "$req" "$stamp"
fi
export CARGO_PROFILE_RELEASE_INCREMENTAL="${CARGO_PROFILE_RELEASE_INCREMENTAL:-true}"
# The CLI the tests compare against.
cargo build --release --workspace --quiet
wheels="$root/target/wheels-py"
rm -rf "$wheels"
"$venv/bin/maturin" build --release --quiet \
  --manifest-path "$root/crates/tailrank-py/Cargo.toml" \
  --interpreter "$venv/bin/python" --target-dir "$root/target" --out "$wheels" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps \
  "$wheels"/tailrank-*.whl >&2
export TAILRANK_BIN="$root/target/release/tailrank"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/crates/tailrank-py/tests" "$@"
