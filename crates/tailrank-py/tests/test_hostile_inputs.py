"""Careless and hostile arguments get a TailrankError naming the argument, never a raw Python
or numpy exception, a silently wrong number, or an input replaced (a review of the Python API,
2026-12-07)."""

import pickle

import numpy as np
import pytest

import tailrank


def arrays(bench):
    return (bench["qids"], bench["q"]), (bench["cids"], bench["core"])


def test_an_iterator_pool_cannot_claim_fewer_items_than_it_scanned(bench):
    """Each part of an iterator's scan checks N against its own rows; the merge of the parts
    checks it against all of them, as one pass over the pool does."""
    q, c = arrays(bench)
    blocks = [(bench["shard_ids"][i], bench["shards"][i]) for i in range(3)]
    rows = sum(len(b[0]) for b in blocks)
    # Each block fits N = 500; the three together (1200 rows) do not.
    with pytest.raises(tailrank.MismatchError, match=f"N = 500 is smaller than the {rows} pool rows"):
        tailrank.scan(q, c, iter(blocks), bench["gt"], fraction=0.25, pool_size=500,
                      chunk_rows=400, top_m=10)
    # With N large enough the same blocks scan (the list form checks it in one pass).
    ok = tailrank.scan(q, c, iter(blocks), bench["gt"], fraction=0.25, pool_size=rows,
                       chunk_rows=400, top_m=10)
    one_pass = tailrank.scan(q, c, blocks, bench["gt"], fraction=0.25, pool_size=rows, top_m=10)
    assert ok.pool_size == one_pass.pool_size == rows
    assert list(ok.subset_sizes) == list(one_pass.subset_sizes)


def test_bytes_ids_are_decoded_in_gt_and_results():
    gt = {"q1": ["a", "b"]}
    res = {"q1": {"a": 0.9, "x": 0.8, "b": 0.7}}
    want = tailrank.evaluate(res, gt)["sets"][0]["map_at_k"]
    assert want > 0
    as_bytes = {b"q1": {b"a": 0.9, b"x": 0.8, b"b": 0.7}}
    assert tailrank.evaluate(as_bytes, gt)["sets"][0]["map_at_k"] == want
    assert tailrank.evaluate(res, {"q1": [b"a", b"b"]})["sets"][0]["map_at_k"] == want
    with pytest.raises(tailrank.InputError, match="not UTF-8 text"):
        tailrank.evaluate({"q1": {"\ud800": 0.9}}, gt)
    with pytest.raises(tailrank.InputError, match="not UTF-8 text"):
        tailrank.evaluate(res, {"q1": [b"\xff"]})
    with pytest.raises(tailrank.InputError, match="expected a dict"):
        tailrank.evaluate({"q1": [("a", 0.9)]}, gt)
    with pytest.raises(tailrank.InputError, match="too large"):
        tailrank.evaluate({"q1": {"a": 10**400}}, gt)
    with pytest.raises(tailrank.InputError, match="list of ids"):
        tailrank.evaluate(res, {"q1": None})


def test_a_dict_gt_refuses_other_sets():
    with pytest.raises(tailrank.MismatchError, match="one query set"):
        tailrank.evaluate({"q1": {"a": 0.9}}, {"q1": ["a"]}, sets=["queries", "image"])
    with pytest.raises(tailrank.OptionError, match="^sets must be a name or a list of names"):
        tailrank.evaluate({"q1": {"a": 0.9}}, {"q1": ["a"]}, sets=5)


def test_out_of_range_numbers_name_the_argument(bench):
    with pytest.raises(tailrank.OptionError, match="^seed must be a non-negative integer"):
        tailrank.sample_ids(["a"], 0.5, seed=2**64)
    with pytest.raises(tailrank.OptionError, match="^fraction: .* too large"):
        tailrank.sample_ids(["a"], 10**400)
    with pytest.raises(tailrank.InputError, match="ids: id .* not UTF-8"):
        tailrank.sample_ids([b"\xff"], 1.0)
    q, c = arrays(bench)
    s = tailrank.scan(q, c, [(bench["shard_ids"][0], bench["shards"][0])], bench["gt"], top_m=10)
    with pytest.raises(tailrank.OptionError, match="query index"):
        s.query(-1)
    with pytest.raises(tailrank.OptionError, match="query index"):
        s.query(True)
    with pytest.raises(tailrank.OptionError, match="expected a tailrank.Summary"):
        s.merge("folder")
    with pytest.raises(tailrank.OptionError, match="grow: part: expected a tailrank.Summary"):
        tailrank.grow(s, "folder")
    # A name list holding a non-string was read as the name "None".
    with pytest.raises(tailrank.OptionError, match="metrics must be a name .* got None in"):
        tailrank.evaluate({"q": {"a": 1.0}}, {"q": ["a"]}, metrics=[None])


def test_a_pool_of_two_pairs_is_two_shards(bench):
    q, c = arrays(bench)
    a = (bench["shard_ids"][0], bench["shards"][0])
    b = (bench["shard_ids"][1], bench["shards"][1])
    assert tailrank.scan(q, c, (a, b), bench["gt"], top_m=10) == \
        tailrank.scan(q, c, [a, b], bench["gt"], top_m=10)
    with pytest.raises(tailrank.InputError, match="not a set"):
        tailrank.scan(q, c, (set(bench["shard_ids"][0]), bench["shards"][0]), bench["gt"])
    with pytest.raises(tailrank.InputError, match="not a frozenset"):
        tailrank.sample_ids(frozenset(["a", "b"]), 0.5)
    with pytest.raises(tailrank.InputError, match="pool: descriptors are not an array"):
        tailrank.scan(q, c, (bench["shard_ids"][0], [[1.0, 2.0], [1.0]]), bench["gt"])


def test_metadata_views_are_copies(bench):
    q, c = arrays(bench)
    s = tailrank.scan(q, c, [(bench["shard_ids"][0], bench["shards"][0])], bench["gt"], top_m=10)
    s.meta["subset_sizes"][0] = 999
    s.subsets[0]["fraction"] = 0.0
    s.inputs[0]["path"] = "changed"
    assert s.subset_sizes[0] != 999
    assert s.subsets[0]["fraction"] == s.fraction
    assert s.inputs[0]["path"] != "changed"


def test_save_never_replaces_a_summary_it_was_read_from(bench, tmp_path):
    q, c = arrays(bench)
    a = tailrank.scan(q, c, [(bench["shard_ids"][0], bench["shards"][0])], bench["gt"], top_m=10)
    b = tailrank.scan(q, c, [(bench["shard_ids"][1], bench["shards"][1])], bench["gt"], top_m=10)
    a.save(tmp_path / "a")
    before = {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir()}
    loaded = tailrank.load_summary(tmp_path / "a")
    merged = loaded.merge(b)
    for s in (loaded, merged, pickle.loads(pickle.dumps(merged))):
        with pytest.raises(tailrank.OutputError, match="is the folder this summary, or one it was merged"):
            s.save(tmp_path / "a")
    with pytest.raises(tailrank.OutputError, match="lies inside the folder"):
        merged.save(tmp_path / "a" / "inside")
    assert {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir()} == before
    merged.save(tmp_path / "ab")
    assert tailrank.load_summary(tmp_path / "ab") == merged


def test_masked_descriptors_are_refused_not_unmasked(bench):
    """np.asarray drops a mask: a masked row would be scanned with whatever its data holds."""
    q, c = arrays(bench)
    ids, a = bench["shard_ids"][0], bench["shards"][0]
    masked = np.ma.masked_array(a, mask=np.zeros_like(a, dtype=bool))
    masked[3] = np.ma.masked
    with pytest.raises(tailrank.InputError, match="pool: descriptors are a masked array"):
        tailrank.scan(q, c, (ids, masked), bench["gt"], top_m=10)
    # A masked array with nothing masked is its data.
    plain = np.ma.masked_array(a, mask=False)
    assert tailrank.scan(q, c, (ids, plain), bench["gt"], top_m=10) == \
        tailrank.scan(q, c, (ids, a), bench["gt"], top_m=10)


def test_ids_must_be_flat_and_positives_ordered(bench):
    """A column of ids (a 2-D array, nested lists) went through ``str`` as "['id']": another
    hash sample, silently; a set of positives made the ground truth's digest depend on the
    process's hash seed (two shard summaries would not merge). Both are refused."""
    q, c = arrays(bench)
    ids, rows = bench["shard_ids"][0], bench["shards"][0]
    with pytest.raises(tailrank.InputError, match=r"one-dimensional .* shape \(400, 1\)"):
        tailrank.scan(q, c, [(np.array(ids)[:, None], rows)], bench["gt"], fraction=0.25)
    with pytest.raises(tailrank.InputError, match="an id is a list"):
        tailrank.scan(q, c, [([[i] for i in ids], rows)], bench["gt"], fraction=0.25)
    with pytest.raises(tailrank.InputError, match="one-dimensional"):
        tailrank.sample_ids(np.array(ids)[:, None], 0.25)
    gt = {k: set(v) for k, v in bench["gt"].items()}
    with pytest.raises(tailrank.InputError, match="positives of query .* not a set"):
        tailrank.scan(q, c, [(ids, rows)], gt)
    # Ids that are no sequence at all (None, a number) were a bare TypeError.
    for bad in (None, 5, object()):
        with pytest.raises(tailrank.InputError, match="ids must be a sequence of strings, got"):
            tailrank.scan(q, c, [(bad, rows)], bench["gt"], fraction=0.25)


def test_too_many_threads_are_refused_before_any_starts(bench):
    q, c = arrays(bench)
    with pytest.raises(tailrank.OptionError, match="threads = 100000 is more than"):
        tailrank.scan(q, c, [(bench["shard_ids"][0], bench["shards"][0])], bench["gt"],
                      threads=100_000)


def test_an_array_subclass_cannot_lie_about_its_memory():
    """The native layer reads an array's memory at the address its interface gives: a subclass
    that reports a larger shape through its own ``__array_interface__`` is read by ndarray's."""
    from tailrank import _native

    class Liar(np.ndarray):
        @property
        def __array_interface__(self):
            return {"typestr": "<f4", "shape": (1_000_000, 32), "strides": None,
                    "data": (self.ctypes.data, False), "version": 3}

    a = (np.ones((2, 32)) / np.sqrt(32)).astype(np.float32)
    ids = "\n".join(str(i) for i in range(1_000_000)).encode()
    src = {"label": "x", "ids": ids, "array": a.view(Liar)}
    q = {"label": "q", "ids": b"q", "array": a[:1].copy()}
    c = {"label": "c", "ids": b"c", "array": a[1:].copy()}
    with pytest.raises(tailrank.InputError, match="1000000 ids for 2 rows"):
        _native.scan_native(q, c, [src], ("queries", ["q"], [["c"]]), threads=1)


def test_a_float32_fraction_is_the_decimal_it_prints():
    """np.float32(0.05) is 0.0500000007 as a double: another hash threshold than the CLI's
    --fraction 0.05 (a summary that would not merge with the CLI's shards). It is read as the
    decimal it prints."""
    ids = [f"img/{i:05d}" for i in range(20000)]
    assert tailrank.sample_ids(ids, np.float32(0.05)) == tailrank.sample_ids(ids, 0.05)
    assert tailrank.sample_ids(ids, np.float64(0.05)) == tailrank.sample_ids(ids, 0.05)
    with pytest.raises(tailrank.OptionError, match=r"--after \(Python `after=`\) 0.2 must be below"):
        tailrank.sample_ids(ids, 0.1, after=np.float32(0.2))


def test_a_pool_path_with_its_ids_file_is_one_shard(bench, tmp_path):
    """``pool=(path, ids_path)`` is one shard, as for queries and core (it was read as two
    shards, the ids file refused as an unknown descriptor format); two descriptor files in a
    tuple stay two shards."""
    import shutil

    path = bench["shard_paths"][0]
    ids = tmp_path / "elsewhere.txt"
    shutil.copy(str(path)[: -len(".npy")] + ".ids.txt", ids)
    args = (bench["queries_path"], bench["core_path"])
    one = tailrank.scan(*args, (path, ids), bench["gt_path"], top_m=10)
    assert one == tailrank.scan(*args, path, bench["gt_path"], top_m=10)
    two = tailrank.scan(*args, tuple(bench["shard_paths"][:2]), bench["gt_path"], top_m=10)
    assert two == tailrank.scan(*args, list(bench["shard_paths"][:2]), bench["gt_path"], top_m=10)


def test_a_path_argument_of_another_type_is_an_option_error(bench, tmp_path):
    """A wrong-typed path was a raw TypeError ("expected str, bytes or os.PathLike"); python.md
    says a wrong-typed argument is an OptionError naming it. Bytes are a path."""
    with pytest.raises(tailrank.OptionError, match=r"^summary \(a tailrank.Summary or a folder\)"):
        tailrank.predict(3)
    with pytest.raises(tailrank.OptionError, match="^path must be a path"):
        tailrank.load_summary(3)
    with pytest.raises(tailrank.OptionError, match="^gt .* must be a path"):
        tailrank.evaluate_revisited({"q": {"a": 1.0}}, {"q": {"easy": ["a"]}})
    q, c = arrays(bench)
    s = tailrank.scan(q, c, [(bench["shard_ids"][0], bench["shards"][0])], bench["gt"], top_m=10)
    with pytest.raises(tailrank.OptionError, match="^path must be a path"):
        s.save(3)
    s.save(bytes(tmp_path / "s"))
    assert tailrank.load_summary(bytes(tmp_path / "s")) == s


def test_bytes_paths_are_paths_everywhere(bench, tmp_path):
    """A bytes path (or a path object giving bytes) is read as the str path is, in scan,
    evaluate and the ground truth (scan read a bytes pool as a list of blocks)."""
    import os

    fs = lambda p: os.fsencode(str(p))  # noqa: E731
    args = (bench["queries_path"], bench["core_path"])
    want = tailrank.scan(*args, bench["shard_paths"][0], bench["gt_path"], top_m=10)
    got = tailrank.scan(fs(args[0]), fs(args[1]), fs(bench["shard_paths"][0]),
                        fs(bench["gt_path"]), top_m=10)
    assert got == want

    class BytesPath:
        def __fspath__(self):
            return fs(bench["shard_paths"][0])

    assert tailrank.scan(*args, BytesPath(), bench["gt_path"], top_m=10) == want
    res = {q: {bench["gt"][q][0]: 0.9, "other": 0.5} for q in bench["qids"]}
    path = tmp_path / "res.json"
    path.write_text(__import__("json").dumps(res))
    score = lambda r: r["sets"][0]["map_at_k"]  # noqa: E731
    assert score(tailrank.evaluate(fs(path), fs(bench["gt_path"]))) == score(tailrank.evaluate(res, bench["gt"]))


def test_a_nul_in_a_path_is_an_option_error(bench):
    q, c = arrays(bench)
    s = tailrank.scan(q, c, [(bench["shard_ids"][0], bench["shards"][0])], bench["gt"], top_m=10)
    with pytest.raises(tailrank.OptionError, match="path: a path cannot contain a NUL"):
        s.save("a\x00b")
    with pytest.raises(tailrank.OptionError, match="cannot contain a NUL"):
        tailrank.load_summary("x\x00y")


def test_a_summary_folder_named_in_other_bytes_predicts(bench, tmp_path):
    """A folder name that is no UTF-8 (read back with surrogates) predicts; the next step's
    commands name it with the bytes replaced (it raised UnicodeEncodeError)."""
    import os

    q, c = arrays(bench)
    s = tailrank.scan(q, c, [(bench["shard_ids"][0], bench["shards"][0])], bench["gt"],
                      top_m=10, fraction=0.5, pool_size=4000)
    folder = os.path.join(os.fsencode(str(tmp_path)), b"sum\xff")
    s.save(folder)
    r = tailrank.predict(folder, bootstrap=0, sample_noise=0)
    assert r.estimate == tailrank.predict(s, bootstrap=0, sample_noise=0).estimate


def test_float64_values_float32_cannot_hold_are_named(bench):
    q, c = arrays(bench)
    ids, arr = bench["shard_ids"][0], bench["shards"][0].astype(np.float64)
    big = arr.copy()
    big[5, 0] = 1e300
    with pytest.raises(tailrank.InputError, match=r"row 5: value 1e\+300 \(column 0\) is outside float32's range"):
        tailrank.scan(q, c, (ids, big), bench["gt"], normalize=True, top_m=10)
    tiny = arr.copy()
    tiny[7, :] = 1e-300
    with pytest.raises(tailrank.InputError, match="row 7: every value is below float32's smallest"):
        tailrank.scan(q, c, (ids, tiny), bench["gt"], normalize=True, top_m=10)
