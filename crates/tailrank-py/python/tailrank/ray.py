"""Distributed scan on Ray: one task per group of pool shards, summaries merged in a tree.

Each task runs the Rust scan (:func:`tailrank.scan`) on its shard group with
``threads_per_task`` threads (and reserves as many Ray CPUs, so Ray and the scan's threads do not
oversubscribe) and returns its :class:`~tailrank.Summary`. By default the shards are grouped so
that there are about as many tasks as the cluster has CPUs divided by ``threads_per_task``
(8 shards on a 2-CPU cluster: 2 tasks of 4 shards): every task has a fixed cost (a worker,
loading queries and core, shipping its summary), so fewer, larger tasks are faster as long as
every CPU has one. The summaries are merged ``merge_fanin`` at a time by merge tasks, in shard
order, and the last ``merge_fanin`` or fewer in the driver. Because summaries of disjoint shards
merge exactly (counts add, top-M lists merge, N = sum of the shards' rows in exact mode), the
result is bit for bit the single-process scan of all shards.

Failures: a task whose worker dies is re-run by Ray (``max_retries``); only the returned value of
a finished task is ever merged, so a retried task is counted once, and ``Summary.merge`` refuses
two parts that scanned the same shard (same pool digest). Errors in the inputs (bad file, bad
option) are raised at once, not retried.

Command line::

    python -m tailrank.ray --queries Q.npy --core C.npy --gt gt.json --pool s0.npy s1.npy ... \\
        -o summary_dir [--fraction F --seed S --after F_B --pool-size N --shards-per-task K \\
        --threads-per-task 1 --address auto]
"""

from __future__ import annotations

import argparse
import math
import os
import warnings
import sys
from typing import Any, List, Optional, Sequence

import tailrank
from tailrank import OptionError, Summary, TailrankError, TailrankIOError

__all__ = ["scan", "main", "default_shards_per_task"]

# The Ray-specific defaults, of `scan` and of the command line alike.
THREADS_PER_TASK = 1
MERGE_FANIN = 4


def default_shards_per_task(n_shards: int, cpus: float, threads_per_task: int = THREADS_PER_TASK) -> int:
    """Shards per task when not given: as few tasks as keep every CPU busy, i.e. about
    ``cpus // threads_per_task`` tasks (at least 1) of ``ceil(n_shards / tasks)`` shards."""
    tasks = max(1, int(cpus) // max(1, threads_per_task))
    return max(1, math.ceil(n_shards / tasks))


def _scan_group(queries: Any, core: Any, group: List[Any], gt: Any, kw: dict, fail_dir: Optional[str], index: int) -> Summary:
    if fail_dir is not None:
        # Test hook: the first attempt of each task kills its worker (a crash Ray must retry).
        marker = os.path.join(fail_dir, f"task-{index}")
        if not os.path.exists(marker):
            with open(marker, "w") as f:
                f.write("failed once\n")
            os._exit(1)
    # A group may hold no sampled row while the whole scan does: the driver warns once.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=tailrank.EMPTY_SAMPLE_WARNING)
        return tailrank.scan(queries, core, group, gt, **kw)


def _merge(*parts: Summary) -> Summary:
    return Summary.merge_all(list(parts))


def scan(
    shard_paths: Sequence[Any],
    queries: Any,
    core: Any,
    gt: Any,
    fraction: Optional[float] = None,
    seed: int = tailrank._native.SCAN_DEFAULTS["seed"],
    pool_size: Optional[int] = None,
    top_m: int = tailrank._native.SCAN_DEFAULTS["top_m"],
    model: str = "",
    *,
    query_set: Optional[str] = None,
    after: Optional[float] = None,
    min_fraction: Optional[float] = None,
    drift_shards: int = tailrank._native.SCAN_DEFAULTS["drift_shards"],
    normalize: bool = False,
    shards_per_task: Optional[int] = None,
    threads_per_task: int = THREADS_PER_TASK,
    merge_fanin: int = MERGE_FANIN,
    max_retries: int = 3,
    address: Optional[str] = None,
    _fail_first_attempt_dir: Optional[str] = None,
) -> Summary:
    """Scan pool shards on Ray and return the merged :class:`~tailrank.Summary`.

    ``shard_paths``: pool shard files (``.npy`` with sibling ids, HDF5) or ``(path, ids_path)``
    pairs, in pool order; every worker must be able to read them. ``queries``, ``core``, ``gt``
    and the scan options are those of :func:`tailrank.scan` (arrays and dicts are put in the
    object store once, not per task). Tasks take ``shards_per_task`` consecutive shards and
    reserve ``threads_per_task`` CPUs each (the scan runs with that many threads). Default
    ``shards_per_task``: :func:`default_shards_per_task` with the CPUs Ray reports for the cluster
    (``ray.cluster_resources()["CPU"]``), so that there are about as many tasks as CPUs / threads.
    Uses the running Ray instance, or starts one (``ray.init(address=address)``).
    With ``after=f_b`` the shards hold the sample increment ``[t(f_b), t(fraction))`` and the
    result is its part summary (merged like any parts), which ``Summary.grow`` /
    ``tailrank grow`` turns with the base at f_b into the sample at ``fraction``.
    """
    import ray

    # One path is one shard (a str is iterable, and its characters are no paths).
    single = isinstance(shard_paths, (str, bytes, os.PathLike))
    shards = [shard_paths] if single else list(shard_paths)
    if not shards:
        raise OptionError("ray.scan: no pool shard given")
    shards_per_task = tailrank._count(shards_per_task, "shards_per_task", optional=True)
    threads_per_task = tailrank._count(threads_per_task, "threads_per_task")
    merge_fanin = tailrank._count(merge_fanin, "merge_fanin")
    if (shards_per_task is not None and shards_per_task < 1) or threads_per_task < 1 or merge_fanin < 2:
        raise OptionError("ray.scan: shards_per_task and threads_per_task must be >= 1, merge_fanin >= 2")
    fraction = tailrank._scan_fraction(fraction, after)
    # Check the inputs once here, so that bad inputs fail fast, before Ray starts,
    # instead of in every task.
    tailrank._text(model, "model")
    tailrank._text(query_set, "query_set", optional=True)
    for value, name in [(seed, "seed"), (top_m, "top_m"), (drift_shards, "drift_shards")]:
        tailrank._count(value, name)
    tailrank._count(pool_size, "pool_size", optional=True)
    if tailrank._is_path(gt) and not os.path.exists(tailrank._fspath(gt, "gt")):
        raise TailrankIOError(f"{tailrank._fspath(gt, 'gt')}: ground truth not found")
    if not ray.is_initialized():
        ray.init(address=address)
    # A task reserves threads_per_task CPUs of one node: above the largest node it never starts.
    node_cpus = [n["Resources"].get("CPU", 0) for n in ray.nodes() if n.get("Alive")]
    # (A head node of 0 CPUs alone is an autoscaling cluster before its workers join: not judged.)
    if node_cpus and 0 < max(node_cpus) < threads_per_task:
        raise OptionError(
            f"ray.scan: threads_per_task = {threads_per_task} reserves that many Ray CPUs per task, "
            f"but the largest node has {max(node_cpus):g}: no task could start "
            f"(give threads_per_task <= {int(max(node_cpus))})"
        )
    if shards_per_task is None:
        cpus = ray.cluster_resources().get("CPU", 1)
        shards_per_task = default_shards_per_task(len(shards), cpus, threads_per_task)

    kw = dict(
        fraction=fraction,
        seed=seed,
        pool_size=pool_size,
        top_m=top_m,
        model=model,
        threads=threads_per_task,
        query_set=query_set,
        after=after,
        min_fraction=min_fraction,
        drift_shards=drift_shards,
        normalize=normalize,
    )
    q_ref, c_ref, g_ref = ray.put(queries), ray.put(core), ray.put(gt)
    task = ray.remote(_scan_group).options(num_cpus=threads_per_task, max_retries=max_retries)
    merge = ray.remote(_merge).options(num_cpus=1, max_retries=max_retries)
    refs = [
        task.remote(q_ref, c_ref, shards[i : i + shards_per_task], g_ref, kw, _fail_first_attempt_dir, i // shards_per_task)
        for i in range(0, len(shards), shards_per_task)
    ]
    while len(refs) > merge_fanin:
        refs = [
            refs[i] if len(refs[i : i + merge_fanin]) == 1 else merge.remote(*refs[i : i + merge_fanin])
            for i in range(0, len(refs), merge_fanin)
        ]
    # The root of the tree is merged here: the parts come to the driver anyway, so a last merge
    # task would only add a round trip of the merged summary.
    try:
        parts = ray.get(refs)
    except ray.exceptions.RayTaskError as e:
        # A task's TailrankError comes back as itself (it pickles under `tailrank`), so that
        # `except tailrank.TailrankError` catches it here as in a single process.
        if isinstance(e.cause, TailrankError):
            raise e.cause from None
        raise e.as_instanceof_cause() from None
    # The shards are disjoint rows of the pool: N must hold them all (each task checked its own).
    whole = tailrank._check_scanned_rows(parts[0] if len(parts) == 1 else Summary.merge_all(parts))
    tailrank._warn_empty_sample(whole)
    return whole


def _exit_code(e: TailrankError) -> int:
    """The CLI's exit status of the error's kind (docs/reference/errors.md); 1 for none."""
    return getattr(e, "exit_code", 1)


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tailrank.ray", description="Distributed tailrank scan on Ray.")
    p.add_argument("--queries", required=True, help="query descriptors (.npy with ids, or HDF5)")
    p.add_argument("--core", required=True, help="core descriptors")
    p.add_argument("--gt", required=True, help="ground truth (ILIAS folder or JSON)")
    p.add_argument("--pool", required=True, nargs="+", help="pool shard files")
    p.add_argument("-o", "--output", required=True, help="output summary folder")
    p.add_argument("--query-set", default=None,
                   help="query set of the ground truth (required when it holds several)")
    p.add_argument("--fraction", type=float, default=None,
                   help="hash-sample fraction f of the pool (default 1: exact scan; "
                        "--after needs it)")
    p.add_argument("--seed", type=int, default=tailrank._native.SCAN_DEFAULTS["seed"],
                   help="hash seed of the sample (default %(default)s)")
    p.add_argument("--after", type=float, default=None,
                   help="scan the sample increment [t(after), t(f)) into a part (tailrank grow)")
    p.add_argument("--min-fraction", type=float, default=None,
                   help="smallest nesting level fraction (default: f/16)")
    p.add_argument("--pool-size", type=int, default=None,
                   help="size N of the full pool (default: the pool rows when f = 1)")
    p.add_argument("--top-m", type=int, default=tailrank._native.SCAN_DEFAULTS["top_m"],
                   help="top pool scores kept per query and subset (default %(default)s)")
    p.add_argument("--drift-shards", type=int,
                   default=tailrank._native.SCAN_DEFAULTS["drift_shards"],
                   help="hash shards of the drift check (default %(default)s)")
    p.add_argument("--model", default="", help="model name recorded in the summary")
    p.add_argument("--normalize", action="store_true",
                   help="L2-normalise rows that are not unit-norm instead of refusing them")
    p.add_argument("--shards-per-task", type=int, default=None,
                   help="shards per task (default: about one task per CPU / threads-per-task)")
    p.add_argument("--threads-per-task", type=int, default=THREADS_PER_TASK,
                   help="scan threads of each task, and the Ray CPUs it reserves (default %(default)s)")
    p.add_argument("--merge-fanin", type=int, default=MERGE_FANIN,
                   help="summaries merged per merge task (default %(default)s)")
    p.add_argument("--address", default=None, help="Ray address (default: start a local instance)")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs of a local instance")
    a = p.parse_args(argv)
    try:
        # Before the scan: a bad output path would otherwise be found only once every shard
        # is scanned.
        tailrank._native.check_summary_output(a.output, [a.queries, a.core, a.gt, *a.pool])
        # The sample's options too (a local Ray instance takes seconds to start).
        fraction = tailrank._scan_fraction(a.fraction, a.after, ("--after", "--fraction"))
        tailrank._native.sample_range(fraction, a.after)
    except TailrankError as e:
        print(f"tailrank.ray: error: {e}", file=sys.stderr)
        return _exit_code(e)
    import ray

    ray.init(address=a.address, num_cpus=a.num_cpus, include_dashboard=False)
    # Every option that is not an input, the output or a setting of the local Ray instance is
    # a keyword of scan() under its argparse name.
    not_scan = {"queries", "core", "gt", "pool", "output", "address", "num_cpus"}
    options = {k: v for k, v in vars(a).items() if k not in not_scan}
    try:
        s = scan(a.pool, a.queries, a.core, a.gt, **options)
        s.save(a.output)
    except TailrankError as e:
        print(f"tailrank.ray: error: {e}", file=sys.stderr)
        return _exit_code(e)
    finally:
        ray.shutdown()
    print(f"tailrank.ray: {len(a.pool)} shard(s) -> {a.output}: {s!r}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
