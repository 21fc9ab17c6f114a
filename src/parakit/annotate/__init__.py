"""Annotation: the multi-user web tool, crowd import and aggregation, agreement, clusters.

Modules (import the one you need; the web stack is only loaded by :mod:`parakit.annotate.web`):

* :mod:`~parakit.annotate.models` / :mod:`~parakit.annotate.store` — the SQLAlchemy store
  (SQLite in WAL mode by default, PostgreSQL by URL), migrated with Alembic.
* :mod:`~parakit.annotate.web` — the FastAPI app behind ``parakit annotate serve``.
* :mod:`~parakit.annotate.crowd` — crowd judgments: import, worker quality control, aggregation.
* :mod:`~parakit.annotate.agreement` — Cohen's, Fleiss' kappa, Krippendorff's alpha, accuracy
  against consensus, on full and reduced labels.
* :mod:`~parakit.annotate.clusters` — transitive paraphrase clusters and multi-reference sets.
"""
