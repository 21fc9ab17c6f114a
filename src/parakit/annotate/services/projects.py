"""Projects, membership and import (candidate pairs, document pairs for extraction)."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from more_itertools import chunked
from sqlalchemy import delete, exists, func, select
from sqlalchemy import text as sql
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from parakit.annotate.db import Service, utcnow
from parakit.annotate.models import (
    Annotation,
    Assignment,
    DocPair,
    DocumentRow,
    Item,
    Member,
    Project,
    ProjectImport,
)
from parakit.annotate.services.accounts import User
from parakit.errors import AnnotateError, Conflict, Errors, NotFound, ParakitError, SpanError
from parakit.labels import LabelScheme, scheme_from_spec
from parakit.schema import Document, Pair, PairSet, document_ids


class Projects(Service):
    """Create, find and fill projects; membership."""

    def create_project(
        self,
        name: str,
        scheme: str | dict[str, Any] | LabelScheme,
        settings: dict[str, Any] | None = None,
    ) -> int:
        """Create an empty project. ``settings``: ``classify_mode`` (``single``/``double``)
        for pairs extracted in the tool; ``question``: the instruction shown above the label
        buttons (e.g. one Likert aspect of M13: "Fluency of statement 2")."""
        check_project_name(name)
        spec = scheme.spec() if isinstance(scheme, LabelScheme) else scheme_from_spec(scheme).spec()
        return self._write(lambda session: self._new_project(session, name, spec, settings))

    def _new_project(
        self, session: Session, name: str, spec: dict[str, Any], settings: dict[str, Any] | None
    ) -> int:
        existing = session.scalar(select(Project).where(Project.name == name))
        job = None if existing is None else _unfinished_import(session, existing.id)
        if job is not None:
            # hidden from every page until published: say why the name is taken
            age = (utcnow() - job.heartbeat_at).total_seconds()
            raise Conflict(Errors.E603_project_being_imported.format(name=name, age=age))
        if existing is not None:
            raise Conflict(Errors.E603_project_already_exists.format(name=name))
        row = Project(name=name, scheme=spec, settings=dict(settings or {}), created_at=utcnow())
        session.add(row)
        session.flush()
        return row.id

    def project_id(self, name: str) -> int:
        with self.transaction() as session:
            value = session.scalar(select(Project.id).where(Project.name == name))
        if value is None:
            raise NotFound(Errors.E601_project_named.format(name=name))
        return value

    def projects_for(self, user: User) -> list[Project]:
        """The projects a user sees: all for admins, else their memberships that are not
        archived."""
        with self.transaction() as session:
            query = select(Project).where(~_importing(Project.id)).order_by(Project.id)
            if not user.is_admin:
                query = query.join(Member, Member.project_id == Project.id).where(
                    Member.annotator_id == user.id
                )
            rows = list(session.scalars(query))
        # admins see everything but imports still being staged
        return rows if user.is_admin else [p for p in rows if not _archived(p)]

    def importing(self, project_id: int) -> bool:
        """Whether the project is hidden by an import that has not finished."""
        with self.transaction() as session:
            return _unfinished_import(session, project_id) is not None

    def import_of(self, project_id: int) -> dict[str, Any] | None:
        """The project's last import (status, counts, error, times), or None."""
        with self.transaction() as session:
            job = session.scalar(
                select(ProjectImport)
                .where(ProjectImport.project_id == project_id)
                .order_by(ProjectImport.id.desc())
                .limit(1)
            )
            if job is None:
                return None
            return {c.name: getattr(job, c.name) for c in ProjectImport.__table__.columns}

    def add_member(self, project_id: int, annotator_id: int) -> None:
        def work(session: Session) -> None:
            if session.get(Member, (project_id, annotator_id)) is None:
                session.add(Member(project_id=project_id, annotator_id=annotator_id))

        self._write(work)

    def update_settings(self, project_id: int, **changes: Any) -> dict[str, Any]:
        """Change project settings (``guidelines``: text shown on the guidelines page;
        ``descriptions``: ``{label: text}`` shown with the label buttons; ``question``;
        ``classify_mode``; ``archived``: True hides the project from everyone but admins, its
        data stays); a value of None removes the setting. Returns the settings."""
        allowed = {"guidelines", "descriptions", "question", "classify_mode", "archived"}
        unknown = set(changes) - allowed
        if unknown:
            raise AnnotateError(
                Errors.E612_unknown_project_settings.format(
                    unknown=sorted(unknown), allowed=sorted(allowed)
                )
            )
        for key, value in changes.items():
            reason = _unsafe(value)
            if reason or (isinstance(value, str) and len(value) > 100_000):
                raise AnnotateError(
                    Errors.E617_setting.format(key=key, reason=reason or "too long")
                )

        def work(session: Session) -> dict[str, Any]:
            row = session.get(Project, project_id)
            if row is None:
                raise NotFound(Errors.E601_project_id.format(project_id=project_id))
            settings = dict(row.settings or {})
            for key, value in changes.items():
                if value is None:
                    settings.pop(key, None)
                else:
                    settings[key] = value
            row.settings = settings
            return settings

        return self._write(work)

    def overview(self) -> list[dict[str, Any]]:
        """One row per project: id, name, scheme name, items, submitted annotations, members."""
        with self.transaction() as session:
            items = _per_project(session, Item.project_id)
            anns = _per_project(session, Annotation.project_id, Annotation.status == "submitted")
            members = _per_project(session, Member.project_id)
            return [
                {
                    "id": p.id,
                    "name": p.name,
                    "scheme": (p.scheme or {}).get("name", ""),
                    "items": int(items.get(p.id, 0)),
                    "annotations": int(anns.get(p.id, 0)),
                    "members": int(members.get(p.id, 0)),
                }
                for p in session.scalars(select(Project).order_by(Project.id))
            ]

    def remove_member(self, project_id: int, annotator_id: int) -> None:
        self._write(
            lambda s: s.execute(
                delete(Member).where(
                    Member.project_id == project_id, Member.annotator_id == annotator_id
                )
            )
        )

    def members(self, project_id: int) -> list[int]:
        """Ids of the project's members, in id order."""
        with self.transaction() as session:
            return list(
                session.scalars(
                    select(Member.annotator_id)
                    .where(Member.project_id == project_id)
                    .order_by(Member.annotator_id)
                )
            )

    def can_access(self, user: User, project_id: int) -> bool:
        """Admins: every project; others: their memberships, unless the project is archived."""
        if user.is_admin:
            return True
        with self.transaction() as session:
            if session.get(Member, (project_id, user.id)) is None:
                return False
            project = session.get(Project, project_id)
            return (
                project is not None
                and not _archived(project)
                and _unfinished_import(session, project_id) is None
            )

    def _documents(
        self, session: Session, project_id: int, documents: Iterable[Document]
    ) -> dict[str, int]:
        ids = dict(
            session.execute(
                select(DocumentRow.key, DocumentRow.id).where(DocumentRow.project_id == project_id)
            ).all()
        )
        for doc in documents:
            if doc.id in ids:
                continue
            row = DocumentRow(
                project_id=project_id, key=doc.id, text=doc.text, meta=dict(doc.metadata)
            )
            session.add(row)
            session.flush()
            ids[doc.id] = row.id
        return ids

    # -- import: one use case for the CLI and the web app -------------------------------------
    def create_with_pairs(
        self,
        name: str,
        scheme: str | dict[str, Any] | LabelScheme,
        pairs: PairSet,
        *,
        kind: str = "candidates",
        settings: dict[str, Any] | None = None,
    ) -> tuple[int, int]:
        """Create a project and import ``pairs`` into it, all or nothing: when anything
        fails (a bad span, a duplicate id, text the database refuses) nothing is left behind,
        so the same name can be used again at once.

        The pairs go in by transactions of :data:`IMPORT_CHUNK` (a small import is one), so
        annotators' writes go on between them instead of waiting for the whole file. The
        first also creates the project and its import row (:class:`ProjectImport`,
        ``in_progress``: the project stays hidden), each one counts its pairs and beats the
        heartbeat, and the last marks the import ``completed``, which publishes the project.
        A failure marks it ``failed`` with the error, then deletes the project; a process
        killed meanwhile leaves an unfinished import whose lock nobody holds, which
        :meth:`discard_abandoned_imports` (run when a store is opened) deletes.

        Args:
            kind: ``candidates`` (pairs to classify) or ``documents`` (document pairs to
                extract from, see :meth:`import_document_pairs`).
        Returns:
            ``(project id, number imported)``.
        Raises:
            AnnotateError: E661 labelled pairs of another scheme than ``scheme``.
            Conflict: E603 the name is taken, or duplicate pair ids in the file.
        """
        if kind not in ("candidates", "documents"):
            raise AnnotateError(Errors.E612_unknown_project_kind.format(kind=kind))
        check_project_name(name)
        spec = scheme.spec() if isinstance(scheme, LabelScheme) else scheme_from_spec(scheme).spec()
        check_scheme_fits(pairs, spec)
        check_importable(pairs, spans=kind == "candidates")
        add = self._add_document_pairs if kind == "documents" else self._add_pairs
        chunks = list(chunked(pairs, IMPORT_CHUNK))
        lock = f"import-{secrets.token_hex(8)}"
        job_id = project_id = None

        def step(session: Session, chunk: list[Pair], last: bool) -> None:
            nonlocal job_id, project_id
            now = utcnow()
            if job_id is None:
                project_id = self._new_project(session, name, spec, settings)
                job = ProjectImport(
                    project_id=project_id,
                    status=IN_PROGRESS,
                    total=len(pairs),
                    imported=0,
                    lock=lock,
                    started_at=now,
                    heartbeat_at=now,
                )
                session.add(job)
                session.flush()
            else:
                job = session.get(ProjectImport, job_id)
                if job is None or job.status != IN_PROGRESS:
                    raise Conflict(Errors.E603_import_project_cancelled.format(name=name))
            assert project_id is not None
            job.imported += add(session, project_id, chunk, pairs.documents)
            job.heartbeat_at = now
            if last:
                job.status, job.finished_at = COMPLETED, now
            session.flush()
            job_id = job.id

        with self.db.hold(lock):
            try:
                for n, chunk in enumerate(chunks, 1):
                    self._write(lambda s, c=chunk, last=n == len(chunks): step(s, c, last))
            except BaseException as err:
                if job_id is not None:
                    self._fail_import(job_id, err)
                    self.delete_project(project_id)  # type: ignore[arg-type]
                if isinstance(err, IntegrityError):
                    raise Conflict(
                        Errors.E603_duplicate_pair_ids.format(err_orig=err.orig)
                    ) from None
                raise
        if len(chunks) > 1:  # after the publish: the planner's statistics of a large import
            self.db.analyze("items", "documents", "doc_pairs")
        assert project_id is not None
        return project_id, len(pairs)

    def _fail_import(self, job_id: int, err: BaseException) -> None:
        def work(session: Session) -> None:
            job = session.get(ProjectImport, job_id)
            if job is not None:
                job.status, job.finished_at = FAILED, utcnow()
                job.error = f"{type(err).__name__}: {err}"[:2000]

        self._write(work)

    def discard_abandoned_imports(self) -> list[str]:
        """Delete the projects of imports that did not finish and whose process is gone
        (nobody holds their lock). Returns their names."""
        with self.transaction() as session:
            unfinished = session.execute(
                select(ProjectImport.project_id, ProjectImport.lock, Project.name)
                .join(Project, Project.id == ProjectImport.project_id)
                .where(ProjectImport.status != COMPLETED)
            ).all()
        gone = []
        for project_id, lock, name in unfinished:
            if lock is None or not self.db.held(lock):
                try:
                    self.delete_project(project_id)
                except NotFound:  # another process got there first
                    continue
                gone.append(name)
        return gone

    def import_pairs(self, project_id: int, pairs: PairSet) -> int:
        """Add candidate pairs (with their documents, for context) in one transaction;
        returns how many."""
        check_importable(pairs, spans=True)
        try:
            return self._write(
                lambda session: self._add_pairs(session, project_id, list(pairs), pairs.documents)
            )
        except IntegrityError as err:
            raise Conflict(
                Errors.E603_pair_ids_already.format(project_id=project_id, err_orig=err.orig)
            ) from None

    def import_document_pairs(self, project_id: int, pairs: PairSet) -> int:
        """Add document pairs for extraction: each pair's ``text1``/``text2`` are whole
        documents; ``metadata['alignment']`` may hold aligned ``[[begin1, end1, begin2, end2],
        ...]`` segments (timestamps, paragraphs), shown as rows side by side.

        A side whose span names a document of the file with the same text keeps that
        document's id and metadata (the `parakit build` outputs: a subtitle segment keeps its
        title), so the export of the extracted pairs names them; other sides become documents
        ``<pair id>-1``/``<pair id>-2`` with the pair's metadata. The pair's ``group`` (the
        title of a subtitle pair) becomes the group of the pairs extracted from it."""
        check_importable(pairs, spans=False)
        try:
            return self._write(
                lambda session: self._add_document_pairs(
                    session, project_id, list(pairs), pairs.documents
                )
            )
        except IntegrityError as err:
            raise Conflict(Errors.E603_document_pair_ids.format(err_orig=err.orig)) from None

    def _add_pairs(
        self,
        session: Session,
        project_id: int,
        pairs: Sequence[Pair],
        documents: Mapping[str, Document],
    ) -> int:
        needed = document_ids(pairs)
        doc_ids = self._documents(
            session, project_id, (documents[d] for d in sorted(needed) if d in documents)
        )
        now = utcnow()
        for pair in pairs:
            s1, s2 = pair.span1, pair.span2
            session.add(
                Item(
                    project_id=project_id,
                    key=pair.id,
                    text1=pair.text1,
                    text2=pair.text2,
                    doc1_id=doc_ids[s1.doc_id] if s1 else None,
                    begin1=s1.begin if s1 else None,
                    end1=s1.end if s1 else None,
                    doc2_id=doc_ids[s2.doc_id] if s2 else None,
                    begin2=s2.begin if s2 else None,
                    end2=s2.end if s2 else None,
                    source=pair.source,
                    group=pair.group,
                    origin="import",
                    created_at=now,
                    meta=dict(pair.metadata),
                )
            )
        session.flush()
        return len(pairs)

    def _add_document_pairs(
        self,
        session: Session,
        project_id: int,
        pairs: Sequence[Pair],
        documents: Mapping[str, Document],
    ) -> int:
        for pair in pairs:
            meta = dict(pair.metadata)
            if pair.group is not None:
                meta.setdefault("group", pair.group)
            docs = []
            for side, span, text in ((1, pair.span1, pair.text1), (2, pair.span2, pair.text2)):
                own = documents.get(span.doc_id) if span is not None else None
                if own is None or own.text != text:
                    own = Document(
                        f"{pair.id}-{side}",
                        text,
                        {k: v for k, v in meta.items() if k != "alignment"},
                    )
                docs.append(own)
            ids = self._documents(session, project_id, docs)
            session.add(
                DocPair(
                    project_id=project_id,
                    key=pair.id,
                    doc1_id=ids[docs[0].id],
                    doc2_id=ids[docs[1].id],
                    source=pair.source,
                    status="open",
                    meta=meta,
                )
            )
        session.flush()
        return len(pairs)

    def delete_project(self, project_id: int) -> None:
        """Delete a project with everything in it (items, documents, annotations, queue,
        membership); user accounts stay."""

        sqlite = self.db.engine.dialect.name == "sqlite"

        def work(session: Session) -> None:
            if session.get(Project, project_id) is None:
                raise NotFound(Errors.E601_project_id.format(project_id=project_id))
            if sqlite:  # overwrite the deleted text instead of leaving it in free pages
                session.execute(sql("PRAGMA secure_delete=ON"))
            session.execute(delete(Annotation).where(Annotation.project_id == project_id))
            session.execute(delete(Assignment).where(Assignment.project_id == project_id))
            # rewrite items point at their parents: children first
            session.execute(
                delete(Item).where(Item.project_id == project_id, Item.parent_id.is_not(None))
            )
            session.execute(delete(Item).where(Item.project_id == project_id))
            session.execute(delete(DocPair).where(DocPair.project_id == project_id))
            session.execute(delete(DocumentRow).where(DocumentRow.project_id == project_id))
            session.execute(delete(Member).where(Member.project_id == project_id))
            session.execute(delete(ProjectImport).where(ProjectImport.project_id == project_id))
            session.execute(delete(Project).where(Project.id == project_id))

        self._write(work)
        self.db.forget_scheme(project_id)
        if sqlite:  # and out of the write-ahead log (it still holds the pages written before)
            raw = self.db.engine.raw_connection()
            try:
                raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                raw.close()


def _archived(project: Project) -> bool:
    """Hidden from annotators by an admin."""
    return bool((project.settings or {}).get("archived"))


def _importing(project_id: Any) -> Any:
    """SQL: the project ``project_id`` has an import that has not finished (it is hidden)."""
    return exists().where(ProjectImport.project_id == project_id, ProjectImport.status != COMPLETED)


def _per_project(session: Session, project_id: Any, *where: Any) -> dict[int, int]:
    """``{project id: rows}`` of the table of the column ``project_id``, rows matching
    ``where``, counted in SQL."""
    query = select(project_id, func.count()).where(*where).group_by(project_id)
    return dict(session.execute(query).all())


def _unfinished_import(session: Session, project_id: int) -> ProjectImport | None:
    return session.scalar(
        select(ProjectImport)
        .where(ProjectImport.project_id == project_id, ProjectImport.status != COMPLETED)
        .limit(1)
    )


#: pairs imported per transaction (see ``create_with_pairs``)
IMPORT_CHUNK = 500
#: the statuses of an import (:class:`~parakit.annotate.models.ProjectImport`)
IN_PROGRESS, COMPLETED, FAILED = "in_progress", "completed", "failed"


#: project names: letters, digits, space, ``_ . -``; starting with a letter or digit
_PROJECT_NAME = re.compile(r"[^\W_][\w .-]{0,99}")


def check_project_name(name: str) -> str:
    """``name`` if it is a valid project name, else :class:`AnnotateError` (E613).

    Names are shown in pages and exports but never used as file paths; still, only letters,
    digits, spaces and ``_ . -`` are allowed (no ``/``, quotes or line breaks), 1-100
    characters, starting with a letter or digit.
    """
    if not isinstance(name, str) or not _PROJECT_NAME.fullmatch(name) or name != name.strip():
        raise AnnotateError(Errors.E613_invalid_project_name.format(name=name))
    return name


def _unsafe(value: Any) -> str | None:
    """Why a value cannot be stored (a NUL character or a lone surrogate), or None."""
    if isinstance(value, str):
        if "\x00" in value:
            return "a NUL character"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "a lone surrogate (invalid Unicode)"
        return None
    if isinstance(value, dict):  # its keys and values, in order
        value = [part for entry in value.items() for part in entry]
    if isinstance(value, list | tuple):
        return next(filter(None, map(_unsafe, value)), None)
    return None


_NON_WORD = re.compile(r"\W+")


def _loose(text: str) -> str:
    """``text`` without whitespace and punctuation (the Turku reader's "normalized" match)."""
    return _NON_WORD.sub("", text)


#: longest statement (text1/text2 of a candidate pair) an import accepts, in characters
MAX_STATEMENT = 20_000
#: longest document (context, or a side of a document pair) an import accepts
MAX_DOCUMENT = 5_000_000


def check_importable(pairs: PairSet, *, spans: bool) -> None:
    """Refuse what cannot be imported, before anything is written: an empty set, text with
    NUL characters or lone surrogates, statements over :data:`MAX_STATEMENT` or documents
    over :data:`MAX_DOCUMENT` characters, context spans outside their documents or in
    unknown ones, and files where most spans cover other words than their statements (the
    documents do not belong). As in the Turku reader's own span check, a statement may differ
    from its span in whitespace and punctuation ("normalized": 928 spans of the Swedish
    test file) or, for a few edited statements, in words (5 there).

    Args:
        spans: candidate pairs (check statements and spans); False: document pairs, whose
            texts are whole documents.
    """
    if len(pairs) == 0:
        raise AnnotateError(Errors.E614_file_holds_pairs)
    for doc in pairs.documents.values():
        reason = _unsafe(doc.id) or _unsafe(doc.text) or _unsafe(dict(doc.metadata))
        if reason:
            raise AnnotateError(Errors.E615_document_contains.format(doc_id=doc.id, reason=reason))
        if len(doc.text) > MAX_DOCUMENT:
            raise AnnotateError(
                Errors.E617_document_characters_most.format(
                    doc_id=doc.id, n_doc_text=len(doc.text), MAX_DOCUMENT=MAX_DOCUMENT
                )
            )
    limit = MAX_STATEMENT if spans else MAX_DOCUMENT
    checked, differ = 0, []
    for pair in pairs:
        for side, text in ((1, pair.text1), (2, pair.text2)):
            if len(text) > limit:
                raise AnnotateError(
                    Errors.E617_pair_text_characters.format(
                        pair_id=pair.id, side=side, n_text=len(text), limit=limit
                    )
                )
        for field, value in (
            ("id", pair.id),
            ("text1", pair.text1),
            ("text2", pair.text2),
            ("source", pair.source),
            ("group", pair.group),
            ("metadata", dict(pair.metadata)),
        ):
            reason = _unsafe(value)
            if reason:
                raise AnnotateError(
                    Errors.E615_pair_contains.format(pair_id=pair.id, field=field, reason=reason)
                )
        if not spans:
            continue
        try:  # the span rules of the data model (schema.PairSet.span_texts)
            covered_texts = list(pairs.span_texts(pair))
        except SpanError as err:
            hint = " (a Turku file needs its texts file: upload both)"
            raise SpanError(
                err.message + (hint if "unknown document" in err.message else "")
            ) from None
        for side, _, text, covered in covered_texts:
            checked += 1
            if covered != text and _loose(covered) != _loose(text):
                differ.append(f"pair {pair.id!r} span{side}: {covered[:40]!r} vs {text[:40]!r}")
    if differ and len(differ) * 2 > checked:
        raise SpanError(
            Errors.E101_context_spans_cover.format(
                n_differ=len(differ), checked=checked, differ_0=differ[0]
            )
        )


def pairs_scheme(pairs: PairSet, default: str = "turku") -> str | dict[str, Any]:
    """The scheme a project of ``pairs`` takes: theirs when any pair is labelled (binary
    MultiPIT pairs make a binary project), else ``default``."""
    return pairs.scheme.spec() if any(p.label is not None for p in pairs) else default


def check_scheme_fits(pairs: PairSet, spec: Any) -> None:
    """Refuse labelled pairs of another scheme than the project's (E661): binary pairs in a
    Turku project get Turku buttons and a ``turku`` export header."""
    wanted = scheme_from_spec(spec).name
    labelled = next((p for p in pairs if p.label is not None), None)
    if labelled is not None and pairs.scheme.name != wanted:
        raise AnnotateError(
            Errors.E661_pairs_labelled_scheme.format(
                pairs_scheme_name=pairs.scheme.name,
                labelled_id=labelled.id,
                labelled_label=labelled.label,
                wanted=wanted,
            )
        )


def read_pairs(
    path: str | Path,
    *,
    format: str | None = None,
    scheme: str | None = None,
    texts: str | Path | None = None,
) -> PairSet:
    """Read a file to import (CLI and web upload alike). A Turku data file needs its texts
    file (``texts``, or found beside it); reader errors other than parakit's become
    :class:`AnnotateError` (E611)."""
    from parakit import io

    path = Path(path)
    name = format or io.detect_format(path)
    options: dict[str, Any] = {}
    if name == "turku":
        options["require_texts"] = True
        if texts is not None:
            options["texts"] = texts
    elif texts is not None:
        raise AnnotateError(Errors.E611_texts_file_goes)
    if scheme is not None and path.suffix == ".jsonl":
        options["scheme"] = scheme
    try:
        return io.read(path, format=name, **options)
    except ParakitError:
        raise
    except Exception as err:  # a reader's own error: report it, do not crash
        raise AnnotateError(Errors.E611_read.format(path_name=path.name, err=err)) from err
