"""CPU-cheap reference classifiers (J7, Q7).

* :class:`WORClassifier` (``wor``), :class:`TfidfClassifier` (``tfidf``),
  :class:`BowCosineClassifier` (``bow-cosine``): one similarity score and a threshold chosen on
  the training data (binary labels only);
* :class:`MTFeatureClassifier` (``mt-features``): MT-metric features + random forest;
* the Q7 setup, ``[|u − v|, u·v]`` of two sentence vectors + logistic regression, with three
  kinds of vectors: binary bag-of-words (:class:`BowClassifier`, ``bow``), averaged word2vec
  vectors trained on the corpus (:class:`WordVectorClassifier`, ``word-vectors``) and any
  sentence encoder (:class:`EmbeddingClassifier`, ``embedding-lr``).

Saved models contain scikit-learn objects pickled with joblib: load only folders you trust.

Example:
    >>> from parakit.models.baselines import WORClassifier
    >>> model = WORClassifier().fit(["a b c", "a b", "x y"], ["a b c", "a c", "z w"], [1, 1, 0])
    >>> float(model.threshold_) > 0, model.predict(["p q"], ["r s"]).tolist()
    (True, [0])
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import Errors, ModelError, ParakitError
from parakit.labels import get_scheme
from parakit.models.base import PairClassifier, PairInput, as_pair_input
from parakit.models.features import (
    BinaryBow,
    BowCosine,
    WordVectors,
    embedding_pair_features,
    mt_features,
    sparse_pair_features,
    word_overlap_rates,
)
from parakit.schema import PairSet
from parakit.text import CharNgramSimilarity


def best_threshold(
    scores: np.ndarray, positive: np.ndarray, criterion: str = "accuracy"
) -> tuple[float, float]:
    """The threshold ``t`` (predict positive when ``score >= t``) that maximises ``criterion``
    (``accuracy`` or ``f1``) on the given data; candidates are midpoints between distinct scores.

    Returns:
        ``(threshold, best criterion value)``.

    Example:
        >>> best_threshold(np.array([0.1, 0.4, 0.6, 0.9]), np.array([0, 0, 1, 1]))
        (0.5, 1.0)
    """
    if criterion not in ("accuracy", "f1"):
        raise ModelError(Errors.E712_unknown_threshold_criterion.format(criterion=criterion))
    order = np.argsort(-scores, kind="stable")
    s = scores[order]
    y = positive[order].astype(np.int64)
    n, n_pos = len(y), int(y.sum())
    # cut k = number of top-scored pairs predicted positive; only cuts between distinct scores
    tp = np.concatenate([[0], np.cumsum(y)])
    k = np.arange(n + 1)
    fp = k - tp
    fn = n_pos - tp
    tn = (n - n_pos) - fp
    if criterion == "accuracy":
        value = (tp + tn) / n
    else:
        denom = 2 * tp + fp + fn
        value = np.divide(2 * tp, denom, out=np.zeros(len(k)), where=denom > 0)
    valid = np.ones(n + 1, dtype=bool)
    valid[1:n] = s[:-1] != s[1:]
    value = np.where(valid, value, -np.inf)
    best = int(np.argmax(value))
    if best == 0:
        threshold = float(s[0]) + 1e-9
    elif best == n:
        threshold = float(s[-1])
    else:
        threshold = float((s[best - 1] + s[best]) / 2)
    return threshold, float(value[best])


class _ThresholdClassifier(PairClassifier):
    """A similarity score with a learned threshold; probabilities by a logistic fit on
    ``score − threshold`` (no intercept), so ``predict`` and ``P >= 0.5`` agree."""

    binary_only = True

    def _scores(self, data: PairInput) -> np.ndarray:
        raise NotImplementedError

    def _fit_scorer(self, data: PairInput) -> None:
        """Fit what the score needs (vectorisers)."""

    def _fit(self, data: PairInput, dev: PairInput | None) -> None:
        from sklearn.linear_model import LogisticRegression

        self._fit_scorer(data)
        mask = self.positive_mask()
        self.positive_label_ = str(self.classes_[mask][0] if mask.sum() == 1 else self.classes_[-1])
        self.negative_label_ = str(next(c for c in self.classes_ if c != self.positive_label_))
        scores = self._scores(data)
        positive = np.array([label == self.positive_label_ for label in data.labels or []])
        self.threshold_, self.train_score_ = best_threshold(scores, positive, self.criterion)
        shifted = (scores - self.threshold_).reshape(-1, 1)
        logistic = LogisticRegression(C=100.0, fit_intercept=False).fit(shifted, positive)
        self.slope_ = max(float(logistic.coef_[0, 0]), 1e-3)

    def _predict_proba(self, data: PairInput) -> np.ndarray:
        scores = self._scores(data)
        p = 1.0 / (1.0 + np.exp(-self.slope_ * (scores - self.threshold_)))
        # exactly at the threshold the pair is positive, as in _labels_of
        p = np.where(scores >= self.threshold_, np.maximum(p, 0.5), np.minimum(p, 0.5 - 1e-12))
        out = np.empty((len(scores), 2))
        pos = int(np.flatnonzero(self.classes_ == self.positive_label_)[0])
        out[:, pos] = p
        out[:, 1 - pos] = 1 - p
        return out

    def _labels_of(self, proba: np.ndarray) -> np.ndarray:
        # P >= 0.5 exactly where score >= threshold (_predict_proba keeps that tie at 0.5)
        pos = int(np.flatnonzero(self.classes_ == self.positive_label_)[0])
        positive = proba[:, pos] >= 0.5
        return np.where(positive, self.positive_label_, self.negative_label_).astype(object)

    def decision_function(self, X: Any, texts2: Any = None) -> np.ndarray:
        """The raw similarity scores the threshold applies to."""
        from parakit.models.base import as_pair_input

        self._check_fitted()
        return self._scores(as_pair_input(X, texts2))

    def _save_state(self, folder: Path) -> dict[str, Any]:
        state = {
            "threshold": self.threshold_,
            "slope": self.slope_,
            "train_score": self.train_score_,
            "positive_label": self.positive_label_,
            "negative_label": self.negative_label_,
        }
        if hasattr(self, "scorer_"):
            import joblib

            joblib.dump(self.scorer_, folder / "scorer.joblib")
        return state

    def _load_state(self, folder: Path, state: dict[str, Any]) -> None:
        self.threshold_ = float(state["threshold"])
        self.slope_ = float(state["slope"])
        self.train_score_ = float(state["train_score"])
        self.positive_label_ = state["positive_label"]
        self.negative_label_ = state["negative_label"]
        if (folder / "scorer.joblib").exists():
            import joblib

            self.scorer_ = joblib.load(folder / "scorer.joblib")


class WORClassifier(_ThresholdClassifier):
    """Word-overlap-rate threshold classifier (J7: the unsupervised PI baseline).

    Args:
        criterion: what the threshold maximises on the training data, ``accuracy`` or ``f1``.
        lang: language of the texts (``ja`` tokenises with fugashi).
    """

    model_type = "wor"

    def __init__(self, criterion: str = "accuracy", lang: str | None = None) -> None:
        self.criterion = criterion
        self.lang = lang

    def _scores(self, data: PairInput) -> np.ndarray:
        return word_overlap_rates(data.texts1, data.texts2, lang=self.lang)


class TfidfClassifier(_ThresholdClassifier):
    """Character n-gram TF-IDF cosine threshold classifier (vectoriser fitted on training texts).

    Args:
        ngram_range: character n-gram lengths.
        analyzer: ``char_wb`` or ``char``.
        use_idf: ``False`` gives plain TF (the Turku lexical similarity).
        criterion: ``accuracy`` or ``f1``.
    """

    model_type = "tfidf"

    def __init__(
        self,
        ngram_range: tuple[int, int] = (2, 4),
        analyzer: str = "char_wb",
        use_idf: bool = True,
        criterion: str = "accuracy",
    ) -> None:
        self.ngram_range = ngram_range
        self.analyzer = analyzer
        self.use_idf = use_idf
        self.criterion = criterion

    def _fit_scorer(self, data: PairInput) -> None:
        self.scorer_ = CharNgramSimilarity(
            ngram_range=tuple(self.ngram_range),
            analyzer=self.analyzer,
            use_idf=self.use_idf,
        ).fit(data.texts1 + data.texts2)

    def _scores(self, data: PairInput) -> np.ndarray:
        return self.scorer_.score(data.texts1, data.texts2)


class BowCosineClassifier(_ThresholdClassifier):
    """Binary bag-of-words cosine threshold classifier (one score; see :class:`BowClassifier`
    for the Q7 feature setup).

    Args:
        criterion: ``accuracy`` or ``f1``.
        lang: language of the texts (tokenisation).
    """

    model_type = "bow-cosine"

    def __init__(self, criterion: str = "accuracy", lang: str | None = None) -> None:
        self.criterion = criterion
        self.lang = lang

    def _fit_scorer(self, data: PairInput) -> None:
        self.scorer_ = BowCosine(self.lang).fit(data.texts1 + data.texts2)

    def _scores(self, data: PairInput) -> np.ndarray:
        return self.scorer_.score(data.texts1, data.texts2)


class MTFeatureClassifier(PairClassifier):
    """Machine-translation-metric features + random forest (Q7), any number of classes.

    Args:
        n_estimators: trees in the forest.
        max_depth: tree depth limit (None = grow fully).
        min_samples_leaf: minimum pairs per leaf (raise it to smooth probabilities).
        n_jobs: parallel jobs for the forest.
        seed: seed of the random steps.
        lang: language of the texts (tokenisation of the overlap/edit features).
    """

    model_type = "mt-features"

    def __init__(
        self,
        n_estimators: int = 300,
        max_depth: int | None = None,
        min_samples_leaf: int = 1,
        n_jobs: int = 1,
        seed: int = 0,
        lang: str | None = None,
    ) -> None:
        self.lang = lang
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.n_jobs = n_jobs
        self.seed = seed

    def _fit(self, data: PairInput, dev: PairInput | None) -> None:
        from sklearn.ensemble import RandomForestClassifier

        features, self.feature_names_ = mt_features(data.texts1, data.texts2, self.lang)
        self.forest_ = RandomForestClassifier(
            n_estimators=self.n_estimators,
            max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf,
            n_jobs=self.n_jobs,
            random_state=self.seed,
        ).fit(features, self._label_index(data.labels or []))

    def _predict_proba(self, data: PairInput) -> np.ndarray:
        features, _ = mt_features(data.texts1, data.texts2, self.lang)
        proba = np.zeros((len(data), len(self.classes_)))
        proba[:, self.forest_.classes_] = self.forest_.predict_proba(features)
        return proba

    def feature_importances(self) -> dict[str, float]:
        """Random-forest feature importances by feature name."""
        self._check_fitted()
        return dict(
            zip(self.feature_names_, self.forest_.feature_importances_.tolist(), strict=True)
        )

    def _save_state(self, folder: Path) -> dict[str, Any]:
        import joblib

        joblib.dump(self.forest_, folder / "forest.joblib")
        return {"feature_names": self.feature_names_}

    def _load_state(self, folder: Path, state: dict[str, Any]) -> None:
        import joblib

        self.forest_ = joblib.load(folder / "forest.joblib")
        self.feature_names_ = list(state["feature_names"])


class _PairFeatureLR(PairClassifier):
    """``[|u − v|, u·v]`` of two sentence vectors + logistic regression (the Q7 setup).

    Subclasses give the vectors: :meth:`_fit_vectors` (learn what they need from the training
    texts) and :meth:`_pair_features`. Any number of classes.
    """

    def _fit_vectors(self, data: PairInput) -> None:
        """Learn the sentence vectors' own parameters (vocabulary, word vectors)."""

    def _pair_features(self, data: PairInput) -> Any:
        raise NotImplementedError

    def _fit(self, data: PairInput, dev: PairInput | None) -> None:
        from sklearn.linear_model import LogisticRegression

        self._fit_vectors(data)
        self.logistic_ = LogisticRegression(
            C=self.C, max_iter=self.max_iter, random_state=self.seed
        )
        self.logistic_.fit(self._pair_features(data), self._label_index(data.labels or []))

    def _predict_proba(self, data: PairInput) -> np.ndarray:
        proba = np.zeros((len(data), len(self.classes_)))
        proba[:, self.logistic_.classes_] = self.logistic_.predict_proba(self._pair_features(data))
        return proba

    def signature(self) -> dict[str, Any]:
        """Type, hyperparameters and a hash of the fitted weights: a mining job's re-rank
        checkpoints are reused only with the same fitted model (``mine()``'s ``job.json``)."""
        import hashlib

        self._check_fitted()
        weights = np.concatenate([self.logistic_.coef_.ravel(), self.logistic_.intercept_])
        digest = hashlib.sha1(weights.astype(np.float64).tobytes()).hexdigest()[:12]
        params = {k: str(v) for k, v in self.get_params(deep=False).items()}
        return {"model_type": self.model_type, "params": params, "weights": digest}

    def _save_state(self, folder: Path) -> dict[str, Any]:
        import joblib

        joblib.dump(self.logistic_, folder / "logistic.joblib")
        if hasattr(self, "vectors_"):
            joblib.dump(self.vectors_, folder / "vectors.joblib")
        return {}

    def _load_state(self, folder: Path, state: dict[str, Any]) -> None:
        import joblib

        self.logistic_ = joblib.load(folder / "logistic.joblib")
        if (folder / "vectors.joblib").exists():
            self.vectors_ = joblib.load(folder / "vectors.joblib")


class BowClassifier(_PairFeatureLR):
    """Binary bag-of-words vectors in the Q7 setup: ``[|u − v|, u·v]`` + logistic regression.

    The vocabulary comes from the training texts; ``|u − v|`` marks the words of one sentence
    only, ``u·v`` the shared words, so the model learns which words matter when they differ.

    Args:
        C: inverse regularisation strength of the logistic regression.
        max_iter: solver iterations.
        min_df: minimum number of training texts a word must occur in.
        lang: language of the texts (tokenisation).
        seed: seed of the random steps.
    """

    model_type = "bow"

    def __init__(
        self,
        C: float = 1.0,
        max_iter: int = 2000,
        min_df: int = 1,
        lang: str | None = None,
        seed: int = 0,
    ) -> None:
        self.C = C
        self.max_iter = max_iter
        self.min_df = min_df
        self.lang = lang
        self.seed = seed

    def _fit_vectors(self, data: PairInput) -> None:
        self.vectors_ = BinaryBow(self.lang, self.min_df).fit(data.texts1 + data.texts2)

    def _pair_features(self, data: PairInput) -> Any:
        return sparse_pair_features(
            self.vectors_.transform(data.texts1), self.vectors_.transform(data.texts2)
        )


class WordVectorClassifier(_PairFeatureLR):
    """Averaged word vectors in the Q7 setup: ``[|u − v|, u·v]`` + logistic regression.

    The word vectors are pretrained ones read from a file (``vectors``: word2vec or GloVe,
    text or binary, as in the paper), or else word2vec (gensim) trained on the training texts
    plus, optionally, unlabelled sentences of the same domain (``corpus``).

    Args:
        vectors: pretrained word vectors file (:func:`~parakit.models.features.load_word_vectors`
            formats); the saved model keeps its own copy of them.
        vectors_limit: read only the first n vectors of ``vectors``.
        corpus: a text file with one sentence per line added to the word2vec training data
            (e.g. the unlabelled sentences of the corpus); None: the training pairs only.
        vector_size: dimensions of the word vectors.
        window: word2vec context window.
        min_count: words rarer than this get no vector.
        epochs: word2vec passes.
        sg: 1 skip-gram, 0 CBOW.
        C: inverse regularisation strength of the logistic regression.
        max_iter: solver iterations.
        lang: language of the texts (tokenisation).
        seed: seed of word2vec and the logistic regression.
    """

    model_type = "word-vectors"

    def __init__(
        self,
        vectors: str | None = None,
        vectors_limit: int | None = None,
        corpus: str | None = None,
        vector_size: int = 100,
        window: int = 5,
        min_count: int = 1,
        epochs: int = 10,
        sg: int = 1,
        C: float = 1.0,
        max_iter: int = 2000,
        lang: str | None = None,
        seed: int = 0,
    ) -> None:
        self.vectors = vectors
        self.vectors_limit = vectors_limit
        self.corpus = corpus
        self.vector_size = vector_size
        self.window = window
        self.min_count = min_count
        self.epochs = epochs
        self.sg = sg
        self.C = C
        self.max_iter = max_iter
        self.lang = lang
        self.seed = seed

    def _fit_vectors(self, data: PairInput) -> None:
        if self.vectors is not None:
            if self.corpus:
                raise ModelError(Errors.E712_give_pretrained_vectors)
            self.vectors_ = WordVectors(
                pretrained=self.vectors, limit=self.vectors_limit, lang=self.lang
            ).fit([])
            return
        texts = data.texts1 + data.texts2
        if self.corpus:
            from parakit.build.documents import read_text_file

            extra = read_text_file(self.corpus).splitlines()
            texts += [line for line in extra if line.strip()]
        self.vectors_ = WordVectors(
            vector_size=self.vector_size,
            window=self.window,
            min_count=self.min_count,
            epochs=self.epochs,
            sg=self.sg,
            seed=self.seed,
            lang=self.lang,
        ).fit(texts)

    def _pair_features(self, data: PairInput) -> Any:
        return embedding_pair_features(
            self.vectors_.encode(data.texts1), self.vectors_.encode(data.texts2)
        )


class EmbeddingClassifier(_PairFeatureLR):
    """Sentence-embedding features ``[|u − v|, u·v]`` + logistic regression (Q7), also the
    seconds-to-train classifier of mining and tiles (``parakit mine train-baseline``).

    Args:
        model_name_or_path: the sentence encoder: a sentence-transformers model id, local
            path or offline alias (``offline-minilm``, ``offline-mpnet``; the model itself is
            not copied into saved folders; the same id/path must be loadable where the model is
            loaded), or, unsaved, any object with ``encode(texts) -> array``. Its earlier name
            ``encoder`` (``-p encoder=...``) is still read, with a warning, and in saved
            folders (:data:`parakit.models.base.RENAMED`).
        target: ``labels`` (the labels as given) or ``turku3``: Turku labels as the classes the
            tile rules (T16) need, ``neg`` (1, 2), ``3`` and ``4`` (any flags); ``x`` and
            unlabelled pairs are left out of training.
        backend: ``torch`` or ``onnx``
            (:func:`parakit.vectors.encode.load_encoder`).
        C: inverse regularisation strength of the logistic regression.
        max_iter: solver iterations.
        batch_size: encoding batch size (lower to save memory).
        device: torch device for encoding (``cpu``, ``cuda``; None = automatic).
        seed: seed of the random steps.
    """

    model_type = "embedding-lr"

    def __init__(
        self,
        model_name_or_path: Any = None,
        target: str = "labels",
        backend: str = "torch",
        C: float = 1.0,
        max_iter: int = 2000,
        batch_size: int = 64,
        device: str | None = None,
        seed: int = 0,
    ) -> None:
        self.model_name_or_path = model_name_or_path
        self.target = target
        self.backend = backend
        self.C = C
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.device = device
        self.seed = seed

    def fit(
        self,
        X: PairSet | Any,
        texts2: Any = None,
        y: Any = None,
        *,
        eval_set: Any = None,
    ) -> EmbeddingClassifier:
        """Train (see :meth:`PairClassifier.fit`); with ``target="turku3"`` on the three
        classes, the model's scheme staying Turku (P(paraphrase) = P(3) + P(4), strict P(4))."""
        if self.target == "labels":
            return super().fit(X, texts2, y, eval_set=eval_set)  # type: ignore[return-value]
        if self.target != "turku3":
            raise ModelError(Errors.E712_unknown_target_use.format(target=self.target))
        texts1, texts2, classes = self._turku3(X, texts2, y)
        super().fit(texts1, texts2, classes)  # eval_set: a baseline does no model selection
        self.scheme_ = get_scheme("turku").spec()
        return self

    @staticmethod
    def _turku3(X: Any, texts2: Any, y: Any) -> tuple[list[str], list[str], list[str]]:
        """The pairs with a label 1-4 and their ``neg``/``3``/``4`` class."""
        if isinstance(X, PairSet):
            X = X.filter(lambda pair: pair.label is not None)
        data = as_pair_input(X, texts2, y, require_labels=True)
        turku = get_scheme("turku")
        bases = [turku.base_of(label) for label in data.labels or []]
        keep = [i for i, base in enumerate(bases) if base is not None]
        classes = ["neg" if bases[i] in ("1", "2") else str(bases[i]) for i in keep]
        return [data.texts1[i] for i in keep], [data.texts2[i] for i in keep], classes

    def _load_encoder(self) -> Any:
        cached = getattr(self, "_encoder_model", None)
        if cached is not None:
            return cached
        if not self.model_name_or_path:
            raise ModelError(Errors.E712_embeddingclassifier_needs_model)
        if not isinstance(self.model_name_or_path, str | Path):
            return self.model_name_or_path  # an encoder object (in memory only: it cannot be saved)
        from parakit.vectors.encode import load_encoder

        options: dict[str, Any] = {"batch_size": self.batch_size, "normalize": False}
        if self.backend == "torch":
            options["device"] = self.device
        try:
            self._encoder_model = load_encoder(self.model_name_or_path, self.backend, **options)
        except ParakitError as err:
            raise ModelError(err.message, code="E713") from None
        return self._encoder_model

    def _pair_features(self, data: PairInput) -> np.ndarray:
        encoder = self._load_encoder()
        texts = data.texts1 + data.texts2
        unique = list(dict.fromkeys(texts))  # each distinct text encoded once
        try:
            vectors = np.asarray(encoder.encode(unique), dtype=np.float32)
        except ParakitError as err:  # the model is loaded on first use
            raise ModelError(err.message, code="E713") from None
        index = {text: i for i, text in enumerate(unique)}
        vectors = vectors[[index[t] for t in texts]]
        n = len(data)
        return embedding_pair_features(vectors[:n], vectors[n:])


def out_of_fold_proba(model: _PairFeatureLR, pairs: PairSet, folds: int = 5, seed: int = 0) -> Any:
    """Cross-validated ``predict_proba`` of ``pairs`` (each scored by a model that never saw
    it), so an annotated sample is scored honestly by a classifier trained on itself.

    ``model`` is fitted on all pairs on return (its ``classes_`` name the columns); the folds
    refit only its logistic regression on features computed once. Rows of pairs the model does
    not train on (unlabelled; Turku ``x`` with ``target="turku3"``) are NaN.
    """
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold

    model.fit(pairs)
    turku3 = getattr(model, "target", "labels") == "turku3"
    rows = [
        i
        for i, pair in enumerate(pairs)
        if pair.label is not None and (not turku3 or get_scheme("turku").base_of(pair.label))
    ]
    kept = [pairs[i] for i in rows]
    labels = EmbeddingClassifier._turku3(kept, None, None)[2] if turku3 else [p.label for p in kept]
    x = model._pair_features(as_pair_input(kept))
    y = model._label_index(labels)
    out = np.full((len(pairs), len(model.classes_)), np.nan)
    out[rows] = 0.0  # a class missing from a fold's training part gets probability 0
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for train, test in splitter.split(x, y):
        logistic = clone(model.logistic_).fit(x[train], y[train])
        out[np.asarray(rows)[test][:, None], logistic.classes_] = logistic.predict_proba(x[test])
    return out
