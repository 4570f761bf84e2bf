#!/usr/bin/env python3
"""Side-by-side timing of the tailrank scan, faiss IndexFlatIP.search and a numpy matmul.

Run through scripts/bench_vs_faiss.sh (it makes the venv with faiss-cpu and numpy, builds the
scan_bench example and unsets OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE for this process only).

Data (written once to --workdir, reused when present with the same sizes): Q queries, a core
with 2 positives per query plus 1000 extra items, a pool of N rows, all unit vectors of dim D
stored as f16 .npy with sibling `<stem>.ids.txt` id files, and gt.json.

Timed:
  tailrank  the library scan reading the f16 .npy pool from disk (memory-mapped, converted per
            block), M top scores for 5 nested levels + 4 drift shards (the CLI's default),
            per-positive counts; measured by the scan_bench example (wall seconds of scan()).
  tailrank-noshards  the same with the drift shards off (top-M and counts at 5 levels).
  tailrank-noscreen  the default with the integer screen off (every score computed in f32).
  tailrank-cli  (with --cli) `tailrank scan` as a user runs it, default options, timed as a whole
            process: reading and hashing ids, the scan, writing and checksumming the summary.
            Its fixed cost is reported as the CLI wall minus the library scan's wall of the
            same round (the `tailrank` row).
  faiss     IndexFlatIP.search(queries, k=M) over the pool as f32 in RAM (the f16 -> f32
            conversion and index.add are not counted).
  faiss-split  the same index searched twice, queries [:S] then [S:] (--faiss-split S; the
            ILIAS shape: 1,232 image then 1,000 text queries, the two separate searches a
            user of faiss runs for ILIAS).
  numpy     queries @ pool_chunk.T over the pool in chunks of 65536 rows converted to f32
            (only the products are timed; the same FLOPs, no top-k at all).
--shape ilias sets the ILIAS shape: D = 1024, 1,232 + 1,000 queries (scanned here as one set of
2,232: the same products as both ILIAS query sets in one pass), a 4M-row pool.
Effective GFLOP/s = 2 * Q * rows * D / seconds. With --repeat R the methods run in R interleaved
rounds (the faiss index is built once) and the medians are reported with the range of walls: on a
shared machine single runs vary by 10-20%.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def write_ids(path, ids):
    with open(path, "w") as fh:
        fh.write("\n".join(ids) + "\n")


def peak_anon_mb(proc):
    """Peak RssAnon (MB) of the child of `proc` (`/usr/bin/time`'s command) and of `proc`
    itself, sampled every 20 ms until `proc` exits."""
    def anon(pid):
        try:
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    def children(pid):
        try:
            return [int(c) for c in open(f"/proc/{pid}/task/{pid}/children").read().split()]
        except OSError:
            return []

    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, sum(anon(p) for p in [proc.pid] + children(proc.pid)))
        time.sleep(0.02)
    return peak


def generate(work, nq, d, n, seed=0):
    meta_path = os.path.join(work, "meta.json")
    meta = {"queries": nq, "dim": d, "pool": n, "seed": seed, "version": 1}
    if os.path.exists(meta_path) and json.load(open(meta_path)) == meta:
        log(f"reusing data in {work}")
        return
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(seed)
    q = unit(rng.standard_normal((nq, d), dtype=np.float32))
    np.save(os.path.join(work, "queries.npy"), q.astype(np.float16))
    write_ids(os.path.join(work, "queries.ids.txt"), [f"q/{i:05d}" for i in range(nq)])
    # Positives: near their query, with a spread of difficulty.
    noise = rng.standard_normal((2 * nq, d), dtype=np.float32) / np.sqrt(d)
    tau = rng.uniform(0.5, 4.0, size=(2 * nq, 1)).astype(np.float32)
    pos = unit(np.repeat(q, 2, axis=0) + tau * noise)
    extra = unit(rng.standard_normal((1000, d), dtype=np.float32))
    core = np.concatenate([pos, extra]).astype(np.float16)
    np.save(os.path.join(work, "core.npy"), core)
    core_ids = [f"pos/{i:06d}" for i in range(2 * nq)] + [f"core/{i:05d}" for i in range(1000)]
    write_ids(os.path.join(work, "core.ids.txt"), core_ids)
    gt = {f"q/{i:05d}": [core_ids[2 * i], core_ids[2 * i + 1]] for i in range(nq)}
    json.dump(gt, open(os.path.join(work, "gt.json"), "w"))
    pool = np.lib.format.open_memmap(
        os.path.join(work, "pool.npy"), mode="w+", dtype=np.float16, shape=(n, d)
    )
    step = 1 << 16
    for a in range(0, n, step):
        b = min(n, a + step)
        pool[a:b] = unit(rng.standard_normal((b - a, d), dtype=np.float32)).astype(np.float16)
    pool.flush()
    del pool
    write_ids(os.path.join(work, "pool.ids.txt"), [f"yfcc/{i:09d}" for i in range(n)])
    json.dump(meta, open(meta_path, "w"))
    log(f"wrote data to {work}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--pool", type=int, default=1_000_000)
    ap.add_argument("--top-m", type=int, default=4000)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--workdir", default="target/bench-data")
    ap.add_argument("--bin", default="target/release/examples/scan_bench")
    ap.add_argument("--skip", default="", help="comma-separated methods to skip")
    ap.add_argument("--repeat", type=int, default=1,
                    help="rounds of all methods, interleaved; medians are reported")
    ap.add_argument("--cli", action="store_true",
                    help="also time `tailrank scan` (the CLI, whole process, default options)")
    ap.add_argument("--cli-bin", default="target/release/tailrank")
    ap.add_argument("--faiss-split", type=int, default=None,
                    help="also time faiss as two searches, queries [:N] then [N:] "
                         "(--shape ilias: 1232, the image queries, then the 1,000 text ones)")
    ap.add_argument("--shape", choices=["default", "ilias"], default="default",
                    help="ilias: D=1024, 2232 queries, 4M pool (overrides the sizes)")
    args = ap.parse_args()
    if args.shape == "ilias":
        args.queries, args.dim, args.pool = 2232, 1024, 4_000_000
        if args.faiss_split is None:
            args.faiss_split = 1232
        if args.workdir == ap.get_default("workdir"):
            args.workdir = "target/bench-data-ilias"
    skip = set(filter(None, args.skip.split(",")))
    nq, d, n, m, t = args.queries, args.dim, args.pool, args.top_m, args.threads
    generate(args.workdir, nq, d, n)
    flops = 2.0 * nq * n * d
    rows = []

    # The scan as `tailrank scan` runs it by default (5 nested levels + 4 drift shards, each
    # with its own top-M), and with the drift shards off (5 levels: top-M and counts).
    # And the default with the integer screen off (every score in f32), for the A/B.
    variants = [("tailrank", "4", "5 levels + 4 drift shards", []),
                ("tailrank-noshards", "0", "5 levels, no drift shards", []),
                ("tailrank-noscreen", "4", "5 levels + 4 drift shards, --no-screen",
                 ["--no-screen"])]
    variants = [v for v in variants if v[0] not in skip and v[0].split("-")[0] not in skip]

    from threadpoolctl import threadpool_info, threadpool_limits

    q = np.load(os.path.join(args.workdir, "queries.npy")).astype(np.float32)
    pool = np.load(os.path.join(args.workdir, "pool.npy"), mmap_mode="r")
    step = 1 << 16

    def f32_chunks():
        """The pool as f32, chunk by chunk (only one chunk and the index are held in RAM)."""
        for a in range(0, n, step):
            yield a, np.asarray(pool[a:a + step], dtype=np.float32)

    index = None
    if "faiss" not in skip:
        import faiss

        log("building the faiss index ...")
        faiss.omp_set_num_threads(t)
        index = faiss.IndexFlatIP(d)
        for _, chunk in f32_chunks():
            index.add(chunk)

    # Rounds interleave the methods, so that a slow spell of a shared machine hits all of them.
    times = {}
    names = {}
    for rnd in range(args.repeat):
        for key, shards, what, extra in variants:
            log(f"[round {rnd + 1}/{args.repeat}] timing tailrank scan ({what}) ...")
            out = subprocess.run(
                [args.bin, "npy", args.workdir, "--top-m", str(m), "--levels", "5",
                 "--shards", shards, "--threads", str(t), *extra],
                check=True, capture_output=True, text=True,
            ).stdout
            r = json.loads(out.strip().splitlines()[-1])
            names[key] = (f"{key} scan (f16 .npy, M={m}, {what})",
                          f"peak extra anon {r['peak_extra_anon_mb']:.0f} MB")
            times.setdefault(key, []).append((r["seconds"], r["cpu_seconds"]))

        if args.cli:
            log(f"[round {rnd + 1}/{args.repeat}] timing the tailrank scan CLI ...")
            w = args.workdir
            out_dir = os.path.join(w, "cli-summary")
            shutil.rmtree(out_dir, ignore_errors=True)
            # /usr/bin/time gives the child's own CPU seconds and peak RSS (KB).
            cmd = ["/usr/bin/time", "-f", "TIME %e %U %S %M", args.cli_bin, "scan",
                   "--queries", os.path.join(w, "queries.npy"),
                   "--core", os.path.join(w, "core.npy"), "--gt", os.path.join(w, "gt.json"),
                   "--pool", os.path.join(w, "pool.npy"), "--output", out_dir,
                   "--top-m", str(m), "--threads", str(t)]
            w0 = time.perf_counter()
            # Output to a file, not a pipe: nothing can block while the memory is sampled.
            with tempfile.TemporaryFile("w+") as err_file:
                proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err_file, text=True)
                anon_mb = peak_anon_mb(proc)
                wall = time.perf_counter() - w0
                err_file.seek(0)
                stderr = err_file.read()
            if proc.returncode != 0:
                raise SystemExit(f"tailrank scan failed ({proc.returncode}):\n{stderr}")
            line = [x for x in stderr.splitlines() if x.startswith("TIME ")][-1].split()
            cpu, rss_mb = float(line[2]) + float(line[3]), float(line[4]) / 1024
            # RSS counts the pool's mapped pages (the page cache); RssAnon is the memory
            # the scan itself holds.
            names["tailrank-cli"] = (f"tailrank-cli scan (whole process, M={m}, defaults)",
                                     f"peak RSS {rss_mb:.0f} MB, peak RssAnon {anon_mb:.0f} MB")
            times.setdefault("tailrank-cli", []).append((wall, cpu))
            shutil.rmtree(out_dir, ignore_errors=True)

        if "numpy" not in skip:
            log(f"[round {rnd + 1}/{args.repeat}] timing numpy matmul ...")
            with threadpool_limits(limits=t):
                blas = [(i["internal_api"], i.get("architecture"), i["num_threads"])
                        for i in threadpool_info()]
                out = np.empty((nq, step), dtype=np.float32)
                np.matmul(q, np.asarray(pool[: 1 << 12], dtype=np.float32).T)  # warm up
                wall = cpu = 0.0
                for a, chunk in f32_chunks():
                    # Only the product is timed (the f16 -> f32 conversion is not).
                    w0, c0 = time.perf_counter(), time.process_time()
                    np.matmul(q, chunk.T, out=out[:, : len(chunk)])
                    wall += time.perf_counter() - w0
                    cpu += time.process_time() - c0
                names["numpy"] = (f"numpy matmul f32 (chunks of {step}; BLAS {blas})", "")
                times.setdefault("numpy", []).append((wall, cpu))

        if index is not None:
            log(f"[round {rnd + 1}/{args.repeat}] timing faiss IndexFlatIP.search ...")
            w0, c0 = time.perf_counter(), time.process_time()
            dist, _ = index.search(q, m)
            names["faiss"] = (f"faiss {faiss.__version__} IndexFlatIP.search k={m}", "")
            times.setdefault("faiss", []).append((time.perf_counter() - w0,
                                                   time.process_time() - c0))
            split = args.faiss_split or 0
            if 0 < split < nq:
                log(f"[round {rnd + 1}/{args.repeat}] timing faiss as two searches "
                    f"({split} + {nq - split} queries) ...")
                w0, c0 = time.perf_counter(), time.process_time()
                index.search(q[:split], m)
                index.search(q[split:], m)
                names["faiss-split"] = (f"faiss-split {faiss.__version__} IndexFlatIP.search "
                                        f"k={m}, two searches ({split} + {nq - split} queries)", "")
                times.setdefault("faiss-split", []).append((time.perf_counter() - w0,
                                                         time.process_time() - c0))
    del index

    def median(v):
        v = sorted(v)
        return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2

    rows = []
    for key, runs in times.items():
        wall = median([w for w, _ in runs])
        cpu = median([c for _, c in runs])
        spread = ""
        if len(runs) > 1:
            lo, hi = min(w for w, _ in runs), max(w for w, _ in runs)
            spread = f"wall {lo:.2f}-{hi:.2f} s over {len(runs)} rounds; "
        rows.append((names[key][0], wall, cpu, spread + names[key][1]))

    print(f"Q={nq} D={d} pool={n} threads={t} (2*Q*N*D = {flops / 1e12:.2f} TFLOP)")
    print(f"{'method':<75} {'wall s':>8} {'cpu s':>8} {'GFLOP/s':>8} {'GFLOP/cpu-s':>11}")
    for name, wall, cpu, note in rows:
        print(f"{name:<75} {wall:8.2f} {cpu:8.2f} {flops / wall / 1e9:8.1f} "
              f"{flops / cpu / 1e9:11.1f} {note}")
    by = {r[0].split()[0]: r for r in rows}
    for key in ("tailrank", "tailrank-noshards", "tailrank-noscreen", "tailrank-cli"):
        if key not in by:
            continue
        for other in ("faiss", "faiss-split", "numpy"):
            if other in by:
                print(f"{key} speed / {other}: wall {by[other][1] / by[key][1]:.2f}x, "
                      f"cpu {by[other][2] / by[key][2]:.2f}x")
    if "tailrank-cli" in times and "tailrank" in times:
        fixed = median([c[0] - l[0] for c, l in zip(times["tailrank-cli"], times["tailrank"])])
        print(f"tailrank-cli fixed cost (CLI wall - library scan wall, same round): "
              f"median {fixed:.2f} s")

if __name__ == "__main__":
    main()
