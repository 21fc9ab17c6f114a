"""annotate backup / restore: row by row across store kinds, damaged files, secure delete."""

from __future__ import annotations

import gzip
import hashlib
import hmac
import json
import sqlite3
import uuid

import pytest
from sqlalchemy import create_engine, event, select, text

from parakit.annotate.backup import backup, restore, store_key, table_counts
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
    source = sqlite_store.engine.url.database
    for name in ("copy.sqlite", "dump.jsonl.gz", "dump.jsonl"):
        counts = backup(source, tmp_path / name)
        assert counts == {t: len(rows) for t, rows in before.items() if t != "store_secrets"}
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o600  # password hashes inside
        target = tmp_path / f"restored-{name}.sqlite"
        assert restore(tmp_path / name, target, key=store_key(source)) == counts
        assert _rows(f"sqlite:///{target}") == before  # the key too: its backups restore
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
    key = store_key(sqlite_store.engine.url.database)
    restore(tmp_path / "from-sqlite.jsonl.gz", pg_target, key=key)
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
    assert store_key(pg_target) == key  # the restored store kept the source's key
    restore(tmp_path / "from-pg.jsonl.gz", tmp_path / "back.sqlite", key=key)
    assert _rows(f"sqlite:///{tmp_path / 'back.sqlite'}") == after_pg
    # a SQLite-file backup restores into PostgreSQL too
    backup(sqlite_store.engine.url.database, tmp_path / "copy.sqlite")
    pg2, _ = _pg_store(pg_url, uuid.uuid4().hex[:8])
    target2 = _url(pg2)
    pg2.close()
    restore(tmp_path / "copy.sqlite", target2, key=key)
    assert _rows(target2) == before
    with pytest.raises(AnnotateError, match="E619.*SQLite-file backup copies a SQLite store"):
        backup(pg_target, tmp_path / "pg.sqlite")
    engine = create_engine(PG_URL)
    with engine.begin() as conn:
        conn.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
    engine.dispose()


def _reseal(lines: list[str], key: str) -> str:
    """The dump ``lines`` (header, rows, end line) with the end line's digest made anew with
    ``key``: what someone who holds the key could write, so only the row checks stand."""
    mac = hmac.new(bytes.fromhex(key), digestmod=hashlib.sha256)
    for line in lines[:-1]:
        mac.update(line.encode())
    end = json.loads(lines[-1])
    end["hmac"] = mac.hexdigest()
    return "".join(lines[:-1]) + json.dumps(end) + "\n"


def _edit(lines: list[str], table: str, row_id: int, **values) -> list[str]:
    out = []
    for line in lines:
        record = json.loads(line)
        if record.get("t") == table and record["r"].get("id") == row_id:
            record["r"].update(values)
            line = json.dumps(record, ensure_ascii=False) + "\n"
        out.append(line)
    return out


def test_restore_refuses_damage_and_a_store_with_data(sqlite_store, tmp_path):
    dump = tmp_path / "dump.jsonl.gz"
    backup(sqlite_store.engine.url.database, dump)
    key = store_key(sqlite_store.engine.url.database)
    lines = gzip.decompress(dump.read_bytes()).decode().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-5]), encoding="utf-8")
    with pytest.raises(AnnotateError, match=r"E619.*cut\.jsonl, line \d+: the backup ends early"):
        restore(cut, tmp_path / "t1.sqlite", key=key)
    assert not (tmp_path / "t1.sqlite").exists()  # nothing left behind
    bad = tmp_path / "bad.jsonl"
    bad_lines = [lines[0], '{"t": "annotators", "r": {"id": 1, "nope": 2}}\n', lines[-1]]
    bad.write_text(_reseal(bad_lines, key), encoding="utf-8")
    with pytest.raises(AnnotateError, match=r"E619.*bad\.jsonl, line 2: .*no column 'nope'"):
        restore(bad, tmp_path / "t2.sqlite", key=key)
    not_backup = tmp_path / "pairs.jsonl"
    not_backup.write_text('{"text1": "a", "text2": "b"}\n', encoding="utf-8")
    with pytest.raises(AnnotateError, match=r"E619.*pairs\.jsonl, line 1: not a parakit backup"):
        restore(not_backup, tmp_path / "t3.sqlite", key=key)
    # a store with data is never overwritten, and keeps its rows
    target = sqlite_store.engine.url.database
    counts = table_counts(target)
    with pytest.raises(AnnotateError, match="E619.*already holds data"):
        restore(dump, target, key=key)
    assert table_counts(target) == counts


def test_an_edited_dump_is_refused_before_anything_is_written(sqlite_store, tmp_path):
    source = sqlite_store.engine.url.database
    dump = tmp_path / "dump.jsonl"
    backup(source, dump)
    key = store_key(source)
    lines = dump.read_text(encoding="utf-8").splitlines(keepends=True)
    annotators = [json.loads(x)["r"] for x in lines if json.loads(x).get("t") == "annotators"]
    ann1 = next(r for r in annotators if r["name"] == "ann1")
    admin = next(r for r in annotators if r["name"] == "admin")
    header = json.loads(lines[0])
    fewer = dict(
        header, counts=dict(header["counts"], annotations=header["counts"]["annotations"] - 1)
    )
    first_annotation = next(i for i, x in enumerate(lines) if '"t": "annotations"' in x)
    end = json.loads(lines[-1])
    edits = {
        "role": _edit(lines, "annotators", ann1["id"], role="admin"),
        "hash": _edit(lines, "annotators", admin["id"], password_hash=ann1["password_hash"]),
        "label": _edit(lines, "annotations", 1, label="1"),
        "deleted row, counts fixed": [json.dumps(fewer) + "\n"]
        + [x for i, x in enumerate(lines[1:-1], 1) if i != first_annotation]
        + [json.dumps(dict(end, rows=end["rows"] - 1)) + "\n"],
        "text in an integer column": _edit(lines, "annotations", 1, revision="many"),
    }
    for what, edited in edits.items():
        assert edited != lines, what
        path = tmp_path / f"{what}.jsonl"
        path.write_text("".join(edited), encoding="utf-8")
        target = tmp_path / f"{what}.sqlite"
        with pytest.raises(AnnotateError, match="E619.*digest does not match"):
            restore(path, target, key=key)
        assert not target.exists(), what
    # the key of another store, or none, is refused too
    other = Store.open(tmp_path / "other.sqlite", cheap_hashing=True)
    other.close()
    with pytest.raises(AnnotateError, match="E619.*digest does not match"):
        restore(dump, tmp_path / "t.sqlite", key=store_key(tmp_path / "other.sqlite"))
    with pytest.raises(AnnotateError, match="E619.*give it with --key"):
        restore(dump, tmp_path / "t.sqlite")
    assert not (tmp_path / "t.sqlite").exists()
    assert restore(dump, tmp_path / "t.sqlite", key=key)  # the untouched file restores


def test_rows_are_type_checked_and_foreign_keys_followed(sqlite_store, tmp_path):
    """Even under a valid digest (a writer's bug, or whoever holds the key), a value that does
    not fit its column or a reference to a missing row is E619, never an internal error."""
    source = sqlite_store.engine.url.database
    dump = tmp_path / "dump.jsonl"
    backup(source, dump)
    key = store_key(source)
    lines = dump.read_text(encoding="utf-8").splitlines(keepends=True)
    cases = {
        "text in an integer": (
            _edit(lines, "annotations", 1, revision="many"),
            r"column 'revision': 'many' is not of the column's type \(INTEGER\)",
        ),
        "a string as a boolean": (
            _edit(lines, "annotators", 1, active="yes"),
            r"column 'active': 'yes' is not of the column's type",
        ),
        "not a date": (
            _edit(lines, "annotations", 1, created_at="yesterday"),
            r"column 'created_at': 'yesterday' is not of the column's type",
        ),
        "too long": (
            _edit(lines, "annotators", 1, role="x" * 21),
            r"column 'role': 21 characters, more than the column's 20",
        ),
        "dangling foreign key": (
            _edit(lines, "annotations", 1, annotator_id=999),
            r"column 'annotator_id': 999 refers to no row of 'annotators'",
        ),
        "dangling self reference": (
            _edit(lines, "items", 1, parent_id=999),
            r"column 'parent_id': 999 refers to no row of 'items'",
        ),
    }
    for what, (edited, message) in cases.items():
        assert edited != lines, what
        path = tmp_path / f"{what}.jsonl"
        path.write_text(_reseal(edited, key), encoding="utf-8")
        target = tmp_path / f"{what}.sqlite"
        with pytest.raises(AnnotateError, match="E619.*" + message):
            restore(path, target, key=key)
        assert not target.exists(), what


def test_an_edited_sqlite_backup_is_refused(sqlite_store, tmp_path):
    source = sqlite_store.engine.url.database
    copy = tmp_path / "copy.sqlite"
    backup(source, copy)
    assert store_key(source).encode() not in copy.read_bytes()  # the key never goes along
    edited = tmp_path / "edited.sqlite"
    edited.write_bytes(copy.read_bytes())
    with sqlite3.connect(edited) as conn:
        conn.execute("UPDATE annotators SET role = 'admin' WHERE name = 'ann1'")
    conn.close()
    with pytest.raises(AnnotateError, match="E619.*digest does not match"):
        restore(edited, tmp_path / "t.sqlite", key=store_key(source))
    assert not (tmp_path / "t.sqlite").exists()
    # a plain copy of a store (no digest) is not a backup
    with pytest.raises(AnnotateError, match="E619.*no backup digest"):
        restore(source, tmp_path / "t.sqlite", key=store_key(source))


def test_restore_refuses_any_non_empty_target(sqlite_store, tmp_path):
    source = sqlite_store.engine.url.database
    dump = tmp_path / "dump.jsonl.gz"
    backup(source, dump)
    other_app = tmp_path / "other-app.sqlite"
    with sqlite3.connect(other_app) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.close()
    before = other_app.read_bytes()
    with pytest.raises(AnnotateError, match="E619.*tables that are not an empty parakit.*invoices"):
        restore(dump, other_app, key=store_key(source))
    assert other_app.read_bytes() == before
    text_file = tmp_path / "notes.txt"
    text_file.write_text("not a database at all, but long enough to have a header" * 10)
    with pytest.raises(AnnotateError, match="E619.*not a database"):
        restore(dump, text_file, key=store_key(source))
    assert text_file.read_text().startswith("not a database")


def test_cli_backup_restore(sqlite_store, tmp_path, capsys):
    from parakit.cli.app import main

    source = sqlite_store.engine.url.database
    assert main(["annotate", "backup", source, "-o", str(tmp_path / "b.jsonl.gz")]) == 0
    assert "backed up" in capsys.readouterr().out
    restore_cmd = ["annotate", "restore", str(tmp_path / "b.jsonl.gz"), str(tmp_path / "r.sqlite")]
    assert main(restore_cmd) == 2  # no key
    assert main(["annotate", "backup-key", source]) == 0
    key = capsys.readouterr().out.strip().splitlines()[-1]
    assert main([*restore_cmd, "--key", key]) == 0
    assert "restored" in capsys.readouterr().out
    assert _rows(f"sqlite:///{tmp_path / 'r.sqlite'}") == _rows(_url(sqlite_store))
    assert main([*restore_cmd, "--key", key]) == 2


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
