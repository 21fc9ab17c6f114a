"""The evaluator protocol every parakit evaluator follows (as in sentence-transformers).

``evaluator(model, output_path=None, epoch=-1, steps=-1) -> dict[str, float]``: scores
``model``, optionally writes the results under ``output_path`` and returns the metrics with keys
prefixed by ``name`` (``dev`` gives ``dev_f1``); :attr:`Evaluator.primary_metric` names the key
used for model selection and :attr:`Evaluator.greater_is_better` its direction. Training loops,
checkpoint selection and the CLI rely on nothing else.

Subclasses: :class:`~parakit.evaluate.classification.ClassificationEvaluator`,
:class:`~parakit.evaluate.generation.GenerationEvaluator`,
:class:`~parakit.evaluate.retrieval.RetrievalEvaluator`,
:class:`~parakit.evaluate.largescale.LargeScaleEvaluator`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from parakit.errors import EvaluationError


class Evaluator(ABC):
    """Base of the parakit evaluators.

    Attributes:
        name: prefix of the metric keys (``""``: no prefix).
        greater_is_better: whether a larger :attr:`primary_metric` is better.
        primary_metric: the key of the returned dict used for model selection.
    """

    name: str = ""
    greater_is_better: bool = True
    #: the unprefixed metric used for model selection; :attr:`primary_metric` prefixes it
    primary: str = ""

    @property
    def primary_metric(self) -> str:
        """The (prefixed) key used for model selection."""
        return self.key(self.primary)

    def key(self, metric: str) -> str:
        """``metric`` prefixed with :attr:`name`."""
        return f"{self.name}_{metric}" if self.name else metric

    def prefixed(self, metrics: dict[str, float]) -> dict[str, float]:
        """Every key of ``metrics`` prefixed with :attr:`name`, values as floats."""
        return {self.key(k): float(v) for k, v in metrics.items()}

    @abstractmethod
    def __call__(
        self, model: Any, output_path: str | Path | None = None, epoch: int = -1, steps: int = -1
    ) -> dict[str, float]:
        """Score ``model``; write results under ``output_path`` when given."""


__all__ = ["EvaluationError", "Evaluator"]
