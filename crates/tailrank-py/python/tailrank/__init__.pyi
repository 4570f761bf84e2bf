"""Type stubs of the `tailrank` package (see __init__.py for the documentation)."""

import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

PathLike = Union[str, os.PathLike[str]]
Descriptors = Union[PathLike, Tuple[PathLike, Optional[PathLike]], Tuple[Sequence[str], npt.ArrayLike]]
Pool = Union[Descriptors, Sequence[Descriptors], Iterable[Tuple[Sequence[str], npt.ArrayLike]]]
GroundTruth = Union[PathLike, Mapping[str, Sequence[str]]]

__version__: str
ITER_CHUNK_ROWS: int
EMPTY_SAMPLE_WARNING: str

class TailrankError(ValueError): ...
class OptionError(TailrankError):
    exit_code: int
class InputError(TailrankError):
    exit_code: int
class MismatchError(TailrankError):
    exit_code: int
class UnsupportedError(TailrankError):
    exit_code: int
class OutputError(TailrankError):
    exit_code: int
class TailrankIOError(TailrankError, OSError):
    exit_code: int
class InternalError(TailrankError):
    exit_code: int

class Summary:
    @staticmethod
    def load(path: PathLike) -> Summary: ...
    def save(self, path: PathLike) -> None: ...
    def merge(self, *others: Summary) -> Summary: ...
    def grow(self, part: Summary) -> Summary: ...
    @staticmethod
    def merge_all(parts: Sequence[Summary]) -> Summary: ...
    def to_files(self) -> Dict[str, bytes]: ...
    def __eq__(self, other: object) -> bool: ...
    @property
    def meta(self) -> Dict[str, Any]: ...
    @property
    def model(self) -> str: ...
    @property
    def query_set(self) -> str: ...
    @property
    def pool_size(self) -> Optional[int]: ...
    @property
    def fraction(self) -> float: ...
    @property
    def seed(self) -> int: ...
    @property
    def top_m(self) -> int: ...
    @property
    def core_size(self) -> int: ...
    @property
    def subsets(self) -> List[Dict[str, Any]]: ...
    @property
    def subset_sizes(self) -> npt.NDArray[np.uint64]: ...
    @property
    def inputs(self) -> List[Dict[str, Any]]: ...
    @property
    def is_exact(self) -> bool: ...
    @property
    def n_queries(self) -> int: ...
    @property
    def query_ids(self) -> List[str]: ...
    def query(self, i: int) -> Dict[str, Any]: ...

class Report:
    def to_dict(self) -> Dict[str, Any]: ...
    def to_json(self, indent: Optional[int] = ...) -> str: ...
    def __getitem__(self, key: str) -> Any: ...
    @property
    def estimate(self) -> float: ...
    def hardness_frame(self) -> Any: ...

def load_summary(path: PathLike) -> Summary: ...
def grow(base: Summary, part: Summary) -> Summary: ...
def scan(
    queries: Descriptors,
    core: Descriptors,
    pool: Pool,
    gt: GroundTruth,
    fraction: Optional[float] = ...,
    seed: int = ...,
    pool_size: Optional[int] = ...,
    top_m: int = ...,
    model: str = ...,
    threads: Optional[int] = ...,
    *,
    after: Optional[float] = ...,
    query_set: Optional[str] = ...,
    min_fraction: Optional[float] = ...,
    drift_shards: int = ...,
    normalize: bool = ...,
    chunk_rows: int = ...,
) -> Summary: ...
def predict(
    summary: Union[Summary, PathLike],
    pool_size: Optional[int] = ...,
    k: int = ...,
    estimator: str = ...,
    map: str = ...,
    bootstrap: int = ...,
    seed: int = ...,
    *,
    sample_noise: int = ...,
    confidence: float = ...,
    fit_top: Optional[int] = ...,
    quantile: float = ...,
    c_min: int = ...,
    fit: str = ...,
    excess_centre: bool = ...,
    top_m: Optional[int] = ...,
    target_width: Optional[float] = ...,
) -> Report: ...
def evaluate(
    results: Union[Mapping[str, Mapping[str, float]], PathLike],
    gt: GroundTruth,
    k: int = ...,
    *,
    missing_as_zero: bool = ...,
    sets: Optional[Sequence[str]] = ...,
    metrics: Optional[Sequence[str]] = ...,
) -> Dict[str, Any]: ...
def evaluate_revisited(
    results: Union[Mapping[str, Mapping[str, float]], PathLike],
    gt: PathLike,
    protocols: Optional[Sequence[str]] = ...,
    *,
    missing_as_zero: bool = ...,
) -> Dict[str, Any]: ...
def id_hashes(ids: Iterable[str], seed: int = ...) -> npt.NDArray[np.uint64]: ...
def sample_mask(
    ids: Iterable[str], fraction: float, seed: int = ..., after: Optional[float] = ...
) -> npt.NDArray[np.bool_]: ...
def sample_ids(
    ids: Iterable[str], fraction: float, seed: int = ..., after: Optional[float] = ...
) -> List[str]: ...
