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
    # Save / load / pickle round trips keep every bit.
    whole.save(tmp_path / "s")
    assert tailrank.load_summary(tmp_path / "s") == whole
    assert pickle.loads(pickle.dumps(whole)) == whole
    assert tailrank._summary_from_files(whole.to_files()) == whole
    # Exact mode: N = rows, merged N = sum of the shards' rows.
    ex = [tailrank.scan(q, c, [b], bench["gt"], top_m=10) for b in blocks[:2]]
    assert [e.pool_size for e in ex] == [400, 400]
    assert ex[0].merge(ex[1]).pool_size == 800


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
