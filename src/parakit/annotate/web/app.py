"""The annotation web app (``parakit annotate serve``): FastAPI, server-rendered pages, light JS.

Identity comes only from the session cookie (never from the URL); every project page checks
membership, every item action checks the caller's lease or own annotation, and every write is
one committed transaction before the reply. Pages are Jinja templates with autoescaping and a
per-request CSP nonce, so document text cannot inject script. JSON actions require the
``X-Parakit`` header, which a cross-site form cannot send (with the ``SameSite=Strict``
cookie this closes CSRF).

Example:
    >>> from parakit.annotate.web import create_app
    >>> app = create_app("project.sqlite")   # doctest: +SKIP
    >>> import uvicorn; uvicorn.run(app)     # doctest: +SKIP
"""

from __future__ import annotations

import io
import itertools
import secrets
import tempfile
import zipfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, File, Form, HTTPException, Request, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, Field

from parakit.annotate.extraction import extraction_stats, verbatim_overlaps
from parakit.annotate.store import (
    AnnotateError,
    Conflict,
    Forbidden,
    NotFound,
    Store,
    User,
)
from parakit.annotate.throttle import LoginThrottle
from parakit.errors import LabelError, ParakitError
from parakit.labels import TurkuScheme

COOKIE = "parakit_session"
HEADER = "x-parakit"
TEMPLATES = Path(__file__).with_name("templates")


class SaveBody(BaseModel):
    label: str | None = None
    revision: int = 0
    submit: bool = False
    rewrite1: str | None = Field(default=None, max_length=10000)
    rewrite2: str | None = Field(default=None, max_length=10000)
    unsure: bool = False
    comment: str | None = Field(default=None, max_length=10000)
    task: str = "classify"


class SpanBody(BaseModel):
    begin1: int
    end1: int
    begin2: int
    end2: int


class FinishBody(BaseModel):
    empty: bool = False


class UserBody(BaseModel):
    name: str = Field(min_length=1, max_length=100)
    password: str = Field(min_length=8, max_length=1000)
    role: str = "annotator"
    projects: list[int] = []


class AssignBody(BaseModel):
    task: str = "classify"
    mode: str = "single"
    annotators: list[str] | None = None
    batch: str = "default"
    seed: int = 0


class ResolveBody(BaseModel):
    label: str


class MembersBody(BaseModel):
    annotators: list[str]


class _LoginRequired(Exception):
    pass


def segments(
    text: str, begin: int, end: int, marks: list[tuple[int, int, str]]
) -> list[dict[str, Any]]:
    """Split ``text[begin:end]`` at the borders of ``marks`` (``(b, e, css_class)``) into
    ``{"b": offset, "text": ..., "cls": "..."}`` pieces; the JS maps a DOM selection back to
    character offsets through ``b``."""
    cuts = {begin, end}
    for b, e, _ in marks:
        cuts.update(x for x in (b, e) if begin < x < end)
    points = sorted(cuts)
    out = []
    for b, e in itertools.pairwise(points):
        classes = sorted({cls for mb, me, cls in marks if mb <= b and e <= me})
        out.append({"b": b, "text": text[b:e], "cls": " ".join(classes)})
    return out


def create_app(
    store: Store | str | Path,
    *,
    session_ttl: timedelta = timedelta(hours=8),
    lease: timedelta = timedelta(minutes=30),
    secure_cookies: bool = False,
    overlap_words: int = 6,
    login_attempts: int = 5,
    login_window: timedelta = timedelta(minutes=5),
) -> FastAPI:
    """Build the web app on a store.

    Args:
        store: a :class:`Store` or a path/URL to open.
        session_ttl: login sessions expire after this long.
        lease: how long an item stays reserved for the annotator who opened it.
        secure_cookies: send the session cookie only over HTTPS (set behind a TLS proxy).
        overlap_words: verbatim copies of at least this many words are highlighted in the
            extraction view.
        login_attempts: wrong passwords allowed per account name and per client address
            within ``login_window`` before logins are refused with HTTP 429 (0 = no limit).
        login_window: how long a wrong password counts.
    """
    if not isinstance(store, Store):
        store = Store.open(store)
    st: Store = store
    app = FastAPI(title="parakit annotate", docs_url=None, redoc_url=None, openapi_url=None)
    templates = Jinja2Templates(directory=str(TEMPLATES))
    app.state.store = st
    throttle = LoginThrottle(max_failures=login_attempts, window=login_window)
    app.state.login_throttle = throttle

    # -- plumbing --------------------------------------------------------------------------
    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        request.state.nonce = secrets.token_urlsafe(16)
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = (
            f"default-src 'self'; script-src 'nonce-{request.state.nonce}'; "
            "style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; "
            "frame-ancestors 'none'; form-action 'self'"
        )
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.exception_handler(_LoginRequired)
    async def to_login(request: Request, exc: _LoginRequired) -> Response:
        return RedirectResponse("/login", status_code=303)

    @app.exception_handler(ParakitError)
    async def parakit_error(request: Request, exc: ParakitError) -> Response:
        status = 400
        if isinstance(exc, NotFound):
            status = 404
        elif isinstance(exc, Forbidden):
            status = 403
        elif isinstance(exc, Conflict):
            status = 409
        return JSONResponse({"error": str(exc), "code": exc.code}, status_code=status)

    def render(request: Request, name: str, user: User | None, **context: Any) -> HTMLResponse:
        context.update(request=request, user=user, nonce=request.state.nonce)
        return templates.TemplateResponse(request, name, context)

    def page_user(request: Request) -> User:
        user = st.session_user(request.cookies.get(COOKIE))
        if user is None:
            raise _LoginRequired()
        return user

    def api_user(request: Request) -> User:
        if request.method != "GET" and request.headers.get(HEADER) != "1":
            raise HTTPException(403, "missing X-Parakit header (cross-site request refused)")
        user = st.session_user(request.cookies.get(COOKIE))
        if user is None:
            raise HTTPException(401, "not logged in or session expired")
        return user

    def member(user: User, project_id: int) -> None:
        if not st.can_access(user, project_id):
            raise Forbidden(f"you are not a member of project {project_id}")

    def admin(user: User) -> None:
        if not user.is_admin:
            raise Forbidden("admin only")

    def adjudicator(user: User) -> None:
        if not user.can_adjudicate:
            raise Forbidden("admins and adjudicators only")

    # -- login ---------------------------------------------------------------------------------
    @app.get("/login", response_class=HTMLResponse)
    def login_page(request: Request) -> HTMLResponse:
        return render(request, "login.html", None, error=None)

    @app.post("/login")
    def login(request: Request, name: str = Form(...), password: str = Form(...)) -> Response:
        address = request.client.host if request.client else None
        wait = throttle.retry_after(name, address)
        if wait:
            response = render(
                request,
                "login.html",
                None,
                error=f"Too many failed logins. Try again in {wait} seconds.",
            )
            response.status_code = 429
            response.headers["Retry-After"] = str(wait)
            return response
        user = st.authenticate(name, password)
        if user is None:
            throttle.failed(name, address)
            response = render(request, "login.html", None, error="Wrong name or password.")
            response.status_code = 401
            return response
        throttle.succeeded(name)
        token = st.start_session(user.id, session_ttl)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(
            COOKIE,
            token,
            max_age=int(session_ttl.total_seconds()),
            httponly=True,
            samesite="strict",
            secure=secure_cookies,
        )
        return response

    @app.post("/logout")
    def logout(request: Request) -> Response:
        token = request.cookies.get(COOKIE)
        if token:
            st.end_session(token)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE)
        return response

    # -- annotator pages -------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse)
    def index(request: Request, user: User = Depends(page_user)) -> HTMLResponse:
        rows = []
        for project in st.projects_for(user):
            rows.append(
                {
                    "project": project,
                    "classify": st.progress(project.id, user.id, "classify"),
                    "extract": st.progress(project.id, user.id, "extract"),
                    "check": st.progress(project.id, user.id, "rewrite-check"),
                }
            )
        return render(request, "index.html", user, rows=rows)

    def _context(doc_id: int | None, begin: int | None, end: int | None) -> dict | None:
        if doc_id is None or begin is None or end is None:
            return None
        doc = st.document(doc_id)
        return {
            "key": doc.key,
            "segments": segments(doc.text, 0, len(doc.text), [(begin, end, "span")]),
        }

    @app.get("/p/{project_id}/classify", response_class=HTMLResponse)
    def classify(
        request: Request,
        project_id: int,
        item: int | None = None,
        task: str = "classify",
        user: User = Depends(page_user),
    ) -> HTMLResponse:
        member(user, project_id)
        if task not in ("classify", "rewrite-check"):
            raise NotFound(f"unknown task {task!r}")
        project = st.project(project_id)
        scheme = st.scheme(project_id)
        if item is not None:  # back / undo: only an item this annotator already answered
            own = st.annotation(item, user.id, task)
            if own is None or st.item(item).project_id != project_id:
                raise Forbidden(f"item {item} is not one of your annotations")
            item_id = item
        else:
            assignment = st.lease_next(project_id, user.id, task, lease)
            if assignment is None:
                return render(
                    request,
                    "done.html",
                    user,
                    project=project,
                    task=task,
                    progress=st.progress(project_id, user.id, task),
                )
            assert assignment.item_id is not None
            item_id = assignment.item_id
        row = st.item(item_id)
        own = st.annotation(item_id, user.id, task)
        history = st.history(project_id, user.id, task, limit=20)
        previous = next((h.item_id for h in history if h.item_id != item_id), None)
        hide = task == "rewrite-check"  # T10: no context, no provenance
        data = {
            "item": item_id,
            "task": task,
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
            "classify.html",
            user,
            project=project,
            item=row,
            task=task,
            context1=None if hide else _context(row.doc1_id, row.begin1, row.end1),
            context2=None if hide else _context(row.doc2_id, row.begin2, row.end2),
            hide=hide,
            data=data,
            previous=previous,
            base_values=_bases(scheme),
            progress=st.progress(project_id, user.id, task),
        )

    @app.get("/p/{project_id}/extract", response_class=HTMLResponse)
    def extract(request: Request, project_id: int, user: User = Depends(page_user)) -> HTMLResponse:
        member(user, project_id)
        project = st.project(project_id)
        assignment = st.lease_next(project_id, user.id, "extract", lease)
        if assignment is None:
            return render(
                request,
                "done.html",
                user,
                project=project,
                task="extract",
                progress=st.progress(project_id, user.id, "extract"),
            )
        assert assignment.doc_pair_id is not None
        dp = st.doc_pair(assignment.doc_pair_id)
        doc1, doc2 = st.document(dp.doc1_id), st.document(dp.doc2_id)
        overlaps = verbatim_overlaps(doc1.text, doc2.text, min_words=overlap_words)
        pairs = st.extracted_pairs(dp.id)
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
            "extract.html",
            user,
            project=project,
            dp=dp,
            doc1=doc1,
            doc2=doc2,
            rows=rows,
            pairs=pairs,
            n_overlaps=len(overlaps),
            data={"doc_pair": dp.id},
            progress=st.progress(project_id, user.id, "extract"),
        )

    # -- annotator API ---------------------------------------------------------------------------
    @app.get("/api/projects/{project_id}/next")
    def next_item(
        project_id: int, task: str = "classify", user: User = Depends(api_user)
    ) -> dict[str, Any]:
        """The item leased to the caller next (JSON clients, load tests); null when done."""
        member(user, project_id)
        if task not in ("classify", "rewrite-check"):
            raise NotFound(f"unknown task {task!r}")
        assignment = st.lease_next(project_id, user.id, task, lease)
        if assignment is None or assignment.item_id is None:
            return {"item": None}
        row = st.item(assignment.item_id)
        own = st.annotation(row.id, user.id, task)
        return {
            "item": row.id,
            "text1": row.text1,
            "text2": row.text2,
            "revision": 0 if own is None else own.revision,
            "label": None if own is None else own.label,
        }

    @app.post("/api/items/{item_id}/save")
    def save(item_id: int, body: SaveBody, user: User = Depends(api_user)) -> dict[str, Any]:
        member(user, st.item(item_id).project_id)
        if body.task not in ("classify", "rewrite-check"):
            raise NotFound(f"unknown task {body.task!r}")
        rewrite = None
        if body.rewrite1 or body.rewrite2:
            rewrite = (body.rewrite1 or "", body.rewrite2 or "")
        saved = st.save(
            item_id,
            user.id,
            label=body.label,
            revision=body.revision,
            submit=body.submit,
            rewrite=rewrite,
            unsure=body.unsure,
            comment=body.comment,
            task=body.task,
        )
        return {"revision": saved.revision, "status": saved.status, "id": saved.annotation_id}

    @app.post("/api/docpairs/{doc_pair_id}/pairs")
    def add_pair(
        doc_pair_id: int, body: SpanBody, user: User = Depends(api_user)
    ) -> dict[str, Any]:
        member(user, st.doc_pair(doc_pair_id).project_id)
        item_id = st.add_extracted_pair(
            doc_pair_id, user.id, body.begin1, body.end1, body.begin2, body.end2
        )
        row = st.item(item_id)
        return {"item": item_id, "key": row.key, "text1": row.text1, "text2": row.text2}

    @app.post("/api/items/{item_id}/delete-extracted")
    def delete_pair(item_id: int, user: User = Depends(api_user)) -> dict[str, Any]:
        member(user, st.item(item_id).project_id)
        st.delete_extracted_pair(item_id, user.id)
        return {"ok": True}

    @app.post("/api/docpairs/{doc_pair_id}/finish")
    def finish(
        doc_pair_id: int, body: FinishBody, user: User = Depends(api_user)
    ) -> dict[str, Any]:
        member(user, st.doc_pair(doc_pair_id).project_id)
        st.finish_doc_pair(doc_pair_id, user.id, empty=body.empty)
        return {"ok": True, "status": st.doc_pair(doc_pair_id).status}

    # -- admin pages -----------------------------------------------------------------------------
    @app.get("/admin", response_class=HTMLResponse)
    def admin_page(request: Request, user: User = Depends(page_user)) -> HTMLResponse:
        adjudicator(user)
        projects = []
        for project in st.projects_for(user):
            projects.append(
                {
                    "project": project,
                    "conflicts": len(st.disagreements(project.id)),
                    "qa": len(st.qa_queue(project.id)),
                    "annotations": st.count_annotations(project.id),
                }
            )
        return render(
            request,
            "admin.html",
            user,
            projects=projects,
            annotators=sorted(st.annotator_names().values()),
        )

    def review_page(
        request: Request,
        project_id: int,
        user: User,
        groups: list[tuple[Any, list[Any]]],
        title: str,
        empty: str,
    ) -> HTMLResponse:
        """An adjudicator's list of items with their annotations (consensus and QA pages);
        the caller checks the user's rights before it queries ``groups``."""
        names = st.annotator_names()
        rows = [
            {"item": item, "annotations": [(names[a.annotator_id], a) for a in anns]}
            for item, anns in groups
        ]
        return render(
            request,
            "consensus.html",
            user,
            project=st.project(project_id),
            rows=rows,
            title=title,
            empty=empty,
        )

    @app.get("/admin/p/{project_id}/consensus", response_class=HTMLResponse)
    def consensus(
        request: Request, project_id: int, user: User = Depends(page_user)
    ) -> HTMLResponse:
        adjudicator(user)
        member(user, project_id)
        groups = list(st.disagreements(project_id))
        return review_page(request, project_id, user, groups, "Consensus", "No open disagreements.")

    @app.get("/admin/p/{project_id}/qa", response_class=HTMLResponse)
    def qa(request: Request, project_id: int, user: User = Depends(page_user)) -> HTMLResponse:
        adjudicator(user)
        member(user, project_id)
        groups = [(item, [a]) for item, a in st.qa_queue(project_id)]
        return review_page(
            request,
            project_id,
            user,
            groups,
            "QA queue (flags s/i, oldest first)",
            "Nothing to re-check.",
        )

    @app.get("/admin/p/{project_id}/stats", response_class=HTMLResponse)
    def stats(request: Request, project_id: int, user: User = Depends(page_user)) -> HTMLResponse:
        adjudicator(user)
        member(user, project_id)
        from parakit.annotate.agreement import agreement_report, judgments_frame

        scheme = st.scheme(project_id)
        anns = st.submitted(project_id)
        frame = judgments_frame([(a.item_id, a.annotator_id, a.label) for a in anns])
        consensus_labels = {}
        for a in anns:
            label = st.item(a.item_id).label
            if label is not None:
                consensus_labels[a.item_id] = label
        report = {}
        if len(frame) and frame.groupby("item")["annotator"].nunique().max() >= 2:
            report = agreement_report(frame, scheme, consensus=consensus_labels)
        return render(
            request,
            "stats.html",
            user,
            project=st.project(project_id),
            extraction=extraction_stats(st.extraction_rows(project_id)),
            agreement=report,
        )

    @app.get("/admin/p/{project_id}/export")
    def export(
        project_id: int,
        format: str = "jsonl",
        drop: str = "",
        judgments: bool = False,
        user: User = Depends(page_user),
    ) -> Response:
        admin(user)
        project = st.project(project_id)
        drop_labels = tuple(x for x in drop.split(",") if x)
        with tempfile.TemporaryDirectory() as tmp:
            if format == "jsonl":
                path = st.export(
                    project_id,
                    Path(tmp) / f"{project.name}.jsonl",
                    drop_labels=drop_labels,
                    judgments=judgments,
                )
                return Response(
                    path.read_bytes(),
                    media_type="application/x-ndjson",
                    headers={"Content-Disposition": f'attachment; filename="{project.name}.jsonl"'},
                )
            if format == "turku":
                path = st.export(
                    project_id,
                    Path(tmp) / f"{project.name}.json",
                    format="turku",
                    drop_labels=drop_labels,
                )
                buffer = io.BytesIO()
                with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                    for file in sorted(Path(tmp).iterdir()):
                        archive.write(file, file.name)
                return Response(
                    buffer.getvalue(),
                    media_type="application/zip",
                    headers={
                        "Content-Disposition": f'attachment; filename="{project.name}-turku.zip"'
                    },
                )
        raise AnnotateError(f"unknown export format {format!r}; use jsonl or turku", code="E610")

    # -- admin API -------------------------------------------------------------------------------
    @app.post("/api/admin/users")
    def create_user(body: UserBody, user: User = Depends(api_user)) -> dict[str, Any]:
        admin(user)
        uid = st.add_annotator(body.name, body.password, role=body.role)
        for project_id in body.projects:
            st.add_member(project_id, uid)
        return {"id": uid}

    @app.post("/api/admin/projects")
    def create_project(
        name: str = Form(...),
        scheme: str = Form("turku"),
        kind: str = Form("candidates"),
        classify_mode: str = Form("single"),
        file: UploadFile = File(...),
        user: User = Depends(api_user),
    ) -> dict[str, Any]:
        admin(user)
        from parakit import io as pio

        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / Path(file.filename or "upload.jsonl").name
            target.write_bytes(file.file.read())
            try:
                pairs = (
                    pio.read(target, scheme=scheme)
                    if target.suffix == ".jsonl"
                    else pio.read(target)
                )
            except (LabelError, ParakitError):
                raise
            except Exception as err:  # reader errors other than ours: report, do not crash
                raise AnnotateError(f"cannot read {target.name}: {err}", code="E611") from err
        project_id = st.create_project(name, scheme, settings={"classify_mode": classify_mode})
        if kind == "documents":
            count = st.import_document_pairs(project_id, pairs)
        else:
            count = st.import_pairs(project_id, pairs)
        return {"id": project_id, "imported": count}

    @app.post("/api/admin/projects/{project_id}/members")
    def add_members(
        project_id: int, body: MembersBody, user: User = Depends(api_user)
    ) -> dict[str, Any]:
        admin(user)
        for name in body.annotators:
            st.add_member(project_id, st.annotator_id(name))
        return {"ok": True}

    @app.post("/api/admin/projects/{project_id}/assign")
    def assign(project_id: int, body: AssignBody, user: User = Depends(api_user)) -> dict[str, Any]:
        admin(user)
        ids = [st.annotator_id(n) for n in body.annotators] if body.annotators else None
        for uid in ids or ():
            st.add_member(project_id, uid)
        if body.task == "extract":
            made = st.assign_document_pairs(project_id, ids, batch=body.batch)
        else:
            made = st.assign(
                project_id, mode=body.mode, annotators=ids, batch=body.batch, seed=body.seed
            )
        return {"assigned": made}

    @app.post("/api/admin/items/{item_id}/resolve")
    def resolve(item_id: int, body: ResolveBody, user: User = Depends(api_user)) -> dict[str, Any]:
        adjudicator(user)
        member(user, st.item(item_id).project_id)
        st.resolve(item_id, body.label, user.id)
        return {"label": st.item(item_id).label}

    @app.post("/api/admin/projects/{project_id}/rewrite-check")
    def rewrite_check(
        project_id: int, seed: int = 0, user: User = Depends(api_user)
    ) -> dict[str, Any]:
        admin(user)
        return {"assigned": st.make_rewrite_check(project_id, seed=seed)}

    @app.get("/healthz")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


def _bases(scheme: Any) -> list[str]:
    if isinstance(scheme, TurkuScheme):
        return list(TurkuScheme.BASES)
    return list(scheme.values)
