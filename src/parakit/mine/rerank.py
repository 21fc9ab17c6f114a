"""Re-ranking candidate pairs with any pair classifier (the second stage of two-stage mining).

A pair classifier is anything with ``predict_proba(pairs: PairSet) -> array (n, n_classes)``
(the scikit-learn convention; parakit's identification models follow it) and, optionally,
``classes_`` naming the columns. :func:`positive_proba` finds the paraphrase column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from parakit.errors import MineError
from parakit.schema import Pair, PairSet

#: class names taken to mean "paraphrase" when a classifier exposes ``classes_``
POSITIVE_NAMES = (1, "1", True, "paraphrase", "positive", "pos", "4")


@runtime_checkable
class PairClassifier(Protocol):
    """The one method mining needs from a classifier."""

    def predict_proba(self, pairs: PairSet) -> Any: ...


def positive_column(classifier: Any, n_columns: int, positive: Any = None) -> int:
    """Index of the paraphrase column of ``predict_proba`` output.

    ``positive`` names the class explicitly; otherwise the first of :data:`POSITIVE_NAMES` found
    in ``classifier.classes_``, otherwise the last column (binary classifiers).
    """
    found = getattr(classifier, "classes_", None)
    classes = [] if found is None else [c.item() if hasattr(c, "item") else c for c in found]
    if positive is not None:
        if positive in classes:
            return classes.index(positive)
        if str(positive) in [str(c) for c in classes]:
            return [str(c) for c in classes].index(str(positive))
        raise MineError(
            f"class {positive!r} not among the classifier's classes {classes}", code="E804"
        )
    for name in POSITIVE_NAMES:
        if name in classes:
            return classes.index(name)
    return n_columns - 1


def positive_proba(classifier: Any, pairs: PairSet, positive: Any = None) -> np.ndarray:
    """P(paraphrase) for every pair of ``pairs`` from ``classifier.predict_proba``."""
    if not callable(getattr(classifier, "predict_proba", None)):
        raise MineError(
            f"{type(classifier).__name__} has no predict_proba(pairs); wrap it or "
            "use a parakit identification model",
            code="E804",
        )
    proba = np.asarray(classifier.predict_proba(pairs), dtype=np.float64)
    if proba.ndim == 1:
        return proba
    if proba.ndim != 2 or proba.shape[0] != len(pairs):
        raise MineError(
            f"predict_proba returned shape {proba.shape} for {len(pairs)} pairs", code="E804"
        )
    return proba[:, positive_column(classifier, proba.shape[1], positive)]


def as_pairset(
    texts1: Sequence[str], texts2: Sequence[str], ids: Sequence[str] | None = None
) -> PairSet:
    """Unlabelled candidate pairs for a classifier."""
    ids = ids or [str(i) for i in range(len(texts1))]
    return PairSet(
        [Pair(id=i, text1=a, text2=b) for i, a, b in zip(ids, texts1, texts2, strict=True)]
    )


def load_classifier(path: str) -> Any:
    """Load a saved pair classifier: a parakit identification model folder or a joblib file.

    Tries ``parakit.models.identify.load`` (the identification package's loader) when it exists,
    then ``parakit.mine.baseline.EmbeddingPairClassifier.load`` / joblib.
    """
    from pathlib import Path

    target = Path(path)
    if not target.exists():
        raise MineError(f"{path}: no such classifier file or folder", code="E804")
    try:
        import importlib

        identify = importlib.import_module("parakit.models.identify")
        loader = getattr(identify, "load", None)
        if loader is not None and target.is_dir() and not (target / "baseline.json").exists():
            return loader(path)
    except ImportError:
        pass
    from parakit.mine.baseline import EmbeddingPairClassifier

    return EmbeddingPairClassifier.load(path)
