"""Annotator JSON actions: next item, save/submit, extracted pairs, finish a document pair."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from parakit.annotate.tasks import CLASSIFY, task_spec
from parakit.annotate.web.deps import (
    DocPairMember,
    ItemMember,
    ProjectMember,
    SettingsDep,
    StoreDep,
)
from parakit.annotate.web.schemas import (
    FinishBody,
    SaveBody,
    ScreenBody,
    SkipBody,
    SpanBody,
)

router = APIRouter()


@router.get("/api/projects/{project_id}/next")
def next_item(
    project_id: int,
    user: ProjectMember,
    st: StoreDep,
    cfg: SettingsDep,
    task: str = CLASSIFY,
) -> dict[str, Any]:
    """The item leased to the caller next (JSON clients, load tests); null when done."""
    task_spec(task, unit="item")
    assignment = st.queue.lease_next(project_id, user.id, task, cfg.lease)
    if assignment is None or assignment.item_id is None:
        return {"item": None}
    row = st.item(assignment.item_id)
    own = st.queue.annotation(row.id, user.id, task)
    return {
        "item": row.id,
        "text1": row.text1,
        "text2": row.text2,
        "revision": 0 if own is None else own.revision,
        "label": None if own is None else own.label,
        # the attached model's pre-selection; None in double annotation (blind)
        "guess": st.model.guess(row.id, task),
    }


@router.post("/api/items/{item_id}/save")
def save(item_id: int, body: SaveBody, user: ItemMember, st: StoreDep) -> dict[str, Any]:
    task_spec(body.task, unit="item")
    saved = st.queue.save(
        item_id,
        user.id,
        label=body.label,
        revision=body.revision,
        submit=body.submit,
        # blank on both sides: no rewrite (Queue.save drops it)
        rewrite=(body.rewrite1 or "", body.rewrite2 or ""),
        unsure=body.unsure,
        comment=body.comment,
        task=body.task,
    )
    return {"revision": saved.revision, "status": saved.status, "id": saved.annotation_id}


@router.post("/api/docpairs/{doc_pair_id}/pairs")
def add_pair(doc_pair_id: int, body: SpanBody, user: DocPairMember, st: StoreDep) -> dict[str, Any]:
    item_id = st.extraction.add_extracted_pair(
        doc_pair_id,
        user.id,
        body.begin1,
        body.end1,
        body.begin2,
        body.end2,
        suggestion=None if body.suggestion is None else body.suggestion.model_dump(),
    )
    row = st.item(item_id)
    return {"item": item_id, "key": row.key, "text1": row.text1, "text2": row.text2}


@router.get("/api/docpairs/{doc_pair_id}/suggestions")
def suggestions(doc_pair_id: int, user: DocPairMember, st: StoreDep) -> dict[str, Any]:
    """Suggested passage pairs of a document pair leased to the caller (projects with the
    ``suggestions`` setting), best first."""
    return {"suggestions": st.extraction.suggestions(doc_pair_id, user.id)}


@router.post("/api/items/{item_id}/delete-extracted")
def delete_pair(item_id: int, user: ItemMember, st: StoreDep) -> dict[str, Any]:
    st.extraction.delete_extracted_pair(item_id, user.id)
    return {"ok": True}


@router.post("/api/docpairs/{doc_pair_id}/finish")
def finish(
    doc_pair_id: int,
    body: FinishBody,
    user: DocPairMember,
    st: StoreDep,
) -> dict[str, Any]:
    st.extraction.finish_doc_pair(doc_pair_id, user.id, empty=body.empty)
    return {"ok": True, "status": st.doc_pair(doc_pair_id).status}


@router.post("/api/items/{item_id}/skip")
def skip(
    item_id: int,
    body: SkipBody,
    user: ItemMember,
    st: StoreDep,
) -> dict[str, Any]:
    """Give back a hard item: it goes to the end of the queue, the next lease is another."""
    task_spec(body.task, unit="item")
    st.queue.skip(item_id, user.id, body.task)
    return {"ok": True}


@router.post("/api/docpairs/{doc_pair_id}/screen")
def screen_doc_pair(
    doc_pair_id: int,
    body: ScreenBody,
    user: DocPairMember,
    st: StoreDep,
) -> dict[str, Any]:
    """T4: accept (on to extraction) or reject a document pair."""
    return {"status": st.extraction.screen(doc_pair_id, user.id, body.accept)}
