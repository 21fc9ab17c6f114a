"""Annotator pages: the project list, the classify view, the extraction view."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from parakit.annotate.extraction import verbatim_overlaps
from parakit.annotate.services.extract import doc_title
from parakit.annotate.store import Store, User
from parakit.annotate.tasks import CLASSIFY, EXTRACT, SCREEN, TASKS, task_spec
from parakit.annotate.web.deps import (
    CurrentUser,
    ProjectMember,
    SettingsDep,
    StoreDep,
    render,
)
from parakit.annotate.web.text import markdown_html, segments
from parakit.errors import Errors, Forbidden
from parakit.labels import TurkuScheme

router = APIRouter()


def _done_page(request: Request, st: Store, user: User, project: Any, task: str) -> HTMLResponse:
    """The "nothing left" page of a task, with the annotator's progress."""
    return render(
        request,
        "done.html",
        user,
        project=project,
        task=task,
        progress=st.queue.progress(project.id, user.id, task),
    )


@router.get("/", response_class=HTMLResponse)
def index(
    request: Request,
    user: CurrentUser,
    st: StoreDep,
) -> HTMLResponse:
    rows = [
        {
            "project": project,
            "tasks": [(t, st.queue.progress(project.id, user.id, t.name)) for t in TASKS.values()],
        }
        for project in st.projects.projects_for(user)
    ]
    return render(request, "index.html", user, rows=rows, tasks=TASKS.values())


def doc_context(
    st: Store, doc_id: int | None, begin: int | None, end: int | None, margin: int | None = None
) -> dict | None:
    """A statement's document with the statement marked: all of it, or ``margin`` characters
    either side of the statement; None for a statement without a span."""
    if doc_id is None or begin is None or end is None:
        return None
    doc = st.document(doc_id)
    lo, hi = 0, len(doc.text)
    if margin is not None:
        lo, hi = max(lo, begin - margin), min(hi, end + margin)
    return {
        "key": doc.key,
        "title": doc_title(doc),
        "segments": segments(doc.text, lo, hi, [(begin, end, "span")]),
    }


@router.get("/p/{project_id}/classify", response_class=HTMLResponse)
def classify(
    request: Request,
    project_id: int,
    user: ProjectMember,
    st: StoreDep,
    cfg: SettingsDep,
    item: int | None = None,
    task: str = CLASSIFY,
) -> HTMLResponse:
    spec = task_spec(task, unit="item")
    project = st.project(project_id)
    scheme = st.scheme(project_id)
    if item is not None:  # back / undo: only an item this annotator already answered
        own = st.queue.annotation(item, user.id, task)
        if own is None or st.item(item).project_id != project_id:
            raise Forbidden(Errors.E602_item_one_your.format(item=item))
        item_id = item
    else:
        assignment = st.queue.lease_next(project_id, user.id, task, cfg.lease)
        if assignment is None:
            return _done_page(request, st, user, project, task)
        assert assignment.item_id is not None
        item_id = assignment.item_id
    row = st.item(item_id)
    own = st.queue.annotation(item_id, user.id, task)
    history = st.queue.history(project_id, user.id, task, limit=20)
    previous = next((h.item_id for h in history if h.item_id != item_id), None)
    hide = spec.hide_context
    data = {
        "item": item_id,
        "task": task,
        # model in the loop: the server decides (None in double annotation: blind)
        "guess": st.model.guess(item_id, task),
        "scheme": scheme.spec(),
        "values": scheme.values,
        "turku": isinstance(scheme, TurkuScheme),
        "annotation": None
        if own is None
        else {
            "label": own.label,
            "revision": own.revision,
            "status": own.status,
            "rewrite1": own.rewrite1,
            "rewrite2": own.rewrite2,
            "unsure": own.unsure,
            "comment": own.comment,
        },
    }
    return render(
        request,
        spec.template,
        user,
        project=project,
        item=row,
        task=task,
        context1=None if hide else doc_context(st, row.doc1_id, row.begin1, row.end1),
        context2=None if hide else doc_context(st, row.doc2_id, row.begin2, row.end2),
        hide=hide,
        data=data,
        previous=previous,
        base_values=_bases(scheme),
        descriptions=label_descriptions(project, scheme),
        progress=st.queue.progress(project_id, user.id, task),
    )


#: how many of one's own judgments the "recent" list shows
RECENT = 50


@router.get("/p/{project_id}/recent", response_class=HTMLResponse)
def recent(
    request: Request,
    project_id: int,
    user: ProjectMember,
    st: StoreDep,
    task: str = CLASSIFY,
) -> HTMLResponse:
    """The annotator's own last judgments of an item task, newest first, each a link back to
    its pair (the same route as Back / undo, so the same edit rules hold). Only their own
    labels: double annotation stays blind, so neither the other judgments nor the final
    label are shown."""
    spec = task_spec(task, unit="item")
    return render(
        request,
        "recent.html",
        user,
        project=st.project(project_id),
        task=spec,
        rows=st.queue.recent(project_id, user.id, spec.name, limit=RECENT),
        limit=RECENT,
    )


@router.get("/p/{project_id}/extract", response_class=HTMLResponse)
def extract(
    request: Request,
    project_id: int,
    user: ProjectMember,
    st: StoreDep,
    cfg: SettingsDep,
) -> HTMLResponse:
    project = st.project(project_id)
    assignment = st.queue.lease_next(project_id, user.id, EXTRACT, cfg.lease)
    if assignment is None:
        return _done_page(request, st, user, project, EXTRACT)
    assert assignment.doc_pair_id is not None
    dp = st.doc_pair(assignment.doc_pair_id)
    doc1, doc2 = st.document(dp.doc1_id), st.document(dp.doc2_id)
    overlaps = verbatim_overlaps(doc1.text, doc2.text, min_words=cfg.overlap_words)
    pairs = st.extraction.extracted_pairs(dp.id)
    marks1 = [(b, e, "copy") for b, e, _, _ in overlaps]
    marks2 = [(b, e, "copy") for _, _, b, e in overlaps]
    marks1 += [(p.begin1, p.end1, "taken") for p in pairs if p.begin1 is not None]
    marks2 += [(p.begin2, p.end2, "taken") for p in pairs if p.begin2 is not None]
    alignment = (dp.meta or {}).get("alignment") or [[0, len(doc1.text), 0, len(doc2.text)]]
    rows = [
        {
            "left": segments(doc1.text, b1, e1, marks1),
            "right": segments(doc2.text, b2, e2, marks2),
        }
        for b1, e1, b2, e2 in alignment
    ]
    return render(
        request,
        TASKS[EXTRACT].template,
        user,
        project=project,
        dp=dp,
        doc1=doc1,
        doc2=doc2,
        title1=doc_title(doc1),
        title2=doc_title(doc2),
        rows=rows,
        pairs=pairs,
        n_overlaps=len(overlaps),
        data={
            "doc_pair": dp.id,
            "suggestions": bool((project.settings or {}).get("suggestions")),
        },
        progress=st.queue.progress(project_id, user.id, EXTRACT),
    )


def _bases(scheme: Any) -> list[str]:
    if isinstance(scheme, TurkuScheme):
        return list(TurkuScheme.BASES)
    return list(scheme.values)


@router.get("/p/{project_id}/screen", response_class=HTMLResponse)
def screen(
    request: Request,
    project_id: int,
    user: ProjectMember,
    st: StoreDep,
    cfg: SettingsDep,
) -> HTMLResponse:
    """T4: the quick accept/reject pass over document pairs (forum threads) before
    extraction."""
    project = st.project(project_id)
    assignment = st.queue.lease_next(project_id, user.id, SCREEN, cfg.lease)
    if assignment is None:
        return _done_page(request, st, user, project, SCREEN)
    assert assignment.doc_pair_id is not None
    dp = st.doc_pair(assignment.doc_pair_id)
    dp_docs = (st.document(dp.doc1_id), st.document(dp.doc2_id))
    return render(
        request,
        TASKS[SCREEN].template,
        user,
        project=project,
        dp=dp,
        doc1=dp_docs[0],
        doc2=dp_docs[1],
        title1=doc_title(dp_docs[0]),
        title2=doc_title(dp_docs[1]),
        data={"doc_pair": dp.id},
        progress=st.queue.progress(project_id, user.id, SCREEN),
    )


#: what the Turku labels mean (Kanerva et al.), shown when a project gives no descriptions
TURKU_DESCRIPTIONS = {
    "4": "paraphrase: the same meaning in any context",
    "3": "paraphrase in this context only (context-dependent)",
    "2": "related, but not a paraphrase",
    "1": "unrelated",
    "x": "skip: not a usable pair (broken text, other language)",
    "<": "statement 1 is more specific: it includes statement 2's meaning and more",
    ">": "statement 2 is more specific: it includes statement 1's meaning and more",
    "i": "minor deviation: a small difference in meaning",
    "s": "style or register differs",
}


def label_descriptions(project: Any, scheme: Any) -> dict[str, str]:
    """The project's label descriptions, over the Turku defaults for a Turku scheme."""
    base = dict(TURKU_DESCRIPTIONS) if isinstance(scheme, TurkuScheme) else {}
    base.update((project.settings or {}).get("descriptions") or {})
    return base


@router.get("/p/{project_id}/guidelines", response_class=HTMLResponse)
def guidelines(
    request: Request,
    project_id: int,
    user: ProjectMember,
    st: StoreDep,
) -> HTMLResponse:
    """The project's guidelines (Markdown, rendered safely; admins edit them here) and what
    each label means."""
    project = st.project(project_id)
    source = (project.settings or {}).get("guidelines") or ""
    return render(
        request,
        "guidelines.html",
        user,
        project=project,
        guidelines=markdown_html(source) if source else "",
        source=source,
        descriptions=label_descriptions(project, st.scheme(project_id)),
    )
