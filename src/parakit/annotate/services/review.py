"""Adjudication, the QA queue (T8) and the rewrite check (T10)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any

from sqlalchemy import String, and_, cast, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from parakit.annotate.db import (
    Service,
    page_of,
    utcnow,
)
from parakit.annotate.models import (
    Annotation,
    Assignment,
    Item,
    Project,
    StatsCache,
)
from parakit.annotate.tasks import CLASSIFY, REWRITE_CHECK
from parakit.errors import AnnotateError, Errors, NotFound


class Review(Service):
    """Disagreements, resolutions, the QA queue, the rewrite-check batch."""

    def _disputed(self, project_id: int) -> Any:
        """The ids of the project's open disagreements (a subquery): unresolved items with
        submitted classifications of two or more labels; a rewrite (T10) counts the judgments
        of its blind check."""
        return (
            select(Annotation.item_id)
            .join(Item, Item.id == Annotation.item_id)
            .where(
                Annotation.project_id == project_id,
                Annotation.status == "submitted",
                or_(
                    Annotation.task == CLASSIFY,
                    and_(Annotation.task == REWRITE_CHECK, Item.origin == "rewrite"),
                ),
                Item.resolved_by.is_(None),
            )
            .group_by(Annotation.item_id)
            .having(func.count(func.distinct(Annotation.label)) > 1)
        )

    def disagreement_count(self, project_id: int) -> int:
        """How many open disagreements the project has (counted in SQL)."""
        with self.transaction() as session:
            sub = self._disputed(project_id).subquery()
            return int(session.scalar(select(func.count()).select_from(sub)) or 0)

    def disagreement_position(self, project_id: int, item_id: int) -> int | None:
        """Where item ``item_id`` stands among the open disagreements (0-based, in the order of
        :meth:`disagreements`), or ``None`` when it is not one; counted in SQL."""
        with self.transaction() as session:
            sub = self._disputed(project_id).subquery()
            if session.scalar(select(func.count()).where(sub.c.item_id == item_id)) == 0:
                return None
            return int(session.scalar(select(func.count()).where(sub.c.item_id < item_id)) or 0)

    def disagreements(
        self, project_id: int, page: int | None = None, per_page: int = 20
    ) -> list[tuple[Item, list[Annotation]]]:
        """Items with at least two submitted classifications that differ and no resolution,
        in item order, with their judgments; a rewrite (T10) counts the judgments of its
        blind check (the paper resolved them before reporting the share labelled 4; the
        mixed-in pairs keep their own label). ``page`` (1-based): only that page of
        ``per_page`` items, chosen in SQL (the consensus page at 155,000 items)."""
        with self.transaction() as session:
            ids_query = self._disputed(project_id).order_by(Annotation.item_id)
            if page is not None:
                ids_query = ids_query.offset((max(page, 1) - 1) * per_page).limit(per_page)
            ids = list(session.scalars(ids_query))
            if not ids:
                return []
            return _with_judgments(session, ids)

    def judged(self, item_id: int) -> tuple[Item, list[Annotation]]:
        """An item with the submitted judgments an adjudicator weighs (as in
        :meth:`disagreements`), for the item's own page."""
        with self.transaction() as session:
            found = _with_judgments(session, [item_id])
        if not found:
            raise NotFound(Errors.E601_item.format(item_id=item_id))
        return found[0]

    def agreement_summary(self, project_id: int) -> dict[str, int]:
        """Raw agreement in two counts, aggregated in SQL (the project page at 155,000 items
        reads no judgment): ``judged_twice``, the items with submitted classifications by
        two or more annotators, and ``agreed``, those whose labels are all the same."""
        per_item = (
            select(func.count(func.distinct(Annotation.label)).label("labels"))
            .where(
                Annotation.project_id == project_id,
                Annotation.task == CLASSIFY,
                Annotation.status == "submitted",
            )
            .group_by(Annotation.item_id)
            .having(func.count(func.distinct(Annotation.annotator_id)) > 1)
            .subquery()
        )
        with self.transaction() as session:
            twice, agreed = session.execute(
                select(func.count(), func.count().filter(per_item.c.labels == 1)).select_from(
                    per_item
                )
            ).one()
        return {"judged_twice": int(twice or 0), "agreed": int(agreed or 0)}

    def resolve(self, item_id: int, label: str, user_id: int) -> None:
        """Record the adjudicated label of an item (consensus or QA correction)."""
        item = self.db.item(item_id)
        canonical = self.db.scheme(item.project_id).normalize(label)
        now = utcnow()

        def work(session: Session) -> None:
            session.execute(
                update(Item)
                .where(Item.id == item_id)
                .values(label=canonical, resolved_by=user_id, resolved_at=now)
            )

        self._write(work)

    def _qa_conditions(self, project_id: int) -> list[Any]:
        return [
            Annotation.project_id == project_id,
            Annotation.task == CLASSIFY,
            Annotation.status == "submitted",
            or_(Annotation.flags.contains("s"), Annotation.flags.contains("i")),
            Item.resolved_by.is_(None),
        ]

    def qa_count(self, project_id: int) -> int:
        """How many judgments the QA queue holds (counted in SQL)."""
        with self.transaction() as session:
            return int(
                session.scalar(
                    select(func.count())
                    .select_from(Annotation)
                    .join(Item, Item.id == Annotation.item_id)
                    .where(*self._qa_conditions(project_id))
                )
                or 0
            )

    def qa_queue(
        self, project_id: int, page: int | None = None, per_page: int = 20
    ) -> list[tuple[Item, Annotation]]:
        """T8: submitted classifications carrying the flags ``s`` or ``i``, grouped by label
        (as the paper re-checked them, one label at a time), oldest first in each group;
        ``page``: only that page (in SQL)."""
        with self.transaction() as session:
            query = (
                select(Item, Annotation)
                .join(Annotation, Annotation.item_id == Item.id)
                .where(*self._qa_conditions(project_id))
                .order_by(Annotation.label, Annotation.submitted_at, Annotation.id)
            )
            if page is not None:
                query = query.offset((max(page, 1) - 1) * per_page).limit(per_page)
            rows = session.execute(query).all()
        return list(rows)

    def make_rewrite_check(
        self,
        project_id: int,
        seed: int = 0,
        batch: str = REWRITE_CHECK,
        annotations: int = 2,
    ) -> int:
        """T10: a batch mixing every rewrite 50/50 with ordinary labelled pairs, shuffled.

        Each rewrite becomes an item (``origin='rewrite'``); every item of the batch is
        annotated ``annotations`` times (two different people), shown without context or
        provenance and never to anyone who classified it before: the rewrite's author and the
        other labellers of the pair it rewrites, every labeller of an ordinary pair (the lease
        rule of the task, :attr:`parakit.annotate.tasks.TaskSpec.fresh_eyes`). A rewrite whose
        two judgments agree takes that label; one whose judgments differ goes to the
        consensus page (:meth:`disagreements`). The mixed-in pairs are never pairs a rewrite
        came from (a judge who saw both would learn the rewrite's provenance). Returns the
        number of assignments made.

        Raises:
            AnnotateError: E662 an item of the batch that fewer than ``annotations`` members may
                judge (its assignments could never be taken); nothing is written then.
        """
        now = utcnow()
        members = set(self.db.projects.members(project_id))

        def work(session: Session) -> int:
            rewrites = list(
                session.scalars(
                    select(Annotation)
                    .where(
                        Annotation.project_id == project_id,
                        Annotation.task == CLASSIFY,
                        Annotation.status == "submitted",
                        Annotation.rewrite1.is_not(None),
                    )
                    .order_by(Annotation.id)
                )
            )
            entries: list[tuple[int, int | None]] = []
            for ann in rewrites:
                key = f"rewrite-{ann.id}"
                existing = session.scalar(
                    select(Item.id).where(Item.project_id == project_id, Item.key == key)
                )
                if existing is not None:
                    continue
                parent = session.get(Item, ann.item_id)
                assert parent is not None
                item = Item(
                    project_id=project_id,
                    key=key,
                    text1=ann.rewrite1 or "",
                    text2=ann.rewrite2 or "",
                    origin="rewrite",
                    parent_id=parent.id,
                    author_id=ann.annotator_id,
                    group=parent.group,
                    source=parent.source,
                    created_at=now,
                    meta={},
                )
                session.add(item)
                session.flush()
                entries.append((item.id, ann.annotator_id))
            checked = set(
                session.scalars(
                    select(Assignment.item_id).where(
                        Assignment.project_id == project_id, Assignment.task == REWRITE_CHECK
                    )
                )
            )
            normal = list(
                session.execute(
                    select(Annotation.item_id, Annotation.annotator_id)
                    .join(Item, Item.id == Annotation.item_id)
                    .where(
                        Annotation.project_id == project_id,
                        Annotation.task == CLASSIFY,
                        Annotation.status == "submitted",
                        Item.origin != "rewrite",
                        Item.label.is_not(None),
                    )
                    .order_by(Annotation.id)
                ).all()
            )
            rewritten = set(  # pairs a rewrite came from: never mixed in as controls
                session.scalars(
                    select(Item.parent_id).where(
                        Item.project_id == project_id,
                        Item.origin == "rewrite",
                        Item.parent_id.is_not(None),
                    )
                )
            )
            seen: dict[int, int] = {}
            for item_id, who in normal:
                if item_id not in checked and item_id not in rewritten:
                    seen.setdefault(item_id, who)
            rng = random.Random(seed)
            pool = sorted(seen.items())
            rng.shuffle(pool)
            entries += pool[: len(entries)]
            rng.shuffle(entries)
            fresh = _fresh_judges(session, project_id, [i for i, _ in entries], members)
            short = [i for i, _ in entries if fresh[i] < annotations]
            if short:
                raise AnnotateError(
                    Errors.E662_items_rewrite_check.format(
                        n_short=len(short), n_entries=len(entries), annotations=annotations
                    )
                )
            start = (
                session.scalar(
                    select(func.max(Assignment.position)).where(Assignment.project_id == project_id)
                )
                or 0
            ) + 1
            for n, (item_id, exclude) in enumerate(entries):
                for slot in range(1, annotations + 1):
                    session.add(
                        Assignment(
                            project_id=project_id,
                            task=REWRITE_CHECK,
                            item_id=item_id,
                            slot=slot,
                            batch=batch,
                            position=start + n,
                            exclude_id=exclude,
                            status="open",
                        )
                    )
            return len(entries) * annotations

        return self._write(work)

    def rewrite_check_shortfall(self, project_id: int, annotations: int = 2) -> int:
        """Items of the rewrite check that fewer than ``annotations`` project members can
        judge (everyone else classified the item or, for a rewrite, the pair it rewrites):
        their assignments would stay open until members are added."""
        members = set(self.db.projects.members(project_id))
        with self.transaction() as session:
            items = list(
                session.scalars(
                    select(Item.id)
                    .join(Assignment, Assignment.item_id == Item.id)
                    .where(
                        Assignment.project_id == project_id,
                        Assignment.task == REWRITE_CHECK,
                        Assignment.status == "open",
                    )
                    .distinct()
                )
            )
            fresh = _fresh_judges(session, project_id, items, members)
        return sum(1 for item_id in items if fresh[item_id] < annotations)

    def agreement(self, project_id: int) -> dict[str, float]:
        """T9: the agreement report of the project's classifications (every level), with
        accuracy and kappa against the consensus on the double-annotated items; ``{}`` while
        no item has two annotators. One use case for ``parakit annotate stats`` and the stats
        page.

        The database aggregates (155,000 items are never read into Python): one grouped
        query returns each distinct combination of (annotator, label) judgments an item holds,
        with its final label and how many items share it
        (:func:`_judgment_combinations`); every level's contingency tables, rater counts and
        coincidences are sums over those few combinations, and
        :mod:`parakit.annotate.agreement` turns them into the figures of its reference
        implementations (:func:`~parakit.annotate.agreement.agreement_report` on the same
        judgments gives the same numbers; a test holds them equal)."""
        from parakit.annotate.agreement import LEVELS, reducer

        scheme = self.db.scheme(project_id)
        with self.transaction() as session:
            combinations = _judgment_combinations(session, project_id)
        if max((len(judged) for judged, _, _ in combinations), default=0) < 2:
            return {}
        labels = {label for judged, _, _ in combinations for _, label in judged}
        finals = {final for _, final, _ in combinations if final is not None}
        out: dict[str, float] = {}
        # the levels that keep the same labels share their counts (Turku: full,
        # subsumption and base keep all; binary drops the labels it has no reading of)
        counts: dict[tuple[str, ...], Any] = {}
        for level in LEVELS:
            if level == "binary" and not scheme.readings():
                continue
            function = reducer(scheme, level)
            kept = tuple(sorted(x for x in labels if function(x) is not None))
            if kept not in counts:
                counts[kept] = _agreement_counts(combinations, set(kept))
            out.update(_level_figures(level, counts[kept], function, labels, finals or None))
        return out

    def statistics(self, project_id: int) -> dict[str, dict[str, float]]:
        """The reports of the statistics page: ``agreement`` (:meth:`agreement`),
        ``rewrite_check`` (:meth:`rewrite_check_report`) and ``model``
        (:meth:`~parakit.annotate.services.model.ModelLoop.summary`), each computed once per
        project revision and kept in the database (:class:`~parakit.annotate.models.StatsCache`,
        shared by every server worker).

        The project's ``revision`` moves in the transaction of every change these reports
        read (database triggers, migration 0008: a submitted judgment saved, edited or
        deleted, an item imported, resolved or deleted, the scheme changed), so a report is
        served only while nothing it counts has changed; otherwise it is computed again and
        stored. The revision is read before the report is computed: a change committed
        meanwhile leaves the stored report at the older revision, computed again on the
        next view, never a report labelled newer than what it counted.

        Raises:
            NotFound: no such project.
        """
        return {
            "agreement": self._cached(project_id, "agreement", self.agreement),
            "rewrite_check": self._cached(project_id, "rewrite_check", self.rewrite_check_report),
            "model": self._cached(project_id, "model", self.db.model.summary),
        }

    def _cached(
        self, project_id: int, name: str, compute: Callable[[int], Mapping[str, float]]
    ) -> dict[str, float]:
        """The report ``name`` of :meth:`statistics`: stored if computed at the project's
        current revision, else ``compute(project_id)`` (then stored)."""
        with self.transaction() as session:
            revision = session.scalar(select(Project.revision).where(Project.id == project_id))
            if revision is None:
                raise NotFound(Errors.E601_project_id.format(project_id=project_id))
            row = session.execute(
                select(StatsCache.revision, StatsCache.value).where(
                    StatsCache.project_id == project_id, StatsCache.name == name
                )
            ).first()
        if row is not None and row.revision == revision:
            return {key: float("nan") if v is None else v for key, v in row.value.items()}
        report = dict(compute(project_id))
        # JSON has no NaN (PostgreSQL refuses it): None stands for it
        value = {key: None if v != v else v for key, v in report.items()}
        now = utcnow()

        def work(session: Session) -> None:
            moved = session.execute(
                update(StatsCache)
                .where(
                    StatsCache.project_id == project_id,
                    StatsCache.name == name,
                    StatsCache.revision < revision,
                )
                .values(revision=revision, value=value, computed_at=now)
            ).rowcount
            if moved == 0 and session.get(StatsCache, (project_id, name)) is None:
                session.add(
                    StatsCache(
                        project_id=project_id,
                        name=name,
                        revision=revision,
                        value=value,
                        computed_at=now,
                    )
                )
                session.flush()

        # IntegrityError: another worker stored it first, or the project was deleted meanwhile
        with suppress(IntegrityError):
            self._write(work)
        return report

    def rewrite_check_report(self, project_id: int) -> dict[str, float]:
        """T10 in numbers: how the rewrites were judged in the blind check.

        Returns:
            ``rewrites`` (rewrite items), ``judged_twice`` (rewrites with two or more
            judgments), ``judgments`` (on rewrites), ``share_4`` (share of those judgments
            whose base label is 4: the rewrite is a paraphrase), ``share_4_both`` (share of
            twice-judged rewrites that every judge labelled 4), ``control_agreement`` (share
            of judgments of the mixed-in ordinary pairs equal to their label),
            ``final`` (rewrites with a final label: both judges agreed, or the consensus
            resolved them), ``unresolved`` (twice-judged rewrites still waiting for the
            consensus), ``share_4_resolved`` (share of the final labels whose base is 4: the
            paper's "after merging and resolving ..., 78% of rewrites received the label 4";
            ``nan`` while any dispute is open, the figure is over every resolved rewrite);
            ``nan`` where nothing was judged yet. :func:`why_undefined` says why a figure is
            ``nan``.
        """
        scheme = self.db.scheme(project_id)
        with self.transaction() as session:
            rows = session.execute(
                select(Item.id, Item.origin, Item.label, Annotation.label)
                .join(Annotation, Annotation.item_id == Item.id)
                .where(
                    Annotation.project_id == project_id,
                    Annotation.task == REWRITE_CHECK,
                    Annotation.status == "submitted",
                )
            ).all()
            rewrites = session.scalar(
                select(func.count()).where(Item.project_id == project_id, Item.origin == "rewrite")
            )
            final = dict(
                session.execute(
                    select(Item.id, Item.label).where(
                        Item.project_id == project_id,
                        Item.origin == "rewrite",
                        Item.label.is_not(None),
                    )
                ).all()
            )
        by_item: dict[int, list[str]] = {}
        control = []
        for item_id, origin, item_label, label in rows:
            if origin == "rewrite":
                by_item.setdefault(item_id, []).append(scheme.parse(label).base)
            else:
                control.append(label == item_label)
        judged = [labels for labels in by_item.values()]
        unresolved = sum(1 for i, labels in by_item.items() if len(labels) >= 2 and i not in final)
        twice = [labels for labels in judged if len(labels) >= 2]
        flat = [label for labels in judged for label in labels]
        nan = float("nan")
        return {
            "rewrites": float(rewrites or 0),
            "judged_twice": float(len(twice)),
            "judgments": float(len(flat)),
            "share_4": sum(x == "4" for x in flat) / len(flat) if flat else nan,
            "share_4_both": (
                sum(all(x == "4" for x in labels) for labels in twice) / len(twice)
                if twice
                else nan
            ),
            "control_agreement": sum(control) / len(control) if control else nan,
            "final": float(len(final)),
            "unresolved": float(unresolved),
            # the paper's figure is over every rewrite resolved: undefined while any is open
            "share_4_resolved": (
                sum(scheme.parse(label).base == "4" for label in final.values()) / len(final)
                if final and not unresolved
                else nan
            ),
        }

    def browse(
        self,
        project_id: int,
        *,
        label: str | None = None,
        annotator: int | None = None,
        state: str | None = None,
        text: str | None = None,
        page: int = 1,
        per_page: int = 50,
    ) -> tuple[list[dict[str, Any]], int]:
        """The item browser: the project's items with their submitted classifications,
        filtered, ``per_page`` at a time.

        Args:
            label: items whose final label, or one of whose judgments, is this.
            annotator: items this annotator judged.
            state: ``unlabelled`` (no final label), ``labelled``, ``resolved`` (by an
                adjudicator) or ``disputed`` (judgments differ).
            text: a substring of either statement (case-insensitive).
        Returns:
            (rows ``{"item", "annotations": [(name, Annotation)]}``, total matching).
        """
        names = self.db.accounts.annotator_names()
        judged = select(Annotation.item_id).where(
            Annotation.project_id == project_id,
            Annotation.task == CLASSIFY,
            Annotation.status == "submitted",
        )
        # every filter, the count and the page are SQL: a page reads ``per_page`` items and
        # their annotations, never the whole project
        conditions: list[Any] = [Item.project_id == project_id, Item.origin != "rewrite"]
        if label:
            conditions.append(
                or_(Item.label == label, Item.id.in_(judged.where(Annotation.label == label)))
            )
        if annotator is not None:
            conditions.append(Item.id.in_(judged.where(Annotation.annotator_id == annotator)))
        if state == "unlabelled":
            conditions.append(Item.label.is_(None))
        elif state == "labelled":
            conditions.append(Item.label.is_not(None))
        elif state == "resolved":
            conditions.append(Item.resolved_by.is_not(None))
        elif state == "disputed":
            conditions.append(
                Item.id.in_(
                    judged.group_by(Annotation.item_id).having(
                        func.count(func.distinct(Annotation.label)) > 1
                    )
                )
            )
        if text:
            # a substring, literally: % and _ are escaped, not wildcards
            literal = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            pattern = f"%{literal}%"
            conditions.append(
                or_(
                    func.lower(Item.text1).like(pattern, escape="\\"),
                    func.lower(Item.text2).like(pattern, escape="\\"),
                )
            )
        with self.transaction() as session:
            items, total = page_of(session, Item, conditions, page, per_page)
            anns: dict[int, list[Annotation]] = {}
            if items:
                for ann in session.scalars(
                    select(Annotation)
                    .where(
                        Annotation.item_id.in_([i.id for i in items]),
                        Annotation.task == CLASSIFY,
                        Annotation.status == "submitted",
                    )
                    .order_by(Annotation.id)
                ):
                    anns.setdefault(ann.item_id, []).append(ann)
        rows = [
            {
                "item": item,
                "annotations": [
                    (names.get(a.annotator_id, str(a.annotator_id)), a)
                    for a in anns.get(item.id, [])
                ],
            }
            for item in items
        ]
        return rows, int(total)


#: joins an item's judgments in one string (no label holds it: labels are scheme values)
_JOIN = "\x1f"


def _judgment_combinations(
    session: Session, project_id: int
) -> list[tuple[tuple[tuple[int, str], ...], str | None, int]]:
    """The project's submitted classifications as (judgments, final label, items): each
    distinct combination of (annotator, label) judgments an item holds (sorted), the item's
    final label, and how many items share both.

    One scan of the covering index grouped by item, then grouped again by the joined
    judgments, so the database returns a few rows however many items are judged (at 155,000
    items with two annotators: a handful); no self-join. The table's unique key allows one
    judgment per annotator and item, so an item's judgments also count its annotators."""
    judgment = cast(Annotation.annotator_id, String).concat("=").concat(Annotation.label)
    per_item = (
        select(
            Annotation.item_id.label("item"),
            func.aggregate_strings(judgment, _JOIN).label("judged"),
        )
        .where(
            Annotation.project_id == project_id,
            Annotation.task == CLASSIFY,
            Annotation.status == "submitted",
            Annotation.label.is_not(None),
        )
        .group_by(Annotation.item_id)
        .subquery()
    )
    rows = session.execute(
        select(per_item.c.judged, Item.label, func.count())
        .join(Item, Item.id == per_item.c.item)
        .group_by(per_item.c.judged, Item.label)
    ).all()
    merged: dict[tuple[tuple[tuple[int, str], ...], str | None], int] = {}
    for joined, final, n in rows:
        # the database joins an item's judgments in its own order: sorted here, so one
        # combination is one key whatever that order was
        judged = tuple(
            sorted(
                (int(who), label)
                for who, label in (part.split("=", 1) for part in joined.split(_JOIN))
            )
        )
        merged[judged, final] = merged.get((judged, final), 0) + n
    return [(judged, final, n) for (judged, final), n in merged.items()]


def _agreement_counts(
    combinations: list[tuple[tuple[tuple[int, str], ...], str | None, int]], kept: set[str]
) -> Any:
    """Everything the agreement figures need, over the judgments whose label is in ``kept``
    (from :func:`_judgment_combinations`): ``pairs`` (annotator, other annotator, label,
    other label, judgments of the item, count) over the ordered pairs of judgments within an
    item, ``sizes`` ({judgments of an item: items}) and ``consensus`` (label, final label of
    the item, count) over the items judged twice or more."""
    pairs: dict[tuple[int, int, str, str, int], int] = {}
    sizes: dict[int, int] = {}
    consensus: dict[tuple[str, str], int] = {}
    for judged, final, n in combinations:
        within = [(who, label) for who, label in judged if label in kept]
        m = len(within)
        if not m:
            continue
        sizes[m] = sizes.get(m, 0) + n
        if m < 2:
            continue
        if final is not None:
            for _, label in within:
                consensus[label, final] = consensus.get((label, final), 0) + n
        for a, (who_a, label_a) in enumerate(within):
            for b, (who_b, label_b) in enumerate(within):
                if a != b:
                    key = (who_a, who_b, label_a, label_b, m)
                    pairs[key] = pairs.get(key, 0) + n
    return (
        [(*key, n) for key, n in pairs.items()],
        sizes,
        [(*key, n) for key, n in consensus.items()],
    )


def _level_figures(
    level: str, counts: Any, reduce: Any, labels: set[str], finals: set[str] | None
) -> dict[str, float]:
    """The figures of :func:`~parakit.annotate.agreement.agreement_report` at one label
    ``level`` from :func:`_agreement_counts` (taken over the labels that ``reduce`` keeps):
    every figure is a sum over those counts once the labels are mapped to their reduced
    values, so no judgment is read here."""
    import numpy as np

    from parakit.annotate.agreement import (
        alpha_from_coincidences,
        fleiss_from_counts,
        kappa_from_table,
    )

    pairs, sizes, consensus = counts
    reduced = {label: reduce(label) for label in labels | (finals or set())}
    values = sorted({str(v) for v in reduced.values() if v is not None})
    code = {label: values.index(str(v)) for label, v in reduced.items() if v is not None}
    size = len(values)
    nan = float("nan")
    # pairwise Cohen's kappa: one contingency table per annotator pair (each pair once)
    tables: dict[tuple[int, int], Any] = {}
    o = np.zeros((size, size))  # Krippendorff's coincidences
    for who_a, who_b, la, lb, m, n in pairs:
        if who_a < who_b:
            table = tables.setdefault((who_a, who_b), np.zeros((size, size)))
            table[code[la], code[lb]] += n
        o[code[la], code[lb]] += n / (m - 1)
    total = weight = 0.0
    for table in tables.values():
        shared = table.sum()
        if shared < 2:
            continue
        # sklearn's label set is what either rater used: unused codes dropped
        used = (table.sum(axis=0) + table.sum(axis=1)) > 0
        value = kappa_from_table(table[np.ix_(used, used)])
        if value == value:
            total += value * shared
            weight += shared
    out = {f"{level}_pairwise_kappa": total / weight if weight else nan}
    # Fleiss' kappa over the items with the most common judgment count (ties: the smallest);
    # an item's squared category counts sum to its judgments plus its ordered same-value pairs,
    # and each judgment pairs with the item's other raters - 1 judgments
    fleiss = nan
    multiple = {m: items for m, items in sizes.items() if m >= 2}
    if multiple:
        raters = min(multiple.items(), key=lambda row: (-row[1], row[0]))[0]
        totals = np.zeros(size)
        same = 0
        for _, _, la, lb, m, n in pairs:
            if m == raters:
                totals[code[la]] += n / (raters - 1)
                same += n if code[la] == code[lb] else 0
        items = multiple[raters]
        fleiss = fleiss_from_counts(
            items, raters, [round(t) for t in totals], items * raters + same
        )
    out[f"{level}_fleiss_kappa"] = fleiss
    used_values = len({code[label] for label in labels if label in code})
    out[f"{level}_alpha_nominal"] = alpha_from_coincidences(o) if used_values >= 2 else nan
    if finals:
        table = np.zeros((size, size))
        for given, final, n in consensus:
            if final in code:
                table[code[given], code[final]] += n
        if table.sum():
            used = (table.sum(axis=0) + table.sum(axis=1)) > 0
            out[f"{level}_accuracy"] = float(np.trace(table) / table.sum())
            out[f"{level}_kappa_vs_consensus"] = kappa_from_table(table[np.ix_(used, used)])
        else:
            out[f"{level}_accuracy"] = out[f"{level}_kappa_vs_consensus"] = nan
    return out


def _with_judgments(session: Session, ids: list[int]) -> list[tuple[Item, list[Annotation]]]:
    """Items ``ids`` (in that order, missing ones left out) with their submitted
    classifications, oldest first; a rewrite (T10) with the judgments of its blind check."""
    items = {i.id: i for i in session.scalars(select(Item).where(Item.id.in_(ids)))}
    by_item: dict[int, list[Annotation]] = {i: [] for i in items}
    for ann in session.scalars(
        select(Annotation)
        .where(
            Annotation.item_id.in_(ids),
            Annotation.status == "submitted",
            Annotation.task.in_((CLASSIFY, REWRITE_CHECK)),
        )
        .order_by(Annotation.item_id, Annotation.id)
    ):
        if ann.task == CLASSIFY or items[ann.item_id].origin == "rewrite":
            by_item[ann.item_id].append(ann)
    return [(items[i], by_item[i]) for i in ids if i in items]


def _fresh_judges(
    session: Session, project_id: int, item_ids: list[int], members: set[int]
) -> dict[int, int]:
    """Per item of the rewrite check, how many ``members`` may judge it: everyone but those
    who classified it or, for a rewrite, the pair it rewrites (its author among them)."""
    parents = dict(
        session.execute(select(Item.id, Item.parent_id).where(Item.id.in_(item_ids))).all()
    )
    labelled: dict[int, set[int]] = {}
    for item_id, who in session.execute(
        select(Annotation.item_id, Annotation.annotator_id).where(
            Annotation.project_id == project_id, Annotation.task == CLASSIFY
        )
    ).all():
        labelled.setdefault(item_id, set()).add(who)
    return {
        item_id: len(
            members - labelled.get(item_id, set()) - labelled.get(parents.get(item_id) or -1, set())
        )
        for item_id in item_ids
    }


def why_undefined(metric: str, value: float, report: Mapping[str, float] | None = None) -> str:
    """Why a figure of :meth:`Review.agreement` or
    :meth:`Review.rewrite_check_report` is ``nan`` (empty when it is a number); the
    statistics page and ``parakit annotate stats`` print it beside the figure.

    Args:
        metric: the figure's key (``rewrite_check_`` prefix allowed).
        value: its value.
        report: the whole report, for figures whose reason depends on others
            (``share_4_resolved`` waits for ``unresolved``).
    """
    if value == value:  # not nan
        return ""
    metric = metric.removeprefix("rewrite_check_")
    if metric == "share_4_resolved" and report and report.get("unresolved"):
        count = int(report["unresolved"])
        return (
            f"undefined while {count} rewrite{'s are' if count > 1 else ' is'} still disputed: "
            "resolve them on the consensus page (the figure is over every resolved rewrite)"
        )
    if metric == "share_4_resolved":
        return "no rewrite has a final label yet (two agreeing judges or a resolution)"
    if "kappa" in metric or "alpha" in metric:
        return (
            "undefined: at this label level all judgments (or all items) share one label, so "
            "agreement by chance is 1 and the chance correction divides by zero; it becomes "
            "defined once the annotators use at least two labels"
        )
    if "accuracy" in metric:
        return "no double-annotated item has a consensus label yet"
    if metric.startswith("share") or metric.startswith("control"):
        return "nothing of this kind has been judged yet"
    return "not enough annotations yet"
