"""Crash safety (SIGKILL mid-burst) and a tiny concurrent-load run against a real server."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time

import pytest

pytest.importorskip("httpx", reason="httpx drives the simulated annotators")

from parakit.annotate.loadtest import (
    LoadResult,
    check_store,
    prepare_store,
    run_load,
    serve_process,
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_concurrent_annotators_lose_and_duplicate_nothing(tmp_path):
    db = tmp_path / "load.sqlite"
    pid = prepare_store(db, n_annotators=6, n_items=300)
    with serve_process(db, free_port()) as url:
        result = run_load(url, pid, n_annotators=6, duration=4.0)
    assert result.errors == {}
    assert len(result.acknowledged) > 10
    check = check_store(db, pid, result.acknowledged)
    assert check == {
        "acknowledged": len(result.acknowledged),
        "stored": len(result.acknowledged),
        "missing": 0,
        "duplicated": 0,
    }
    rows = {row["request"]: row for row in result.table()}
    assert rows["submit"]["count"] == len(result.acknowledged)


def test_sigkill_mid_burst_keeps_every_acknowledged_annotation(tmp_path):
    db = tmp_path / "crash.sqlite"
    pid = prepare_store(db, n_annotators=8, n_items=3000)
    result = LoadResult()
    with serve_process(db, free_port()) as url:
        process = serve_process.last
        worker = threading.Thread(
            target=run_load,
            args=(url, pid),
            kwargs={"n_annotators": 8, "duration": 60.0, "exit_on_error": True, "result": result},
        )
        worker.start()
        deadline = time.monotonic() + 60
        while len(result.acknowledged) < 40 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)  # in the middle of the burst
        process.wait()
        worker.join(60)
    assert process.returncode == -signal.SIGKILL
    acknowledged = list(result.acknowledged)
    assert len(acknowledged) >= 40
    assert result.errors.get("transport", 0) >= 1  # requests were in flight when it died
    # restart on the same store: every acknowledged annotation is there, nothing doubled
    with serve_process(db, free_port()) as url:
        check = check_store(db, pid, acknowledged)
        assert check["missing"] == 0 and check["duplicated"] == 0
        # at most the in-flight requests (committed, reply lost) exceed the acknowledged ones
        assert 0 <= check["stored"] - check["acknowledged"] <= 8
        again = run_load(url, pid, n_annotators=2, duration=60.0, max_items=3)
        assert again.errors == {} and len(again.acknowledged) == 6
