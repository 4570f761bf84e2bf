#!/usr/bin/env bash
# Create target/pyenv with the Python references the tests compare against (numpy, scipy,
# scikit-learn, h5py, xxhash). Idempotent; prints the interpreter path.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/target/pyenv"
req="$root/scripts/requirements-test.txt"
stamp="$venv/.requirements-installed"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
if [ ! -f "$stamp" ] || ! cmp -s "$req" "$stamp"; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" >&2
  cp "$req" "$stamp"
fi
echo "$venv/bin/python"
