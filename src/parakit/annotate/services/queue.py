"""The work queue: assignment, leases, annotations with revisions, progress."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, exists, func, or_, select, union_all, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, aliased

from parakit.annotate.db import Service, leased, submitted_by_item, utcnow
from parakit.annotate.models import (
    Annotation,
    Annotator,
    Assignment,
    DocPair,
    Item,
)
from parakit.annotate.services.model import shown_guess, uncertainty_order
from parakit.annotate.tasks import CLASSIFY, EXTRACT, REWRITE_CHECK, SCREEN, TASKS, task_spec
from parakit.errors import AnnotateError, Conflict, Errors

#: bulk changes of at least this many rows refresh the planner statistics (PostgreSQL)
ANALYZE_AFTER = 1000

#: submissions per annotator whose gaps make the progress page's pace (median seconds a
#: judgment): the recent pace, read with a window function instead of every judgment
PACE_WINDOW = 200


def _fresh_eyes(task: str, user_id: int) -> tuple[Any, ...]:
    """The lease condition of a ``fresh_eyes`` task (T10): the assignment's item was never
    classified by ``user_id``, nor, for a rewrite, the pair it rewrites; ``()`` for other
    tasks."""
    spec = TASKS.get(task)
    if spec is None or not spec.fresh_eyes:
        return ()
    target = aliased(Item)
    labelled = exists().where(
        target.id == Assignment.item_id,
        Annotation.task == CLASSIFY,
        Annotation.annotator_id == user_id,
        or_(Annotation.item_id == target.id, Annotation.item_id == target.parent_id),
    )
    return (~labelled,)


def _own_annotation(session: Session, item_id: int, user_id: int, task: str) -> Annotation | None:
    """This annotator's own annotation (draft or submitted) of an item, if any."""
    return session.scalar(
        select(Annotation).where(
            Annotation.item_id == item_id,
            Annotation.annotator_id == user_id,
            Annotation.task == task,
        )
    )


@dataclass(frozen=True)
class Saved:
    """The result of saving an annotation."""

    annotation_id: int
    revision: int
    status: str


class Queue(Service):
    """Assign items, lease the next one, save and submit annotations."""

    def assign_task(
        self,
        project_id: int,
        *,
        task: str = CLASSIFY,
        mode: str = "single",
        annotators: list[str] | None = None,
        batch: str = "default",
        seed: int = 0,
    ) -> int:
        """Queue a project's unassigned items or document pairs for an assignable task of
        :data:`~parakit.annotate.tasks.TASKS`: the one use case behind ``parakit annotate
        assign`` and the admin page. Named annotators become members and get the work
        round-robin; without names the work goes to the shared pool, which only members see,
        so the project must have members (two for double annotation) or
        :class:`AnnotateError` (E616) says how to add
        them.

        Returns:
            the number of assignments made.
        """
        spec = task_spec(task, assignable=True)
        self.db.project(project_id)
        ids = [self.db.accounts.annotator_id(n) for n in annotators] if annotators else None
        if ids:
            self._require_active(ids)
        for uid in ids or ():
            self.db.projects.add_member(project_id, uid)
        if ids is None:
            need = 2 if spec.assign == "items" and mode == "double" else 1
            have = len(self.db.projects.members(project_id))
            if have < need:
                raise AnnotateError(
                    Errors.E616_shared_pool_served.format(
                        project_id=project_id,
                        have=have,
                        need=need,
                        for_double_annotation_if_nee=" for double annotation" if need == 2 else "",
                    )
                )
        if spec.assign == "doc_pairs":
            return self.assign_document_pairs(project_id, ids, batch=batch, task=task)
        return self.assign(project_id, mode=mode, annotators=ids, batch=batch, seed=seed, task=task)

    def assign(
        self,
        project_id: int,
        *,
        mode: str = "single",
        annotators: list[int] | None = None,
        batch: str = "default",
        items: list[int] | None = None,
        seed: int = 0,
        task: str = CLASSIFY,
    ) -> int:
        """Queue the project's items not yet queued for ``task`` (classification, T9).

        Args:
            mode: ``single`` (one annotation per item) or ``double`` (two, by different people).
            annotators: give items round-robin to these annotators' personal queues; default:
                a shared pool that anyone in the project draws from.
            batch: batch name; queues serve batches in name order.
            items: restrict to these item ids.
            seed: shuffles the order of the batch (single annotation in a project whose
                attached model orders by uncertainty: ``|p - 0.5|`` smallest first, see
                :mod:`parakit.annotate.services.model`).
        Returns:
            the number of assignments made.
        """
        if mode not in ("single", "double"):
            raise AnnotateError(Errors.E606_unknown_mode_use.format(mode=mode))
        if annotators:
            self._require_active(annotators)
        slots = 1 if mode == "single" else 2
        if annotators is not None and mode == "double" and len(set(annotators)) < 2:
            raise AnnotateError(Errors.E606_double_annotation_needs)

        def work(session: Session) -> int:
            query = select(Item.id).where(
                Item.project_id == project_id,
                Item.origin != "rewrite",
                ~exists().where(Assignment.item_id == Item.id, Assignment.task == task),
            )
            if items is not None:
                query = query.where(Item.id.in_(items))
            ids = list(session.scalars(query.order_by(Item.id)))
            random.Random(seed).shuffle(ids)
            if slots == 1 and task == CLASSIFY:
                # model in the loop: most uncertain first when the project asks for it;
                # double annotation keeps the seeded order (blind to the model)
                ids = uncertainty_order(session, project_id, ids)
            start = session.scalar(
                select(func.coalesce(func.max(Assignment.position), 0)).where(
                    Assignment.project_id == project_id
                )
            )
            made = 0
            for n, item_id in enumerate(ids):
                for slot in range(1, slots + 1):
                    who = None
                    if annotators:
                        who = annotators[(n * slots + slot - 1) % len(annotators)]
                    session.add(
                        Assignment(
                            project_id=project_id,
                            task=task,
                            item_id=item_id,
                            slot=slot,
                            batch=batch,
                            position=start + n + 1,
                            annotator_id=who,
                            status="open",
                        )
                    )
                    made += 1
            return made

        made = self._write(work)
        if made >= ANALYZE_AFTER:
            self.db.analyze("assignments", "items")
        return made

    def _require_active(self, annotator_ids: list[int]) -> None:
        """Work given to a deactivated account would wait for nobody: refuse it."""
        with self.transaction() as session:
            inactive = session.scalars(
                select(Annotator.name).where(
                    Annotator.id.in_(annotator_ids), Annotator.active.is_(False)
                )
            ).all()
        if inactive:
            raise AnnotateError(
                Errors.E606_assign_work_deactivated.format(inactive=", ".join(sorted(inactive)))
            )

    def assign_document_pairs(
        self,
        project_id: int,
        annotators: list[int] | None = None,
        batch: str = "default",
        task: str = EXTRACT,
    ) -> int:
        """Queue open document pairs not yet queued for ``task`` (``extract``, or ``screen``:
        the T4 quick accept/reject pass) to a shared pool or round-robin; rejected pairs are
        never queued, and pairs still waiting for their quick pass are not queued for
        extraction (assign extraction again after the pass)."""
        if annotators:
            self._require_active(annotators)

        def work(session: Session) -> int:
            ids = list(
                session.scalars(
                    select(DocPair.id)
                    .where(
                        DocPair.project_id == project_id,
                        DocPair.status == "open",
                        ~exists().where(
                            Assignment.doc_pair_id == DocPair.id, Assignment.task == task
                        ),
                        ~exists().where(
                            Assignment.doc_pair_id == DocPair.id,
                            Assignment.task == SCREEN,
                            Assignment.status == "open",
                        ),
                    )
                    .order_by(DocPair.id)
                )
            )
            for n, dp in enumerate(ids):
                who = annotators[n % len(annotators)] if annotators else None
                session.add(
                    Assignment(
                        project_id=project_id,
                        task=task,
                        doc_pair_id=dp,
                        slot=1,
                        batch=batch,
                        position=n + 1,
                        annotator_id=who,
                        status="open",
                    )
                )
            return len(ids)

        return self._write(work)

    def lease_next(
        self,
        project_id: int,
        user_id: int,
        task: str = CLASSIFY,
        lease: timedelta = timedelta(minutes=30),
    ) -> Assignment | None:
        """The assignment this annotator works on next, leased to them until ``now + lease``.

        An unexpired lease the annotator already holds is returned first (a refresh shows the
        same item); otherwise the next open assignment of their queue or the pool whose lease
        is free or expired. The claim is a conditional UPDATE, so two annotators never hold
        the same assignment, and an annotator never gets both slots of a double item.
        """
        now = utcnow()
        other = aliased(Assignment)
        skip_locked = self.db.engine.dialect.name == "postgresql"
        for _ in range(20):
            with self._writing(), self.transaction() as session:
                held = leased(session, user_id, at=now, project_id=project_id, task=task)
                if held is not None:
                    return held
                same_item = exists().where(
                    other.task == Assignment.task,
                    other.id != Assignment.id,
                    or_(
                        and_(Assignment.item_id.is_not(None), other.item_id == Assignment.item_id),
                        and_(
                            Assignment.doc_pair_id.is_not(None),
                            other.doc_pair_id == Assignment.doc_pair_id,
                        ),
                    ),
                    or_(
                        other.done_by == user_id,
                        and_(other.lease_owner == user_id, other.lease_expires > now),
                    ),
                )
                # T10: never an item this annotator labelled before (every labeller of a
                # double-annotated pair, not only the one exclude_id names)
                fresh = _fresh_eyes(task, user_id)
                candidates: list[int] = []
                # the personal queue first, then the shared pool; each query walks the
                # ix_assignments_next index in queue order and stops after a few rows
                for owner in (
                    Assignment.annotator_id == user_id,
                    Assignment.annotator_id.is_(None),
                ):
                    query = (
                        select(Assignment.id)
                        .where(
                            Assignment.project_id == project_id,
                            Assignment.task == task,
                            Assignment.status == "open",
                            owner,
                            or_(Assignment.exclude_id.is_(None), Assignment.exclude_id != user_id),
                            or_(Assignment.lease_owner.is_(None), Assignment.lease_expires <= now),
                            ~same_item,
                            *fresh,
                        )
                        .order_by(
                            Assignment.batch, Assignment.position, Assignment.slot, Assignment.id
                        )
                    )
                    if skip_locked:
                        # PostgreSQL: lock one free row, skipping rows that concurrent claims
                        # hold, instead of every claim queueing on the same first rows
                        query = query.limit(1).with_for_update(skip_locked=True, of=Assignment)
                    else:
                        query = query.limit(5)
                    candidates += session.scalars(query)
                    if candidates:
                        break
                if not candidates:
                    return None
                for candidate in candidates:
                    claimed = session.execute(
                        update(Assignment)
                        .where(
                            Assignment.id == candidate,
                            Assignment.status == "open",
                            or_(Assignment.lease_owner.is_(None), Assignment.lease_expires <= now),
                        )
                        .values(lease_owner=user_id, lease_expires=now + lease)
                    ).rowcount
                    if claimed == 1:
                        return session.get(Assignment, candidate)
            # every candidate was taken by someone else meanwhile: look again
        return None

    def release(self, assignment_id: int, user_id: int) -> None:
        """Give a leased assignment back to the queue (skip)."""

        def work(session: Session) -> None:
            row = leased(session, user_id, id=assignment_id)
            if row is not None:
                row.lease_owner = row.lease_expires = None

        self._write(work)

    def progress(self, project_id: int, user_id: int, task: str = CLASSIFY) -> dict[str, int]:
        """Items (or document pairs) this annotator has done, and those still open to them
        (the second slot of an item they already answered does not count)."""
        other = aliased(Assignment)
        target = func.coalesce(Assignment.item_id, -Assignment.doc_pair_id)
        with self.transaction() as session:
            done = session.scalar(
                select(func.count()).where(
                    Assignment.project_id == project_id,
                    Assignment.task == task,
                    Assignment.done_by == user_id,
                )
            )
            remaining = session.scalar(
                select(func.count(func.distinct(target))).where(
                    Assignment.project_id == project_id,
                    Assignment.task == task,
                    Assignment.status == "open",
                    or_(Assignment.annotator_id.is_(None), Assignment.annotator_id == user_id),
                    or_(Assignment.exclude_id.is_(None), Assignment.exclude_id != user_id),
                    ~exists().where(
                        other.task == task,
                        other.done_by == user_id,
                        func.coalesce(other.item_id, -other.doc_pair_id) == target,
                    ),
                    *_fresh_eyes(task, user_id),
                )
            )
        return {"done": int(done), "remaining": int(remaining)}

    def project_progress(self, project_id: int | None = None) -> dict[int, list[dict[str, Any]]]:
        """Every project's queued work per task, for the admin overview: ``{project id:
        [{"task", "done", "total"}]}`` in :data:`~parakit.annotate.tasks.TASKS` order, counted
        in assignments (a double-annotated item is two), in one grouped query; ``project_id``:
        that project only (its admin page)."""
        query = select(
            Assignment.project_id,
            Assignment.task,
            func.count(),
            func.count().filter(Assignment.status == "done"),
        ).group_by(Assignment.project_id, Assignment.task)
        if project_id is not None:
            query = query.where(Assignment.project_id == project_id)
        with self.transaction() as session:
            rows = session.execute(query).all()
        order = {name: n for n, name in enumerate(TASKS)}
        out: dict[int, list[dict[str, Any]]] = {}
        for project_id, task, total, done in sorted(
            rows, key=lambda r: (r[0], order.get(r[1], len(order)), r[1])
        ):
            out.setdefault(project_id, []).append(
                {"task": task, "done": int(done), "total": int(total)}
            )
        return out

    def annotation(self, item_id: int, user_id: int, task: str = CLASSIFY) -> Annotation | None:
        """This annotator's own annotation (draft or submitted) of an item, if any."""
        with self.transaction() as session:
            return _own_annotation(session, item_id, user_id, task)

    def save(
        self,
        item_id: int,
        user_id: int,
        *,
        label: str | None,
        revision: int,
        submit: bool,
        rewrite: tuple[str, str] | None = None,
        unsure: bool = False,
        comment: str | None = None,
        task: str = CLASSIFY,
    ) -> Saved:
        """Save a draft (``submit=False``) or submit an annotation.

        Args:
            revision: the revision the client's form was based on (0 for a new annotation);
                a mismatch means a newer answer exists and raises :class:`Conflict`.
        Raises:
            Conflict: stale revision or lease lost; LabelError: invalid label for the scheme.
        """
        item = self.db.item(item_id)
        scheme = self.db.scheme(item.project_id)
        if not label and submit:
            raise AnnotateError(Errors.E607_submitted_annotation_needs)
        canonical = scheme.normalize(label) if label else None
        flags = "".join(scheme.parse(canonical).flags) if canonical is not None else ""
        if rewrite is not None and not any(part.strip() for part in rewrite):
            rewrite = None
        now = utcnow()

        def work(session: Session) -> Saved:
            assignment = leased(
                session,
                user_id,
                done=True,
                item_id=item_id,
                task=task,
                missing=f"item {item_id} is not leased to you (the lease expired and the item "
                "went to someone else, or it was never yours); load the next item",
            )
            assert assignment is not None
            # provenance decided here, never by the client: the guess the page pre-selected
            guess = shown_guess(session, item, task)
            row = _own_annotation(session, item_id, user_id, task)
            if row is not None and row.status == "submitted" and not submit:
                raise Conflict(Errors.E603_item_already_submitted)
            values = dict(
                label=canonical,
                flags=flags,
                rewrite1=rewrite[0] if rewrite else None,
                rewrite2=rewrite[1] if rewrite else None,
                unsure=unsure,
                comment=comment or None,
                updated_at=now,
                model_guess=guess,
                model_kept=None if guess is None or canonical is None else canonical == guess,
            )
            if submit:
                values.update(status="submitted", submitted_at=now)
            if row is None:
                if revision != 0:
                    raise Conflict(Errors.E603_stale_revision_annotation.format(revision=revision))
                row = Annotation(
                    project_id=item.project_id,
                    item_id=item_id,
                    annotator_id=user_id,
                    assignment_id=assignment.id,
                    task=task,
                    status=values.pop("status", "draft"),
                    revision=1,
                    created_at=now,
                    **values,
                )
                session.add(row)
                session.flush()
                new_revision = 1
            else:
                changed = session.execute(
                    update(Annotation)
                    .where(
                        Annotation.id == row.id,
                        Annotation.revision == revision,
                    )
                    .values(revision=Annotation.revision + 1, **values)
                ).rowcount
                if changed != 1:
                    raise Conflict(
                        Errors.E603_stale_revision_item.format(
                            revision=revision, row_revision=row.revision
                        )
                    )
                new_revision = revision + 1
            if submit:
                assignment.status = "done"
                assignment.done_by = user_id
                assignment.done_at = assignment.done_at or now
                assignment.lease_owner = None
                assignment.lease_expires = None
                session.flush()
                if task == CLASSIFY:
                    self._settle(session, item_id)
                elif task == REWRITE_CHECK and item.origin == "rewrite":
                    # a rewrite's label is its check's (the mixed-in pairs keep theirs)
                    self._settle(session, item_id, REWRITE_CHECK)
            return Saved(row.id, new_revision, "submitted" if submit else "draft")

        try:
            return self._write(work)
        except IntegrityError:
            raise Conflict(Errors.E603_annotation_created_another) from None

    def _settle(self, session: Session, item_id: int, task: str = CLASSIFY) -> None:
        """Set the item's label when all its ``task`` assignments agree."""
        item = session.get(Item, item_id)
        if item is None or item.resolved_by is not None:
            return
        open_left = session.scalar(
            select(func.count()).where(
                Assignment.item_id == item_id,
                Assignment.task == task,
                Assignment.status != "done",
            )
        )
        labels = set(
            session.scalars(
                select(Annotation.label).where(
                    Annotation.item_id == item_id,
                    Annotation.task == task,
                    Annotation.status == "submitted",
                )
            )
        )
        item.label = labels.pop() if open_left == 0 and len(labels) == 1 else None

    def history(
        self, project_id: int, user_id: int, task: str = CLASSIFY, limit: int = 50
    ) -> list[Annotation]:
        """This annotator's submitted annotations, newest first (for back/undo)."""
        return [ann for ann, _ in self.recent(project_id, user_id, task, limit)]

    def recent(
        self, project_id: int, user_id: int, task: str = CLASSIFY, limit: int = 50
    ) -> list[tuple[Annotation, Item]]:
        """This annotator's last ``limit`` submitted judgments of ``task`` with their items,
        newest first, in one query (the "recent judgments" list). Only their own: in double
        annotation the list must not show what anyone else said."""
        with self.transaction() as session:
            return [
                (ann, item)
                for ann, item in session.execute(
                    select(Annotation, Item)
                    .join(Item, Item.id == Annotation.item_id)
                    .where(
                        Annotation.project_id == project_id,
                        Annotation.annotator_id == user_id,
                        Annotation.task == task,
                        Annotation.status == "submitted",
                    )
                    .order_by(Annotation.submitted_at.desc(), Annotation.id.desc())
                    .limit(limit)
                )
            ]

    def submitted(self, project_id: int, task: str = CLASSIFY) -> list[Annotation]:
        """Every submitted annotation of a project's ``task``, oldest first (the one query,
        :func:`~parakit.annotate.db.submitted_by_item`)."""
        with self.transaction() as session:
            by_item = submitted_by_item(session, project_id, task)
        return sorted((ann for anns in by_item.values() for ann in anns), key=lambda a: a.id)

    def count_annotations(self, project_id: int, status: str = "submitted") -> int:
        query = select(func.count()).where(
            Annotation.project_id == project_id, Annotation.status == status
        )
        with self.transaction() as session:
            return session.scalar(query)

    def skip(self, item_id: int, user_id: int, task: str = CLASSIFY) -> None:
        """Give back a hard item: the caller's lease on it ends and the item moves to the end
        of its queue, so the next lease brings another item (the caller's draft, if any,
        stays theirs). The item's open slots in the shared pool move with it: in a double
        pool the other slot would otherwise be the very next assignment, and the same item
        would come straight back (another annotator's personal slot keeps its place in their
        queue)."""

        def work(session: Session) -> None:
            row = leased(
                session,
                user_id,
                item_id=item_id,
                task=task,
                missing=f"item {item_id} is not leased to you",
            )
            assert row is not None
            last = session.scalar(
                select(func.max(Assignment.position)).where(Assignment.project_id == row.project_id)
            )
            session.execute(
                update(Assignment)
                .where(
                    Assignment.item_id == item_id,
                    Assignment.task == task,
                    Assignment.status == "open",
                    or_(Assignment.id == row.id, Assignment.annotator_id.is_(None)),
                )
                .values(position=(last or 0) + 1)
            )
            row.lease_owner = None
            row.lease_expires = None

        self._write(work)

    def annotator_progress(
        self, project_id: int, task: str = CLASSIFY, pace_window: int = PACE_WINDOW
    ) -> list[dict[str, Any]]:
        """Per annotator who submitted anything: ``done``, ``last_hour``, ``per_hour`` (over
        their active span: first to last submission), ``median_s`` (median seconds between
        consecutive submissions, over their last ``pace_window`` gaps: the pace they work at
        now), ``first``/``last`` timestamps.

        Two queries, whatever the project's size: the counts and the span grouped in the
        database, and each annotator's last ``pace_window + 1`` submission times (one
        ``LIMIT`` per annotator, joined by ``UNION ALL``: each reads its rows backwards from
        the ``ix_annotations_progress`` index); nothing reads every judgment.
        """
        submitted = (
            Annotation.project_id == project_id,
            Annotation.task == task,
            Annotation.status == "submitted",
            Annotation.submitted_at.is_not(None),
        )
        hour_ago = utcnow() - timedelta(hours=1)
        totals = (
            select(
                Annotation.annotator_id,
                func.count(),
                func.count().filter(Annotation.submitted_at >= hour_ago),
                func.min(Annotation.submitted_at),
                func.max(Annotation.submitted_at),
            )
            .where(*submitted)
            .group_by(Annotation.annotator_id)
        )
        with self.transaction() as session:
            counts = session.execute(totals).all()
            latest = [
                select(Annotation.annotator_id.label("who"), Annotation.submitted_at.label("at"))
                .where(*submitted, Annotation.annotator_id == who)
                .order_by(Annotation.submitted_at.desc(), Annotation.id.desc())
                .limit(pace_window + 1)
                .subquery()
                for who, *_ in counts
            ]
            recent = (
                session.execute(
                    union_all(*(select(part.c.who, part.c.at) for part in latest))
                ).all()
                if latest
                else []
            )
        stamps: dict[int, list[Any]] = {}
        for who, at in recent:
            stamps.setdefault(who, []).append(at)
        names = self.db.accounts.annotator_names()
        out = []
        for who, done, last_hour, first, last in sorted(
            counts, key=lambda row: names.get(row[0], "")
        ):
            gaps = sorted(
                (b - a).total_seconds() for a, b in itertools.pairwise(sorted(stamps[who]))
            )
            span_h = (last - first).total_seconds() / 3600
            out.append(
                {
                    "annotator": names.get(who, str(who)),
                    "done": int(done),
                    "last_hour": int(last_hour),
                    "per_hour": done / span_h if span_h > 0 else float("nan"),
                    "median_s": gaps[len(gaps) // 2] if gaps else float("nan"),
                    "first": first,
                    "last": last,
                }
            )
        return out
