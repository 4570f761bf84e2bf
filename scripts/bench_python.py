#!/usr/bin/env python3
"""Speed of the Python binding: (1) a scan called from Python on in-memory arrays vs the CLI on
the same data in .npy files (target: CLI time / Python time >= 0.95); (2) a Ray scan of 8 pool
shards vs the single-process scan (target: Ray time / single time <= 1.3).

Run with the venv of scripts/test-python.sh (the package installed):
    target/pyenv-tailrank/bin/python scripts/bench_python.py [--pool 400000 --dim 256 ...]
Prints a Markdown table (paste into docs/python.md). Times are the best of --repeat runs.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import tailrank

ROOT = Path(__file__).resolve().parents[1]


def unit(rng, n, d):
    a = rng.standard_normal((n, d), dtype=np.float32)
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def save(d, stem, ids, a):
    np.save(d / f"{stem}.npy", a)
    (d / f"{stem}.ids.txt").write_text("".join(f"{i}\n" for i in ids))
    return str(d / f"{stem}.npy")


def best(f, repeat):
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t)
    return min(ts), out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--core", type=int, default=2000)
    p.add_argument("--pool", type=int, default=400_000)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--shards", type=int, default=8)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--cli", default=str(ROOT / "target" / "release" / "tailrank"))
    p.add_argument("--skip-ray", action="store_true")
    a = p.parse_args()
    rng = np.random.default_rng(0)
    tmp = Path(tempfile.mkdtemp(prefix="trb"))
    qids = [f"q{i}" for i in range(a.queries)]
    cids = [f"c{i}" for i in range(a.core)]
    q, c = unit(rng, a.queries, a.dim), unit(rng, a.core, a.dim)
    gt = {qi: [cids[(2 * i) % a.core], cids[(2 * i + 1) % a.core]] for i, qi in enumerate(qids)}
    import json

    (tmp / "gt.json").write_text(json.dumps(gt))
    qp, cp = save(tmp, "q", qids, q), save(tmp, "c", cids, c)
    rows = a.pool // a.shards
    shard_ids, shards, paths = [], [], []
    for s in range(a.shards):
        ids = [f"p{s}/{r}" for r in range(rows)]
        arr = unit(rng, rows, a.dim)
        shard_ids.append(ids)
        shards.append(arr)
        paths.append(save(tmp, f"p{s}", ids, arr))
    pool_ids = sum(shard_ids, [])
    pool = np.vstack(shards)
    n = len(pool_ids)
    th = str(a.threads)

    def cli():
        subprocess.run([a.cli, "scan", "--queries", qp, "--core", cp, "--gt", str(tmp / "gt.json"),
                        "--pool", *paths, "-o", str(tmp / "cli_out"), "--threads", th],
                       check=True, capture_output=True)

    def py_mem():
        return tailrank.scan((qids, q), (cids, c), (pool_ids, pool), gt, threads=a.threads)

    def py_files():
        return tailrank.scan(qp, cp, paths, str(tmp / "gt.json"), threads=a.threads)

    # Interleaved repeats (min per variant), so that load from other processes hits all alike.
    t_cli = t_mem = t_files = float("inf")
    for _ in range(a.repeat):
        t_cli = min(t_cli, best(cli, 1)[0])
        t, _ = best(py_mem, 1)
        t_mem = min(t_mem, t)
        t, single = best(py_files, 1)
        t_files = min(t_files, t)
    lines = [
        f"pool {n} x {a.dim} f32, {a.queries} queries, core {a.core}, {a.threads} threads, "
        f"{os.cpu_count()} cores; best of {a.repeat}",
        "",
        "| run | seconds | ratio |",
        "|---|---:|---:|",
        f"| CLI `tailrank scan` (.npy files, incl. process start) | {t_cli:.3f} | 1.00 |",
        f"| `tailrank.scan` on in-memory arrays | {t_mem:.3f} | {t_cli / t_mem:.2f}x CLI speed |",
        f"| `tailrank.scan` on the .npy files | {t_files:.3f} | {t_cli / t_files:.2f}x CLI speed |",
    ]
    if not a.skip_ray:
        import ray
        import tailrank.ray as tray

        ray.init(num_cpus=a.threads, include_dashboard=False, _temp_dir=str(tmp / "r"),
                 log_to_driver=False)
        try:
            for spt in (1, a.shards // a.threads):
                def dist():
                    return tray.scan(paths, qp, cp, str(tmp / "gt.json"), shards_per_task=spt,
                                     threads_per_task=1)
                dist()  # warm the workers
                t_ray = t_one = float("inf")
                for _ in range(a.repeat):
                    t, merged = best(dist, 1)
                    t_ray = min(t_ray, t)
                    t_one = min(t_one, best(py_files, 1)[0])
                assert merged == single, "Ray result differs from the single-process scan"
                lines.append(
                    f"| `tailrank.ray.scan`, {a.shards} shards, {spt} shard(s)/task, 1 thread/task "
                    f"| {t_ray:.3f} | {t_ray / t_one:.2f}x single-process time ({t_one:.3f} s) |"
                )
        finally:
            ray.shutdown()
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
