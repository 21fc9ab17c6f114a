"""Failed-login throttling for the annotation web app.

Two keys are counted in a sliding ``window``:

* **name + address**: after ``max_failures`` wrong passwords for one account from one client
  address, that pair waits ``base_delay``, then twice as long after each further failure
  (capped by the window). A name alone never locks an account: the real user, from another
  address, still logs in while someone guesses from elsewhere.
* **address**: ``address_factor`` times as many failures from one address, over any names,
  make the address wait the same way (password spraying from one place); behind a NAT many
  people share an address, so this limit is higher.

Attempts are counted *before* the password is checked (:meth:`LoginThrottle.attempt`
records a pending failure atomically, :meth:`LoginThrottle.succeeded` takes it back), so
concurrent guesses cannot all slip in before the first failure is recorded. The record lives
in the process: behind several server processes each keeps its own.

Example:
    >>> from datetime import timedelta
    >>> now = [0.0]
    >>> throttle = LoginThrottle(
    ...     max_failures=2, window=timedelta(seconds=600), base_delay=timedelta(seconds=30),
    ...     clock=lambda: now[0])
    >>> for _ in range(2):
    ...     wait, ticket = throttle.attempt("ann", "10.0.0.1")   # the password was wrong
    >>> throttle.attempt("ann", "10.0.0.1")[0]        # this pair now waits
    30
    >>> throttle.attempt("ann", "10.0.0.2")[0]        # the user elsewhere is not locked out
    0
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta


@dataclass(frozen=True)
class Ticket:
    """A login attempt counted in advance (as a failure until :meth:`succeeded`)."""

    keys: tuple[str, ...]
    at: float


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
        clock: seconds as a float (injectable for tests); ``time.monotonic`` by default.
    """

    def __init__(
        self,
        max_failures: int = 5,
        window: timedelta = timedelta(minutes=5),
        clock: Callable[[], float] = time.monotonic,
        base_delay: timedelta = timedelta(seconds=30),
        address_factor: int = 4,
    ) -> None:
        if max_failures < 0 or address_factor < 1:
            raise ValueError("max_failures must be >= 0 and address_factor >= 1")
        self.max_failures = max_failures
        self.window = window.total_seconds()
        self.base_delay = base_delay.total_seconds()
        self.address_factor = address_factor
        self._clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _keys(self, name: str, address: str | None) -> list[tuple[str, int]]:
        address = address or "-"
        return [
            (f"pair:{name.casefold()}\x00{address}", self.max_failures),
            (f"addr:{address}", self.max_failures * self.address_factor),
        ]

    def _prune(self, key: str, now: float) -> deque[float]:
        times = self._failures.get(key, deque())
        while times and now - times[0] >= self.window:
            times.popleft()
        if not times:
            self._failures.pop(key, None)
        return times

    def _wait(self, times: deque[float], limit: int, now: float) -> float:
        if len(times) < limit:
            return 0.0
        # free again when enough failures leave the window, or after the growing delay
        expires = times[-limit] + self.window
        delay = times[-1] + min(self.base_delay * 2 ** (len(times) - limit), self.window)
        return max(0.0, min(expires, delay) - now)

    def _retry_after(self, name: str, address: str | None, now: float) -> int:
        wait = 0.0
        for key, limit in self._keys(name, address):
            wait = max(wait, self._wait(self._prune(key, now), limit, now))
        return math.ceil(wait) if wait > 0 else 0

    def attempt(self, name: str, address: str | None) -> tuple[int, Ticket | None]:
        """Atomically check and count an attempt: ``(seconds to wait, None)`` when refused,
        else ``(0, ticket)`` with the attempt already counted as a failure; pass the ticket to
        :meth:`succeeded` when the password is right."""
        if not self.max_failures:
            return 0, None
        with self._lock:
            now = self._clock()
            wait = self._retry_after(name, address, now)
            if wait:
                return wait, None
            keys = tuple(key for key, _ in self._keys(name, address))
            for key in keys:
                self._failures.setdefault(key, deque()).append(now)
            return 0, Ticket(keys, now)

    def succeeded(self, ticket: Ticket | None) -> None:
        """The password was right: take the attempt back and clear the name+address record
        (the address keeps its other failures)."""
        if ticket is None:
            return
        with self._lock:
            pair, *others = ticket.keys
            self._failures.pop(pair, None)
            for key in others:
                times = self._failures.get(key)
                if times and ticket.at in times:
                    times.remove(ticket.at)
                    if not times:
                        self._failures.pop(key, None)

    def cancel(self, ticket: Ticket | None) -> None:
        """Take back an attempt whose password was never checked."""
        if ticket is None:
            return
        with self._lock:
            for key in ticket.keys:
                times = self._failures.get(key)
                if times and ticket.at in times:
                    times.remove(ticket.at)
                    if not times:
                        self._failures.pop(key, None)

    def retry_after(self, name: str, address: str | None) -> int:
        """Seconds before ``name`` may try again from ``address`` (0 = now); counts nothing."""
        if not self.max_failures:
            return 0
        with self._lock:
            return self._retry_after(name, address, self._clock())

    def failed(self, name: str, address: str | None) -> None:
        """Record a wrong password checked without :meth:`attempt`."""
        if not self.max_failures:
            return
        with self._lock:
            now = self._clock()
            for key, _ in self._keys(name, address):
                self._prune(key, now)
                self._failures.setdefault(key, deque()).append(now)
