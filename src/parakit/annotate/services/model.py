"""Model in the loop: a project's attached classifier, its guesses and uncertainty ordering.

A model trained by ``parakit identify train`` is *attached* to a project by the CLI
(``parakit annotate attach-model``), which loads it, scores every item once and hands the
scores here: this package never imports the models (the layering of
``docs/architecture.md``), and no request recomputes a score. What is stored:

* ``Item.model_p`` — P(paraphrase) of the model (its scheme-aware reading) and
  ``Item.model_label`` — the label it guesses, in the project's scheme: kept only when the
  model's scheme is the project's, or mapped explicitly (a binary ``1`` is not Turku ``1``);
* ``Project.settings["model"]`` — what was attached (name, type, path, when) and the queue
  order (``uncertainty`` or ``queue``).

Single annotation (one assignment per item) may use both: the queue serves the items whose
``|p - 0.5|`` is smallest first (set once, in the assignments' ``position``, when the model is
attached or the items assigned) and the classify page pre-selects the guess; the server
records on the annotation which guess it showed (``model_guess``) and whether the submitted
label kept it (``model_kept``). Double annotation stays blind: its items show no guess and
keep the seeded random order of ``assign``, so the two judgments that agreement is measured
on are independent of the model and of each other.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import exists, func, select
from sqlalchemy.orm import Session

from parakit.annotate.db import Service, utcnow
from parakit.annotate.models import Annotation, Assignment, Item, Project
from parakit.annotate.tasks import CLASSIFY
from parakit.errors import AnnotateError, Errors, ParakitError
from parakit.labels import LabelScheme, get_scheme, scheme_from_spec

#: the queue orders a project may use with a model: ``uncertainty`` (|p - 0.5| smallest first)
#: or ``queue`` (the seeded random order of ``assign``, the model only pre-selects)
ORDERS = ("uncertainty", "queue")


@dataclass(frozen=True)
class Attached:
    """What :meth:`ModelLoop.attach` did: items scored, guesses stored (labels valid in the
    project's scheme), single-annotation assignments re-ordered."""

    scored: int
    guesses: int
    reordered: int


def uncertainty_key(p: float | None) -> tuple[bool, float]:
    """Sort key of the uncertainty order: ``|p - 0.5|`` smallest first, unscored items last."""
    return (p is None, 0.0 if p is None else abs(p - 0.5))


def _double_items(project_id: int) -> Any:
    """A subquery of the project's items queued for double annotation (a slot-2 assignment)."""
    return select(Assignment.item_id).where(
        Assignment.project_id == project_id, Assignment.task == CLASSIFY, Assignment.slot == 2
    )


def shown_guess(session: Session, item: Item, task: str) -> str | None:
    """The label the classify page pre-selects for ``item``, decided by the server: the
    attached model's guess, but only for the ``classify`` task of a project with a model, and
    never for an item in double annotation (blind: no slot-2 assignment may exist)."""
    if task != CLASSIFY or item.model_label is None:
        return None
    project = session.get(Project, item.project_id)
    if project is None or not (project.settings or {}).get("model"):
        return None
    double = session.scalar(
        select(
            exists().where(
                Assignment.item_id == item.id,
                Assignment.task == CLASSIFY,
                Assignment.slot == 2,
            )
        )
    )
    return None if double else item.model_label


def uncertainty_order(session: Session, project_id: int, item_ids: list[int]) -> list[int]:
    """``item_ids`` in the project's queue order for single annotation: by uncertainty when
    the project's model asks for it (a stable sort, so unscored items and ties keep the
    caller's seeded order), else unchanged."""
    project = session.get(Project, project_id)
    model = (project.settings or {}).get("model") if project is not None else None
    if not model or model.get("order") != "uncertainty" or not item_ids:
        return item_ids
    scores = {
        int(i): p
        for i, p in session.execute(select(Item.id, Item.model_p).where(Item.id.in_(item_ids)))
    }
    return sorted(item_ids, key=lambda i: uncertainty_key(scores.get(i)))


class ModelLoop(Service):
    """Attach a model's scores to a project, detach them, and report how often annotators
    kept the model's guess."""

    def items(self, project_id: int) -> list[tuple[int, str, str, str]]:
        """``(id, key, text1, text2)`` of every item of the project, to score with a model."""
        self.db.project(project_id)
        with self.transaction() as session:
            return [
                (int(i), str(k), str(a), str(b))
                for i, k, a, b in session.execute(
                    select(Item.id, Item.key, Item.text1, Item.text2)
                    .where(Item.project_id == project_id)
                    .order_by(Item.id)
                )
            ]

    def attach(
        self,
        project_id: int,
        scores: Mapping[int, tuple[float, str | None]],
        *,
        model: Mapping[str, Any],
        order: str = "queue",
        model_scheme: LabelScheme | Mapping[str, Any] | str | None = None,
        label_map: Mapping[str, str] | None = None,
    ) -> Attached:
        """Store a model's ``(P(paraphrase), guessed label)`` per item id and attach it.

        A guess is pre-selected only when it is known to mean what the project's label of
        the same name means: the model's labels are of the project's scheme, or
        ``label_map`` maps them explicitly. A binary model's ``1`` (paraphrase) is never
        taken as Turku ``1`` (unrelated).

        Args:
            scores: item id -> (probability in [0, 1], label or None).
            model: what to show and keep about the model (``name``, ``type``, ``path``...).
            order: ``uncertainty`` re-orders the open single-annotation assignments now (and
                ``assign`` orders new ones), ``queue`` keeps the seeded random order.
            model_scheme: the label scheme of the model's guesses (a scheme, its spec or its
                name; a parakit model's ``scheme_``). When it is not the project's scheme,
                or unknown (None), no guess is stored unless ``label_map`` says how.
            label_map: model label -> project label (``{"1": "4", "0": "2"}``); labels it
                does not name get no guess. Every target must be a label of the project.
        Raises:
            AnnotateError: (E645) unknown order, a score for an item of another project, a
                probability outside [0, 1], or a ``label_map`` target that is not a label of
                the project's scheme.
        """
        if order not in ORDERS:
            raise AnnotateError(
                Errors.E645_unknown_order_use.format(order=order, orders=", ".join(ORDERS))
            )
        scheme = self.db.scheme(project_id)
        to_project = self._label_mapping(scheme, model_scheme, label_map)
        checked: dict[int, tuple[float, str | None]] = {}
        for item_id, (p, label) in scores.items():
            p = float(p)
            if not (math.isfinite(p) and 0.0 <= p <= 1.0):
                raise AnnotateError(Errors.E645_item_model_probability.format(item_id=item_id, p=p))
            checked[int(item_id)] = (p, None if label is None else to_project(str(label)))

        def work(session: Session) -> Attached:
            project = session.get(Project, project_id)
            assert project is not None  # self.db.scheme looked it up
            rows = {
                row.id: row
                for row in session.scalars(select(Item).where(Item.project_id == project_id))
            }
            stray = sorted(set(checked) - set(rows))
            if stray:
                raise AnnotateError(
                    Errors.E645_scores_name_item.format(stray_5=stray[:5], project_id=project_id)
                )
            for item_id, row in rows.items():
                row.model_p, row.model_label = checked.get(item_id, (None, None))
            info = {str(k): v for k, v in model.items()}
            info.update(order=order, attached_at=utcnow().isoformat(timespec="seconds"))
            project.settings = {**(project.settings or {}), "model": info}
            session.flush()
            moved = self._reorder(session, project_id) if order == "uncertainty" else 0
            guesses = sum(1 for _, g in checked.values() if g is not None)
            return Attached(len(checked), guesses, moved)

        return self._write(work)

    @staticmethod
    def _label_mapping(
        scheme: LabelScheme,
        model_scheme: LabelScheme | Mapping[str, Any] | str | None,
        label_map: Mapping[str, str] | None,
    ) -> Any:
        """A function from a model label to the project label it stands for, or None."""
        if label_map is not None:
            mapped: dict[str, str] = {}
            for source, target in label_map.items():
                try:
                    mapped[str(source).strip()] = scheme.normalize(str(target))
                except ParakitError:
                    raise AnnotateError(
                        Errors.E645_label_map_label.format(
                            source=source,
                            target=target,
                            scheme_name=scheme.name,
                            scheme_values=", ".join(scheme.values[:8]),
                        )
                    ) from None
            return lambda label: mapped.get(label.strip())
        if model_scheme is None:
            return lambda label: None  # an unknown scheme: a "1" may mean anything
        if isinstance(model_scheme, str):
            model_scheme = get_scheme(model_scheme)
        elif not isinstance(model_scheme, LabelScheme):
            model_scheme = scheme_from_spec(dict(model_scheme))
        if model_scheme != scheme:
            return lambda label: None  # same names, other meanings (binary 1 vs Turku 1)

        def same(label: str) -> str | None:
            try:
                return scheme.normalize(label)
            except ParakitError:
                return None  # a class the scheme does not know

        return same

    def _reorder(self, session: Session, project_id: int) -> int:
        """Give the open single-annotation ``classify`` assignments of each batch the
        positions they already hold, re-dealt by uncertainty (double annotation untouched).
        Returns how many assignments changed position."""
        rows = session.execute(
            select(Assignment, Item.model_p)
            .join(Item, Item.id == Assignment.item_id)
            .where(
                Assignment.project_id == project_id,
                Assignment.task == CLASSIFY,
                Assignment.status == "open",
                Assignment.item_id.not_in(_double_items(project_id)),
            )
        ).all()
        by_batch: dict[str, list[tuple[Assignment, float | None]]] = {}
        for assignment, p in rows:
            by_batch.setdefault(assignment.batch, []).append((assignment, p))
        moved = 0
        for group in by_batch.values():
            positions = sorted(a.position for a, _ in group)
            ranked = sorted(group, key=lambda ap: (*uncertainty_key(ap[1]), ap[0].position))
            for (assignment, _), position in zip(ranked, positions, strict=True):
                if assignment.position != position:
                    assignment.position = position
                    moved += 1
        return moved

    def detach(self, project_id: int) -> None:
        """Forget the project's model: no guesses shown, the queue keeps its current order."""

        def work(session: Session) -> None:
            project = session.get(Project, project_id)
            if project is None:
                raise AnnotateError(Errors.E601_project_id.format(project_id=project_id))
            project.settings = {k: v for k, v in (project.settings or {}).items() if k != "model"}
            for row in session.scalars(select(Item).where(Item.project_id == project_id)):
                row.model_p = row.model_label = None

        self._write(work)

    def guess(self, item_id: int, task: str = CLASSIFY) -> dict[str, Any] | None:
        """What the page pre-selects for ``item_id`` (see :func:`shown_guess`):
        ``{"label", "p"}``, or None (no model, another task, or double annotation)."""
        with self.transaction() as session:
            item = session.get(Item, item_id)
            label = None if item is None else shown_guess(session, item, task)
            if item is None or label is None:
                return None
            return {"label": label, "p": item.model_p}

    def info(self, project_id: int) -> dict[str, Any] | None:
        """The attached model (``Project.settings["model"]``), or None."""
        return (self.db.project(project_id).settings or {}).get("model")

    def summary(self, project_id: int) -> dict[str, float]:
        """Submitted classify annotations that were shown a guess (``shown``), how many kept
        it (``kept``) and the share (``kept_rate``, NaN when none was shown)."""
        with self.transaction() as session:
            shown, kept = session.execute(
                select(
                    func.count(Annotation.model_guess),
                    func.count().filter(Annotation.model_kept.is_(True)),
                ).where(
                    Annotation.project_id == project_id,
                    Annotation.task == CLASSIFY,
                    Annotation.status == "submitted",
                )
            ).one()
        shown, kept = int(shown or 0), int(kept or 0)
        return {
            "shown": shown,
            "kept": kept,
            "kept_rate": kept / shown if shown else float("nan"),
        }


def scores_for(
    ids: Sequence[int], proba: Sequence[float], labels: Sequence[str | None]
) -> dict[int, tuple[float, str | None]]:
    """Zip item ids, P(paraphrase) and guessed labels into the ``scores`` of
    :meth:`ModelLoop.attach`."""
    return {
        int(i): (float(p), None if g is None else str(g))
        for i, p, g in zip(ids, proba, labels, strict=True)
    }
