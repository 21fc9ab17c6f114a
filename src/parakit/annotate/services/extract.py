"""Extraction (T6): pairs selected in document pairs, and document-pair status."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from parakit.annotate.db import Service, leased, page_of, utcnow
from parakit.annotate.models import (
    Annotation,
    Annotator,
    Assignment,
    DocPair,
    DocumentRow,
    Item,
    Project,
)
from parakit.annotate.tasks import CLASSIFY, EXTRACT, SCREEN
from parakit.errors import AnnotateError, Conflict, Errors, Forbidden

#: a document id that is a machine's, not a name: a long hex digest (the Turku release ids
#: documents by a 40-character SHA-1) or a UUID
MACHINE_ID = re.compile(r"[0-9a-fA-F]{16,}|[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")


def doc_title(doc: DocumentRow, words: int = 8) -> str:
    """What the screens call a document: its metadata ``title`` (kept by the import); else
    its id when that is a name (``d2``, ``news-17``); else, for a machine id (a hex digest or
    a UUID, which no annotator can tell apart), the first ``words`` words of its text in
    quotes, ``…`` where they were cut.

    Example:
        >>> from types import SimpleNamespace as Doc
        >>> doc_title(Doc(key="3037fc54687a277b4ac11f96c0a7a76d2569725d", meta={},
        ...               text="The city council met on Monday evening to talk about it."))
        '“The city council met on Monday evening to…”'
        >>> doc_title(Doc(key="d2", meta=None, text="A cat."))
        'd2'
    """
    title = (doc.meta or {}).get("title")
    if title:
        return str(title)
    if not MACHINE_ID.fullmatch(doc.key or "") or not (doc.text or "").strip():
        return doc.key
    head = doc.text.split()
    shown = " ".join(head[:words])
    return f"“{shown}…”" if len(head) > words else f"“{shown}”"


#: the key of :attr:`DocPair.meta` that keeps the highest extracted-pair number ever used
LAST_KEY = "last_pair_number"
#: the key of :attr:`DocPair.meta` that caches a document pair's ranked suggestions
CACHE_KEY = "suggestions"


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _provenance(
    ranked: list[dict[str, Any]], spans: tuple[int, int, int, int], claimed: int | None
) -> dict[str, Any] | None:
    """Which served suggestion a submitted pair comes from, decided by the server.

    A pair whose spans equal a suggestion's is that suggestion, unadjusted, whatever the
    client says. Otherwise the client's ``claimed`` rank counts only when that suggestion
    exists and overlaps the pair on both sides (accepted, then adjusted); anything else was
    selected by hand (``None``).
    """
    for s in ranked:
        if (s["begin1"], s["end1"], s["begin2"], s["end2"]) == spans:
            return {"rank": s["rank"], "adjusted": False}
    for s in ranked:
        if (
            s["rank"] == claimed
            and _overlap((s["begin1"], s["end1"]), spans[:2])
            and _overlap((s["begin2"], s["end2"]), spans[2:])
        ):
            return {"rank": s["rank"], "adjusted": True}
    return None


def _claimed(suggestion: dict[str, Any] | None) -> int | None:
    """The rank a client says its pair was accepted from (``{"rank": 3}``), or None."""
    if suggestion is None:
        return None
    try:
        return int(suggestion["rank"])
    except (KeyError, TypeError, ValueError):
        raise AnnotateError(Errors.E640_suggestion_must_look.format()) from None


class Extraction(Service):
    """Add, delete and list extracted pairs; finish document pairs; suggest passage pairs."""

    def suggestions(self, doc_pair_id: int, user_id: int) -> list[dict[str, Any]]:
        """Suggested passage pairs for the extraction view, best first.

        Only in projects whose ``settings["suggestions"]`` is true (the defaults of
        :class:`parakit.build.suggest.PairSuggester`, lexical) or a dict of its options (e.g.
        ``{"max_window": 2}``); off by default. The non-overlapping suggestions are returned,
        without those overlapping a pair this annotator already extracted here. They are
        computed from the two documents alone, so double extraction stays blind.

        Returns:
            ``{"rank", "begin1", "end1", "begin2", "end2", "score"}`` dicts.
        """
        with self.transaction() as session:
            self._extract_assignment(session, doc_pair_id, user_id)
            own = [
                (i.begin1 or 0, i.end1 or 0, i.begin2 or 0, i.end2 or 0)
                for i in session.scalars(
                    select(Item).where(Item.doc_pair_id == doc_pair_id, Item.author_id == user_id)
                )
            ]
        return [
            s
            for s in self.ranked_suggestions(doc_pair_id)
            if not any(
                _overlap((b1, e1), (s["begin1"], s["end1"]))
                or _overlap((b2, e2), (s["begin2"], s["end2"]))
                for b1, e1, b2, e2 in own
            )
        ]

    def ranked_suggestions(self, doc_pair_id: int) -> list[dict[str, Any]]:
        """A document pair's kept (non-suppressed) suggestions, best first, for every
        annotator: computed once per document pair and settings, then read from the store
        (``DocPair.meta["suggestions"]``, keyed by the suggester's signature), so every server
        worker and every later call reuses them and a settings change recomputes them.

        Raises:
            Forbidden: suggestions are off in the project.
            AnnotateError: (E640) the project's ``suggestions`` setting is invalid.
        """
        from parakit.build.suggest import PairSuggester
        from parakit.errors import ParakitError
        from parakit.schema import Document

        with self.transaction() as session:
            dp = session.get(DocPair, doc_pair_id)
            if dp is None:
                raise AnnotateError(Errors.E606_document_pair.format(doc_pair_id=doc_pair_id))
            project = session.get(Project, dp.project_id)
            assert project is not None
            setting = (project.settings or {}).get("suggestions")
            if not setting:
                raise Forbidden(Errors.E602_suggestions_off_project)
            try:
                suggester = PairSuggester(**(setting if isinstance(setting, dict) else {}))
                signature = suggester.signature()
            except TypeError as err:
                raise AnnotateError(Errors.E640_bad_project_setting.format(err=err)) from None
            cached = (dp.meta or {}).get(CACHE_KEY) or {}
            if cached.get("signature") == signature:
                return list(cached["ranked"])
            doc1 = session.get(DocumentRow, dp.doc1_id)
            doc2 = session.get(DocumentRow, dp.doc2_id)
            assert doc1 is not None and doc2 is not None
            first = Document(doc1.key, doc1.text)
            second = Document(doc2.key, doc2.text)
        try:  # outside any transaction: the ranking takes CPU seconds on long documents
            ranking = suggester.suggest(first, second)
        except (TypeError, ParakitError) as err:
            raise AnnotateError(Errors.E640_bad_project_setting.format(err=err)) from None
        ranked = []
        for rank, s in enumerate(ranking, 1):
            if s.suppressed:
                break
            ranked.append(
                {
                    "rank": rank,
                    "begin1": s.span1.begin,
                    "end1": s.span1.end,
                    "begin2": s.span2.begin,
                    "end2": s.span2.end,
                    "score": round(s.score, 4),
                }
            )

        def store(session: Session) -> None:
            row = session.get(DocPair, doc_pair_id)
            assert row is not None
            row.meta = {**(row.meta or {}), CACHE_KEY: {"signature": signature, "ranked": ranked}}

        self._write(store)
        return list(ranked)

    def _extract_assignment(self, session: Session, doc_pair_id: int, user_id: int) -> Assignment:
        return leased(  # type: ignore[return-value]
            session,
            user_id,
            done=True,
            doc_pair_id=doc_pair_id,
            task=EXTRACT,
            missing=f"document pair {doc_pair_id} is not leased to you",
        )

    @staticmethod
    def _require_open(dp: DocPair) -> None:
        if dp.status != "open":
            raise Conflict(
                Errors.E618_document_pair_already.format(dp_key=dp.key, dp_status=dp.status)
            )

    def add_extracted_pair(
        self,
        doc_pair_id: int,
        user_id: int,
        begin1: int,
        end1: int,
        begin2: int,
        end2: int,
        suggestion: dict[str, Any] | None = None,
    ) -> int:
        """Store a pair selected in the extraction view; queue it for classification with the
        project's ``classify_mode``. Only while the document pair is open (not finished or
        empty). Returns the new item id.

        The provenance is the server's: spans equal to a suggestion it served for this
        document pair (:meth:`ranked_suggestions`) record ``suggested=True`` and
        ``meta["suggestion"] = {"rank", "adjusted": False}``; ``suggestion``
        (``{"rank": int}``, the client's claim) only names the suggestion the annotator
        accepted and then adjusted, and counts when that suggestion overlaps the pair on both
        sides (``adjusted: True``). Otherwise ``suggested=False`` (selected by hand) in a
        project with suggestions on and ``None`` (not applicable) in one without."""
        now = utcnow()
        claimed = _claimed(suggestion)

        def work(session: Session) -> int:
            self._extract_assignment(session, doc_pair_id, user_id)
            dp = session.get(DocPair, doc_pair_id)
            assert dp is not None
            self._require_open(dp)
            project = session.get(Project, dp.project_id)
            assert project is not None
            suggesting = bool((project.settings or {}).get("suggestions"))
            doc1 = session.get(DocumentRow, dp.doc1_id)
            doc2 = session.get(DocumentRow, dp.doc2_id)
            assert doc1 is not None and doc2 is not None
            for doc, begin, end in ((doc1, begin1, end1), (doc2, begin2, end2)):
                if not 0 <= begin < end <= len(doc.text):
                    raise AnnotateError(
                        Errors.E608_span_does_fit.format(
                            begin=begin, end=end, doc_key=doc.key, n_doc_text=len(doc.text)
                        )
                    )
            # only what this server served counts: the cached ranking (absent when no
            # suggestion was ever served for this document pair)
            served = ((dp.meta or {}).get(CACHE_KEY) or {}).get("ranked") or []
            spans = (begin1, end1, begin2, end2)
            provenance = _provenance(served, spans, claimed) if suggesting else None
            # keys <doc pair>-<n>: the next number after the highest one ever used here,
            # kept on the document pair (after a deletion the count would repeat an existing
            # key, and the highest remaining one the deleted pair's key)
            prefix = f"{dp.key}-"
            taken = session.scalars(
                select(Item.key).where(Item.project_id == dp.project_id, Item.doc_pair_id == dp.id)
            )
            numbers = [int(k[len(prefix) :]) for k in taken if k[len(prefix) :].isdigit()]
            number = max(int((dp.meta or {}).get(LAST_KEY, 0)), *numbers, 0) + 1
            dp.meta = {**(dp.meta or {}), LAST_KEY: number}
            item = Item(
                project_id=dp.project_id,
                key=f"{prefix}{number}",
                text1=doc1.text[begin1:end1],
                text2=doc2.text[begin2:end2],
                doc1_id=doc1.id,
                begin1=begin1,
                end1=end1,
                doc2_id=doc2.id,
                begin2=begin2,
                end2=end2,
                doc_pair_id=dp.id,
                source=dp.source,
                # the document pair's group (a subtitle segment's title) keeps every pair of
                # a movie in one split section; else the document pair itself
                group=(dp.meta or {}).get("group") or dp.key,
                origin="extracted",
                author_id=user_id,
                created_at=now,
                meta={} if provenance is None else {"suggestion": provenance},
                suggested=True if provenance is not None else (False if suggesting else None),
            )
            session.add(item)
            session.flush()
            mode = (project.settings or {}).get("classify_mode", "single")
            position = (
                session.scalar(
                    select(func.max(Assignment.position)).where(
                        Assignment.project_id == dp.project_id
                    )
                )
                or 0
            ) + 1
            for slot in range(1, (2 if mode == "double" else 1) + 1):
                session.add(
                    Assignment(
                        project_id=dp.project_id,
                        task=CLASSIFY,
                        item_id=item.id,
                        slot=slot,
                        batch="extracted",
                        position=position,
                        status="open",
                    )
                )
            return item.id

        return self._write(work)

    def delete_extracted_pair(self, item_id: int, user_id: int) -> None:
        """Remove a pair this annotator extracted, while nobody has classified it."""

        def work(session: Session) -> None:
            item = session.get(Item, item_id)
            if item is None or item.author_id != user_id or item.origin != "extracted":
                raise Forbidden(Errors.E602_item_pair_you.format(item_id=item_id))
            if item.doc_pair_id is not None:
                dp = session.get(DocPair, item.doc_pair_id)
                assert dp is not None
                self._require_open(dp)
            if session.scalar(select(func.count()).where(Annotation.item_id == item_id)):
                raise Conflict(Errors.E603_item_already_being.format(item_id=item_id))
            session.execute(delete(Assignment).where(Assignment.item_id == item_id))
            session.delete(item)

        self._write(work)

    def screen(self, doc_pair_id: int, user_id: int, accept: bool) -> str:
        """T4, the quick pass before extraction: accept the document pair (it stays open for
        extraction) or reject it (status ``rejected``: its open extraction assignments are
        withdrawn and it never reaches the extraction queue). The caller must hold the pair's
        ``screen`` lease. Returns the document pair's status."""
        now = utcnow()

        def work(session: Session) -> str:
            assignment = leased(
                session,
                user_id,
                doc_pair_id=doc_pair_id,
                task=SCREEN,
                missing=f"document pair {doc_pair_id} is not leased to you for screening",
            )
            assert assignment is not None
            dp = session.get(DocPair, doc_pair_id)
            assert dp is not None
            self._require_open(dp)
            meta = dict(dp.meta or {})
            meta["screened"] = {"accepted": accept, "by": user_id, "at": now.isoformat()}
            dp.meta = meta
            if not accept:
                dp.status = "rejected"
                dp.finished_by = user_id
                dp.finished_at = now
                session.execute(
                    delete(Assignment).where(
                        Assignment.doc_pair_id == doc_pair_id,
                        Assignment.task == EXTRACT,
                        Assignment.status == "open",
                        Assignment.done_by.is_(None),
                    )
                )
            assignment.status = "done"
            assignment.done_by = user_id
            assignment.done_at = now
            assignment.lease_owner = None
            assignment.lease_expires = None
            return dp.status

        return self._write(work)

    def extracted_pairs(self, doc_pair_id: int) -> list[Item]:
        with self.transaction() as session:
            return list(
                session.scalars(
                    select(Item).where(Item.doc_pair_id == doc_pair_id).order_by(Item.id)
                )
            )

    def finish_doc_pair(self, doc_pair_id: int, user_id: int, empty: bool = False) -> None:
        """Mark a document pair finished (or empty: nothing to extract)."""
        now = utcnow()

        def work(session: Session) -> None:
            assignment = self._extract_assignment(session, doc_pair_id, user_id)
            dp = session.get(DocPair, doc_pair_id)
            assert dp is not None
            self._require_open(dp)
            has_pairs = session.scalar(select(func.count()).where(Item.doc_pair_id == dp.id))
            if empty and has_pairs:
                raise AnnotateError(Errors.E609_document_pair_extracted)
            dp.status = "empty" if empty or not has_pairs else "finished"
            dp.finished_by = user_id
            dp.finished_at = now
            assignment.status = "done"
            assignment.done_by = user_id
            assignment.done_at = now
            assignment.lease_owner = None
            assignment.lease_expires = None

        self._write(work)

    def reopen_doc_pair(self, doc_pair_id: int, admin_id: int) -> str:
        """Undo a finish (admins): a finished or empty document pair becomes open again and
        its extraction assignment goes back, open, to the annotator who finished it (their
        extracted pairs stay and can change again). ``meta["reopened"]`` records who re-opened
        it, when, and the status it had. Returns the new status (``open``).

        Raises:
            Conflict: (E618) the document pair is not finished or empty (a rejected pair is
                the quick pass's decision, and an open one has nothing to undo).
        """
        now = utcnow()

        def work(session: Session) -> str:
            dp = session.get(DocPair, doc_pair_id)
            if dp is None:
                raise AnnotateError(Errors.E606_document_pair.format(doc_pair_id=doc_pair_id))
            if dp.status not in ("finished", "empty"):
                raise Conflict(
                    Errors.E618_document_pair_only.format(dp_key=dp.key, dp_status=dp.status)
                )
            finisher = dp.finished_by
            meta = dict(dp.meta or {})
            meta["reopened"] = [
                *meta.get("reopened", []),
                {"by": admin_id, "at": now.isoformat(), "was": dp.status, "finished_by": finisher},
            ]
            dp.meta = meta
            dp.status = "open"
            dp.finished_by = None
            dp.finished_at = None
            for assignment in session.scalars(
                select(Assignment).where(
                    Assignment.doc_pair_id == doc_pair_id,
                    Assignment.task == EXTRACT,
                    Assignment.status == "done",
                )
            ):
                who = session.get(Annotator, assignment.done_by) if assignment.done_by else None
                # back to the annotator whose pairs these are; to the pool if deactivated
                assignment.annotator_id = who.id if who is not None and who.active else None
                assignment.status = "open"
                assignment.done_by = None
                assignment.done_at = None
                assignment.lease_owner = None
                assignment.lease_expires = None
            return dp.status

        return self._write(work)

    def doc_pairs(
        self, project_id: int, *, status: str | None = None, page: int = 1, per_page: int = 50
    ) -> tuple[list[dict[str, Any]], int]:
        """A project's document pairs for the admin list, ``per_page`` at a time (in SQL),
        optionally of one ``status``: rows ``{"doc_pair", "title1", "title2", "pairs"}``
        (the count of extracted pairs), and the total."""
        conditions: list[Any] = [DocPair.project_id == project_id]
        if status:
            conditions.append(DocPair.status == status)
        with self.transaction() as session:
            rows, total = page_of(session, DocPair, conditions, page, per_page)
            ids = [dp.id for dp in rows]
            counts = dict(
                session.execute(
                    select(Item.doc_pair_id, func.count())
                    .where(Item.doc_pair_id.in_(ids))
                    .group_by(Item.doc_pair_id)
                ).all()
            )
            docs = {
                d.id: d
                for d in session.scalars(
                    select(DocumentRow).where(
                        DocumentRow.id.in_([x for dp in rows for x in (dp.doc1_id, dp.doc2_id)])
                    )
                )
            }
        return [
            {
                "doc_pair": dp,
                "title1": doc_title(docs[dp.doc1_id]),
                "title2": doc_title(docs[dp.doc2_id]),
                "pairs": int(counts.get(dp.id, 0)),
            }
            for dp in rows
        ], int(total or 0)

    def extraction_rows(self, project_id: int) -> list[dict[str, Any]]:
        """Closed document pairs with their texts and selected spans (for statistics)."""
        with self.transaction() as session:
            pairs = list(
                session.scalars(
                    select(DocPair).where(
                        DocPair.project_id == project_id, DocPair.status.in_(("finished", "empty"))
                    )
                )
            )
            out = []
            for dp in pairs:
                doc1 = session.get(DocumentRow, dp.doc1_id)
                doc2 = session.get(DocumentRow, dp.doc2_id)
                items = list(session.scalars(select(Item).where(Item.doc_pair_id == dp.id)))
                out.append(
                    {
                        "source": dp.source or "unknown",
                        "text1": doc1.text if doc1 else "",
                        "text2": doc2.text if doc2 else "",
                        "spans1": [(i.begin1, i.end1) for i in items],
                        "spans2": [(i.begin2, i.end2) for i in items],
                    }
                )
        return out
