"""Bi-encoder (SBERT) fine-tuning for paraphrase embeddings (T17, journal §8.1).

A sentence-transformers model on any base encoder with mean pooling, trained on the binary
reading of a corpus's labels (Turku loose by default: 1, 2 → negative; 3, 4 → positive) with
the paper's defaults (batch size 16, learning rate 1e-5), evaluated on a dev set during
training, saved and loaded as a plain sentence-transformers folder.

Losses (``loss=``):

* ``contrastive`` – :class:`ContrastiveLoss`: pulls positives together, pushes negatives beyond
  ``margin``. Inputs: (text1, text2, label 0/1).
* ``online_contrastive`` (default) – :class:`OnlineContrastiveLoss`: the same, on the hard
  positives and hard negatives of each batch only; usually better with many easy negatives.
* ``mnrl`` – :class:`MultipleNegativesRankingLoss`: positives only, other in-batch sentences
  are the negatives; mined hard negatives (``fit(hard_negatives=...)``) are added as a third
  column. Recommended when the data are (almost) all positives, as in Turku (81.8K positives,
  1.4K negatives).

Example:
    >>> from parakit.io import read
    >>> model = BiEncoder("offline-minilm", epochs=1).fit(
    ...     read("train.jsonl"), eval_set=read("dev.jsonl"))  # doctest: +SKIP
    >>> model.save("sbert-turku")  # doctest: +SKIP
    >>> BiEncoder.load("sbert-turku").encode(["Hyvää huomenta"]).shape  # doctest: +SKIP
    (1, 384)
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import BiEncoderError, Errors
from parakit.models.base import hyperparameters, load_params, read_model_file, write_model_file
from parakit.models.training import TransformerEstimator, logs_to_stderr
from parakit.schema import PairSet
from parakit.vectors.precision import autocast

LOSSES = ("contrastive", "online_contrastive", "mnrl")


def _st_module(name: str) -> Any:
    """sentence-transformers 5.x moved losses/evaluation/modules under ``sentence_transformer``."""
    import importlib

    try:
        return importlib.import_module(f"sentence_transformers.sentence_transformer.{name}")
    except ImportError:
        return importlib.import_module(f"sentence_transformers.{name}")


@hyperparameters
class BiEncoder(TransformerEstimator):
    """Fine-tune and apply a paraphrase bi-encoder (a
    :class:`~parakit.models.training.TransformerEstimator`: parameters, device and precision
    come from there; training runs in sentence-transformers' trainer).

    Args:
        model_name_or_path: HF id or local folder (a sentence-transformers model, or a plain
            encoder that gets mean pooling), or ``offline-minilm``.
        loss: ``contrastive``, ``online_contrastive`` or ``mnrl`` (see the module docs).
        batch_size: the paper's 16.
        learning_rate: the paper's 1e-5.
        epochs: passes over the training data.
        warmup_ratio: linear warm-up share of the steps.
        margin: contrastive margin (cosine distance).
        max_length: token limit.
        reading: binary reading of the label scheme (None: the scheme default, Turku loose).
        eval_steps: evaluate on dev every this many steps (None: once per epoch).
        seed: training seed.
        device: ``cpu``, ``cuda``...; None: CUDA when available.
        precision: ``auto`` (bf16 on CPUs with AMX/AVX512-BF16 and bf16 GPUs), ``fp32``,
            ``bf16`` or ``fp16``: training (where the device runs it natively) and
            :meth:`encode` (:mod:`parakit.vectors.precision`).
        progress: show the training progress bar.
        output_dir: the trainer's working folder (None: a temporary folder).
    """

    model_name_or_path: str | Path = "offline-minilm"
    loss: str = "online_contrastive"
    batch_size: int = 16
    learning_rate: float = 1e-5
    epochs: int = 1
    warmup_ratio: float = 0.1
    margin: float = 0.5
    max_length: int = 128
    reading: str | None = None
    eval_steps: int | None = None
    seed: int = 0
    device: str | None = None
    precision: str = "auto"
    progress: bool = True
    output_dir: str | Path | None = None

    # -- model ------------------------------------------------------------------------------
    def _base(self) -> Any:
        from parakit.vectors.loading import load_sentence_transformer

        # a plain encoder gets mean pooling over the last layer (the paper's choice)
        return load_sentence_transformer(
            self.model_name_or_path, device=str(self.device_), max_seq_length=self.max_length
        )

    def _binary(self, pairs: PairSet, what: str) -> tuple[list[str], list[str], list[int]]:
        labels = pairs.binary_labels(self.reading)
        keep = [i for i, y in enumerate(labels) if y is not None]
        if not keep:
            raise BiEncoderError(
                Errors.E751_pair_binary_label.format(
                    what=what,
                    reading=self.reading or pairs.scheme.default_reading,
                )
            )
        return (
            [pairs[i].text1 for i in keep],
            [pairs[i].text2 for i in keep],
            [int(labels[i]) for i in keep],
        )

    def _datasets(self, train: PairSet, hard_negatives: PairSet | None) -> Any:
        from datasets import Dataset, DatasetDict

        s1, s2, y = self._binary(train, "train")
        if self.loss in ("contrastive", "online_contrastive"):
            if hard_negatives is not None:  # mined negatives join as label-0 pairs
                s1 += list(hard_negatives.texts()[0])
                s2 += list(hard_negatives.texts()[1])
                y += [0] * len(hard_negatives)
            if len(set(y)) < 2:
                raise BiEncoderError(Errors.E752_loss_needs_positive.format(loss=self.loss))
            return Dataset.from_dict({"sentence1": s1, "sentence2": s2, "label": y})
        anchors = [a for a, label in zip(s1, y, strict=True) if label == 1]
        positives = [b for b, label in zip(s2, y, strict=True) if label == 1]
        if not anchors:
            raise BiEncoderError(Errors.E752_loss_mnrl_needs)
        plain = Dataset.from_dict({"anchor": anchors, "positive": positives})
        if hard_negatives is None or len(hard_negatives) == 0:
            return plain
        negative_of: dict[str, str] = {}
        for pair in hard_negatives:
            negative_of.setdefault(pair.text1, pair.text2)
        rows = [
            {"anchor": a, "positive": p, "negative": negative_of[a]}
            for a, p in zip(anchors, positives, strict=True)
            if a in negative_of
        ]
        if not rows:
            return plain
        return DatasetDict({"pairs": plain, "triplets": Dataset.from_list(rows)})

    def _loss(self, model: Any) -> Any:
        losses = _st_module("losses")
        if self.loss == "contrastive":
            return losses.ContrastiveLoss(model, margin=self.margin)
        if self.loss == "online_contrastive":
            return losses.OnlineContrastiveLoss(model, margin=self.margin)
        return losses.MultipleNegativesRankingLoss(model)

    # -- training ---------------------------------------------------------------------------
    def fit(
        self,
        train: PairSet,
        eval_set: PairSet | None = None,
        hard_negatives: PairSet | None = None,
    ) -> BiEncoder:
        """Fine-tune on ``train`` (binary reading), evaluating on ``eval_set`` during training.

        Args:
            train: labelled pairs.
            eval_set: labelled development pairs for :class:`BinaryClassificationEvaluator`
                (cosine) during training; the scores per evaluation are in ``history_``.
            hard_negatives: mined (sentence, hard negative) pairs, e.g. from ``parakit mine run``
                with low classifier scores; label-0 pairs for contrastive losses, a negative
                column for ``mnrl``.

        Returns:
            self, with ``model_`` (a SentenceTransformer) and ``history_`` (dev metrics).
        """
        if self.loss not in LOSSES:
            raise BiEncoderError(
                Errors.E751_unknown_loss_use.format(loss=self.loss, losses=", ".join(LOSSES))
            )
        from sentence_transformers import (
            SentenceTransformerTrainer,
            SentenceTransformerTrainingArguments,
        )

        model = self._base()
        dataset = self._datasets(train, hard_negatives)
        evaluator = None
        if eval_set is not None:
            evaluation = _st_module("evaluation")
            d1, d2, dy = self._binary(eval_set, "dev")
            evaluator = evaluation.BinaryClassificationEvaluator(d1, d2, dy, name="dev")
        work = (
            Path(self.output_dir)
            if self.output_dir
            else Path(tempfile.mkdtemp(prefix="biencoder-"))
        )
        strategy = "steps" if self.eval_steps else "epoch"
        args = SentenceTransformerTrainingArguments(
            output_dir=str(work),
            num_train_epochs=self.epochs,
            per_device_train_batch_size=self.batch_size,
            learning_rate=self.learning_rate,
            warmup_ratio=self.warmup_ratio,
            seed=self.seed,
            data_seed=self.seed,
            eval_strategy=strategy if evaluator is not None else "no",
            eval_steps=self.eval_steps,
            save_strategy="no",
            report_to="none",
            logging_strategy="no",
            use_cpu=self.device_.type == "cpu",
            # bf16 only where the device runs it natively (what vectors.precision detects)
            **self.trainer_precision(),
            batch_sampler="no_duplicates" if self.loss == "mnrl" else "batch_sampler",
            disable_tqdm=not self.progress,
        )
        self.history_: list[dict[str, float]] = []
        if evaluator is not None:
            self.history_.append({"step": 0, **evaluator(model)})
        trainer = SentenceTransformerTrainer(
            model=model,
            args=args,
            train_dataset=dataset,
            loss=self._loss(model),
            evaluator=evaluator,
        )
        logs_to_stderr(trainer)  # stdout is the command's output
        trainer.train()
        if evaluator is not None:
            self.history_.append({"step": int(trainer.state.global_step), **evaluator(model)})
        self.model_ = model
        return self

    # -- use --------------------------------------------------------------------------------
    def encode(
        self, texts: Sequence[str], batch_size: int = 64, normalize: bool = True
    ) -> np.ndarray:
        """Embeddings (L2-normalised by default) as float32."""
        if not hasattr(self, "model_"):
            raise BiEncoderError(Errors.E753_fitted_call_fit)
        from parakit.vectors.static import is_static_model

        # a static encoder is a table lookup: fp32, no autocast (its embedding bag refuses it)
        precision = "fp32" if is_static_model(self.model_) else self.precision
        with autocast(precision, self.device_):
            vectors = self.model_.encode(
                list(texts),
                batch_size=batch_size,
                normalize_embeddings=False,
                convert_to_tensor=True,
                show_progress_bar=False,
            )
        # pooled in bf16 under autocast: normalise in float32
        out = np.asarray(vectors.float().cpu().numpy(), dtype=np.float32)
        if normalize:
            out /= np.clip(np.linalg.norm(out, axis=1, keepdims=True), 1e-12, None)
        return out

    def evaluate(self, pairs: PairSet, name: str = "test") -> dict[str, float]:
        """Cosine binary classification metrics and T18 retrieval metrics on ``pairs``."""
        from parakit.evaluate.retrieval import RetrievalEvaluator

        evaluation = _st_module("evaluation")
        s1, s2, y = self._binary(pairs, name)
        metrics = dict(evaluation.BinaryClassificationEvaluator(s1, s2, y, name=name)(self.model_))
        metrics.update(
            RetrievalEvaluator(pairs, name=f"{name}_retrieval", reading=self.reading)(self)
        )
        return metrics

    def signature(self) -> dict[str, Any]:
        return {
            "encoder": "sentence-transformers",
            "model": str(self.model_name_or_path),
            "loss": self.loss,
            "lr": self.learning_rate,
            "batch_size": self.batch_size,
        }

    def save(self, path: str | Path) -> Path:
        """A sentence-transformers folder plus ``parakit_model.json`` (the one model description:
        settings as ``params``, training ``history``)."""
        folder = Path(path)
        self.model_.save(str(folder))
        params = {**self.get_params(deep=False), "output_dir": None}  # the run's, not the model's
        write_model_file(folder, "biencoder", self, params, history=getattr(self, "history_", []))
        return folder

    @classmethod
    def load(cls, path: str | Path, **settings: Any) -> BiEncoder:
        """Load a folder written by :meth:`save` (or any sentence-transformers folder);
        ``settings`` replace saved parameters (``device``, ``precision``...)."""
        from parakit.vectors.loading import load_sentence_transformer

        folder = Path(path)
        if not (folder / "modules.json").exists():
            raise BiEncoderError(Errors.E753_sentence_transformers_model.format(folder=folder))
        meta = read_model_file(folder) or {}  # a plain sentence-transformers folder has none
        saved = {k: v for k, v in meta.get("params", {}).items() if k != "device"}
        self = cls(**load_params(cls, saved, settings))
        self.model_ = load_sentence_transformer(folder, device=str(self.device_))
        self.history_ = meta.get("history", [])
        return self
