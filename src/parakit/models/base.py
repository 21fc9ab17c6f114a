"""The common API of parakit's paraphrase classifiers, their registry, and model folders.

Every classifier follows the scikit-learn estimator contract: hyperparameters are explicit
``__init__`` keywords stored unchanged, ``fit`` returns ``self``, learned attributes end in ``_``
(``classes_``, ``scheme_``...), and :func:`sklearn.base.clone` works. Inputs are either a
:class:`~parakit.schema.PairSet` (labels read from its pairs) or two text columns plus labels::

    model.fit(pairs)                       # PairSet with labels
    model.fit(texts1, texts2, y)           # two lists of str and a list of labels
    model.predict(pairs) / model.predict(texts1, texts2)
    model.predict_proba(...)               # (n, len(classes_)) array, rows sum to 1
    model.paraphrase_proba(...)            # P(paraphrase) for re-ranking and thresholds
    model.score(pairs)                     # accuracy, like scikit-learn classifiers
    model.save(folder); PairClassifier.load(folder)

Labels are handled as strings (``"0"``/``"1"``, Turku ``"4<i"``...); integer labels given to
``fit`` come back as integers from ``predict``.

Example:
    >>> from parakit.models.base import make_model
    >>> model = make_model("wor")
    >>> model.fit(["a cat sat", "dogs bark"], ["the cat sat", "it rains"], [1, 0]).predict(
    ...     ["a dog sat"], ["the dog sat"]).tolist()
    [1]
"""

from __future__ import annotations

import functools
import inspect
import json
import platform
import types
import typing
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from parakit.errors import Errors, ModelError, ParakitError, ParakitFutureWarning
from parakit.labels import LabelScheme, get_scheme, scheme_from_spec
from parakit.registry import Registry
from parakit.schema import Pair, PairSet

#: the file that marks a folder as a saved parakit model
MODEL_FILE = "parakit_model.json"
FORMAT_VERSION = 1
T = TypeVar("T")


# -- inputs -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairInput:
    """Validated classifier input: two text columns, optional labels, pair ids for messages."""

    texts1: list[str]
    texts2: list[str]
    labels: list[str] | None
    ids: list[str]
    scheme: LabelScheme | None = None
    label_type: str = "str"

    def __len__(self) -> int:
        return len(self.texts1)


def as_pair_input(
    X: PairSet | Sequence[Pair] | Sequence[str],
    texts2: Sequence[str] | None = None,
    y: Sequence[Any] | None = None,
    *,
    require_labels: bool = False,
) -> PairInput:
    """Normalise the accepted input forms into a :class:`PairInput`, validating it.

    Args:
        X: a :class:`PairSet`, a sequence of :class:`Pair`, or the first text column.
        texts2: the second text column when ``X`` is a text column.
        y: labels (str or int) when ``X`` is a text column; with a PairSet its labels are used.
        require_labels: raise if any pair has no label (training).

    Returns:
        the validated input.

    Raises:
        ModelError: empty text (E701, names the pair), missing label (E702), lengths that
            differ (E706).
    """
    scheme: LabelScheme | None = None
    label_type = "str"
    if isinstance(X, PairSet) or (len(X) > 0 and isinstance(X[0], Pair)):
        if texts2 is not None:
            raise ModelError(Errors.E706_pass_either_pairset)
        pairs = list(X)
        scheme = X.scheme if isinstance(X, PairSet) else None
        t1 = [p.text1 for p in pairs]
        t2 = [p.text2 for p in pairs]
        ids = [p.id for p in pairs]
        raw = list(y) if y is not None else [p.label for p in pairs]
        labels_given = any(label is not None for label in raw)
    else:
        if texts2 is None:
            raise ModelError(Errors.E706_second_text_column)
        t1, t2 = list(X), list(texts2)
        if len(t1) != len(t2):
            raise ModelError(Errors.E706_texts_items_but.format(n_t1=len(t1), n_t2=len(t2)))
        ids = [str(i) for i in range(len(t1))]
        raw = list(y) if y is not None else [None] * len(t1)
        labels_given = y is not None
        if y is not None and len(raw) != len(t1):
            raise ModelError(Errors.E706_text_pairs_but.format(n_t1=len(t1), n_raw=len(raw)))
    for index, (a, b, pid) in enumerate(zip(t1, t2, ids, strict=True)):
        for side, text in ((1, a), (2, b)):
            if not isinstance(text, str) or not text.strip():
                raise ModelError(
                    Errors.E701_pair_record_text.format(pid=pid, index_1=index + 1, side=side)
                )
    labels: list[str] | None = None
    if labels_given:
        labels = []
        ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in raw)
        label_type = "int" if ints else "str"
        for index, (value, pid) in enumerate(zip(raw, ids, strict=True)):
            if value is None:
                raise ModelError(Errors.E702_pair_record_label.format(pid=pid, index_1=index + 1))
            labels.append(str(int(value)) if isinstance(value, (bool, np.integer)) else str(value))
    elif require_labels:
        raise ModelError(Errors.E702_training_needs_labelled)
    return PairInput(t1, t2, labels, ids, scheme, label_type)


# -- the estimator base -----------------------------------------------------------------------


class Estimator(BaseEstimator):
    """scikit-learn's parameter contract (``get_params``/``set_params``/``clone`` from the
    ``__init__`` keywords) with parakit's error: an unknown parameter is a
    :class:`~parakit.errors.ModelError` (E712, a ``ValueError`` as scikit-learn raises) that
    lists the valid ones. The base of every classifier, generator and bi-encoder."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _take_earlier_names(cls)

    def set_params(self, **params: Any) -> Any:
        return super().set_params(**check_params(type(self), params))


def _take_earlier_names(cls: type) -> None:
    """Let the ``__init__`` of ``cls`` (if it has its own) take the earlier names
    (:data:`RENAMED`) of its parameters."""
    init = cls.__dict__.get("__init__")
    if init is None:
        return
    names = set(inspect.signature(init).parameters)
    earlier = {old for old, new in RENAMED.items() if new in names and old not in names}
    if not earlier:
        return

    # an earlier name given to the constructor (``EmbeddingClassifier(encoder=...)``) is
    # read as check_params reads it elsewhere; ``wraps`` keeps the signature that
    # get_params and clone read
    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **params: Any) -> None:
        if earlier & params.keys():
            params = check_params(type(self), params)
        init(self, *args, **params)

    cls.__init__ = __init__  # type: ignore[method-assign]


def hyperparameters(cls: type[T]) -> type[T]:
    """An estimator class whose ``__init__`` takes its annotated fields, in order, and stores
    each unchanged as the attribute of the same name (the scikit-learn contract), written by
    :func:`dataclasses.dataclass` (scikit-learn's ``repr`` and identity equality kept); an
    earlier name of a parameter is taken as :data:`RENAMED` says."""
    cls = dataclass(eq=False, repr=False)(cls)
    _take_earlier_names(cls)
    return cls


def check_params(klass: type, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` as ``klass`` takes them: an earlier name (:data:`RENAMED`) of one of its
    parameters is read as the parameter, with a :class:`~parakit.errors.ParakitFutureWarning`
    naming the new spelling (``encoder=`` of ``embedding-lr`` is ``model_name_or_path=``);
    keywords that are not parameters of ``klass`` are refused (E712, naming the valid ones),
    and so is a parameter given under both names.
    """
    valid = set(klass._get_param_names())  # type: ignore[attr-defined]
    params = dict(params)
    for old in [k for k in params if k not in valid and RENAMED.get(k) in valid]:
        new = RENAMED[old]
        if new in params:
            raise ModelError(
                Errors.E712_same_hyperparameter_earlier.format(
                    old=old, new=new, klass_name=klass.__name__
                )
            )
        warnings.warn(
            f"{klass.__name__}: the hyperparameter {old}= is now called {new}= "
            f"(-p {new}=... on the command line); {old}= will stop working in a future version",
            ParakitFutureWarning,
            stacklevel=3,
        )
        params = {new if k == old else k: v for k, v in params.items()}
    unknown = sorted(set(params) - valid)
    if unknown:
        raise ModelError(
            Errors.E712_unknown_hyperparameter_valid.format(
                unknown=unknown, klass_name=klass.__name__, valid=sorted(valid)
            )
        )
    return params


class PairClassifier(ClassifierMixin, Estimator, ABC):
    """Base class of every parakit paraphrase classifier (see the module docstring).

    Subclasses implement :meth:`_fit`, :meth:`_predict_proba` and, to be saved,
    :meth:`_save_state` / :meth:`_load_state`. They may override :meth:`_labels_of` (when
    decoding is not the arg-max of the probabilities) and set :attr:`binary_only`.
    """

    #: registry name, set by :func:`register`
    model_type: ClassVar[str] = ""
    #: whether the model needs exactly two classes
    binary_only: ClassVar[bool] = False

    # -- public API ----------------------------------------------------------------------------
    def fit(
        self,
        X: PairSet | Sequence[Pair] | Sequence[str],
        texts2: Sequence[str] | None = None,
        y: Sequence[Any] | None = None,
        *,
        eval_set: PairSet | tuple[Sequence[str], Sequence[str], Sequence[Any]] | None = None,
        callbacks: Sequence[Any] = (),
    ) -> PairClassifier:
        """Train on labelled pairs.

        Args:
            X: a labelled PairSet, or the first text column.
            texts2: the second text column (with ``X`` as texts).
            y: labels (with ``X`` as texts).
            eval_set: development data for model selection (neural models use it; baselines
                ignore it): a PairSet or ``(texts1, texts2, labels)``.
            callbacks: ``transformers.TrainerCallback`` objects for the transformer models'
                training (e.g. to record each evaluation as it happens); others ignore them.

        Returns:
            self.
        """
        data = as_pair_input(X, texts2, y, require_labels=True)
        assert data.labels is not None
        classes = sorted(set(data.labels), key=_label_sort_key)
        if len(classes) < 2:
            raise ModelError(Errors.E703_training_data_single.format(classes=classes))
        if self.binary_only and len(classes) != 2:
            raise ModelError(
                Errors.E703_model_binary_classifier.format(
                    model_type=self.model_type, classes=classes
                )
            )
        self.classes_ = np.array(classes, dtype=object)
        self.label_type_ = data.label_type
        self.scheme_ = data.scheme.spec() if data.scheme is not None else _guess_scheme(classes)
        dev = self._dev_input(eval_set, classes)
        self._fit_callbacks = tuple(callbacks)  # not a parameter: lives for this call only
        try:
            self._fit(data, dev)
        finally:
            del self._fit_callbacks
        return self

    def predict_proba(
        self, X: PairSet | Sequence[Pair] | Sequence[str], texts2: Sequence[str] | None = None
    ) -> np.ndarray:
        """Class probabilities, shape ``(n_pairs, len(classes_))``, in ``classes_`` order."""
        self._check_fitted()
        return self._predict_proba(as_pair_input(X, texts2))

    def predict(
        self, X: PairSet | Sequence[Pair] | Sequence[str], texts2: Sequence[str] | None = None
    ) -> np.ndarray:
        """Predicted labels (strings, or ints when ``fit`` got int labels)."""
        self._check_fitted()
        labels = self._predict(as_pair_input(X, texts2))
        return self._decode(labels)

    def predict_with_proba(
        self, X: PairSet | Sequence[Pair] | Sequence[str], texts2: Sequence[str] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(predict(X), predict_proba(X))`` from one pass of the model: a transformer runs
        once over the pairs, not twice (``identify predict``/``evaluate``)."""
        self._check_fitted()
        proba = self._predict_proba(as_pair_input(X, texts2))
        return self._decode(self._labels_of(proba)), proba

    def label_pairs(self, pairs: PairSet, reading: str | None = None) -> PairSet:
        """``pairs`` labelled by the model (``identify predict``): each pair's label is the
        prediction, its gold label (if any) moves to ``metadata["gold_label"]``, and
        ``metadata["prediction"]`` holds ``proba`` (class -> probability) and ``p_paraphrase``
        (under ``reading``), rounded to 6 decimals; the set takes the model's scheme."""
        labels, proba = self.predict_with_proba(pairs)
        p_paraphrase = self.paraphrase_of(proba, reading)
        out = []
        for pair, label, row, p in zip(pairs, labels, proba, p_paraphrase, strict=True):
            metadata = dict(pair.metadata)
            if pair.label is not None:
                metadata["gold_label"] = pair.label
            metadata["prediction"] = {
                "proba": {
                    str(c): round(float(v), 6) for c, v in zip(self.classes_, row, strict=True)
                },
                "p_paraphrase": round(float(p), 6),
            }
            out.append(pair.replace(label=str(label), metadata=metadata))
        return PairSet(
            out,
            scheme=scheme_from_spec(self.scheme_),
            name=pairs.name,
            lang=pairs.lang,
            documents=pairs.documents,
        )

    def paraphrase_proba(
        self,
        X: PairSet | Sequence[Pair] | Sequence[str],
        texts2: Sequence[str] | None = None,
        reading: str | None = None,
    ) -> np.ndarray:
        """P(paraphrase) per pair: the summed probability of the classes whose binary reading
        (in the training scheme, e.g. Turku loose/strict) is 1. For re-ranking and mining."""
        return self.paraphrase_of(self.predict_proba(X, texts2), reading)

    def paraphrase_of(self, proba: np.ndarray, reading: str | None = None) -> np.ndarray:
        """P(paraphrase) per row of ``proba`` (:meth:`predict_proba`'s output): the summed
        probability of the classes that are paraphrases under ``reading``."""
        return proba[:, self.positive_mask(reading)].sum(axis=1)

    def positive_mask(self, reading: str | None = None) -> np.ndarray:
        """Boolean mask over ``classes_``: which classes are paraphrases under ``reading``."""
        self._check_fitted()
        scheme = scheme_from_spec(self.scheme_)
        mask = []
        for label in self.classes_:
            try:
                mask.append(scheme.to_binary(label, reading) == 1)
            except ParakitError:
                mask.append(False)
        return np.array(mask, dtype=bool)

    def score(
        self,
        X: PairSet | Sequence[Pair] | Sequence[str],
        texts2: Sequence[str] | None = None,
        y: Sequence[Any] | None = None,
        sample_weight: Any = None,
    ) -> float:
        """Accuracy on labelled pairs (the scikit-learn classifier convention); see
        :mod:`parakit.evaluate.classification` for F1 and the full report."""
        data = as_pair_input(X, texts2, y, require_labels=True)
        predicted = self._predict(data)
        truth = np.array(data.labels, dtype=object)
        return float(np.mean(predicted == truth))

    def save(self, path: str | Path) -> Path:
        """Save the fitted model into folder ``path`` (created); returns the folder."""
        self._check_fitted()
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        state = self._save_state(folder)
        write_model_file(
            folder,
            self.model_type,
            self,
            self.get_params(deep=False),
            classes=[str(c) for c in self.classes_],
            label_type=self.label_type_,
            scheme=self.scheme_,
            state=state,
        )
        return folder

    @classmethod
    def load(cls, path: str | Path, **settings: Any) -> PairClassifier:
        """Load a classifier saved with :meth:`save` (any registered type when called on the
        base); ``settings`` replace saved parameters (:func:`load_params`: ``precision``...).

        Raises:
            ModelError: the folder is not a parakit model (E710) or holds another type (E711).
        """
        folder = Path(path)
        meta = _model_file(folder)
        model_type = meta["model_type"]
        other = {"biencoder": "a bi-encoder (BiEncoder.load; an encoder for -m)",
                 "generator": "a paraphrase generator (Seq2SeqGenerator.load)"}  # fmt: skip
        if model_type in other:
            raise ModelError(
                Errors.E711_holds_pair_classifier.format(
                    folder=folder, other_model_type=other[model_type]
                )
            )
        klass = get_model_class(model_type)
        if cls is not PairClassifier and not issubclass(klass, cls):
            raise ModelError(
                Errors.E711_holds_model.format(
                    folder=folder, model_type=model_type, name=cls.__name__
                )
            )
        model = klass(**load_params(klass, meta.get("params", {}), settings))
        model.classes_ = np.array(meta["classes"], dtype=object)
        model.label_type_ = meta.get("label_type", "str")
        model.scheme_ = meta.get("scheme") or _guess_scheme(meta["classes"])
        model._load_state(folder, meta.get("state") or {})
        return model

    # -- for subclasses ------------------------------------------------------------------------
    def _dev_input(self, eval_set: Any, classes: list[str]) -> PairInput | None:
        """``eval_set`` (pairs, or ``(texts1, texts2, labels)``) validated, its labels checked
        by :meth:`_check_dev_labels`; None without one."""
        if eval_set is None:
            return None
        pairs = isinstance(eval_set, PairSet) or isinstance(next(iter(eval_set), None), Pair)
        dev = as_pair_input(*((eval_set,) if pairs else eval_set), require_labels=True)
        self._check_dev_labels(dev, classes)
        return dev

    def _check_dev_labels(self, dev: PairInput, classes: list[str]) -> None:
        """Reject development labels the model cannot predict."""
        unknown = sorted(set(dev.labels or []) - set(classes))
        if unknown:
            raise ModelError(
                Errors.E704_development_labels_do.format(unknown=unknown, classes=classes)
            )

    @abstractmethod
    def _fit(self, data: PairInput, dev: PairInput | None) -> None:
        """Learn from validated data (labels are strings in ``self.classes_``)."""

    @abstractmethod
    def _predict_proba(self, data: PairInput) -> np.ndarray:
        """Probabilities for validated data."""

    def _predict(self, data: PairInput) -> np.ndarray:
        """Predicted label strings: :meth:`_labels_of` the probabilities."""
        return self._labels_of(self._predict_proba(data))

    def _labels_of(self, proba: np.ndarray) -> np.ndarray:
        """The label strings ``proba`` (of :meth:`_predict_proba`) predicts; the default is the
        arg-max."""
        return self.classes_[np.argmax(proba, axis=1)]

    def _save_state(self, folder: Path) -> dict[str, Any]:
        """Write learned state into ``folder``; return JSON-able extra state."""
        raise NotImplementedError(f"{type(self).__name__} cannot be saved")

    def _load_state(self, folder: Path, state: dict[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} cannot be loaded")

    # -- helpers -------------------------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "classes_"):
            raise ModelError(Errors.E705_fitted_yet_call.format(name=type(self).__name__))

    def _decode(self, labels: np.ndarray) -> np.ndarray:
        if getattr(self, "label_type_", "str") == "int":
            return np.array([int(v) for v in labels])
        return np.asarray(labels, dtype=object)

    def _label_index(self, labels: Iterable[str]) -> np.ndarray:
        index = {label: i for i, label in enumerate(self.classes_)}
        return np.array([index[label] for label in labels], dtype=np.int64)


def _label_sort_key(label: str) -> tuple[int, Any]:
    try:
        return (0, float(label))
    except ValueError:
        return (1, label)


def _guess_scheme(classes: Sequence[str]) -> dict[str, Any]:
    """The scheme of plain labels: binary for {0, 1}, Turku when every label parses as Turku."""
    turku = get_scheme("turku")
    if not set(classes) <= {"0", "1"} and all(turku.is_valid(c) for c in classes):
        return turku.spec()
    return get_scheme("binary").spec()


def write_model_file(
    folder: Path, model_type: str, model: Any, params: dict[str, Any], **extra: Any
) -> None:
    """Write ``parakit_model.json``, the one description of a saved model of every family
    (classifiers, bi-encoders): format version, type, class, hyperparameters and what the
    family adds (``extra``: classes and scheme, training history...)."""
    from parakit.io.atomic import atomic_write

    meta = {
        "format_version": FORMAT_VERSION,
        "model_type": model_type,
        "class": f"{type(model).__module__}.{type(model).__qualname__}",
        "params": _jsonable(params),
        **extra,
        "python": platform.python_version(),
    }
    with atomic_write(folder / MODEL_FILE) as handle:
        handle.write(json.dumps(meta, indent=2, ensure_ascii=False))


def is_model_folder(folder: str | Path) -> bool:
    """Whether ``folder`` holds a saved parakit model (its ``parakit_model.json``): what a
    command writing a model may replace whole (:func:`parakit.io.atomic.replace_folder`)."""
    return (Path(folder) / MODEL_FILE).is_file()


def _model_file(folder: Path) -> dict[str, Any]:
    """The ``parakit_model.json`` of ``folder``; E710 when it has none."""
    meta = read_model_file(folder)
    if meta is None:
        raise ModelError(
            Errors.E710_parakit_model_folder.format(folder=folder, MODEL_FILE=MODEL_FILE)
        )
    return meta


#: settings of how a model runs, not of what it learns: the loaders and :func:`make_model`
#: pass them to each family that has them and leave them out for the others
RUN_SETTINGS = ("precision", "device", "progress")


#: the names saved models of earlier versions used, and the one vocabulary's name for each:
#: read silently from a saved folder, and with a warning where parameters are given
#: (:func:`check_params`: :func:`make_model`, ``set_params``, ``-p`` on the command line)
RENAMED = {
    "base_model": "model_name_or_path",
    "encoder": "model_name_or_path",  # EmbeddingClassifier before the one vocabulary
    "max_seq_length": "max_length",
    "max_source_length": "max_length",
    "mixed_precision": "precision",
    "per_device_batch_size": "micro_batch_size",
    "random_state": "seed",
}


def load_params(klass: type, saved: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """The parameters a loader builds ``klass`` with: ``saved`` (earlier names read as
    :data:`RENAMED` says), then ``settings`` on top.

    A run setting (:data:`RUN_SETTINGS`) ``klass`` does not take, or given as None, is left
    out; any other unknown name is refused (E712).
    """
    names = set(klass._get_param_names())  # type: ignore[attr-defined]
    saved = {RENAMED.get(k, k) if k not in names else k: v for k, v in saved.items()}
    given = {
        k: v
        for k, v in settings.items()
        if not (k in RUN_SETTINGS and (k not in names or v is None))
    }
    return {**saved, **check_params(klass, given)}


def read_model_file(folder: Path) -> dict[str, Any] | None:
    """The ``parakit_model.json`` of a saved model; None when the folder has none.

    Raises:
        ModelError: the file is unreadable or names no model type (E710).
    """
    path = Path(folder) / MODEL_FILE
    if not path.is_file():
        return None
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(meta, dict) or not isinstance(meta.get("model_type"), str):
            raise KeyError("model_type")
    except (json.JSONDecodeError, KeyError) as err:
        raise ModelError(
            Errors.E710_unreadable_model_description.format(path=path, err=err)
        ) from None
    return meta


def _jsonable(params: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in params.items():
        if isinstance(value, Path):
            value = str(value)
        if isinstance(value, tuple):
            value = list(value)
        try:
            json.dumps(value)
        except TypeError:
            raise ModelError(
                Errors.E712_hyperparameter_saved_json.format(key=key, value=value)
            ) from None
        out[key] = value
    return out


# -- registry ---------------------------------------------------------------------------------

#: registry name -> "module:Class"; modules are imported on first use so torch stays unloaded.
#: Other packages add models with :func:`register` or a ``parakit.models`` entry point.
MODELS: Registry[type[PairClassifier]] = Registry(
    "models",
    {
        "wor": "parakit.models.baselines:WORClassifier",
        "tfidf": "parakit.models.baselines:TfidfClassifier",
        "bow": "parakit.models.baselines:BowClassifier",
        "bow-cosine": "parakit.models.baselines:BowCosineClassifier",
        "word-vectors": "parakit.models.baselines:WordVectorClassifier",
        "mt-features": "parakit.models.baselines:MTFeatureClassifier",
        "embedding-lr": "parakit.models.baselines:EmbeddingClassifier",
        "cross-encoder": "parakit.models.cross_encoder:CrossEncoderClassifier",
        "multihead": "parakit.models.multihead:MultiHeadClassifier",
        "multiclass": "parakit.models.multihead:MultiClassClassifier",
    },
    what="model type",
    error=ModelError,
    code="E711",
)
#: register a classifier class under a name: ``register("name", "module:Class")``
register = MODELS.register


def available_models() -> list[str]:
    """Names accepted by :func:`make_model` and ``parakit identify train --model``."""
    return sorted(MODELS)


def get_model_class(name: str) -> type[PairClassifier]:
    """The classifier class registered as ``name``.

    Raises:
        ModelError: unknown name (E711).
    """
    return MODELS.lookup(name)


def check_pretrained(source: str | Path) -> None:
    """A local folder named as a Hugging Face model must hold one: say so, instead of the
    tokenizer's advice to install sentencepiece or a ``model_type`` complaint.

    Raises:
        ModelError: E713, a folder without ``config.json``; E719, a path that does not exist
            (``./models/base``, ``/data/m``, ``~/m``, ``a/b/c``: a Hub id is ``org/name``),
            instead of the Hub's message about repository ids.
    """
    path = Path(source).expanduser()
    text = str(source)
    looks_like_path = (
        text.startswith(("/", "./", "../", "~", ".\\")) or text.count("/") > 1 or "\\" in text
    )
    if looks_like_path and not path.exists():
        raise ModelError(Errors.E719_such_folder_give.format(source=source))
    if path.is_dir() and not (path / "config.json").is_file():
        raise ModelError(Errors.E713_model_folder_config.format(source=source))


def make_model(name: str, settings: dict[str, Any] | None = None, **params: Any) -> PairClassifier:
    """A new, unfitted classifier of type ``name`` with ``params``, and the run ``settings``
    (:data:`RUN_SETTINGS`: ``precision``, ``device``, ``progress``) it takes; ``params`` win.
    An earlier name of a parameter (:data:`RENAMED`, e.g. ``encoder`` of ``embedding-lr``) is
    read as the parameter, with a warning (:func:`check_params`).

    Example:
        >>> make_model("wor", {"precision": "fp32"}).get_params()
        {'criterion': 'accuracy', 'lang': None}

    Raises:
        ModelError: unknown name (E711) or hyperparameter (E712).
    """
    klass = get_model_class(name)
    params = {**load_params(klass, {}, dict(settings or {})), **check_params(klass, params)}
    hints = _init_hints(klass)
    for key, value in params.items():
        expected = _expected_type(hints.get(key))
        if expected is not None and not _matches(value, expected[0]):
            raise ModelError(
                Errors.E712_hyperparameter_model_expects.format(
                    key=key, name=name, expected_1=expected[1], value=value
                )
            )
    return klass(**params)


def _init_hints(klass: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(klass.__init__)
    except Exception:  # an annotation that cannot be resolved: no check, as before
        return {}


#: (annotation type, what the message calls it), checked in this order (bool is an int)
_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "true or false"),
    (int, "an integer"),
    (float, "a number"),
    (str, "text"),
    (list, "a list like [1, 2]"),
    (tuple, "a list like [1, 2]"),
    (dict, 'an object like {"key": 1}'),
)


def _expected_type(hint: Any) -> tuple[tuple[type, ...], str] | None:
    """The plain types ``hint`` accepts and their description; None when it is not a plain
    combination of bool/int/float/str/list/tuple/dict (then the value is not checked)."""
    if hint is None:
        return None
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
    else:
        members = [hint]
    accepted: list[type] = []
    for member in members:
        base = typing.get_origin(member) or member
        if base is typing.Literal:
            accepted.extend({type(v) for v in typing.get_args(member)})
        elif base in {kind for kind, _ in _KINDS}:
            accepted.append(base)
        else:
            return None
    if float in accepted:
        accepted.append(int)  # 1 is a fine learning rate
    if list in accepted or tuple in accepted:
        accepted += [list, tuple]  # JSON has lists only
    words = [word for kind, word in _KINDS if kind in accepted]
    if None in args or type(None) in args:
        accepted.append(type(None))
        words.append("null")
    return tuple(accepted), " or ".join(dict.fromkeys(words))


def _matches(value: Any, accepted: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in accepted
    return isinstance(value, accepted)


#: the loader of each family that is not a pair classifier, by ``model_type``
FAMILIES = {
    "biencoder": "parakit.models.biencoder:BiEncoder",
    "generator": "parakit.models.generator:Seq2SeqGenerator",
}


def load_model(path: str | Path, **settings: Any) -> Any:
    """Load any saved parakit model by the ``model_type`` of its ``parakit_model.json``: a
    pair classifier, a bi-encoder or a generator (each family's ``load``). ``settings``
    replace saved parameters; run settings a family does not take are left out
    (:func:`load_params`), e.g. ``load_model(folder, precision="fp32")`` for any family.

    Raises:
        ModelError: not a model folder (E710), unknown type (E711), unknown setting (E712).
    """
    import pkgutil

    folder = Path(path)
    target = FAMILIES.get(_model_file(folder)["model_type"])
    if target is None:
        return PairClassifier.load(folder, **settings)
    return pkgutil.resolve_name(target).load(folder, **settings)
