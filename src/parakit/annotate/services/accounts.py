"""Accounts and login sessions: argon2id passwords, hashed session tokens."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from parakit.annotate.db import (
    AnnotateError,
    Conflict,
    NotFound,
    Service,
    utcnow,
)
from parakit.annotate.models import (
    ROLES,
    Annotator,
    LoginSession,
    Member,
    Project,
)


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


class Accounts(Service):
    """Annotators, their passwords and their login sessions."""

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
                f"unknown role {role!r}; choose one of {', '.join(ROLES)}", code="E604"
            )
        if len(password) < 8:
            raise AnnotateError("passwords must have at least 8 characters", code="E605")
        digest = hash_password(password, cheap=self.db.cheap_hashing)

        def work(session: Session) -> int:
            if session.scalar(select(Annotator.id).where(Annotator.name == name)) is not None:
                raise Conflict(f"annotator {name!r} already exists")
            row = Annotator(
                name=name, password_hash=digest, role=role, active=True, created_at=utcnow()
            )
            session.add(row)
            session.flush()
            for project_id in dict.fromkeys(projects):
                if session.get(Project, project_id) is None:
                    raise NotFound(f"no project with id {project_id}")
                session.add(Member(project_id=project_id, annotator_id=row.id))
            return row.id

        return self._write(work)

    def authenticate(self, name: str, password: str) -> User | None:
        """The user if ``password`` is right, else None."""
        with self.transaction() as session:
            row = session.scalar(select(Annotator).where(Annotator.name == name))
        if row is None or not row.active:
            check_password(hash_password("timing-equaliser", cheap=self.db.cheap_hashing), password)
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
