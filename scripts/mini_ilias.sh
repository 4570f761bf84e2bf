#!/usr/bin/env bash
# A mini-ILIAS run on synthetic data (its output: docs/reference/ilias.md, "Quick start"):
# writes a small folder in the ILIAS layout (id lists, taxonomy.json and the extractor's HDF5
# features, by crates/tailrank/tests/data/ilias_synth.py: 14 instances, 700 distractors), a selection of
# half the distractors in the official mini-ILIAS form (the key after the shard name, as in
# mini_ilias_yfcc100m_ids.txt), then runs `tailrank ilias --selected-ids` on it.
#
# usage: scripts/mini_ilias.sh [DIR]      (default /tmp/mini-ilias)
# env:   PYTHON, a Python with numpy and h5py (default: the project's, target/pyenv, made by
#        scripts/setup-python.sh on first use); extra arguments to `tailrank ilias` in ILIAS_ARGS;
#        TAILRANK, a tailrank binary to run (default: target/release/tailrank, built here)
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-/tmp/mini-ilias}
PYTHON=${PYTHON:-$(scripts/setup-python.sh)}
rm -rf "$DIR/ds" "$DIR/feat"
"$PYTHON" crates/tailrank/tests/data/ilias_synth.py "$DIR/ds" "$DIR/feat"
"$PYTHON" - "$DIR" <<'PY'
import gzip, sys
d = sys.argv[1]
ids = gzip.open(f"{d}/ds/image_ids/distractor_ids.txt.gz", "rt").read().split()
open(f"{d}/mini_ids.txt", "w").write("".join(i.split("/")[1] + "\n" for i in ids[::2]))
PY
if [ -z "${TAILRANK:-}" ]; then
  cargo build --release -q -p tailrank-cli
  TAILRANK=target/release/tailrank
fi
# shellcheck disable=SC2086
"$TAILRANK" ilias --dataset-dir "$DIR/ds" --features "$DIR/feat" \
    --selected-ids "$DIR/mini_ids.txt" --k 100 --model synthetic ${ILIAS_ARGS:-}
