"""The Dask cluster the scale-out tests run on: two one-thread worker processes on this machine."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest


@contextlib.contextmanager
def _two_workers() -> Iterator[Any]:
    from parakit.mine.distributed import cluster_client

    with cluster_client(workers=2) as client:
        yield client


@pytest.fixture(scope="session")
def two_workers() -> Callable[[], contextlib.AbstractContextManager[Any]]:
    """``with two_workers() as client:``, a client of a new LocalCluster of two worker
    processes, closed at the end of the block: a test that kills a worker gets its own
    cluster. Skips the test when ``distributed`` is not installed."""
    pytest.importorskip("distributed")
    return _two_workers


@pytest.fixture
def dask_client(two_workers) -> Iterator[Any]:
    """A two-worker cluster's client for the whole test, closed after it (not kept for the
    module: its idle workers would share the CPU with the next test's cluster)."""
    with two_workers() as client:
        yield client
