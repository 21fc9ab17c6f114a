"""The annotation store: one database and the services (use cases) that work on it.

:class:`Store` is a :class:`~parakit.annotate.db.Database` (engine, transactions, row lookups
by id) that builds one service per area; the CLI and the web app call the same services:

====================  =============================================================
``store.accounts``    users, argon2id passwords, login sessions
``store.projects``    create / find / delete projects, membership, import
``store.queue``       assignment, leases, drafts and submissions, progress
``store.extraction``  pairs selected in document pairs (T6)
``store.review``      disagreements, resolution, QA queue (T8), rewrite check (T10)
``store.exports``     the released corpus as a PairSet or a file
``store.model``       an attached classifier: guesses, uncertainty order (model in the loop)
====================  =============================================================

Example:
    >>> from parakit.annotate.store import Store
    >>> store = Store.open("project.sqlite")                        # doctest: +SKIP
    >>> store.accounts.add_annotator("ann", "a long password")      # doctest: +SKIP
"""

from __future__ import annotations

from sqlalchemy import Engine

from parakit.annotate.db import MIGRATIONS, Database, make_engine, store_url, upgrade, utcnow
from parakit.annotate.services.accounts import Accounts, User, check_password, hash_password
from parakit.annotate.services.export import Exports
from parakit.annotate.services.extract import Extraction
from parakit.annotate.services.model import ModelLoop
from parakit.annotate.services.projects import Projects
from parakit.annotate.services.queue import Queue, Saved
from parakit.annotate.services.review import Review
from parakit.errors import AnnotateError, Conflict, Forbidden, NotFound

__all__ = [
    "MIGRATIONS",
    "AnnotateError",
    "Conflict",
    "Forbidden",
    "NotFound",
    "Saved",
    "Store",
    "User",
    "check_password",
    "hash_password",
    "make_engine",
    "store_url",
    "upgrade",
    "utcnow",
]


class Store(Database):
    """The annotation database with its services.

    Args:
        engine: a SQLAlchemy engine made by :func:`make_engine`; use :meth:`open`.
        cheap_hashing: hash new passwords with argon2's cheapest parameters (tests and
            benchmarks only; verification reads the parameters from each hash).
        hash_concurrency: password hashes computed at once (about 64 MiB each).
    """

    def __init__(
        self, engine: Engine, cheap_hashing: bool = False, hash_concurrency: int = 2
    ) -> None:
        super().__init__(engine, cheap_hashing=cheap_hashing)
        self.accounts = Accounts(self, hash_concurrency=hash_concurrency)
        self.projects = Projects(self)
        self.queue = Queue(self)
        self.extraction = Extraction(self)
        self.review = Review(self)
        self.exports = Exports(self)
        self.model = ModelLoop(self)

    def close(self) -> None:
        self.accounts.close()
        super().close()

    def tidy(self) -> None:
        """Delete what imports killed half-way left hidden (see
        :meth:`~parakit.annotate.services.projects.Projects.discard_abandoned_imports`)."""
        self.projects.discard_abandoned_imports()
