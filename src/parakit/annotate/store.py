"""The annotation store: projects, queues with leases, annotations with revisions, export.

One :class:`Store` wraps a SQLAlchemy engine. SQLite (the default: one file per project, WAL
journal, ``synchronous=FULL``, every write transaction ``BEGIN IMMEDIATE``) or PostgreSQL
(``postgresql+psycopg://...``) for teams. Every method that writes runs in its own transaction
that is committed before it returns, so whatever the web app acknowledges is on disk.

Example:
    >>> from parakit.annotate.store import Store
    >>> store = Store.open("project.sqlite")                      # doctest: +SKIP
    >>> admin = store.add_annotator("ann", "a long password", role="admin")  # doctest: +SKIP
"""

from __future__ import annotations

import contextvars
import hashlib
import random
import secrets
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Engine, and_, create_engine, delete, event, exists, func, or_, select, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, aliased, sessionmaker

from parakit.annotate.models import (
    ROLES,
    Annotation,
    Annotator,
    Assignment,
    DocPair,
    DocumentRow,
    Item,
    LoginSession,
    Member,
    Project,
)
from parakit.errors import ParakitError
from parakit.labels import LabelScheme, scheme_from_spec
from parakit.schema import Document, Judgment, Pair, PairSet, Span

T = TypeVar("T")
#: set while a write transaction opens, so SQLite takes the write lock up front
_WRITING: contextvars.ContextVar[bool] = contextvars.ContextVar("parakit_writing", default=False)
MIGRATIONS = Path(__file__).with_name("migrations")


class AnnotateError(ParakitError):
    """An annotation-store error (codes ``E6xx``)."""

    code = "E600"


class NotFound(AnnotateError):
    code = "E601"


class Forbidden(AnnotateError):
    code = "E602"


class Conflict(AnnotateError):
    """A stale revision, a lost lease or a duplicate name (HTTP 409)."""

    code = "E603"


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
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20, **kwargs)


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Run the Alembic migrations on ``engine`` up to ``revision``."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def hash_password(password: str, cheap: bool = False) -> str:
    """An argon2id hash of ``password`` (argon2-cffi's RFC 9106 low-memory profile;
    ``cheap=True``: the library's cheapest parameters, for tests only)."""
    from argon2 import PasswordHasher, profiles

    profile = profiles.CHEAPEST if cheap else profiles.RFC_9106_LOW_MEMORY
    return PasswordHasher.from_parameters(profile).hash(password)


def check_password(password_hash: str, password: str) -> bool:
    from argon2 import PasswordHasher
    from argon2.exceptions import InvalidHashError, VerificationError

    try:
        return PasswordHasher().verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class User:
    """The logged-in annotator as the web app sees it."""

    id: int
    name: str
    role: str

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    @property
    def can_adjudicate(self) -> bool:
        return self.role in ("admin", "adjudicator")


@dataclass(frozen=True)
class Saved:
    """The result of saving an annotation."""

    annotation_id: int
    revision: int
    status: str


class Store:
    """The annotation database.

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
    def open(cls, target: str | Path, migrate: bool = True, cheap_hashing: bool = False) -> Store:
        """Open (and by default create or upgrade) the store at a path or database URL."""
        store = cls(make_engine(store_url(target)), cheap_hashing=cheap_hashing)
        if migrate:
            upgrade(store.engine)
        return store

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A session in one transaction, committed on success, rolled back on error."""
        with self._sessions() as session, session.begin():
            yield session

    @contextmanager
    def _writing(self) -> Iterator[None]:
        token = _WRITING.set(True)
        if self._write_lock is not None:
            self._write_lock.acquire()
        try:
            yield
        finally:
            if self._write_lock is not None:
                self._write_lock.release()
            _WRITING.reset(token)

    def _write(self, work: Callable[[Session], T], retries: int = 5) -> T:
        """Run ``work`` in a transaction, retrying when the database reports contention."""
        for attempt in range(retries):
            try:
                with self._writing(), self.transaction() as session:
                    return work(session)
            except OperationalError as err:
                text = str(err).lower()
                if attempt + 1 == retries or not (
                    "locked" in text or "serializ" in text or "deadlock" in text
                ):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    # -- annotators and sessions -----------------------------------------------------------------
    def add_annotator(self, name: str, password: str, role: str = "annotator") -> int:
        """Create an annotator with an argon2-hashed password; returns its id."""
        if role not in ROLES:
            raise AnnotateError(
                f"unknown role {role!r}; choose one of {', '.join(ROLES)}", code="E604"
            )
        if len(password) < 8:
            raise AnnotateError("passwords must have at least 8 characters", code="E605")
        digest = hash_password(password, cheap=self.cheap_hashing)

        def work(session: Session) -> int:
            if session.scalar(select(Annotator.id).where(Annotator.name == name)) is not None:
                raise Conflict(f"annotator {name!r} already exists")
            row = Annotator(
                name=name, password_hash=digest, role=role, active=True, created_at=utcnow()
            )
            session.add(row)
            session.flush()
            return row.id

        return self._write(work)

    def authenticate(self, name: str, password: str) -> User | None:
        """The user if ``password`` is right, else None."""
        with self.transaction() as session:
            row = session.scalar(select(Annotator).where(Annotator.name == name))
        if row is None or not row.active:
            check_password(hash_password("timing-equaliser", cheap=self.cheap_hashing), password)
            return None
        if not check_password(row.password_hash, password):
            return None
        return User(row.id, row.name, row.role)

    def start_session(self, user_id: int, ttl: timedelta) -> str:
        """A new login session lasting ``ttl``; returns the token for the cookie."""
        token = secrets.token_urlsafe(32)
        now = utcnow()

        def work(session: Session) -> None:
            session.execute(delete(LoginSession).where(LoginSession.expires_at < now))
            session.add(
                LoginSession(
                    token_hash=_token_hash(token),
                    annotator_id=user_id,
                    created_at=now,
                    expires_at=now + ttl,
                )
            )

        self._write(work)
        return token

    def session_user(self, token: str | None) -> User | None:
        """The user of an unexpired session token, else None."""
        if not token:
            return None
        with self.transaction() as session:
            row = session.execute(
                select(Annotator)
                .join(LoginSession, LoginSession.annotator_id == Annotator.id)
                .where(
                    LoginSession.token_hash == _token_hash(token),
                    LoginSession.expires_at > utcnow(),
                    Annotator.active.is_(True),
                )
            ).scalar_one_or_none()
        return None if row is None else User(row.id, row.name, row.role)

    def end_session(self, token: str) -> None:
        self._write(
            lambda s: s.execute(
                delete(LoginSession).where(LoginSession.token_hash == _token_hash(token))
            )
        )

    def annotator_id(self, name: str) -> int:
        with self.transaction() as session:
            value = session.scalar(select(Annotator.id).where(Annotator.name == name))
        if value is None:
            raise NotFound(
                f"no annotator named {name!r}; create it with 'parakit annotate add-user'"
            )
        return value

    def annotator_names(self) -> dict[int, str]:
        with self.transaction() as session:
            return dict(session.execute(select(Annotator.id, Annotator.name)).all())

    # -- projects ------------------------------------------------------------------------------
    def create_project(
        self,
        name: str,
        scheme: str | dict[str, Any] | LabelScheme,
        settings: dict[str, Any] | None = None,
    ) -> int:
        """Create a project. ``settings``: ``classify_mode`` (``single``/``double``) for
        pairs extracted in the tool; ``question``: the instruction shown above the label
        buttons (e.g. one Likert aspect of M13: "Fluency of statement 2")."""
        spec = scheme.spec() if isinstance(scheme, LabelScheme) else scheme_from_spec(scheme).spec()

        def work(session: Session) -> int:
            if session.scalar(select(Project.id).where(Project.name == name)) is not None:
                raise Conflict(f"project {name!r} already exists")
            row = Project(
                name=name, scheme=spec, settings=dict(settings or {}), created_at=utcnow()
            )
            session.add(row)
            session.flush()
            return row.id

        return self._write(work)

    def _get(self, model: type[Any], key: int, missing: str) -> Any:
        """One row by primary key, or :class:`NotFound` with the message ``missing``."""
        with self.transaction() as session:
            row = session.get(model, key)
        if row is None:
            raise NotFound(missing)
        return row

    def project(self, project_id: int) -> Project:
        return self._get(Project, project_id, f"no project with id {project_id}")

    def project_id(self, name: str) -> int:
        with self.transaction() as session:
            value = session.scalar(select(Project.id).where(Project.name == name))
        if value is None:
            raise NotFound(f"no project named {name!r}")
        return value

    def scheme(self, project_id: int) -> LabelScheme:
        """The project's label scheme (cached: a project's scheme never changes)."""
        if project_id not in self._schemes:
            self._schemes[project_id] = scheme_from_spec(self.project(project_id).scheme)
        return self._schemes[project_id]

    def projects_for(self, user: User) -> list[Project]:
        with self.transaction() as session:
            query = select(Project).order_by(Project.id)
            if not user.is_admin:
                query = query.join(Member, Member.project_id == Project.id).where(
                    Member.annotator_id == user.id
                )
            return list(session.scalars(query))

    def add_member(self, project_id: int, annotator_id: int) -> None:
        def work(session: Session) -> None:
            if session.get(Member, (project_id, annotator_id)) is None:
                session.add(Member(project_id=project_id, annotator_id=annotator_id))

        self._write(work)

    def can_access(self, user: User, project_id: int) -> bool:
        if user.is_admin:
            return True
        with self.transaction() as session:
            return session.get(Member, (project_id, user.id)) is not None

    # -- import --------------------------------------------------------------------------------
    def _documents(
        self, session: Session, project_id: int, documents: Iterable[Document]
    ) -> dict[str, int]:
        ids = dict(
            session.execute(
                select(DocumentRow.key, DocumentRow.id).where(DocumentRow.project_id == project_id)
            ).all()
        )
        for doc in documents:
            if doc.id in ids:
                continue
            row = DocumentRow(
                project_id=project_id, key=doc.id, text=doc.text, meta=dict(doc.metadata)
            )
            session.add(row)
            session.flush()
            ids[doc.id] = row.id
        return ids

    def import_pairs(self, project_id: int, pairs: PairSet) -> int:
        """Add candidate pairs (with their documents, for context); returns how many."""
        pairs.verify_spans()

        def work(session: Session) -> int:
            doc_ids = self._documents(session, project_id, pairs.documents.values())
            now = utcnow()
            for pair in pairs:
                s1, s2 = pair.span1, pair.span2
                session.add(
                    Item(
                        project_id=project_id,
                        key=pair.id,
                        text1=pair.text1,
                        text2=pair.text2,
                        doc1_id=doc_ids[s1.doc_id] if s1 else None,
                        begin1=s1.begin if s1 else None,
                        end1=s1.end if s1 else None,
                        doc2_id=doc_ids[s2.doc_id] if s2 else None,
                        begin2=s2.begin if s2 else None,
                        end2=s2.end if s2 else None,
                        source=pair.source,
                        group=pair.group,
                        origin="import",
                        created_at=now,
                        meta=dict(pair.metadata),
                    )
                )
            session.flush()
            return len(pairs)

        try:
            return self._write(work)
        except IntegrityError as err:
            raise Conflict(
                f"pair ids already present in project {project_id}: {err.orig}"
            ) from None

    def import_document_pairs(self, project_id: int, pairs: PairSet) -> int:
        """Add document pairs for extraction: each pair's ``text1``/``text2`` are whole
        documents (``<id>-1``/``<id>-2``); ``metadata['alignment']`` may hold aligned
        ``[[begin1, end1, begin2, end2], ...]`` segments (timestamps, paragraphs)."""

        def work(session: Session) -> int:
            for pair in pairs:
                meta = dict(pair.metadata)
                docs = [
                    Document(
                        f"{pair.id}-{side}",
                        text,
                        {k: v for k, v in meta.items() if k != "alignment"},
                    )
                    for side, text in ((1, pair.text1), (2, pair.text2))
                ]
                ids = self._documents(session, project_id, docs)
                session.add(
                    DocPair(
                        project_id=project_id,
                        key=pair.id,
                        doc1_id=ids[docs[0].id],
                        doc2_id=ids[docs[1].id],
                        source=pair.source,
                        status="open",
                        meta=meta,
                    )
                )
            session.flush()
            return len(pairs)

        try:
            return self._write(work)
        except IntegrityError as err:
            raise Conflict(f"document pair ids already present: {err.orig}") from None

    # -- assignment ----------------------------------------------------------------------------
    def assign(
        self,
        project_id: int,
        *,
        mode: str = "single",
        annotators: list[int] | None = None,
        batch: str = "default",
        items: list[int] | None = None,
        seed: int = 0,
    ) -> int:
        """Queue the project's unassigned items for classification (T9).

        Args:
            mode: ``single`` (one annotation per item) or ``double`` (two, by different people).
            annotators: give items round-robin to these annotators' personal queues; default:
                a shared pool that anyone in the project draws from.
            batch: batch name; queues serve batches in name order.
            items: restrict to these item ids.
            seed: shuffles the order of the batch.
        Returns:
            the number of assignments made.
        """
        if mode not in ("single", "double"):
            raise AnnotateError(f"unknown mode {mode!r}; use 'single' or 'double'", code="E606")
        slots = 1 if mode == "single" else 2
        if annotators is not None and mode == "double" and len(set(annotators)) < 2:
            raise AnnotateError("double annotation needs at least two annotators", code="E606")

        def work(session: Session) -> int:
            query = select(Item.id).where(
                Item.project_id == project_id,
                Item.origin != "rewrite",
                ~exists().where(Assignment.item_id == Item.id, Assignment.task == "classify"),
            )
            if items is not None:
                query = query.where(Item.id.in_(items))
            ids = list(session.scalars(query.order_by(Item.id)))
            random.Random(seed).shuffle(ids)
            start = (
                session.scalar(
                    select(func.coalesce(func.max(Assignment.position), 0)).where(
                        Assignment.project_id == project_id
                    )
                )
                or 0
            )
            made = 0
            for n, item_id in enumerate(ids):
                for slot in range(1, slots + 1):
                    who = None
                    if annotators:
                        who = annotators[(n * slots + slot - 1) % len(annotators)]
                    session.add(
                        Assignment(
                            project_id=project_id,
                            task="classify",
                            item_id=item_id,
                            slot=slot,
                            batch=batch,
                            position=start + n + 1,
                            annotator_id=who,
                            status="open",
                        )
                    )
                    made += 1
            return made

        return self._write(work)

    def assign_document_pairs(
        self, project_id: int, annotators: list[int] | None = None, batch: str = "default"
    ) -> int:
        """Queue unassigned document pairs for extraction (shared pool or round-robin)."""

        def work(session: Session) -> int:
            ids = list(
                session.scalars(
                    select(DocPair.id)
                    .where(
                        DocPair.project_id == project_id,
                        ~exists().where(Assignment.doc_pair_id == DocPair.id),
                    )
                    .order_by(DocPair.id)
                )
            )
            for n, dp in enumerate(ids):
                who = annotators[n % len(annotators)] if annotators else None
                session.add(
                    Assignment(
                        project_id=project_id,
                        task="extract",
                        doc_pair_id=dp,
                        slot=1,
                        batch=batch,
                        position=n + 1,
                        annotator_id=who,
                        status="open",
                    )
                )
            return len(ids)

        return self._write(work)

    def lease_next(
        self,
        project_id: int,
        user_id: int,
        task: str = "classify",
        lease: timedelta = timedelta(minutes=30),
    ) -> Assignment | None:
        """The assignment this annotator works on next, leased to them until ``now + lease``.

        An unexpired lease the annotator already holds is returned first (a refresh shows the
        same item); otherwise the next open assignment of their queue or the pool whose lease
        is free or expired. The claim is a conditional UPDATE, so two annotators never hold
        the same assignment, and an annotator never gets both slots of a double item.
        """
        now = utcnow()
        other = aliased(Assignment)
        skip_locked = self.engine.dialect.name == "postgresql"
        for _ in range(20):
            with self._writing(), self.transaction() as session:
                held = session.scalar(
                    select(Assignment)
                    .where(
                        Assignment.project_id == project_id,
                        Assignment.task == task,
                        Assignment.status == "open",
                        Assignment.lease_owner == user_id,
                        Assignment.lease_expires > now,
                    )
                    .order_by(Assignment.id)
                    .limit(1)
                )
                if held is not None:
                    return held
                same_item = exists().where(
                    other.task == Assignment.task,
                    other.id != Assignment.id,
                    or_(
                        and_(Assignment.item_id.is_not(None), other.item_id == Assignment.item_id),
                        and_(
                            Assignment.doc_pair_id.is_not(None),
                            other.doc_pair_id == Assignment.doc_pair_id,
                        ),
                    ),
                    or_(
                        other.done_by == user_id,
                        and_(other.lease_owner == user_id, other.lease_expires > now),
                    ),
                )
                candidates: list[int] = []
                # the personal queue first, then the shared pool; each query walks the
                # ix_assignments_next index in queue order and stops after a few rows
                for owner in (
                    Assignment.annotator_id == user_id,
                    Assignment.annotator_id.is_(None),
                ):
                    query = (
                        select(Assignment.id)
                        .where(
                            Assignment.project_id == project_id,
                            Assignment.task == task,
                            Assignment.status == "open",
                            owner,
                            or_(Assignment.exclude_id.is_(None), Assignment.exclude_id != user_id),
                            or_(Assignment.lease_owner.is_(None), Assignment.lease_expires <= now),
                            ~same_item,
                        )
                        .order_by(
                            Assignment.batch, Assignment.position, Assignment.slot, Assignment.id
                        )
                    )
                    if skip_locked:
                        # PostgreSQL: lock one free row, skipping rows that concurrent claims
                        # hold, instead of every claim queueing on the same first rows
                        query = query.limit(1).with_for_update(skip_locked=True, of=Assignment)
                    else:
                        query = query.limit(5)
                    candidates += session.scalars(query)
                    if candidates:
                        break
                if not candidates:
                    return None
                for candidate in candidates:
                    claimed = session.execute(
                        update(Assignment)
                        .where(
                            Assignment.id == candidate,
                            Assignment.status == "open",
                            or_(Assignment.lease_owner.is_(None), Assignment.lease_expires <= now),
                        )
                        .values(lease_owner=user_id, lease_expires=now + lease)
                    ).rowcount
                    if claimed == 1:
                        return session.get(Assignment, candidate)
            # every candidate was taken by someone else meanwhile: look again
        return None

    def release(self, assignment_id: int, user_id: int) -> None:
        """Give a leased assignment back to the queue (skip)."""
        self._write(
            lambda s: s.execute(
                update(Assignment)
                .where(
                    Assignment.id == assignment_id,
                    Assignment.lease_owner == user_id,
                    Assignment.status == "open",
                )
                .values(lease_owner=None, lease_expires=None)
            )
        )

    def assignment(self, assignment_id: int) -> Assignment:
        return self._get(Assignment, assignment_id, f"no assignment {assignment_id}")

    def progress(self, project_id: int, user_id: int, task: str = "classify") -> dict[str, int]:
        """Items (or document pairs) this annotator has done, and those still open to them
        (the second slot of an item they already answered does not count)."""
        other = aliased(Assignment)
        target = func.coalesce(Assignment.item_id, -Assignment.doc_pair_id)
        with self.transaction() as session:
            done = (
                session.scalar(
                    select(func.count()).where(
                        Assignment.project_id == project_id,
                        Assignment.task == task,
                        Assignment.done_by == user_id,
                    )
                )
                or 0
            )
            remaining = (
                session.scalar(
                    select(func.count(func.distinct(target))).where(
                        Assignment.project_id == project_id,
                        Assignment.task == task,
                        Assignment.status == "open",
                        or_(Assignment.annotator_id.is_(None), Assignment.annotator_id == user_id),
                        or_(Assignment.exclude_id.is_(None), Assignment.exclude_id != user_id),
                        ~exists().where(
                            other.task == task,
                            other.done_by == user_id,
                            func.coalesce(other.item_id, -other.doc_pair_id) == target,
                        ),
                    )
                )
                or 0
            )
        return {"done": int(done), "remaining": int(remaining)}

    # -- items and annotations -----------------------------------------------------------------
    def item(self, item_id: int) -> Item:
        return self._get(Item, item_id, f"no item {item_id}")

    def document(self, document_id: int) -> DocumentRow:
        return self._get(DocumentRow, document_id, f"no document {document_id}")

    def annotation(self, item_id: int, user_id: int, task: str = "classify") -> Annotation | None:
        """This annotator's own annotation (draft or submitted) of an item, if any."""
        with self.transaction() as session:
            return session.scalar(
                select(Annotation).where(
                    Annotation.item_id == item_id,
                    Annotation.annotator_id == user_id,
                    Annotation.task == task,
                )
            )

    def _own_assignment(
        self, session: Session, item_id: int, user_id: int, task: str
    ) -> Assignment:
        row = session.scalar(
            select(Assignment)
            .where(
                Assignment.item_id == item_id,
                Assignment.task == task,
                or_(
                    Assignment.done_by == user_id,
                    and_(Assignment.status == "open", Assignment.lease_owner == user_id),
                ),
            )
            .order_by(Assignment.done_by.is_(None))
            .limit(1)
        )
        if row is None:
            raise Conflict(
                f"item {item_id} is not leased to you (the lease expired and the item "
                "went to someone else, or it was never yours); load the next item"
            )
        return row

    def save(
        self,
        item_id: int,
        user_id: int,
        *,
        label: str | None,
        revision: int,
        submit: bool,
        rewrite: tuple[str, str] | None = None,
        unsure: bool = False,
        comment: str | None = None,
        task: str = "classify",
    ) -> Saved:
        """Save a draft (``submit=False``) or submit an annotation.

        Args:
            revision: the revision the client's form was based on (0 for a new annotation);
                a mismatch means a newer answer exists and raises :class:`Conflict`.
        Raises:
            Conflict: stale revision or lease lost; LabelError: invalid label for the scheme.
        """
        item = self.item(item_id)
        scheme = self.scheme(item.project_id)
        canonical = None
        if label is not None and label != "":
            canonical = scheme.normalize(label)
        elif submit:
            raise AnnotateError("a submitted annotation needs a label", code="E607")
        flags = ""
        if canonical is not None:
            flags = "".join(scheme.parse(canonical).flags)
        if rewrite is not None and not any(part.strip() for part in rewrite):
            rewrite = None
        now = utcnow()

        def work(session: Session) -> Saved:
            assignment = self._own_assignment(session, item_id, user_id, task)
            row = session.scalar(
                select(Annotation).where(
                    Annotation.item_id == item_id,
                    Annotation.annotator_id == user_id,
                    Annotation.task == task,
                )
            )
            if row is not None and row.status == "submitted" and not submit:
                raise Conflict("this item is already submitted; submit again to change it")
            values = dict(
                label=canonical,
                flags=flags,
                rewrite1=rewrite[0] if rewrite else None,
                rewrite2=rewrite[1] if rewrite else None,
                unsure=unsure,
                comment=comment or None,
                updated_at=now,
            )
            if submit:
                values.update(status="submitted", submitted_at=now)
            if row is None:
                if revision != 0:
                    raise Conflict(f"stale revision {revision}: the annotation does not exist yet")
                row = Annotation(
                    project_id=item.project_id,
                    item_id=item_id,
                    annotator_id=user_id,
                    assignment_id=assignment.id,
                    task=task,
                    status=values.pop("status", "draft"),
                    revision=1,
                    created_at=now,
                    **values,
                )
                session.add(row)
                session.flush()
                new_revision = 1
            else:
                changed = session.execute(
                    update(Annotation)
                    .where(
                        Annotation.id == row.id,
                        Annotation.revision == revision,
                    )
                    .values(revision=Annotation.revision + 1, **values)
                ).rowcount
                if changed != 1:
                    raise Conflict(
                        f"stale revision {revision}: the item was saved as revision "
                        f"{row.revision} in another tab; reload to see it"
                    )
                new_revision = revision + 1
            if submit:
                assignment.status = "done"
                assignment.done_by = user_id
                assignment.done_at = assignment.done_at or now
                assignment.lease_owner = None
                assignment.lease_expires = None
                session.flush()
                if task == "classify":
                    self._settle(session, item_id)
            return Saved(row.id, new_revision, "submitted" if submit else "draft")

        try:
            return self._write(work)
        except IntegrityError:
            raise Conflict("the annotation was created in another tab; reload") from None

    def _settle(self, session: Session, item_id: int) -> None:
        """Set the item's label when all its classification assignments agree."""
        item = session.get(Item, item_id)
        if item is None or item.resolved_by is not None:
            return
        open_left = (
            session.scalar(
                select(func.count()).where(
                    Assignment.item_id == item_id,
                    Assignment.task == "classify",
                    Assignment.status != "done",
                )
            )
            or 0
        )
        labels = set(
            session.scalars(
                select(Annotation.label).where(
                    Annotation.item_id == item_id,
                    Annotation.task == "classify",
                    Annotation.status == "submitted",
                )
            )
        )
        item.label = labels.pop() if open_left == 0 and len(labels) == 1 else None

    def history(
        self, project_id: int, user_id: int, task: str = "classify", limit: int = 50
    ) -> list[Annotation]:
        """This annotator's submitted annotations, newest first (for back/undo)."""
        with self.transaction() as session:
            return list(
                session.scalars(
                    select(Annotation)
                    .where(
                        Annotation.project_id == project_id,
                        Annotation.annotator_id == user_id,
                        Annotation.task == task,
                        Annotation.status == "submitted",
                    )
                    .order_by(Annotation.submitted_at.desc(), Annotation.id.desc())
                    .limit(limit)
                )
            )

    def submitted(self, project_id: int, task: str = "classify") -> list[Annotation]:
        with self.transaction() as session:
            return list(
                session.scalars(
                    select(Annotation)
                    .where(
                        Annotation.project_id == project_id,
                        Annotation.task == task,
                        Annotation.status == "submitted",
                    )
                    .order_by(Annotation.id)
                )
            )

    def count_annotations(self, project_id: int | None = None, status: str = "submitted") -> int:
        with self.transaction() as session:
            query = select(func.count()).select_from(Annotation).where(Annotation.status == status)
            if project_id is not None:
                query = query.where(Annotation.project_id == project_id)
            return int(session.scalar(query) or 0)

    # -- extraction (T6) -------------------------------------------------------------------------
    def doc_pair(self, doc_pair_id: int) -> DocPair:
        return self._get(DocPair, doc_pair_id, f"no document pair {doc_pair_id}")

    def _extract_assignment(self, session: Session, doc_pair_id: int, user_id: int) -> Assignment:
        row = session.scalar(
            select(Assignment).where(
                Assignment.doc_pair_id == doc_pair_id,
                Assignment.task == "extract",
                or_(Assignment.done_by == user_id, Assignment.lease_owner == user_id),
            )
        )
        if row is None:
            raise Conflict(f"document pair {doc_pair_id} is not leased to you")
        return row

    def add_extracted_pair(
        self, doc_pair_id: int, user_id: int, begin1: int, end1: int, begin2: int, end2: int
    ) -> int:
        """Store a pair selected in the extraction view; queue it for classification with the
        project's ``classify_mode``. Returns the new item id."""
        now = utcnow()

        def work(session: Session) -> int:
            self._extract_assignment(session, doc_pair_id, user_id)
            dp = session.get(DocPair, doc_pair_id)
            assert dp is not None
            project = session.get(Project, dp.project_id)
            assert project is not None
            doc1 = session.get(DocumentRow, dp.doc1_id)
            doc2 = session.get(DocumentRow, dp.doc2_id)
            assert doc1 is not None and doc2 is not None
            for doc, begin, end in ((doc1, begin1, end1), (doc2, begin2, end2)):
                if not 0 <= begin < end <= len(doc.text):
                    raise AnnotateError(
                        f"span [{begin}, {end}) does not fit document "
                        f"{doc.key!r} of length {len(doc.text)}",
                        code="E608",
                    )
            count = session.scalar(select(func.count()).where(Item.doc_pair_id == dp.id)) or 0
            item = Item(
                project_id=dp.project_id,
                key=f"{dp.key}-{count + 1}",
                text1=doc1.text[begin1:end1],
                text2=doc2.text[begin2:end2],
                doc1_id=doc1.id,
                begin1=begin1,
                end1=end1,
                doc2_id=doc2.id,
                begin2=begin2,
                end2=end2,
                doc_pair_id=dp.id,
                source=dp.source,
                group=dp.key,
                origin="extracted",
                author_id=user_id,
                created_at=now,
                meta={},
            )
            session.add(item)
            session.flush()
            mode = (project.settings or {}).get("classify_mode", "single")
            position = (
                session.scalar(
                    select(func.max(Assignment.position)).where(
                        Assignment.project_id == dp.project_id
                    )
                )
                or 0
            ) + 1
            for slot in range(1, (2 if mode == "double" else 1) + 1):
                session.add(
                    Assignment(
                        project_id=dp.project_id,
                        task="classify",
                        item_id=item.id,
                        slot=slot,
                        batch="extracted",
                        position=position,
                        status="open",
                    )
                )
            return item.id

        return self._write(work)

    def delete_extracted_pair(self, item_id: int, user_id: int) -> None:
        """Remove a pair this annotator extracted, while nobody has classified it."""

        def work(session: Session) -> None:
            item = session.get(Item, item_id)
            if item is None or item.author_id != user_id or item.origin != "extracted":
                raise Forbidden(f"item {item_id} is not a pair you extracted")
            if session.scalar(select(func.count()).where(Annotation.item_id == item_id)):
                raise Conflict(f"item {item_id} is already being classified")
            session.execute(delete(Assignment).where(Assignment.item_id == item_id))
            session.delete(item)

        self._write(work)

    def extracted_pairs(self, doc_pair_id: int) -> list[Item]:
        with self.transaction() as session:
            return list(
                session.scalars(
                    select(Item).where(Item.doc_pair_id == doc_pair_id).order_by(Item.id)
                )
            )

    def finish_doc_pair(self, doc_pair_id: int, user_id: int, empty: bool = False) -> None:
        """Mark a document pair finished (or empty: nothing to extract)."""
        now = utcnow()

        def work(session: Session) -> None:
            assignment = self._extract_assignment(session, doc_pair_id, user_id)
            dp = session.get(DocPair, doc_pair_id)
            assert dp is not None
            has_pairs = session.scalar(select(func.count()).where(Item.doc_pair_id == dp.id))
            if empty and has_pairs:
                raise AnnotateError(
                    "this document pair has extracted pairs; delete them before marking it empty",
                    code="E609",
                )
            dp.status = "empty" if empty or not has_pairs else "finished"
            dp.finished_by = user_id
            dp.finished_at = now
            assignment.status = "done"
            assignment.done_by = user_id
            assignment.done_at = now
            assignment.lease_owner = None
            assignment.lease_expires = None

        self._write(work)

    def extraction_rows(self, project_id: int) -> list[dict[str, Any]]:
        """Closed document pairs with their texts and selected spans (for statistics)."""
        with self.transaction() as session:
            pairs = list(
                session.scalars(
                    select(DocPair).where(
                        DocPair.project_id == project_id, DocPair.status.in_(("finished", "empty"))
                    )
                )
            )
            out = []
            for dp in pairs:
                doc1 = session.get(DocumentRow, dp.doc1_id)
                doc2 = session.get(DocumentRow, dp.doc2_id)
                items = list(session.scalars(select(Item).where(Item.doc_pair_id == dp.id)))
                out.append(
                    {
                        "source": dp.source or "unknown",
                        "text1": doc1.text if doc1 else "",
                        "text2": doc2.text if doc2 else "",
                        "spans1": [(i.begin1, i.end1) for i in items],
                        "spans2": [(i.begin2, i.end2) for i in items],
                    }
                )
        return out

    # -- adjudication, QA, rewrite check --------------------------------------------------------
    def disagreements(self, project_id: int) -> list[tuple[Item, list[Annotation]]]:
        """Items with at least two submitted classifications that differ and no resolution."""
        with self.transaction() as session:
            rows = list(
                session.scalars(
                    select(Annotation)
                    .where(
                        Annotation.project_id == project_id,
                        Annotation.task == "classify",
                        Annotation.status == "submitted",
                    )
                    .order_by(Annotation.item_id, Annotation.id)
                )
            )
            by_item: dict[int, list[Annotation]] = {}
            for row in rows:
                by_item.setdefault(row.item_id, []).append(row)
            out = []
            for item_id, anns in by_item.items():
                if len(anns) < 2 or len({a.label for a in anns}) < 2:
                    continue
                item = session.get(Item, item_id)
                if item is not None and item.resolved_by is None:
                    out.append((item, anns))
        return out

    def resolve(self, item_id: int, label: str, user_id: int) -> None:
        """Record the adjudicated label of an item (consensus or QA correction)."""
        item = self.item(item_id)
        canonical = self.scheme(item.project_id).normalize(label)
        now = utcnow()

        def work(session: Session) -> None:
            session.execute(
                update(Item)
                .where(Item.id == item_id)
                .values(label=canonical, resolved_by=user_id, resolved_at=now)
            )

        self._write(work)

    def qa_queue(self, project_id: int) -> list[tuple[Item, Annotation]]:
        """T8: submitted classifications carrying the flags ``s`` or ``i``, oldest first."""
        with self.transaction() as session:
            rows = session.execute(
                select(Item, Annotation)
                .join(Annotation, Annotation.item_id == Item.id)
                .where(
                    Annotation.project_id == project_id,
                    Annotation.task == "classify",
                    Annotation.status == "submitted",
                    or_(Annotation.flags.contains("s"), Annotation.flags.contains("i")),
                    Item.resolved_by.is_(None),
                )
                .order_by(Annotation.submitted_at, Annotation.id)
            ).all()
        return list(rows)

    def make_rewrite_check(
        self, project_id: int, seed: int = 0, batch: str = "rewrite-check"
    ) -> int:
        """T10: a batch mixing every rewrite 50/50 with ordinary labelled pairs, shuffled.

        Each rewrite becomes an item (``origin='rewrite'``); the batch is shown without
        context or provenance and never to the rewrite's author (nor an ordinary pair to the
        person who labelled it). Returns the number of assignments made.
        """
        now = utcnow()

        def work(session: Session) -> int:
            rewrites = list(
                session.scalars(
                    select(Annotation)
                    .where(
                        Annotation.project_id == project_id,
                        Annotation.task == "classify",
                        Annotation.status == "submitted",
                        Annotation.rewrite1.is_not(None),
                    )
                    .order_by(Annotation.id)
                )
            )
            entries: list[tuple[int, int | None]] = []
            for ann in rewrites:
                key = f"rewrite-{ann.id}"
                existing = session.scalar(
                    select(Item.id).where(Item.project_id == project_id, Item.key == key)
                )
                if existing is not None:
                    continue
                parent = session.get(Item, ann.item_id)
                assert parent is not None
                item = Item(
                    project_id=project_id,
                    key=key,
                    text1=ann.rewrite1 or "",
                    text2=ann.rewrite2 or "",
                    origin="rewrite",
                    parent_id=parent.id,
                    author_id=ann.annotator_id,
                    group=parent.group,
                    source=parent.source,
                    created_at=now,
                    meta={},
                )
                session.add(item)
                session.flush()
                entries.append((item.id, ann.annotator_id))
            checked = set(
                session.scalars(
                    select(Assignment.item_id).where(
                        Assignment.project_id == project_id, Assignment.task == "rewrite-check"
                    )
                )
            )
            normal = list(
                session.execute(
                    select(Annotation.item_id, Annotation.annotator_id)
                    .join(Item, Item.id == Annotation.item_id)
                    .where(
                        Annotation.project_id == project_id,
                        Annotation.task == "classify",
                        Annotation.status == "submitted",
                        Item.origin != "rewrite",
                        Item.label.is_not(None),
                    )
                    .order_by(Annotation.id)
                ).all()
            )
            seen: dict[int, int] = {}
            for item_id, who in normal:
                if item_id not in checked:
                    seen.setdefault(item_id, who)
            rng = random.Random(seed)
            pool = sorted(seen.items())
            rng.shuffle(pool)
            entries += pool[: len(entries)]
            rng.shuffle(entries)
            start = (
                session.scalar(
                    select(func.max(Assignment.position)).where(Assignment.project_id == project_id)
                )
                or 0
            ) + 1
            for n, (item_id, exclude) in enumerate(entries):
                session.add(
                    Assignment(
                        project_id=project_id,
                        task="rewrite-check",
                        item_id=item_id,
                        slot=1,
                        batch=batch,
                        position=start + n,
                        exclude_id=exclude,
                        status="open",
                    )
                )
            return len(entries)

        return self._write(work)

    # -- export --------------------------------------------------------------------------------
    def to_pairset(
        self, project_id: int, *, labelled_only: bool = True, judgments: bool = False
    ) -> PairSet:
        """The project's pairs (imported and extracted; not rewrite-check items) as a PairSet
        with the documents their spans point into, the annotators' rewrites and, on request,
        the individual judgments."""
        project = self.project(project_id)
        names = self.annotator_names()
        with self.transaction() as session:
            items = list(
                session.scalars(
                    select(Item)
                    .where(Item.project_id == project_id, Item.origin != "rewrite")
                    .order_by(Item.id)
                )
            )
            anns: dict[int, list[Annotation]] = {}
            for ann in session.scalars(
                select(Annotation)
                .where(
                    Annotation.project_id == project_id,
                    Annotation.task == "classify",
                    Annotation.status == "submitted",
                )
                .order_by(Annotation.id)
            ):
                anns.setdefault(ann.item_id, []).append(ann)
            docs = {
                d.id: d
                for d in session.scalars(
                    select(DocumentRow).where(DocumentRow.project_id == project_id)
                )
            }
        pairs = []
        used: dict[str, Document] = {}
        for item in items:
            if labelled_only and item.label is None:
                continue
            spans = []
            for doc_id, begin, end in (
                (item.doc1_id, item.begin1, item.end1),
                (item.doc2_id, item.begin2, item.end2),
            ):
                if doc_id is None or begin is None or end is None:
                    spans.append(None)
                    continue
                doc = docs[doc_id]
                used[doc.key] = Document(doc.key, doc.text, dict(doc.meta or {}))
                spans.append(Span(doc.key, begin, end))
            own = anns.get(item.id, [])
            rewrites = tuple((a.rewrite1 or "", a.rewrite2 or "") for a in own if a.rewrite1)
            judged = (
                tuple(
                    Judgment(
                        annotator=names.get(a.annotator_id, str(a.annotator_id)),
                        label=a.label,
                        time=a.submitted_at.isoformat() if a.submitted_at else None,
                        unsure=a.unsure,
                        comment=a.comment,
                        rewrite=(a.rewrite1 or "", a.rewrite2 or "") if a.rewrite1 else None,
                    )
                    for a in own
                )
                if judgments
                else ()
            )
            pairs.append(
                Pair(
                    id=item.key,
                    text1=item.text1,
                    text2=item.text2,
                    label=item.label,
                    span1=spans[0],
                    span2=spans[1],
                    group=item.group,
                    source=item.source,
                    rewrites=rewrites,
                    judgments=judged,
                    metadata=dict(item.meta or {}),
                )
            )
        return PairSet(
            pairs, scheme=scheme_from_spec(project.scheme), documents=used, name=project.name
        )

    def export(
        self,
        project_id: int,
        path: str | Path,
        format: str | None = None,
        drop_labels: tuple[str, ...] = (),
        judgments: bool = False,
    ) -> Path:
        """Write the released corpus with contexts: Turku JSON layout (``.json``, plus the
        texts file beside it) or canonical JSONL; ``drop_labels`` leaves out base labels
        (``("1", "x")`` for the Turku release)."""
        from parakit import io

        pairs = self.to_pairset(project_id, judgments=judgments)
        if drop_labels:
            pairs = pairs.filter(lambda p: p.label is None or p.label[:1] not in drop_labels)
            used = {s.doc_id for p in pairs for s in (p.span1, p.span2) if s is not None}
            pairs.documents = {k: v for k, v in pairs.documents.items() if k in used}
        io.write(pairs, path, format=format)
        return Path(path)
