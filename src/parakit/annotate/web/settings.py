"""The web app's settings: one object read by ``parakit annotate serve``, :func:`create_app`
and every server worker.

A setting comes, highest first, from ``serve``'s option (or :func:`create_app`'s keyword
argument of the same name), the environment variable ``PARAKIT_ANNOTATE_<NAME>`` (durations
in seconds or ISO 8601, e.g. ``PARAKIT_ANNOTATE_SESSION_TTL=3600``; lists comma-separated),
then the default below. ``serve`` puts the settings it resolved into the environment, where
each worker process reads them again (:meth:`WebSettings.environment`).

Example:
    >>> WebSettings(session_ttl=3600).session_ttl
    datetime.timedelta(seconds=3600)
"""

from __future__ import annotations

import ipaddress
from datetime import timedelta
from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

PREFIX = "PARAKIT_ANNOTATE_"


class WebSettings(BaseSettings):
    """The annotation server's settings (see the module)."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="forbid", frozen=True)

    #: the store (path or database URL); None: given to :func:`create_app` itself
    store: str | None = None
    #: login sessions last this long
    session_ttl: timedelta = timedelta(hours=8)
    #: an item stays reserved this long to whoever opened it
    lease: timedelta = timedelta(minutes=30)
    #: send the session cookie over HTTPS only (behind a TLS proxy)
    secure_cookies: bool = False
    #: verbatim copies of this many words are marked in the extraction view
    overlap_words: int = 6
    #: wrong passwords per name and address within ``login_window`` before logins wait (HTTP
    #: 429; an address alone gets four times as many; 0 = no limit), see ``LoginThrottle``
    login_attempts: int = 5
    login_window: timedelta = timedelta(minutes=5)
    #: the first wait after the limit, doubled per further failure
    login_delay: timedelta = timedelta(seconds=30)
    #: proxies (addresses or networks, comma-separated; ``*`` = any) whose ``X-Forwarded-For``
    #: names the client; none by default: the header is ignored
    forwarded_allow_ips: Annotated[tuple[str, ...], NoDecode] = ()
    #: larger requests (uploads included) get HTTP 413
    max_body_mb: float = 20.0
    #: a gzipped upload is refused (E617) once it has expanded to this
    max_expanded_mb: float = 100.0
    #: password checks at once (argon2id, about 64 MiB each); more logins queue
    hash_concurrency: int = Field(2, ge=1)
    #: logins that may wait for a hashing slot; more get HTTP 503 with ``Retry-After``
    max_waiting_logins: int = 64
    #: logins waiting or checked at once from an address with recent failures (more: 429)
    logins_per_address: int = 2
    #: a login that waits this long for a hashing slot gets HTTP 503
    login_wait: timedelta = timedelta(seconds=5)
    #: server processes (PostgreSQL stores only: a SQLite store is served by one)
    workers: int = Field(1, ge=1)
    #: PostgreSQL connections all workers together may open, shared out evenly
    db_connections: int = Field(60, ge=2)

    @field_validator(
        "session_ttl", "lease", "login_window", "login_delay", "login_wait", mode="before"
    )
    @classmethod
    def _seconds(cls, value: Any) -> Any:
        if isinstance(value, str):  # "3600" in the environment: seconds
            try:
                return float(value)
            except ValueError:
                return value  # ISO 8601 ("PT1H") or "01:00:00"
        return value

    @field_validator("forwarded_allow_ips", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(x.strip() for x in value.split(",") if x.strip())
        return value

    @property
    def max_body_bytes(self) -> int:
        return int(self.max_body_mb * 1024 * 1024)

    @property
    def max_expanded_bytes(self) -> int:
        return int(self.max_expanded_mb * 1024 * 1024)

    @property
    def worker_connections(self) -> int:
        """The database connections one worker may open."""
        return max(2, self.db_connections // self.workers)

    def trusts(self, address: str | None) -> bool:
        """Whether ``address`` is one of the proxies named in ``forwarded_allow_ips``."""
        if not address:
            return False
        return any(
            entry in ("*", address) or _in_network(address, entry)
            for entry in self.forwarded_allow_ips
        )

    def environment(self) -> dict[str, str]:
        """These settings as the environment variables they are read from (every one set,
        so a worker reads exactly these)."""
        out = {}
        for name, value in self.model_dump(mode="json", exclude_none=True).items():
            if isinstance(value, list):
                value = ",".join(value)
            elif isinstance(value, bool):
                value = str(value).lower()
            out[env_name(name)] = str(value)
        return out


def _in_network(address: str, network: str) -> bool:
    """Whether the IP ``address`` lies in ``network`` (False when either is no IP)."""
    try:
        return ipaddress.ip_address(address) in ipaddress.ip_network(network, strict=False)
    except ValueError:
        return False


def env_name(field: str) -> str:
    """The environment variable of a setting (``session_ttl``: ``PARAKIT_ANNOTATE_SESSION_TTL``)."""
    return PREFIX + field.upper()
