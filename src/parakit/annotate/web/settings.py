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

    store: str | None = Field(None, description="the store (path or database URL)")
    session_ttl: timedelta = Field(timedelta(hours=8), description="login sessions last this")
    lease: timedelta = Field(
        timedelta(minutes=30), description="an item stays reserved to whoever opened it"
    )
    secure_cookies: bool = Field(False, description="HTTPS-only cookie (behind TLS)")
    overlap_words: int = Field(
        6, description="verbatim copies of this many words are marked in the extraction view"
    )
    login_attempts: int = Field(
        5,
        description="wrong passwords per name and address within login_window before logins "
        "wait (HTTP 429); an address alone gets four times as many (0 = no limit)",
    )
    login_window: timedelta = Field(timedelta(minutes=5), description="a failure counts this")
    login_delay: timedelta = Field(
        timedelta(seconds=30), description="first wait after the limit, doubled per failure"
    )
    forwarded_allow_ips: Annotated[tuple[str, ...], NoDecode] = Field(
        (),
        description="proxies (addresses or networks, comma-separated; * = any) whose "
        "X-Forwarded-For names the client; default none: the header is ignored",
    )
    max_body_mb: float = Field(20.0, description="largest request/upload accepted (HTTP 413)")
    max_expanded_mb: float = Field(
        100.0, description="largest size a gzipped upload may expand to (E617)"
    )
    hash_concurrency: int = Field(
        2, ge=1, description="password checks at once (argon2id, about 64 MiB each)"
    )
    max_waiting_logins: int = Field(
        64, description="logins that may wait for a hashing slot; more get HTTP 503"
    )
    logins_per_address: int = Field(
        2,
        description="logins waiting or checked at once from an address with recent failures; "
        "more get HTTP 429",
    )
    login_wait: timedelta = Field(
        timedelta(seconds=5), description="a login waiting longer for a slot gets HTTP 503"
    )
    workers: int = Field(
        1,
        ge=1,
        description="server processes (PostgreSQL stores only: a SQLite store is served by one)",
    )
    db_connections: int = Field(
        60,
        ge=2,
        description="PostgreSQL connections all workers together may open (shared out evenly; "
        "keep it under the server's max_connections)",
    )

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
        if not address or not self.forwarded_allow_ips:
            return False
        if "*" in self.forwarded_allow_ips:
            return True
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return address in self.forwarded_allow_ips
        for entry in self.forwarded_allow_ips:
            try:
                if ip in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                if address == entry:
                    return True
        return False

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


def env_name(field: str) -> str:
    """The environment variable of a setting (``session_ttl``: ``PARAKIT_ANNOTATE_SESSION_TTL``)."""
    return PREFIX + field.upper()
