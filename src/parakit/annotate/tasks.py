"""The annotation task types: one table that the queue, the pages, the JSON API, the request
bodies and the CLI read, so a new task type is a row here (plus its template if it needs one).

``Assignment.task`` and ``Annotation.task`` hold a task's :attr:`TaskSpec.name`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from parakit.errors import Errors, NotFound

CLASSIFY = "classify"
EXTRACT = "extract"
SCREEN = "screen"
REWRITE_CHECK = "rewrite-check"


@dataclass(frozen=True)
class TaskSpec:
    """One task type.

    Attributes:
        name: stored in the ``task`` columns; the ``task`` of URLs and request bodies.
        unit: what one assignment holds: an ``item`` (a pair to label) or a ``doc_pair``.
        template: the page that shows one unit, served at ``/p/{project}/{page}``.
        body: the request body (class in :mod:`parakit.annotate.web.schemas`) of its actions.
        assign: how ``Queue.assign_task`` queues it: ``items`` (single or double), ``doc_pairs``,
            or ``None``: another use case makes its batch (``Review.make_rewrite_check``, T10).
        title: its name on the annotator's project list and the admin's assign form.
        hide_context: the page shows no document context or provenance (T10: blind judgments).
        optional: listed only while the annotator has some of it (the T4 quick pass).
        fresh_eyes: an item never goes to anyone who classified it (or, for a rewrite, the
            pair it rewrites): T10 gives the check only pairs "previously annotated by someone
            else".
    """

    name: str
    unit: Literal["item", "doc_pair"]
    template: str
    body: str
    assign: Literal["items", "doc_pairs"] | None
    title: str
    hide_context: bool = False
    optional: bool = False
    fresh_eyes: bool = False

    @property
    def page(self) -> str:
        """The page path after ``/p/{project}/``; item tasks share the classify view."""
        return CLASSIFY if self.unit == "item" else self.name

    def url(self, project_id: int) -> str:
        """The page that leases this task's next unit."""
        query = "" if self.page == self.name else f"?task={self.name}"
        return f"/p/{project_id}/{self.page}{query}"


#: every task type, in the order of the annotator's project list (the first is the default)
TASKS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        TaskSpec(CLASSIFY, "item", "classify.html", "SaveBody", "items", "Classify"),
        TaskSpec(
            SCREEN,
            "doc_pair",
            "screen.html",
            "ScreenBody",
            "doc_pairs",
            "Quick pass",
            optional=True,
        ),
        TaskSpec(EXTRACT, "doc_pair", "extract.html", "SpanBody", "doc_pairs", "Extract"),
        TaskSpec(
            REWRITE_CHECK,
            "item",
            "classify.html",
            "SaveBody",
            None,
            "Rewrite check",
            hide_context=True,
            fresh_eyes=True,
        ),
    )
}


def task_spec(name: str, *, unit: str | None = None, assignable: bool = False) -> TaskSpec:
    """The spec of task ``name``, checked as the caller needs it.

    Raises:
        NotFound: (E606) no such task, or not of ``unit``, or (``assignable``) not one that
            ``assign`` queues; the message lists the names that would do.
    """
    spec = TASKS.get(name)
    fits = [
        s.name
        for s in TASKS.values()
        if (unit is None or s.unit == unit) and (not assignable or s.assign is not None)
    ]
    if spec is None or spec.name not in fits:
        raise NotFound(Errors.E606_unknown_task_use.format(name=name, fits=", ".join(fits)))
    return spec
