"""Failed-login throttling for the annotation web app.

After ``max_failures`` wrong passwords for one account name, or from one client address,
within ``window``, further attempts for that key are refused (HTTP 429 with ``Retry-After``)
until the oldest failure leaves the window, so passwords cannot be guessed at request speed.
A successful login clears the account's failures. The record lives in the process: behind
several server processes each keeps its own (the limit then applies per process).

Example:
    >>> from datetime import timedelta
    >>> now = [0.0]
    >>> throttle = LoginThrottle(max_failures=2, window=timedelta(seconds=60), clock=lambda: now[0])
    >>> throttle.failed("ann", "10.0.0.1"); throttle.failed("ann", "10.0.0.1")
    >>> throttle.retry_after("ann", "10.0.0.2")   # the account is locked from any address
    60
    >>> now[0] = 61.0
    >>> throttle.retry_after("ann", "10.0.0.1")
    0
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import timedelta


class LoginThrottle:
    """Sliding-window count of failed logins per account name and per client address.

    Args:
        max_failures: failures allowed inside ``window`` (per name and per address); 0 turns
            throttling off.
        window: how long a failure counts.
        clock: seconds as a float (injectable for tests); ``time.monotonic`` by default.
    """

    def __init__(
        self,
        max_failures: int = 5,
        window: timedelta = timedelta(minutes=5),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_failures < 0:
            raise ValueError("max_failures must be >= 0")
        self.max_failures = max_failures
        self.window = window.total_seconds()
        self._clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _keys(self, name: str, address: str | None) -> list[str]:
        keys = [f"name:{name.casefold()}"]
        if address:
            keys.append(f"addr:{address}")
        return keys

    def _prune(self, key: str, now: float) -> deque[float]:
        times = self._failures.get(key, deque())
        while times and now - times[0] >= self.window:
            times.popleft()
        if not times:
            self._failures.pop(key, None)
        return times

    def retry_after(self, name: str, address: str | None) -> int:
        """Seconds to wait before ``name`` may try again from ``address``; 0 = allowed now."""
        if not self.max_failures:
            return 0
        now = self._clock()
        wait = 0.0
        with self._lock:
            for key in self._keys(name, address):
                times = self._prune(key, now)
                if len(times) >= self.max_failures:
                    wait = max(wait, times[-self.max_failures] + self.window - now)
        return math.ceil(wait) if wait > 0 else 0

    def failed(self, name: str, address: str | None) -> None:
        """Record a wrong password."""
        if not self.max_failures:
            return
        now = self._clock()
        with self._lock:
            for key in self._keys(name, address):
                self._prune(key, now)
                self._failures.setdefault(key, deque()).append(now)

    def succeeded(self, name: str) -> None:
        """A correct password: forget the account's failures (its address keeps its record)."""
        with self._lock:
            self._failures.pop(f"name:{name.casefold()}", None)
