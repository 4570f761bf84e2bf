"""Sample increments and growing a summary: ``sample_ids(..., after=)`` equals xxhash's
increment and ``tailrank sample --after``; ``scan(..., after=)`` plus ``grow`` equals a direct
scan of the larger sample (every array file bitwise, the manifest but for the inputs), also from
an increment scanned as an iterator of blocks (parts merged); rows outside the increment and a
part given as a base are refused."""

import io

import numpy as np
import pytest
import xxhash

import tailrank
from conftest import files_but_inputs, run_cli

SEED = 3
OPTS = dict(seed=SEED, top_m=40, model="toy", threads=2)


def test_sample_increment_equals_xxhash_and_cli(cli, tmp_path):
    ids = [f"yfcc{i % 7:03d}/{i:09d}" for i in range(5000)]
    h = [xxhash.xxh3_64_intdigest(i.encode(), seed=SEED) for i in ids]
    lo, hi = int(0.2 * 2.0**64), int(0.4 * 2.0**64)
    want = [i for i, x in zip(ids, h) if lo <= x < hi]
    got = tailrank.sample_ids(ids, 0.4, seed=SEED, after=0.2)
    assert got == want and len(got) > 800
    # The increment is the larger sample less the smaller one, in input order.
    small = set(tailrank.sample_ids(ids, 0.2, SEED))
    assert got == [i for i in tailrank.sample_ids(ids, 0.4, SEED) if i not in small]
    np.testing.assert_array_equal(
        tailrank.sample_mask(ids, 0.4, SEED, after=0.2), [i in set(want) for i in ids]
    )
    # Up to f = 1: the top end of the hash range is kept.
    assert tailrank.sample_ids(ids, 1.0, SEED, after=0.4) == [
        i for i, x in zip(ids, h) if x >= hi
    ]
    (tmp_path / "ids.txt").write_text("".join(i + "\n" for i in ids))
    run_cli(cli, "sample", "--ids", tmp_path / "ids.txt", "--fraction", 0.4, "--after", 0.2,
            "--seed", SEED, "-o", tmp_path / "inc.txt")
    assert (tmp_path / "inc.txt").read_text().splitlines() == want
    with pytest.raises(tailrank.TailrankError, match="must be below the sampling fraction"):
        tailrank.sample_ids(ids, 0.2, SEED, after=0.4)



def test_scan_after_and_grow_equal_a_direct_scan(bench):
    ids = sum(bench["shard_ids"], [])
    pool = np.vstack(bench["shards"])
    # Ties: pool copies of core positives, some in every hash range.
    pool[::97] = bench["core"][: len(pool[::97])]
    q, c = (bench["qids"], bench["q"]), (bench["cids"], bench["core"])

    def rows(mask):
        return [i for i, m in zip(ids, mask) if m], pool[np.asarray(mask)]

    direct = tailrank.scan(q, c, (ids, pool), bench["gt"], fraction=0.5, **OPTS)
    base = tailrank.scan(q, c, rows(tailrank.sample_mask(ids, 0.25, SEED)), bench["gt"],
                         fraction=0.25, **OPTS)
    inc = rows(tailrank.sample_mask(ids, 0.5, SEED, after=0.25))
    part = tailrank.scan(q, c, inc, bench["gt"], fraction=0.5, after=0.25, **OPTS)
    assert part.pool_size is None and part.subsets[0]["range"]["lo"] == int(0.25 * 2.0**64)
    grown = tailrank.grow(base, part)
    ties = np.load(io.BytesIO(direct.to_files()["pos_pool_ties.npy"]))
    assert ties[:, 0].sum() > 0
    assert files_but_inputs(grown) == files_but_inputs(direct)
    assert base.grow(part) == grown

    # The increment as an iterator of blocks: blocks of 100 rows in parts of 300, merged, grow the same.
    blocks = ((inc[0][a:a + 100], inc[1][a:a + 100]) for a in range(0, len(inc[0]), 100))
    merged = tailrank.scan(q, c, blocks, bench["gt"], fraction=0.5, after=0.25,
                           chunk_rows=300, **OPTS)
    assert files_but_inputs(tailrank.grow(base, merged)) == files_but_inputs(direct)

    # A row of the base's sample in the increment's pool: named; a part is no base.
    with pytest.raises(tailrank.TailrankError, match="outside the sample increment"):
        tailrank.scan(q, c, (ids, pool), bench["gt"], fraction=0.5, after=0.25, **OPTS)
    # after= without fraction= would scan the increment up to the whole pool: refused.
    with pytest.raises(tailrank.OptionError, match="after= needs fraction="):
        tailrank.scan(q, c, inc, bench["gt"], after=0.25, **OPTS)
    with pytest.raises(tailrank.TailrankError, match="itself an increment"):
        tailrank.grow(part, part)
