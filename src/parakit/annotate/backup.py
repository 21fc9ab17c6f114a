"""Backup and restore of an annotation store, across store kinds (SQLite and PostgreSQL).

Two backup formats, told by the file name:

* ``.sqlite`` / ``.sqlite3`` / ``.db``: a SQLite database file made with SQLite's online-backup
  API, a consistent copy taken while annotators keep working (SQLite stores only);
* anything else (``.jsonl.gz`` is the usual name): a portable dump. A header line names the
  schema revision and the row count of every table, then one JSON line per row, table by
  table in foreign-key order, then an end line; gzip-compressed when the name ends in ``.gz``.
  Any store kind writes it and any store kind restores it.

Both carry a keyed digest (HMAC-SHA256) of everything in them, keyed by the store's secret
(:func:`store_key`; made at random when the store is created and never written into a
backup). :func:`restore` needs that key: it checks the digest, every row's types and every
foreign key **before** it writes anything, so an edited backup (a role changed to admin, a
swapped password hash, a deleted row with the counts fixed) is refused, not restored. Both
files are written readable by their owner only (mode 0600): they hold password and
session-token hashes.

:func:`restore` reads either format into a new store or an empty parakit store (a target
with any row, or with tables of another application, is refused): it creates the schema at
the backup's revision, copies every row with its ids, moves PostgreSQL's id sequences past
them, keeps the source store's key, upgrades the schema to the current version and checks the
row counts against the header. Everything is written in one transaction: a failed or
interrupted restore leaves no rows.

Example:
    >>> from parakit.annotate.backup import backup, restore, store_key
    >>> key = store_key("project.sqlite")        # doctest: +SKIP
    >>> backup("project.sqlite", "project-2026-11-25.jsonl.gz")     # doctest: +SKIP
    {'annotators': 3, 'projects': 1, ...}
    >>> restore("project-2026-11-25.jsonl.gz", "new.sqlite", key=key)  # doctest: +SKIP
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import hmac
import json
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Engine,
    Float,
    Integer,
    LargeBinary,
    String,
    Table,
    create_engine,
    delete,
    func,
    insert,
    inspect,
    select,
    text,
)
from sqlalchemy.exc import DatabaseError, IntegrityError

from parakit.annotate.db import make_engine, require_store, store_url, upgrade, utcnow
from parakit.annotate.models import Base, StoreSecret
from parakit.errors import AnnotateError, Errors

#: the first field of a portable dump's header line
FORMAT = "parakit-annotate-backup"
#: 2: with a keyed digest (version-1 files, made before, carry none and are refused)
VERSION = 2
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
#: the table a SQLite-file backup keeps its digest in (not a store table)
SEAL_TABLE = "parakit_backup_seal"
KEY_NAME = "backup"
_ROWS_PER_INSERT = 1000
_KEY_HELP = (
    "`parakit annotate backup-key SOURCE_STORE` prints the key of the store the backup was "
    "made from; keep it apart from the backups"
)


def is_sqlite_file_name(path: str | Path) -> bool:
    """Whether ``path`` names a SQLite-file backup (else a portable dump)."""
    return Path(path).suffix.lower() in SQLITE_SUFFIXES


def store_key(store: str | Path) -> str:
    """The key (64 hex digits) of the digests of ``store``'s backups: give it to
    :func:`restore`, and keep it apart from the backups (whoever holds both can forge one).

    Raises:
        AnnotateError: E619 not an annotation store, or one made before keys (open it once
            with this parakit to upgrade it).
    """
    require_store(store)
    engine = make_engine(store_url(store))
    try:
        with engine.connect() as conn:
            return _key_of(conn, store)
    finally:
        engine.dispose()


def backup(store: str | Path, path: str | Path) -> dict[str, int]:
    """Back the store at ``store`` (path or URL) up into ``path``, atomically, with a digest
    keyed by the store's secret; the file is readable by its owner only (0600).

    Returns:
        the number of rows of each table in the backup.
    Raises:
        AnnotateError: a SQLite-file backup of a PostgreSQL store, or the store is unreadable.
    """
    require_store(store)
    url, path = store_url(store), Path(path)
    if is_sqlite_file_name(path):
        if not url.startswith("sqlite"):
            raise AnnotateError(Errors.E619_sqlite_file_backup_copies.format(path=path))
        _sqlite_online_backup(_sqlite_path(url), path)
        return table_counts(path)
    engine = make_engine(url)
    try:
        return _dump(engine, path)
    finally:
        engine.dispose()


def restore(path: str | Path, store: str | Path, key: str | None = None) -> dict[str, int]:
    """Restore the backup ``path`` (either format) into a new store, or an empty parakit
    store, at ``store``.

    Args:
        path: a file made by :func:`backup`.
        store: a SQLite path or a database URL.
        key: the key of the store the backup was made from (:func:`store_key`); the backup's
            digest, every row's types and every foreign key are checked with it before
            anything is written. The restored store keeps this key.
    Returns:
        the number of rows restored per table.
    Raises:
        AnnotateError: E619 no key or the wrong one, an edited, damaged or cut backup, a row
            whose value does not fit its column, a foreign key to a missing row, or a target
            that holds rows or another application's tables; nothing is written then.
    """
    path = Path(path)
    if not path.is_file():
        raise AnnotateError(Errors.E619_backup_file_found.format(path=path))
    secret = _parse_key(key, path)
    if _is_sqlite_database(path):
        source = create_engine(f"sqlite:///file:{path.resolve()}?mode=ro&uri=true")
        try:
            with source.connect() as conn:
                try:
                    header = {"revision": _revision(conn), "counts": _counts(conn)}
                    _verify_sqlite(conn, path, secret, header)
                except DatabaseError as err:
                    raise AnnotateError(
                        Errors.E619_damaged_sqlite_backup.format(
                            path=path, err_orig=err.orig or err
                        )
                    ) from None
                return _load(store, path, header, _rows_from_engine(conn), secret)
        finally:
            source.dispose()
    header = _read_header(path)
    _verify_dump(path, secret, header)
    with _open(path, "rt") as handle:
        return _load(store, path, header, _rows_from_dump(path, handle), secret)


def table_counts(store: str | Path) -> dict[str, int]:
    """Rows per table of a store (path, URL or SQLite backup file)."""
    engine = make_engine(store_url(store))
    try:
        with engine.connect() as conn:
            return _counts(conn)
    finally:
        engine.dispose()


# -- writing ------------------------------------------------------------------------------------


def _tables() -> list[Table]:
    """The tables a backup holds, parents before children (foreign-key order): every table
    of the store but its secrets."""
    return [t for t in Base.metadata.sorted_tables if t.name != StoreSecret.__tablename__]


def _sqlite_path(url: str) -> Path:
    return Path(url.removeprefix("sqlite:///"))


def _key_of(conn: Any, where: Any) -> str:
    if _revision(conn) is None:
        raise AnnotateError(Errors.E619_annotation_store.format(where=where))
    if not inspect(conn).has_table(StoreSecret.__tablename__):
        raise AnnotateError(Errors.E619_store_made_older.format(where=where))
    value = conn.execute(
        select(StoreSecret.value).where(StoreSecret.name == KEY_NAME)
    ).scalar_one_or_none()
    if value is None:
        raise AnnotateError(Errors.E619_store_backup_key.format(where=where))
    return str(value)


def _parse_key(key: str | None, path: Path) -> bytes:
    if not key:
        raise AnnotateError(Errors.E619_backup_restored_key.format(path=path, KEY_HELP=_KEY_HELP))
    if not re.fullmatch(r"[0-9a-fA-F]{64}", key.strip()):
        raise AnnotateError(
            Errors.E619_backup_key_must.format(key_help_split_0=_KEY_HELP.split(";")[0])
        )
    return bytes.fromhex(key.strip())


def _mac(secret: bytes) -> Any:
    return hmac.new(secret, digestmod=hashlib.sha256)


def _record_line(table: str, row: Any) -> str:
    """A row as one line of a dump (also what a SQLite-file backup's digest covers)."""
    record = {"t": table, "r": {k: _encode(v) for k, v in row.items()}}
    return json.dumps(record, ensure_ascii=False) + "\n"


def _sqlite_seal_start(revision: str | None) -> str:
    return json.dumps({"format": FORMAT, "kind": "sqlite", "revision": revision}) + "\n"


def _sqlite_online_backup(source: Path, target: Path) -> None:
    if not source.is_file():
        raise AnnotateError(Errors.E619_such_store.format(source=source))
    key = bytes.fromhex(store_key(source))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)  # mkstemp makes it 0600, and os.replace keeps that
    try:
        with (
            closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as src,
            closing(sqlite3.connect(tmp)) as dst,
        ):
            src.backup(dst)  # a consistent snapshot, page by page, while writers go on
            dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
            dst.execute("PRAGMA secure_delete=ON")  # the key's bytes go, not only its row
            dst.execute(f"DELETE FROM {StoreSecret.__tablename__}")
            dst.commit()
        copy = create_engine(f"sqlite:///{tmp}")
        try:
            with copy.connect() as conn:
                mac = _mac(key)
                mac.update(_sqlite_seal_start(_revision(conn)).encode())
                for name, row, _ in _rows_from_engine(conn):
                    mac.update(_record_line(name, row).encode())
        finally:
            copy.dispose()
        with closing(sqlite3.connect(tmp)) as dst:
            dst.execute(f"CREATE TABLE {SEAL_TABLE} (hmac TEXT NOT NULL)")
            dst.execute(f"INSERT INTO {SEAL_TABLE} VALUES (?)", (mac.hexdigest(),))
            dst.commit()
        with open(tmp, "rb") as written:
            os.fsync(written.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _revision(conn: Any) -> str | None:
    if not inspect(conn).has_table("alembic_version"):
        return None
    return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def _counts(conn: Any) -> dict[str, int]:
    present = set(inspect(conn).get_table_names())
    return {
        t.name: int(conn.execute(select(func.count()).select_from(t)).scalar() or 0)
        for t in _tables()
        if t.name in present
    }


def _encode(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    return value


def _open(path: Path, mode: str) -> IO[Any]:
    if path.name.endswith(".gz"):
        return gzip.open(path, mode, encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def _dump(engine: Engine, path: Path) -> dict[str, int]:
    from parakit.io.atomic import atomic_write

    options = {"isolation_level": "REPEATABLE READ"} if engine.dialect.name != "sqlite" else {}
    # one read transaction: the counts and the rows come from the same snapshot
    with engine.connect().execution_options(**options) as conn, conn.begin():
        mac = _mac(bytes.fromhex(_key_of(conn, engine.url)))
        revision = _revision(conn)
        counts = _counts(conn)
        header = {
            "format": FORMAT,
            "version": VERSION,
            "revision": revision,
            "source": engine.dialect.name,
            "created": utcnow().isoformat(),
            "counts": counts,
            "digest": "hmac-sha256 of every line before the end line, keyed by the store's key",
        }
        with atomic_write(path, private=True) as handle:
            line = json.dumps(header) + "\n"
            handle.write(line)
            mac.update(line.encode())
            written = 0
            for table in _tables():
                order = list(table.primary_key.columns)
                for row in conn.execute(select(table).order_by(*order)).mappings():
                    line = _record_line(table.name, row)
                    handle.write(line)
                    mac.update(line.encode())
                    written += 1
            handle.write(json.dumps({"end": True, "rows": written, "hmac": mac.hexdigest()}))
            handle.write("\n")
    return counts


# -- reading ------------------------------------------------------------------------------------


def _is_sqlite_database(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(16) == b"SQLite format 3\x00"


def _read_header(path: Path) -> dict[str, Any]:
    try:
        with _open(path, "rt") as handle:
            header = json.loads(handle.readline() or "null")
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise AnnotateError(
            Errors.E619_line_parakit_backup_2.format(path=path, name=type(err).__name__, err=err)
        ) from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise AnnotateError(Errors.E619_line_parakit_backup.format(path=path, FORMAT=FORMAT))
    if header.get("version") != VERSION:
        raise AnnotateError(
            Errors.E619_line_backup_format.format(
                path=path, version=header.get("version"), VERSION=VERSION
            )
        )
    if not isinstance(header.get("counts"), dict) or not isinstance(header.get("revision"), str):
        raise AnnotateError(Errors.E619_line_header_counts.format(path=path))
    return header


class _RowCheck:
    """Type-checks rows against their columns and follows every foreign key, table by table
    in foreign-key order (a reference to a row of the same table is checked at the end)."""

    def __init__(self) -> None:
        self.columns = {t.name: {c.name: c for c in t.columns} for t in _tables()}
        self.ids: dict[tuple[str, str], set[Any]] = {}
        for table in _tables():
            for column in table.columns:
                for fk in column.foreign_keys:
                    self.ids[(fk.column.table.name, fk.column.name)] = set()
        self.later: list[tuple[str, str, str, tuple[str, str], Any]] = []

    def __call__(self, name: str, row: dict[str, Any], where: str) -> None:
        columns = self.columns[name]
        for key, value in row.items():
            column = columns.get(key)
            if column is None:
                raise AnnotateError(
                    Errors.E619_table_column.format(where=where, name=name, key=key)
                )
            problem = _type_problem(column, value)
            if problem:
                raise AnnotateError(
                    Errors.E619_table_column_2.format(
                        where=where, name=name, key=key, problem=problem
                    )
                )
            if value is None:
                continue
            for fk in column.foreign_keys:
                target = (fk.column.table.name, fk.column.name)
                if target[0] == name:
                    self.later.append((where, name, key, target, value))
                elif value not in self.ids[target]:
                    raise _dangling(where, name, key, target, value)
        for (table, column_name), seen in self.ids.items():
            if table == name and column_name in row:
                seen.add(row[column_name])

    def finish(self) -> None:
        for where, name, key, target, value in self.later:
            if value not in self.ids[target]:
                raise _dangling(where, name, key, target, value)


def _dangling(where: str, name: str, key: str, target: tuple[str, str], value: Any) -> Exception:
    return AnnotateError(
        Errors.E619_table_column_refers.format(
            where=where, name=name, key=key, value=value, target_0=target[0], target_1=target[1]
        )
    )


def _type_problem(column: Any, value: Any) -> str | None:
    """What is wrong with ``value`` for ``column`` (decoded), or None."""
    kind = column.type
    if value is None:
        if column.nullable or isinstance(kind, JSON):
            return None
        return "empty (NULL) in a column that must hold a value"
    if isinstance(kind, Boolean):
        ok = isinstance(value, bool)
    elif isinstance(kind, Integer):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(kind, Float):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif isinstance(kind, DateTime):
        ok = isinstance(value, datetime)
    elif isinstance(kind, LargeBinary):
        ok = isinstance(value, bytes)
    elif isinstance(kind, String):  # Text too
        if not isinstance(value, str):
            ok = False
        elif kind.length is not None and len(value) > kind.length:
            return f"{len(value)} characters, more than the column's {kind.length}"
        else:
            ok = True
    else:  # JSON: any JSON value
        ok = True
    return None if ok else f"{value!r} is not of the column's type ({kind})"


def _decode(name: str, row: dict[str, Any], columns: dict[str, Any], where: str) -> None:
    """Dump values back to Python (ISO datetimes, base64 bytes), in place."""
    for key, value in row.items():
        column = columns.get(key)
        if column is None or value is None:
            continue
        try:
            if isinstance(column.type, DateTime):
                row[key] = datetime.fromisoformat(value)
            elif isinstance(column.type, LargeBinary):
                row[key] = base64.b64decode(value, validate=True)
        except (TypeError, ValueError) as err:
            raise AnnotateError(
                Errors.E619_table_column_column.format(
                    where=where, name=name, key=key, value=value, column_type=column.type, err=err
                )
            ) from None


def _check_counts(path: Path, header: dict[str, Any], got: dict[str, int]) -> None:
    expected = {k: v for k, v in header["counts"].items() if k in got}
    read = {k: v for k, v in got.items() if k in header["counts"]}
    if expected != read or set(header["counts"]) - set(got):
        raise AnnotateError(
            Errors.E619_row_counts_differ.format(
                path=path,
                describe_header_counts=_describe(header["counts"]),
                describe_read=_describe(read),
            )
        )


def _verify_dump(path: Path, secret: bytes, header: dict[str, Any]) -> None:
    """Check the digest of a dump, then every row (types, foreign keys, counts), before
    anything is written; the digest first, so an edit is named as one."""
    mac = _mac(secret)
    end: dict[str, Any] | None = None
    line_no = 0
    try:
        with _open(path, "rt") as handle:
            for line_no, line in enumerate(handle, 1):
                if line_no > 1 and line.startswith('{"end"'):
                    end = json.loads(line)
                    if next(handle, None) is not None:
                        end = None  # lines after the end line
                    break
                mac.update(line.encode())
    except (EOFError, OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise AnnotateError(
            Errors.E619_line_damaged_backup.format(
                path=path, line_no_1=line_no + 1, name=type(err).__name__, err=err
            )
        ) from None
    if not isinstance(end, dict) or "hmac" not in end:
        raise AnnotateError(Errors.E619_line_backup_ends_early.format(path=path, line_no=line_no))
    if not hmac.compare_digest(str(end["hmac"]), mac.hexdigest()):
        raise _edited(path)
    with _open(path, "rt") as handle:
        _check_rows(path, header, _rows_from_dump(path, handle))


def _edited(path: Path) -> AnnotateError:
    return AnnotateError(Errors.E619_backup_digest_does.format(path=path, KEY_HELP=_KEY_HELP))


def _verify_sqlite(conn: Any, path: Path, secret: bytes, header: dict[str, Any]) -> None:
    if header["revision"] is None:
        raise AnnotateError(Errors.E619_sqlite_file_but.format(path=path))
    seal = None
    if inspect(conn).has_table(SEAL_TABLE):
        seal = conn.execute(text(f"SELECT hmac FROM {SEAL_TABLE}")).scalar()
    if seal is None:
        raise AnnotateError(Errors.E619_sqlite_file_backup.format(path=path))
    mac = _mac(secret)
    mac.update(_sqlite_seal_start(header["revision"]).encode())
    try:
        for name, row, _ in _rows_from_engine(conn):
            mac.update(_record_line(name, row).encode())
    except (TypeError, ValueError) as err:  # a value SQLAlchemy cannot read back
        raise AnnotateError(Errors.E619_row_read.format(path=path, err=err)) from None
    if not hmac.compare_digest(str(seal), mac.hexdigest()):
        raise _edited(path)
    _check_rows(path, header, _rows_from_engine(conn, path))


def _check_rows(path: Path, header: dict[str, Any], rows: Rows) -> None:
    check = _RowCheck()
    got: dict[str, int] = {}
    for name, row, where in rows:
        check(name, row, where)
        got[name] = got.get(name, 0) + 1
    check.finish()
    _check_counts(path, header, {t.name: got.get(t.name, 0) for t in _tables()})


#: rows as (table, row, where it is in the backup)
Rows = Iterator[tuple[str, dict[str, Any], str]]


def _rows_from_engine(conn: Any, path: Path | None = None) -> Rows:
    present = set(inspect(conn).get_table_names())
    for table in _tables():
        if table.name in present:
            order = list(table.primary_key.columns)  # parents before their rewrites
            for row in conn.execute(select(table).order_by(*order)).mappings():
                key = {c.name: row[c.name] for c in order}
                yield table.name, dict(row), f"{path}, table {table.name!r}, row {key}"


def _rows_from_dump(path: Path, handle: IO[str]) -> Rows:
    columns = {t.name: {c.name: c for c in t.columns} for t in _tables()}
    handle.readline()  # the header
    line_no, rows = 1, 0
    try:
        for line_no, line in enumerate(handle, 2):
            record = json.loads(line)
            if not isinstance(record, dict):
                raise AnnotateError(Errors.E619_line_row.format(path=path, line_no=line_no))
            if record.get("end"):
                if record.get("rows") != rows:
                    break
                return
            name, row = record.get("t"), record.get("r")
            if name not in columns or not isinstance(row, dict):
                raise AnnotateError(
                    Errors.E619_line_field_unknown.format(path=path, line_no=line_no, name=name)
                )
            where = f"{path}, line {line_no}"
            _decode(name, row, columns[name], where)
            rows += 1
            yield name, row, where
    except (EOFError, OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise AnnotateError(
            Errors.E619_line_damaged_backup.format(
                path=path, line_no_1=line_no + 1, name=type(err).__name__, err=err
            )
        ) from None
    raise AnnotateError(Errors.E619_line_backup_ends.format(path=path, line_no=line_no, rows=rows))


# -- restoring ----------------------------------------------------------------------------------


def _refuse_target(conn: Any, store: str | Path) -> str | None:
    """The target's schema revision; refuses a target with rows or another application's
    tables (E619)."""
    present = set(inspect(conn).get_table_names())
    ours = set(Base.metadata.tables) | {"alembic_version"}
    revision = _revision(conn)
    foreign = sorted(present - ours) if revision else sorted(present)
    if foreign:
        raise AnnotateError(
            Errors.E619_target_holds_tables.format(
                store=store,
                foreign=", ".join(foreign[:5]),
                if_len_foreign_5_else=" ..." if len(foreign) > 5 else "",
            )
        )
    counts = _counts(conn) if revision else {}
    if any(counts.values()):
        raise AnnotateError(
            Errors.E619_store_already_holds.format(store=store, describe_counts=_describe(counts))
        )
    return revision


def _load(
    store: str | Path,
    path: Path,
    header: dict[str, Any],
    rows: Rows,
    secret: bytes,
) -> dict[str, int]:
    url = store_url(store)
    new_file = _sqlite_path(url) if url.startswith("sqlite:///") else None
    if new_file is not None and new_file.exists():
        new_file = None  # an existing store: never delete it on failure
    # look with a plain engine first: the store's engine switches a SQLite file to WAL on
    # connecting, which would change another application's file before it is refused
    probe = create_engine(url)
    try:
        with probe.connect() as conn:
            revision = _refuse_target(conn, store)
    except DatabaseError as err:
        if new_file is not None:
            Path(new_file).unlink(missing_ok=True)
        raise AnnotateError(
            Errors.E619_database_store_restored.format(store=store, err_orig=err.orig or err)
        ) from None
    finally:
        probe.dispose()
    engine = make_engine(url)
    try:
        if revision is not None and revision != header["revision"]:
            raise AnnotateError(
                Errors.E619_empty_store_schema.format(
                    store=store, revision=revision, header_revision=header["revision"]
                )
            )
        upgrade(engine, header["revision"])
        tables = {t.name: t for t in _tables()}
        done: dict[str, int] = dict.fromkeys(tables, 0)
        try:
            with engine.connect() as conn, conn.begin():
                if engine.dialect.name == "sqlite":
                    conn.exec_driver_sql("PRAGMA defer_foreign_keys=ON")
                revisions: dict[Any, Any] = {}
                _insert_rows(conn, tables, _noting_revisions(rows, revisions), done)
                _check_counts(path, header, done)
                _reset_revisions(conn, tables, revisions)
                conn.execute(delete(StoreSecret).where(StoreSecret.name == KEY_NAME))
                conn.execute(insert(StoreSecret).values(name=KEY_NAME, value=secret.hex()))
                if engine.dialect.name == "postgresql":
                    _move_sequences(conn, tables.values())
        except IntegrityError as err:  # checked before; the database says so too
            raise AnnotateError(
                Errors.E619_rows_break_constraint.format(path=path, err_orig=err.orig)
            ) from None
        upgrade(engine)
        return {k: v for k, v in done.items() if k in header["counts"]}
    except BaseException:
        if new_file is not None:  # a store this call created: leave nothing behind
            engine.dispose()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{new_file}{suffix}").unlink(missing_ok=True)
        raise
    finally:
        engine.dispose()


def _insert_rows(
    conn: Any,
    tables: dict[str, Table],
    rows: Rows,
    done: dict[str, int],
) -> None:
    batch: list[dict[str, Any]] = []
    current: str | None = None
    for name, row, _ in rows:
        if name != current and batch:
            conn.execute(tables[current].insert(), batch)  # type: ignore[index]
            batch = []
        current = name
        batch.append(row)
        done[name] += 1
        if len(batch) >= _ROWS_PER_INSERT:
            conn.execute(tables[name].insert(), batch)
            batch = []
    if batch:
        conn.execute(tables[current].insert(), batch)  # type: ignore[index]


def _noting_revisions(rows: Rows, revisions: dict[Any, Any]) -> Rows:
    """``rows``, noting each project's backed-up ``revision`` (``{project id: revision}``)
    on the way."""
    for name, row, where in rows:
        if name == "projects" and "revision" in row:
            revisions[row["id"]] = row["revision"]
        yield name, row, where


def _reset_revisions(conn: Any, tables: dict[str, Table], revisions: dict[Any, Any]) -> None:
    """Give each project its backed-up revision back: the triggers of migration 0008 moved it
    as the project's rows went in, but the restored rows are the backed-up ones (one
    snapshot), so the statistics kept at that revision (``stats_cache``) hold for them."""
    projects = tables["projects"]
    for project_id, revision in revisions.items():
        conn.execute(projects.update().where(projects.c.id == project_id).values(revision=revision))


def _move_sequences(conn: Any, tables: Any) -> None:
    """PostgreSQL: set every serial id sequence past the restored ids."""
    for table in tables:
        for column in table.primary_key.columns:
            sequence = conn.execute(
                text("SELECT pg_get_serial_sequence(:t, :c)"), {"t": table.name, "c": column.name}
            ).scalar()
            if sequence:
                conn.execute(
                    text(
                        f"SELECT setval('{sequence}', "
                        f"COALESCE((SELECT MAX({column.name}) FROM {table.name}), 0) + 1, false)"
                    )
                )


def _describe(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {k}" for k, n in counts.items() if n) or "no rows"
