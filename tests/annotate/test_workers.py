"""``parakit annotate serve --workers N``: the workers share sessions and the login throttle
(both live in the store); a killed worker is replaced and nothing acknowledged is lost."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

import pytest

httpx = pytest.importorskip("httpx")

from .conftest import PG_URL  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_up(base: str, timeout: float = 300.0) -> None:
    # a readiness guard: a loaded machine (nice 19 beside a training run) took 81 s
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.3)
    raise AssertionError(f"the server at {base} did not come up in {timeout} s")


def _pids(base: str, tries: int = 200) -> set[int]:
    seen: set[int] = set()
    for _ in range(tries):
        with httpx.Client() as fresh:  # a new connection each time
            seen.add(fresh.get(f"{base}/healthz").json()["worker"])
        if len(seen) > 1:
            break
    return seen


def test_several_workers_on_sqlite_are_refused(tmp_path, capsys):
    """Issue 30.3: SQLite's writers queue fairly only inside one process; several workers
    left annotators waiting 12-15 s for a save during an import. Refused, pointing to
    PostgreSQL; one worker serves."""
    from parakit.annotate.db import check_workers
    from parakit.cli.app import main

    db = tmp_path / "team.sqlite"
    assert main(["annotate", "init", str(db)]) == 0
    assert main(["annotate", "serve", str(db), "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert "E663" in err and "PostgreSQL" in err and "--workers 1" in err
    check_workers(db, 1)
    check_workers("postgresql://annot@db.example.org/paraphrase", 4)


@pytest.fixture(params=[pytest.param("postgres", marks=pytest.mark.postgres)])
def store_target(request, tmp_path):
    base = request.getfixturevalue("pg_url")
    schema = f"{base}_{uuid.uuid4().hex[:8]}"[:60]
    from sqlalchemy import create_engine, text

    engine = create_engine(PG_URL)
    with engine.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    engine.dispose()
    return f"{PG_URL}?options=-csearch_path%3D{schema}"


def test_two_workers_share_the_throttle_and_survive_a_kill(store_target, tmp_path):
    from parakit.annotate.store import Store
    from parakit.schema import Pair, PairSet

    st = Store.open(store_target, cheap_hashing=True)
    st.accounts.add_annotator("ann1", "password-one")
    uid = st.accounts.annotator_id("ann1")
    pid = st.projects.create_project("p", "binary")
    st.projects.add_member(pid, uid)
    st.projects.import_pairs(
        pid, PairSet([Pair(f"i{n}", f"a {n}", f"b {n}") for n in range(40)], scheme="binary")
    )
    st.queue.assign(pid, mode="single")
    st.close()
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "parakit", "annotate", "serve", store_target, "--port", str(port),
         "--workers", "2", "--login-attempts", "5"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        _wait_up(base)
        workers = _pids(base)
        assert len(workers) == 2, workers  # both answer
        # 20 concurrent wrong passwords for one account, spread over the workers
        codes: list[int] = []
        barrier = threading.Barrier(20)

        def guess(n: int) -> None:
            with httpx.Client() as c:
                barrier.wait()
                r = c.post(f"{base}/login", data={"name": "ann1", "password": f"wrong-{n}"})
                codes.append(r.status_code)

        threads = [threading.Thread(target=guess, args=(n,)) for n in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # failures are counted after each check, and each worker checks one name + address
        # at a time: at most the limit (5) plus one guess per other worker are checked
        assert codes.count(429) >= 14 and codes.count(401) <= 5 + 1, sorted(codes)
        # a session made by one worker is honoured by the other (sessions live in the store)
        st = Store.open(store_target, migrate=False, cheap_hashing=True)
        from datetime import timedelta

        token = st.accounts.start_session(uid, timedelta(hours=1))
        acknowledged = []
        with httpx.Client(cookies={"parakit_session": token}, headers={"X-Parakit": "1"}) as c:
            for _ in range(3):
                assert c.get(f"{base}/").status_code == 200
            # annotate, kill -9 one worker, annotate on: every acknowledged save is stored
            for n in range(12):
                if n == 6:
                    os.kill(sorted(workers)[0], signal.SIGKILL)
                for _attempt in range(20):
                    try:
                        nxt = c.get(f"{base}/api/projects/{pid}/next")
                        if nxt.status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    time.sleep(0.2)
                item = nxt.json()["item"]
                saved = c.post(
                    f"{base}/api/items/{item}/save",
                    json={"label": "1", "revision": nxt.json()["revision"], "submit": True},
                )
                if saved.status_code == 200:
                    acknowledged.append(item)
        assert len(acknowledged) >= 10
        submitted = {a.item_id for a in st.queue.submitted(pid)}
        assert set(acknowledged) <= submitted
        st.close()
        # the killed worker was replaced: two workers answer again
        time.sleep(1)
        assert len(_pids(base)) == 2
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(20)
