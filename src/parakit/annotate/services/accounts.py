"""Accounts and login sessions: argon2id passwords, hashed session tokens."""

from __future__ import annotations

import hashlib
import os
import secrets
import threading
import unicodedata
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from typing import NamedTuple

from sqlalchemy import case, delete, func, or_, select, update
from sqlalchemy.orm import Session

from parakit.annotate.db import Database, Service, utcnow
from parakit.annotate.models import (
    ROLES,
    Annotator,
    Assignment,
    LoginSession,
    Member,
    Project,
)
from parakit.errors import AnnotateError, Conflict, Errors, NotFound


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


def yield_cpu() -> None:
    """Lower the calling thread's CPU priority by 10 nice steps (Linux; at most to the
    lowest, 19), so that it runs when the threads serving requests leave CPU to spare.
    Elsewhere, or when not allowed, nothing changes. (Not the idle policy: on a box busy with
    other work, idle threads would get no CPU at all and logins would stall.)"""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + 10))
    except (AttributeError, OSError):
        pass


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


#: longest name and password :meth:`Accounts.authenticate` hashes at all (cheap pre-check)
MAX_NAME = 100
MAX_PASSWORD = 1000


def normalize_name(name: str) -> str:
    """A user name as stored and looked up: NFKC-normalised and trimmed, so ``" ann1"`` and
    the full-width ``"ａｎｎ1"`` are ``"ann1"``.

    Raises:
        AnnotateError: E605 for a name with an invisible or control character (a zero-width
            space or a variation selector makes a look-alike of another account), other
            space than ``" "``, or letters of two look-alike scripts (Latin with Cyrillic or
            Greek: the Cyrillic ``а`` of ``аnn1``).
    """
    name = normalize_name_loosely(name)
    for char in name:
        category = unicodedata.category(char)
        if category[0] == "C" or (category[0] == "Z" and char != " ") or _invisible(char):
            raise AnnotateError(
                Errors.E605_user_names_contain.format(
                    ord_char=ord(char),
                    unicodedata_name_char_catego=unicodedata.name(char, category),
                )
            )
    scripts = {_script(char) for char in name if unicodedata.category(char)[0] == "L"}
    mixed = scripts & _CONFUSABLE_SCRIPTS
    if len(mixed) > 1:
        raise AnnotateError(
            Errors.E605_user_name_mixes.format(
                name=name,
                mixed=" and ".join(sorted(s.title() for s in mixed)),
            )
        )
    return name


#: scripts whose letters pass for each other's (Latin a, Cyrillic а, Greek α)
_CONFUSABLE_SCRIPTS = {"LATIN", "CYRILLIC", "GREEK"}
#: characters that show nothing (variation selectors, fillers) but are not of category C/Z
_INVISIBLE = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0}
#: Cyrillic and Greek letters (after casefolding) that look like Latin ones, and digits that
#: look like letters: names equal under this map are look-alikes (a small part of Unicode's
#: UTS #39 confusables, the part names of Latin, Cyrillic and Greek run into)
_SKELETON = str.maketrans(
    # Cyrillic, Greek (lowercase: names are casefolded first), then digits
    "авсеһіјкмнорѕтхуԁԛԝӏ" + "αβεηικμνορτυχζ" + "01",
    "abcehijkmhopstxydqwl" + "abenikmvoptuxz" + "ol",
)


def _invisible(char: str) -> bool:
    code = ord(char)
    return (
        code in _INVISIBLE
        or 0xFE00 <= code <= 0xFE0F  # variation selectors
        or 0xE0100 <= code <= 0xE01EF
        or 0x180B <= code <= 0x180F  # Mongolian free variation selectors
    )


def _script(char: str) -> str:
    return unicodedata.name(char, "UNKNOWN").split(" ")[0]


def name_skeleton(name: str) -> str:
    """What a name looks like: casefolded, Cyrillic and Greek look-alikes of Latin letters
    and ``0``/``1`` read as ``o``/``l``; two names with one skeleton are look-alikes.

    Example:
        >>> name_skeleton("ANN1") == name_skeleton("\u0430nnl")
        True
    """
    return normalize_name_loosely(name).casefold().translate(_SKELETON)


def normalize_name_loosely(name: str) -> str:
    """:func:`normalize_name` for looking a name up: never raises (a name that could not be
    created finds nobody)."""
    return unicodedata.normalize("NFKC", name).strip()


def _find(session: Session, name: str) -> Annotator | None:
    """The annotator ``name`` names: the stored name, else the one name equal to it ignoring
    case (names are unique ignoring case, so ``ANN1`` logs in as ``ann1``)."""
    name = normalize_name_loosely(name)
    row = session.scalar(select(Annotator).where(Annotator.name == name))
    if row is not None or not name:
        return row
    folded = name.casefold()
    # only on a miss: one pass over the names (hundreds), cheaper than the hash that follows
    matches = [
        other_id
        for other_id, other in session.execute(select(Annotator.id, Annotator.name))
        if normalize_name_loosely(other).casefold() == folded
    ]
    return session.get(Annotator, matches[0]) if len(matches) == 1 else None


class Deactivated(NamedTuple):
    """What deactivating an account did: ``returned`` assignments went back to the shared
    pool; ``stranded`` of them no remaining active member of their project may take."""

    returned: int
    stranded: int


def _stranded(session: Session, assignment_ids: list[int]) -> int:
    """How many of the (pool) assignments no active member of their project may take: a
    member may not take a slot that excludes them, nor a second slot of an item (or document
    pair) they hold or did."""
    rows = session.execute(
        select(
            Assignment.id,
            Assignment.project_id,
            Assignment.task,
            Assignment.item_id,
            Assignment.doc_pair_id,
            Assignment.exclude_id,
        ).where(Assignment.id.in_(assignment_ids))
    ).all()
    projects = {r.project_id for r in rows}
    members: dict[int, set[int]] = {p: set() for p in projects}
    for project_id, annotator_id in session.execute(
        select(Member.project_id, Member.annotator_id)
        .join(Annotator, Annotator.id == Member.annotator_id)
        .where(Member.project_id.in_(projects), Annotator.active.is_(True))
    ):
        members[project_id].add(annotator_id)
    taken: dict[tuple[str, str, int], set[int]] = {}
    for other in session.execute(
        select(
            Assignment.task,
            Assignment.item_id,
            Assignment.doc_pair_id,
            Assignment.annotator_id,
            Assignment.done_by,
        ).where(
            Assignment.id.not_in(assignment_ids),
            Assignment.project_id.in_(projects),
            or_(
                Assignment.item_id.in_({r.item_id for r in rows if r.item_id is not None}),
                Assignment.doc_pair_id.in_({r.doc_pair_id for r in rows if r.doc_pair_id}),
            ),
        )
    ):
        unit = ("item", other.item_id) if other.item_id is not None else ("dp", other.doc_pair_id)
        holders = taken.setdefault((other.task, *unit), set())  # type: ignore[arg-type]
        holders.update(x for x in (other.annotator_id, other.done_by) if x is not None)
    stranded = 0
    for r in rows:
        unit = ("item", r.item_id) if r.item_id is not None else ("dp", r.doc_pair_id)
        able = members[r.project_id] - {r.exclude_id} - taken.get((r.task, *unit), set())
        stranded += not able
    return stranded


class Accounts(Service):
    """Annotators, their passwords and their login sessions.

    Argon2id costs 64 MiB and most of a CPU core per hash (RFC 9106 low-memory profile), so
    at most ``hash_concurrency`` hashes run at once in this process and the rest queue: a
    burst of logins costs bounded memory instead of 64 MiB each. Unknown names are verified
    against a dummy hash made with the same parameters, so the answer takes as long as for a
    real account.

    Args:
        db: the database.
        hash_concurrency: argon2 computations allowed at once (memory: about 64 MiB each).
    """

    def __init__(self, db: Database, hash_concurrency: int = 2) -> None:
        super().__init__(db)
        self.hash_concurrency = hash_concurrency
        # the hashes run on threads of their own, at a lower CPU priority than the threads
        # that serve annotators: under a login flood the CPU goes to people's work first
        self._hasher: ThreadPoolExecutor | None = None
        self._hasher_lock = threading.Lock()
        self._dummy: str | None = None

    def _pool(self) -> ThreadPoolExecutor:
        with self._hasher_lock:
            if self._hasher is None:
                self._hasher = ThreadPoolExecutor(
                    self.hash_concurrency,
                    thread_name_prefix="parakit-argon2",
                    initializer=yield_cpu,
                )
            return self._hasher

    def close(self) -> None:
        """Let the hashing threads go (the store is closing; a later hash starts new ones)."""
        with self._hasher_lock:
            if self._hasher is not None:
                self._hasher.shutdown(wait=False)
                self._hasher = None

    def _hash(self, password: str) -> str:
        return self._pool().submit(hash_password, password, self.db.cheap_hashing).result()

    def _verify(self, password_hash: str, password: str) -> bool:
        return self._pool().submit(check_password, password_hash, password).result()

    def _dummy_hash(self) -> str:
        if self._dummy is None:
            self._dummy = self._hash(secrets.token_urlsafe(16))
        return self._dummy

    def add_annotator(
        self,
        name: str,
        password: str,
        role: str = "annotator",
        projects: Iterable[int] = (),
    ) -> int:
        """Create an annotator with an argon2-hashed password, member of ``projects``, in one
        transaction (an unknown project raises :class:`NotFound` and creates nobody);
        returns its id."""
        if role not in ROLES:
            raise AnnotateError(
                Errors.E604_unknown_role_choose.format(role=role, roles=", ".join(ROLES))
            )
        if len(password) < 8:
            raise AnnotateError(Errors.E605_passwords_must_least)
        name = normalize_name(name)
        if not name or len(name) > MAX_NAME:
            raise AnnotateError(Errors.E605_names_characters.format(MAX_NAME=MAX_NAME))
        if len(password) > MAX_PASSWORD:
            raise AnnotateError(
                Errors.E605_passwords_most_characters.format(MAX_PASSWORD=MAX_PASSWORD)
            )
        digest = self._hash(password)

        def work(session: Session) -> int:
            # unique by look: "Ann1", "ann1", "annl" and a Cyrillic "аnn1" are one name
            skeleton = name_skeleton(name)
            for other in session.scalars(select(Annotator.name)):
                if name_skeleton(other) == skeleton:
                    raise Conflict(
                        Errors.E603_annotator_already_exists.format(name=name, other=other)
                    )
            row = Annotator(
                name=name, password_hash=digest, role=role, active=True, created_at=utcnow()
            )
            session.add(row)
            session.flush()
            for project_id in dict.fromkeys(projects):
                if session.get(Project, project_id) is None:
                    raise NotFound(Errors.E601_project_id.format(project_id=project_id))
                session.add(Member(project_id=project_id, annotator_id=row.id))
            return row.id

        return self._write(work)

    def authenticate(self, name: str, password: str) -> User | None:
        """The user if ``password`` is right, else None. Names and passwords longer than any
        account can have are refused before hashing; unknown and inactive names cost one
        verification against the dummy hash, like a wrong password."""
        if not name or not password or len(name) > MAX_NAME or len(password) > MAX_PASSWORD:
            return None
        with self.transaction() as session:
            row = _find(session, name)
        if row is None or not row.active:
            self._verify(self._dummy_hash(), password)
            return None
        if not self._verify(row.password_hash, password):
            return None
        return User(row.id, row.name, row.role)

    def set_password(self, user_id: int, password: str) -> None:
        """Replace an annotator's password (admin reset) and end their sessions."""
        if not 8 <= len(password) <= MAX_PASSWORD:
            raise AnnotateError(
                Errors.E605_passwords_must_characters.format(MAX_PASSWORD=MAX_PASSWORD)
            )
        digest = self._hash(password)

        def work(session: Session) -> None:
            row = session.get(Annotator, user_id)
            if row is None:
                raise NotFound(Errors.E601_annotator_id.format(user_id=user_id))
            row.password_hash = digest
            session.execute(delete(LoginSession).where(LoginSession.annotator_id == user_id))

        self._write(work)

    def set_active(self, user_id: int, active: bool) -> Deactivated:
        """Deactivate (or reactivate) an annotator, in one transaction.

        Deactivation ends their sessions and returns their work to the project's shared pool:
        the open assignments of their personal queue and the items they hold leased, so
        nothing waits for someone who will not come back. Their annotations stay (drafts
        too: a returned item is annotated afresh by whoever takes it). The last active admin
        cannot be deactivated (nobody could administer the store any more).

        Returns:
            how many assignments went back to the pool, and how many of those no remaining
            active member of their project may take (the other slot of a double item is
            theirs, or nobody else is a member): those wait until a member is added
            (:class:`Deactivated`; zeros on reactivation).
        Raises:
            NotFound: no such annotator.
            Conflict: (E604) the last active admin.
        """

        def work(session: Session) -> Deactivated:
            row = session.get(Annotator, user_id)
            if row is None:
                raise NotFound(Errors.E601_annotator_id.format(user_id=user_id))
            if not active and row.role == "admin" and row.active:
                others = session.scalar(
                    select(func.count()).where(
                        Annotator.role == "admin",
                        Annotator.active.is_(True),
                        Annotator.id != user_id,
                    )
                )
                if not others:
                    raise Conflict(Errors.E604_last_active_admin.format(row_name=row.name))
            row.active = active
            if active:
                return Deactivated(0, 0)
            session.execute(delete(LoginSession).where(LoginSession.annotator_id == user_id))
            mine = (Assignment.status == "open") & (
                (Assignment.annotator_id == user_id) | (Assignment.lease_owner == user_id)
            )
            ids = list(session.scalars(select(Assignment.id).where(mine)))
            if not ids:
                return Deactivated(0, 0)
            session.execute(
                update(Assignment)
                .where(Assignment.id.in_(ids))
                .values(
                    annotator_id=case(
                        (Assignment.annotator_id == user_id, None),
                        else_=Assignment.annotator_id,
                    ),
                    lease_owner=None,
                    lease_expires=None,
                )
            )
            return Deactivated(len(ids), _stranded(session, ids))

        return self._write(work)

    def users(self) -> list[dict[str, object]]:
        """Every account: id, name, role, active, created_at."""
        with self.transaction() as session:
            return [
                {
                    "id": row.id,
                    "name": row.name,
                    "role": row.role,
                    "active": row.active,
                    "created_at": row.created_at,
                }
                for row in session.scalars(select(Annotator).order_by(Annotator.id))
            ]

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
        """The id of the annotator ``name`` (however its case is typed)."""
        with self.transaction() as session:
            row = _find(session, name)
        value = None if row is None else row.id
        if value is None:
            raise NotFound(Errors.E601_annotator_named_create.format(name=name))
        return value

    def annotator_names(self) -> dict[int, str]:
        with self.transaction() as session:
            return dict(session.execute(select(Annotator.id, Annotator.name)).all())
