"""The annotation use cases, one service per area, shared by the CLI and the web app.

Each service holds the :class:`~parakit.annotate.db.Database` it works on (``db``) and runs
every write in one transaction. :class:`~parakit.annotate.store.Store` builds them all:

* ``store.accounts`` — :class:`~parakit.annotate.services.accounts.Accounts`: users,
  passwords, login sessions.
* ``store.projects`` — :class:`~parakit.annotate.services.projects.Projects`: projects,
  membership, import.
* ``store.queue`` — :class:`~parakit.annotate.services.queue.Queue`: assignment, leases,
  annotations, progress.
* ``store.extraction`` — :class:`~parakit.annotate.services.extract.Extraction`: pairs
  selected in document pairs (T6).
* ``store.review`` — :class:`~parakit.annotate.services.review.Review`: adjudication, QA
  (T8), rewrite check (T10).
* ``store.exports`` — :class:`~parakit.annotate.services.export.Exports`: the released corpus.
"""
