"""Noisy-label training (M8, MultiPIT §3.2): a teacher trained on clean data filters or flips
the labels of a large noisy set before a student is trained on clean + relabelled pairs.

For each noisy pair with label *i*, if ``P_teacher(y = i | pair) <= λ`` the pair is

* dropped (``method="filter"``; MultiPIT found λ = 0.35 best), or
* relabelled (``method="flip"``; λ = 0.25): to the other class for binary labels, to the
  teacher's most probable label otherwise (a label that is already the most probable one is
  kept and not counted as flipped).

:func:`noisy_label_grid` runs the λ grid {0.05, 0.15, 0.25, 0.35, 0.45} for both methods and
reports how many pairs were dropped/flipped and the development F1 of each student.

Example:
    >>> from parakit.models.noisy import relabel
    >>> import numpy as np
    >>> from parakit.schema import Pair, PairSet
    >>> noisy = PairSet([Pair("a", "x", "y", "1"), Pair("b", "x", "z", "0")])
    >>> out, report = relabel(noisy, np.array([0.1, 0.9]), ["0", "1"], "flip", 0.25)
    >>> [p.label for p in out], report["flipped"]
    (['0', '0'], 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone

from parakit.errors import Errors, ModelError
from parakit.models.base import PairClassifier
from parakit.schema import PairSet

METHODS = ("filter", "flip")
_PAST = {"filter": "filtered", "flip": "flipped"}
LAMBDA_GRID = (0.05, 0.15, 0.25, 0.35, 0.45)


def given_label_proba(teacher: PairClassifier, noisy: PairSet) -> tuple[np.ndarray, np.ndarray]:
    """The teacher's probability of each noisy pair's own label, and its full probabilities.

    Raises:
        ModelError: a noisy label the teacher does not know (E704) or a pair without a label.
    """
    proba = teacher.predict_proba(noisy)
    index = {str(c): i for i, c in enumerate(teacher.classes_)}
    columns = []
    for pair in noisy:
        if pair.label is None or pair.label not in index:
            raise ModelError(
                Errors.E704_noisy_pair_label.format(
                    pair_id=pair.id, pair_label=pair.label, index=sorted(index)
                )
            )
        columns.append(index[pair.label])
    return proba[np.arange(len(noisy)), columns], proba


def relabel(
    noisy: PairSet,
    p_given: np.ndarray,
    classes: Sequence[str],
    method: str,
    threshold: float,
    proba: np.ndarray | None = None,
) -> tuple[PairSet, dict[str, Any]]:
    """Filter or flip the pairs whose given label has teacher probability ``<= threshold``.

    Args:
        noisy: the noisy pairs.
        p_given: teacher probability of each pair's given label.
        classes: the teacher's classes (column order of ``proba``).
        method: ``filter`` or ``flip``.
        threshold: λ.
        proba: full teacher probabilities (needed to flip multi-class labels).

    Returns:
        the relabelled set and a report ``{method, threshold, n_noisy, dropped, flipped, kept}``.
        Flipped pairs keep their old label in ``metadata["noisy_label"]``.
    """
    if method not in METHODS:
        raise ModelError(Errors.E712_unknown_noisy_label.format(method=method))
    if not 0.0 <= threshold <= 1.0:
        raise ModelError(Errors.E712_must_lie_got.format(threshold=threshold))
    classes = [str(c) for c in classes]
    if method == "flip" and len(classes) != 2 and proba is None:
        raise ModelError(Errors.E712_flipping_multi_class)
    out, dropped, flipped = [], 0, 0
    for row, (pair, p) in enumerate(zip(noisy, p_given, strict=True)):
        if p > threshold:
            out.append(pair)
        elif method == "filter":
            dropped += 1
        else:
            if len(classes) == 2:
                new = classes[1 - classes.index(pair.label)]
            else:
                assert proba is not None
                new = classes[int(np.argmax(proba[row]))]
            if new == pair.label:  # the teacher's most probable label already: nothing to flip
                out.append(pair)
                continue
            flipped += 1
            meta = dict(pair.metadata, noisy_label=pair.label, teacher_p=float(p))
            out.append(pair.replace(label=new, metadata=meta))
    report = {
        "method": method,
        "threshold": threshold,
        "n_noisy": len(noisy),
        "dropped": dropped,
        "flipped": flipped,
        "kept": len(out),
    }
    return noisy.derive(out), report


def combine(
    clean: PairSet, extra: PairSet, prefixes: tuple[str, str] = ("clean", "noisy")
) -> PairSet:
    """One training set of two pair sets; ids are prefixed so they never collide."""
    return concatenate([clean, extra], prefixes)


def concatenate(sets: Sequence[PairSet], prefixes: Sequence[str]) -> PairSet:
    """One training set of several pair sets (clean + relabelled, M8), ids prefixed
    ``prefix:id`` so they never collide; the first set gives scheme, name and language.

    Raises:
        ModelError: the sets use different label schemes (E704): read them with the same
            reading (e.g. all binary) first.
    """
    if not sets or len(sets) != len(prefixes):
        raise ModelError(Errors.E712_give_one_prefix)
    first = sets[0]
    for part, prefix in zip(sets[1:], prefixes[1:], strict=True):
        if part.scheme != first.scheme:
            raise ModelError(
                Errors.E704_training_set_uses.format(
                    prefix=prefix,
                    part_scheme=part.scheme,
                    prefixes_0=prefixes[0],
                    first_scheme=first.scheme,
                )
            )
    pairs = [
        p.replace(id=f"{prefix}:{p.id}")
        for part, prefix in zip(sets, prefixes, strict=True)
        for p in part
    ]
    return PairSet(pairs, scheme=first.scheme, name=first.name, lang=first.lang)


class NoisyLabelCleaner(BaseEstimator):
    """Teacher-based noisy-label filtering/flipping as a scikit-learn style transformer.

    Args:
        teacher: an unfitted classifier (cloned and fitted on the clean set) or, with
            ``refit=False``, a fitted one used as is.
        method: ``filter`` or ``flip``.
        threshold: λ.
        refit: train a clone of ``teacher`` in :meth:`fit`.

    Example:
        >>> cleaner = NoisyLabelCleaner(make_model("mt-features"), "flip", 0.25)  # doctest: +SKIP
        >>> relabelled = cleaner.fit(clean).transform(noisy); cleaner.report_     # doctest: +SKIP
    """

    def __init__(
        self,
        teacher: PairClassifier | None = None,
        method: str = "filter",
        threshold: float = 0.35,
        refit: bool = True,
    ) -> None:
        self.teacher = teacher
        self.method = method
        self.threshold = threshold
        self.refit = refit

    def fit(self, clean: PairSet | None = None) -> NoisyLabelCleaner:
        """Train the teacher on ``clean`` (or adopt the fitted teacher when ``refit=False``)."""
        if self.teacher is None:
            raise ModelError(Errors.E712_noisylabelcleaner_needs_teacher)
        if self.refit:
            if clean is None:
                raise ModelError(Errors.E712_fit_needs_clean)
            self.teacher_ = clone(self.teacher).fit(clean)
        else:
            self.teacher_ = self.teacher
        return self

    def transform(self, noisy: PairSet) -> PairSet:
        """The relabelled noisy set; counts in ``report_``."""
        p_given, proba = given_label_proba(self.teacher_, noisy)
        out, self.report_ = relabel(
            noisy, p_given, self.teacher_.classes_, self.method, self.threshold, proba
        )
        return out


@dataclass
class NoisyLabelResult:
    """Rows of a noisy-label grid: one per training setting, with counts and dev scores."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    #: the fitted teacher (to relabel the noisy set again at the chosen λ)
    teacher: PairClassifier | None = field(default=None, repr=False)

    def best(self, method: str | None = None) -> dict[str, Any]:
        """The row with the highest development F1 (of one method, if given).

        Raises:
            ModelError: E712 a method the grid has no rows of (a typo, or one not run).
        """
        rows = [r for r in self.rows if method is None or r["method"] == method]
        if not rows:
            ran = sorted({r["method"] for r in self.rows})
            raise ModelError(Errors.E712_no_grid_rows.format(method=method, ran=ran))
        return max(rows, key=lambda r: r["dev_f1"])

    def to_markdown(self) -> str:
        """The grid as MultiPIT's Table 3 (P, R, F1, accuracy on dev) with the λ and counts."""
        lines = [
            "| training data | λ | dropped | flipped | train pairs | P | R | F1 | accuracy |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in self.rows:
            lam = "" if r["threshold"] is None else f"{r['threshold']:.2f}"
            lines.append(
                f"| {r['setting']} | {lam} | {r['dropped']} | {r['flipped']} | "
                f"{r['n_train']} | {100 * r['dev_precision']:.1f} | "
                f"{100 * r['dev_recall']:.1f} | {100 * r['dev_f1']:.1f} | "
                f"{100 * r['dev_accuracy']:.1f} |"
            )
        return "\n".join(lines)


def _dev_scores(model: PairClassifier, dev: PairSet) -> dict[str, float]:
    """Accuracy and P/R/F1 of the positive class (macro averages beyond two classes)."""
    from sklearn.metrics import accuracy_score, precision_recall_fscore_support

    truth = [p.label for p in dev]
    predicted = [str(v) for v in model.predict(dev)]
    mask = model.positive_mask()
    if len(model.classes_) == 2:
        positive = str(model.classes_[mask][0] if mask.sum() == 1 else model.classes_[-1])
        kwargs: dict[str, Any] = {"pos_label": positive, "average": "binary"}
    else:
        kwargs = {"average": "macro"}
    p, r, f1, _ = precision_recall_fscore_support(truth, predicted, zero_division=0, **kwargs)
    return {
        "dev_accuracy": float(accuracy_score(truth, predicted)),
        "dev_precision": float(p),
        "dev_recall": float(r),
        "dev_f1": float(f1),
    }


def noisy_label_grid(
    student: PairClassifier,
    clean: PairSet,
    noisy: PairSet,
    dev: PairSet,
    *,
    teacher: PairClassifier | None = None,
    methods: Sequence[str] = METHODS,
    thresholds: Sequence[float] = LAMBDA_GRID,
    use_dev_for_selection: bool = True,
    refit_teacher: bool = True,
) -> NoisyLabelResult:
    """Run the M8 recipe: teacher on clean, then for each method and λ a student on
    clean + relabelled noisy pairs; also the clean-only and clean + raw-noisy references.

    Args:
        student: an unfitted classifier (cloned for every run; also the teacher by default).
        clean, noisy, dev: the clean training set, the noisy set, the development set.
        teacher: an unfitted teacher (default: a clone of ``student``).
        methods: subset of ``("filter", "flip")``.
        thresholds: the λ grid.
        use_dev_for_selection: pass ``dev`` as ``eval_set`` to the fits (neural models select
            their checkpoint on it).
        refit_teacher: False to use ``teacher`` as given (already fitted, e.g. a saved model).

    Returns:
        a :class:`NoisyLabelResult`; ``.best("flip")`` gives the best flipping λ.
    """
    eval_set = dev if use_dev_for_selection else None
    if teacher is not None and not refit_teacher:
        teacher_model = teacher
    else:
        teacher_model = clone(teacher if teacher is not None else student).fit(
            clean, eval_set=eval_set
        )
    result = NoisyLabelResult(teacher=teacher_model)
    result.rows.append(
        {
            "setting": "clean only (teacher)",
            "method": "clean",
            "threshold": None,
            "dropped": 0,
            "flipped": 0,
            "n_train": len(clean),
            **_dev_scores(teacher_model, dev),
        }
    )
    raw = clone(student).fit(combine(clean, noisy), eval_set=eval_set)
    result.rows.append(
        {
            "setting": "clean + noisy as is",
            "method": "raw",
            "threshold": None,
            "dropped": 0,
            "flipped": 0,
            "n_train": len(clean) + len(noisy),
            **_dev_scores(raw, dev),
        }
    )
    p_given, proba = given_label_proba(teacher_model, noisy)
    for method in methods:
        for threshold in thresholds:
            relabelled, report = relabel(
                noisy, p_given, teacher_model.classes_, method, threshold, proba
            )
            train = combine(clean, relabelled)
            model = clone(student).fit(train, eval_set=eval_set)
            result.rows.append(
                {
                    "setting": f"clean + {_PAST[method]} noisy",
                    "method": method,
                    "threshold": threshold,
                    "dropped": report["dropped"],
                    "flipped": report["flipped"],
                    "n_train": len(train),
                    **_dev_scores(model, dev),
                }
            )
    return result
