#!/usr/bin/env python3
"""Speed of the Python binding, with the defaults a user gets:

1. a scan called from Python on in-memory arrays vs the CLI on the same data in .npy files
   (target: CLI time / Python time >= 0.95);
2. a Ray scan of 8 pool shards vs the single-process scan of the same files (target: Ray time /
   single time <= 1.3), with the default grouping (about one task per Ray CPU) and, for the
   record, one shard per task.

Run with the venv of scripts/test-python.sh (the package installed):
    target/pyenv-tailrank/bin/python scripts/bench_python.py [--pool 800000 --dim 128 ...]
Prints a Markdown table (paste into docs/reference/python.md). Variants are interleaved (one run of each
per round, --repeat rounds) and the minimum per variant is kept, so that load from other
processes on a shared machine hits all variants alike; the load average is printed.
"""

import argparse
import json
import os
import shutil
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


def timed(f):
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


def load():
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--core", type=int, default=2000)
    p.add_argument("--pool", type=int, default=800_000)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--shards", type=int, default=8)
    p.add_argument("--cpus", type=int, default=os.cpu_count(),
                   help="CPUs of the local Ray instance (default: all cores)")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--cli", default=str(ROOT / "target" / "release" / "tailrank"))
    p.add_argument("--skip-ray", action="store_true")
    a = p.parse_args()
    load0 = load()
    rng = np.random.default_rng(0)
    tmp = Path(tempfile.mkdtemp(prefix="trb"))
    qids = [f"q{i}" for i in range(a.queries)]
    cids = [f"c{i}" for i in range(a.core)]
    q, c = unit(rng, a.queries, a.dim), unit(rng, a.core, a.dim)
    gt = {qi: [cids[(2 * i) % a.core], cids[(2 * i + 1) % a.core]] for i, qi in enumerate(qids)}
    gt_path = str(tmp / "gt.json")
    Path(gt_path).write_text(json.dumps(gt))
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
    del shards
    n = len(pool_ids)
    whole = save(tmp, "pool", pool_ids, pool)  # the same pool as one file, for the CLI

    # Defaults everywhere: all cores for the CLI and tailrank.scan, the default grouping and
    # threads_per_task for tailrank.ray.scan.
    def cli(pool_paths):
        subprocess.run([a.cli, "scan", "--queries", qp, "--core", cp, "--gt", gt_path,
                        "--pool", *pool_paths, "-o", str(tmp / "cli_out")],
                       check=True, capture_output=True)

    def py_mem():
        return tailrank.scan((qids, q), (cids, c), (pool_ids, pool), gt)

    def py_mem_save():  # the same work as the CLI: scan, then write the summary folder
        s = py_mem()
        s.save(tmp / "py_out")
        return s

    def py_files():
        return tailrank.scan(qp, cp, paths, gt_path)

    # Order within a round: each variant next to the one it is compared with.
    variants = {"cli": lambda: cli([whole]), "mem_save": py_mem_save, "mem": py_mem,
                "cli_shards": lambda: cli(paths), "files": py_files}
    ray_note = ""
    if not a.skip_ray:
        import ray
        import tailrank.ray as tray

        ray.init(num_cpus=a.cpus, include_dashboard=False, _temp_dir=str(tmp / "r"),
                 log_to_driver=False)
        cpus = ray.cluster_resources()["CPU"]
        spt = tray.default_shards_per_task(a.shards, cpus)
        ray_note = (f"; Ray: local instance, {cpus:g} CPUs, default grouping = {spt} shards/task "
                    f"({-(-a.shards // spt)} tasks), 1 thread/task")
        variants["ray"] = lambda: tray.scan(paths, qp, cp, gt_path)
        variants["ray1"] = lambda: tray.scan(paths, qp, cp, gt_path, shards_per_task=1)
    try:
        best = {k: float("inf") for k in variants}
        times = {k: [] for k in variants}
        out = {}
        if not a.skip_ray:  # start the workers once (their start is not what is measured)
            variants["ray"]()
            variants["ray1"]()
        for r in range(a.repeat):
            for k, f in variants.items():
                t, o = timed(f)
                times[k].append(t)
                best[k] = min(best[k], t)
                out[k] = o
            print(f"round {r + 1}: " + ", ".join(f"{k} {times[k][-1]:.3f}" for k in times),
                  file=sys.stderr)
        if not a.skip_ray:
            assert out["ray"] == out["files"] and out["ray1"] == out["files"], \
                "Ray result differs from the single-process scan"
    finally:
        if not a.skip_ray:
            ray.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    t_cli = best["cli"]

    def paired(num, den):
        """Median over rounds of the ratio of two variants run back to back in the same round
        (less sensitive to load that comes and goes than the ratio of the minima)."""
        return float(np.median(np.array(times[num]) / np.array(times[den])))

    lines = [
        f"pool {n} x {a.dim} f32 in {a.shards} shards, {a.queries} queries, core {a.core}, "
        f"{os.cpu_count()} cores{ray_note}; min of {a.repeat} interleaved rounds; "
        f"load average (1/5/15 min) {load0} before, {load()} after",
        "",
        "| run | seconds (min) | ratio of the minima | median of per-round ratios |",
        "|---|---:|---:|---:|",
        f"| CLI `tailrank scan`, pool in one .npy file (incl. process start and summary write) "
        f"| {t_cli:.3f} | 1.00 | |",
        f"| CLI `tailrank scan`, pool in {a.shards} .npy files (resumable chunks of --chunk-rows rows) "
        f"| {best['cli_shards']:.3f} | {t_cli / best['cli_shards']:.2f}x CLI speed "
        f"| {paired('cli', 'cli_shards'):.2f}x |",
        f"| `tailrank.scan` on in-memory arrays, then `Summary.save` (the CLI's work) "
        f"| {best['mem_save']:.3f} | {t_cli / best['mem_save']:.2f}x CLI speed "
        f"| {paired('cli', 'mem_save'):.2f}x |",
        f"| `tailrank.scan` on in-memory arrays (scan only) | {best['mem']:.3f} "
        f"| {t_cli / best['mem']:.2f}x CLI speed | {paired('cli', 'mem'):.2f}x |",
        f"| `tailrank.scan` on the {a.shards} .npy files | {best['files']:.3f} "
        f"| {t_cli / best['files']:.2f}x CLI speed | {paired('cli', 'files'):.2f}x |",
    ]
    if not a.skip_ray:
        one = best["files"]
        lines += [
            f"| `tailrank.ray.scan`, {a.shards} shards, default grouping ({spt} shards/task) "
            f"| {best['ray']:.3f} | {best['ray'] / one:.2f}x single-process time ({one:.3f} s) "
            f"| {paired('ray', 'files'):.2f}x |",
            f"| `tailrank.ray.scan`, {a.shards} shards, `shards_per_task=1` "
            f"| {best['ray1']:.3f} | {best['ray1'] / one:.2f}x single-process time "
            f"| {paired('ray1', 'files'):.2f}x |",
        ]
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
