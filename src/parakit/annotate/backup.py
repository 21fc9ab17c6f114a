"""Backup and restore of an annotation store, across store kinds (SQLite and PostgreSQL).

Two backup formats, told by the file name:

* ``.sqlite`` / ``.sqlite3`` / ``.db``: a SQLite database file made with SQLite's online-backup
  API, a consistent copy taken while annotators keep working (SQLite stores only);
* anything else (``.jsonl.gz`` is the usual name): a portable dump. A header line names the
  schema revision and the row count of every table, then one JSON line per row, table by
  table in foreign-key order, then an end line; gzip-compressed when the name ends in ``.gz``.
  Any store kind writes it and any store kind restores it.

:func:`restore` reads either format into a new (or empty) store: it creates the schema at the
backup's revision, copies every row with its ids, moves PostgreSQL's id sequences past them,
upgrades the schema to the current version and checks the row counts against the header.
Everything is written in one transaction: a failed or interrupted restore leaves no rows.

Example:
    >>> from parakit.annotate.backup import backup, restore
    >>> backup("project.sqlite", "project-2026-11-25.jsonl.gz")     # doctest: +SKIP
    {'annotators': 3, 'projects': 1, ...}
    >>> restore("project-2026-11-25.jsonl.gz", "postgresql://ann@db/corpus")  # doctest: +SKIP
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from sqlalchemy import DateTime, Engine, LargeBinary, Table, func, inspect, select, text

from parakit.annotate.db import make_engine, require_store, store_url, upgrade, utcnow
from parakit.annotate.models import Base
from parakit.errors import AnnotateError

#: the first field of a portable dump's header line
FORMAT = "parakit-annotate-backup"
VERSION = 1
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
_ROWS_PER_INSERT = 1000


def is_sqlite_file_name(path: str | Path) -> bool:
    """Whether ``path`` names a SQLite-file backup (else a portable dump)."""
    return Path(path).suffix.lower() in SQLITE_SUFFIXES


def backup(store: str | Path, path: str | Path) -> dict[str, int]:
    """Back the store at ``store`` (path or URL) up into ``path``, atomically.

    Returns:
        the number of rows of each table in the backup.
    Raises:
        AnnotateError: a SQLite-file backup of a PostgreSQL store, or the store is unreadable.
    """
    require_store(store)
    url, path = store_url(store), Path(path)
    if is_sqlite_file_name(path):
        if not url.startswith("sqlite"):
            raise AnnotateError(
                f"{path}: a SQLite-file backup copies a SQLite store; back a PostgreSQL store "
                "up into a portable dump instead (e.g. backup.jsonl.gz)",
                code="E619",
            )
        _sqlite_online_backup(_sqlite_path(url), path)
        return table_counts(path)
    engine = make_engine(url)
    try:
        return _dump(engine, path)
    finally:
        engine.dispose()


def restore(path: str | Path, store: str | Path) -> dict[str, int]:
    """Restore the backup ``path`` (either format) into a new or empty store at ``store``.

    Returns:
        the number of rows restored per table.
    Raises:
        AnnotateError: the backup is damaged or of an unknown format, or the target store
            already holds data (E622); nothing is written then.
    """
    path = Path(path)
    if not path.is_file():
        raise AnnotateError(f"{path}: backup file not found", code="E619")
    if _is_sqlite_database(path):
        source = make_engine(f"sqlite:///{path.resolve()}")
        try:
            with source.connect() as conn:
                header = {"revision": _revision(conn), "counts": _counts(conn)}
                return _load(store, path, header, _rows_from_engine(conn))
        finally:
            source.dispose()
    header = _read_header(path)
    with _open(path, "rt") as handle:
        return _load(store, path, header, _rows_from_dump(path, handle))


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
    """The store's tables, parents before children (foreign-key order)."""
    return list(Base.metadata.sorted_tables)


def _sqlite_path(url: str) -> Path:
    return Path(url.removeprefix("sqlite:///"))


def _sqlite_online_backup(source: Path, target: Path) -> None:
    if not source.is_file():
        raise AnnotateError(f"{source}: no such store", code="E619")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        with (
            sqlite3.connect(f"file:{source}?mode=ro", uri=True) as src,
            sqlite3.connect(tmp) as dst,
        ):
            src.backup(dst)  # a consistent snapshot, page by page, while writers go on
            dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
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
        revision = _revision(conn)
        if revision is None:
            raise AnnotateError(f"{engine.url}: not an annotation store", code="E619")
        counts = _counts(conn)
        header = {
            "format": FORMAT,
            "version": VERSION,
            "revision": revision,
            "source": engine.dialect.name,
            "created": utcnow().isoformat(),
            "counts": counts,
        }
        with atomic_write(path) as handle:
            handle.write(json.dumps(header) + "\n")
            written = 0
            for table in _tables():
                order = list(table.primary_key.columns)
                for row in conn.execute(select(table).order_by(*order)).mappings():
                    record = {"t": table.name, "r": {k: _encode(v) for k, v in row.items()}}
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                    written += 1
            handle.write(json.dumps({"end": True, "rows": written}) + "\n")
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
            f"{path}, line 1: not a parakit backup ({type(err).__name__}: {err})", code="E619"
        ) from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise AnnotateError(
            f"{path}, line 1: not a parakit backup (no {FORMAT!r} header; a SQLite backup "
            "is a .sqlite file)",
            code="E619",
        )
    if header.get("version") != VERSION:
        raise AnnotateError(
            f"{path}, line 1: backup format version {header.get('version')!r}; this parakit "
            f"reads version {VERSION}",
            code="E619",
        )
    return header


def _rows_from_engine(conn: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    present = set(inspect(conn).get_table_names())
    for table in _tables():
        if table.name in present:
            order = list(table.primary_key.columns)  # parents before their rewrites
            for row in conn.execute(select(table).order_by(*order)).mappings():
                yield table.name, dict(row)


def _rows_from_dump(path: Path, handle: IO[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    columns = {t.name: {c.name: c.type for c in t.columns} for t in _tables()}
    handle.readline()  # the header
    line_no, rows = 1, 0
    try:
        for line_no, line in enumerate(handle, 2):
            record = json.loads(line)
            if record.get("end"):
                if record.get("rows") != rows:
                    break
                return
            name, row = record.get("t"), record.get("r")
            if name not in columns or not isinstance(row, dict):
                raise AnnotateError(
                    f"{path}, line {line_no}: field 't': unknown table {name!r}", code="E619"
                )
            types = columns[name]
            for key, value in row.items():
                if key not in types:
                    raise AnnotateError(
                        f"{path}, line {line_no}: table {name!r} has no column {key!r}",
                        code="E619",
                    )
                if value is not None and isinstance(types[key], DateTime):
                    row[key] = datetime.fromisoformat(value)
                elif value is not None and isinstance(types[key], LargeBinary):
                    row[key] = base64.b64decode(value)
            rows += 1
            yield name, row
    except (EOFError, OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise AnnotateError(
            f"{path}, line {line_no + 1}: damaged backup ({type(err).__name__}: {err})",
            code="E619",
        ) from None
    raise AnnotateError(
        f"{path}, line {line_no}: the backup ends early (the end line is missing or counts "
        f"other than the {rows} rows read): the file was cut",
        code="E619",
    )


# -- restoring ----------------------------------------------------------------------------------


def _load(
    store: str | Path,
    path: Path,
    header: dict[str, Any],
    rows: Iterator[tuple[str, dict[str, Any]]],
) -> dict[str, int]:
    url = store_url(store)
    new_file = _sqlite_path(url) if url.startswith("sqlite:///") else None
    if new_file is not None and new_file.exists():
        new_file = None  # an existing store: never delete it on failure
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            revision = _revision(conn)
            counts = _counts(conn) if revision else {}
        if revision is not None and any(counts.values()):
            raise AnnotateError(
                f"{store}: the store already holds data ({_describe(counts)}); restore "
                "into a new store",
                code="E619",
            )
        if revision is not None and revision != header["revision"]:
            raise AnnotateError(
                f"{store}: an empty store at schema {revision}, the backup is at "
                f"{header['revision']}; restore into a new store",
                code="E619",
            )
        upgrade(engine, header["revision"])
        tables = {t.name: t for t in _tables()}
        done: dict[str, int] = dict.fromkeys(tables, 0)
        with engine.connect() as conn, conn.begin():
            if engine.dialect.name == "sqlite":
                conn.exec_driver_sql("PRAGMA defer_foreign_keys=ON")
            batch: list[dict[str, Any]] = []
            current: str | None = None
            for name, row in rows:
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
            expected = {k: v for k, v in header["counts"].items() if k in tables}
            got = {k: v for k, v in done.items() if k in expected}
            if got != expected:
                raise AnnotateError(
                    f"{path}: row counts differ from the backup's header "
                    f"(header {_describe(expected)}; read {_describe(got)})",
                    code="E619",
                )
            if engine.dialect.name == "postgresql":
                _move_sequences(conn, tables.values())
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
