"""Fine-tuned transformer pair classifiers (M7) and the training loop they share.

:class:`CrossEncoderClassifier` feeds ``[CLS] text1 [SEP] text2 [SEP]`` to any Hugging Face
encoder (an id or a local path) with a classification head, for binary or multi-class labels.
The defaults are the MultiPIT recipe (appendix C, Table 9): AdamW with eps 1e-8 and weight
decay 0.01, linear decay after a 0.06 warm-up, at most 5 epochs, an effective batch of 32
(gradient accumulation over ``micro_batch_size``), evaluation every 500 steps — or every
epoch when training has fewer than 1,500 steps — and model selection on development F1 over a
learning-rate grid. Settings, signature, grid, device and precision come from
:class:`~parakit.models.training.TransformerEstimator`.

Inputs / Requirements / Recommendations:
    * pairs with non-empty texts and a label each; a development set (``eval_set``) for model
      selection and early stopping — without one the last step is kept;
    * ``both_orders=True`` trains on (a, b) and (b, a) (as the Turku loader does);
      ``predict_both_orders=True`` averages the two orders at prediction time;
    * on CPU use a small ``max_length`` (64) and ``max_steps`` to bound the time;
    * ``output_dir`` keeps a checkpoint at every evaluation: a stopped run started again with the
      same settings resumes where it stopped.

Example:
    >>> from parakit.models.cross_encoder import CrossEncoderClassifier
    >>> model = CrossEncoderClassifier("path/or/hf-id", epochs=3, max_length=64)  # doctest: +SKIP
    >>> model.fit(train_pairs, eval_set=dev_pairs).predict_proba(test_pairs)     # doctest: +SKIP
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import Errors, ModelError
from parakit.evaluate.classification import ClassificationEvaluator
from parakit.models.base import (
    MODEL_FILE,
    PairClassifier,
    PairInput,
    check_pretrained,
    hyperparameters,
)
from parakit.models.training import TransformerEstimator, train_transformer
from parakit.vectors.precision import autocast


class TransformerPairClassifier(TransformerEstimator, PairClassifier):
    """Shared fine-tuning loop of the transformer classifiers (see the module docstring).

    Subclasses define the network: :meth:`_build_network`, :meth:`_targets`, :meth:`_loss`,
    :meth:`_probabilities`, :meth:`_save_network`, :meth:`_load_network`.
    """

    # -- network hooks -------------------------------------------------------------------------
    def _build_network(self, source: str) -> Any:
        raise NotImplementedError

    def _targets(self, labels: list[str]) -> dict[str, Any]:
        """Label tensors for a batch."""
        import torch

        return {"labels": torch.as_tensor(self._label_index(labels))}

    def _loss(self, network: Any, encoded: dict[str, Any], targets: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _probabilities(self, network: Any, encoded: dict[str, Any]) -> Any:
        """(batch, n_classes) tensor of probabilities in ``classes_`` order."""
        raise NotImplementedError

    def _save_network(self, folder: Path) -> None:
        raise NotImplementedError

    def _load_network(self, folder: Path) -> None:
        raise NotImplementedError

    # -- common machinery ----------------------------------------------------------------------
    def _pretrained(self, auto_class: Any, source: str, **kwargs: Any) -> Any:
        """``auto_class.from_pretrained(source, **kwargs)`` seeded with ``seed`` (a new head's
        initial weights), without the loading bar; E713 when ``source`` does not load."""
        import torch
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        try:
            torch.manual_seed(self.seed)
            return auto_class.from_pretrained(source, **kwargs)
        except (OSError, ValueError) as err:
            raise ModelError(
                Errors.E713_load_transformer_encoder.format(source=source, err=err)
            ) from None
        finally:
            hf_logging.enable_progress_bar()

    def _encode(self, texts1: list[str], texts2: list[str], device: Any) -> dict[str, Any]:
        encoded = self.tokenizer_(
            texts1,
            texts2,
            truncation=True,
            max_length=self.max_length,
            padding=True,
            return_tensors="pt",
        )
        return {k: v.to(device) for k, v in encoded.items()}

    def _set_threads(self) -> None:
        if self.num_threads:
            import torch

            torch.set_num_threads(int(self.num_threads))

    def _source(self) -> str:
        """The encoder training starts from: ``model_name_or_path``, or the network folder when
        that is a saved parakit model (intermediate training: fine-tune a fine-tuned model)."""
        from parakit.offline import resolve_model

        source = resolve_model(self.model_name_or_path)
        path = Path(source)
        if (path / MODEL_FILE).is_file() and (path / "network").is_dir():
            return str(path / "network")
        check_pretrained(source)
        return source

    def _fit(self, data: PairInput, dev: PairInput | None) -> None:
        from transformers import AutoTokenizer

        self._set_threads()
        if self.epochs <= 0:
            raise ModelError(Errors.E712_epochs_must_positive.format(epochs=self.epochs))
        if self.learning_rates:
            return self._fit_learning_rates(data, dev)
        if self.selection_metric not in ClassificationEvaluator.METRICS:
            raise ModelError(
                Errors.E712_unknown_selection_metric.format(
                    selection_metric=self.selection_metric,
                    metrics=", ".join(ClassificationEvaluator.METRICS),
                )
            )
        evaluator = (
            ClassificationEvaluator(dev, name="dev", primary=self.selection_metric)
            if dev is not None
            else None
        )
        source = self._source()  # a folder that is not a model is said so, not wrapped here
        try:
            self.tokenizer_ = AutoTokenizer.from_pretrained(source)
        except (OSError, ValueError) as err:
            raise ModelError(
                Errors.E713_load_tokenizer.format(
                    model_name_or_path=self.model_name_or_path, err=err
                )
            ) from None
        texts1, texts2, labels = list(data.texts1), list(data.texts2), list(data.labels or [])
        if self.both_orders:
            texts1, texts2 = texts1 + list(data.texts2), texts2 + list(data.texts1)
            labels = labels + labels
        self._train(source, texts1, texts2, labels, evaluator)

    def _fit_learning_rates(self, data: PairInput, dev: PairInput | None) -> None:
        """The grid of ``learning_rates``: one copy per rate (:meth:`fit_grid`), the best on
        the development score kept; ``history_`` holds every rate's evaluations."""
        # what fit() learnt about the labels, and this call's callbacks, go to every copy
        known = {k: v for k, v in vars(self).items() if k.endswith("_") or k.startswith("_fit")}
        known["_soft_targets"] = getattr(self, "_soft_targets", False)
        history: list[dict[str, Any]] = []

        def fit_one(candidate: TransformerPairClassifier) -> None:
            vars(candidate).update(known)
            candidate._fit(data, dev)
            history.extend(candidate.history_)

        best, _ = self.fit_grid(self.learning_rates, fit_one)
        vars(self).update({k: v for k, v in vars(best).items() if k.endswith("_")})
        self.history_ = history

    def _train(
        self,
        source: str,
        texts1: list[str],
        texts2: list[str],
        labels: list[str],
        evaluator: ClassificationEvaluator | None,
    ) -> None:
        """Train at ``learning_rate`` with the one trainer
        (:func:`parakit.models.training.train_transformer`); ``network_`` keeps the best weights."""
        import torch

        torch.manual_seed(self.seed)
        network = self._build_network(source).to(self.device_)

        # tokenised once, not in every collate call; each batch is padded to its own longest
        # pair, and with group_by_length the trainer draws batches of similar lengths
        examples = self._tokenised_examples(texts1, texts2)

        def collate(batch: list[dict[str, Any]]) -> dict[str, Any]:
            indexes = [example["index"] for example in batch]
            features = [{k: v for k, v in ex.items() if k != "index"} for ex in batch]
            encoded = self.tokenizer_.pad(features, padding=True, return_tensors="pt")
            targets = self._targets([labels[i] for i in indexes])
            return {"encoded": dict(encoded), "targets": targets}

        def loss(model: Any, batch: dict[str, Any]) -> Any:
            return self._loss(model, batch["encoded"], batch["targets"])

        # the evaluator scores this classifier with the network being trained
        self.network_ = network
        try:
            result = train_transformer(
                network,
                examples,
                collate,
                loss,
                self.train_settings(len(labels)),
                evaluator=evaluator,
                target=self,
                output_dir=self.checkpoint_dir(),
                resume=self.resume,
                signature=self.run_signature(
                    n_pairs=len(labels), classes=[str(c) for c in self.classes_]
                ),
                callbacks=getattr(self, "_fit_callbacks", ()),
            )
        except BaseException:
            del self.network_
            raise
        for entry in result.history:
            entry["learning_rate"] = self.learning_rate
        if result.stopped and result.history:
            result.history[-1]["stopped"] = True
        self.history_: list[dict[str, Any]] = result.history
        self.best_score_ = (result.best_score if evaluator is not None else 0.0) or 0.0
        self.best_learning_rate_ = self.learning_rate
        self.network_.eval()

    def _tokenised_examples(self, texts1: list[str], texts2: list[str]) -> list[dict[str, Any]]:
        """Each pair tokenised (truncated to ``max_length``, not padded), with its index."""
        encoded = self.tokenizer_(texts1, texts2, truncation=True, max_length=self.max_length)
        keys = list(encoded.keys())
        return [{"index": i, **{k: encoded[k][i] for k in keys}} for i in range(len(texts1))]

    def run_signature(self, **data: Any) -> dict[str, Any]:
        signature = super().run_signature(**data)
        if not getattr(self, "_soft_targets", False):
            signature.pop("soft_loss", None)  # checkpoints of hard-label runs stay resumable
        return signature

    def _network_proba(self, network: Any, data: PairInput, device: Any) -> np.ndarray:
        import torch

        lengths = np.array([len(a) + len(b) for a, b in zip(data.texts1, data.texts2, strict=True)])
        order = np.argsort(-lengths, kind="stable")  # similar lengths per batch: less padding
        out = np.zeros((len(data), len(self.classes_)))
        size = max(1, int(self.eval_batch_size))
        with torch.inference_mode():
            for i in range(0, len(order), size):
                batch = order[i : i + size]
                t1 = [data.texts1[j] for j in batch]
                t2 = [data.texts2[j] for j in batch]
                with autocast(self.precision, device):
                    proba = self._probabilities(network, self._encode(t1, t2, device)).float()
                    if self.predict_both_orders:
                        proba = (
                            proba
                            + self._probabilities(network, self._encode(t2, t1, device)).float()
                        ) / 2
                out[batch] = proba.cpu().numpy()
        return out

    def _predict_proba(self, data: PairInput) -> np.ndarray:
        self._set_threads()
        self.network_.eval()
        return self._network_proba(self.network_, data, self.device_)

    def _save_state(self, folder: Path) -> dict[str, Any]:
        target = folder / "network"
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        self._save_network(target)
        self.tokenizer_.save_pretrained(str(target))
        return {
            "best_score": getattr(self, "best_score_", None),
            "best_learning_rate": getattr(self, "best_learning_rate_", None),
            "history": getattr(self, "history_", []),
        }

    def _load_state(self, folder: Path, state: dict[str, Any]) -> None:
        from transformers import AutoTokenizer

        source = folder / "network"
        if not source.is_dir():
            raise ModelError(Errors.E710_network_folder_missing.format(folder=folder))
        self.tokenizer_ = AutoTokenizer.from_pretrained(str(source))
        self._load_network(source)
        self.network_.to(self.device_).eval()
        self.best_score_ = state.get("best_score")
        self.best_learning_rate_ = state.get("best_learning_rate")
        self.history_ = state.get("history", [])


def soft_label_loss(logits: Any, soft: Any, kind: str = "ce") -> Any:
    """The distillation loss of a binary head: ``logits`` (batch, 2) against P(paraphrase).

    ``ce``: ``-(p log q + (1 - p) log(1 - q))`` with ``q`` the student's P(paraphrase) (the
    cross-entropy to the teacher's distribution); ``mse``: ``(q - p)²``. Means over the batch.

    Example:
        >>> import torch
        >>> round(float(soft_label_loss(torch.zeros(1, 2), torch.tensor([0.25]))), 6)  # log 2
        0.693147
        >>> float(soft_label_loss(torch.zeros(1, 2), torch.tensor([0.25]), "mse"))
        0.0625
    """
    log_q = logits.log_softmax(dim=-1)
    if kind == "mse":
        return ((log_q[:, 1].exp() - soft) ** 2).mean()
    return -(soft * log_q[:, 1] + (1 - soft) * log_q[:, 0]).mean()


@hyperparameters
class CrossEncoderClassifier(TransformerPairClassifier):
    """A Hugging Face encoder with a sequence-classification head over the pair (M7).

    Args:
        model_name_or_path: encoder id or local folder (e.g. the offline MiniLM), or a saved
            parakit cross-encoder: training then continues from its network and head
            (intermediate training, e.g. on mined pairs before the target corpus).
        max_length: tokens per pair (truncation); 64 is enough for tweets, 128 for news.
        learning_rate: AdamW learning rate (when ``learning_rates`` is None).
        learning_rates: a grid, e.g. ``[1e-5, 2e-5, 3e-5, 5e-5]`` (MultiPIT); one model is
            trained per rate and the best on development F1 is kept.
        epochs: training epochs (the recipe uses at most 5).
        batch_size: effective batch size (32 in the recipe).
        micro_batch_size: pairs per forward pass; gradients are accumulated over
            ``batch_size / micro_batch_size`` passes (lower it to save memory).
        warmup_ratio: share of steps with linear warm-up.
        weight_decay: AdamW weight decay (not on biases and LayerNorm weights).
        adam_epsilon: AdamW epsilon.
        eval_steps: evaluate every this many optimizer steps; None = the recipe's rule.
        early_stopping_patience: stop after this many evaluations without improvement.
        max_steps: cap on optimizer steps per learning rate (time budgets on CPU).
        selection_metric: ``f1`` (positive-class F1; macro F1 for multi-class), ``macro_f1``,
            ``weighted_f1`` or ``accuracy``.
        both_orders: also train on (text2, text1).
        predict_both_orders: average the probabilities of both orders when predicting.
        precision: ``auto`` (bf16 autocast on CPUs with AMX/AVX512-BF16 and on bf16
            GPUs, fp16 on older GPUs, fp32 elsewhere), ``fp32``, ``bf16`` or ``fp16``
            (training and prediction; :mod:`parakit.vectors.precision`).
        seed: seed of initialisation, dropout and batch order.
        output_dir: checkpoint folder (resumable training); None keeps the best model in memory.
        resume: continue from checkpoints found in ``output_dir``.
        device: ``cpu``, ``cuda``...; None = CUDA when available.
        num_threads: torch CPU threads (None = torch's default).
        eval_batch_size: pairs per batch when predicting.
        progress: show a progress bar.
        soft_loss: the loss of :meth:`fit_soft` (knowledge distillation): ``ce`` (cross-entropy
            against the teacher's distribution ``[1 - p, p]``, i.e. BCE on the probability) or
            ``mse`` (squared error of the predicted P(paraphrase)).
        group_by_length: draw training batches of pairs of similar token lengths (the
            trainer's length-grouped sampling: less padding, the same data each epoch).
    """

    model_type = "cross-encoder"

    model_name_or_path: str = ""
    max_length: int = 128
    learning_rate: float = 2e-5
    learning_rates: list[float] | None = None
    epochs: int = 5
    batch_size: int = 32
    micro_batch_size: int = 16
    warmup_ratio: float = 0.06
    weight_decay: float = 0.01
    adam_epsilon: float = 1e-8
    eval_steps: int | None = None
    early_stopping_patience: int | None = None
    max_steps: int | None = None
    selection_metric: str = "f1"
    both_orders: bool = False
    predict_both_orders: bool = False
    precision: str = "auto"
    seed: int = 0
    output_dir: str | None = None
    resume: bool = True
    device: str | None = None
    num_threads: int | None = None
    eval_batch_size: int = 64
    progress: bool = True
    soft_loss: str = "ce"
    group_by_length: bool = True

    def fit_soft(
        self,
        X: Any,
        texts2: Any = None,
        soft: Any = None,
        *,
        eval_set: Any = None,
        key: str = "teacher_p",
    ) -> CrossEncoderClassifier:
        """Train a binary cross-encoder on soft labels, P(paraphrase) per pair (distillation).

        Args:
            X: a PairSet (soft labels in ``pair.metadata[key]`` unless ``soft`` is given) or the
                first text column.
            texts2: the second text column (with ``X`` as texts).
            soft: P(paraphrase) of each pair in [0, 1], e.g. a teacher's
                :meth:`~parakit.models.base.PairClassifier.paraphrase_proba`.
            eval_set: gold-labelled binary development pairs for model selection.
            key: the metadata key holding the soft label; dots go into nested dicts
                (``prediction.p_paraphrase`` reads what ``parakit identify predict`` writes).

        Returns:
            self, a binary classifier with classes ``["0", "1"]``.

        Raises:
            ModelError: a soft label is missing or outside [0, 1] (E702, E704), lengths differ
                (E706), ``soft_loss`` is unknown (E712).
        """
        from parakit.labels import get_scheme
        from parakit.models.base import as_pair_input

        data = as_pair_input(X, texts2)
        if soft is None:
            soft = []
            for index, pair in enumerate(X):
                value: Any = getattr(pair, "metadata", {})
                for part in key.split("."):
                    value = value.get(part) if isinstance(value, dict) else None
                if value is None:
                    raise ModelError(
                        Errors.E702_pair_record_soft.format(
                            data_ids_index=data.ids[index], index_1=index + 1, key=key
                        )
                    )
                soft.append(value)
        values = np.asarray(soft, dtype=np.float64).ravel()
        if len(values) != len(data):
            raise ModelError(
                Errors.E706_pairs_but_soft.format(n_data=len(data), n_values=len(values))
            )
        outside = np.flatnonzero(~((values >= 0) & (values <= 1)))  # NaN too
        if outside.size:
            bad = int(outside[0])
            raise ModelError(
                Errors.E704_soft_label_pair.format(
                    values_bad=values[bad], data_ids_bad=data.ids[bad]
                )
            )
        if self.soft_loss not in ("ce", "mse"):
            raise ModelError(Errors.E712_unknown_soft_loss.format(soft_loss=self.soft_loss))
        self.classes_ = np.array(["0", "1"], dtype=object)
        self.label_type_ = "str"
        self.scheme_ = get_scheme("binary").spec()
        dev = self._dev_input(eval_set, ["0", "1"])
        # the loop carries the soft labels as strings; _targets turns them into floats
        soft_data = PairInput(data.texts1, data.texts2, [repr(float(v)) for v in values], data.ids)
        self._soft_targets = True
        try:
            self._fit(soft_data, dev)
        finally:
            self._soft_targets = False
        return self

    def _targets(self, labels: list[str]) -> dict[str, Any]:
        if getattr(self, "_soft_targets", False):
            import torch

            return {"soft": torch.tensor([float(v) for v in labels], dtype=torch.float32)}
        return super()._targets(labels)

    def _build_network(self, source: str) -> Any:
        from transformers import AutoModelForSequenceClassification
        from transformers.utils import logging as hf_logging

        labels = [str(c) for c in self.classes_]
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # the new head's "newly initialized" notice is expected
        try:
            return self._pretrained(
                AutoModelForSequenceClassification,
                source,
                num_labels=len(labels),
                id2label=dict(enumerate(labels)),
                label2id={label: i for i, label in enumerate(labels)},
                ignore_mismatched_sizes=True,
            )
        finally:
            hf_logging.set_verbosity(verbosity)

    def _loss(self, network: Any, encoded: dict[str, Any], targets: dict[str, Any]) -> Any:
        import torch.nn.functional as F

        logits = network(**encoded).logits.float()
        if "soft" in targets:
            return soft_label_loss(logits, targets["soft"], self.soft_loss)
        return F.cross_entropy(logits, targets["labels"])

    def _probabilities(self, network: Any, encoded: dict[str, Any]) -> Any:
        return network(**encoded).logits.float().softmax(dim=-1)

    def _save_network(self, folder: Path) -> None:
        from parakit.models.card import write_cross_encoder_layout

        self.network_.save_pretrained(str(folder))
        # sentence_transformers.CrossEncoder(model folder) opens it (modules.json -> network/)
        write_cross_encoder_layout(folder.parent, folder.name, self.max_length)

    def _load_network(self, folder: Path) -> None:
        from transformers import AutoModelForSequenceClassification

        self.network_ = AutoModelForSequenceClassification.from_pretrained(str(folder))
