"""Admin and adjudicator pages (overview, consensus, QA, statistics, export) and actions."""

from __future__ import annotations

import io
import re
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from parakit.annotate.extraction import extraction_stats
from parakit.annotate.services.projects import check_project_name, read_pairs
from parakit.annotate.services.review import why_undefined
from parakit.annotate.store import Store, User
from parakit.annotate.tasks import EXTRACT, TASKS
from parakit.annotate.web.deps import (
    Adjudicator,
    Admin,
    ItemAdjudicator,
    ProjectAdjudicator,
    SettingsDep,
    StoreDep,
    render,
)
from parakit.annotate.web.routers.pages import doc_context
from parakit.annotate.web.schemas import (
    ActiveBody,
    AssignBody,
    MembersBody,
    PasswordBody,
    ResolveBody,
    SettingsBody,
    UserBody,
)
from parakit.errors import AnnotateError, Errors, NotFound, ParakitError
from parakit.labels import TurkuScheme

router = APIRouter()


def _progress_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``project_progress`` rows with each task's title."""
    return [{**row, "title": getattr(TASKS.get(row["task"]), "title", row["task"])} for row in rows]


@router.get("/admin", response_class=HTMLResponse)
def admin_page(request: Request, user: Adjudicator, st: StoreDep) -> HTMLResponse:
    """The index: one compact row per project (progress and what waits for an adjudicator);
    everything done to one project lives on its own page."""
    progress = st.queue.project_progress()
    projects = [
        {
            "project": project,
            # counted in SQL: the judgments are never read for the index
            "conflicts": st.review.disagreement_count(project.id),
            "qa": st.review.qa_count(project.id),
            "annotations": st.queue.count_annotations(project.id),
            "progress": _progress_rows(progress.get(project.id, [])),
        }
        for project in st.projects.projects_for(user)
    ]
    return render(
        request,
        "admin.html",
        user,
        projects=projects,
        annotators=sorted(st.accounts.annotator_names().values()),
    )


@router.get("/admin/p/{project_id}", response_class=HTMLResponse)
def project_page(
    request: Request, project_id: int, user: ProjectAdjudicator, st: StoreDep
) -> HTMLResponse:
    """One project: progress, agreement, queues, members, exports and (admins) the danger
    zone; every figure counted in SQL."""
    project = st.project(project_id)
    names = st.accounts.annotator_names()
    members = [names[uid] for uid in st.projects.members(project_id) if uid in names]
    return render(
        request,
        "project.html",
        user,
        project=project,
        turku=isinstance(st.scheme(project_id), TurkuScheme),
        progress=_progress_rows(st.queue.project_progress(project_id).get(project_id, [])),
        agreement=st.review.agreement_summary(project_id),
        conflicts=st.review.disagreement_count(project_id),
        qa=st.review.qa_count(project_id),
        annotations=st.queue.count_annotations(project_id),
        members=members,
        others=sorted(set(names.values()) - set(members)),
        tasks=[spec for spec in TASKS.values() if spec.assign],
    )


PER_PAGE = 20


def context_of(st: Store, item: Any) -> list[dict[str, Any]]:
    """The documents around an item's statements, the statement marked (for adjudicators)."""
    sides = ((item.doc1_id, item.begin1, item.end1), (item.doc2_id, item.begin2, item.end2))
    contexts = [doc_context(st, doc_id, begin, end, margin=600) for doc_id, begin, end in sides]
    return [context for context in contexts if context is not None]


def review_page(
    request: Request,
    st: Store,
    project_id: int,
    user: User,
    fetch: Any,
    total: int,
    title: str,
    empty: str,
    page: int = 1,
    open_context: bool = False,
) -> HTMLResponse:
    """An adjudicator's list of items with their annotations and document context
    (consensus and QA pages), ``PER_PAGE`` at a time: ``fetch(page)`` reads one page of
    ``(item, annotations)`` groups (in SQL) out of ``total``; the caller checks the user's
    rights first."""
    names = st.accounts.annotator_names()
    pages = max(1, -(-total // PER_PAGE))
    page = min(max(page, 1), pages)
    rows = [
        {
            "item": item,
            "annotations": [(names[a.annotator_id], a) for a in anns],
            "context": context_of(st, item),
        }
        for item, anns in fetch(page)
    ]
    return render(
        request,
        "consensus.html",
        user,
        project=st.project(project_id),
        rows=rows,
        title=title,
        empty=empty,
        page=page,
        pages=pages,
        total=total,
        path=request.url.path,
        open_context=open_context,
    )


@router.get("/admin/p/{project_id}/consensus", response_class=HTMLResponse)
def consensus(
    request: Request,
    project_id: int,
    user: ProjectAdjudicator,
    st: StoreDep,
    page: int = 1,
    item: int | None = None,
) -> Response:
    """The open disagreements, a page at a time; ``item``: go to the page that holds that
    item (its own page when it is no open disagreement: agreed, resolved or judged once)."""
    if item is not None:
        where = st.review.disagreement_position(project_id, item)
        target = (
            f"/admin/p/{project_id}/items/{item}"
            if where is None
            else f"/admin/p/{project_id}/consensus?page={where // PER_PAGE + 1}#item-{item}"
        )
        return RedirectResponse(target, status_code=303)
    return review_page(
        request,
        st,
        project_id,
        user,
        lambda n: st.review.disagreements(project_id, page=n, per_page=PER_PAGE),
        st.review.disagreement_count(project_id),
        "Consensus",
        "No open disagreements.",
        page,
    )


@router.get("/admin/p/{project_id}/items/{item_id}", response_class=HTMLResponse)
def item_page(
    request: Request,
    project_id: int,
    item_id: int,
    user: ProjectAdjudicator,
    st: StoreDep,
) -> HTMLResponse:
    """One item: its statements, its document context (open), every submitted judgment and
    the resolve form (an adjudicator may set the label of any item, disputed or not)."""
    row, judgments = st.review.judged(item_id)
    if row.project_id != project_id:
        raise NotFound(Errors.E601_item_project.format(item_id=item_id, project_id=project_id))
    return review_page(
        request,
        st,
        project_id,
        user,
        lambda _page: [(row, judgments)],
        1,
        f"item {row.key}",
        "",
        open_context=True,
    )


@router.get("/admin/p/{project_id}/qa", response_class=HTMLResponse)
def qa(
    request: Request,
    project_id: int,
    user: ProjectAdjudicator,
    st: StoreDep,
    page: int = 1,
) -> HTMLResponse:
    return review_page(
        request,
        st,
        project_id,
        user,
        lambda n: [
            (item, [a]) for item, a in st.review.qa_queue(project_id, page=n, per_page=PER_PAGE)
        ],
        st.review.qa_count(project_id),
        "QA queue (flags s/i, grouped by label, oldest first)",
        "Nothing to re-check.",
        page,
    )


@router.get("/admin/p/{project_id}/stats", response_class=HTMLResponse)
def stats(
    request: Request,
    project_id: int,
    user: ProjectAdjudicator,
    st: StoreDep,
) -> HTMLResponse:
    """Agreement, the rewrite check, extraction and the model's guesses; the reports are
    computed once per project revision (``Review.statistics``): a view with no change since
    the last one reads them from the store."""
    reports = st.review.statistics(project_id)
    report, check = reports["agreement"], reports["rewrite_check"]
    return render(
        request,
        "stats.html",
        user,
        project=st.project(project_id),
        extraction=extraction_stats(st.extraction.extraction_rows(project_id)),
        agreement=[(key, value, why_undefined(key, value)) for key, value in report.items()],
        rewrite_check=[
            (key, value, why_undefined(key, value, check)) for key, value in check.items()
        ],
        model=st.model.info(project_id),
        model_summary=reports["model"],
    )


@router.get("/admin/p/{project_id}/export")
def export(
    project_id: int,
    user: Admin,
    st: StoreDep,
    format: str = "jsonl",
    drop: str = "",
    judgments: bool = False,
) -> Response:
    project = st.project(project_id)
    drop_labels = tuple(x for x in drop.split(",") if x)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            return _export(st, project, Path(tmp), format, drop_labels, judgments)
        except ParakitError as err:
            # the message names the server's temporary file: name the download instead
            shown = err.message.replace(str(Path(tmp) / "export"), project.name)
            raise AnnotateError(shown.replace(tmp, "export"), code=err.code) from None


def _export(
    st: Store,
    project: Any,
    tmp: Path,
    format: str,
    drop_labels: tuple[str, ...],
    judgments: bool,
) -> Response:
    """The export of ``project`` as a download, written through the folder ``tmp``."""
    if format == "jsonl":
        path = st.exports.export(
            project.id, tmp / "export.jsonl", drop_labels=drop_labels, judgments=judgments
        )
        body, media_type, name = path.read_bytes(), "application/x-ndjson", f"{project.name}.jsonl"
    elif format == "turku":
        st.exports.export(project.id, tmp / "export.json", format="turku", drop_labels=drop_labels)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for file in sorted(tmp.iterdir()):
                archive.write(file, file.name.replace("export", _ascii(project.name), 1))
        body, media_type, name = buffer.getvalue(), "application/zip", f"{project.name}-turku.zip"
    else:
        raise AnnotateError(Errors.E610_unknown_export_format.format(format_=format))
    return Response(body, media_type=media_type, headers={"Content-Disposition": attachment(name)})


def _ascii(name: str) -> str:
    """``name`` with everything but ASCII letters, digits, ``.``, ``_`` and ``-`` replaced."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "export"


def attachment(filename: str) -> str:
    """A ``Content-Disposition`` value that no name can break: an ASCII fallback plus the
    RFC 6266/5987 ``filename*`` with the UTF-8 name percent-encoded."""
    return (
        f"attachment; filename=\"{_ascii(filename)}\"; filename*=UTF-8''{quote(filename, safe='')}"
    )


@router.get("/admin/users", response_class=HTMLResponse)
def users_page(request: Request, user: Admin, st: StoreDep) -> HTMLResponse:
    projects = st.projects.overview()
    members = {p["id"]: set(st.projects.members(p["id"])) for p in projects}
    rows = [
        {**u, "projects": [p["name"] for p in projects if u["id"] in members[p["id"]]]}
        for u in st.accounts.users()
    ]
    return render(request, "users.html", user, users=rows, projects=projects)


@router.get("/admin/p/{project_id}/progress", response_class=HTMLResponse)
def progress_page(
    request: Request,
    project_id: int,
    user: ProjectAdjudicator,
    st: StoreDep,
) -> HTMLResponse:
    return render(
        request,
        "progress.html",
        user,
        project=st.project(project_id),
        rows=st.queue.annotator_progress(project_id),
        extract=st.queue.annotator_progress(project_id, task=EXTRACT),
    )


@router.get("/admin/p/{project_id}/items", response_class=HTMLResponse)
def items_page(
    request: Request,
    project_id: int,
    user: ProjectAdjudicator,
    st: StoreDep,
    label: str = "",
    annotator: str = "",
    state: str = "",
    text: str = "",
    page: int = 1,
) -> HTMLResponse:
    who = st.accounts.annotator_id(annotator) if annotator else None
    rows, total = st.review.browse(
        project_id,
        label=label or None,
        annotator=who,
        state=state or None,
        text=text or None,
        page=page,
        per_page=PER_PAGE,
    )
    return render(
        request,
        "items.html",
        user,
        project=st.project(project_id),
        rows=rows,
        total=total,
        page=max(page, 1),
        pages=max(1, -(-total // PER_PAGE)),
        filters={"label": label, "annotator": annotator, "state": state, "text": text},
        annotators=sorted(st.accounts.annotator_names().values()),
    )


@router.get("/admin/p/{project_id}/docpairs", response_class=HTMLResponse)
def doc_pairs_page(
    request: Request,
    project_id: int,
    user: ProjectAdjudicator,
    st: StoreDep,
    status: str = "",
    page: int = 1,
) -> HTMLResponse:
    """A project's document pairs with their status; admins re-open a finished one here."""
    rows, total = st.extraction.doc_pairs(
        project_id, status=status or None, page=page, per_page=PER_PAGE
    )
    return render(
        request,
        "docpairs.html",
        user,
        project=st.project(project_id),
        rows=rows,
        total=total,
        status=status,
        page=max(page, 1),
        pages=max(1, -(-total // PER_PAGE)),
        names=st.accounts.annotator_names(),
    )


# -- admin API -------------------------------------------------------------------------------
@router.post("/api/admin/docpairs/{doc_pair_id}/reopen")
def reopen_doc_pair(doc_pair_id: int, user: Admin, st: StoreDep) -> dict[str, Any]:
    """Undo the finish of a document pair: open again, back in its annotator's queue."""
    return {"status": st.extraction.reopen_doc_pair(doc_pair_id, user.id)}


@router.post("/api/admin/users")
def create_user(body: UserBody, user: Admin, st: StoreDep) -> dict[str, Any]:
    uid = st.accounts.add_annotator(
        body.name, body.password, role=body.role, projects=body.projects
    )
    return {"id": uid}


@router.post("/api/admin/projects")
def create_project(
    user: Admin,
    st: StoreDep,
    cfg: SettingsDep,
    name: str = Form(...),
    scheme: str = Form("turku"),
    kind: str = Form("candidates"),
    classify_mode: str = Form("single"),
    file: UploadFile = File(...),
    texts: UploadFile | None = File(None),
) -> dict[str, Any]:
    check_project_name(name)
    with tempfile.TemporaryDirectory() as tmp:
        # uploaded names are never used as paths: fixed names, the suffix kept for the reader
        suffix = "".join(Path(file.filename or "upload.jsonl").suffixes[-2:])
        if not suffix.replace(".", "").isalnum():
            suffix = ".jsonl"
        limit = cfg.max_expanded_bytes
        # saved decompressed (within the limit), so no reader ever expands a gzip bomb
        target = Path(tmp) / f"upload{suffix.lower().removesuffix('.gz')}"
        _save_upload(file, target, limit)
        names = {str(target): file.filename or "upload"}
        texts_path = None
        if texts is not None and texts.filename:
            texts_path = Path(tmp) / "texts.json"
            _save_upload(texts, texts_path, limit)
            names[str(texts_path)] = texts.filename
        try:
            pairs = read_pairs(target, scheme=scheme, texts=texts_path)
        except ParakitError as err:
            # the message names the uploaded file, never the server's temporary path
            message = err.message
            for temporary, uploaded in names.items():
                message = message.replace(temporary, uploaded)
            raise AnnotateError(message, code=err.code) from None
    project_id, count = st.projects.create_with_pairs(
        name, scheme, pairs, kind=kind, settings={"classify_mode": classify_mode}
    )
    return {"id": project_id, "imported": count}


def _save_upload(upload: UploadFile, target: Path, max_expanded: int) -> None:
    """Write an upload to ``target``, gunzipped (told by its first bytes, not its name), at
    most ``max_expanded`` bytes: a small gzip file that expands to gigabytes is refused once
    ``max_expanded`` bytes are out, in 1 MiB steps, never held in memory."""
    name = upload.filename or "upload"
    written = 0

    def emit(data: bytes) -> None:
        nonlocal written
        written += len(data)
        if written > max_expanded:
            raise AnnotateError(
                Errors.E617_more_mb_once.format(
                    name=name, max_expanded_1_20=max_expanded / (1 << 20)
                )
            )
        handle.write(data)

    chunk = upload.file.read(1 << 20)
    inflate = zlib.decompressobj(wbits=31) if chunk[:2] == b"\x1f\x8b" else None
    with target.open("wb") as handle:
        try:
            while chunk:
                if inflate is None:
                    emit(chunk)
                else:
                    emit(inflate.decompress(chunk, 1 << 20))
                    while inflate.unconsumed_tail:
                        emit(inflate.decompress(inflate.unconsumed_tail, 1 << 20))
                    if inflate.eof and inflate.unused_data:  # a multi-member gzip file
                        rest, inflate = inflate.unused_data, zlib.decompressobj(wbits=31)
                        chunk = rest
                        continue
                chunk = upload.file.read(1 << 20)
            if inflate is not None:
                emit(inflate.flush())
                if not inflate.eof:
                    raise AnnotateError(Errors.E611_gzip_file_cut.format(name=name))
        except zlib.error as err:
            raise AnnotateError(Errors.E611_valid_gzip_file.format(name=name, err=err)) from None


@router.post("/api/admin/projects/{project_id}/settings")
def project_settings(
    project_id: int,
    body: SettingsBody,
    user: Admin,
    st: StoreDep,
) -> dict[str, Any]:
    """Set the guidelines, label descriptions or question of a project."""
    changes = body.model_dump(exclude_unset=True)
    return {"settings": st.projects.update_settings(project_id, **changes)}


@router.post("/api/admin/projects/{project_id}/delete")
def delete_project(project_id: int, user: Admin, st: StoreDep) -> dict[str, Any]:
    st.projects.delete_project(project_id)
    return {"ok": True}


@router.post("/api/admin/projects/{project_id}/members")
def add_members(
    project_id: int,
    body: MembersBody,
    user: Admin,
    st: StoreDep,
) -> dict[str, Any]:
    st.project(project_id)
    for name in body.annotators:
        uid = st.accounts.annotator_id(name)
        if body.remove:
            st.projects.remove_member(project_id, uid)
        else:
            st.projects.add_member(project_id, uid)
    return {"ok": True}


@router.post("/api/admin/users/{user_id}/active")
def set_active(user_id: int, body: ActiveBody, user: Admin, st: StoreDep) -> dict[str, Any]:
    if user_id == user.id and not body.active:
        raise AnnotateError(Errors.E604_you_deactivate_yourself)
    done = st.accounts.set_active(user_id, body.active)
    return {"ok": True, "returned": done.returned, "stranded": done.stranded}


@router.post("/api/admin/users/{user_id}/password")
def reset_password(
    user_id: int,
    body: PasswordBody,
    user: Admin,
    st: StoreDep,
) -> dict[str, Any]:
    st.accounts.set_password(user_id, body.password)
    return {"ok": True}


@router.post("/api/admin/projects/{project_id}/assign")
def assign(
    project_id: int,
    body: AssignBody,
    user: Admin,
    st: StoreDep,
) -> dict[str, Any]:
    made = st.queue.assign_task(
        project_id,
        task=body.task,
        mode=body.mode,
        annotators=body.annotators,
        batch=body.batch,
        seed=body.seed,
    )
    return {"assigned": made}


@router.post("/api/admin/items/{item_id}/resolve")
def resolve(item_id: int, body: ResolveBody, user: ItemAdjudicator, st: StoreDep) -> dict[str, Any]:
    st.review.resolve(item_id, body.label, user.id)
    return {"label": st.item(item_id).label}


@router.post("/api/admin/projects/{project_id}/rewrite-check")
def rewrite_check(
    project_id: int,
    user: Admin,
    st: StoreDep,
    seed: int = 0,
) -> dict[str, Any]:
    return {"assigned": st.review.make_rewrite_check(project_id, seed=seed)}


@router.get("/api/admin/projects/{project_id}/model")
def model_info(project_id: int, user: Admin, st: StoreDep) -> dict[str, Any]:
    """The project's attached model and how often annotators kept its guess. Models are
    attached with ``parakit annotate attach-model``: the server never loads a model folder
    (model files can run code when unpickled)."""
    summary = st.model.summary(project_id)
    rate = summary["kept_rate"]
    return {
        "model": st.model.info(project_id),
        "guesses": {**summary, "kept_rate": None if rate != rate else rate},  # NaN: none shown
    }


@router.post("/api/admin/projects/{project_id}/model/detach")
def model_detach(project_id: int, user: Admin, st: StoreDep) -> dict[str, Any]:
    """Forget the project's model: no more guesses; the queue keeps its current order."""
    st.model.detach(project_id)
    return {"model": None}
