"""Ray: a scan of 8 shards on a local cluster equals the single-process scan bit for bit, also
when every task's worker dies once and Ray retries it; the CLI entry point; clean shutdown."""

import os
import subprocess
import sys
import tempfile

import pytest

import tailrank

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
    for bad, why in [(shard, "is an input of this command"),
                     (os.path.dirname(shard), "holds the input")]:
        r = subprocess.run(
            [sys.executable, "-m", "tailrank.ray", "--queries", bench["queries_path"], "--core",
             bench["core_path"], "--gt", bench["gt_path"], "--pool", *bench["shard_paths"], "-o",
             bad, "--address", "127.0.0.1:1"],
            capture_output=True, text=True, timeout=60,
        )
        assert r.returncode == 1 and why in r.stderr, r.stderr
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
