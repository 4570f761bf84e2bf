"""Ray: a scan of 8 shards on a local cluster equals the single-process scan bit for bit, also
when every task's worker dies once and Ray retries it; the CLI entry point; clean shutdown; a
Ray scan of a sample increment (``after=``) grows the base as the CLI's does."""

import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import tailrank
from conftest import files_but_inputs, run_cli

ray = pytest.importorskip("ray")
import tailrank.ray as tray  # noqa: E402


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("r"))
    if len(tmp) > 40:  # unix socket paths under the temp dir must stay short
        tmp = tempfile.mkdtemp(prefix="trr", dir="/tmp")
    ray.init(num_cpus=2, include_dashboard=False, _temp_dir=tmp, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()
    assert not ray.is_initialized()


def test_ray_scan_equals_single_process(bench, cluster, tmp_path):
    opts = dict(fraction=0.5, seed=3, pool_size=64000, top_m=300, model="toy")
    single = tailrank.scan(bench["queries_path"], bench["core_path"], bench["shard_paths"],
                           bench["gt_path"], **opts)
    dist = tray.scan(bench["shard_paths"], bench["queries_path"], bench["core_path"],
                     bench["gt_path"], shards_per_task=1, merge_fanin=3, **opts)
    assert dist == single
    # Every task's worker crashes on its first attempt: Ray retries, nothing is counted twice.
    fails = tmp_path / "fails"
    fails.mkdir()
    retried = tray.scan(bench["shard_paths"], bench["queries_path"], bench["core_path"],
                        bench["gt_path"], shards_per_task=2, _fail_first_attempt_dir=str(fails),
                        **opts)
    assert len(os.listdir(fails)) == 4
    assert retried == single
    # Exact mode with in-memory queries/core and a dict ground truth: N = all rows.
    ex1 = tailrank.scan((bench["qids"], bench["q"]), (bench["cids"], bench["core"]),
                        bench["shard_paths"], bench["gt"], top_m=50)
    ex = tray.scan(bench["shard_paths"], (bench["qids"], bench["q"]),
                   (bench["cids"], bench["core"]), bench["gt"], top_m=50, shards_per_task=3)
    assert ex == ex1 and ex.pool_size == 3200


def test_ray_cli(bench, cluster, tmp_path):
    out = tmp_path / "summary"
    r = subprocess.run(
        [sys.executable, "-m", "tailrank.ray", "--queries", bench["queries_path"], "--core",
         bench["core_path"], "--gt", bench["gt_path"], "--pool", *bench["shard_paths"], "-o",
         str(out), "--top-m", "50", "--shards-per-task", "4", "--address", cluster],
        capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stderr
    single = tailrank.scan(bench["queries_path"], bench["core_path"], bench["shard_paths"],
                           bench["gt_path"], top_m=50)
    assert tailrank.load_summary(out) == single
    # A bad output path is refused before Ray starts or any shard is scanned: an input file,
    # and a folder tailrank did not write (here the folder holding the inputs).
    shard = bench["shard_paths"][0]
    # The exit status is the CLI's of the error's kind: 6 for an output, 2 for an option.
    assert tailrank.OutputError.exit_code == 6 and tailrank.OptionError.exit_code == 2
    for bad, extra, why, code in [
        (shard, [], "is an input of this command", 6),
        (os.path.dirname(shard), [], "holds the input", 6),
        (str(out) + "_b", ["--after", "0.01"], "--after", 2),
    ]:
        r = subprocess.run(
            [sys.executable, "-m", "tailrank.ray", "--queries", bench["queries_path"], "--core",
             bench["core_path"], "--gt", bench["gt_path"], "--pool", *bench["shard_paths"], "-o",
             bad, "--address", "127.0.0.1:1", *extra],
            capture_output=True, text=True, timeout=60,
        )
        assert r.returncode == code and why in r.stderr, (r.returncode, r.stderr)
        assert "Ray" not in r.stderr


def test_default_grouping_one_task_per_cpu(bench, cluster, tmp_path):
    """Without shards_per_task, 8 shards on the 2-CPU cluster run as 2 tasks of 4 shards (each
    task's first attempt crashes once: 2 markers, and still the single-process result)."""
    assert tray.default_shards_per_task(8, 2.0) == 4
    assert tray.default_shards_per_task(8, 3.0) == 3
    assert tray.default_shards_per_task(8, 64.0) == 1
    assert tray.default_shards_per_task(8, 4.0, threads_per_task=2) == 4
    assert tray.default_shards_per_task(8, 1.0, threads_per_task=4) == 8
    single = tailrank.scan(bench["queries_path"], bench["core_path"], bench["shard_paths"],
                           bench["gt_path"], top_m=50)
    fails = tmp_path / "fails"
    fails.mkdir()
    dist = tray.scan(bench["shard_paths"], (bench["qids"], bench["q"]),
                     (bench["cids"], bench["core"]), bench["gt_path"], top_m=50,
                     _fail_first_attempt_dir=str(fails))
    assert sorted(os.listdir(fails)) == ["task-0", "task-1"]
    assert dist.pool_size == single.pool_size == 3200
    ref = tailrank.scan((bench["qids"], bench["q"]), (bench["cids"], bench["core"]),
                        bench["shard_paths"], bench["gt_path"], top_m=50)
    assert dist == ref


def test_ray_refuses_a_shard_listed_twice(bench, cluster):
    paths = bench["shard_paths"]
    for spt in (None, 1):
        with pytest.raises(tailrank.TailrankError, match="overlap"):
            tray.scan(paths[:2] + paths[:1], bench["queries_path"], bench["core_path"],
                      bench["gt_path"], top_m=20, shards_per_task=spt)
    with pytest.raises(tailrank.TailrankError, match="shards_per_task"):
        tray.scan(paths, bench["queries_path"], bench["core_path"], bench["gt_path"],
                  shards_per_task=0)
    # A task of more threads than any node has CPUs would wait forever: refused.
    with pytest.raises(tailrank.OptionError, match="threads_per_task = 3 .* largest node has 2"):
        tray.scan(paths, bench["queries_path"], bench["core_path"], bench["gt_path"],
                  threads_per_task=3)


def test_a_task_error_is_a_tailrank_error(bench, cluster, tmp_path):
    """An error raised inside a task (a missing shard) reaches the driver as TailrankError."""
    missing = str(tmp_path / "nope.npy")
    with pytest.raises(tailrank.TailrankError, match="nope.npy"):
        tray.scan([missing], bench["queries_path"], bench["core_path"], bench["gt_path"], top_m=20)
    # One path is one shard, not a list of its characters.
    one = tray.scan(bench["shard_paths"][0], bench["queries_path"], bench["core_path"],
                    bench["gt_path"], top_m=20)
    assert one == tailrank.scan(bench["queries_path"], bench["core_path"], bench["shard_paths"][0],
                                bench["gt_path"], top_m=20)


def test_tailrank_error_pickles():
    import pickle

    e = pickle.loads(pickle.dumps(tailrank.TailrankError("x")))
    assert type(e) is tailrank.TailrankError and str(e) == "x"



def test_ray_increment_grows_as_the_cli(bench, cli, cluster, tmp_path):
    """A Ray scan of the increment [t(0.2), t(0.5)) in 8 shards grows the base at 0.2 into the
    summary the CLI's `scan --after` and `grow` give (a factor of 2.5: moved levels); by 0.25 →
    0.5 (a doubling) into the direct scan."""
    seed, opts = 3, ["--seed", "3", "--top-m", "60", "--model", "toy"]
    kw = dict(seed=seed, top_m=60, model="toy")
    inc, inc1 = [], []
    for k, (ids, rows) in enumerate(zip(bench["shard_ids"], bench["shards"])):
        for lst, f, a in ((inc, 0.5, 0.2), (inc1, 0.5, 0.25)):
            m = tailrank.sample_mask(ids, f, seed, after=a)
            name = f"inc{a}_{k}"
            np.save(tmp_path / f"{name}.npy", rows[m])
            (tmp_path / f"{name}.ids.txt").write_text("".join(i + "\n" for i, x in zip(ids, m) if x))
            lst.append(str(tmp_path / f"{name}.npy"))
    common = ["--queries", bench["queries_path"], "--core", bench["core_path"], "--gt",
              bench["gt_path"], *opts]
    run_cli(cli, "scan", *common, "--fraction", 0.2, "--pool", *bench["shard_paths"],
            "-o", tmp_path / "base")
    run_cli(cli, "scan", *common, "--fraction", 0.5, "--after", 0.2, "--pool", *inc,
            "-o", tmp_path / "part")
    run_cli(cli, "grow", tmp_path / "base", tmp_path / "part", "-o", tmp_path / "grown")
    part = tray.scan(inc, bench["queries_path"], bench["core_path"], bench["gt_path"],
                     fraction=0.5, after=0.2, shards_per_task=2, merge_fanin=2, **kw)
    assert part.subsets[0]["range"]["lo"] == int(0.2 * 2.0**64)
    base = tailrank.Summary.load(tmp_path / "base")
    grown = base.grow(part)
    assert files_but_inputs(grown) == files_but_inputs(tailrank.Summary.load(tmp_path / "grown"))
    levels = [s["fraction"] for s in grown.subsets if s["kind"] == "level"]
    assert levels[:2] == [0.5, 0.25] and levels[2] == 0.1
    # A doubling, 0.25 → 0.5: the direct scan at 0.5, bitwise.
    part1 = tray.scan(inc1, bench["queries_path"], bench["core_path"], bench["gt_path"],
                      fraction=0.5, after=0.25, shards_per_task=3, **kw)
    direct = tailrank.scan(bench["queries_path"], bench["core_path"], bench["shard_paths"],
                           bench["gt_path"], fraction=0.5, **kw)
    quarter = tailrank.scan(bench["queries_path"], bench["core_path"], bench["shard_paths"],
                            bench["gt_path"], fraction=0.25, **kw)
    assert files_but_inputs(quarter.grow(part1)) == files_but_inputs(direct)
