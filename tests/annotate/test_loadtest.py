"""Crash safety (SIGKILL mid-burst) and a tiny concurrent-load run against a real server."""

from __future__ import annotations

import socket
import sys
import uuid
from pathlib import Path

import pytest

pytest.importorskip("httpx", reason="httpx drives the simulated annotators")

import contextlib

# the simulated annotators live with the benchmarks that drive them
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from loadtest import (
    check_store,
    crash_run,
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
        "corrupted": 0,
        "duplicated": 0,
    }
    rows = {row["request"]: row for row in result.table()}
    assert rows["submit"]["count"] == len(result.acknowledged)


def _crash_check(target, pid, port, kills, per_round):
    result, marks = crash_run(target, pid, port, kills=kills, n_annotators=20, per_round=per_round)
    assert len(marks) == kills and marks == sorted(marks)
    assert result.errors.get("transport", 0) >= kills  # requests were in flight at each kill
    acknowledged = list(result.acknowledged)
    assert len(acknowledged) >= kills * per_round
    check = check_store(target, pid, acknowledged)
    assert check["missing"] == 0 and check["corrupted"] == 0 and check["duplicated"] == 0
    # at most the requests in flight at each kill (committed, reply lost) are stored unacked
    assert 0 <= check["stored"] - check["acknowledged"] <= 20 * kills
    return check


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def crash_target(request, tmp_path):
    if request.param == "sqlite":
        yield tmp_path / "crash.sqlite"
        return
    from .conftest import _pg_store

    base = request.getfixturevalue("pg_url")
    st, schema = _pg_store(base, f"crash_{uuid.uuid4().hex[:6]}")
    url = st.engine.url.render_as_string(hide_password=False)
    st.close()
    yield url
    from sqlalchemy import create_engine, text

    from .conftest import PG_URL

    engine = create_engine(PG_URL)
    with engine.begin() as conn:
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    engine.dispose()


def test_repeated_sigkill_under_20_annotators_loses_nothing(crash_target):
    pid = prepare_store(crash_target, n_annotators=20, n_items=600, scheme="turku")
    check = _crash_check(crash_target, pid, free_port(), kills=3, per_round=50)
    assert check["acknowledged"] >= 150


@pytest.mark.slow
def test_ten_sigkills_under_20_annotators_lose_nothing(crash_target):
    pid = prepare_store(crash_target, n_annotators=20, n_items=4000, scheme="turku")
    _crash_check(crash_target, pid, free_port(), kills=10, per_round=150)


def test_sigkill_during_a_large_import_leaves_all_or_nothing(tmp_path):
    """Issue 14, item 8: kill -9 while a 30,000-pair upload is being imported (when the
    import transaction has spilled 1 MB into the WAL); the project is then either complete
    or absent (absent here: the transaction had not committed), and the same name imports
    afterwards."""
    import json
    import os
    import signal
    import threading
    import time

    import httpx

    from parakit.annotate.store import Store

    db = tmp_path / "upload.sqlite"
    st = Store.open(db, cheap_hashing=True)
    st.accounts.add_annotator("admin", "admin-password", role="admin")
    st.close()
    n = 30000
    lines = [json.dumps({"parakit": 1, "scheme": {"name": "binary"}})]
    lines += [
        json.dumps({"id": f"p{i}", "text1": f"sentence {i} one", "text2": f"sentence {i} two"})
        for i in range(n)
    ]
    body = ("\n".join(lines) + "\n").encode()
    outcomes = []
    wal = tmp_path / "upload.sqlite-wal"
    for delay in ("wal",):
        with serve_process(db, free_port()) as url:
            process = serve_process.last
            client = httpx.Client(base_url=url, timeout=120)
            client.post("/login", data={"name": "admin", "password": "admin-password"})

            def upload(client=client):
                with contextlib.suppress(httpx.HTTPError):
                    client.post(
                        "/api/admin/projects",
                        headers={"X-Parakit": "1"},
                        data={"name": "big", "scheme": "binary"},
                        files={"file": ("big.jsonl", body, "application/json")},
                    )

            worker = threading.Thread(target=upload)
            before = wal.stat().st_size if wal.exists() else 0
            worker.start()
            if delay == "wal":  # mid-transaction: the insert has spilled 1 MB into the WAL
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and (
                    (wal.stat().st_size if wal.exists() else 0) < before + (1 << 20)
                ):
                    time.sleep(0.005)
            else:
                time.sleep(delay)
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            worker.join(60)
            client.close()
        st = Store.open(db)
        names = [row["name"] for row in st.projects.overview()]
        items = sum(row["items"] for row in st.projects.overview())
        outcomes.append(items)
        assert (names, items) in ((["big"], n), ([], 0))
        if names:
            st.projects.delete_project(st.projects.project_id("big"))
        st.close()
    from parakit import io as pio

    (tmp_path / "big.jsonl").write_bytes(body)
    st = Store.open(db)
    _pid, count = st.projects.create_with_pairs("big", "binary", pio.read(tmp_path / "big.jsonl"))
    assert count == n and outcomes[0] in (0, n)
    st.close()


@pytest.mark.postgres
def test_the_benchmark_kills_a_worker_that_answers_healthz(pg_url):
    """``annotate_load.py --kill-worker-after`` must kill a server worker, not the first child
    of the server (the multiprocessing resource tracker, which answers nothing): the victim
    answered ``/healthz`` before, answers no more after, and uvicorn replaces it. (Several
    workers serve PostgreSQL stores only.)"""
    import time

    import annotate_load
    from sqlalchemy import create_engine, text

    from .conftest import PG_URL

    schema = f"{pg_url}_{uuid.uuid4().hex[:8]}"[:60]
    engine = create_engine(PG_URL)
    with engine.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    engine.dispose()
    db = f"{PG_URL}?options=-csearch_path%3D{schema}"
    prepare_store(db, n_annotators=2, n_items=10)
    with serve_process(db, free_port(), extra_args=("--workers", "2")) as url:
        server = serve_process.last.pid
        before = annotate_load.answering_workers(url, want=2)
        assert len(before) == 2
        victim = annotate_load.kill_one_worker(server, url, workers=2)
        assert victim in before and annotate_load.killed[-1] == victim
        deadline = time.monotonic() + 120  # a deadline to wait for, not a timing asserted
        while time.monotonic() < deadline:
            now = annotate_load.answering_workers(url, want=2, tries=50)
            if len(now) == 2 and victim not in now:
                break
            time.sleep(0.5)
        assert victim not in now and len(now) == 2, (victim, now)
    engine = create_engine(PG_URL)
    with engine.begin() as conn:
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    engine.dispose()
