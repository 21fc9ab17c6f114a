"""Failed-login throttling for the annotation web app.

Two keys are counted in a sliding ``window``:

* **name + address**: after ``max_failures`` wrong passwords for one account from one client
  address, that pair waits ``base_delay``, then twice as long after each further failure
  (capped by the window). A name alone never locks an account: the real user, from another
  address, still logs in while someone guesses from elsewhere.
* **address**: ``address_factor`` times as many failures from one address, over any names,
  make the address wait the same way (password spraying from one place); behind a NAT many
  people share an address, so this limit is higher.

Only **failed** attempts are counted, after the password check: :meth:`LoginThrottle.attempt`
only reads (no write, so a flood of refused or waiting logins takes no write lock and never
queues the annotators' writes behind it), :meth:`LoginThrottle.failed` records a wrong
password and :meth:`LoginThrottle.succeeded` clears the name + address record. Colleagues
behind one address (an office NAT) who type their passwords right therefore never count
against the address. How many guesses can be in flight before their failures are recorded is
bounded by the web app's login queue (its hashing slots and, for an address with failures,
its per-address places), not by the throttle.

Where the counts live is the ledger's business: :class:`MemoryLedger` (one process; the
default) or :class:`StoreLedger`, the annotation store's ``login_failures`` table, which
every worker of ``parakit annotate serve --workers N`` shares (a check and its count are one
transaction, serialised per key, so N workers count like one). The ledger also remembers the
name + address pairs that logged in before (:meth:`LoginThrottle.known`): the web app serves
those from a reserved hashing lane.

Example:
    >>> from datetime import timedelta
    >>> now = [0.0]
    >>> throttle = LoginThrottle(
    ...     max_failures=2, window=timedelta(seconds=600), base_delay=timedelta(seconds=30),
    ...     clock=lambda: now[0])
    >>> for _ in range(2):
    ...     wait, ticket = throttle.attempt("ann", "10.0.0.1")
    ...     throttle.failed(ticket)                            # the password was wrong
    >>> throttle.attempt("ann", "10.0.0.1")[0]        # this pair now waits
    30
    >>> throttle.attempt("ann", "10.0.0.2")[0]        # the user elsewhere is not locked out
    0
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from parakit.annotate.db import Database


@dataclass(frozen=True)
class Ticket:
    """A login attempt the throttle let through (nothing counted yet): pass it to
    :meth:`LoginThrottle.failed` or :meth:`LoginThrottle.succeeded` after the check."""

    keys: tuple[str, ...]
    at: float
    #: recent failures from the attempt's address (over every name), when it was let through
    address_failures: int = 0


class Counts(Protocol):
    """The failure times of some keys, inside one atomic ledger section."""

    def times(self, key: str, since: float) -> list[float]:
        """The key's failure times after ``since``, oldest first (older ones are dropped)."""

    def add(self, key: str, at: float) -> Any:
        """Count a failure."""

    def clear(self, key: str) -> None:
        """Forget every failure of the key."""


class Ledger(Protocol):
    def section(self, keys: Sequence[str]) -> Any:
        """A context manager giving :class:`Counts`, atomic for ``keys`` across everyone
        sharing the ledger."""

    def peek(self, keys: Sequence[str], since: float) -> dict[str, list[float]]:
        """The failure times after ``since`` of each key, oldest first: a read only (no
        lock another writer waits for)."""

    def remember(self, key: str, at: float) -> None:
        """Note a successful login of ``key``."""

    def remembered(self, key: str, since: float) -> bool:
        """Whether ``key`` logged in successfully after ``since``."""


class MemoryLedger:
    """Counts in this process (one server process)."""

    def __init__(self) -> None:
        self._failures: dict[str, deque[float]] = {}
        self._known: dict[str, float] = {}
        self._lock = threading.Lock()

    @contextmanager
    def section(self, keys: Sequence[str]) -> Iterator[MemoryLedger]:
        with self._lock:
            yield self

    def times(self, key: str, since: float) -> list[float]:
        times = self._failures.get(key, deque())
        while times and times[0] <= since:
            times.popleft()
        if not times:
            self._failures.pop(key, None)
        return list(times)

    def add(self, key: str, at: float) -> None:
        self._failures.setdefault(key, deque()).append(at)

    def peek(self, keys: Sequence[str], since: float) -> dict[str, list[float]]:
        with self._lock:
            return {k: [t for t in self._failures.get(k, ()) if t > since] for k in keys}

    def clear(self, key: str) -> None:
        self._failures.pop(key, None)

    def remember(self, key: str, at: float) -> None:
        with self._lock:
            self._known[key] = at

    def remembered(self, key: str, since: float) -> bool:
        with self._lock:
            return self._known.get(key, -math.inf) > since


class StoreLedger:
    """Counts in the annotation store (``login_failures``, ``known_logins``), shared by every
    server process. On PostgreSQL each section takes transaction-scoped advisory locks on its
    keys (in a fixed order, so two sections never deadlock); on SQLite the write transaction
    itself is exclusive."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @contextmanager
    def section(self, keys: Sequence[str]) -> Iterator[_StoreCounts]:
        from sqlalchemy import text

        with self.db.writing(), self.db.transaction() as session:
            if self.db.engine.dialect.name == "postgresql":
                for lock in sorted({zlib.crc32(k.encode()) for k in keys}):
                    session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": lock})
            yield _StoreCounts(session)

    def peek(self, keys: Sequence[str], since: float) -> dict[str, list[float]]:
        from sqlalchemy import select

        from parakit.annotate.models import LoginFailure

        out: dict[str, list[float]] = {k: [] for k in keys}
        with self.db.transaction() as session:  # a read: no write lock, on any store
            for key, at in session.execute(
                select(LoginFailure.key, LoginFailure.at)
                .where(LoginFailure.key.in_(list(keys)), LoginFailure.at > since)
                .order_by(LoginFailure.at, LoginFailure.id)
            ):
                out[key].append(at)
        return out

    def remember(self, key: str, at: float) -> None:
        from parakit.annotate.models import KnownLogin

        def work(session: Any) -> None:
            row = session.get(KnownLogin, key)
            if row is None:
                session.add(KnownLogin(key=key, last_at=at))
            elif at - row.last_at > 3600:  # once an hour is enough: no write per login
                row.last_at = at

        if not self.remembered(key, at - 3600):
            self.db.write(work)

    def remembered(self, key: str, since: float) -> bool:
        from parakit.annotate.models import KnownLogin

        with self.db.transaction() as session:
            row = session.get(KnownLogin, key)
        return row is not None and row.last_at > since


class _StoreCounts:
    def __init__(self, session: Any) -> None:
        self.session = session

    def times(self, key: str, since: float) -> list[float]:
        from sqlalchemy import delete, select

        from parakit.annotate.models import LoginFailure

        self.session.execute(
            delete(LoginFailure).where(LoginFailure.key == key, LoginFailure.at <= since)
        )
        return list(
            self.session.scalars(
                select(LoginFailure.at)
                .where(LoginFailure.key == key)
                .order_by(LoginFailure.at, LoginFailure.id)
            )
        )

    def add(self, key: str, at: float) -> int:
        from parakit.annotate.models import LoginFailure

        row = LoginFailure(key=key, at=at)
        self.session.add(row)
        self.session.flush()
        return row.id

    def clear(self, key: str) -> None:
        from sqlalchemy import delete

        from parakit.annotate.models import LoginFailure

        self.session.execute(delete(LoginFailure).where(LoginFailure.key == key))


class LoginThrottle:
    """Sliding-window count of failed logins per (name, address) and per address, with
    growing delays.

    Args:
        max_failures: failures allowed per name+address inside ``window`` before delays
            start; 0 turns throttling off.
        window: how long a failure counts.
        base_delay: the first delay; it doubles with each further failure (at most until
            enough failures leave the window).
        address_factor: an address alone is limited at ``max_failures * address_factor``.
        clock: seconds as a float (injectable for tests); ``time.time`` by default, the one
            clock that several server processes share.
        ledger: where the counts live: :class:`MemoryLedger` (default) or
            :class:`StoreLedger`.
        remember_for: how long a successful name + address login counts as known.
    """

    def __init__(
        self,
        max_failures: int = 5,
        window: timedelta = timedelta(minutes=5),
        clock: Callable[[], float] = time.time,
        base_delay: timedelta = timedelta(seconds=30),
        address_factor: int = 4,
        ledger: Ledger | None = None,
        remember_for: timedelta = timedelta(days=90),
    ) -> None:
        if max_failures < 0 or address_factor < 1:
            raise ValueError("max_failures must be >= 0 and address_factor >= 1")
        self.max_failures = max_failures
        self.window = window.total_seconds()
        self.base_delay = base_delay.total_seconds()
        self.address_factor = address_factor
        self.remember_for = remember_for.total_seconds()
        self._clock = clock
        self.ledger: Ledger = ledger if ledger is not None else MemoryLedger()
        self._known_cache: dict[str, tuple[bool, float]] = {}

    def _keys(self, name: str, address: str | None) -> list[tuple[str, int]]:
        address = address or "-"
        return [
            (pair_key(name, address), self.max_failures),
            (f"addr:{address}"[:400], self.max_failures * self.address_factor),
        ]

    def _wait(self, times: list[float], limit: int, now: float) -> float:
        if len(times) < limit:
            return 0.0
        # free again when enough failures leave the window, or after the growing delay
        expires = times[-limit] + self.window
        delay = times[-1] + min(self.base_delay * 2 ** (len(times) - limit), self.window)
        return max(0.0, min(expires, delay) - now)

    def _retry_after(self, times: dict[str, list[float]], keys: list[tuple[str, int]]) -> int:
        now = self._clock()
        wait = 0.0
        for key, limit in keys:
            wait = max(wait, self._wait(times.get(key, []), limit, now))
        return math.ceil(wait) if wait > 0 else 0

    def attempt(self, name: str, address: str | None) -> tuple[int, Ticket | None]:
        """Check an attempt, reading only: ``(seconds to wait, None)`` when refused, else
        ``(0, ticket)``; pass the ticket to :meth:`failed` or :meth:`succeeded` once the
        password is checked. Nothing is counted until then."""
        if not self.max_failures:
            return 0, None
        keys = self._keys(name, address)
        now = self._clock()
        times = self.ledger.peek([k for k, _ in keys], now - self.window)
        wait = self._retry_after(times, keys)
        if wait:
            return wait, None
        return 0, Ticket(tuple(k for k, _ in keys), now, len(times.get(keys[1][0], [])))

    def failed(self, ticket: Ticket | None) -> None:
        """The password was wrong: count a failure for the name + address and the address
        (and drop the failures that left the window)."""
        if ticket is None:
            return
        with self.ledger.section(ticket.keys) as counts:
            now = self._clock()
            for key in ticket.keys:
                counts.times(key, now - self.window)  # forgets the old ones
                counts.add(key, now)

    def succeeded(self, ticket: Ticket | None) -> None:
        """The password was right: clear the name + address record (the address keeps its
        other failures) and remember the pair as known."""
        if ticket is None:
            return
        pair = ticket.keys[0]
        if self.ledger.peek([pair], ticket.at - self.window)[pair]:
            with self.ledger.section([pair]) as counts:
                counts.clear(pair)
        self.ledger.remember(pair, ticket.at)
        self._known_cache[pair] = (True, time.monotonic() + 300.0)

    def retry_after(self, name: str, address: str | None) -> int:
        """Seconds before ``name`` may try again from ``address`` (0 = now); counts nothing."""
        return self.attempt(name, address)[0]

    def address_failures(self, address: str | None) -> int:
        """Recent failures from ``address`` over every name (a read)."""
        key = f"addr:{address or '-'}"[:400]
        return len(self.ledger.peek([key], self._clock() - self.window)[key])

    def known(self, name: str, address: str | None) -> bool:
        """Whether ``name`` logged in successfully from ``address`` within ``remember_for``.

        Answers are kept a while in this process (a yes for 5 minutes, a no for 5 seconds),
        so a flood that repeats names and addresses reads the ledger once per pair, not once
        per request; a no that went stale only sends a returning user through the general
        lane for those seconds."""
        key = pair_key(name, address or "-")
        now = time.monotonic()
        cached = self._known_cache.get(key)
        if cached is not None and cached[1] > now:
            return cached[0]
        answer = self.ledger.remembered(key, self._clock() - self.remember_for)
        if len(self._known_cache) > 50_000:
            self._known_cache.clear()
        self._known_cache[key] = (answer, now + (300.0 if answer else 5.0))
        return answer


def pair_key(name: str, address: str) -> str:
    """The throttle's key of a name + address (names compared without case): a digest, so
    any name a login form sends makes a key of fixed length that every store can hold."""
    digest = hashlib.sha256(f"{name.casefold()}\x00{address}".encode("utf-8", "replace"))
    return f"pair:{digest.hexdigest()}"
