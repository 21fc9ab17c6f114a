"""Balanced sampling of candidate pairs over similarity bins (J4, T15).

Candidates are binned by a lexical similarity and ``n`` pairs are drawn from every bin, so that
trivial (high-overlap) and non-trivial (low-overlap) pairs are equally represented. Two
presets follow the papers:

* ``wor`` — the Japanese paper (J4): word overlap rate (Jaccard of token sets) in **11 bins**:
  ten of width 0.1 over [0, 1) plus one for WOR = 1 (same token set, different strings);
  exact matches (identical texts) are excluded. The paper gives no bin edges; this is our
  reading of "eleven ranges". Within a bin the paper takes pairs in descending QE order:
  pass ``order_by="qe"``.
* ``char`` — the Turku paper (T15): TF cosine of character 2–4-grams, **20 bins of width
  0.05**.

:func:`balanced_sample` returns the sample and a :class:`BinReport` with, per bin, how many
pairs were available and how many were taken; bins with fewer than ``n`` are *short*.

Example:
    >>> from parakit.schema import Pair, PairSet
    >>> ends = ["", " x", " x y"]  # exact match (excluded), WOR 0.8, WOR 0.67
    >>> ps = PairSet([Pair(str(i), "a b c d", "a b c d" + ends[i % 3]) for i in range(9)])
    >>> sample, report = balanced_sample(ps, n_per_bin=2, measure="wor", seed=0)
    >>> len(sample), report.available[6], report.available[8], report.excluded_exact
    (4, 3, 3, 3)
    >>> report.short_bins()
    [0, 1, 2, 3, 4, 5, 7, 9, 10]
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import Errors, ParakitError
from parakit.schema import Pair, PairSet
from parakit.text import CharNgramSimilarity, similarity_bins, word_overlap_rates

#: measure name -> (number of bins, description)
PRESETS: dict[str, tuple[int, str]] = {
    "wor": (11, "word overlap rate (Jaccard of token sets), 10 bins of 0.1 + WOR=1"),
    "char": (20, "TF cosine of char 2-4-grams (char_wb), 20 bins of width 0.05"),
}


@dataclass
class BinReport:
    """Per-bin availability and sample counts."""

    edges: list[tuple[float, float]]
    available: list[int]
    sampled: list[int]
    n_per_bin: int
    excluded_exact: int = 0
    measure: str = ""

    def short_bins(self) -> list[int]:
        """Indices of bins with fewer than ``n_per_bin`` pairs available."""
        return [i for i, a in enumerate(self.available) if a < self.n_per_bin]

    def to_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "n_per_bin": self.n_per_bin,
            "excluded_exact": self.excluded_exact,
            "bins": [
                {"bin": i, "low": lo, "high": hi, "available": a, "sampled": s}
                for i, ((lo, hi), a, s) in enumerate(
                    zip(self.edges, self.available, self.sampled, strict=True)
                )
            ],
            "short_bins": self.short_bins(),
        }

    def table(self) -> str:
        """A plain-text table (printed by the CLI)."""
        lines = [f"{'bin':>3}  {'range':<13} {'available':>9} {'sampled':>7}"]
        for i, ((lo, hi), a, s) in enumerate(
            zip(self.edges, self.available, self.sampled, strict=True)
        ):
            rng = f"[{lo:.2f}, {hi:.2f}" + ("]" if lo == hi else ")")
            flag = "  short" if a < self.n_per_bin else ""
            lines.append(f"{i:>3}  {rng:<13} {a:>9} {s:>7}{flag}")
        return "\n".join(lines)


def wor_bin_index(wor: np.ndarray) -> np.ndarray:
    """J4 bin of each WOR: ``floor(10 * wor)`` for wor < 1, bin 10 for wor == 1."""
    wor = np.asarray(wor, dtype=np.float64)
    index = np.minimum(np.floor(wor * 10 + 1e-9).astype(np.int64), 9)
    index[wor >= 1.0 - 1e-12] = 10
    return index


def wor_edges() -> list[tuple[float, float]]:
    return [(i / 10, (i + 1) / 10) for i in range(10)] + [(1.0, 1.0)]


def compute_measure(
    pairs: PairSet | Sequence[tuple[str, str]],
    measure: str = "wor",
    lang: str | None = None,
    method: str | None = None,
) -> np.ndarray:
    """The similarity of every pair under a named measure (``wor`` or ``char``), or a
    metadata key holding a precomputed value."""
    if isinstance(pairs, PairSet):
        texts1 = [p.text1 for p in pairs]
        texts2 = [p.text2 for p in pairs]
    else:
        texts1 = [a for a, _ in pairs]
        texts2 = [b for _, b in pairs]
    if measure == "wor":
        return word_overlap_rates(texts1, texts2, lang=lang, method=method)
    if measure == "char":
        return CharNgramSimilarity(ngram_range=(2, 4), analyzer="char_wb").score(texts1, texts2)
    if isinstance(pairs, PairSet):
        try:
            return np.array([float(p.metadata[measure]) for p in pairs])
        except KeyError:
            pass
    raise ParakitError(Errors.E508_unknown_measure_use.format(measure=measure))


def balanced_sample(
    pairs: PairSet,
    n_per_bin: int,
    measure: str = "wor",
    n_bins: int | None = None,
    values: np.ndarray | None = None,
    exclude_exact: bool | None = None,
    order_by: str | None = None,
    seed: int = 0,
    lang: str | None = None,
    method: str | None = None,
    key: Callable[[Any], Any] | None = None,
) -> tuple[PairSet, BinReport]:
    """Draw ``n_per_bin`` pairs from each similarity bin.

    Args:
        pairs: candidates.
        n_per_bin: pairs per bin (all of a bin when fewer are available).
        measure: ``wor`` (J4, 11 bins), ``char`` (T15, 20 bins) or a metadata key.
        n_bins: number of equal-width bins over [0, 1] (default: the preset's; 20 for keys).
        values: precomputed similarities (skip computing ``measure``).
        exclude_exact: drop pairs with identical texts (default: True for ``wor``).
        order_by: metadata key; take the highest values within a bin instead of a random
            draw (the paper's descending QE order). A key no pair has is refused (E560).
        seed: random seed.
        lang, method: tokenisation for ``wor`` (TMUP text is pre-tokenised:
            ``method="whitespace"``).

    Returns:
        ``(sample, report)``; sampled pairs get ``metadata["bin"]`` and the measure's value.
    """
    if n_per_bin < 0:
        raise ParakitError(Errors.E508_per_bin_must)
    if order_by is not None and not any(order_by in p.metadata for p in pairs):
        present = sorted({k for p in pairs for k in p.metadata})
        raise ParakitError(
            Errors.E560_no_metadata_key.format(
                order_by=order_by, present=", ".join(present) if present else "none"
            )
        )
    if exclude_exact is None:
        exclude_exact = measure == "wor"
    sim = (
        compute_measure(pairs, measure, lang=lang, method=method)
        if values is None
        else np.asarray(values, dtype=np.float64)
    )
    if sim.shape != (len(pairs),):
        raise ParakitError(Errors.E508_values_must_one)
    bins, edges = _bins(sim, measure, n_bins)
    exact = (
        np.array([p.text1 == p.text2 for p in pairs], dtype=bool)
        if exclude_exact
        else np.zeros(len(pairs), dtype=bool)
    )

    def highest_first(i: int) -> float:
        return -float(pairs[i].metadata.get(order_by, float("-inf")))

    available, sampled, chosen = _choose(
        bins, len(edges), exact, n_per_bin, seed, highest_first if order_by else None
    )
    out = [
        pairs[i].replace(
            metadata={
                **pairs[i].metadata,
                "bin": b,
                measure if measure in PRESETS else f"{measure}": round(float(sim[i]), 6),
            }
        )
        for i, b in chosen
    ]
    report = BinReport(edges, available, sampled, n_per_bin, int(exact.sum()), measure)
    result = PairSet(
        out,
        scheme=pairs.scheme,
        documents=pairs.documents,
        name=pairs.name,
        lang=pairs.lang,
        metadata={**pairs.metadata, "sampling": report.to_dict()},
    )
    return result, report


def _bins(
    sim: np.ndarray, measure: str, n_bins: int | None
) -> tuple[np.ndarray, list[tuple[float, float]]]:
    """The bin of every value and the bins' edges, for a measure's preset or ``n_bins``."""
    if measure == "wor" and n_bins in (None, 11):
        return wor_bin_index(sim), wor_edges()
    if n_bins is None:
        n_bins = PRESETS.get(measure, (20, ""))[0]
    return similarity_bins(sim, n_bins), [(i / n_bins, (i + 1) / n_bins) for i in range(n_bins)]


def _choose(
    bins: np.ndarray,
    n_edges: int,
    exact: np.ndarray,
    n_per_bin: int,
    seed: int,
    order: Callable[[int], Any] | None = None,
) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """Per bin: pairs available and taken, and the ``(index, bin)`` of every pair taken (a seeded
    draw, or the first ``n_per_bin`` by ``order``)."""
    rng = random.Random(seed)
    available, sampled, chosen = [], [], []
    for b in range(n_edges):
        members = [int(i) for i in np.flatnonzero((bins == b) & ~exact)]
        available.append(len(members))
        if order is not None:
            take = sorted(members, key=order)[:n_per_bin]
        else:
            take = sorted(rng.sample(members, min(n_per_bin, len(members))))
        sampled.append(len(take))
        chosen.extend((i, b) for i in take)
    return available, sampled, chosen


def sample_file(
    path: str | Path,
    n_per_bin: int,
    measure: str = "char",
    n_bins: int | None = None,
    seed: int = 0,
    chunk_size: int = 10_000,
) -> tuple[PairSet, BinReport]:
    """:func:`balanced_sample` of a canonical JSONL file of candidates too large to hold in
    memory (``mine`` output): the first pass scores the pairs chunk by chunk and keeps 9 bytes
    a pair; the second keeps the sampled pairs only. The same seed draws the same sample as
    :func:`balanced_sample` of the whole file (identical texts are kept, as for ``char``)."""
    from parakit.io.jsonl import iter_jsonl, pair_from_record
    from parakit.io.validate import Where

    if n_per_bin < 0:
        raise ParakitError(Errors.E508_per_bin_must)
    header: dict[str, Any] = {}

    def pairs() -> Iterator[tuple[int, Pair]]:
        where = Where(path)
        number = 0
        for line, record in iter_jsonl(path, strict=True):
            if isinstance(record, dict) and "parakit" in record:
                header.update(record)
                continue
            yield number, pair_from_record(record, where.at(line), default_id=str(number))
            number += 1

    values: list[np.ndarray] = []
    stream = (pair for _, pair in pairs())
    while batch := list(itertools.islice(stream, chunk_size)):
        values.append(compute_measure([(p.text1, p.text2) for p in batch], measure))
    sim = np.concatenate(values) if values else np.empty(0)
    bins, edges = _bins(sim, measure, n_bins)
    available, sampled, chosen = _choose(
        bins, len(edges), np.zeros(len(sim), dtype=bool), n_per_bin, seed
    )
    taken = dict(chosen)
    kept = {i: pair for i, pair in pairs() if i in taken}
    out = [
        kept[i].replace(metadata={**kept[i].metadata, "bin": b, measure: round(float(sim[i]), 6)})
        for i, b in chosen
    ]
    report = BinReport(edges, available, sampled, n_per_bin, 0, measure)
    metadata = {**header.get("metadata", {}), "sampling": report.to_dict()}
    return PairSet(out, name=header.get("name"), metadata=metadata), report


def histogram(
    pairs: PairSet,
    measure: str = "wor",
    n_bins: int | None = None,
    lang: str | None = None,
    method: str | None = None,
    exclude_exact: bool | None = None,
) -> BinReport:
    """Counts per bin (a sample of size 0): the availability report alone."""
    _, report = balanced_sample(
        pairs,
        0,
        measure=measure,
        n_bins=n_bins,
        lang=lang,
        method=method,
        exclude_exact=exclude_exact,
    )
    return report
