"""kNN candidate mining for hard negatives (T15), streamed with bounded memory.

The Turku paper embedded a large sentence collection with mean-pooled BERT, took the 5 nearest
neighbours (Euclidean, FAISS) of every sentence *within the same source*, removed duplicate
pairs irrespective of direction, and annotated a stratified sample over 20 bins of TF char
2–4-gram cosine. :func:`mine_knn` does the same on input of any size:

1. **embed** — the input (any sentence collection :func:`parakit.vectors.collection.
   iter_collection` reads: JSONL ``{"text", "source"?}``, plain text, TSV/CSV, a corpus) is read
   in chunks; each chunk is embedded by any encoder of :mod:`parakit.vectors.encode` (a
   sentence-transformers model; a plain Hugging Face encoder gets mean pooling) and appended to
   a float32 file on disk; the texts go to a :class:`parakit.vectors.store.SentenceStore`, so no
   text or vector stays in memory;
2. **search** — per source, the source's vectors (memory-mapped) go into a
   :class:`parakit.vectors.index.VectorIndex` (``flat`` exact search by default; ``ivf``,
   ``hnsw`` or ``ivfpq`` for large collections) and are queried in chunks for ``k + 1``
   neighbours (the sentence itself is dropped);
3. **dedupe** — pairs are stored as ``(min, max)`` row ids and made unique (sort-based, 16
   bytes per raw pair);
4. **write + sample** — candidates are streamed to ``candidates.jsonl`` (canonical JSONL) with
   their char 2–4-gram TF cosine computed chunk-wise; the bin of each pair (1 byte) is kept,
   and ``n_per_bin`` pairs per bin are drawn (seeded) into ``sample.jsonl``.

Memory is bounded by the largest source's vectors in the index (``flat``; or the compressed
codes of an ``ivfpq`` index) plus a few bytes per sentence and per pair — never the texts.
This module is a short recipe over the ``vectors`` layer and :mod:`parakit.build.sample`-style
binning; it has no encoder, store or search of its own.

Example:
    >>> from parakit.vectors.encode import load_encoder
    >>> result = mine_knn("sentences.jsonl", load_encoder("offline-minilm"),
    ...                   "knn-out", k=5, n_per_bin=50)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import itertools
import random
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import ParakitError
from parakit.schema import Pair, PairSet


@dataclass
class KnnResult:
    """Where the mining wrote its outputs, and counts."""

    candidates_path: Path
    sample_path: Path | None
    n_sentences: int
    n_candidates: int
    bin_counts: list[int]
    sampled_counts: list[int]


def _search_source(
    vectors: np.ndarray,
    rows: np.ndarray,
    k: int,
    index_kind: str,
    metric: str,
    chunk_size: int,
    seed: int,
) -> np.ndarray:
    """Canonical ``(min, max)`` global row pairs of the kNN graph of one source."""
    from parakit.vectors.index import VectorIndex

    sub = np.ascontiguousarray(vectors[rows], dtype=np.float32)
    if metric == "cosine":
        sub /= np.maximum(np.linalg.norm(sub, axis=1, keepdims=True), 1e-12)
    index = VectorIndex(kind=index_kind, metric="l2" if metric == "l2" else "ip", seed=seed)
    index.build(lambda: iter([sub]), n=len(sub))
    kk = min(k + 1, len(rows))
    pairs = []
    for start in range(0, len(rows), chunk_size):
        _, neighbours = index.search(sub[start : start + chunk_size], kk)
        query = np.arange(start, start + len(neighbours))[:, None].repeat(kk, axis=1)
        valid = (neighbours >= 0) & (neighbours != query)
        # ties can push the sentence itself out of its own list: keep k others at most
        valid &= np.cumsum(valid, axis=1) <= k
        a = rows[query[valid]]
        b = rows[neighbours[valid]]
        pairs.append(np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1))
    if not pairs:
        return np.empty((0, 2), dtype=np.int64)
    return np.unique(np.concatenate(pairs).astype(np.int64), axis=0)


def mine_knn(
    input_path: str | Path,
    encoder: Any,
    out_dir: str | Path,
    k: int = 5,
    chunk_size: int = 10_000,
    index_kind: str = "flat",
    metric: str = "l2",
    n_per_bin: int | None = 100,
    n_bins: int = 20,
    seed: int = 0,
    text_field: str = "text",
    source_field: str = "source",
    progress: bool = True,
) -> KnnResult:
    """Mine kNN candidate pairs within each source and sample them over similarity bins.

    Args:
        input_path: a sentence collection (JSONL ``{"text", "source"?}``, one sentence per line,
            TSV/CSV with a text column, or a pair corpus); see
            :func:`parakit.vectors.collection.iter_collection`.
        encoder: any object with ``encode(texts) -> (n, dim) array``, e.g.
            :func:`parakit.vectors.encode.load_encoder` ``("offline-minilm")``.
        out_dir: folder for ``candidates.jsonl``, ``sample.jsonl`` and work files
            (``work/``: embeddings and texts, removed at the end).
        k: neighbours per sentence (5 in the paper).
        chunk_size: sentences embedded / queried at once (bounds the working memory).
        index_kind: :class:`parakit.vectors.index.VectorIndex` kind (``flat`` = exact).
        metric: ``l2`` (the paper's Euclidean), ``ip`` or ``cosine``.
        n_per_bin: pairs per similarity bin in ``sample.jsonl`` (``None``: no sample).
        n_bins: bins of width ``1 / n_bins`` of TF char 2–4-gram cosine (20 in the paper).
        seed: random seed of the sample (and of index training).
        text_field, source_field: keys of the text and of the source in the input records.
        progress: show progress bars.

    Returns:
        A :class:`KnnResult` with paths and per-bin counts.
    """
    from parakit.io import write
    from parakit.io.jsonl import JsonlWriter
    from parakit.text import CharNgramSimilarity, similarity_bins
    from parakit.vectors.collection import iter_collection
    from parakit.vectors.store import SentenceStore

    if k < 1:
        raise ParakitError("k must be >= 1", code="E509")
    if metric not in ("l2", "ip", "cosine"):
        raise ParakitError("metric must be 'l2', 'ip' or 'cosine'", code="E509")
    out_dir = Path(out_dir)
    work = out_dir / "work"
    work.mkdir(parents=True, exist_ok=True)
    vector_path = work / "embeddings.f32"
    source_ids: dict[str, int] = {}
    codes_list: list[int] = []
    bar: Any = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(desc="embed", unit="sent")

    def embedded(vec_handle: Any) -> Iterator[dict[str, Any]]:
        """Yield the records to the store while their vectors go to ``vec_handle``."""
        chunk: list[dict[str, Any]] = []
        records = iter_collection(input_path, text_field=text_field, source_field=source_field)
        # stream: the None sentinel flushes the last chunk without holding the input in memory
        for record in itertools.chain(records, [None]):
            if record is not None:
                record["source"] = "-" if record.get("source") is None else str(record["source"])
                chunk.append(record)
            if chunk and (record is None or len(chunk) >= chunk_size):
                vectors = np.ascontiguousarray(
                    encoder.encode([r["text"] for r in chunk]), dtype=np.float32
                )
                vec_handle.write(vectors.tobytes())
                codes_list.extend(
                    source_ids.setdefault(r["source"], len(source_ids)) for r in chunk
                )
                if bar is not None:
                    bar.update(len(chunk))
                yield from chunk
                chunk = []

    try:
        with open(vector_path, "wb") as vec_handle:
            store = SentenceStore.write(work / "store", embedded(vec_handle))
    finally:
        if bar is not None:
            bar.close()
    n = len(codes_list)
    if n == 0:
        raise ParakitError(f"no sentence found in {input_path}", code="E501")
    dim = vector_path.stat().st_size // (4 * n)  # float32 rows written in order
    vectors = np.memmap(vector_path, dtype=np.float32, mode="r", shape=(n, dim))
    codes = np.asarray(codes_list, dtype=np.int32)
    all_pairs = []
    for code in source_ids.values():
        rows = np.flatnonzero(codes == code)
        if len(rows) >= 2:
            all_pairs.append(_search_source(vectors, rows, k, index_kind, metric, chunk_size, seed))
    pairs = np.concatenate(all_pairs) if all_pairs else np.empty((0, 2), dtype=np.int64)
    del vectors
    names = {code: name for name, code in source_ids.items()}
    sim = CharNgramSimilarity(ngram_range=(2, 4), analyzer="char_wb")
    bins = np.empty(len(pairs), dtype=np.int16)

    def texts_of(rows: np.ndarray) -> list[str]:
        return [store.text(int(r)) for r in rows]

    candidates_path = out_dir / "candidates.jsonl"
    settings = {"k": k, "metric": metric, "index_kind": index_kind, "encoder": _name(encoder)}
    with JsonlWriter(
        candidates_path, name="knn-candidates", metadata={"knn": settings}
    ) as candidates:
        for start in range(0, len(pairs), chunk_size):
            block = pairs[start : start + chunk_size]
            texts1, texts2 = texts_of(block[:, 0]), texts_of(block[:, 1])
            values = sim.score(texts1, texts2)
            bins[start : start + len(block)] = similarity_bins(values, n_bins)
            for (a, b), t1, t2, v in zip(block, texts1, texts2, values, strict=True):
                candidates.write_pair(_pair(int(a), int(b), t1, t2, float(v), names[int(codes[a])]))
    counts = (
        np.bincount(bins.astype(np.int64), minlength=n_bins).tolist()
        if len(pairs)
        else [0] * n_bins
    )
    sample_path = None
    sampled = [0] * n_bins
    if n_per_bin is not None:
        rng = random.Random(seed)
        chosen: list[int] = []
        for b in range(n_bins):
            members = np.flatnonzero(bins == b).tolist()
            take = sorted(rng.sample(members, min(n_per_bin, len(members))))
            sampled[b] = len(take)
            chosen.extend(take)
        block = pairs[chosen] if chosen else np.empty((0, 2), dtype=np.int64)
        texts1, texts2 = texts_of(block[:, 0]), texts_of(block[:, 1])
        values = sim.score(texts1, texts2) if len(block) else np.empty(0)
        sample = [
            _pair(
                int(a),
                int(b),
                t1,
                t2,
                float(v),
                names[int(codes[a])],
                bin_=int(similarity_bins(np.array([v]), n_bins)[0]),
            )
            for (a, b), t1, t2, v in zip(block, texts1, texts2, values, strict=True)
        ]
        report = {
            "n_per_bin": n_per_bin,
            "available": counts,
            "sampled": sampled,
            "short_bins": [i for i, c in enumerate(counts) if c < n_per_bin],
        }
        sample_path = out_dir / "sample.jsonl"
        write(
            PairSet(
                sample,
                scheme="binary",
                name="knn-sample",
                metadata={"sampling": report, "seed": seed},
            ),
            sample_path,
            format="jsonl",
        )
    store.close()
    vector_path.unlink(missing_ok=True)
    shutil.rmtree(work / "store", ignore_errors=True)
    with contextlib.suppress(OSError):
        work.rmdir()  # only when empty
    return KnnResult(candidates_path, sample_path, n, len(pairs), counts, sampled)


def _name(encoder: Any) -> str:
    """The encoder's model name for the candidates header."""
    signature = encoder.signature() if callable(getattr(encoder, "signature", None)) else {}
    return str(signature.get("model", getattr(encoder, "model", type(encoder).__name__)))


def _pair(
    a: int, b: int, text1: str, text2: str, value: float, source: str, bin_: int | None = None
) -> Pair:
    meta: dict[str, Any] = {"char_tf_cosine": round(value, 6), "rows": [a, b]}
    if bin_ is not None:
        meta["bin"] = bin_
    return Pair(id=f"knn-{a}-{b}", text1=text1, text2=text2, source=source, metadata=meta)


__all__ = ["KnnResult", "mine_knn"]
