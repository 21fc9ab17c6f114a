"""Re-ranking candidate pairs with any pair classifier (the second stage of two-stage mining).

A pair classifier is anything with ``predict_proba(pairs: PairSet) -> array (n, n_classes)``
(the scikit-learn convention; parakit's identification models follow it) and, optionally,
``classes_`` naming the columns. :func:`paraphrase_proba` is the one P(paraphrase): the
classifier's scheme-aware ``paraphrase_proba``
(see :meth:`parakit.models.base.PairClassifier.paraphrase_proba`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import Errors, MineError
from parakit.labels import get_scheme
from parakit.schema import Pair, PairSet


def paraphrase_proba(
    classifier: Any, pairs: PairSet, positive: Any = None, reading: str | None = None
) -> np.ndarray:
    """P(paraphrase) for every pair: the one definition, the classifier's own.

    parakit classifiers (:class:`parakit.models.base.PairClassifier`) sum the probabilities of
    the classes whose binary ``reading`` in their label scheme is 1 (Turku *loose*: 3 and every
    4). ``positive`` names one class column instead, for third-party
    objects that only have ``predict_proba`` and ``classes_``.
    """
    if positive is None and callable(getattr(classifier, "paraphrase_proba", None)):
        return np.asarray(classifier.paraphrase_proba(pairs, reading=reading), dtype=np.float64)
    if not callable(getattr(classifier, "predict_proba", None)):
        raise MineError(Errors.E804_predict_proba_pairs.format(name=type(classifier).__name__))
    proba = np.asarray(classifier.predict_proba(pairs), dtype=np.float64)
    if proba.ndim != 2 or proba.shape[0] != len(pairs):
        raise MineError(
            Errors.E804_predict_proba_returned.format(proba_shape=proba.shape, n_pairs=len(pairs))
        )
    return proba[:, _class_column(classifier, proba.shape[1], positive)]


def _class_column(classifier: Any, n_columns: int, positive: Any) -> int:
    found = getattr(classifier, "classes_", None)
    classes = [] if found is None else [str(c.item() if hasattr(c, "item") else c) for c in found]
    if positive is None:
        if classes and sorted(classes) in (["0", "1"], ["False", "True"]):
            return classes.index("1" if "1" in classes else "True")
        raise MineError(
            Errors.E804_paraphrase_proba_classes.format(
                name=type(classifier).__name__, classes=classes
            )
        )
    if str(positive) not in classes:
        raise MineError(
            Errors.E804_class_among_classifier.format(positive=positive, classes=classes)
        )
    return classes.index(str(positive))


def tile_confidences(
    classifier: Any, pairs: PairSet, proba: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Negative and label-4 confidence per pair, the two scores of the tile rules (T16).

    The negative confidence is 1 − P(paraphrase) (the classifier's scheme reading); the label-4
    confidence sums the classes whose Turku base label is 4, or is P(paraphrase) for a binary
    classifier. ``proba`` may hold ``predict_proba`` output already computed (out-of-fold).
    """
    if proba is None:
        proba = np.asarray(classifier.predict_proba(pairs), dtype=np.float64)
    positive = np.asarray(classifier.positive_mask(), dtype=bool)
    classes = [str(c) for c in classifier.classes_]
    turku = get_scheme("turku")
    four = np.array([turku.is_valid(c) and turku.base_of(c) == "4" for c in classes], dtype=bool)
    if not four.any():
        four = positive
    return 1.0 - proba[:, positive].sum(axis=1), proba[:, four].sum(axis=1)


def as_pairset(
    texts1: Sequence[str], texts2: Sequence[str], ids: Sequence[str] | None = None
) -> PairSet:
    """Unlabelled candidate pairs for a classifier."""
    ids = ids or [str(i) for i in range(len(texts1))]
    return PairSet(
        [Pair(id=i, text1=a, text2=b) for i, a, b in zip(ids, texts1, texts2, strict=True)]
    )


def load_classifier(path: str | Path, **settings: Any) -> Any:
    """Load a saved pair classifier for re-ranking: any folder with ``parakit_model.json``
    (``parakit identify train``, ``parakit mine train-baseline``), by
    :meth:`parakit.models.base.PairClassifier.load`; ``settings`` are its run settings
    (``precision=``: a torch classifier's, ignored by the others)."""
    target = Path(path)
    if not target.exists():
        raise MineError(Errors.E804_such_classifier_folder.format(path=path))
    from parakit.models.base import PairClassifier

    return PairClassifier.load(target, **settings)
