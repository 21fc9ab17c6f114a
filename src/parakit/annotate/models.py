"""SQLAlchemy models of the annotation store.

The schema is created and upgraded by the Alembic migrations in
``parakit/annotate/migrations`` (never by ``create_all``), so a store made by an older parakit
can be upgraded in place. A test checks that these models and the migrated schema agree.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from parakit.annotate.tasks import CLASSIFY

ROLES = ("admin", "adjudicator", "annotator")


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        dict[str, Any]: JSON,
        datetime: DateTime(timezone=False),
    }


class Annotator(Base):
    """A user of the tool; ``password_hash`` is an argon2id hash, never the password."""

    __tablename__ = "annotators"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(20), default="annotator")
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)


class LoginSession(Base):
    """A login session; the cookie holds a random token, the table only its SHA-256."""

    __tablename__ = "sessions"
    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotators.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(DateTime)
    expires_at: Mapped[datetime] = mapped_column(DateTime, index=True)


class LoginFailure(Base):
    """A counted login attempt (a failure until the password proves right), shared by every
    server worker: see :class:`parakit.annotate.throttle.StoreLedger`."""

    __tablename__ = "login_failures"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(400), index=True)
    at: Mapped[float] = mapped_column(Float)


class KnownLogin(Base):
    """A name + client address that logged in successfully: its next logins get the
    reserved hashing lane, so a flood from other addresses cannot starve them."""

    __tablename__ = "known_logins"
    key: Mapped[str] = mapped_column(String(400), primary_key=True)
    last_at: Mapped[float] = mapped_column(Float)


class StoreSecret(Base):
    """A secret of this store, never written into a backup: ``backup`` keys the digest that
    :func:`parakit.annotate.backup.restore` checks (made at random by migration 0006)."""

    __tablename__ = "store_secrets"
    name: Mapped[str] = mapped_column(String(50), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))


class Project(Base):
    """An annotation project with its label scheme (``LabelScheme.spec()``) and settings.

    ``revision`` moves whenever a figure of the statistics page may change: database
    triggers (migration 0008) bump it in the transaction of every insert, edit or delete of
    a submitted annotation, every insert, delete or label change of an item and every change
    of the scheme, whatever writes them (the services, a restore, a hand-made SQL edit);
    :class:`StatsCache` rows computed at another revision are never served.
    """

    __tablename__ = "projects"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    scheme: Mapped[dict[str, Any]] = mapped_column(JSON)
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class StatsCache(Base):
    """A report of the statistics page (``name``: ``agreement``, ``rewrite_check``) as
    computed at the project's ``revision``, kept in the database so every server worker
    shares it; served only while the project is still at that revision (see
    :meth:`parakit.annotate.services.review.Review.statistics`). ``value`` maps each figure
    to a number, ``None`` standing for NaN (JSON has none)."""

    __tablename__ = "stats_cache"
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    name: Mapped[str] = mapped_column(String(50), primary_key=True)
    revision: Mapped[int] = mapped_column(Integer)
    value: Mapped[dict[str, Any]] = mapped_column(JSON)
    computed_at: Mapped[datetime] = mapped_column(DateTime)


class ProjectImport(Base):
    """The import that fills a project (Label Studio's ``ProjectImport``): ``in_progress``
    while its chunks go in (the project stays hidden), ``completed``, or ``failed`` (with the
    ``error``) while what it left is deleted. ``lock`` names the lock the importing process
    holds meanwhile (:meth:`parakit.annotate.db.Database.hold`): an unfinished import whose
    lock nobody holds was abandoned."""

    __tablename__ = "imports"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id"), index=True)
    status: Mapped[str] = mapped_column(String(20))
    total: Mapped[int] = mapped_column(Integer)
    imported: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    lock: Mapped[str | None] = mapped_column(String(64), nullable=True)
    started_at: Mapped[datetime] = mapped_column(DateTime)
    heartbeat_at: Mapped[datetime] = mapped_column(DateTime)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class Member(Base):
    """Who may work in a project (admins may work everywhere)."""

    __tablename__ = "members"
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    annotator_id: Mapped[int] = mapped_column(
        ForeignKey("annotators.id", ondelete="CASCADE"), primary_key=True
    )


class DocumentRow(Base):
    """A source document; spans index into ``text``."""

    __tablename__ = "documents"
    __table_args__ = (UniqueConstraint("project_id", "key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(255))
    text: Mapped[str] = mapped_column(Text)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class DocPair(Base):
    """Two documents to extract paraphrase pairs from (T6); status open/finished/empty."""

    __tablename__ = "doc_pairs"
    __table_args__ = (UniqueConstraint("project_id", "key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(255))
    doc1_id: Mapped[int] = mapped_column(ForeignKey("documents.id"))
    doc2_id: Mapped[int] = mapped_column(ForeignKey("documents.id"))
    source: Mapped[str | None] = mapped_column(String(100), nullable=True)
    status: Mapped[str] = mapped_column(String(20), default="open")
    finished_by: Mapped[int | None] = mapped_column(ForeignKey("annotators.id"), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class Item(Base):
    """A candidate pair to classify: imported, extracted from a document pair, or a rewrite.

    ``origin`` is ``import``, ``extracted`` or ``rewrite`` (then ``parent_id`` is the pair the
    rewrite was written for and ``author_id`` its author). ``label`` is the resolved label
    (adjudicated, or the agreed label) once known.
    """

    __tablename__ = "items"
    __table_args__ = (UniqueConstraint("project_id", "key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(255))
    text1: Mapped[str] = mapped_column(Text)
    text2: Mapped[str] = mapped_column(Text)
    doc1_id: Mapped[int | None] = mapped_column(ForeignKey("documents.id"), nullable=True)
    begin1: Mapped[int | None] = mapped_column(Integer, nullable=True)
    end1: Mapped[int | None] = mapped_column(Integer, nullable=True)
    doc2_id: Mapped[int | None] = mapped_column(ForeignKey("documents.id"), nullable=True)
    begin2: Mapped[int | None] = mapped_column(Integer, nullable=True)
    end2: Mapped[int | None] = mapped_column(Integer, nullable=True)
    doc_pair_id: Mapped[int | None] = mapped_column(ForeignKey("doc_pairs.id"), nullable=True)
    source: Mapped[str | None] = mapped_column(String(100), nullable=True)
    group: Mapped[str | None] = mapped_column(String(255), nullable=True)
    origin: Mapped[str] = mapped_column(String(20), default="import")
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("items.id"), nullable=True)
    author_id: Mapped[int | None] = mapped_column(ForeignKey("annotators.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    label: Mapped[str | None] = mapped_column(String(50), nullable=True)
    resolved_by: Mapped[int | None] = mapped_column(ForeignKey("annotators.id"), nullable=True)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    #: extraction provenance: True when the pair was accepted from a suggestion of the
    #: extraction view (``meta["suggestion"]`` holds its rank and whether the spans were
    #: adjusted), False when selected by hand in a project with suggestions on; None for
    #: pairs extracted without suggestions, imported pairs and rewrites
    suggested: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    #: model in the loop: P(paraphrase) of the project's attached model and the label it
    #: guesses (pre-selected on single-annotation pages), stored once when it is attached
    model_p: Mapped[float | None] = mapped_column(Float, nullable=True)
    model_label: Mapped[str | None] = mapped_column(String(50), nullable=True)


class Assignment(Base):
    """One unit of work in a queue: an item to classify or a document pair to extract from.

    ``annotator_id`` set = personal queue; NULL = shared pool. Double annotation (T9) makes two
    assignments (``slot`` 1 and 2) for one item; one annotator never holds both. A lease
    (``lease_owner`` until ``lease_expires``) reserves it; an expired lease returns it to the
    queue. ``exclude_id`` keeps a rewrite check away from the rewrite's author (T10).
    ``task`` names a row of :data:`parakit.annotate.tasks.TASKS`.
    """

    __tablename__ = "assignments"
    __table_args__ = (
        UniqueConstraint("task", "item_id", "doc_pair_id", "slot"),
        Index("ix_assignments_queue", "project_id", "status", "batch", "position"),
        Index(
            "ix_assignments_next",
            "project_id",
            "task",
            "status",
            "annotator_id",
            "batch",
            "position",
        ),
        Index("ix_assignments_item", "item_id"),
        Index("ix_assignments_doc_pair", "doc_pair_id"),
        Index("ix_assignments_lease", "lease_owner", "status"),
        Index("ix_assignments_done", "done_by", "task"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    task: Mapped[str] = mapped_column(String(20), default=CLASSIFY)
    item_id: Mapped[int | None] = mapped_column(ForeignKey("items.id"), nullable=True)
    doc_pair_id: Mapped[int | None] = mapped_column(ForeignKey("doc_pairs.id"), nullable=True)
    slot: Mapped[int] = mapped_column(Integer, default=1)
    batch: Mapped[str] = mapped_column(String(100), default="default")
    position: Mapped[int] = mapped_column(Integer, default=0)
    annotator_id: Mapped[int | None] = mapped_column(ForeignKey("annotators.id"), nullable=True)
    exclude_id: Mapped[int | None] = mapped_column(ForeignKey("annotators.id"), nullable=True)
    lease_owner: Mapped[int | None] = mapped_column(ForeignKey("annotators.id"), nullable=True)
    lease_expires: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    status: Mapped[str] = mapped_column(String(20), default="open")
    done_by: Mapped[int | None] = mapped_column(ForeignKey("annotators.id"), nullable=True)
    done_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class Annotation(Base):
    """One annotator's answer for one item and task; ``revision`` grows with each save.

    ``status`` is ``draft`` (autosaved, survives a refresh) or ``submitted``. A save must name
    the revision it was based on; a stale tab (older revision) is refused.
    """

    __tablename__ = "annotations"
    __table_args__ = (
        UniqueConstraint("item_id", "annotator_id", "task"),
        # covering indexes of the admin pages (migration 0008): the per-item counts of the
        # project page and the statistics, and each annotator's progress and latest times
        Index(
            "ix_annotations_judged",
            "project_id",
            "status",
            "item_id",
            "task",
            "label",
            "annotator_id",
            "flags",
        ),
        Index(
            "ix_annotations_progress",
            "project_id",
            "task",
            "status",
            "annotator_id",
            "submitted_at",
            "id",
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id"), index=True)
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotators.id"))
    assignment_id: Mapped[int | None] = mapped_column(ForeignKey("assignments.id"), nullable=True)
    task: Mapped[str] = mapped_column(String(20), default=CLASSIFY)
    status: Mapped[str] = mapped_column(String(20), default="draft")
    label: Mapped[str | None] = mapped_column(String(50), nullable=True)
    flags: Mapped[str] = mapped_column(String(10), default="")
    rewrite1: Mapped[str | None] = mapped_column(Text, nullable=True)
    rewrite2: Mapped[str | None] = mapped_column(Text, nullable=True)
    unsure: Mapped[bool] = mapped_column(Boolean, default=False)
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    revision: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    updated_at: Mapped[datetime] = mapped_column(DateTime)
    submitted_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    #: the model's guess pre-selected on the annotator's page (decided by the server: None when
    #: no guess was shown, e.g. in double annotation) and whether the saved label kept it
    model_guess: Mapped[str | None] = mapped_column(String(50), nullable=True)
    model_kept: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
