"""Export: the project's pairs as a PairSet, written in any parakit format."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from parakit.annotate.db import (
    Service,
    submitted_by_item,
)
from parakit.annotate.models import (
    DocumentRow,
    Item,
)
from parakit.labels import scheme_from_spec
from parakit.schema import Document, Judgment, Pair, PairSet, Span


class Exports(Service):
    """The released corpus with contexts, rewrites and judgments."""

    def to_pairset(
        self, project_id: int, *, labelled_only: bool = True, judgments: bool = False
    ) -> PairSet:
        """The project's pairs (imported and extracted; not rewrite-check items) as a PairSet
        with the documents their spans point into, the annotators' rewrites and, on request,
        the individual judgments."""
        project = self.db.project(project_id)
        names = self.db.accounts.annotator_names()
        with self.transaction() as session:
            items = list(
                session.scalars(
                    select(Item)
                    .where(Item.project_id == project_id, Item.origin != "rewrite")
                    .order_by(Item.id)
                )
            )
            anns = submitted_by_item(session, project_id)
            docs = {
                d.id: d
                for d in session.scalars(
                    select(DocumentRow).where(DocumentRow.project_id == project_id)
                )
            }
        pairs = []
        used: dict[str, Document] = {}
        for item in items:
            if labelled_only and item.label is None:
                continue
            spans = []
            for doc_id, begin, end in (
                (item.doc1_id, item.begin1, item.end1),
                (item.doc2_id, item.begin2, item.end2),
            ):
                if doc_id is None or begin is None or end is None:
                    spans.append(None)
                    continue
                doc = docs[doc_id]
                used[doc.key] = Document(doc.key, doc.text, dict(doc.meta or {}))
                spans.append(Span(doc.key, begin, end))
            own = anns.get(item.id, [])
            rewrites = tuple((a.rewrite1 or "", a.rewrite2 or "") for a in own if a.rewrite1)
            judged = (
                tuple(
                    Judgment(
                        annotator=names.get(a.annotator_id, str(a.annotator_id)),
                        label=a.label,
                        time=a.submitted_at.isoformat() if a.submitted_at else None,
                        unsure=a.unsure,
                        comment=a.comment,
                        rewrite=(a.rewrite1 or "", a.rewrite2 or "") if a.rewrite1 else None,
                        # model in the loop: the pre-selected guess and whether it was kept
                        metadata={}
                        if a.model_guess is None
                        else {"model_guess": a.model_guess, "model_kept": a.model_kept},
                    )
                    for a in own
                )
                if judgments
                else ()
            )
            pairs.append(
                Pair(
                    id=item.key,
                    text1=item.text1,
                    text2=item.text2,
                    label=item.label,
                    span1=spans[0],
                    span2=spans[1],
                    group=item.group,
                    source=item.source,
                    rewrites=rewrites,
                    judgments=judged,
                    metadata=dict(item.meta or {})
                    | ({} if item.suggested is None else {"suggested": item.suggested}),
                )
            )
        return PairSet(
            pairs,
            scheme=scheme_from_spec(project.scheme),
            documents=used,
            name=project.name,
            lang=(project.settings or {}).get("lang"),
        )

    def left_out(self, project_id: int, drop_labels: tuple[str, ...] = ()) -> dict[str, int]:
        """What :meth:`export` writes (``exported``) and leaves out of the project's pairs, so
        it can be said: ``disagreements`` (two labels differ, nobody resolved them),
        ``unlabelled`` (not annotated yet, or waiting for a second annotation) and ``dropped``
        (``drop_labels``)."""
        with self.transaction() as session:
            items = list(
                session.scalars(
                    select(Item).where(Item.project_id == project_id, Item.origin != "rewrite")
                )
            )
        conflicts = {item.id for item, _ in self.db.review.disagreements(project_id)}
        unlabelled = [item for item in items if item.label is None]
        disagreements = sum(1 for item in unlabelled if item.id in conflicts)
        parse = self.db.scheme(project_id).parse
        dropped = sum(
            1 for item in items if item.label is not None and parse(item.label).base in drop_labels
        )
        return {
            "exported": len(items) - len(unlabelled) - dropped,
            "disagreements": disagreements,
            "unlabelled": len(unlabelled) - disagreements,
            "dropped": dropped,
        }

    def export(
        self,
        project_id: int,
        path: str | Path,
        format: str | None = None,
        drop_labels: tuple[str, ...] = (),
        judgments: bool = False,
    ) -> Path:
        """Write the released corpus with contexts: Turku JSON layout (``.json``, plus the
        texts file beside it) or canonical JSONL; ``drop_labels`` leaves out base labels
        (``("1", "x")`` for the Turku release)."""
        from parakit import io

        pairs = self.to_pairset(project_id, judgments=judgments)
        if drop_labels:
            pairs = pairs.drop_labels(drop_labels)
        io.write(pairs, path, format=format)
        return Path(path)
