from typing import Any, Optional, Sequence, Union

from . import Descriptors, GroundTruth, PathLike, Summary

THREADS_PER_TASK: int
MERGE_FANIN: int

def scan(
    shard_paths: Union[PathLike, Sequence[Any]],
    queries: Descriptors,
    core: Descriptors,
    gt: GroundTruth,
    fraction: Optional[float] = ...,
    seed: int = ...,
    pool_size: Optional[int] = ...,
    top_m: int = ...,
    model: str = ...,
    *,
    query_set: Optional[str] = ...,
    after: Optional[float] = ...,
    min_fraction: Optional[float] = ...,
    drift_shards: int = ...,
    normalize: bool = ...,
    shards_per_task: Optional[int] = ...,
    threads_per_task: int = ...,
    merge_fanin: int = ...,
    max_retries: int = ...,
    address: Optional[str] = ...,
) -> Summary: ...
def default_shards_per_task(n_shards: int, cpus: float, threads_per_task: int = ...) -> int: ...
def main(argv: Optional[Sequence[str]] = ...) -> int: ...
