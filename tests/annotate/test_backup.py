"""annotate backup / restore: row by row across store kinds, damaged files, secure delete."""

from __future__ import annotations

import gzip
import uuid

import pytest
from sqlalchemy import create_engine, event, select, text

from parakit.annotate.backup import backup, restore, table_counts
from parakit.annotate.models import Base
from parakit.annotate.store import Store
from parakit.errors import AnnotateError
from parakit.schema import Pair, PairSet

from .conftest import PG_URL, _pg_store, tiny_pairs


def _work(store: Store) -> int:
    """A project with double annotation, a resolved disagreement, a rewrite and a draft."""
    ids = {
        "admin": store.accounts.add_annotator("admin", "admin-password", role="admin"),
        "ann1": store.accounts.add_annotator("ann1", "password-one"),
        "ann2": store.accounts.add_annotator("ann2", "password-two"),
    }
    from datetime import timedelta

    store.accounts.start_session(ids["ann1"], timedelta(hours=1))
    pid = store.projects.create_project("tiny", "turku")
    for name in ("ann1", "ann2"):
        store.projects.add_member(pid, ids[name])
    store.projects.import_pairs(pid, tiny_pairs())
    store.queue.assign(pid, mode="double")
    for name, label in (("ann1", "4"), ("ann2", "2")):
        for _ in range(3):
            a = store.queue.lease_next(pid, ids[name])
            rewrite = ("R1 «ü»", "R2") if name == "ann1" else None
            store.queue.save(a.item_id, ids[name], label=label, revision=0, submit=True,
                             rewrite=rewrite)  # fmt: skip
    item, _ = store.review.disagreements(pid)[0]
    store.review.resolve(item.id, "3", ids["admin"])
    return pid


def _rows(url: str) -> dict[str, list[tuple]]:
    """Every row of every table, ordered by primary key (the comparison of record)."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return {
                t.name: [
                    tuple(row) for row in conn.execute(select(t).order_by(*t.primary_key.columns))
                ]
                for t in Base.metadata.sorted_tables
            }
    finally:
        engine.dispose()


def _serves(st: Store, uid: int) -> None:
    """New rows get ids past the restored ones: a new project is imported and annotated."""
    pid = st.projects.create_project("second", "turku")
    st.projects.add_member(pid, uid)
    st.projects.import_pairs(pid, tiny_pairs())
    assert st.queue.assign(pid, mode="single") == 3
    a = st.queue.lease_next(pid, uid)
    st.queue.save(a.item_id, uid, label="4", revision=0, submit=True)
    assert st.queue.progress(pid, uid) == {"done": 1, "remaining": 2}


def _url(store: Store) -> str:
    return store.engine.url.render_as_string(hide_password=False)


@pytest.fixture
def sqlite_store(tmp_path):
    st = Store.open(tmp_path / "source.sqlite", cheap_hashing=True)
    _work(st)
    yield st
    st.close()


def test_sqlite_backup_both_formats_restore_row_by_row(sqlite_store, tmp_path):
    before = _rows(_url(sqlite_store))
    assert sum(map(len, before.values())) > 20 and before["annotations"]
    for name in ("copy.sqlite", "dump.jsonl.gz", "dump.jsonl"):
        counts = backup(sqlite_store.engine.url.database, tmp_path / name)
        assert counts == {t: len(rows) for t, rows in before.items()}
        target = tmp_path / f"restored-{name}.sqlite"
        assert restore(tmp_path / name, target) == counts
        assert _rows(f"sqlite:///{target}") == before
    # the restored store serves: a third annotator works on in it
    st = Store.open(tmp_path / "restored-dump.jsonl.gz.sqlite", cheap_hashing=True)
    pid = st.projects.project_id("tiny")
    uid = st.accounts.add_annotator("ann3", "password-three")
    assert uid == max(r[0] for r in before["annotators"]) + 1
    assert st.accounts.authenticate("ann1", "password-one") is not None  # hashes intact
    assert st.queue.progress(pid, st.accounts.annotator_id("ann1"))["done"] == 3
    _serves(st, uid)
    st.close()


@pytest.mark.postgres
def test_backup_restore_across_store_kinds(sqlite_store, tmp_path, pg_url):
    before = _rows(_url(sqlite_store))
    backup(sqlite_store.engine.url.database, tmp_path / "from-sqlite.jsonl.gz")
    pg, schema = _pg_store(pg_url, uuid.uuid4().hex[:8])
    pg_target = _url(pg)
    pg.close()
    # a freshly migrated, empty PostgreSQL store takes it
    restore(tmp_path / "from-sqlite.jsonl.gz", pg_target)
    assert _rows(pg_target) == before
    # and serves: new rows get ids past the restored ones (the sequences moved)
    st = Store.open(pg_target, cheap_hashing=True)
    uid = st.accounts.add_annotator("ann3", "password-three")
    assert uid == max(r[0] for r in before["annotators"]) + 1
    assert st.accounts.authenticate("ann1", "password-one") is not None
    _serves(st, uid)
    st.close()
    # PostgreSQL -> portable dump -> SQLite gives the same rows again (ann3 included)
    after_pg = _rows(pg_target)
    backup(pg_target, tmp_path / "from-pg.jsonl.gz")
    restore(tmp_path / "from-pg.jsonl.gz", tmp_path / "back.sqlite")
    assert _rows(f"sqlite:///{tmp_path / 'back.sqlite'}") == after_pg
    # a SQLite-file backup restores into PostgreSQL too
    backup(sqlite_store.engine.url.database, tmp_path / "copy.sqlite")
    pg2, _ = _pg_store(pg_url, uuid.uuid4().hex[:8])
    target2 = _url(pg2)
    pg2.close()
    restore(tmp_path / "copy.sqlite", target2)
    assert _rows(target2) == before
    with pytest.raises(AnnotateError, match="E619.*SQLite-file backup copies a SQLite store"):
        backup(pg_target, tmp_path / "pg.sqlite")
    engine = create_engine(PG_URL)
    with engine.begin() as conn:
        conn.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
    engine.dispose()


def test_restore_refuses_damage_and_a_store_with_data(sqlite_store, tmp_path):
    dump = tmp_path / "dump.jsonl.gz"
    backup(sqlite_store.engine.url.database, dump)
    lines = gzip.decompress(dump.read_bytes()).decode().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-5]), encoding="utf-8")
    with pytest.raises(AnnotateError, match=r"E619.*cut\.jsonl, line \d+: the backup ends early"):
        restore(cut, tmp_path / "t1.sqlite")
    assert not (tmp_path / "t1.sqlite").exists()  # nothing left behind
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + '{"t": "annotators", "r": {"id": 1, "nope": 2}}\n', encoding="utf-8")
    with pytest.raises(AnnotateError, match=r"E619.*bad\.jsonl, line 2: .*no column 'nope'"):
        restore(bad, tmp_path / "t2.sqlite")
    not_backup = tmp_path / "pairs.jsonl"
    not_backup.write_text('{"text1": "a", "text2": "b"}\n', encoding="utf-8")
    with pytest.raises(AnnotateError, match=r"E619.*pairs\.jsonl, line 1: not a parakit backup"):
        restore(not_backup, tmp_path / "t3.sqlite")
    # a store with data is never overwritten, and keeps its rows
    target = sqlite_store.engine.url.database
    counts = table_counts(target)
    with pytest.raises(AnnotateError, match="E619.*already holds data"):
        restore(dump, target)
    assert table_counts(target) == counts


def test_cli_backup_restore(sqlite_store, tmp_path, capsys):
    from parakit.cli.app import main

    source = sqlite_store.engine.url.database
    assert main(["annotate", "backup", source, "-o", str(tmp_path / "b.jsonl.gz")]) == 0
    assert (
        main(["annotate", "restore", str(tmp_path / "b.jsonl.gz"), str(tmp_path / "r.sqlite")]) == 0
    )
    out = capsys.readouterr().out
    assert "backed up" in out and "restored" in out
    assert _rows(f"sqlite:///{tmp_path / 'r.sqlite'}") == _rows(_url(sqlite_store))
    assert (
        main(["annotate", "restore", str(tmp_path / "b.jsonl.gz"), str(tmp_path / "r.sqlite")]) == 2
    )


def test_deleting_a_project_leaves_no_text_in_the_sqlite_files(tmp_path):
    path = tmp_path / "p.sqlite"
    st = Store.open(path, cheap_hashing=True)
    # some SQLite builds (Python's here) overwrite deleted data by default, most do not: take
    # the common default, so the store must ask for it
    st.engine.dispose()
    event.listen(
        st.engine, "connect", lambda conn, _: conn.execute("PRAGMA secure_delete=OFF"), insert=True
    )
    pid = st.projects.create_project("tiny", "turku")
    secret = "ZQXJ confidential sentence"
    pairs = tiny_pairs()
    pairs = PairSet([*pairs, Pair("p4", secret, "Hi.")], scheme="turku", documents=pairs.documents)
    st.projects.import_pairs(pid, pairs)
    st.projects.delete_project(pid)
    data = path.read_bytes() + (
        path.with_name(path.name + "-wal").read_bytes()
        if path.with_name(path.name + "-wal").exists()
        else b""
    )
    assert secret.encode() not in data
    assert b"sitting on the mat" not in data
    st.close()
