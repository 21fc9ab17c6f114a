"""Large-scale retrieval evaluation (T19, journal §8.2, Fig. 11).

The statements of a test set are added to a large distractor collection; for each pair
(s1, s2) the index is queried with s1 and the rank of s2 among everything else is recorded, up
to ``max_rank`` (2048 in the paper, the technical limit of GPU FAISS; "NA" beyond). Reported:
top-N accuracy for N = 1, 10, 100, 1000, 2048 per label class (``3``, ``4<>``, ``4``, and ``1``/
``2`` when present).

Example:
    >>> ev = LargeScaleEvaluator(test_pairs)  # doctest: +SKIP
    >>> ev(encoder, distractors=["..."] * 10**6)  # doctest: +SKIP
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from more_itertools import chunked

from parakit.errors import Errors, EvaluationError
from parakit.evaluate.base import Evaluator
from parakit.evaluate.retrieval import CLASS_ORDER, check_top_n, label_class
from parakit.io.atomic import save_figure, save_json
from parakit.schema import PairSet
from parakit.vectors.index import VectorIndex

TOP_N = (1, 10, 100, 1000, 2048)


class LargeScaleEvaluator(Evaluator):
    """Rank of s2 for query s1 among a large collection; top-N accuracy per label class.

    Args:
        pairs: labelled test pairs.
        top_n: cut-offs (the paper's 1, 10, 100, 1000, 2048).
        max_rank: neighbours retrieved per query (ranks beyond are "NA").
        name: metric key prefix.
        chunk_size: distractors embedded and added to the index at a time (bounds memory).
        index_kind, nprobe: passed to :class:`~parakit.vectors.index.VectorIndex` when the
            evaluator builds the index itself.
    """

    primary = "top10_4"

    def __init__(
        self,
        pairs: PairSet,
        top_n: Sequence[int] = TOP_N,
        max_rank: int = 2048,
        name: str = "",
        chunk_size: int = 20_000,
        index_kind: str = "auto",
        nprobe: int | None = None,
    ) -> None:
        self.pairs = pairs
        self.top_n = check_top_n(top_n)
        if max_rank < 1:
            raise EvaluationError(Errors.E960_max_rank_least.format(max_rank=max_rank))
        self.max_rank = max_rank
        self.name = name
        self.chunk_size = chunk_size
        self.index_kind = index_kind
        self.nprobe = nprobe

    def __call__(
        self,
        model: Any,
        output_path: str | Path | None = None,
        epoch: int = -1,
        steps: int = -1,
        *,
        distractors: Iterable[str] | None = None,
        index: VectorIndex | None = None,
    ) -> dict[str, float]:
        """Evaluate ``model`` (``encode(texts)``) against ``distractors`` or a built ``index``.

        With ``index`` (e.g. from ``parakit mine run``'s work folder, built with the same
        model), the test statements are added to it with ids after its last row.
        """
        statements: dict[str, int] = {}
        for pair in self.pairs:
            for text in (pair.text1, pair.text2):
                statements.setdefault(text, len(statements))
        test_vectors = np.asarray(model.encode(list(statements)), dtype=np.float32)
        if index is None:
            if distractors is None:
                raise EvaluationError(Errors.E962_give_distractors_built)
            chunks: list[np.ndarray] = []
            # the collection is a set of unique sentences (as in the paper): a distractor equal
            # to a test statement is that statement, not a rival of it
            unique = (t for t in distractors if t not in statements)
            for batch in chunked(unique, self.chunk_size):
                chunks.append(np.asarray(model.encode(batch), dtype=np.float32))
            chunks.append(test_vectors)
            n = sum(len(c) for c in chunks)
            index = VectorIndex(kind=self.index_kind, nprobe=self.nprobe).build(
                lambda: iter(chunks), n=n
            )
            offset = n - len(test_vectors)
        else:
            offset = index.ntotal_
            index.index_.add_with_ids(
                test_vectors, np.arange(offset, offset + len(test_vectors), dtype=np.int64)
            )
            index.ntotal_ += len(test_vectors)
        self.n_collection_ = index.ntotal_
        queries = np.asarray([statements[p.text1] for p in self.pairs])
        targets = np.asarray([statements[p.text2] for p in self.pairs]) + offset
        ranks = np.zeros(len(self.pairs), dtype=np.int64)  # 0 = not found ("NA")
        for start in range(0, len(queries), 256):
            rows = queries[start : start + 256]
            _, ids = index.search(test_vectors[rows], self.max_rank + 1)
            for i, (hits, query) in enumerate(zip(ids, rows + offset, strict=True)):
                hits = hits[(hits != query) & (hits >= 0)][: self.max_rank]
                found = np.flatnonzero(hits == targets[start + i])
                ranks[start + i] = found[0] + 1 if len(found) else 0
        self.ranks_ = ranks
        metrics = self.compute_metrics(ranks)
        if output_path is not None:
            save_json(output_path, metrics, indent=2)
        return metrics

    def compute_metrics(self, ranks: np.ndarray) -> dict[str, float]:
        classes = np.asarray([label_class(p.label) or "" for p in self.pairs])
        out: dict[str, float] = {self.key("n_collection"): float(self.n_collection_)}
        for cls in CLASS_ORDER:
            mask = classes == cls
            if not mask.any():
                continue
            found = ranks[mask]
            out[self.key(f"n_{cls}")] = float(mask.sum())
            for n in self.top_n:
                out[self.key(f"top{n}_{cls}")] = float(((found > 0) & (found <= n)).mean())
            out[self.key(f"na_{cls}")] = float((found == 0).mean())
        return out


def plot_large_scale(
    results: dict[str, dict[str, float]],
    path: str | Path,
    name: str = "",
    top_n: Sequence[int] = TOP_N,
    classes: Sequence[str] = ("4", "4<>", "3"),
) -> Path:
    """Fig. 11 layout: per model and class, a stacked bar of the share of pairs whose target is
    at rank 1, 2–10, 11–100, ... , and NA (beyond ``max(top_n)``), with percentages in white."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(results)
    labels = [f"≤{top_n[0]}"] + [f"{a + 1}–{b}" for a, b in itertools.pairwise(top_n)]
    labels.append("NA")
    fig, ax = plt.subplots(figsize=(2 + 1.6 * len(models) * len(classes), 4))
    xs, names = [], []
    colours = plt.get_cmap("viridis")(np.linspace(0, 0.9, len(labels)))
    x = 0
    prefix = f"{name}_" if name else ""
    for model in models:
        for cls in classes:
            if f"{prefix}top{top_n[0]}_{cls}" not in results[model]:
                continue
            cumulative = [results[model][f"{prefix}top{n}_{cls}"] for n in top_n]
            shares = [cumulative[0], *list(np.diff(cumulative))]
            shares.append(results[model][f"{prefix}na_{cls}"])
            bottom = 0.0
            for share, colour in zip(shares, colours, strict=True):
                ax.bar(x, 100 * share, bottom=100 * bottom, color=colour, width=0.8)
                if share >= 0.04:
                    ax.text(
                        x,
                        100 * (bottom + share / 2),
                        f"{100 * share:.0f}",
                        ha="center",
                        va="center",
                        color="white",
                        fontsize=8,
                    )
                bottom += share
            xs.append(x)
            names.append(f"{model}\n{cls}")
            x += 1
        x += 0.5
    ax.set_xticks(xs, names, fontsize=8)
    ax.set_ylabel("% of pairs")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colours]
    ax.legend(handles, labels, title="rank of s2", bbox_to_anchor=(1.01, 1), loc="upper left")
    ax.set_title("Rank of the paraphrase among the collection (Fig. 11)")
    fig.tight_layout()
    return save_figure(fig, path)
