"""Large imports are staged in chunks (annotators keep working) and published at once; a
failure, or a kill -9, leaves the store exactly as before."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from sqlalchemy import select

from parakit.annotate.models import Base, ProjectImport
from parakit.annotate.services import projects as projects_mod
from parakit.annotate.store import Store, User, utcnow
from parakit.schema import Document, Pair, PairSet, Span


def every_row(store: Store) -> dict[str, list[tuple]]:
    with store.transaction() as session:
        return {
            t.name: [tuple(r) for r in session.execute(select(t).order_by(*t.primary_key))]
            for t in Base.metadata.sorted_tables
        }


def big_set(n: int) -> PairSet:
    docs = [Document(f"d{k}", f"Document {k}. It has two sentences.") for k in range(n // 10)]
    pairs = [
        Pair(
            f"p{k}",
            f"Document {k // 10}.",
            f"Statement {k}",
            span1=Span(f"d{k // 10}", 0, len(f"Document {k // 10}.")),
        )
        for k in range(n)
    ]
    return PairSet(pairs, scheme="binary", documents=docs)


def in_progress_import(project_id: int) -> ProjectImport:
    """The row of an import in progress (its process elsewhere, holding its lock)."""
    now = utcnow()
    return ProjectImport(
        project_id=project_id,
        status="in_progress",
        total=10,
        imported=0,
        started_at=now,
        heartbeat_at=now,
    )


def test_a_staged_import_equals_a_one_transaction_import(store, monkeypatch):
    admin = User(
        store.accounts.add_annotator("boss", "boss-password", role="admin"), "boss", "admin"
    )
    pairs = big_set(500)
    small_id, _ = store.projects.create_with_pairs("one", "binary", pairs)
    chunks = []
    real_add = store.projects._add_pairs

    def add(session, project_id, chunk, documents):
        # while staged, the project is hidden from every project list, admins' included (seen
        # from another thread, as a web request would: this one is inside a write)
        seen = []
        reader = threading.Thread(
            target=lambda: seen.extend(p.name for p in store.projects.projects_for(admin))
        )
        reader.start()
        reader.join()
        assert "one" in seen and "staged" not in seen
        chunks.append(len(chunk))
        return real_add(session, project_id, chunk, documents)

    monkeypatch.setattr(projects_mod, "IMPORT_CHUNK", 120)
    monkeypatch.setattr(store.projects, "_add_pairs", add)
    staged_id, count = store.projects.create_with_pairs("staged", "binary", pairs)
    assert count == 500 and chunks == [120, 120, 120, 120, 20]
    assert "staged" in {p.name for p in store.projects.projects_for(admin)}
    assert "importing" not in store.project(staged_id).settings
    from parakit.annotate.models import DocumentRow, Item

    def items(pid):
        """Every column of the project's items but ids and times, documents by key + text."""
        with store.transaction() as session:
            docs = {d.id: (d.key, d.text) for d in session.scalars(select(DocumentRow))}
            skip = {"id", "project_id", "created_at", "doc1_id", "doc2_id"}
            return [
                (
                    {
                        c.name: getattr(i, c.name)
                        for c in Item.__table__.columns
                        if c.name not in skip
                    },
                    docs.get(i.doc1_id),
                    docs.get(i.doc2_id),
                )
                for i in session.scalars(
                    select(Item).where(Item.project_id == pid).order_by(Item.id)
                )
            ]

    assert len(items(staged_id)) == 500 and items(staged_id) == items(small_id)


def test_a_failing_staged_import_leaves_nothing(store, monkeypatch):
    monkeypatch.setattr(projects_mod, "IMPORT_CHUNK", 100)
    before = every_row(store)
    real_add, calls = store.projects._add_pairs, []

    def failing(session, project_id, chunk, documents):
        calls.append(1)
        if len(calls) == 3:  # the database refuses the third chunk
            raise OSError("disk full")
        return real_add(session, project_id, chunk, documents)

    monkeypatch.setattr(store.projects, "_add_pairs", failing)
    with pytest.raises(OSError, match="disk full"):
        store.projects.create_with_pairs("dup", "binary", big_set(400))
    assert every_row(store) == before
    monkeypatch.setattr(store.projects, "_add_pairs", real_add)
    store.projects.create_with_pairs("dup", "binary", big_set(400))  # the name is free again


def test_annotators_work_while_a_large_import_is_staged(store, monkeypatch):
    """Between chunks the write lock is free: a submit does not wait for the whole import."""
    uid = store.accounts.add_annotator("ann", "ann-password")
    pid, _ = store.projects.create_with_pairs("work", "binary", big_set(20))
    store.projects.add_member(pid, uid)
    store.queue.assign(pid, mode="single")
    monkeypatch.setattr(projects_mod, "IMPORT_CHUNK", 50)
    real_add = store.projects._add_pairs
    started, done = threading.Event(), threading.Event()

    def slow_add(session, project_id, chunk, documents):
        started.set()
        # a slow chunk: 40 of them make a 12 s import, room for 5 saves even when SQLite's
        # busy handler (sleeps of up to 100 ms) lets a waiting save miss a few chunk boundaries
        time.sleep(0.3)
        return real_add(session, project_id, chunk, documents)

    monkeypatch.setattr(store.projects, "_add_pairs", slow_add)
    importer = threading.Thread(
        target=lambda: (
            store.projects.create_with_pairs("big", "binary", big_set(2000)),
            done.set(),
        )
    )
    importer.start()
    started.wait(10)
    saves = []
    for _ in range(5):
        a = store.queue.lease_next(pid, uid)
        store.queue.save(a.item_id, uid, label="1", revision=0, submit=True)
        saves.append(done.is_set())
    importer.join(30)
    assert done.is_set() and saves.count(False) >= 4  # submitted while the import ran


def test_a_killed_import_leaves_the_store_as_before(tmp_path):
    path = tmp_path / "kill.sqlite"
    st = Store.open(path, cheap_hashing=True)
    st.accounts.add_annotator("ann", "ann-password")
    st.projects.create_with_pairs("keep", "binary", big_set(30))
    before = every_row(st)
    st.close()
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(os.path.dirname(__file__))!r})
        from test_staged_import import big_set
        from parakit.annotate.services import projects
        from parakit.annotate.store import Store
        projects.IMPORT_CHUNK = 100
        st = Store.open({str(path)!r})
        real = st.projects._add_pairs
        def slow(*a):
            time.sleep(0.2)
            return real(*a)
        st.projects._add_pairs = slow
        st.projects.create_with_pairs("huge", "binary", big_set(20000))
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        st = Store.open(path, migrate=False)
        for _ in range(300):  # wait until chunks are in
            time.sleep(0.1)
            rows = every_row(st)
            if len(rows["items"]) > len(before["items"]) + 150:
                break
        else:
            raise AssertionError("the import never started")
        staged = [r for r in rows["projects"] if r[1] == "huge"]
        job = [r for r in rows["imports"] if staged and r[1] == staged[0][0]]
        assert job and "in_progress" in str(job[0])  # hidden, unpublished
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        st.close()
    finally:
        if proc.poll() is None:
            proc.kill()
    reopened = Store.open(path)  # what a restarted server does
    assert every_row(reopened) == before
    reopened.projects.create_with_pairs("huge", "binary", big_set(30))  # the name is free
    reopened.close()


def test_a_name_held_by_an_import_in_progress_says_so(store):
    """The staged project is hidden from the admin, so "already exists" would name a project
    nobody can see: the refusal says an import of that name is in progress."""
    from parakit.errors import Conflict

    pid = store.projects.create_project("news", "turku")
    store.write(lambda s: s.add(in_progress_import(pid)))
    admin = User(0, "boss", "admin")
    assert [p.name for p in store.projects.projects_for(admin)] == []
    with pytest.raises(Conflict, match="E603.*'news' is being imported .*wait for it"):
        store.projects.create_project("news", "turku")
    with pytest.raises(Conflict, match="E603.*'news' is being imported"):
        store.projects.create_with_pairs("news", "binary", big_set(20))
    store.projects.create_project("other", "turku")
    with pytest.raises(Conflict, match="E603.*'other' already exists"):
        store.projects.create_project("other", "turku")


def test_an_import_is_a_row_from_start_to_completion(store, monkeypatch):
    """One code path for every size: a small import is one chunk (one transaction); each
    chunk counts its pairs and beats the heartbeat; the last completes the import."""
    small_id, _ = store.projects.create_with_pairs("small", "binary", big_set(20))
    small = store.projects.import_of(small_id)
    assert small["status"] == "completed" and small["total"] == small["imported"] == 20
    assert small["finished_at"] is not None and small["error"] is None
    monkeypatch.setattr(projects_mod, "IMPORT_CHUNK", 100)
    real_add, seen = store.projects._add_pairs, []

    def add(session, project_id, chunk, documents):
        # seen from another thread (this one is inside the chunk's write)
        reader = threading.Thread(target=lambda: seen.append(store.projects.import_of(project_id)))
        reader.start()
        reader.join()
        return real_add(session, project_id, chunk, documents)

    monkeypatch.setattr(store.projects, "_add_pairs", add)
    pid, _ = store.projects.create_with_pairs("large", "binary", big_set(300))
    # the first chunk creates project and row in one transaction: nothing to see before it
    assert seen[0] is None
    assert [(s["status"], s["imported"], s["total"]) for s in seen[1:]] == [
        ("in_progress", 100, 300),
        ("in_progress", 200, 300),
    ]
    assert seen[2]["heartbeat_at"] >= seen[1]["heartbeat_at"] >= seen[1]["started_at"]
    done = store.projects.import_of(pid)
    assert done["status"] == "completed" and done["imported"] == 300
    assert not store.projects.importing(pid)


def test_a_failed_import_records_its_error_then_leaves_nothing(store, monkeypatch):
    monkeypatch.setattr(projects_mod, "IMPORT_CHUNK", 100)
    real_add, calls = store.projects._add_pairs, []

    def failing(session, project_id, chunk, documents):
        calls.append(project_id)
        if len(calls) == 2:
            raise OSError("disk full")
        return real_add(session, project_id, chunk, documents)

    real_delete, at_failure = store.projects.delete_project, []

    def delete(project_id):
        at_failure.append(store.projects.import_of(project_id))
        real_delete(project_id)

    monkeypatch.setattr(store.projects, "_add_pairs", failing)
    monkeypatch.setattr(store.projects, "delete_project", delete)
    with pytest.raises(OSError, match="disk full"):
        store.projects.create_with_pairs("broken", "binary", big_set(300))
    (job,) = at_failure  # marked failed, with the error, before its project is deleted
    assert job["status"] == "failed" and job["error"] == "OSError: disk full"
    assert job["imported"] == 100 and job["finished_at"] is not None
    assert store.projects.import_of(calls[0]) is None  # deleted with the project
    assert store.projects.projects_for(User(0, "boss", "admin")) == []


def test_an_unfinished_import_is_discarded_only_when_its_lock_is_free(store):
    alive = store.projects.create_project("alive", "turku")
    dead = store.projects.create_project("dead", "turku")
    kept = store.projects.create_project("kept", "turku")
    for pid, lock in ((alive, "import-alive"), (dead, "import-dead")):
        job = in_progress_import(pid)
        job.lock = lock
        store.write(lambda s, job=job: s.add(job))
    admin = User(0, "boss", "admin")
    assert [p.name for p in store.projects.projects_for(admin)] == ["kept"]
    with store.hold("import-alive"):  # the importing process, still running
        assert store.held("import-alive") and not store.held("import-dead")
        assert store.projects.discard_abandoned_imports() == ["dead"]
    assert store.projects.importing(alive) and not store.projects.importing(kept)
    assert store.projects.discard_abandoned_imports() == ["alive"]  # its process ended
    assert [p.name for p in store.projects.projects_for(admin)] == ["kept"]


def test_the_upgrade_turns_an_old_staged_import_into_a_row(tmp_path):
    """A store staged by an older parakit (``settings["importing"]`` with host and pid)
    upgrades to an unfinished import without a lock, which the opening then discards."""
    from sqlalchemy import text

    from parakit.annotate.store import make_engine, store_url, upgrade

    path = tmp_path / "old.sqlite"
    engine = make_engine(store_url(path))
    upgrade(engine, "0006")
    with engine.begin() as conn:
        for name, settings in (
            ("staged", '{"importing": {"host": "h", "pid": 1, "at": 0}, "question": "q"}'),
            ("done", '{"question": "q"}'),
        ):
            conn.execute(
                text(
                    "INSERT INTO projects (name, scheme, settings, created_at) "
                    "VALUES (:n, '{\"name\": \"binary\"}', :s, '2026-01-01 00:00:00')"
                ),
                {"n": name, "s": settings},
            )
    upgrade(engine, "0007")
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT status, lock FROM imports")).all()
        settings = conn.execute(text("SELECT settings FROM projects ORDER BY id")).scalars()
        assert rows == [("in_progress", None)]
        assert [json.loads(s) for s in settings] == [{"question": "q"}] * 2
    engine.dispose()
    st = Store.open(path)
    assert [p.name for p in st.projects.projects_for(User(0, "boss", "admin"))] == ["done"]
    st.close()
