"""Ctrl-C during a scan: the scan stops at its next block and the signal handler's exception
(KeyboardInterrupt) is raised from `tailrank.scan`, instead of after the whole pool."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import tailrank

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGINT"), reason="needs SIGINT")


def unit_rows(rng, n, d=64):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def big_scan():
    """A scan of 800,000 pool rows at f = 1 (about a second on two cores): its arguments,
    the seconds it takes to its end and its summary."""
    rng = np.random.default_rng(5)
    nq = 200
    qids = [f"q{i}" for i in range(nq)]
    cids = [f"c{i}" for i in range(nq)]
    n = 800_000
    args = (
        (qids, unit_rows(rng, nq)),
        (cids, unit_rows(rng, nq)),
        ([f"p{i}" for i in range(n)], unit_rows(rng, n)),
        {q: [c] for q, c in zip(qids, cids)},
    )
    started = time.perf_counter()
    whole = tailrank.scan(*args, fraction=1.0)
    return args, time.perf_counter() - started, whole


class Stop(Exception):
    pass


def signal_soon(delay=0.05):
    threading.Timer(delay, lambda: os.kill(os.getpid(), signal.SIGINT)).start()


def interrupted_seconds(args, expected):
    """Seconds until `scan(*args)` raises `expected` with SIGINT sent 50 ms after its start."""
    signal_soon()
    started = time.perf_counter()
    with pytest.raises(expected):
        tailrank.scan(*args, fraction=1.0)
    return time.perf_counter() - started


def test_ctrl_c_stops_a_scan_early(big_scan):
    args, full, whole = big_scan
    stopped = interrupted_seconds(args, KeyboardInterrupt)
    # Relative to the same scan run to its end, so that the machine's speed cancels (without
    # the cancellation the exception comes only once the whole pool is scanned).
    assert stopped < 0.5 * full, (stopped, full)
    # Nothing of the cancelled scan stays behind: the next scan is the same as the first.
    assert tailrank.scan(*args, fraction=1.0) == whole


def test_the_handlers_own_exception_is_raised_early(big_scan):
    args, full, _ = big_scan

    def handler(signum, frame):
        raise Stop("stop the scan")

    old = signal.signal(signal.SIGINT, handler)
    try:
        stopped = interrupted_seconds(args, Stop)
    finally:
        signal.signal(signal.SIGINT, old)
    assert stopped < 0.5 * full, (stopped, full)
