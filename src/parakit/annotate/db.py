"""The annotation database: engine set-up, transactions, migrations, row lookups, errors.

:class:`Database` wraps a SQLAlchemy engine: SQLite (the default: one file per project, WAL
journal, ``synchronous=FULL``, every write transaction ``BEGIN IMMEDIATE``) or PostgreSQL
(``postgresql+psycopg://...``) for teams. Every service method that writes runs in its own
transaction (:meth:`Database.write`) that is committed before it returns, so whatever the web
app acknowledges is on disk. The use cases live in :mod:`parakit.annotate.services`.
"""

from __future__ import annotations

import contextvars
import hashlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self, TypeVar

from sqlalchemy import Engine, and_, create_engine, event, func, or_, select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from parakit.annotate.models import (
    Annotation,
    Assignment,
    DocPair,
    DocumentRow,
    Item,
    Project,
)
from parakit.annotate.tasks import CLASSIFY
from parakit.errors import AnnotateError, Conflict, Errors, NotFound
from parakit.labels import LabelScheme, scheme_from_spec

T = TypeVar("T")
#: set while a write transaction opens, so SQLite takes the write lock up front
_WRITING: contextvars.ContextVar[bool] = contextvars.ContextVar("parakit_writing", default=False)
#: the session whose transaction the reads of a web request share (see Database.shared_reads)
_SHARED: contextvars.ContextVar[Session | None] = contextvars.ContextVar(
    "parakit_shared_reads", default=None
)
MIGRATIONS = Path(__file__).with_name("migrations")


def utcnow() -> datetime:
    """Naive UTC now (the store keeps naive UTC datetimes on every backend)."""
    return datetime.now(UTC).replace(tzinfo=None)


def store_url(target: str | Path) -> str:
    """A SQLAlchemy URL for ``target``: a URL is kept, a path becomes a SQLite file URL."""
    text = str(target)
    if "://" in text:
        if text.startswith("postgresql://"):
            return "postgresql+psycopg://" + text[len("postgresql://") :]
        return text
    return f"sqlite:///{Path(text).resolve()}"


def require_store(target: str | Path) -> None:
    """Refuse a SQLite path with no file (E660); a database URL is left to the server.

    Raises:
        AnnotateError: E660 no store at the path (with the command that creates one).
    """
    text = str(target)
    if "://" in text or Path(text).is_file():
        return
    what = "a folder, not a store" if Path(text).is_dir() else "no store"
    raise AnnotateError(Errors.E660_create_one_parakit.format(what=what, text=text))


def check_workers(target: str | Path, workers: int) -> None:
    """Refuse several server processes on a SQLite store (E663).

    SQLite has one writer at a time, and a server queues its writers fairly only inside one
    process: with several processes they meet in SQLite's busy handler, whose back-off left
    annotators waiting 12-15 s for a save during a large import (1-2 s with one process).
    PostgreSQL queues writers across processes.

    Raises:
        AnnotateError: E663 ``workers`` > 1 and ``target`` is a SQLite store.
    """
    if workers > 1 and store_url(target).startswith("sqlite"):
        raise AnnotateError(Errors.E663_sqlite_store_served.format(target=target, workers=workers))


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine configured for durable, concurrent use.

    SQLite: WAL journal, ``synchronous=FULL`` (a commit is fsynced before it is acknowledged),
    foreign keys on, a 30 s busy timeout, and ``BEGIN IMMEDIATE`` for write transactions so
    concurrent writers queue on the lock instead of failing when a read transaction upgrades
    to a write (reads use a plain ``BEGIN`` and never wait for writers, thanks to WAL).
    """
    if url.startswith("sqlite"):
        engine = create_engine(
            url, connect_args={"timeout": 30, "check_same_thread": False}, **kwargs
        )

        @event.listens_for(engine, "connect")
        def _connect(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=FULL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _begin(conn: Any) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE" if _WRITING.get() else "BEGIN")

        return engine
    kwargs.setdefault("pool_size", 10)
    kwargs.setdefault("max_overflow", 20)
    return create_engine(url, pool_pre_ping=True, **kwargs)


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Run the Alembic migrations on ``engine`` up to ``revision``."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def page_of(
    session: Session, model: type[Any], conditions: list[Any], page: int, per_page: int
) -> tuple[list[Any], int]:
    """Page ``page`` (1-based) of the ``model`` rows matching ``conditions`` in id order, and
    how many match: the count and the page both in SQL, never the whole table."""
    total = session.scalar(select(func.count()).select_from(model).where(*conditions)) or 0
    if (max(page, 1) - 1) * per_page >= total:
        # past the end: nothing, and no OFFSET (a huge page number overflows SQLite's 64-bit
        # integers: HTTP 500 for ?page=10**30)
        return [], int(total)
    rows = session.scalars(
        select(model)
        .where(*conditions)
        .order_by(model.id)
        .offset((max(page, 1) - 1) * per_page)
        .limit(per_page)
    )
    return list(rows), int(total)


def submitted_by_item(
    session: Session, project_id: int, task: str = CLASSIFY
) -> dict[int, list[Annotation]]:
    """The submitted annotations of a project's ``task``, per item, oldest first."""
    out: dict[int, list[Annotation]] = {}
    for ann in session.scalars(
        select(Annotation)
        .where(
            Annotation.project_id == project_id,
            Annotation.task == task,
            Annotation.status == "submitted",
        )
        .order_by(Annotation.id)
    ):
        out.setdefault(ann.item_id, []).append(ann)
    return out


def leased(
    session: Session,
    user_id: int,
    *,
    done: bool = False,
    at: datetime | None = None,
    missing: str | None = None,
    **where: Any,
) -> Assignment | None:
    """The open assignment leased to ``user_id`` that matches ``where`` (columns of
    :class:`~parakit.annotate.models.Assignment`: ``item_id=``, ``task=``...), the first in id
    order.

    Args:
        done: or one this user already did (the edit of their own work), preferred.
        at: only a lease that has not expired at this time.
        missing: raise :class:`~parakit.errors.Conflict` with this message when there is none.
    """
    mine = and_(Assignment.status == "open", Assignment.lease_owner == user_id)
    if at is not None:
        mine = and_(mine, Assignment.lease_expires > at)
    order = (Assignment.done_by.is_(None), Assignment.id) if done else (Assignment.id,)
    row = session.scalar(
        select(Assignment)
        .filter_by(**where)
        .where(or_(Assignment.done_by == user_id, mine) if done else mine)
        .order_by(*order)
        .limit(1)
    )
    if row is None and missing is not None:
        raise Conflict(missing)
    return row


class Database:
    """The annotation database (engine, transactions, row lookups by id).

    Args:
        engine: a SQLAlchemy engine made by :func:`make_engine`; use :meth:`open`.
        cheap_hashing: hash new passwords with argon2's cheapest parameters (tests and
            benchmarks only; verification reads the parameters from each hash).
    """

    def __init__(self, engine: Engine, cheap_hashing: bool = False) -> None:
        self.engine = engine
        self.cheap_hashing = cheap_hashing
        self._schemes: dict[int, LabelScheme] = {}
        # SQLite has one writer at a time; queueing writers on a lock in this process is fair
        # and prompt, where SQLite's busy handler sleeps with growing back-off under contention
        self._write_lock = threading.Lock() if engine.dialect.name == "sqlite" else None
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    # -- life cycle ----------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        target: str | Path,
        migrate: bool = True,
        cheap_hashing: bool = False,
        connections: int | None = None,
        create: bool = True,
        **kwargs: Any,
    ) -> Self:
        """Open (and by default create or upgrade) the store at a path or database URL;
        ``connections``: the most database connections this process opens (PostgreSQL; by
        default 30), ``kwargs`` go to the constructor.

        Raises:
            AnnotateError: E660 ``create=False`` and no SQLite file at the path (every command
                but ``annotate init`` and ``restore`` opens so: a mistyped path must not become
                a new, empty store).
        """
        if not create:
            require_store(target)
        options = {}
        if connections is not None and "://" in str(target):
            half = max(1, connections // 2)  # half kept open, half opened under load
            options = {"pool_size": half, "max_overflow": max(0, connections - half)}
        store = cls(
            make_engine(store_url(target), **options), cheap_hashing=cheap_hashing, **kwargs
        )
        if migrate:
            upgrade(store.engine)
            store.tidy()
        return store

    def tidy(self) -> None:
        """Clean up what a killed process left behind; :meth:`open` runs it after migrating
        (the store with its services fills it in)."""

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A session in one transaction, committed on success, rolled back on error; inside
        :meth:`shared_reads`, a read joins the shared session instead."""
        shared = _SHARED.get()
        if shared is not None and shared.bind is self.engine and not _WRITING.get():
            try:
                yield shared
            except BaseException:
                _end(shared)
                raise
            return
        with self._sessions() as session, session.begin():
            yield session

    @contextmanager
    def shared_reads(self) -> Iterator[None]:
        """Within: reads share one session and transaction (a web request's dozen lookups see
        one state of the store and take one connection). Each write still runs and commits
        in its own transaction; it first ends the shared one (so the request never holds two
        connections, and the reads after it see what it wrote)."""
        session = self._sessions(autoflush=False)
        token = _SHARED.set(session)
        try:
            yield
        finally:
            _SHARED.reset(token)
            _end(session)
            session.close()

    @contextmanager
    def writing(self) -> Iterator[None]:
        shared = _SHARED.get()
        if shared is not None:
            _end(shared)
        token = _WRITING.set(True)
        if self._write_lock is not None:
            self._write_lock.acquire()
        try:
            yield
        finally:
            if self._write_lock is not None:
                self._write_lock.release()
            _WRITING.reset(token)

    def write(self, work: Callable[[Session], T], retries: int = 5) -> T:
        """Run ``work`` in a transaction, retrying when the database reports contention."""
        for attempt in range(retries):
            try:
                with self.writing(), self.transaction() as session:
                    return work(session)
            except OperationalError as err:
                text = str(err).lower()
                if attempt + 1 == retries or not (
                    "locked" in text or "serializ" in text or "deadlock" in text
                ):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    # -- locks held by a process while it lives ------------------------------------------------
    @contextmanager
    def hold(self, name: str) -> Iterator[None]:
        """Hold the lock ``name`` while inside; other processes see it held (:meth:`held`)
        until it is released or this process dies (PostgreSQL: a session advisory lock;
        SQLite: ``flock`` of a file beside the database). Names are unique: never waits."""
        if self.engine.dialect.name == "postgresql":
            with self.engine.connect() as conn:
                conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _lock_key(name)})
                conn.commit()
                try:
                    yield
                finally:
                    conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _lock_key(name)})
                    conn.commit()
            return
        path = self._lock_path(name)
        if path is None:  # an in-memory database lives in this process only
            yield
            return
        import fcntl  # POSIX

        with path.open("w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            try:
                yield
            finally:
                path.unlink(missing_ok=True)

    def held(self, name: str) -> bool:
        """Whether a process (this one included) holds the lock ``name`` now."""
        if self.engine.dialect.name == "postgresql":
            with self.engine.connect() as conn:
                key = {"k": _lock_key(name)}
                free = conn.execute(text("SELECT pg_try_advisory_lock(:k)"), key).scalar()
                if free:
                    conn.execute(text("SELECT pg_advisory_unlock(:k)"), key)
                conn.commit()
            return not free
        path = self._lock_path(name)
        if path is None:
            return False
        import fcntl  # POSIX

        try:
            with path.open("r") as handle:  # closing it releases the lock taken here
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except FileNotFoundError:
            return False
        except BlockingIOError:
            return True
        return False

    def _lock_path(self, name: str) -> Path | None:
        database = self.engine.url.database
        if not database or database == ":memory:":
            return None
        return Path(f"{database}-{name}.lock")

    # -- rows by id ------------------------------------------------------------------------------
    def _get(self, model: type[Any], key: int, missing: str) -> Any:
        """One row by primary key, or :class:`NotFound` with the message ``missing``."""
        with self.transaction() as session:
            row = session.get(model, key)
        if row is None:
            raise NotFound(missing)
        return row

    def project(self, project_id: int) -> Project:
        return self._get(Project, project_id, f"no project with id {project_id}")

    def analyze(self, *tables: str) -> None:
        """Refresh PostgreSQL's planner statistics of ``tables`` after a bulk change (an
        import, an assignment of thousands of items): with the statistics of an empty table
        the planner sorts the whole queue for every lease (85 ms at 20k items) instead of
        walking the queue index (0.1 ms). Autovacuum gets there too, but only a minute or so
        later. SQLite plans without statistics; nothing to do there."""
        if self.engine.dialect.name != "postgresql":
            return
        with self.engine.connect() as connection:
            for table in tables:
                connection.exec_driver_sql(f'ANALYZE "{table}"')
            connection.commit()

    def forget_scheme(self, project_id: int) -> None:
        self._schemes.pop(project_id, None)

    def scheme(self, project_id: int) -> LabelScheme:
        """The project's label scheme (cached: a project's scheme never changes)."""
        if project_id not in self._schemes:
            self._schemes[project_id] = scheme_from_spec(self.project(project_id).scheme)
        return self._schemes[project_id]

    def assignment(self, assignment_id: int) -> Assignment:
        return self._get(Assignment, assignment_id, f"no assignment {assignment_id}")

    def item(self, item_id: int) -> Item:
        return self._get(Item, item_id, f"no item {item_id}")

    def document(self, document_id: int) -> DocumentRow:
        return self._get(DocumentRow, document_id, f"no document {document_id}")

    def doc_pair(self, doc_pair_id: int) -> DocPair:
        return self._get(DocPair, doc_pair_id, f"no document pair {doc_pair_id}")


def _end(session: Session) -> None:
    """End a shared read transaction: its rows stay readable (detached), its connection goes
    back to the pool, and the next read begins a new transaction."""
    session.expunge_all()
    session.rollback()


def _lock_key(name: str) -> int:
    """A PostgreSQL advisory lock key (signed 64 bits) for the lock ``name``."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


class Service:
    """A group of use cases on one :class:`Database` (``db``); every write is one transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def transaction(self) -> Any:
        return self.db.transaction()

    def _writing(self) -> Any:
        return self.db.writing()

    def _write(self, work: Callable[[Session], T], retries: int = 5) -> T:
        return self.db.write(work, retries)
