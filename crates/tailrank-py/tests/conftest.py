"""Shared fixtures: a small synthetic benchmark written as .npy shards with id files, and the
`tailrank` CLI binary the Python results are compared against."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
N_SHARDS = 8
SHARD_ROWS = 400
DIM = 32


def _unit(a):
    return (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)


def _save(dirpath: Path, stem: str, ids, arr):
    np.save(dirpath / f"{stem}.npy", arr)
    (dirpath / f"{stem}.ids.txt").write_text("".join(f"{i}\n" for i in ids))
    return str(dirpath / f"{stem}.npy")


@pytest.fixture(scope="session")
def cli():
    """Path of the `tailrank` binary (TAILRANK_BIN, else target/release/tailrank, built if needed)."""
    path = Path(os.environ.get("TAILRANK_BIN", ROOT / "target" / "release" / "tailrank"))
    if not path.exists():
        subprocess.run(["cargo", "build", "--release", "--workspace"], cwd=ROOT, check=True)
    assert path.exists(), f"{path} missing"
    return str(path)


@pytest.fixture(scope="session")
def bench(tmp_path_factory):
    """Queries (10), core (80: 3 positives per query + 50 others), 8 pool shards of 400 rows;
    positives are noisy copies of their query so that the APs span (0, 1)."""
    d = tmp_path_factory.mktemp("bench")
    rng = np.random.default_rng(20261130)
    nq = 10
    q = _unit(rng.standard_normal((nq, DIM)))
    qids = [f"q{i:02d}" for i in range(nq)]
    pos_rows = []
    gt = {}
    for i in range(nq):
        noise = rng.uniform(0.8, 3.0, size=(3, 1))
        pos_rows.append(q[i] + noise * rng.standard_normal((3, DIM)) / np.sqrt(DIM))
        gt[qids[i]] = [f"inst{i:02d}/p{j}" for j in range(3)]
    core = _unit(np.vstack(pos_rows + [rng.standard_normal((50, DIM))]))
    cids = [p for i in range(nq) for p in gt[qids[i]]] + [f"other/o{j:02d}" for j in range(50)]
    out = {"dir": d, "gt": gt, "qids": qids, "q": q, "cids": cids, "core": core}
    out["queries_path"] = _save(d, "queries", qids, q)
    out["core_path"] = _save(d, "core", cids, core)
    shards, shard_ids, shard_paths = [], [], []
    for s in range(N_SHARDS):
        a = _unit(rng.standard_normal((SHARD_ROWS, DIM)))
        ids = [f"yfcc{s:03d}/{r:06d}" for r in range(SHARD_ROWS)]
        shards.append(a)
        shard_ids.append(ids)
        shard_paths.append(_save(d, f"pool{s}", ids, a))
    out.update(shards=shards, shard_ids=shard_ids, shard_paths=shard_paths)
    (d / "gt.json").write_text(json.dumps(gt))
    out["gt_path"] = str(d / "gt.json")
    return out


def run_cli(cli, *args):
    r = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, f"tailrank {' '.join(map(str, args))} failed:\n{r.stderr}"
    return r.stdout


def files_but_inputs(s):
    """The summary's files as (manifest without ``inputs``, the other files but the checksum):
    what a grown summary and a direct scan share."""
    files = s.to_files()
    man = json.loads(files.pop("manifest.json"))
    man.pop("inputs")
    files.pop("manifest.xxh3")
    return man, files
