"""The one training loop of parakit's transformer models, on ``transformers.Trainer``.

The cross-encoders (M7, T14, distillation) and the generators (M11) describe *what* to train —
a network, examples, a collate function and a loss — and :func:`train_transformer` runs it with
the MultiPIT recipe (AdamW, weight decay off for biases and norms, linear decay after warm-up,
gradient accumulation up to an effective batch, gradient clipping at 1.0). What comes with
``Trainer``:

* **precision**: bf16 autocast where the hardware has it (``precision="auto"``, see
  :mod:`parakit.vectors.precision`; on CPUs with AMX/AVX512-BF16 too), fp16 with loss scaling on
  older GPUs;
* **checkpoint/resume**: every evaluation writes a checkpoint (weights, optimiser, scheduler,
  RNG states, data position) under ``output_dir``; a run started again with the same settings —
  also after the process was killed — continues from the last one, and a finished run is not
  trained again;
* **model selection** through the :class:`~parakit.evaluate.base.Evaluator` protocol: the
  evaluator scores the model at each evaluation, its ``primary_metric`` and
  ``greater_is_better`` pick the checkpoint that is loaded at the end, and early stopping
  counts evaluations without improvement.

What a family shares around the loop lives in :class:`TransformerEstimator`, the base of the
cross-encoders, the multi-head classifiers, the generators and the bi-encoder: the scikit-learn
parameter contract, one vocabulary (``model_name_or_path``, ``max_length``,
``batch_size``/``micro_batch_size``, ``precision``, ``seed``, ``eval_set``), the
:class:`TrainSettings` built from the estimator's own parameters, the checkpoint signature, the
learning-rate grid (``clone`` + ``set_params``), the device and the precision.

Nothing else in parakit steps an optimiser but the bi-encoder, which trains through
sentence-transformers' own ``Trainer`` subclass (``tests/models/test_training.py`` checks it).

Example:
    >>> plan_steps(128, batch_size=32, micro_batch_size=16, epochs=2)
    (2, 4, 8)
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from parakit.errors import Errors, ModelError
from parakit.evaluate.base import Evaluator
from parakit.models.base import Estimator
from parakit.vectors.precision import autocast, cpu_has_bf16, device_type, resolve_precision

#: the file in ``output_dir`` naming the settings and data a checkpoint belongs to
SIGNATURE_FILE = "signature.json"


@dataclass
class TrainSettings:
    """Optimisation settings (defaults: the MultiPIT recipe, App. C).

    Attributes:
        learning_rate: peak AdamW learning rate.
        epochs: maximum number of epochs.
        batch_size: effective batch (gradients accumulated over micro batches).
        micro_batch_size: examples per forward pass.
        eval_steps: evaluate (and checkpoint) every this many optimiser steps.
        warmup_ratio: share of steps with linear warm-up.
        weight_decay: AdamW weight decay (not on biases and norm weights).
        adam_epsilon: AdamW epsilon.
        max_grad_norm: gradient clipping.
        max_steps: cap on optimiser steps (None: all epochs).
        max_time: stop after this many seconds of this process (checked after each step; the
            schedule still spans all steps).
        early_stopping_patience: stop after this many evaluations without improvement.
        seed: seed of initialisation, dropout and data order.
        precision: ``auto``, ``fp32``, ``bf16`` or ``fp16`` (:mod:`parakit.vectors.precision`).
        device: ``cpu``, ``cuda``...; None: CUDA when available.
        progress: show the training bar.
        group_by_length: batches of examples of similar lengths (``Trainer``'s length-grouped
            sampler: examples are dicts with ``input_ids``); less padding per step.
    """

    learning_rate: float = 2e-5
    epochs: int = 5
    batch_size: int = 32
    micro_batch_size: int = 16
    eval_steps: int = 500
    warmup_ratio: float = 0.06
    weight_decay: float = 0.01
    adam_epsilon: float = 1e-8
    max_grad_norm: float = 1.0
    max_steps: int | None = None
    max_time: float | None = None
    early_stopping_patience: int | None = None
    seed: int = 0
    precision: str = "auto"
    device: str | None = None
    progress: bool = True
    group_by_length: bool = False


@dataclass
class TrainResult:
    """What :func:`train_transformer` returns; the network holds the selected weights.

    Attributes:
        history: one entry per evaluation: ``step``, ``epoch``, ``train_loss``, ``elapsed_s``
            (seconds since training started) and the evaluator's metrics (none without one).
        best_score: the evaluator's primary metric of the kept weights (None without one).
        best_step: the step of the kept weights.
        steps: optimiser steps done in all (over resumed runs too).
        stopped: early stopping or the time budget ended training before ``max_steps``.
    """

    history: list[dict[str, Any]] = field(default_factory=list)
    best_score: float | None = None
    best_step: int | None = None
    steps: int = 0
    stopped: bool = False


def plan_steps(
    n_examples: int,
    batch_size: int,
    micro_batch_size: int,
    epochs: int,
    max_steps: int | None = None,
) -> tuple[int, int, int]:
    """``(accumulation, steps_per_epoch, total_steps)`` as ``Trainer`` counts them."""
    micro = max(1, min(int(micro_batch_size), int(batch_size)))
    accumulation = max(1, math.ceil(batch_size / micro))
    micro_batches = math.ceil(n_examples / micro)
    steps_per_epoch = max(1, math.ceil(micro_batches / accumulation))
    total = steps_per_epoch * int(epochs)
    if max_steps:
        total = min(total, int(max_steps))
    return accumulation, steps_per_epoch, total


def recipe_eval_steps(total: int, steps_per_epoch: int, eval_steps: int = 500) -> int:
    """MultiPIT App. C: evaluate every ``eval_steps`` (500), or every epoch when training is
    shorter than three such intervals."""
    return steps_per_epoch if total < 3 * eval_steps else eval_steps


def _check_signature(folder: Path, signature: dict[str, Any] | None) -> None:
    """Refuse checkpoints of other settings or data (E714); record the signature of a new run."""
    if signature is None:
        return
    path = folder / SIGNATURE_FILE
    wanted = json.loads(json.dumps(signature, default=str))
    if path.exists():
        if json.loads(path.read_text(encoding="utf-8")) != wanted:
            raise ModelError(Errors.E714_checkpoints_were_made.format(folder=folder))
        return
    from parakit.io.atomic import atomic_write

    with atomic_write(path) as handle:  # creates the folder
        json.dump(wanted, handle, indent=2, sort_keys=True)


def _trainer_class() -> Any:
    from transformers import Trainer, TrainerCallback

    class _Budget(TrainerCallback):
        """The time budget, and an evaluation + checkpoint at the step training stops on."""

        def __init__(self, max_time: float | None, started: float) -> None:
            self.max_time, self.started = max_time, started

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            if self.max_time is not None and time.monotonic() - self.started >= self.max_time:
                control.should_training_stop = True
            if control.should_training_stop or state.global_step >= state.max_steps:
                control.should_log = True
                control.should_evaluate = args.eval_strategy != "no"
                control.should_save = True
            return control

    class _EvaluatorTrainer(Trainer):
        """``Trainer`` whose evaluation is a parakit :class:`Evaluator` called on ``target``."""

        def __init__(
            self,
            *args: Any,
            loss_fn: Callable[[Any, dict[str, Any]], Any],
            evaluator: Evaluator | None,
            target: Any,
            started: float,
            precision: str,
            **kwargs: Any,
        ) -> None:
            super().__init__(*args, **kwargs)
            self.precision, self.loss_fn, self.evaluator = precision, loss_fn, evaluator
            self.target, self.started = target, started
            # our loss is a mean over the micro batch: Trainer divides it by the accumulation
            self.model_accepts_loss_kwargs = False

        def compute_loss(
            self,
            model: Any,
            inputs: dict[str, Any],
            return_outputs: bool = False,
            num_items_in_batch: Any = None,
        ) -> Any:
            # our own autocast around the whole loss: Trainer's bf16 flag only wraps the model's
            # forward (accelerate), not a loss computed around it (tests/models/test_training.py
            # checks the loss sees bf16); on CUDA the flags add fp16 loss scaling as well
            with autocast(self.precision, self.args.device):
                loss = self.loss_fn(model, inputs)
            return (loss, None) if return_outputs else loss

        def evaluate(
            self,
            eval_dataset: Any = None,
            ignore_keys: list[str] | None = None,
            metric_key_prefix: str = "eval",
        ) -> dict[str, float]:
            assert self.evaluator is not None
            was_training = self.model.training
            self.model.eval()
            scores = self.evaluator(
                self.target, epoch=int(self.state.epoch or 0), steps=self.state.global_step
            )
            self.model.train(was_training)
            metrics = {f"{metric_key_prefix}_{k}": float(v) for k, v in scores.items()}
            # seconds since training started (not the evaluation's own duration)
            metrics[f"{metric_key_prefix}_elapsed_s"] = round(time.monotonic() - self.started, 1)
            self.log(metrics)
            self.control = self.callback_handler.on_evaluate(
                self.args, self.state, self.control, metrics
            )
            return metrics

    return _EvaluatorTrainer, _Budget


def logs_to_stderr(trainer: Any) -> Any:
    """Send a ``transformers`` (or sentence-transformers) ``Trainer``'s log dicts to stderr:
    its ``ProgressCallback`` and ``PrinterCallback`` print every log entry (``{'loss': ...}``)
    to stdout, which belongs to the command's own output (``--json``). Returns ``trainer``."""
    import contextlib
    import sys

    from transformers import PrinterCallback, ProgressCallback

    for base in (ProgressCallback, PrinterCallback):
        for callback in [c for c in trainer.callback_handler.callbacks if type(c) is base]:
            trainer.remove_callback(callback)

            class OnStderr(base):  # type: ignore[misc, valid-type]
                def on_log(self, *args: Any, **kwargs: Any) -> Any:
                    with contextlib.redirect_stdout(sys.stderr):
                        return super().on_log(*args, **kwargs)

            trainer.add_callback(OnStderr())
    return trainer


def train_transformer(
    network: Any,
    examples: Sequence[Any],
    collate: Callable[[list[Any]], dict[str, Any]],
    loss: Callable[[Any, dict[str, Any]], Any],
    settings: TrainSettings,
    *,
    evaluator: Evaluator | None = None,
    target: Any = None,
    output_dir: str | Path | None = None,
    resume: bool = True,
    signature: dict[str, Any] | None = None,
    callbacks: Sequence[Any] = (),
) -> TrainResult:
    """Train ``network`` on ``examples``; the selected weights are loaded into it at the end.

    Args:
        network: a ``torch.nn.Module`` (a Hugging Face model or any module).
        examples: training examples in any form ``collate`` understands.
        collate: a list of examples -> a dict of tensors (moved to the device by ``Trainer``).
        loss: ``loss(network, batch) -> scalar tensor``, the mean over the batch.
        settings: the recipe (:class:`TrainSettings`).
        evaluator: scores ``target`` at each evaluation; its ``primary_metric`` and
            ``greater_is_better`` select the weights kept. None: the last weights are kept.
        target: what ``evaluator`` is called on (e.g. the classifier that owns ``network``);
            default ``network``.
        output_dir: checkpoint folder. With ``resume``, a run with the same ``signature``
            continues from its last checkpoint there. None: a temporary folder, removed after.
        resume: continue from the last checkpoint in ``output_dir``.
        signature: JSON-able settings + data fingerprint; checkpoints of another signature are
            refused (E714).
        callbacks: extra ``transformers.TrainerCallback`` objects.

    Returns:
        :class:`TrainResult`.
    """
    from transformers import EarlyStoppingCallback, PrinterCallback, TrainingArguments
    from transformers.trainer_utils import get_last_checkpoint

    started = time.monotonic()
    micro = max(1, min(int(settings.micro_batch_size), int(settings.batch_size)))
    accumulation, _, total = plan_steps(
        len(examples), settings.batch_size, micro, settings.epochs, settings.max_steps
    )
    every = max(1, int(settings.eval_steps))
    kind = device_type(settings.device)
    precision = resolve_precision(settings.precision, kind)
    temporary = output_dir is None
    folder = Path(tempfile.mkdtemp(prefix="parakit-train-")) if temporary else Path(output_dir)
    try:
        _check_signature(folder, signature)
        selecting = evaluator is not None
        metric = f"eval_{evaluator.primary_metric}" if selecting else None
        args = TrainingArguments(
            output_dir=str(folder),
            learning_rate=settings.learning_rate,
            num_train_epochs=settings.epochs,
            max_steps=total,
            per_device_train_batch_size=micro,
            gradient_accumulation_steps=accumulation,
            warmup_steps=round(settings.warmup_ratio * total),
            lr_scheduler_type="linear",
            weight_decay=settings.weight_decay,
            adam_epsilon=settings.adam_epsilon,
            max_grad_norm=settings.max_grad_norm,
            eval_strategy="steps" if selecting else "no",
            eval_steps=every,
            save_strategy="steps",
            save_steps=every,
            # the best checkpoint and the latest (to resume from) are kept, older ones removed
            save_total_limit=1,
            load_best_model_at_end=selecting,
            metric_for_best_model=metric,
            greater_is_better=evaluator.greater_is_better if selecting else None,
            logging_strategy="steps",
            logging_steps=every,
            report_to="none",
            seed=settings.seed,
            data_seed=settings.seed,
            bf16=precision == "bf16" and kind == "cuda",
            fp16=precision == "fp16",
            use_cpu=kind == "cpu",
            dataloader_num_workers=0,
            train_sampling_strategy="group_by_length" if settings.group_by_length else "random",
            remove_unused_columns=False,
            disable_tqdm=not settings.progress or os.environ.get("TQDM_DISABLE") == "1",
            # a temporary folder is never resumed: weights only (the best model), no optimiser
            save_only_model=temporary,
        )
        extra = list(callbacks)
        if selecting and settings.early_stopping_patience:
            extra.append(EarlyStoppingCallback(int(settings.early_stopping_patience)))
        trainer_cls, budget = _trainer_class()
        trainer = trainer_cls(
            model=network,
            args=args,
            train_dataset=list(examples),
            # evaluation runs through the Evaluator; Trainer only needs to know there is one
            eval_dataset=[None] if selecting else None,
            data_collator=collate,
            callbacks=[budget(settings.max_time, started), *extra],
            loss_fn=loss,
            evaluator=evaluator,
            target=network if target is None else target,
            started=started,
            precision=precision,
        )
        if args.disable_tqdm:
            trainer.remove_callback(PrinterCallback)  # it prints every log entry to stdout
        logs_to_stderr(trainer)  # the progress bar's log lines: stderr, as the bar
        last = get_last_checkpoint(str(folder)) if (resume and folder.is_dir()) else None
        if not resume and not temporary:
            for old in folder.glob("checkpoint-*"):
                shutil.rmtree(old)
        trainer.train(resume_from_checkpoint=last)
        return _result(trainer.state, metric, total)
    finally:
        if temporary:
            shutil.rmtree(folder, ignore_errors=True)


def _result(state: Any, metric: str | None, total: int) -> TrainResult:
    """History (one entry per evaluation point) and the selection from ``Trainer``'s log."""
    by_step: dict[int, dict[str, Any]] = {}
    for entry in state.log_history:
        step = int(entry.get("step", 0))
        record = by_step.setdefault(step, {"step": step})
        if "loss" in entry:
            record["train_loss"] = float(entry["loss"])
        if "epoch" in entry:
            record["epoch"] = round(float(entry["epoch"]), 3)
        for key, value in entry.items():
            if key.startswith("eval_"):
                record[key[5:]] = value
    # an evaluation point has a training loss, evaluator metrics or both
    history = [by_step[s] for s in sorted(by_step) if s > 0 and set(by_step[s]) - {"step", "epoch"}]
    best_score = float(state.best_metric) if metric and state.best_metric is not None else None
    best_step = state.best_global_step if metric else state.global_step
    if metric and best_step is None and history:
        best_step = history[-1]["step"]
    return TrainResult(
        history=history,
        best_score=best_score,
        best_step=best_step,
        steps=int(state.global_step),
        stopped=int(state.global_step) < total,
    )


class TransformerEstimator(Estimator):
    """What every transformer family shares: parameters, settings, signature, grid, device.

    Subclasses keep the scikit-learn contract (hyperparameters are ``__init__`` keywords stored
    unchanged; :func:`sklearn.base.clone` and ``get_params``/``set_params`` work) and speak one
    vocabulary: ``model_name_or_path``, ``max_length``, ``batch_size``/``micro_batch_size``,
    ``precision``, ``seed`` (0), ``device`` (None: CUDA when available), ``eval_steps`` (None:
    the recipe's rule), ``output_dir``/``resume``, and ``eval_set`` for development data.
    """

    #: parameters of how a run goes, not of what it learns: outside the checkpoint signature
    RUN_PARAMS: ClassVar[frozenset[str]] = frozenset(
        {"device", "eval_batch_size", "generation_batch_size", "learning_rates", "max_time"}
        | {"num_threads", "output_dir", "progress", "resume"}
    )
    #: whether a higher selection score (:meth:`selection_score`) is better
    greater_is_better: ClassVar[bool] = True

    # -- device and precision ------------------------------------------------------------------
    @property
    def device_(self) -> Any:
        """The ``torch.device`` of ``device`` (None: CUDA when available, else the CPU)."""
        import torch

        return torch.device(self.device or device_type(None))

    def autocast(self) -> Any:
        """The autocast context of ``precision`` on this device
        (:mod:`parakit.vectors.precision`)."""
        return autocast(self.precision, self.device_)

    def trainer_precision(self) -> dict[str, bool]:
        """The ``bf16``/``fp16`` flags of a Hugging Face trainer that autocasts for us (the
        bi-encoder's): bf16 only where the device runs it natively (a CUDA GPU, or a CPU with
        AMX/AVX512-BF16 as :func:`~parakit.vectors.precision.cpu_has_bf16` detects)."""
        resolved = resolve_precision(self.precision, self.device_)
        native = self.device_.type == "cuda" or cpu_has_bf16()
        return {"bf16": resolved == "bf16" and native, "fp16": resolved == "fp16"}

    # -- training ------------------------------------------------------------------------------
    def train_settings(self, n_examples: int, **overrides: Any) -> TrainSettings:
        """The :class:`TrainSettings` of this estimator: each field from the parameter of the
        same name; ``micro_batch_size`` None is ``batch_size``; ``eval_steps`` None is the
        recipe's rule (:func:`recipe_eval_steps`)."""
        params = self.get_params(deep=False)
        names = {f.name for f in dataclasses.fields(TrainSettings)}
        values = {k: v for k, v in params.items() if k in names and v is not None}
        batch = int(values.get("batch_size", TrainSettings.batch_size))
        values["micro_batch_size"] = min(int(values.get("micro_batch_size") or batch), batch)
        if params.get("eval_steps") is None:
            _, per_epoch, total = plan_steps(
                n_examples,
                batch,
                values["micro_batch_size"],
                int(values.get("epochs", TrainSettings.epochs)),
                values.get("max_steps"),
            )
            values["eval_steps"] = recipe_eval_steps(total, per_epoch)
        values["device"] = str(self.device_)
        values.update(overrides)
        return TrainSettings(**values)

    def checkpoint_dir(self) -> Path | None:
        """``output_dir/lr-<learning_rate>``: one checkpoint folder per learning rate, so each
        run of a grid resumes on its own (None without ``output_dir``)."""
        if not getattr(self, "output_dir", None):
            return None
        return Path(self.output_dir) / f"lr-{self.learning_rate:g}"

    def run_signature(self, **data: Any) -> dict[str, Any]:
        """The checkpoint signature: the parameters that change what is learnt (not
        :attr:`RUN_PARAMS`) and ``data`` (sizes, classes); checkpoints of another signature are
        refused (E714)."""
        params = {k: v for k, v in self.get_params(deep=False).items() if k not in self.RUN_PARAMS}
        return json.loads(json.dumps({**params, **data}, default=str))

    def selection_score(self) -> float | None:
        """The development score the learning-rate grid compares (None: not evaluated)."""
        return getattr(self, "best_score_", None)

    def fit_grid(
        self, learning_rates: Sequence[float], fit: Callable[[Any], Any]
    ) -> tuple[Any, dict[float, float]]:
        """One copy per learning rate (``clone(self).set_params(learning_rate=...)``), trained
        by ``fit(copy)``; the copy with the best :meth:`selection_score` is returned with every
        rate's score (NaN where none). Copies write ``output_dir/lr-<rate>``."""
        from sklearn.base import clone

        grid = {"learning_rates": None} if "learning_rates" in self.get_params(deep=False) else {}
        scores: dict[float, float] = {}
        best, best_score = None, None
        for rate in learning_rates:
            candidate = clone(self).set_params(learning_rate=rate, **grid)
            fit(candidate)
            score = candidate.selection_score()
            scores[rate] = math.nan if score is None else float(score)
            better = score is not None and (
                best_score is None
                or (score > best_score if self.greater_is_better else score < best_score)
            )
            if best is None or better:
                best, best_score = candidate, score
        if best is None:
            raise ModelError(Errors.E712_learning_rate_grid)
        return best, scores


__all__ = [
    "TrainResult",
    "TrainSettings",
    "TransformerEstimator",
    "plan_steps",
    "recipe_eval_steps",
    "train_transformer",
]
