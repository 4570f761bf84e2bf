"""Python results equal the CLI's on the same inputs (scan, predict, evaluate, sample), and
sampling equals xxhash's xxh3_64."""

import json
import math
import subprocess

import numpy as np
import pytest
import xxhash

import tailrank
from conftest import run_cli

SCAN_OPTS = dict(fraction=0.5, seed=3, pool_size=64000, top_m=300, model="toy")


def cli_scan(cli, bench, out):
    run_cli(
        cli, "scan", "--queries", bench["queries_path"], "--core", bench["core_path"],
        "--gt", bench["gt_path"], "--pool", *bench["shard_paths"], "-o", out,
        "--fraction", SCAN_OPTS["fraction"], "--seed", SCAN_OPTS["seed"],
        "--pool-size", SCAN_OPTS["pool_size"], "--top-m", SCAN_OPTS["top_m"],
        "--model", SCAN_OPTS["model"], "--threads", 2,
    )
    return tailrank.load_summary(out)


@pytest.fixture(scope="module")
def cli_summary(cli, bench, tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "summary"
    return cli_scan(cli, bench, out), out


def test_scan_paths_equal_cli(bench, cli_summary):
    ref, _ = cli_summary
    s = tailrank.scan(bench["queries_path"], bench["core_path"], bench["shard_paths"],
                      bench["gt_path"], threads=2, **SCAN_OPTS)
    assert s == ref  # every field, scores bitwise, inputs and digests included
    assert s.pool_size == 64000 and s.fraction == 0.5 and s.model == "toy"
    assert s.query_ids == bench["qids"]


def test_scan_arrays_equal_cli(bench, cli_summary):
    ref, _ = cli_summary
    s = tailrank.scan((bench["qids"], bench["q"]), (bench["cids"], bench["core"]),
                      (sum(bench["shard_ids"], []), np.vstack(bench["shards"])), bench["gt"],
                      **SCAN_OPTS)
    # Same per-query data and sizes (input labels and digests differ: arrays, not files).
    assert s.n_queries == ref.n_queries
    np.testing.assert_array_equal(s.subset_sizes, ref.subset_sizes)
    for i in range(s.n_queries):
        a, b = s.query(i), ref.query(i)
        assert a["id"] == b["id"] and a["positive_ids"] == b["positive_ids"]
        np.testing.assert_array_equal(a["scores"].view(np.uint32), b["scores"].view(np.uint32))
        np.testing.assert_array_equal(a["core_above"], b["core_above"])
        np.testing.assert_array_equal(a["pool_above"], b["pool_above"])
        for x, y in zip(a["top_scores"], b["top_scores"]):
            np.testing.assert_array_equal(x.view(np.uint32), y.view(np.uint32))


def test_scan_counts_against_numpy(bench):
    """Exact scan: C_j and K_j recomputed by brute force in numpy (independent reference)."""
    pool = np.vstack(bench["shards"])
    s = tailrank.scan((bench["qids"], bench["q"]), (bench["cids"], bench["core"]),
                      (sum(bench["shard_ids"], []), pool), bench["gt"], top_m=50)
    assert s.pool_size == pool.shape[0] and s.is_exact
    cidx = {c: i for i, c in enumerate(bench["cids"])}
    for i, qid in enumerate(bench["qids"]):
        d = s.query(i)
        cs = (bench["core"] @ bench["q"][i]).astype(np.float32)
        ps = (pool @ bench["q"][i]).astype(np.float32)
        pos = set(bench["gt"][qid])
        neg = np.array([c not in pos for c in bench["cids"]])
        for j, pid in enumerate(d["positive_ids"]):
            sc = d["scores"][j]
            assert abs(sc - cs[cidx[pid]]) < 1e-5
            # Away from ties, counts are exact under a 1e-5 score tolerance.
            assert abs(d["core_above"][j] - np.sum(cs[neg] > sc)) <= np.sum(np.abs(cs[neg] - sc) < 1e-5)
            assert abs(int(d["pool_above"][j, 0]) - np.sum(ps > sc)) <= np.sum(np.abs(ps - sc) < 1e-5)
        top = np.sort(ps)[::-1][:50]
        np.testing.assert_allclose(d["top_scores"][0], top, atol=1e-5)


def _same(a, b, path="$"):
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            assert a is None and b is None, path
        elif math.isnan(a):
            assert math.isnan(b), path
        else:
            assert a == b, f"{path}: {a} != {b}"
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


@pytest.mark.parametrize("estimator,map_", [("evt", "expected-rank"), ("count", "binomial")])
def test_predict_equals_cli_json(cli, cli_summary, estimator, map_):
    ref, path = cli_summary
    out = run_cli(cli, "predict", "--summary", path, "--json", "--k", 100, "--estimator", estimator,
                  "--map", map_, "--bootstrap", 200, "--sample-noise", 20, "--seed", 5,
                  "--pool-size", 200000)
    want = json.loads(out)
    r = tailrank.predict(ref, pool_size=200000, k=100, estimator=estimator, map=map_,
                         bootstrap=200, seed=5, sample_noise=20)
    _same(r.to_dict(), want)
    assert r.estimate == want["map_at_k"]
    h = r.hardness_frame()
    cols = h if isinstance(h, dict) else {c: h[c].to_numpy() for c in h.columns}
    per_q = want["queries"]
    assert len(cols["x_hat"]) == sum(q["n_positives"] for q in per_q)
    # Branch counts per query agree with the report.
    for q in per_q:
        b = cols["branch"][cols["query_id"] == q["query_id"]]
        assert (b == "count").sum() == q["n_count"] and (b == "tail").sum() == q["n_tail"]
        assert (b == "immune").sum() == q["n_immune"]
    # Count branch: x_hat = K / S.
    c = cols["branch"] == "count"
    np.testing.assert_allclose(cols["x_hat"][c], cols["pool_above"][c] / want["sample_size"], rtol=1e-12)


def test_next_step_and_target_width_equal_cli(cli, cli_summary):
    """`target_width=` is `--target-width` (points): the report's next step, its commands naming
    the summary's folder, equals the CLI's; a summary built in memory names SUMMARY instead."""
    ref, path = cli_summary
    # N = 30,000 keeps the sample (S = 1,585) within the sample-size rule at k = 100 (S·k/N ≥ 5),
    # below which the step grows to what the rule asks for, with no projection.
    opts = ["--k", 100, "--bootstrap", 0, "--sample-noise", 0, "--pool-size", 30000]
    # A target just above the width projected for one doubling: met by growing (it lies above
    # the spread of the readings, which growing does not reduce, and below today's width).
    plain = json.loads(run_cli(cli, "predict", "--summary", path, "--json", *opts))
    target = round(100 * plain["next_step"]["projected_width"] + 0.1, 2)
    want = json.loads(run_cli(cli, "predict", "--summary", path, "--json", *opts,
                              "--target-width", target))
    r = tailrank.predict(path, pool_size=30000, k=100, bootstrap=0, sample_noise=0,
                         target_width=target)
    _same(r.to_dict(), want)
    step = want["next_step"]
    grow = [c for c in step["commands"] if c.startswith("tailrank grow")]
    assert step["action"] == "grow" and len(grow) == 1 and str(path) in grow[0]
    mem = tailrank.predict(ref.merge(), pool_size=30000, k=100, bootstrap=0, sample_noise=0,
                           target_width=target)
    assert mem.to_dict()["map_at_k"] == want["map_at_k"]
    mem_grow = [c for c in mem.to_dict()["next_step"]["commands"] if c.startswith("tailrank grow")]
    assert len(mem_grow) == 1 and mem_grow[0].startswith("tailrank grow SUMMARY ")
    with pytest.raises(tailrank.OptionError, match="target_width"):
        tailrank.predict(ref, pool_size=200000, k=100, target_width=-1)


def test_evaluate_equals_cli(cli, bench, tmp_path):
    pool = np.vstack(bench["shards"])
    pids = sum(bench["shard_ids"], [])
    gallery = np.vstack([bench["core"], pool])
    gids = bench["cids"] + pids
    results = {}
    for i, qid in enumerate(bench["qids"]):
        sc = gallery @ bench["q"][i]
        top = np.argsort(-sc, kind="stable")[:200]
        results[qid] = {gids[t]: float(sc[t]) for t in top}
    rpath = tmp_path / "results.json"
    rpath.write_text(json.dumps(results))
    want = json.loads(run_cli(cli, "eval", "--results", rpath, "--gt", bench["gt_path"], "--json", "--k", 100))
    got = tailrank.evaluate(results, bench["gt"], k=100)
    _same(got["sets"], want["sets"])
    got_path = tailrank.evaluate(str(rpath), bench["gt_path"], k=100)
    _same(got_path, want)
    # Independent check of mAP@100 (no ties here): AP = 1/min(k, n) sum_{hits at i<=k} P@i.
    aps = []
    for qid in bench["qids"]:
        order = sorted(results[qid].items(), key=lambda kv: -kv[1])[:100]
        rel = np.array([d in set(bench["gt"][qid]) for d, _ in order])
        prec = np.cumsum(rel) / np.arange(1, len(rel) + 1)
        aps.append(np.sum(prec[rel]) / min(100, len(bench["gt"][qid])))
    assert abs(got["sets"][0]["map_at_k"] - np.mean(aps)) < 1e-12
    with pytest.raises(tailrank.TailrankError, match="q00"):
        tailrank.evaluate({k: v for k, v in results.items() if k != "q00"}, bench["gt"], k=100)


def test_sample_ids_equal_xxhash_and_cli(cli, tmp_path):
    assert tailrank.id_hashes(["12345"], 42)[0] == 7110486700300227737
    assert tailrank.id_hashes(["yfcc000/000000001"], 7)[0] == 2222919332169938572
    ids = [f"yfcc{i % 7:03d}/{i:09d}" for i in range(5000)] + ["é/ü", "日本"]
    h = tailrank.id_hashes(ids, 11)
    assert [int(x) for x in h] == [xxhash.xxh3_64_intdigest(i.encode(), seed=11) for i in ids]
    f = 0.3
    t = int(f * 2.0**64)
    want = [i for i in ids if xxhash.xxh3_64_intdigest(i.encode(), seed=11) < t]
    got = tailrank.sample_ids(ids, f, seed=11)
    assert got == want
    (tmp_path / "ids.txt").write_text("".join(i + "\n" for i in ids))
    run_cli(cli, "sample", "--ids", tmp_path / "ids.txt", "--fraction", f, "--seed", 11, "-o", tmp_path / "s.txt")
    assert (tmp_path / "s.txt").read_text().splitlines() == got
    assert set(tailrank.sample_ids(ids, 0.1, 11)) <= set(got)  # nested
    assert tailrank.sample_ids(ids, 1.0, 11) == ids
    (tmp_path / "dup.txt").write_text("a\nb\na\n")
    err = subprocess.run([str(cli), "sample", "--ids", str(tmp_path / "dup.txt"), "--fraction", "0.5",
                          "-o", str(tmp_path / "d.txt")], capture_output=True, text=True)
    assert err.returncode != 0 and "duplicate id" in err.stderr
    with pytest.raises(tailrank.TailrankError, match="duplicate id 'a' at positions 0 and 2"):
        tailrank.sample_ids(["a", "b", "a"], 0.5)


def test_level_selected_fit_matches_the_cli(cli, cli_summary):
    """The level-selected fit is the default of the CLI and of Python, `--fit level-selected` and
    Python's `fit="level-selected"` give the same report, whose estimate is the fixed-mode
    report's level-selected fit."""
    ref, path = cli_summary
    base = ["predict", "--summary", path, "--json", "--k", 100, "--bootstrap", 0,
            "--sample-noise", 0, "--pool-size", 200000]
    sel = json.loads(run_cli(cli, *base, "--fit", "level-selected"))
    fixed = json.loads(run_cli(cli, *base, "--fit", "fixed"))
    assert sel["options"]["fit"] == "level-selected" and fixed["options"]["fit"] == "fixed"
    assert json.loads(run_cli(cli, *base)) == sel
    chosen = fixed["baselines"]["level_selected"]
    assert sel["map_at_k"] == pytest.approx(chosen["map_at_k"], abs=1e-12)
    assert sel["realized"] is None or sel["realized"]["fit_choice_map_at_k"] == pytest.approx(
        fixed["map_at_k"], abs=1e-12)
    r = tailrank.predict(ref, pool_size=200000, k=100, bootstrap=0, sample_noise=0,
                         fit="level-selected")
    _same(r.to_dict(), sel)
    d = tailrank.predict(ref, pool_size=200000, k=100, bootstrap=0, sample_noise=0)
    _same(d.to_dict(), sel)
    with pytest.raises(Exception, match="unknown fit"):
        tailrank.predict(ref, pool_size=200000, k=100, bootstrap=0, sample_noise=0, fit="best")


def test_excess_centre_matches_the_cli(cli, cli_summary):
    """Python's `excess_centre=False` gives the report of `predict --no-excess-centre`; it is on
    by default in both."""
    ref, path = cli_summary
    base = ["predict", "--summary", path, "--json", "--k", 100, "--bootstrap", 200,
            "--sample-noise", 0, "--pool-size", 200000]
    on = json.loads(run_cli(cli, *base))
    off = json.loads(run_cli(cli, *base, "--no-excess-centre"))
    assert on["options"]["excess_centre"] is True and off["options"]["excess_centre"] is False
    assert off["excess_centre"] is None
    r = tailrank.predict(ref, pool_size=200000, k=100, bootstrap=200, sample_noise=0,
                         excess_centre=False)
    _same(r.to_dict(), off)
    d = tailrank.predict(ref, pool_size=200000, k=100, bootstrap=200, sample_noise=0)
    _same(d.to_dict(), on)


def test_fit_top_and_its_former_name_top_m(cli, cli_summary):
    """`--fit-top` (predict) and its deprecated alias `--top-m` give the same prediction, and
    so do Python's `fit_top=` and the deprecated `top_m=` (which warns)."""
    ref, path = cli_summary
    base = ["predict", "--summary", path, "--json", "--k", 100, "--bootstrap", 0,
            "--sample-noise", 0, "--pool-size", 200000]
    new = json.loads(run_cli(cli, *base, "--fit-top", 200))
    old = json.loads(run_cli(cli, *base, "--top-m", 200))
    _same(old, new)
    r = tailrank.predict(ref, pool_size=200000, k=100, bootstrap=0, sample_noise=0, fit_top=200)
    _same(r.to_dict(), new)
    with pytest.warns(DeprecationWarning):
        r_old = tailrank.predict(ref, pool_size=200000, k=100, bootstrap=0, sample_noise=0,
                                 top_m=200)
    _same(r_old.to_dict(), new)


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), "0.9", b"0.9", None, [0.5], 1 + 0j])
def test_evaluate_refuses_scores_that_are_not_numbers(bad):
    # Regression (issue 44): True was read as 1.0 and "0.9" as 0.9; the CLI refuses both in a
    # results JSON, and docs/reference/python.md says arguments are checked, not coerced.
    gt = {"q": ["r"]}
    with pytest.raises(tailrank.TailrankError, match=r"query 'q': db id 'n': score .* is not a number"):
        tailrank.evaluate({"q": {"r": 0.5, "n": bad}}, gt, k=10)


def test_evaluate_accepts_python_and_numpy_numbers():
    gt = {"q": ["r"]}
    for r, n in [(1, 0), (0.5, 0.25), (np.float32(0.5), np.float64(0.25)), (np.int64(2), np.int32(1))]:
        rep = tailrank.evaluate({"q": {"r": r, "n": n}}, gt, k=10)
        assert rep["sets"][0]["queries"][0]["ap_at_k"] == 1.0
