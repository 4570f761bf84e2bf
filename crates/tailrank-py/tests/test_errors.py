"""One exception class per error kind (docs/reference/errors.md): each kind raised by a real bad input,
the class tree, pickling, and the kinds table of docs/reference/errors.md against the package."""

import pickle
import re

import numpy as np
import pytest

import tailrank
from conftest import ROOT

KIND_CLASSES = [
    tailrank.OptionError,
    tailrank.InputError,
    tailrank.MismatchError,
    tailrank.UnsupportedError,
    tailrank.OutputError,
    tailrank.TailrankIOError,
    tailrank.InternalError,
]


def arrays(bench):
    return (bench["qids"], bench["q"]), (bench["cids"], bench["core"])


def small_scan(bench, **kw):
    q, c = arrays(bench)
    block = (bench["shard_ids"][0], bench["shards"][0])
    return tailrank.scan(q, c, [block], bench["gt"], top_m=10, **kw)


def test_class_tree_keeps_value_error_and_os_error():
    for cls in KIND_CLASSES:
        assert issubclass(cls, tailrank.TailrankError) and issubclass(cls, ValueError), cls
        assert cls.__module__ == "tailrank" and cls.__name__ in tailrank.__all__
    assert issubclass(tailrank.TailrankIOError, OSError)
    assert not any(issubclass(c, OSError) for c in KIND_CLASSES if c is not tailrank.TailrankIOError)
    for cls in KIND_CLASSES:
        e = pickle.loads(pickle.dumps(cls("x.npy: bad")))
        assert type(e) is cls and str(e) == "x.npy: bad"


def test_kinds_table_of_errors_md_names_the_classes():
    """Every row of the kinds table names a class of the package deriving from TailrankError,
    and every kind class has a row."""
    doc = (ROOT / "docs" / "reference" / "errors.md").read_text()
    table = doc[doc.index("<!-- kinds:start -->"):doc.index("<!-- kinds:end -->")]
    names = re.findall(r"^\| `\w+` \| \d+ \| `tailrank\.(\w+)` \|", table, re.M)
    assert sorted(names) == sorted(c.__name__ for c in KIND_CLASSES)


def test_option_error(bench):
    with pytest.raises(tailrank.OptionError, match="sampling fraction must be in"):
        tailrank.sample_ids(["a", "b"], 0.0)
    with pytest.raises(tailrank.OptionError, match="unknown estimator"):
        tailrank.predict(small_scan(bench), estimator="nope")
    with pytest.raises(tailrank.OptionError, match="^k must be a non-negative integer"):
        tailrank.predict(small_scan(bench), k=2.5)
    # A name that is not a string: the library's OptionError, not pyo3's TypeError.
    with pytest.raises(tailrank.OptionError, match="^estimator must be a string"):
        tailrank.predict(small_scan(bench), estimator=1)
    with pytest.raises(tailrank.OptionError, match="^fit must be a string"):
        tailrank.predict(small_scan(bench), fit=None)


def test_input_error(bench, tmp_path):
    q, c = arrays(bench)
    ids, arr = bench["shard_ids"][0], bench["shards"][0]
    with pytest.raises(tailrank.InputError, match="duplicate"):
        tailrank.scan(q, c, ([ids[0]] * len(ids), arr), bench["gt"])
    # A truncated .npy on disk: the error names the file.
    raw = open(bench["shard_paths"][0], "rb").read()
    (tmp_path / "cut.npy").write_bytes(raw[:-100])
    (tmp_path / "cut.ids.txt").write_text("".join(f"{i}\n" for i in ids))
    with pytest.raises(tailrank.InputError, match=r"cut\.npy: truncated file"):
        tailrank.scan(q, c, [str(tmp_path / "cut.npy")], bench["gt"])
    (tmp_path / "not_a_summary").write_text("x")
    with pytest.raises(tailrank.InputError, match="not a summary folder"):
        tailrank.load_summary(tmp_path / "not_a_summary")


def test_mismatch_error(bench):
    s = small_scan(bench)
    with pytest.raises(tailrank.MismatchError, match="overlap"):
        s.merge(s)
    q, c = arrays(bench)
    other_seed = tailrank.scan(q, c, [(bench["shard_ids"][1], bench["shards"][1])], bench["gt"],
                               top_m=10, seed=7)
    with pytest.raises(tailrank.MismatchError, match="seed"):
        s.merge(other_seed)
    with pytest.raises(tailrank.MismatchError, match="fit-top = 60"):
        tailrank.predict(s, fit_top=60, bootstrap=0, sample_noise=0)


def test_unsupported_error(bench, tmp_path):
    q, c = arrays(bench)
    ids = bench["shard_ids"][0]
    np.save(tmp_path / "f64.npy", bench["shards"][0].astype(np.float64))
    (tmp_path / "f64.ids.txt").write_text("".join(f"{i}\n" for i in ids))
    with pytest.raises(tailrank.UnsupportedError, match="unsupported dtype"):
        tailrank.scan(q, c, [str(tmp_path / "f64.npy")], bench["gt"])
    with pytest.raises(tailrank.UnsupportedError, match="int32"):
        tailrank.scan(q, c, (ids, np.zeros((len(ids), 4), np.int32)), bench["gt"])


def test_output_error(bench, tmp_path):
    s = small_scan(bench)
    (tmp_path / "taken").write_text("a user's file")
    with pytest.raises(tailrank.OutputError, match="refusing"):
        s.save(tmp_path / "taken")
    assert (tmp_path / "taken").read_text() == "a user's file"


def test_io_error_is_also_os_error(bench, tmp_path):
    q, c = arrays(bench)
    with pytest.raises(tailrank.TailrankIOError, match="nope.npy"):
        tailrank.scan(q, c, ["/nonexistent/nope.npy"], bench["gt"])
    with pytest.raises(OSError, match="does not exist"):
        tailrank.load_summary(tmp_path / "absent")
    # Old code that caught ValueError still catches every kind.
    with pytest.raises(ValueError):
        tailrank.load_summary(tmp_path / "absent")
