"""Summary objects: merge of shard scans, iterator pools, save/load and pickling, errors."""

import pickle

import numpy as np
import pytest

import tailrank


def same_except_labels(a, b):
    """Equal summaries up to the labels of in-memory inputs (their digests must agree)."""
    ma, mb = a.meta, b.meta
    ia, ib = ma.pop("inputs"), mb.pop("inputs")
    assert ma == mb
    assert [(r["role"], r["digest"], r["rows"]) for r in ia] == [(r["role"], r["digest"], r["rows"]) for r in ib]
    assert a.n_queries == b.n_queries
    for i in range(a.n_queries):
        x, y = a.query(i), b.query(i)
        assert x["positive_ids"] == y["positive_ids"]
        for key in ("scores", "core_above", "pool_above"):
            assert x[key].tobytes() == y[key].tobytes(), key
        assert [t.tobytes() for t in x["top_scores"]] == [t.tobytes() for t in y["top_scores"]]
    return True


def arrays(bench):
    return (bench["qids"], bench["q"]), (bench["cids"], bench["core"])


def test_shard_merge_equals_one_scan(bench, tmp_path):
    q, c = arrays(bench)
    opts = dict(fraction=0.5, seed=9, top_m=100, pool_size=50000)
    blocks = list(zip(bench["shard_ids"], bench["shards"]))
    whole = tailrank.scan(q, c, blocks, bench["gt"], **opts)
    parts = [tailrank.scan(q, c, [b], bench["gt"], **opts) for b in blocks]
    merged = parts[0].merge(*parts[1:])
    assert same_except_labels(merged, whole)
    # Iterator of blocks, gathered 3 blocks (1200 rows) per part, then merged.
    it = tailrank.scan(q, c, iter(blocks), bench["gt"], chunk_rows=1000, **opts)
    assert same_except_labels(it, whole)

    # A generator that refills one buffer: each block is kept as it was when yielded.
    def refilled():
        buf = np.empty_like(np.asarray(blocks[0][1]))
        for ids, a in blocks:
            assert np.asarray(a).shape == buf.shape
            buf[...] = a
            yield ids, buf

    it = tailrank.scan(q, c, refilled(), bench["gt"], chunk_rows=1000, **opts)
    assert same_except_labels(it, whole)
    # Save / load / pickle round trips keep every bit.
    whole.save(tmp_path / "s")
    assert tailrank.load_summary(tmp_path / "s") == whole
    assert pickle.loads(pickle.dumps(whole)) == whole
    assert tailrank._summary_from_files(whole.to_files()) == whole
    # Exact mode: N = rows, merged N = sum of the shards' rows.
    ex = [tailrank.scan(q, c, [b], bench["gt"], top_m=10) for b in blocks[:2]]
    assert [e.pool_size for e in ex] == [400, 400]
    assert ex[0].merge(ex[1]).pool_size == 800
    # One shard of an exact scan of an 800-row pool is not exact until merged (as in Rust).
    half = [tailrank.scan(q, c, [b], bench["gt"], top_m=10, pool_size=800) for b in blocks[:2]]
    assert ex[0].is_exact and not half[0].is_exact


def test_merge_refuses_overlap(bench):
    q, c = arrays(bench)
    blocks = list(zip(bench["shard_ids"], bench["shards"]))
    a = tailrank.scan(q, c, [blocks[0]], bench["gt"], top_m=10)
    with pytest.raises(tailrank.TailrankError, match="overlap"):
        a.merge(a)


def test_bad_inputs_raise(bench):
    q, c = arrays(bench)
    ids, arr = bench["shard_ids"][0], bench["shards"][0]
    with pytest.raises(tailrank.TailrankError, match="ids for"):
        tailrank.scan(q, c, (ids[:-1], arr), bench["gt"])
    with pytest.raises(tailrank.TailrankError, match="duplicate"):
        tailrank.scan(q, c, ([ids[0]] * len(ids), arr), bench["gt"])
    with pytest.raises(tailrank.TailrankError, match="2-D"):
        tailrank.scan(q, c, (ids, arr[:, 0]), bench["gt"])
    with pytest.raises(tailrank.TailrankError, match="nope.npy"):
        tailrank.scan(q, c, ["/nonexistent/nope.npy"], bench["gt"])
    with pytest.raises(tailrank.TailrankError, match="no positives"):
        tailrank.scan(q, c, (ids, arr), {"q00": []})
    with pytest.raises(tailrank.TailrankError, match="dimension|dim"):
        tailrank.scan(q, c, (ids, np.zeros((len(ids), 5), np.float32)), bench["gt"], normalize=True)
    with pytest.raises(tailrank.TailrankError):
        tailrank.predict(tailrank.scan(q, c, (ids, arr), bench["gt"], top_m=10), estimator="nope")


def test_array_input_digest_is_xxh3_of_ids_and_values(bench):
    """In-memory inputs record xxh3(id + "\\n" ..., then the f32 LE bytes) as their digest
    (the library's InMemoryDescriptors digest), checked with the xxhash package."""
    import xxhash

    q, c = arrays(bench)
    ids, arr = bench["shard_ids"][1], bench["shards"][1]
    s = tailrank.scan(q, c, (ids, arr), bench["gt"], top_m=10)
    h = xxhash.xxh3_64()
    h.update("".join(i + "\n" for i in ids).encode())
    h.update(np.ascontiguousarray(arr, dtype="<f4").tobytes())
    pool = [r for r in s.inputs if r["role"] == "pool"]
    assert [r["digest"] for r in pool] == [f"xxh3:{h.intdigest():016x}"]


def _digest(ids, values_f32):
    import xxhash

    h = xxhash.xxh3_64()
    h.update("".join(i + "\n" for i in ids).encode())
    h.update(np.ascontiguousarray(values_f32, dtype="<f4").tobytes())
    return f"xxh3:{h.intdigest():016x}"


def test_array_layouts_and_id_forms_give_the_same_scan(bench):
    """Arrays are read in place when C-contiguous little-endian f32/f16, converted otherwise;
    ids go through the joined-buffer fast path or the per-id path. Every form gives the same
    summary, and the digest is always xxh3(ids + "\\n", f32 LE values)."""
    q, c = arrays(bench)
    ids, arr = bench["shard_ids"][2], bench["shards"][2]
    opts = dict(top_m=20)
    ref = tailrank.scan(q, c, (ids, arr), bench["gt"], **opts)
    want = _digest(ids, arr)
    ro = arr.copy()
    ro.setflags(write=False)
    variants = {
        "read-only": (ids, ro),
        "fortran": (ids, np.asfortranarray(arr)),
        "strided view": (ids, np.repeat(arr, 2, axis=0)[::2]),
        "big-endian": (ids, arr.astype(">f4")),
        "float64": (ids, arr.astype(np.float64)),
        "tuple ids": (tuple(ids), arr),
        "numpy str ids": (np.asarray(ids), arr),
        "bytes ids": ([i.encode() for i in ids], arr),
        "generator ids": ((i for i in ids), arr),
    }
    for name, src in variants.items():
        s = tailrank.scan(q, c, src, bench["gt"], **opts)
        assert same_except_labels(s, ref), name
        assert [r["digest"] for r in s.inputs if r["role"] == "pool"] == [want], name
    # float16 is read in place too: the same summary as its f32 widening, same digest.
    h = arr.astype(np.float16)
    h32 = h.astype(np.float32)
    s16 = tailrank.scan(q, c, (ids, h), bench["gt"], normalize=True, **opts)
    s32 = tailrank.scan(q, c, (ids, h32), bench["gt"], normalize=True, **opts)
    assert same_except_labels(s16, s32)
    assert [r["digest"] for r in s16.inputs if r["role"] == "pool"] == [_digest(ids, h32)]


def test_normalised_rows_are_reported_as_a_warning(bench):
    """As `tailrank scan` prints it: rows L2-normalised under normalize=True give one warning
    with their count; a scan of unit rows gives none."""
    import warnings

    q, c = arrays(bench)
    ids, arr = bench["shard_ids"][2], bench["shards"][2]
    scaled = arr.copy()
    scaled[:3] *= 2.0
    with pytest.warns(UserWarning, match=r"tailrank\.scan: warning: 3 row\(s\) .*L2-normalised"):
        tailrank.scan(q, c, (ids, scaled), bench["gt"], normalize=True, top_m=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tailrank.scan(q, c, (ids, arr), bench["gt"], normalize=True, top_m=20)


def test_ids_with_newlines_and_odd_ids(bench):
    """Ids containing a newline cannot use the joined buffer: they go one by one, and the
    digest still hashes id + "\\n" for each id."""
    q, c = arrays(bench)
    ids, arr = list(bench["shard_ids"][3]), bench["shards"][3]
    ids[5] = "two\nlines"
    ids[6] = ""  # empty id: allowed in memory
    ids[7] = "ünïcødé ✓"
    s = tailrank.scan(q, c, (ids, arr), bench["gt"], top_m=10)
    assert [r["digest"] for r in s.inputs if r["role"] == "pool"] == [_digest(ids, arr)]
    ints = list(range(len(ids)))  # non-str ids go through str()
    s = tailrank.scan(q, c, (ints, arr), bench["gt"], top_m=10)
    assert [r["digest"] for r in s.inputs if r["role"] == "pool"] == [_digest(map(str, ints), arr)]


def test_bad_array_inputs_raise(bench):
    q, c = arrays(bench)
    ids, arr = bench["shard_ids"][0], bench["shards"][0]
    with pytest.raises(tailrank.TailrankError, match="float16, float32 or float64, got int32"):
        tailrank.scan(q, c, (ids, arr.astype(np.int32)), bench["gt"])
    with pytest.raises(tailrank.TailrankError, match="pool: 401 ids for 400 rows"):
        tailrank.scan(q, c, (ids + ["x"], arr), bench["gt"])
    with pytest.raises(tailrank.TailrankError, match="dimension 0"):
        tailrank.scan(q, c, (ids, np.zeros((len(ids), 0), np.float32)), bench["gt"])
    with pytest.raises(tailrank.TailrankError, match="not one string"):
        tailrank.scan(q, ("abc", arr[:3]), (ids, arr), bench["gt"])
    with pytest.raises(tailrank.TailrankError, match='duplicate id "yfcc000/000000" on rows 0 and 399'):
        tailrank.scan(q, c, (ids[:-1] + [ids[0]], arr), bench["gt"])
    # The native layer checks the array interface itself (no trust in the caller).
    from tailrank import _native

    def native(src):
        qs = tailrank._source(q, "queries")
        cs = tailrank._source(c, "core")
        return _native.scan_native(qs, cs, [src], tailrank._gt(bench["gt"]))

    with pytest.raises(tailrank.TailrankError, match="C-contiguous"):
        native({"label": "p", "ids": list(ids[:200]), "array": arr[::2]})
    with pytest.raises(tailrank.TailrankError, match="little-endian float32 or float16"):
        native({"label": "p", "ids": list(ids), "array": arr.astype(np.float64)})
    with pytest.raises(tailrank.TailrankError, match="2-D"):
        native({"label": "p", "ids": list(ids), "array": arr.ravel()})
    with pytest.raises(tailrank.TailrankError, match="numpy.ndarray"):
        native({"label": "p", "ids": list(ids), "array": [[1.0]]})

    class Fake:  # an array interface with a made-up address is never read
        __array_interface__ = {"typestr": "<f4", "shape": (400, arr.shape[1]), "data": (4096, True),
                               "version": 3}

    with pytest.raises(tailrank.TailrankError, match="numpy.ndarray, got Fake"):
        native({"label": "p", "ids": list(ids), "array": Fake()})
    with pytest.raises(tailrank.TailrankError, match="399 ids for 400 rows"):
        native({"label": "p", "ids": "\n".join(ids[:-1]).encode(), "array": arr})


def test_arguments_are_checked_not_coerced(bench):
    """Integers are not truncated floats, negatives and strings are refused naming the argument,
    one string is one name, and a dict ground truth refuses a query set it lacks."""
    q, c = arrays(bench)
    blocks = list(zip(bench["shard_ids"], bench["shards"]))
    s = tailrank.scan(q, c, [blocks[0]], bench["gt"], fraction=0.5, top_m=50, pool_size=10000)
    for kw, name in [(dict(k=2.5), "k"), (dict(bootstrap=-1), "bootstrap"), (dict(seed=-1), "seed"),
                     (dict(c_min=2.5), "c_min"), (dict(pool_size=-1), "pool_size")]:
        with pytest.raises(tailrank.TailrankError, match=f"^{name} must be a non-negative integer"):
            tailrank.predict(s, **kw)
    with pytest.raises(tailrank.TailrankError, match="excess_centre must be True or False"):
        tailrank.predict(s, excess_centre="no")
    with pytest.raises(tailrank.TailrankError, match="fit-top = 60 .* top M = 50"):
        tailrank.predict(s, fit_top=60, bootstrap=0, sample_noise=0)
    assert tailrank.predict(s, fit_top=50, bootstrap=0, sample_noise=0).estimate > 0
    for kw, name in [(dict(top_m=2.9), "top_m"), (dict(seed=1.7), "seed"), (dict(threads=-1), "threads")]:
        with pytest.raises(tailrank.TailrankError, match=f"^{name} must be a non-negative integer"):
            tailrank.scan(q, c, [blocks[0]], bench["gt"], **kw)
    with pytest.raises(tailrank.TailrankError, match="fraction must be a number"):
        tailrank.scan(q, c, [blocks[0]], bench["gt"], fraction="0.5")
    with pytest.raises(tailrank.TailrankError, match="chunk_rows must be at least 1"):
        tailrank.scan(q, c, iter(blocks), bench["gt"], chunk_rows=0)
    with pytest.raises(tailrank.TailrankError, match="one query set, 'queries'"):
        tailrank.scan(q, c, [blocks[0]], bench["gt"], query_set="image")
    first = next(iter(bench["gt"]))
    with pytest.raises(tailrank.TailrankError, match="not one string"):
        tailrank.scan(q, c, [blocks[0]], {first: bench["gt"][first][0]})
    with pytest.raises(tailrank.TailrankError, match="one query set, 'queries'"):
        tailrank.evaluate({}, bench["gt"], sets=["image"])
    with pytest.raises(tailrank.TailrankError, match='unknown metric "nope@5"'):
        tailrank.evaluate({}, bench["gt"], metrics="nope@5", missing_as_zero=True)


def test_merge_warns_as_the_cli_does(tmp_path):
    """A merge of parts without a pool fingerprint (a simulated summary) warns that overlaps
    are then found only by identical file digests, as `tailrank merge` does."""
    import os
    import subprocess

    sim = tmp_path / "sim"
    subprocess.run([os.environ.get("TAILRANK_BIN", "tailrank"), "simulate", "--preset", "ilias-like",
                    "--queries", "10", "-o", str(sim)], check=True, capture_output=True)
    s = tailrank.load_summary(sim / "summary")
    with pytest.warns(UserWarning, match="no pool fingerprint"):
        s.merge(s)


def test_an_empty_sample_is_reported_as_a_warning(bench):
    """As `tailrank scan` warns: pool rows read of which none lies in the hash sample."""
    q, c = arrays(bench)
    ids, arr = bench["shard_ids"][0], bench["shards"][0]
    with pytest.warns(UserWarning, match=r"tailrank\.scan: none of the \d+ pool rows read lies in the hash sample"):
        s = tailrank.scan(q, c, (ids, arr), bench["gt"], fraction=1e-6, top_m=20)
    assert s.subset_sizes[0] == 0


def test_an_iterator_scan_warns_of_an_empty_sample_once(bench):
    """The parts of an iterator's scan may each hold no sampled row while the whole scan does:
    no warning then; a whole scan with none warns once, not once per part."""
    import warnings

    q, c = arrays(bench)
    blocks = list(zip(bench["shard_ids"], bench["shards"]))
    counts = lambda seed: [int(tailrank.sample_mask(ids, 2e-3, seed).sum()) for ids, _ in blocks]  # noqa: E731
    seed = next(s for s in range(200) if 0 in counts(s) and sum(counts(s)) > 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = tailrank.scan(q, c, iter(blocks), bench["gt"], fraction=2e-3, seed=seed,
                          chunk_rows=400, top_m=10)
    assert s.subset_sizes[0] == sum(counts(seed))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tailrank.scan(q, c, iter(blocks), bench["gt"], fraction=1e-7, chunk_rows=400, top_m=10)
    import re

    empty = [w for w in caught if re.match(tailrank.EMPTY_SAMPLE_WARNING, str(w.message))]
    assert len(empty) == 1, [str(w.message) for w in caught]


def test_rows_listed_with_another_seed_are_named(bench):
    """As `tailrank scan` warns: the rows of seed 3's sample scanned at seed 0."""
    import warnings

    q, c = arrays(bench)
    ids, arr = bench["shard_ids"][0], bench["shards"][0]
    mask = tailrank.sample_mask(ids, 0.25, seed=3)
    listed = ([i for i, m in zip(ids, mask) if m], arr[mask])
    with pytest.warns(UserWarning, match=r"tailrank\.scan: warning: only \d+ of the \d+ pool rows .* sample of seed 3"):
        tailrank.scan(q, c, listed, bench["gt"], fraction=0.25, seed=0, top_m=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tailrank.scan(q, c, listed, bench["gt"], fraction=0.25, seed=3, top_m=10)
        tailrank.scan(q, c, (ids, arr), bench["gt"], fraction=0.25, seed=0, top_m=10)
