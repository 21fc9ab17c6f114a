"""Pretrained pair models used as they are, beside parakit's own: one entry point,
:func:`load_predictor`.

``identify predict``, ``identify evaluate`` and ``report profile --model`` take any of:

- a parakit model folder (``parakit_model.json``): :meth:`parakit.models.base.PairClassifier.load`;
- a sentence-transformers ``CrossEncoder`` (a folder or a Hub id): its scores as they are, a
  sigmoid score for one output, a softmax over the labels for several;
- a transformers sequence classifier (``*ForSequenceClassification``; read through
  sentence-transformers' ``CrossEncoder``, which wraps exactly that);
- a ``SentenceTransformer`` (or a plain encoder, mean-pooled): the cosine of the two texts,
  called a paraphrase at or above a threshold, given or chosen on labelled development pairs
  (the F1-best cut of the positive class).

Every such model predicts the binary labels ``0``/``1``. Which of a classifier's labels mean
"paraphrase" is stated (``positive=``, CLI ``--positive``) or inferred from the config's
``id2label``: the one label of a single-output model; ``LABEL_1`` (or ``1``) of two generic
labels; the label without a negation (``equivalent`` against ``not_equivalent``); a label named
like a paraphrase (``paraphrase``, ``duplicate``, ``entailment``...). Anything else is E716,
asking for ``--positive``.

Example:
    >>> model = load_predictor("cross-encoder/quora-distilroberta-base")  # doctest: +SKIP
    >>> model.paraphrase_proba(["How old are you?"], ["What is your age?"])  # doctest: +SKIP
    array([0.97...])
    >>> sbert = load_predictor("offline-minilm", dev=dev_pairs)  # doctest: +SKIP
    >>> sbert.threshold_  # doctest: +SKIP
    0.71...
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from parakit.errors import Errors, ModelError
from parakit.labels import get_scheme
from parakit.models.base import (
    MODEL_FILE,
    RUN_SETTINGS,
    PairClassifier,
    PairInput,
    is_model_folder,
)

#: what :func:`model_kind` tells apart
KINDS = ("cross-encoder", "sequence-classification", "bi-encoder")

#: label names read as "paraphrase" when a config does not say which label is (lowercase)
POSITIVE_NAMES = frozenset(
    {"1", "label_1", "true", "yes", "paraphrase", "paraphrases", "equivalent", "duplicate",
     "similar", "same", "entailment", "positive", "match"}
)  # fmt: skip
_NEGATED = re.compile(r"^(not|non|no|un)[\s_-]?", re.I)


def _config_file(model: str, filename: str) -> dict[str, Any] | None:
    """``filename`` of a model folder, or of a Hub model (from the local cache first, then
    the Hub unless offline); None when the model has no such file.

    Raises:
        ModelError: E715 the Hub cannot be asked (offline and not cached, no network, no such
            repository), with the reason.
    """
    folder = Path(model).expanduser()
    path: Any = folder / filename
    if not folder.is_dir():
        from huggingface_hub import constants, hf_hub_download, try_to_load_from_cache
        from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError

        path = try_to_load_from_cache(model, filename)
        if not isinstance(path, str):  # not cached (or cached as missing)
            if path is not None or constants.is_offline_mode():
                return None
            try:
                path = hf_hub_download(model, filename)
            except EntryNotFoundError as err:
                if not isinstance(err, LocalEntryNotFoundError):  # the Hub says: no such file
                    return None
                raise ModelError(Errors.E715_local_folder_hub.format(model=model)) from None
            except Exception as err:  # no network, no such repository, a bad id
                reason = " ".join(str(err).split())[:300] or type(err).__name__
                raise ModelError(
                    Errors.E715_local_folder_hub_give.format(
                        model=model, filename=filename, reason=reason
                    )
                ) from None
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def model_kind(model: str | Path) -> str:
    """Which kind of pretrained pair model ``model`` is (one of :data:`KINDS`), from its
    sentence-transformers and transformers configs.

    Raises:
        ModelError: E710 a local folder without a model; E715 a model neither here nor on
            the Hub (or offline and not cached).
    """
    from parakit.offline import resolve_model

    name = resolve_model(str(model))
    config = _config_file(name, "config.json")  # first: a Hub that cannot be reached fails once
    st_config = _config_file(name, "config_sentence_transformers.json") or {}
    if st_config.get("model_type") == "CrossEncoder":
        return "cross-encoder"
    if st_config or _config_file(name, "modules.json") is not None:
        return "bi-encoder"
    if config is None and Path(name).expanduser().is_dir():
        raise ModelError(
            Errors.E710_model_folder_parakit.format(model=model, MODEL_FILE=MODEL_FILE)
        )
    if config is None:
        raise ModelError(Errors.E715_model_found_neither.format(model=model))
    if "sentence_transformers" in config:  # a CrossEncoder saved by sentence-transformers 2-4
        return "cross-encoder"
    architectures = config.get("architectures") or []
    if any(str(a).endswith("ForSequenceClassification") for a in architectures):
        return "sequence-classification"
    return "bi-encoder"  # a plain encoder: mean pooling, as the vanilla encoder of T17/T18


def positive_labels(
    id2label: dict[int, str], stated: str | list[str] | tuple[str, ...] | None = None
) -> list[int]:
    """The output indices that mean "paraphrase": the ``stated`` label names (or indices), or
    the ones inferred from ``id2label`` (see the module docstring).

    Raises:
        ModelError: E716 a stated label the model does not have, or labels from which the
            paraphrase label cannot be told.

    Example:
        >>> positive_labels({0: "not_equivalent", 1: "equivalent"})
        [1]
        >>> positive_labels({0: "LABEL_0", 1: "LABEL_1"}), positive_labels({0: "a", 1: "b"}, "a")
        ([1], [0])
        >>> positive_labels({0: "entailment", 1: "neutral", 2: "contradiction"})
        [0]
    """
    names = {int(i): str(n) for i, n in id2label.items()}
    if stated:
        wanted = [stated] if isinstance(stated, str) else list(stated)
        found = []
        for label in wanted:
            hits = [i for i, n in names.items() if n == label or str(i) == str(label)]
            if not hits:
                raise ModelError(
                    Errors.E716_positive_not_label.format(label=label, labels=_listed(names))
                )
            found += hits
        return sorted(set(found))
    if len(names) == 1:
        return list(names)
    lowered = {i: n.strip().lower() for i, n in names.items()}
    negated = [i for i, n in lowered.items() if _NEGATED.match(n)]
    named = [i for i, n in lowered.items() if n in POSITIVE_NAMES and i not in negated]
    if len(names) == 2 and len(negated) == 1:
        return [i for i in names if i not in negated]
    if len(named) == 1:
        return named
    raise ModelError(Errors.E716_cannot_tell_label.format(labels=_listed(names)))


def _listed(names: dict[int, str]) -> str:
    """``0=not_paraphrase, 1=paraphrase``: a model's labels as its config numbers them."""
    return ", ".join(f"{i}={n}" for i, n in sorted(names.items()))


def best_threshold(scores: np.ndarray, truth: np.ndarray) -> float:
    """The score at or above which pairs are called paraphrases that gives the highest F1 of
    the positive class on ``truth`` (0/1); ties go to the higher threshold.

    Example:
        >>> best_threshold(np.array([0.9, 0.8, 0.4, 0.3]), np.array([1, 1, 0, 1]))
        0.3
        >>> best_threshold(np.array([0.9, 0.8, 0.4, 0.3]), np.array([1, 1, 0, 0]))
        0.8
    """
    order = np.argsort(-scores, kind="stable")
    ranked, gold = scores[order], truth[order].astype(float)
    positives = gold.sum()
    if positives == 0:
        raise ModelError(Errors.E717_development_pairs_hold)  # fmt: skip
    tp = np.cumsum(gold)
    called = np.arange(1, len(gold) + 1)
    f1 = 2 * tp / (called + positives)
    last = np.r_[ranked[1:] != ranked[:-1], True]  # a cut between distinct scores only
    candidates = np.flatnonzero(last)
    best = candidates[np.argmax(f1[candidates])]
    return float(ranked[best])


class PretrainedPairModel(PairClassifier):
    """A pretrained cross-encoder, sequence classifier or bi-encoder as a binary
    :class:`~parakit.models.base.PairClassifier` (classes ``0``/``1``), used as it is.

    Args:
        model_name_or_path: a folder, a Hub id or an offline alias.
        kind: one of :data:`KINDS`; None tells it from the configs (:func:`model_kind`).
        positive: the label name(s) meaning paraphrase; None infers them from ``id2label``.
        threshold: a bi-encoder's cosine threshold; None chooses it in :meth:`fit` (on
            labelled pairs: development data, never the test set).
        batch_size: pairs per forward pass (lower it to save memory).
        max_length: tokens per input (None: the model's own limit).
        device: torch device (None: CUDA when available).
        precision: ``auto``, ``fp32``, ``bf16`` or ``fp16`` (:mod:`parakit.vectors.precision`).

    ``fit(pairs)`` learns nothing but a bi-encoder's threshold: the weights stay as they are.
    """

    model_type: ClassVar[str] = "pretrained"
    binary_only: ClassVar[bool] = True

    def __init__(
        self,
        model_name_or_path: str,
        kind: str | None = None,
        positive: str | list[str] | None = None,
        threshold: float | None = None,
        batch_size: int = 32,
        max_length: int | None = None,
        device: str | None = None,
        precision: str = "auto",
    ) -> None:
        self.model_name_or_path = model_name_or_path
        self.kind = kind
        self.positive = positive
        self.threshold = threshold
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self.precision = precision

    # -- loading ------------------------------------------------------------------------------
    def resolved_kind(self) -> str:
        """``kind``, or the kind the model's configs say (:func:`model_kind`)."""
        return self.kind or model_kind(self.model_name_or_path)

    def prepare(self) -> PretrainedPairModel:
        """Load the network and the label mapping without labelled pairs (a bi-encoder then
        needs ``threshold``); returns self, ready to predict."""
        self._load_network()
        if self.kind_ == "bi-encoder":
            if self.threshold is None:
                raise ModelError(
                    Errors.E717_sentence_encoder_give.format(
                        model_name_or_path=self.model_name_or_path
                    )
                )
            self.threshold_ = float(self.threshold)
        self.classes_ = np.array(["0", "1"], dtype=object)
        self.label_type_ = "str"
        self.scheme_ = get_scheme("binary").spec()
        return self

    def _device_name(self) -> str:
        from parakit.vectors.precision import device_type

        return self.device or device_type(None)

    def _load_network(self) -> None:
        if getattr(self, "network_", None) is not None:
            return
        from parakit.offline import resolve_model

        kind = self.resolved_kind()
        if kind not in KINDS:
            raise ModelError(Errors.E715_kind_use_one.format(kind=kind, kinds=", ".join(KINDS)))
        source = resolve_model(str(self.model_name_or_path))
        if kind == "bi-encoder":
            from parakit.vectors.loading import load_sentence_transformer

            self.network_ = load_sentence_transformer(
                source, device=self._device_name(), max_seq_length=self.max_length
            )
            self.label_names_ = {0: "0", 1: "1"}
            self.positive_ = [1]
        else:
            from sentence_transformers import CrossEncoder

            try:
                self.network_ = CrossEncoder(
                    source, device=self._device_name(), max_length=self.max_length
                )
            except (OSError, ValueError) as err:
                raise ModelError(
                    Errors.E715_load_pair_classifier.format(
                        model_name_or_path=self.model_name_or_path, err=err
                    )
                ) from None
            id2label = dict(getattr(self.network_.config, "id2label", None) or {0: "LABEL_0"})
            self.label_names_ = {int(i): str(n) for i, n in id2label.items()}
            self.positive_ = positive_labels(self.label_names_, self.positive)
        self.kind_ = kind

    # -- the PairClassifier hooks -------------------------------------------------------------
    def _fit(self, data: PairInput, dev: PairInput | None) -> None:
        if list(self.classes_) != ["0", "1"]:
            raise ModelError(
                Errors.E703_pretrained_model_fitted.format(classes=list(self.classes_))
            )
        self._load_network()
        if self.kind_ == "bi-encoder":
            if self.threshold is not None:
                self.threshold_ = float(self.threshold)
            else:
                truth = np.array([int(label) for label in data.labels or []])
                self.threshold_ = best_threshold(self._cosines(data), truth)

    def _cosines(self, data: PairInput) -> np.ndarray:
        from parakit.vectors.precision import autocast

        with autocast(self.precision, self._device_name()):
            a, b = (
                np.asarray(
                    self.network_.encode(
                        texts,
                        batch_size=self.batch_size,
                        normalize_embeddings=True,
                        show_progress_bar=False,
                        convert_to_numpy=True,
                    ),
                    dtype=np.float64,
                )
                for texts in (data.texts1, data.texts2)
            )
        return np.clip((a * b).sum(axis=1), -1.0, 1.0)

    def _scores(self, data: PairInput) -> np.ndarray:
        """P(paraphrase) of a classifier: the sigmoid score of one output, else the softmax
        mass of the positive labels."""
        from parakit.vectors.precision import autocast

        single = len(self.label_names_) == 1
        with autocast(self.precision, self._device_name()):
            out = self.network_.predict(
                list(zip(data.texts1, data.texts2, strict=True)),
                batch_size=self.batch_size,
                apply_softmax=not single,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        out = np.asarray(out, dtype=np.float64)
        if single:
            return out.reshape(-1)
        return out[:, self.positive_].sum(axis=1)

    def _predict_proba(self, data: PairInput) -> np.ndarray:
        self._load_network()
        if self.kind_ == "bi-encoder":
            p = cosine_to_probability(self._cosines(data), self.threshold_)
        else:
            p = np.clip(self._scores(data), 0.0, 1.0)
        return np.column_stack([1.0 - p, p])

    def positive_mask(self, reading: str | None = None) -> np.ndarray:
        """``[False, True]``: class ``1`` is the paraphrase class under any reading (the
        reading applies to the gold labels, which :meth:`fit` and the evaluators binarise)."""
        self._check_fitted()
        return np.array([False, True])

    def describe(self) -> str:
        """One line: the model, its kind and the label mapping (or threshold) it is read with."""
        self._check_fitted()
        if self.kind_ == "bi-encoder":
            return (
                f"{self.model_name_or_path} (bi-encoder): paraphrase at cosine >= "
                f"{self.threshold_:.4f}"
            )
        if len(self.label_names_) == 1:
            return (
                f"{self.model_name_or_path} ({self.kind_}): one output, its score is P(paraphrase)"
            )
        how = "stated" if self.positive else "inferred from the config"
        names = ", ".join(self.label_names_[i] for i in self.positive_)
        return f"{self.model_name_or_path} ({self.kind_}): paraphrase = {names} ({how})"


def cosine_to_probability(cosine: np.ndarray, threshold: float) -> np.ndarray:
    """A bi-encoder's cosine as a score in [0, 1] that is 0.5 at the threshold: linear from
    -1 to the threshold and from the threshold to 1. Monotone, so rankings, thresholds and the
    ROC are the cosine's; not a calibrated probability.

    Example:
        >>> cosine_to_probability(np.array([-1.0, 0.6, 0.8, 1.0]), 0.6).tolist()
        [0.0, 0.5, 0.75, 1.0]
    """
    t = float(np.clip(threshold, -1.0 + 1e-9, 1.0 - 1e-9))
    below = 0.5 * (cosine + 1.0) / (t + 1.0)
    above = 0.5 + 0.5 * (cosine - t) / (1.0 - t)
    return np.clip(np.where(cosine < t, below, above), 0.0, 1.0)


def load_predictor(
    model: str | Path,
    *,
    dev: Any = None,
    positive: str | list[str] | None = None,
    threshold: float | None = None,
    reading: str | None = None,
    **params: Any,
) -> PairClassifier:
    """Any pair model as a fitted :class:`~parakit.models.base.PairClassifier`: a parakit
    model folder as saved, anything else as a :class:`PretrainedPairModel`.

    Args:
        model: a folder, a Hub id or an offline alias.
        dev: labelled pairs a bi-encoder's threshold is chosen on (their binary reading under
            ``reading``); ignored by classifiers and parakit models.
        positive: the label name(s) meaning paraphrase (default: inferred).
        threshold: a bi-encoder's cosine threshold (instead of ``dev``).
        reading: the binary reading of ``dev``'s labels.
        **params: other :class:`PretrainedPairModel` parameters (``batch_size``, ``device``...).

    Raises:
        ModelError: E715 no such model, E716 the paraphrase label cannot be told, E717 a
            bi-encoder without threshold or development pairs.
    """
    if is_model_folder(Path(str(model)).expanduser()):  # the run settings of params apply
        return PairClassifier.load(model, **{k: v for k, v in params.items() if k in RUN_SETTINGS})
    predictor = PretrainedPairModel(str(model), positive=positive, threshold=threshold, **params)
    if dev is not None and predictor.resolved_kind() == "bi-encoder" and threshold is None:
        binary = dev.to_binary(reading) if dev.scheme.name != "binary" else dev
        return predictor.fit(binary)
    return predictor.prepare()


__all__ = [
    "KINDS",
    "PretrainedPairModel",
    "best_threshold",
    "cosine_to_probability",
    "load_predictor",
    "model_kind",
    "positive_labels",
]
