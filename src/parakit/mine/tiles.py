"""Bootstrapping tiles (T16, journal §7.2, Fig. 7): where can classifier scores be trusted?

Candidate pairs are placed on a grid of lexical similarity (rows) × classifier confidence of the
negative class (columns), 5 × 5 tiles of width 0.2 by default. A manually annotated sample gives
the density of negatives (labels 1 and 2) per tile; rules then pick "safe" negatives and positives
from the whole candidate set, and their precision is estimated on the annotated sample.

Example:
    >>> import numpy as np
    >>> tiles = TileAnalysis().fit([0.05, 0.9, 0.92], [0.9, 0.1, 0.05], ["1", "4", "2"])
    >>> int(tiles.counts_.values.sum()), float(tiles.density_.iloc[0, 0])  # top row: high lex
    (3, 50.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import Errors, MineError
from parakit.io.atomic import save_figure
from parakit.labels import get_scheme
from parakit.schema import Pair, PairSet


@dataclass(frozen=True)
class SelectionRules:
    """The paper's rules (defaults): negatives = lexical similarity < 0.1 OR negative confidence
    > 0.4; positives = lexical similarity > 0.5 AND label-4 confidence ≥ 0.998."""

    neg_lex_max: float = 0.1
    neg_conf_min: float = 0.4
    pos_lex_min: float = 0.5
    pos_conf_min: float = 0.998

    def negatives(self, lex: np.ndarray, neg_conf: np.ndarray) -> np.ndarray:
        return (lex < self.neg_lex_max) | (neg_conf > self.neg_conf_min)

    def positives(self, lex: np.ndarray, pos_conf: np.ndarray) -> np.ndarray:
        return (lex > self.pos_lex_min) & (pos_conf >= self.pos_conf_min)


def _array(values: Any, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise MineError(Errors.E805_must_one_score.format(name=name))
    if np.isnan(array).any() or (array < 0).any() or (array > 1).any():
        raise MineError(Errors.E805_must_lie_without.format(name=name))
    return array


def _edge_decimals(bins: int) -> int:
    """As few decimals as label the tile edges ``i / bins`` exactly, 1 to 3: 0.2 (5 bins),
    0.25 (4), 0.05 (20); 3 where none is exact (3 bins)."""
    for digits in (1, 2):
        if all(round(i / bins, digits) * bins == i for i in range(bins + 1)):
            return digits
    return 3


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion (precision estimated from a small sample)."""
    if n == 0:
        return (float("nan"), float("nan"))
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, n, alpha=2 * (1 - _phi(z)), method="wilson")
    return float(low), float(high)


def _phi(z: float) -> float:
    from math import erf, sqrt

    return 0.5 * (1 + erf(z / sqrt(2)))


class TileAnalysis:
    """The 5 × 5 tile table of lexical similarity × negative confidence.

    Args:
        bins: tiles per axis (the paper: 5, width 0.2).
        negative_labels: base labels counted as negatives (Turku: 1 and 2).

    Attributes (after ``fit``):
        counts_: pairs per tile (rows: lexical similarity bins, high at the top, as in Fig. 7;
            columns: negative-confidence bins).
        negatives_: negatives per tile.
        density_: negative density in percent per tile (NaN where a tile is empty).
    """

    def __init__(self, bins: int = 5, negative_labels: Sequence[str] = ("1", "2")) -> None:
        self.bins = bins
        self.negative_labels = tuple(negative_labels)

    def _bin(self, values: np.ndarray) -> np.ndarray:
        return np.minimum((values * self.bins).astype(int), self.bins - 1)

    def fit(
        self, lex_similarity: Any, neg_confidence: Any, labels: Sequence[str | None]
    ) -> TileAnalysis:
        import pandas as pd

        lex = _array(lex_similarity, "lexical similarity")
        conf = _array(neg_confidence, "negative confidence")
        if not len(lex) == len(conf) == len(labels):
            raise MineError(
                Errors.E805_lengths_differ_similarities.format(
                    n_lex=len(lex), n_conf=len(conf), n_labels=len(labels)
                )
            )
        if self.bins < 1:
            raise MineError(Errors.E805_tiles_least_one.format(bins=self.bins))
        base = _bases(labels)
        known, negative = base != "", np.isin(base, self.negative_labels)
        if not known.any():
            raise MineError(Errors.E805_no_annotated_pair.format(n=len(base)))
        rows, cols = self._bin(lex[known]), self._bin(conf[known])
        counts = np.zeros((self.bins, self.bins), dtype=int)
        negs = np.zeros((self.bins, self.bins), dtype=int)
        np.add.at(counts, (rows, cols), 1)
        np.add.at(negs, (rows, cols), negative[known].astype(int))
        digits = _edge_decimals(self.bins)
        edges = [
            f"{i / self.bins:.{digits}f}–{(i + 1) / self.bins:.{digits}f}" for i in range(self.bins)
        ]
        index = pd.Index(edges[::-1], name="lexical similarity")
        columns = pd.Index(edges, name="negative confidence")
        self.counts_ = pd.DataFrame(counts[::-1], index=index, columns=columns)
        self.negatives_ = pd.DataFrame(negs[::-1], index=index, columns=columns)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.density_ = pd.DataFrame(
                100.0 * negs[::-1] / counts[::-1], index=index, columns=columns
            )
        return self

    def to_markdown(self) -> str:
        """The density table with counts, "density % (n)" per tile."""
        header = "| lex sim \\ neg conf | " + " | ".join(self.density_.columns) + " |"
        lines = [header, "|" + "---|" * (len(self.density_.columns) + 1)]
        for row in self.density_.index:
            cells = []
            for col in self.density_.columns:
                n = int(self.counts_.loc[row, col])
                cells.append("–" if n == 0 else f"{self.density_.loc[row, col]:.0f}% ({n})")
            lines.append(f"| {row} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def plot(self, path: str | Path, title: str | None = None) -> Path:
        """Heat map of negative density per tile, annotated with density and count (Fig. 7)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6.5, 5))
        image = ax.imshow(self.density_.values, cmap="RdYlGn_r", vmin=0, vmax=100)
        for i in range(self.bins):
            for j in range(self.bins):
                n = int(self.counts_.iat[i, j])
                text = "–" if n == 0 else f"{self.density_.iat[i, j]:.0f}%\n(n={n})"
                ax.text(j, i, text, ha="center", va="center", fontsize=8)
        ax.set_xticks(range(self.bins), self.density_.columns, fontsize=8)
        ax.set_yticks(range(self.bins), self.density_.index, fontsize=8)
        ax.set_xlabel("classifier confidence of the negative class")
        ax.set_ylabel("lexical similarity")
        ax.set_title(title or "Negative density per tile")
        fig.colorbar(image, ax=ax, label="% negatives (labels 1–2)")
        fig.tight_layout()
        return save_figure(fig, path)


def estimate_precision(
    lex_similarity: Any,
    neg_confidence: Any,
    pos_confidence: Any,
    labels: Sequence[str | None],
    rules: SelectionRules | None = None,
    negative_labels: Sequence[str] = ("1", "2"),
    positive_labels: Sequence[str] = ("3", "4"),
) -> dict[str, Any]:
    """Precision of the selection rules on an annotated sample, with Wilson 95 % intervals.

    Args:
        lex_similarity, neg_confidence, pos_confidence: per annotated pair.
        labels: the manual labels (Turku strings; flags ignored).
        rules: :class:`SelectionRules` (default: the paper's).
        negative_labels: base labels that make a selected negative correct.
        positive_labels: base labels that make a selected positive correct (default: 3 and 4,
            the loose binary reading; use ``("4",)`` for label-4 precision).

    Returns:
        ``{"rules", "negatives": {"selected", "correct", "precision", "ci95", "share"},
        "positives": {...}}`` where ``share`` is the fraction of the sample selected.
    """
    rules = rules or SelectionRules()
    lex = _array(lex_similarity, "lexical similarity")
    neg = _array(neg_confidence, "negative confidence")
    pos = _array(pos_confidence, "positive confidence")
    base = _bases(labels)
    known = base != ""
    out: dict[str, Any] = {"rules": asdict(rules), "n_annotated": int(known.sum())}
    for name, mask, good in (
        ("negatives", rules.negatives(lex, neg), np.isin(base, negative_labels)),
        ("positives", rules.positives(lex, pos), np.isin(base, positive_labels)),
    ):
        selected = mask & known
        correct = int((selected & good).sum())
        n = int(selected.sum())
        out[name] = {
            "selected": n,
            "correct": correct,
            "precision": correct / n if n else float("nan"),
            "ci95": wilson_interval(correct, n),
            "share": n / max(1, int(known.sum())),
        }
    return out


def select(
    lex_similarity: Any,
    neg_confidence: Any,
    pos_confidence: Any,
    rules: SelectionRules | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks (safe negatives, safe positives) over the whole candidate set.

    A pair meeting both rules (possible only with contradictory scores) is left out of both.
    """
    rules = rules or SelectionRules()
    lex = _array(lex_similarity, "lexical similarity")
    negatives = rules.negatives(lex, _array(neg_confidence, "negative confidence"))
    positives = rules.positives(lex, _array(pos_confidence, "positive confidence"))
    both = negatives & positives
    return negatives & ~both, positives & ~both


def _bases(labels: Sequence[str | None]) -> np.ndarray:
    """The Turku base label of every pair, ``""`` for ``x`` and unlabelled pairs."""
    turku = get_scheme("turku")
    return np.asarray([turku.base_of(label) or "" for label in labels], dtype=object)


def candidate_lex_similarity(pairs: PairSet) -> np.ndarray:
    """The lexical similarity of the tiles for every candidate pair.

    ``metadata['lex_similarity']`` when every pair has it (the opus-parsebank sample); otherwise
    the cosine of term-frequency vectors of character 2–4-grams (``char_wb``), the measure of
    the paper (§7.2) and of ``parakit similarity``'s ``char_tf_2_4`` column: it reproduces the
    sample's ``lex_similarity`` to a mean absolute difference of 0.0007 on opus-pb-dev.
    """
    if len(pairs) and all("lex_similarity" in p.metadata for p in pairs):
        return np.asarray([p.metadata["lex_similarity"] for p in pairs], dtype=np.float64)
    from parakit.text.similarity import CharNgramSimilarity

    texts1, texts2 = pairs.texts()
    similarity = CharNgramSimilarity(ngram_range=(2, 4), analyzer="char_wb", use_idf=False)
    return np.clip(np.asarray(similarity.score(texts1, texts2), dtype=np.float64), 0.0, 1.0)


def select_pairs(
    pairs: PairSet,
    neg_confidence: Any,
    pos_confidence: Any,
    rules: SelectionRules | None = None,
    lex_similarity: Any = None,
) -> tuple[PairSet, PairSet]:
    """Apply the tile rules to a whole candidate set (T16): (safe negatives, safe positives).

    Args:
        pairs: candidate pairs (e.g. ``parakit mine run`` output).
        neg_confidence, pos_confidence: per pair, as :func:`parakit.mine.rerank.tile_confidences`.
        rules: :class:`SelectionRules` (default: the paper's).
        lex_similarity: per pair (default: :func:`candidate_lex_similarity`).

    Returns:
        two pair sets, unlabelled, each pair's ``lex_similarity``, ``neg_conf`` and ``pos_conf``
        and its ``tile_selection`` (``negative``/``positive``) in metadata.
    """
    rules = rules or SelectionRules()
    lex = candidate_lex_similarity(pairs) if lex_similarity is None else lex_similarity
    neg = _array(neg_confidence, "negative confidence")
    pos = _array(pos_confidence, "positive confidence")
    if not len(neg) == len(pos) == len(pairs):
        raise MineError(
            Errors.E805_pairs_but_negative.format(
                n_pairs=len(pairs), n_neg=len(neg), n_pos=len(pos)
            )
        )
    negatives, positives = select(lex, neg, pos, rules)
    out: dict[str, list[Pair]] = {"negative": [], "positive": []}
    for i, pair in enumerate(pairs):
        kind = "negative" if negatives[i] else "positive" if positives[i] else None
        if kind is not None:
            meta = dict(pair.metadata, lex_similarity=float(lex[i]), neg_conf=float(neg[i]))
            meta.update(pos_conf=float(pos[i]), tile_selection=kind)
            out[kind].append(pair.replace(label=None, metadata=meta))
    return pairs.derive(out["negative"]), pairs.derive(out["positive"])


#: the columns of a scores CSV: the pair (``mine select --scores`` checks that every row names
#: the pair of its line) and its two confidences
SCORE_COLUMNS = ("id", "text1", "text2", "neg_conf", "pos_conf")


def write_confidences(path: str | Path, pairs: PairSet, neg: Any, pos: Any) -> Path:
    """Write the tile confidences of ``pairs`` as a scores CSV (:data:`SCORE_COLUMNS`), so that
    other rules can be tried on them (``mine tiles --scores``, ``mine select --scores``)."""
    import csv

    from parakit.io.atomic import atomic_write

    with atomic_write(path, newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(SCORE_COLUMNS)
        writer.writerows(
            [p.id, p.text1, p.text2, f"{a:.6f}", f"{b:.6f}"]
            for p, a, b in zip(pairs, neg, pos, strict=True)
        )
    return Path(path)


def read_confidences(
    path: str | Path, pairs: PairSet, against: str | Path | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The ``neg_conf`` and ``pos_conf`` columns of a scores CSV with one row per pair of
    ``pairs`` (errors name them as ``against``: their file; default the set's name); where the
    file has ``id``/``text1``/``text2`` columns (:func:`write_confidences` writes them), each
    row must name its pair.

    Raises:
        MineError: E805 not a CSV, other columns or row count, a cell that is no confidence in
            [0, 1] (file, line and field named); E140 a row naming another pair (scores made for
            another file).
    """
    import pandas as pd

    from parakit.io.validate import Where, check_joined_texts, number_text

    against = against if against is not None else pairs.name or "the pairs"
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError) as err:
        raise MineError(Errors.E805_csv_file.format(scores=path, err=err)) from None
    n = len(pairs)
    if not {"neg_conf", "pos_conf"} <= set(frame.columns) or len(frame) != n:
        raise MineError(Errors.E805_need_columns_neg.format(scores=path, n=n))
    confidences = np.zeros((n, 2))
    for line, row in enumerate(frame[["neg_conf", "pos_conf"]].itertuples(index=False), start=2):
        where = Where(path, line)
        for column, (field, cell) in enumerate(zip(("neg_conf", "pos_conf"), row, strict=True)):
            value = number_text(cell, where, field)
            if not 0.0 <= value <= 1.0:
                raise where.error(Errors.E805_confidence_must_lie.format(value=cell), field, "E805")
            confidences[line - 2, column] = value
    if "id" in frame.columns:
        texts = "text1" in frame.columns and "text2" in frame.columns
        for line, (pair, row) in enumerate(zip(pairs, frame.itertuples(), strict=True), start=2):
            where = Where(path, line)
            if row.id != pair.id:
                raise where.error(
                    f"pair id {row.id!r} where {against} has {pair.id!r} (row {line - 1}): "
                    "scores made for another file?",
                    "id",
                    "E140",
                )
            if texts:
                check_joined_texts(
                    {pair.id: (pair.text1, pair.text2)},
                    pair.id,
                    (row.text1, row.text2),
                    where,
                    str(against),
                )
    return confidences[:, 0], confidences[:, 1]
