"""Paraphrase retrieval evaluation (T18, journal §8.1, Figs. 8–10).

Candidates are all unique statements of a test set. For every pair (s1, s2), s1 is the query and
the rank of s2 among all other candidates by cosine similarity is recorded (the query itself is
not a candidate; rank 1 = best; a tie goes to the target: rank = 1 + number of candidates
scoring strictly higher). Reported:

* ``top1`` / ``top{N}`` accuracy over positive pairs (binary reading of the scheme, Turku loose:
  labels 3 and 4);
* the average rank in percent per label class, ``100 · (rank − 1) / n_candidates`` (0 % =
  always first; 5 % = on average 6th of 100), classes ``1``, ``2``, ``3``, ``4<>`` (label 4
  with a subsumption flag) and ``4``; flags ``i`` and ``s`` are ignored.

Example:
    >>> from parakit.schema import Pair, PairSet
    >>> from parakit.vectors.encode import TfidfEncoder
    >>> ps = PairSet([Pair("0", "the cat sat", "the cat sat down", "4"),
    ...               Pair("1", "a dog barked", "the dog barked", "3")], scheme="turku")
    >>> ev = RetrievalEvaluator(ps, top_n=(1,))
    >>> ev(TfidfEncoder().fit(ev.candidates_))["top1"]
    1.0
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import Errors, EvaluationError
from parakit.evaluate.base import Evaluator
from parakit.io.atomic import save_figure, save_json
from parakit.labels import get_scheme
from parakit.schema import PairSet

CLASS_ORDER = ("1", "2", "3", "4<>", "4")


def label_class(label: str | None) -> str | None:
    """The Fig. 9–11 class of a Turku label: 1, 2, 3, 4<> (subsumption) or 4; None for x/None.

    Example:
        >>> [label_class(x) for x in ("2", "4<i", "4>", "4s", "4", "x")]
        ['2', '4<>', '4<>', '4', '4', None]
    """
    turku = get_scheme("turku")
    if label and not turku.is_valid(label):
        return label  # another scheme's label is its own class
    if turku.base_of(label) != "4":
        return turku.base_of(label)
    parsed = turku.parse(label)
    return "4<>" if parsed.has("<") or parsed.has(">") else "4"


def check_top_n(top_n: Sequence[int]) -> tuple[int, ...]:
    """The top-N cut-offs as a tuple; a cut-off below 1 is refused (E960)."""
    top_n = tuple(top_n)
    if any(n < 1 for n in top_n):
        raise EvaluationError(Errors.E960_top_cut_offs.format(top_n=list(top_n)))
    return top_n


def rank_targets(
    query_vectors: Any,
    candidate_vectors: Any,
    query_ids: np.ndarray,
    target_ids: np.ndarray,
    chunk: int = 256,
) -> np.ndarray:
    """1-based rank of each target among all candidates except the query itself.

    Vectors are L2-normalised rows (dense arrays or scipy sparse); scores are inner products.
    Memory: ``chunk × n_candidates`` floats at a time (lower ``chunk`` to save memory).
    """
    import scipy.sparse as sp

    n = len(query_ids)
    ranks = np.zeros(n, dtype=np.int64)
    cand_t = candidate_vectors.T
    for start in range(0, n, chunk):
        q = query_vectors[start : start + chunk]
        scores = q @ cand_t
        scores = scores.toarray() if sp.issparse(scores) else np.asarray(scores)
        rows = np.arange(len(scores))
        target = scores[rows, target_ids[start : start + chunk]]
        scores[rows, query_ids[start : start + chunk]] = -np.inf
        ranks[start : start + chunk] = 1 + (scores > target[:, None]).sum(axis=1)
    return ranks


class RetrievalEvaluator(Evaluator):
    """Rank-based paraphrase retrieval on a labelled pair set (sentence-transformers protocol).

    Args:
        pairs: labelled pairs; every unique statement (text1 and text2) is a candidate.
        name: prefix of the metric keys.
        top_n: cut-offs for top-N accuracy over positive pairs.
        reading: binary reading for "positive" (None: the scheme's default).
        batch_size: queries scored at a time.

    Attributes:
        candidates_: the unique statements (fit a TF-IDF encoder on them for the baseline).
        primary_metric: ``{name}_top1``.

    ``evaluator(model, output_path=None) -> dict[str, float]``: ``model`` is anything with
    ``encode(texts)`` (sentence-transformers models, parakit encoders). Results per pair are in
    ``ranks_`` after a call; with ``output_path`` the metrics are written as JSON.
    """

    primary = "top1"

    def __init__(
        self,
        pairs: PairSet,
        name: str = "",
        top_n: Sequence[int] = (1, 5, 10),
        reading: str | None = None,
        batch_size: int = 256,
    ) -> None:
        self.pairs = pairs
        self.name = name
        self.top_n = check_top_n(top_n)
        self.reading = reading
        self.batch_size = batch_size
        index: dict[str, int] = {}
        for pair in pairs:
            for text in (pair.text1, pair.text2):
                index.setdefault(text, len(index))
        if not pairs:
            raise EvaluationError(Errors.E962_retrieval_evaluation_needs)
        if all(p.label is None for p in pairs):  # nothing to measure: no positives, no classes
            raise EvaluationError(Errors.E961_pair_gold_label.format(missing=pairs[0].id))
        self.candidates_ = list(index)
        self._q = np.asarray([index[p.text1] for p in pairs])
        self._t = np.asarray([index[p.text2] for p in pairs])
        self._binary = np.asarray([(-1 if b is None else b) for b in pairs.binary_labels(reading)])
        self._classes = [label_class(p.label) for p in pairs]

    def encode(self, model: Any) -> Any:
        return model.encode(self.candidates_)

    def __call__(
        self, model: Any, output_path: str | Path | None = None, epoch: int = -1, steps: int = -1
    ) -> dict[str, float]:
        vectors = self.encode(model)
        if hasattr(vectors, "detach"):
            vectors = vectors.detach().cpu().numpy()
        if isinstance(vectors, np.ndarray):
            vectors = vectors / np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
        ranks = rank_targets(vectors[self._q], vectors, self._q, self._t, self.batch_size)
        self.ranks_ = ranks
        metrics = self.compute_metrics(ranks)
        if output_path is not None:
            path = Path(output_path)
            target = path / f"{self.name or 'retrieval'}_results.json" if path.is_dir() else path
            save_json(target, metrics, indent=2)
        return metrics

    def compute_metrics(self, ranks: np.ndarray) -> dict[str, float]:
        """Top-N accuracy over positives and average rank % per class for given ranks."""
        n_cand = len(self.candidates_)
        prefix = f"{self.name}_" if self.name else ""
        out: dict[str, float] = {f"{prefix}n_candidates": float(n_cand)}
        positive = self._binary == 1
        out[f"{prefix}n_positive"] = float(positive.sum())
        for n in self.top_n:
            out[f"{prefix}top{n}"] = (
                float((ranks[positive] <= n).mean()) if positive.any() else float("nan")
            )
        pct = 100.0 * (ranks - 1) / n_cand
        classes = np.asarray([c or "" for c in self._classes])
        for cls in CLASS_ORDER:
            mask = classes == cls
            if mask.any():
                out[f"{prefix}avg_rank_pct_{cls}"] = float(pct[mask].mean())
                out[f"{prefix}n_{cls}"] = float(mask.sum())
        return out


def plot_retrieval(
    results: dict[str, dict[str, float]],
    path: str | Path,
    name: str = "",
    title: str | None = None,
) -> Path:
    """Figs. 8–10 layout: top-1 accuracy per model, and average rank % per label class per model.

    Args:
        results: model name -> metrics of :class:`RetrievalEvaluator`.
        path: PNG (or any matplotlib format) to write.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    prefix = f"{name}_" if name else ""
    models = list(results)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    top1 = [100 * results[m][f"{prefix}top1"] for m in models]
    bars = ax1.bar(models, top1, color="tab:blue")
    ax1.bar_label(bars, fmt="%.1f")
    ax1.set_ylabel("top-1 accuracy of positive pairs (%)")
    ax1.set_title("Top-1 retrieval (Fig. 8)")
    classes = [
        c for c in CLASS_ORDER if any(f"{prefix}avg_rank_pct_{c}" in results[m] for m in models)
    ]
    width = 0.8 / max(1, len(models))
    for i, model in enumerate(models):
        values = [results[model].get(f"{prefix}avg_rank_pct_{c}", np.nan) for c in classes]
        bars = ax2.bar(np.arange(len(classes)) + i * width, values, width, label=model)
        ax2.bar_label(bars, fmt="%.1f", fontsize=7)
    ax2.set_xticks(np.arange(len(classes)) + width * (len(models) - 1) / 2, classes)
    ax2.set_xlabel("label")
    ax2.set_ylabel("average rank (%, lower is better)")
    ax2.set_title("Average rank per label (Figs. 9–10)")
    ax2.legend()
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, path)
