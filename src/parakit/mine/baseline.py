"""A seconds-to-train pair classifier for tiles and re-ranking: logistic regression on
``[|u − v|, u ⊙ v]`` of sentence embeddings (the SBERT classification features).

It is a stand-in until a stronger identification model is at hand; any object with
``predict_proba(PairSet)`` can replace it. Classes are the label classes given at ``fit`` time;
with ``target="turku3"`` (the default for Turku-scheme data) they are ``neg`` (labels 1, 2),
``3`` and ``4``, so the classifier gives both the negative confidence and the label-4 confidence
the tile rules (T16) need; other schemes get their binary reading, classes ``0`` and ``1``.
:meth:`EmbeddingPairClassifier.paraphrase_proba` is the same scheme-aware P(paraphrase) as the
identification models'.

Example:
    >>> clf = EmbeddingPairClassifier(encoder).fit(train_pairs)  # doctest: +SKIP
    >>> clf.predict_proba(candidate_pairs)[:, list(clf.classes_).index("neg")]  # doctest: +SKIP
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import MineError
from parakit.labels import get_scheme
from parakit.schema import PairSet


def turku3(label: str | None) -> str | None:
    """Label 1/2 -> ``neg``, 3 -> ``3``, 4 (any flags) -> ``4``; x/None -> None."""
    if not label:
        return None
    base = get_scheme("turku").parse(label).base
    if base == "x":
        return None
    return "neg" if base in ("1", "2") else base


class EmbeddingPairClassifier:
    """Logistic regression over ``[|u−v|, u⊙v]`` of a sentence encoder's vectors.

    Args:
        encoder: object with ``encode(texts)``
            (e.g. :class:`parakit.vectors.encode.SentenceEncoder`).
        target: ``turku3`` (neg / 3 / 4 classes), ``binary`` (the scheme's binary reading:
            classes ``0`` and ``1``) or ``auto`` (``turku3`` for Turku-scheme sets, else
            ``binary``).
        C: inverse regularisation strength.
        max_iter: solver iterations.
        seed: random state.
    """

    def __init__(
        self,
        encoder: Any = None,
        target: str = "auto",
        C: float = 1.0,
        max_iter: int = 2000,
        seed: int = 0,
    ) -> None:
        self.encoder = encoder
        self.target = target
        self.C = C
        self.max_iter = max_iter
        self.seed = seed

    def _resolved_target(self, pairs: PairSet) -> str:
        if self.target == "auto":
            return "turku3" if pairs.scheme.name == "turku" else "binary"
        return self.target

    def _targets(self, pairs: PairSet) -> np.ndarray:
        target = self._resolved_target(pairs)
        if target == "turku3":
            return np.asarray([turku3(p.label) for p in pairs], dtype=object)
        if target == "binary":
            return np.asarray(
                [None if b is None else str(b) for b in pairs.binary_labels()], dtype=object
            )
        raise MineError(f"unknown target {self.target!r}; use auto, turku3 or binary", code="E804")

    def features(self, pairs: PairSet) -> np.ndarray:
        texts1, texts2 = pairs.texts()
        u = np.asarray(self.encoder.encode(texts1), dtype=np.float32)
        v = np.asarray(self.encoder.encode(texts2), dtype=np.float32)
        return np.hstack([np.abs(u - v), u * v])

    def fit(self, pairs: PairSet, features: np.ndarray | None = None) -> EmbeddingPairClassifier:
        from sklearn.linear_model import LogisticRegression

        y = self._targets(pairs)
        self.target_ = self._resolved_target(pairs)
        keep = np.asarray([t is not None for t in y])
        x = self.features(pairs) if features is None else features
        self.model_ = LogisticRegression(C=self.C, max_iter=self.max_iter, random_state=self.seed)
        self.model_.fit(x[keep], y[keep].astype(str))
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, pairs: PairSet, features: np.ndarray | None = None) -> np.ndarray:
        x = self.features(pairs) if features is None else features
        return self.model_.predict_proba(x)

    def predict(self, pairs: PairSet) -> np.ndarray:
        return self.classes_[self.predict_proba(pairs).argmax(axis=1)]

    def positive_mask(self, reading: str | None = None) -> np.ndarray:
        """Which classes are paraphrases: ``3`` and ``4`` (Turku loose reading; ``strict``: only
        ``4``) for the ``turku3`` target, ``1`` for ``binary``."""
        if getattr(self, "target_", self.target) == "turku3":
            positive = {"4"} if reading == "strict" else {"3", "4"}
        else:
            positive = {"1"}
        return np.array([str(c) in positive for c in self.classes_], dtype=bool)

    def paraphrase_proba(
        self, pairs: PairSet, reading: str | None = None, features: np.ndarray | None = None
    ) -> np.ndarray:
        """P(paraphrase): the summed probability of the positive classes (see
        :meth:`positive_mask`), as :meth:`parakit.models.base.PairClassifier.paraphrase_proba`."""
        proba = self.predict_proba(pairs, features=features)
        return proba[:, self.positive_mask(reading)].sum(axis=1)

    def signature(self) -> dict[str, Any]:
        """Settings, encoder and a hash of the fitted weights (for mining manifests)."""
        import hashlib

        weights = np.concatenate([self.model_.coef_.ravel(), self.model_.intercept_])
        encoder = self.encoder.signature() if hasattr(self.encoder, "signature") else {}
        return {
            "classifier": "EmbeddingPairClassifier",
            "target": self.target,
            "C": self.C,
            "encoder": encoder,
            "weights": hashlib.sha1(weights.astype(np.float64).tobytes()).hexdigest()[:12],
        }

    def save(self, path: str | Path) -> Path:
        """Folder with ``baseline.json`` (settings + encoder) and ``model.joblib``."""
        import joblib

        from parakit.io.atomic import atomic_write

        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        signature = self.encoder.signature() if hasattr(self.encoder, "signature") else {}
        with atomic_write(folder / "baseline.json") as handle:
            json.dump(
                {
                    "target": getattr(self, "target_", self.target),
                    "C": self.C,
                    "encoder": signature,
                    "classes": [str(c) for c in self.classes_],
                },
                handle,
                indent=2,
            )
        with atomic_write(folder / "model.joblib", "wb") as handle:
            joblib.dump(self.model_, handle)
        return folder

    @classmethod
    def load(cls, path: str | Path, encoder: Any = None) -> EmbeddingPairClassifier:
        """Load a saved classifier; the encoder is re-created from the saved signature unless
        given (sentence-transformers / ONNX models by their path)."""
        import joblib

        folder = Path(path)
        if not (folder / "baseline.json").exists():
            raise MineError(
                f"{folder}: not a saved EmbeddingPairClassifier (baseline.json missing)",
                code="E804",
            )
        meta = json.loads((folder / "baseline.json").read_text())
        if encoder is None:
            from parakit.vectors.encode import load_encoder

            sig = meta["encoder"]
            onnx = {"dynamic": "onnx-int8", "block": "onnx-int8-block"}.get(
                sig.get("quantization") or ("dynamic" if sig.get("quantize") else ""), "onnx"
            )
            backend = {"sentence-transformers": "torch", "onnxruntime": onnx}.get(
                sig.get("encoder")
            )
            if backend is None:
                raise MineError(f"{folder}: pass the encoder explicitly ({sig})", code="E804")
            encoder = load_encoder(sig["model"], backend)
        self = cls(encoder, target=meta["target"], C=meta["C"])
        self.target_ = meta["target"]
        self.model_ = joblib.load(folder / "model.joblib")
        self.classes_ = self.model_.classes_
        return self


def out_of_fold_proba(
    classifier: EmbeddingPairClassifier, pairs: PairSet, folds: int = 5, seed: int = 0
) -> np.ndarray:
    """Cross-validated ``predict_proba`` for every pair (each scored by a model that never saw
    it), so an annotated sample can be scored honestly by a classifier trained on itself.

    Features are computed once; columns follow ``classifier.classes_`` (set on return).
    """
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold

    x = classifier.features(pairs)
    y = classifier._targets(pairs)
    classifier.target_ = classifier._resolved_target(pairs)
    keep = np.flatnonzero([t is not None for t in y])
    labels = y[keep].astype(str)
    classifier.fit(pairs, features=x)  # full fit: sets classes_ (and a usable model)
    out = np.full((len(pairs), len(classifier.classes_)), np.nan)
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for train, test in splitter.split(keep, labels):
        model = clone(classifier.model_).fit(x[keep[train]], labels[train])
        proba = model.predict_proba(x[keep[test]])
        columns = [list(model.classes_).index(c) for c in classifier.classes_]
        out[keep[test]] = proba[:, columns]
    return out
