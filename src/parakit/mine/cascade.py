"""A cascade for mining with a cheap encoder: re-score the surviving pairs with a better one.

A static encoder (:mod:`parakit.vectors.static`) finds 97 % of what its transformer teacher
finds among the 50 nearest neighbours, 50-60x faster, but ranks them worse at small k. The
cascade mines broadly with the cheap encoder (a larger ``k``), lets the pair classifier drop
what it rejects, then embeds **only the sentences of the surviving pairs** with the teacher,
each sentence once, checkpointed per chunk in the work folder (a rerun reads them back), and
re-ranks: every pair gets the teacher's cosine and its rank among the pairs of either sentence
(``teacher_rank``), so ``keep_k`` keeps each sentence's teacher top-k.

Example:
    >>> import numpy as np
    >>> teacher_ranks(np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([0.9, 0.5, 0.7]),
    ...               self_mining=True).tolist()
    [1, 2, 1]
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from parakit.vectors.store import SentenceStore

if TYPE_CHECKING:
    from parakit.vectors.encode import Encoder


def teacher_scores(
    folder: Path,
    encoder: Encoder,
    qstore: SentenceStore,
    store: SentenceStore,
    rows: np.ndarray,
    cols: np.ndarray,
    keep: np.ndarray,
    self_mining: bool,
    chunk_size: int = 10_000,
    progress: bool = True,
) -> np.ndarray:
    """The ``encoder``'s cosine of every pair where ``keep`` is true (NaN elsewhere).

    Each sentence of the kept pairs is embedded once (for self-mining the two sides are one
    store): the sorted row numbers are written to ``folder`` first, then the vectors chunk by
    chunk, so a rerun with the same pairs reads what was embedded and goes on from there.
    """
    out = np.full(len(rows), np.nan, dtype=np.float64)
    if not keep.any():
        return out
    if self_mining:
        needed = np.unique(np.concatenate([rows[keep], cols[keep]]))
        left = right = _embed_rows(folder / "all", encoder, store, needed, chunk_size, progress)
        left_rows = right_rows = needed
    else:
        left_rows, right_rows = np.unique(rows[keep]), np.unique(cols[keep])
        left = _embed_rows(folder / "queries", encoder, qstore, left_rows, chunk_size, progress)
        right = _embed_rows(folder / "collection", encoder, store, right_rows, chunk_size, progress)
    a = left[np.searchsorted(left_rows, rows[keep])]
    b = right[np.searchsorted(right_rows, cols[keep])]
    out[keep] = np.einsum("ij,ij->i", _unit(a), _unit(b))
    return out


def teacher_ranks(
    rows: np.ndarray, cols: np.ndarray, scores: np.ndarray, self_mining: bool
) -> np.ndarray:
    """Each pair's rank (1 = best) by ``scores`` among the pairs of its query sentence; for
    self-mining among the pairs of either of its two sentences (the better of the two ranks),
    since a pair is listed once under one of them. NaN scores rank last."""
    n = len(rows)
    # every (sentence, pair) occurrence: a pair counts among the pairs of each of its sentences
    ends = np.concatenate([rows, cols]) if self_mining else rows
    pair = np.concatenate([np.arange(n), np.arange(n)]) if self_mining else np.arange(n)
    key = np.where(np.isnan(scores), -np.inf, scores)[pair]
    order = np.lexsort((pair, -key, ends))  # by sentence, best score first, ties by pair
    sorted_ends = ends[order]
    starts = np.flatnonzero(np.r_[True, sorted_ends[1:] != sorted_ends[:-1]])
    group_start = np.repeat(starts, np.diff(np.r_[starts, len(ends)]))
    rank = np.empty(len(ends), dtype=np.int64)
    rank[order] = np.arange(len(ends)) - group_start + 1
    best = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, pair, rank)
    return best


def _embed_rows(
    folder: Path,
    encoder: Encoder,
    store: SentenceStore,
    needed: np.ndarray,
    chunk_size: int,
    progress: bool,
) -> np.ndarray:
    """Vectors of store rows ``needed`` (sorted), embedded in checkpointed chunks."""
    from tqdm.auto import tqdm

    from parakit.io.atomic import save_npy

    folder.mkdir(parents=True, exist_ok=True)
    rows_file = folder / "rows.npy"
    if rows_file.is_file() and not np.array_equal(np.load(rows_file), needed):
        # other pairs than the checkpoints were made for (another classifier threshold): redo
        for stale in folder.glob("*.npy"):
            stale.unlink()
    if not rows_file.is_file():
        save_npy(rows_file, needed)
    parts = []
    with tqdm(total=len(needed), desc="teacher", unit="sent", disable=not progress) as bar:
        for number, start in enumerate(range(0, len(needed), chunk_size)):
            path = folder / f"{number:05d}.npy"
            if path.is_file():
                vectors = np.load(path)
            else:
                texts = [store.text(int(r)) for r in needed[start : start + chunk_size]]
                vectors = np.asarray(encoder.encode(texts), dtype=np.float32)
                save_npy(path, vectors)
            parts.append(vectors)
            bar.update(len(vectors))
    return np.concatenate(parts)


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1, norms)


__all__ = ["teacher_ranks", "teacher_scores"]
