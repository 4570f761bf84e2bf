"""tailrank: exact and predicted mAP@k for image retrieval against web-scale distractor pools.

Python front end of the Rust library (the same code as the ``tailrank`` CLI):

* :func:`scan` -- one pass of queries and core against a pool into a :class:`Summary`
  (per positive: score s_j, core count C_j, pool counts K_{j,l} per nested sample level; per
  query the top-M pool scores).
* :func:`predict` -- the mAP@k at pool size N predicted from a summary (tail-aware ``evt``
  hardness by default), with intervals, baselines and diagnostics: a :class:`Report` whose
  :meth:`Report.to_dict` is what ``tailrank predict --json`` prints.
* :func:`evaluate` -- exact mAP@k (ILIAS semantics) of a results dict {query: {db_id: score}}.
* :func:`sample_ids` -- the hash sample of docs/method.md §4: id kept iff
  ``xxh3_64_with_seed(utf8(id), seed) < floor(f * 2**64)``.

Arrays go in as numpy (float16/32/64, one row per id); C-contiguous little-endian float32 and
float16 arrays are read in place by Rust (no copy; do not write to them while a scan runs).
Results come out as numpy arrays and dicts. Scans release the GIL.
"""

from __future__ import annotations

import copy
import json
import math
import os
import tempfile
import warnings
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._native import (
    InputError,
    InternalError,
    MismatchError,
    OptionError,
    OutputError,
    TailrankError,
    TailrankIOError,
    UnsupportedError,
)

# The native module registers the classes as `_native.TailrankError` etc., names no process can
# import: pickling an instance (multiprocessing, a Ray task's error) would fail. Under the
# package's own name they pickle and unpickle as these very classes. One class per error kind
# (docs/reference/errors.md); all derive from TailrankError, itself a ValueError; TailrankIOError is also
# an OSError.
for _cls in (
    TailrankError,
    OptionError,
    InputError,
    MismatchError,
    UnsupportedError,
    OutputError,
    TailrankIOError,
    InternalError,
):
    _cls.__module__ = "tailrank"
del _cls

__all__ = [
    "Summary",
    "Report",
    "TailrankError",
    "OptionError",
    "InputError",
    "MismatchError",
    "UnsupportedError",
    "OutputError",
    "TailrankIOError",
    "InternalError",
    "scan",
    "load_summary",
    "grow",
    "predict",
    "evaluate",
    "evaluate_revisited",
    "sample_ids",
    "sample_mask",
    "id_hashes",
    "__version__",
]

__version__ = _native.version()

PathLike = Union[str, "os.PathLike[str]"]

#: Rows gathered from an iterator of pool blocks before one scan call (the parts are merged).
ITER_CHUNK_ROWS = 1 << 20


# ----------------------------------------------------------------------------------------------
# inputs


def _is_path(x: Any) -> bool:
    return isinstance(x, (str, bytes, os.PathLike))


def _fspath(x: Any, name: str) -> str:
    """A path as text: ``str``, ``bytes`` or an ``os.PathLike`` giving either (bytes decoded as
    the file system does); a NUL character, which no path holds, is refused naming ``name``."""
    p = os.fspath(x)
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    if "\0" in p:
        raise OptionError(f"{name}: a path cannot contain a NUL character, got {p!r}")
    return p


def _display(path: str) -> str:
    """``path`` as UTF-8 text for messages and commands (undecodable bytes replaced)."""
    return os.fsencode(path).decode("utf-8", "replace")


def _id(x: Any, label: str) -> str:
    """One id as text: ``bytes`` decoded as UTF-8, anything else through ``str``; an id that is
    no UTF-8 text (undecodable bytes, a lone surrogate) is refused naming ``label``."""
    if isinstance(x, (list, tuple, set, frozenset, dict, np.ndarray)):
        raise InputError(
            f"{label}: an id is a {type(x).__name__} ({x!r}), not one id: give the ids as a flat "
            "sequence (a 2-D array's column: ids[:, 0] or ids.ravel())"
        )
    try:
        t = x.decode() if isinstance(x, bytes) else str(x)
        t.encode()
    except UnicodeError as e:
        raise InputError(f"{label}: id {x!r} is not UTF-8 text ({e.reason})") from None
    return t


def _check_id_sequence(ids: Any, label: str) -> None:
    """Ids are an ordered sequence: not one string, and not a set (no row order)."""
    if isinstance(ids, (str, bytes)):
        raise InputError(f"{label}: ids must be a sequence of strings, not one string")
    if isinstance(ids, (set, frozenset)):
        raise InputError(
            f"{label}: ids must be an ordered sequence (list, tuple, array), not a "
            f"{type(ids).__name__}: a set has no order to pair its ids with rows"
        )
    if isinstance(ids, np.ndarray) and ids.ndim != 1:
        raise InputError(
            f"{label}: ids must be a one-dimensional sequence, got an array of shape "
            f"{ids.shape} (ids.ravel() or ids[:, 0] gives the flat list)"
        )
    if not isinstance(ids, Iterable):
        raise InputError(f"{label}: ids must be a sequence of strings, got {type(ids).__name__}")


def _ids_list(ids: Any, label: str) -> List[str]:
    _check_id_sequence(ids, label)
    lst = ids if isinstance(ids, list) else list(ids)
    # Fast path (C loops): every id a str, all of them UTF-8 text.
    if all(type(i) is str for i in lst):
        try:
            "".join(lst).encode()
            return lst
        except UnicodeEncodeError:
            pass
    return [_id(i, label) for i in lst]


def _count(x: Any, name: str, optional: bool = False) -> Optional[int]:
    """A non-negative integer argument (``None`` allowed when ``optional``): an ``int`` or a
    numpy integer, never a float truncated in silence, a string or a bool."""
    if x is None and optional:
        return None
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise OptionError(f"{name} must be a non-negative integer, got {x!r}")
    if x < 0 or x > 2**64 - 1:
        raise OptionError(f"{name} must be a non-negative integer below 2**64, got {x}")
    return int(x)


def _real(x: Any, name: str, optional: bool = False) -> Optional[float]:
    """A real-number argument (``None`` allowed when ``optional``): not a string or a bool."""
    if x is None and optional:
        return None
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise OptionError(f"{name} must be a number, got {x!r}")
    if isinstance(x, np.floating) and np.finfo(x.dtype).bits < 64:
        # np.float32(0.05) is 0.0500000007 as a double: another hash threshold than the CLI's
        # --fraction 0.05. Its shortest decimal is the number that was meant.
        return float(str(x))
    try:
        return float(x)
    except OverflowError:
        raise OptionError(f"{name}: {x} is too large for a float") from None


def _scan_fraction(
    fraction: Any, after: Any, names: Tuple[str, str] = ("after=", "fraction=")
) -> float:
    """A scan's ``fraction`` (None: 1, the whole pool); an error when ``after`` is given
    without it (``--after`` needs ``--fraction``): the increment's upper end must be said.
    ``names`` spells the two arguments in the error (the command line's flags for its CLI)."""
    if fraction is None:
        if after is not None:
            raise OptionError(
                f"{names[0]} needs {names[1]}, the upper end of the increment t(after) <= hash < "
                "t(fraction) (without it the increment would run to the whole pool)"
            )
        return _native.SCAN_DEFAULTS["fraction"]
    return _real(fraction, "fraction")


def _flag(x: Any, name: str) -> bool:
    """A boolean argument: ``True`` or ``False`` (a string such as ``"no"`` would be true)."""
    if not isinstance(x, (bool, np.bool_)):
        raise OptionError(f"{name} must be True or False, got {x!r}")
    return bool(x)


def _path(x: Any, name: str) -> str:
    """A path argument: ``str``, ``os.PathLike`` or ``bytes`` (decoded as the file system does)."""
    if not _is_path(x):
        raise OptionError(f"{name} must be a path (str, bytes or os.PathLike), got {x!r}")
    return _fspath(x, name)


def _text(x: Any, name: str, optional: bool = False) -> Optional[str]:
    """A string argument (a name such as ``"evt"``, a model label); None only if optional."""
    if x is None and optional:
        return None
    if not isinstance(x, str):
        raise OptionError(f"{name} must be a string, got {x!r}")
    return x


def _names(x: Any, name: str) -> Optional[List[str]]:
    """A list of names (argument ``name``); one string is one name, not a list of its
    characters."""
    if x is None:
        return None
    if isinstance(x, str):
        return [x]
    if not isinstance(x, Iterable):
        raise OptionError(f"{name} must be a name or a list of names, got {x!r}")
    names = list(x)
    for v in names:
        if not isinstance(v, str):
            raise OptionError(f"{name} must be a name or a list of names, got {v!r} in the list")
    return names


def _ids_arg(ids: Any, rows: int, label: str) -> Union[bytes, List[str]]:
    """Ids for the native layer. Fast path: every id a ``str`` without a newline -> one UTF-8
    buffer of the ids joined by ``"\n"`` (``str.join`` and ``encode`` run in C; Rust splits it).
    Otherwise a list of ``str`` (bytes decoded as UTF-8, anything else through ``str``)."""
    _check_id_sequence(ids, label)
    if not hasattr(ids, "__len__"):
        ids = list(ids)
    if len(ids) != rows:
        raise InputError(f"{label}: {len(ids)} ids for {rows} rows")
    try:
        blob = "\n".join(ids).encode()
    except (TypeError, UnicodeEncodeError):
        return _ids_list(ids, label)
    if rows and blob.count(b"\n") != rows - 1:  # an id contains a newline
        return _ids_list(ids, label)
    return blob


def _array_source(ids: Any, array: Any, label: str) -> Dict[str, Any]:
    """An in-memory source: the array is handed to Rust by reference (no copy) once it is a
    C-contiguous little-endian float32 or float16 array; other layouts and float64 are converted
    here (one copy). The caller must not write to the array while the scan runs."""
    if isinstance(array, np.ma.MaskedArray) and np.ma.is_masked(array):
        raise InputError(f"{label}: descriptors are a masked array with masked entries; "
                         "fill or drop the masked rows first (np.ma.filled, compressed rows)")
    try:
        a = np.asarray(array)
    except (ValueError, TypeError) as e:
        raise InputError(f"{label}: descriptors are not an array ({e})") from None
    if a.ndim != 2:
        raise InputError(f"{label}: descriptors must be a 2-D array (rows x dim), got shape {a.shape}")
    if a.dtype.kind != "f" or a.dtype.itemsize not in (2, 4, 8):
        raise UnsupportedError(f"{label}: descriptors must be float16, float32 or float64, got {a.dtype}")
    if a.shape[1] == 0:
        raise InputError(f"{label}: descriptors have dimension 0")
    wide = a if a.dtype.itemsize == 8 else None
    with np.errstate(over="ignore"):
        a = np.ascontiguousarray(a, dtype="<f2" if a.dtype.itemsize == 2 else "<f4")
    if wide is not None:
        _check_float32_range(wide, a, label)
    return {"label": label, "ids": _ids_arg(ids, a.shape[0], label), "array": a}


def _check_float32_range(wide: np.ndarray, narrow: np.ndarray, label: str) -> None:
    """Refuse float64 rows that float32 cannot hold: a finite value that overflows to inf, or a
    non-zero row whose values all underflow to 0 (the scan would name the float32 copy's inf or
    zero row, not the user's value). Checked in blocks of rows, so the masks stay small."""
    step = 1 << 14
    for lo in range(0, wide.shape[0], step):
        w, n = wide[lo : lo + step], narrow[lo : lo + step]
        over = np.isinf(n) & np.isfinite(w)
        if over.any():
            r, c = np.argwhere(over)[0]
            raise InputError(
                f"{label}: row {lo + r}: value {float(w[r, c])!r} (column {c}) is outside "
                "float32's range (|x| < 3.4e38): scale the rows first (the scan computes in float32)"
            )
        lost = ~n.any(axis=1) & w.any(axis=1)
        if lost.any():
            raise InputError(
                f"{label}: row {lo + int(np.argmax(lost))}: every value is below float32's smallest "
                "(about 1e-45) and becomes 0: scale the rows first (the scan computes in float32)"
            )


def _source(x: Any, label: str) -> Dict[str, Any]:
    """A descriptor input: a path (``.npy`` with sibling ids, or HDF5), ``(path, ids_path)``,
    or ``(ids, array)``."""
    if _is_path(x):
        return {"path": _fspath(x, label), "ids": None}
    if isinstance(x, tuple) and len(x) == 2:
        a, b = x
        if _is_path(a) and (b is None or _is_path(b)):
            return {"path": _fspath(a, label), "ids": None if b is None else _fspath(b, label)}
        return _array_source(a, b, label)
    raise InputError(
        f"{label}: expected a path, (path, ids_path) or (ids, array), got {type(x).__name__}"
    )


#: The name of the one query set a dict ground truth holds.
DICT_QUERY_SET = "queries"


def _dict_gt_sets(gt: Any, wanted: Optional[List[str]], what: str) -> None:
    """Refuse a query-set choice that a dict ground truth (one set, [`DICT_QUERY_SET`]) cannot
    honour: any name but that one (as a ground-truth file without the set is refused)."""
    if isinstance(gt, Mapping) and wanted and any(w != DICT_QUERY_SET for w in wanted):
        raise MismatchError(
            f"{what} {wanted}: a dict ground truth holds one query set, {DICT_QUERY_SET!r}"
        )


def _gt(gt: Any) -> Any:
    """Ground truth: a path, or a mapping {query_id: [positive ids]} (query order kept)."""
    if _is_path(gt):
        return _fspath(gt, "gt")
    if isinstance(gt, Mapping):
        qids = [_id(q, "gt") for q in gt.keys()]
        for q, ps in zip(qids, gt.values()):
            if isinstance(ps, (str, bytes)) or not isinstance(ps, Iterable):
                what = "not one string" if isinstance(ps, (str, bytes)) else f"got {type(ps).__name__}"
                raise InputError(f"gt: the positives of query {q!r} must be a list of ids, {what}")
            if isinstance(ps, (set, frozenset)):
                raise InputError(
                    f"gt: the positives of query {q!r} must be a list of ids, not a "
                    f"{type(ps).__name__}: its order changes from one process to the next, and "
                    "the ground truth's digest with it (summaries of two shards would not merge)"
                )
        pos = [[_id(p, f"gt: query {q!r}") for p in ps] for q, ps in zip(qids, gt.values())]
        return (DICT_QUERY_SET, qids, pos)
    raise InputError(f"gt: expected a path or a dict {{query: [positives]}}, got {type(gt).__name__}")


# ----------------------------------------------------------------------------------------------
# summary


def _summary_from_bytes(
    data: bytes, path: Optional[str] = None, read_from: frozenset = frozenset()
) -> "Summary":
    return Summary(_native.NativeSummary.from_bytes(data), path, read_from)


def _summary_from_files(files: Dict[str, bytes]) -> "Summary":
    with tempfile.TemporaryDirectory(prefix="tailrank-") as d:
        for name, data in files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        return Summary(_native.NativeSummary.read(d))


class Summary:
    """A scan summary (``docs/reference/summary-format.md``): what one pass over descriptors produces.

    Summaries of disjoint pool shards merge exactly (counts add, top-M lists merge); a merge
    refuses overlapping shards (the same pool input digest twice). Picklable (an exact binary
    form, for processes of the same tailrank version; Ray ships it between workers that way).
    """

    __slots__ = ("_s", "_meta", "_path", "_read_from")

    def __init__(
        self,
        native: "_native.NativeSummary",
        path: Optional[str] = None,
        read_from: frozenset = frozenset(),
    ):
        self._s = native
        self._meta = json.loads(native.meta_json())
        # The folder it was read from, for the next step's commands (None when built in memory).
        self._path = path
        # The folders it, or a summary it was merged or grown from, was read from: inputs,
        # which save() never replaces (as `tailrank merge a b -o a` is refused).
        self._read_from = read_from | ({os.path.realpath(path)} if path else set())

    # -- io
    @staticmethod
    def load(path: PathLike) -> "Summary":
        """Read a summary folder (written by :meth:`save` or ``tailrank scan``)."""
        path = _path(path, "path")
        return Summary(_native.NativeSummary.read(path), path)

    def save(self, path: PathLike) -> None:
        """Write the summary folder at ``path`` (replaced atomically if it exists; never the
        folder this summary, or one it was merged or grown from, was read from, nor a folder
        inside it: an input)."""
        path = _path(path, "path")
        out = os.path.realpath(path)
        for src in sorted(self._read_from):
            if out == src or os.path.commonpath([out, src]) == src:
                where = "is" if out == src else "lies inside"
                raise OutputError(
                    f"{path}: {where} the folder this summary, or one it was merged "
                    f"or grown from, was read from ({src}, an input); refusing to write there: "
                    "save to another folder"
                )
        self._s.write(path)

    def merge(self, *others: "Summary") -> "Summary":
        """This summary merged with ``others`` (disjoint pool shards), in that order."""
        return Summary.merge_all([self, *others])

    def grow(self, part: "Summary") -> "Summary":
        """This summary (the sample at f_b) grown by ``part``, the scan of its increment
        (``scan(..., fraction=f, after=f_b)``): the summary of the sample at f (``tailrank grow``),
        equal to a direct scan at f when f = 2^k f_b; for other factors the levels and shard
        cuts below f_b move onto the base's, each subset exact over its hash range
        (docs/reference/summary-format.md, "Which factors")."""
        native = _native.NativeSummary.grow(self._s, _summary_arg(part, "grow: part"))
        return Summary(native, read_from=self._read_from | part._read_from)

    @staticmethod
    def merge_all(parts: Sequence["Summary"]) -> "Summary":
        """Merge summaries of disjoint pool shards, in order (``Summary::merge``)."""
        if not parts:
            raise OptionError("merge: no summary given")
        native = _native.NativeSummary.merge(
            [_summary_arg(p, f"merge: part {i + 1}") for i, p in enumerate(parts)]
        )
        return Summary(native, read_from=frozenset().union(*(p._read_from for p in parts)))

    def to_files(self) -> Dict[str, bytes]:
        """The summary folder's files {name: bytes}."""
        with tempfile.TemporaryDirectory(prefix="tailrank-") as d:
            out = os.path.join(d, "s")
            self.save(out)
            files = {}
            for name in sorted(os.listdir(out)):
                with open(os.path.join(out, name), "rb") as f:
                    files[name] = f.read()
            return files

    def __reduce__(self):
        # In-memory exact binary form (fast; for processes running the same tailrank version),
        # with the folders it was read from (save() refuses them in the new process too).
        return (_summary_from_bytes, (self._s.to_bytes(), self._path, self._read_from))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Summary):
            return NotImplemented
        return self._s == other._s

    def __hash__(self) -> int:  # pragma: no cover - summaries are mutable-free but unhashable
        raise TypeError("Summary is not hashable")

    def __repr__(self) -> str:
        n = self.pool_size
        return (
            f"Summary(model={self.model!r}, query_set={self.query_set!r}, queries={self.n_queries}, "
            f"f={self.fraction}, S_0={self.subset_sizes[0]}, N={n})"
        )

    # -- fields
    @property
    def meta(self) -> Dict[str, Any]:
        """Every field except the per-query data (format_version, model, query_set, pool_size,
        fraction, seed, top_m, core_size, subsets, subset_sizes, inputs, ...)."""
        return copy.deepcopy(self._meta)

    @property
    def model(self) -> str:
        return self._meta["model"]

    @property
    def query_set(self) -> str:
        return self._meta["query_set"]

    @property
    def pool_size(self) -> Optional[int]:
        """N, the size of the whole pool (None when unknown)."""
        return self._meta["pool_size"]

    @property
    def fraction(self) -> float:
        """f, the level-0 sampling fraction (1 = exact scan)."""
        return self._meta["fraction"]

    @property
    def seed(self) -> int:
        return self._meta["seed"]

    @property
    def top_m(self) -> int:
        return self._meta["top_m"]

    @property
    def core_size(self) -> int:
        return self._meta["core_size"]

    @property
    def subsets(self) -> List[Dict[str, Any]]:
        """Subsets: nested levels (f, f/2, ...) then drift shards, each with kind, fraction, range."""
        return copy.deepcopy(self._meta["subsets"])

    @property
    def subset_sizes(self) -> np.ndarray:
        """S_l: pool items seen per subset (level 0 first)."""
        return np.asarray(self._meta["subset_sizes"], dtype=np.uint64)

    @property
    def inputs(self) -> List[Dict[str, Any]]:
        """Input records (role, path, digest, rows)."""
        return copy.deepcopy(self._meta["inputs"])

    @property
    def is_exact(self) -> bool:
        """Whether the summary covers the whole pool: f = 1 and S_0 = N. One shard of an exact
        scan (f = 1, S_0 < N) is not exact until merged."""
        return self._s.is_exact()

    @property
    def n_queries(self) -> int:
        return self._s.n_queries()

    @property
    def query_ids(self) -> List[str]:
        return self._s.query_ids()

    def query(self, i: int) -> Dict[str, Any]:
        """Query ``i``: id, positive_ids, scores (f32, descending), core_above C_j (u64),
        pool_above K_{j,l} (u64, positives x subsets), top_scores (list per subset, f32)."""
        qid, pids, scores, core, pool, top = self._s.query(_count(i, "query index"))
        nsub = len(self._meta["subset_sizes"])
        return {
            "id": qid,
            "positive_ids": pids,
            "scores": np.asarray(scores, dtype=np.float32),
            "core_above": np.asarray(core, dtype=np.uint64),
            "pool_above": np.asarray(pool, dtype=np.uint64).reshape(len(pids), nsub),
            "top_scores": [np.asarray(t, dtype=np.float32) for t in top],
        }


def _summary_arg(x: Any, what: str) -> "_native.NativeSummary":
    """The native summary of ``x``, a :class:`Summary` (a folder path is refused: load it)."""
    if not isinstance(x, Summary):
        raise OptionError(
            f"{what}: expected a tailrank.Summary, got {type(x).__name__} (a folder is read with "
            "tailrank.load_summary)"
        )
    return x._s


def load_summary(path: PathLike) -> Summary:
    """Read a summary folder."""
    return Summary.load(path)


def grow(base: Summary, part: Summary) -> Summary:
    """``base`` grown by ``part``, the scan of its increment (:meth:`Summary.grow`)."""
    _summary_arg(base, "grow: base")
    return base.grow(part)


# ----------------------------------------------------------------------------------------------
# scan


def _pool_sources(pool: Any) -> Union[List[Dict[str, Any]], Iterator[Any]]:
    """Pool: a path, a list of paths / (path, ids_path), an (ids, array) pair, or an iterator of
    (ids, array) blocks (returned as an iterator)."""
    if _is_path(pool):
        return [_source(pool, "pool")]
    # (path, ids_path) is one shard, as for queries and core; (a.npy, b.npy) two.
    if isinstance(pool, tuple) and len(pool) == 2 and _is_path(pool[0]):
        ids_file = pool[1] is None or (
            _is_path(pool[1]) and not _fspath(pool[1], "pool").lower().endswith((".npy", ".h5", ".hdf5"))
        )
        if ids_file:
            return [_source(pool, "pool")]
    # (ids, array), unless both items are themselves pairs: then two shards, as in a list.
    if isinstance(pool, tuple) and len(pool) == 2 and not _is_path(pool[0]):
        if not all(isinstance(x, tuple) and len(x) == 2 for x in pool):
            return [_source(pool, "pool")]
    if isinstance(pool, (list, tuple)):
        return [_source(p, f"pool[{i}]") for i, p in enumerate(pool)]
    if isinstance(pool, Iterable):
        return iter(pool)
    raise InputError(f"pool: unsupported input {type(pool).__name__}")


def scan(
    queries: Any,
    core: Any,
    pool: Any,
    gt: Any,
    fraction: Optional[float] = None,
    seed: int = _native.SCAN_DEFAULTS["seed"],
    pool_size: Optional[int] = None,
    top_m: int = _native.SCAN_DEFAULTS["top_m"],
    model: str = "",
    threads: Optional[int] = None,
    *,
    after: Optional[float] = None,
    query_set: Optional[str] = None,
    min_fraction: Optional[float] = None,
    drift_shards: int = _native.SCAN_DEFAULTS["drift_shards"],
    normalize: bool = False,
    chunk_rows: int = ITER_CHUNK_ROWS,
) -> Summary:
    """Scan queries and core against the pool into a :class:`Summary` (``tailrank scan``).

    ``queries``/``core``: ``(ids, array)`` or a descriptor file path (``.npy`` with a sibling id
    file, or ILIAS HDF5), or ``(path, ids_path)``. ``pool``: the same, a list of them (shards),
    or an iterator of ``(ids, array)`` blocks (gathered into parts of ``chunk_rows`` rows, each
    scanned and the parts merged: the same summary as one scan). A pool given as
    ``(path, ids_path)`` must be wrapped in a list: ``[(path, ids_path)]``. ``gt``: a path (ILIAS folder or
    JSON; ``query_set`` picks a set when it holds several) or a dict {query: [positives]}.

    Sampling: pool item ``id`` is scanned iff ``xxh3_64(id, seed) < t(fraction)`` (``fraction``
    defaults to 1, the whole pool); levels
    f, f/2, ... down to ``min_fraction`` (default f/16); ``drift_shards`` hash shards; ``top_m``
    pool scores kept per query and subset (what ``predict``'s ``fit_top`` fits at most).
    ``after``: scan the increment ``t(after) <= hash < t(fraction)`` only (every pool row must
    lie in it) into a part for :func:`grow` (``tailrank scan --after``); it needs ``fraction``,
    the part's upper end, as ``--after`` needs ``--fraction``.
    ``pool_size`` N defaults to the pool rows when ``fraction == 1``. ``threads``: worker
    threads (default all cores). Scores are inner products of unit-norm rows (``normalize``
    L2-normalises rows that are not). The GIL is released during the scan.

    Arrays: float16, float32 or float64, 2-D, one row per id. C-contiguous little-endian float32
    and float16 arrays are read in place (zero copy; the scan holds a reference to them); others
    are converted first to a contiguous copy (float16 for float16, float32 otherwise). Do not
    modify an array from another thread while a scan that reads it is running. Ids: a sequence of ``str`` (fastest: a list of ``str``
    or a numpy string array); ``bytes`` are decoded as UTF-8, anything else goes through ``str``.
    """
    query_set = _text(query_set, "query_set", optional=True)
    _dict_gt_sets(gt, None if query_set is None else [query_set], "query_set")
    g = _gt(gt)
    fraction = _scan_fraction(fraction, after)
    q = _source(queries, "queries")
    c = _source(core, "core")
    kw = dict(
        query_set=query_set,
        fraction=fraction,
        seed=_count(seed, "seed"),
        after=_real(after, "after", optional=True),
        min_fraction=_real(min_fraction, "min_fraction", optional=True),
        top_m=_count(top_m, "top_m"),
        drift_shards=_count(drift_shards, "drift_shards"),
        model=_text(model, "model"),
        threads=_count(threads, "threads", optional=True),
        normalize=_flag(normalize, "normalize"),
    )
    pool_size = _count(pool_size, "pool_size", optional=True)
    if _count(chunk_rows, "chunk_rows") == 0:
        raise OptionError("chunk_rows must be at least 1")
    srcs = _pool_sources(pool)
    if isinstance(srcs, list):
        return Summary(_native.scan_native(q, c, srcs, g, pool_size=pool_size, **kw))
    # Iterator of blocks: scan parts of about chunk_rows rows and merge them in order.
    parts: List[Summary] = []
    buf: List[Dict[str, Any]] = []
    rows = 0
    nblock = 0

    def flush() -> None:
        nonlocal buf, rows
        if buf:
            parts.append(Summary(_native.scan_native(q, c, buf, g, pool_size=pool_size,
                                                     warn_empty=False, **kw)))
        buf, rows = [], 0

    for block in srcs:
        if not (isinstance(block, tuple) and len(block) == 2):
            raise InputError(f"pool block {nblock}: expected an (ids, array) pair")
        src = _source(block, f"pool block {nblock}")
        nblock += 1
        if "array" in src and np.may_share_memory(src["array"], np.asarray(block[1])):
            # Kept until its part is scanned, after the iterator has moved on: a generator that
            # refills one buffer would otherwise have every kept block show its last contents.
            src["array"] = src["array"].copy()
        buf.append(src)
        rows += src["array"].shape[0] if "array" in src else 0
        if rows >= chunk_rows:
            flush()
    flush()
    if not parts:
        raise InputError("pool: the iterator gave no block")
    # With f = 1 and no pool_size each part records N = its rows; the merge sums them.
    whole = parts[0] if len(parts) == 1 else _check_scanned_rows(Summary.merge_all(parts))
    _warn_empty_sample(whole)
    return whole


def _pool_rows_read(s: Summary) -> int:
    """The pool rows the scan (or the scans merged) into ``s`` read, from its input records."""
    return sum(r["rows"] for r in s._meta["inputs"] if r["role"] == "pool")


#: The pattern of the empty-sample warning (``warnings.filterwarnings(message=...)``).
EMPTY_SAMPLE_WARNING = r"tailrank\.scan: none of the \d+ pool rows read lies in the hash sample"


def _warn_empty_sample(s: Summary) -> None:
    """Warn, as ``tailrank scan`` does, when none of the pool rows read lies in the hash sample
    (once for a scan made of parts, whose parts may each be empty)."""
    note = _native.scan_rows_note(s._s, _pool_rows_read(s))
    if note:
        warnings.warn(f"tailrank.scan: {note}", stacklevel=3)


def _check_scanned_rows(s: Summary) -> Summary:
    """``s``, the merge of the parts of one scan (an iterator's blocks, Ray's shard groups):
    refused when its N is below the pool rows the parts read together, as ``tailrank scan``
    refuses it for the rows of one pass (each part checked only its own rows). Only the parts
    of one scan are disjoint rows of the pool: a grown summary's records overlap (the base read
    the whole pool file, the increment a subset of it), so ``merge`` cannot check this."""
    rows = _pool_rows_read(s)
    n = s.pool_size
    if n is not None and n < rows:
        raise MismatchError(
            f"pool size N = {n} is smaller than the {rows} pool rows given to the scan"
        )
    return s


# ----------------------------------------------------------------------------------------------
# predict


class Report:
    """A prediction report: the content of ``tailrank predict --json`` (fractions in [0, 1]).

    ``estimate`` is the predicted mAP@k at N; :meth:`to_dict` gives the whole report,
    :meth:`hardness_frame` the level-0 per-positive hardness (one row per positive).
    """

    __slots__ = ("_d", "_h")

    def __init__(self, report: Dict[str, Any], hardness: Dict[str, Any]):
        self._d = report
        self._h = hardness

    def to_dict(self) -> Dict[str, Any]:
        """The full report (a deep copy), as ``tailrank predict --json``."""
        return json.loads(json.dumps(self._d))

    def to_json(self, indent: Optional[int] = 2) -> str:
        return json.dumps(self._d, indent=indent)

    def __getitem__(self, key: str) -> Any:
        return self._d[key]

    @property
    def estimate(self) -> float:
        """Predicted mAP@k at N (fraction): the report's ``map_at_k``."""
        return self._d["map_at_k"]

    def hardness_frame(self) -> Any:
        """Per-positive hardness: columns query_id, positive_id, j, score, core_above (C_j),
        pool_above (K_j), x_hat, branch (count|tail|immune), u, sigma, xi, n_u (NaN / -1 when the
        query has no fitted tail). A pandas DataFrame when pandas is installed, else a dict of
        numpy arrays."""
        cols = {
            "query_id": np.asarray(self._h["query_id"], dtype=object),
            "positive_id": np.asarray(self._h["positive_id"], dtype=object),
            "j": np.asarray(self._h["j"], dtype=np.int64),
            "score": np.asarray(self._h["score"], dtype=np.float32),
            "core_above": np.asarray(self._h["core_above"], dtype=np.uint64),
            "pool_above": np.asarray(self._h["pool_above"], dtype=np.uint64),
            "x_hat": np.asarray(self._h["x_hat"], dtype=np.float64),
            "branch": np.asarray(self._h["branch"], dtype=object),
            "u": np.asarray(self._h["u"], dtype=np.float64),
            "sigma": np.asarray(self._h["sigma"], dtype=np.float64),
            "xi": np.asarray(self._h["xi"], dtype=np.float64),
            "n_u": np.asarray(self._h["n_u"], dtype=np.int64),
        }
        try:
            import pandas as pd  # type: ignore
        except ImportError:
            return cols
        return pd.DataFrame(cols)

    def __repr__(self) -> str:
        try:
            return f"Report(estimate={self.estimate:.6f})"
        except KeyError:
            return "Report(...)"


_D = _native.PREDICT_DEFAULTS  # the library's defaults (PredictOptions::DEFAULT, EvtOptions::DEFAULT)


def predict(
    summary: Union[Summary, PathLike],
    pool_size: Optional[int] = None,
    k: int = _D["k"],
    estimator: str = _D["estimator"],
    map: str = _D["map"],
    bootstrap: int = _D["bootstrap"],
    seed: int = _D["seed"],
    *,
    sample_noise: int = _D["sample_noise"],
    confidence: float = _D["confidence"],
    fit_top: Optional[int] = None,
    quantile: float = _D["quantile"],
    c_min: int = _D["c_min"],
    fit: str = _D["fit"],
    excess_centre: bool = _D["excess_centre"],
    top_m: Optional[int] = None,
    target_width: Optional[float] = None,
) -> Report:
    """Predict mAP@k at pool size N (default: the summary's N) from a summary
    (``tailrank predict --summary``; same options and defaults).

    ``estimator``: ``evt`` (tail-aware: GPD fit above the ``quantile`` of the top-``fit_top``
    sample scores, counts >= ``c_min`` used as they are) or ``count`` (x = K/S). ``map``:
    ``expected-rank`` (r_j = j + C_j + N x_j) or ``binomial``. ``bootstrap`` query-bootstrap
    replicates, ``sample_noise`` Poisson-reweighting replicates, both seeded by ``seed``.
    ``fit``: ``level-selected`` (the default: the fit whose nested levels best predict the known
    sample) or ``fixed`` (the estimate uses ``fit_top``/``quantile``, the paper's fit by
    default); the other one is reported beside it. ``fit_top`` defaults to the library's
    (``_native.PREDICT_DEFAULTS["fit_top"]``), used up to the M the summary keeps; given
    explicitly, it must not exceed that M (as ``tailrank predict --fit-top``).
    ``excess_centre``: move the estimate to the centre of the endpoint test's decayed excess
    (the default; ``False`` is ``predict --no-excess-centre``, the tail model's own estimate).
    ``top_m`` is the former name of ``fit_top`` (deprecated; it warns and overrides it).
    ``target_width`` (points, as ``predict --target-width``): the realized interval's width the
    report's ``next_step`` should reach; its commands name the summary's folder when it was
    read from one.
    """
    if top_m is not None:
        warnings.warn("predict(top_m=...) is deprecated: use fit_top=", DeprecationWarning, 2)
        fit_top = top_m
    if not isinstance(summary, Summary):
        summary = Summary.load(_path(summary, "summary (a tailrank.Summary or a folder)"))
    text, cols = _native.predict_native(
        summary._s,
        pool_size=_count(pool_size, "pool_size", optional=True),
        k=_count(k, "k"),
        estimator=_text(estimator, "estimator"),
        map=_text(map, "map"),
        bootstrap=_count(bootstrap, "bootstrap"),
        sample_noise=_count(sample_noise, "sample_noise"),
        confidence=_real(confidence, "confidence"),
        seed=_count(seed, "seed"),
        fit_top=_count(fit_top, "fit_top", optional=True),
        quantile=_real(quantile, "quantile"),
        c_min=_count(c_min, "c_min"),
        fit=_text(fit, "fit"),
        excess_centre=_flag(excess_centre, "excess_centre"),
        target_width=_target_width(target_width),
        summary_path=None if summary._path is None else _display(summary._path),
    )
    return Report(json.loads(text), dict(cols))


def _target_width(points: Any) -> Optional[float]:
    """``target_width`` in points as the fraction the library takes (``None`` stays None)."""
    w = _real(points, "target_width", optional=True)
    if w is None:
        return None
    if not (math.isfinite(w) and w > 0):
        raise OptionError(f"target_width must be a positive number of points, got {points!r}")
    return w / 100.0


# ----------------------------------------------------------------------------------------------
# evaluate and sampling


def evaluate(
    results: Union[Mapping[str, Mapping[str, float]], PathLike],
    gt: Union[Mapping[str, Sequence[str]], PathLike],
    k: int = _native.EVAL_DEFAULTS["k"],
    *,
    missing_as_zero: bool = False,
    sets: Optional[Sequence[str]] = None,
    metrics: Optional[Sequence[str]] = None,
) -> Dict[str, Any]:
    """Exact mAP@k (ILIAS semantics, ties grouped) of results {query: {db_id: score}} against a
    ground truth; the report of ``tailrank eval --json`` (fractions in [0, 1]): ``sets`` with
    map_at_k, gldv2_map_at_100, map_full, recall_at_k, hit_at_1 and per-query values.

    ``metrics`` names extra metrics of the vocabulary (``"map@100"``, ``"recall@1000"``,
    ``"hit@1"``, ``"ap"``, ``"gldv2-map@100"``; without ``@k`` they use ``k``); their values
    appear under ``values`` per set and per query.

    A query of the ground truth without results is an error unless ``missing_as_zero``.
    """
    sets, metrics = _names(sets, "sets"), _names(metrics, "metrics")
    _dict_gt_sets(gt, sets, "sets")
    g = _gt(gt)
    text = _native.evaluate_native(
        _results_arg(results),
        g,
        k=_count(k, "k"),
        missing_as_zero=_flag(missing_as_zero, "missing_as_zero"),
        sets=sets,
        metrics=metrics,
    )
    return json.loads(text)


def evaluate_revisited(
    results: Union[Mapping[str, Mapping[str, float]], PathLike],
    gt: PathLike,
    protocols: Optional[Sequence[str]] = None,
    *,
    missing_as_zero: bool = False,
) -> Dict[str, Any]:
    """Revisited mAP (junk removed) per protocol of results {query: {db_id: score}} against a
    revisited ground truth JSON {query: {"easy": [...], "hard": [...], "junk": [...]}}
    (revisited Oxford/Paris; protocol ``plain`` for INSTRE); the report of
    ``tailrank eval --protocol ... --json`` (fractions in [0, 1]): ``protocols`` with ``map``
    and per-query AP.

    ``protocols`` defaults to easy, medium and hard (``_native.REVISITED_PROTOCOLS``). A query
    of the ground truth without results is an error unless ``missing_as_zero``.
    """
    names = _native.REVISITED_PROTOCOLS if protocols is None else _names(protocols, "protocols")
    text = _native.evaluate_revisited_native(
        _results_arg(results),
        _path(gt, "gt (the path of a revisited ground truth JSON)"),
        list(names),
        missing_as_zero=_flag(missing_as_zero, "missing_as_zero"),
    )
    return json.loads(text)


def _results_arg(results: Union[Mapping[str, Mapping[str, float]], PathLike]) -> Any:
    """Results as the native layer takes them: a path, or [(query, [(db_id, score)])]."""
    if _is_path(results):
        return _fspath(results, "results")
    if not isinstance(results, Mapping):
        raise InputError(
            f"results: expected a path or a dict {{query: {{db_id: score}}}}, got "
            f"{type(results).__name__}"
        )
    out = []
    for q, items in results.items():
        qid = _id(q, "<results dict>")
        if not isinstance(items, Mapping):
            raise InputError(
                f"<results dict>: query {qid!r}: expected a dict {{db_id: score}}, got "
                f"{type(items).__name__}"
            )
        label = f"<results dict>: query {qid!r}"
        pairs = []
        for d, sc in items.items():
            did = _id(d, label)
            pairs.append((did, _score(sc, qid, did)))
        out.append((qid, pairs))
    return out


def _score(s: Any, query: Any, db_id: Any) -> float:
    """A results score: an ``int`` or ``float`` (numpy ones too), checked, not coerced: a bool,
    a string or any other object is refused naming the query and the item, as the CLI refuses
    them in a results JSON."""
    if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, float, np.integer, np.floating)):
        raise InputError(
            f"<results dict>: query {str(query)!r}: db id {str(db_id)!r}: score {s!r} "
            f"({type(s).__name__}) is not a number"
        )
    try:
        return float(s)
    except OverflowError:
        raise InputError(
            f"<results dict>: query {str(query)!r}: db id {str(db_id)!r}: score {s} is too "
            "large for a float"
        ) from None


def id_hashes(ids: Iterable[str], seed: int = _native.SCAN_DEFAULTS["seed"]) -> np.ndarray:
    """``xxh3_64_with_seed(utf8(id), seed)`` per id (uint64), as ``xxhash.xxh3_64_intdigest``."""
    return np.asarray(_native.id_hashes(_ids_list(ids, "ids"), _count(seed, "seed")), dtype=np.uint64)


def sample_mask(
    ids: Iterable[str], fraction: float, seed: int = _native.SCAN_DEFAULTS["seed"],
    after: Optional[float] = None,
) -> np.ndarray:
    """Boolean mask of the ids in the hash sample at ``fraction`` (docs/method.md §4), or, with
    ``after``, in its increment over the sample at ``after``: ``t(after) <= hash < t(fraction)``."""
    lo, hi = _native.sample_range(_real(fraction, "fraction"), _real(after, "after", optional=True))
    h = id_hashes(ids, seed)
    above = h >= np.uint64(lo)
    if hi == 2**64 - 1:  # f = 1 (or rounds to it): the top end is kept, as HashRange::contains
        return above
    return above & (h < np.uint64(hi))


def sample_ids(
    ids: Iterable[str], fraction: float, seed: int = _native.SCAN_DEFAULTS["seed"],
    after: Optional[float] = None,
) -> List[str]:
    """The sampled ids in input order: what ``tailrank sample`` writes (docs/method.md §4);
    with ``after``, the increment over the sample at ``after`` (``tailrank sample --after``).
    A pool id names one item, so a repeated id is refused, as ``tailrank sample`` refuses it."""
    lst = _ids_list(ids, "ids")
    dup = _native.find_duplicate_id(lst)
    if dup is not None:
        j, i = dup
        raise InputError(f"ids: duplicate id {lst[i]!r} at positions {j} and {i}")
    mask = sample_mask(lst, fraction, seed, after)
    return [i for i, m in zip(lst, mask) if m]
