"""kNN candidate mining for hard negatives (T15), streamed with bounded memory.

The Turku paper embedded a large sentence collection with mean-pooled BERT, took the 5 nearest
neighbours (Euclidean, FAISS) of every sentence *within the same source*, removed duplicate
pairs irrespective of direction, and annotated a stratified sample over 20 bins of TF char
2–4-gram cosine. :func:`mine_knn` does the same on input of any size:

1. **embed** — the input (JSONL ``{"text", "source"?}`` or plain text, one sentence per line)
   is read in chunks; each chunk is embedded (:class:`SentenceEncoder`: a sentence-transformers
   model, or any Hugging Face encoder mean-pooled) and appended to a float32 file on disk; the
   texts go to a line file with byte offsets, so no text or vector stays in memory;
2. **search** — per source, the source's vectors (memory-mapped) go into a FAISS index
   (``Flat`` exact L2 by default; any ``faiss.index_factory`` string such as
   ``"IVF1024,PQ32"`` for collections whose vectors do not fit in memory) and are queried in
   chunks for ``k + 1`` neighbours (the sentence itself is dropped);
3. **dedupe** — pairs are stored as ``(min, max)`` row ids and made unique (sort-based, 16
   bytes per raw pair);
4. **write + sample** — candidates are streamed to ``candidates.jsonl`` (canonical JSONL) with
   their char 2–4-gram TF cosine computed chunk-wise; the bin of each pair (1 byte) is kept,
   and ``n_per_bin`` pairs per bin are drawn (seeded) into ``sample.jsonl``.

Memory is bounded by the largest source's vectors in the index (``Flat``; or the compressed
codes of a factory index) plus a few bytes per sentence and per pair — never the texts.

Example:
    >>> result = mine_knn("sentences.jsonl", SentenceEncoder("all-MiniLM-L6-v2"),
    ...                   "knn-out", k=5, n_per_bin=50)  # doctest: +SKIP
"""

from __future__ import annotations

import array
import contextlib
import json
import logging
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import DataFormatError, ParakitError
from parakit.schema import Pair, PairSet

logger = logging.getLogger("parakit.build")


class SentenceEncoder:
    """Sentence embeddings from a sentence-transformers model or a mean-pooled HF encoder.

    Args:
        model: hub id, local folder or offline alias (``offline-minilm``, ``offline-mpnet``).
        kind: ``auto`` (sentence-transformers when the folder has ``modules.json``, else
            mean pooling), ``sentence-transformers`` or ``mean-pool``.
        batch_size: sentences per forward pass.
        max_length: token limit.
        device: torch device (default CPU or CUDA when available).
        normalize: L2-normalise the vectors (then L2 distance ranks like cosine).
    """

    def __init__(
        self,
        model: str | Path,
        kind: str = "auto",
        batch_size: int = 64,
        max_length: int = 128,
        device: str | None = None,
        normalize: bool = False,
    ) -> None:
        self.model = str(model)
        self.kind = kind
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self.normalize = normalize

    def _load(self) -> None:
        if hasattr(self, "kind_"):
            return
        import torch

        from parakit.offline import resolve_model

        model = resolve_model(self.model)
        kind = self.kind
        if kind == "auto":
            kind = (
                "sentence-transformers"
                if (Path(model) / "modules.json").exists()
                else "mean-pool"
            )
        if kind not in ("sentence-transformers", "mean-pool"):
            raise ParakitError(
                "kind must be 'auto', 'sentence-transformers' or 'mean-pool'", code="E509"
            )
        self.device_ = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        if kind == "sentence-transformers":
            from sentence_transformers import SentenceTransformer

            self.st_ = SentenceTransformer(model, device=self.device_)
            self.st_.max_seq_length = self.max_length
        else:
            from transformers import AutoModel, AutoTokenizer

            self.tokenizer_ = AutoTokenizer.from_pretrained(model)
            self.encoder_ = AutoModel.from_pretrained(model).to(self.device_).eval()
        self.kind_ = kind

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``len(texts) x dim`` float32 vectors."""
        import torch

        self._load()
        if self.kind_ == "sentence-transformers":
            vectors = self.st_.encode(
                list(texts),
                batch_size=self.batch_size,
                convert_to_numpy=True,
                show_progress_bar=False,
                normalize_embeddings=self.normalize,
            )
            return np.ascontiguousarray(vectors, dtype=np.float32)
        out = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            enc = self.tokenizer_(
                batch,
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            )
            enc = {k: v.to(self.device_) for k, v in enc.items()}
            with torch.inference_mode():
                hidden = self.encoder_(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            if self.normalize:
                pooled = torch.nn.functional.normalize(pooled, dim=-1)
            out.append(pooled.float().cpu().numpy())
        if not out:
            return np.empty((0, 0), dtype=np.float32)
        return np.ascontiguousarray(np.concatenate(out), dtype=np.float32)


def iter_sentences(
    path: str | Path, text_field: str = "text", source_field: str = "source"
) -> Iterator[tuple[str, str]]:
    """``(text, source)`` of each sentence: JSONL objects (``.jsonl``/``.jsonl.gz``) or plain
    lines (source ``"-"``); blank texts are skipped."""
    from parakit.io._open import iter_lines

    path = Path(path)
    is_json = ".jsonl" in path.suffixes or ".json" in path.suffixes
    for line_number, line in iter_lines(path):
        if not line.strip():
            continue
        if is_json:
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataFormatError(
                    f"malformed JSON: {err.msg}", path=path, line=line_number, code="E105"
                ) from None
            if not isinstance(record, dict) or text_field not in record:
                raise DataFormatError(
                    f"missing field {text_field!r}",
                    path=path,
                    line=line_number,
                    field=text_field,
                    code="E502",
                )
            text = str(record[text_field])
            if not text.strip():
                continue
            yield text, str(record.get(source_field, "-"))
        else:
            yield line.strip(), "-"


@dataclass
class KnnResult:
    """Where the mining wrote its outputs, and counts."""

    candidates_path: Path
    sample_path: Path | None
    n_sentences: int
    n_candidates: int
    bin_counts: list[int]
    sampled_counts: list[int]


def _chunks(items: Iterator[tuple[str, str]], size: int) -> Iterator[list[tuple[str, str]]]:
    chunk: list[tuple[str, str]] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class _TextStore:
    """Texts on disk, one JSON string per line, with an in-memory offset array."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offsets = array.array("q")
        self._handle = open(path, "wb")  # noqa: SIM115
        self._position = 0

    def extend(self, texts: Sequence[str]) -> None:
        for text in texts:
            data = (json.dumps(text, ensure_ascii=False) + "\n").encode()
            self.offsets.append(self._position)
            self._handle.write(data)
            self._position += len(data)

    def close(self) -> None:
        self._handle.close()

    def get(self, rows: Sequence[int]) -> list[str]:
        out = {}
        with open(self.path, "rb") as handle:
            for row in sorted(set(int(r) for r in rows)):
                handle.seek(self.offsets[row])
                out[row] = json.loads(handle.readline())
        return [out[int(r)] for r in rows]


def _search_source(
    vectors: np.ndarray,
    rows: np.ndarray,
    k: int,
    factory: str,
    metric: str,
    chunk_size: int,
    seed: int,
) -> np.ndarray:
    """Canonical ``(min, max)`` global row pairs of the kNN graph of one source."""
    import faiss

    sub = np.ascontiguousarray(vectors[rows], dtype=np.float32)
    dim = sub.shape[1]
    faiss_metric = faiss.METRIC_L2 if metric == "l2" else faiss.METRIC_INNER_PRODUCT
    if metric == "cosine":
        faiss.normalize_L2(sub)
    index = faiss.index_factory(dim, factory, faiss_metric)
    if not index.is_trained:
        rng = np.random.default_rng(seed)
        train = sub[rng.choice(len(sub), size=min(len(sub), 50_000), replace=False)]
        index.train(train)
    index.add(sub)
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
    encoder: SentenceEncoder,
    out_dir: str | Path,
    k: int = 5,
    chunk_size: int = 10_000,
    factory: str = "Flat",
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
        input_path: JSONL ``{"text", "source"?}`` or plain text, one sentence per line.
        encoder: the sentence encoder.
        out_dir: folder for ``candidates.jsonl``, ``sample.jsonl`` and work files
            (``work/``: embeddings and texts, removed at the end).
        k: neighbours per sentence (5 in the paper).
        chunk_size: sentences embedded / queried at once (bounds the working memory).
        factory: FAISS index factory string (``Flat`` = exact).
        metric: ``l2`` (the paper's Euclidean), ``ip`` or ``cosine``.
        n_per_bin: pairs per similarity bin in ``sample.jsonl`` (``None``: no sample).
        n_bins: bins of width ``1 / n_bins`` of TF char 2–4-gram cosine (20 in the paper).
        seed: random seed of the sample (and of index training).

    Returns:
        A :class:`KnnResult` with paths and per-bin counts.
    """
    from parakit.io.atomic import atomic_write
    from parakit.text import CharNgramSimilarity, similarity_bins

    if k < 1:
        raise ParakitError("k must be >= 1", code="E509")
    if metric not in ("l2", "ip", "cosine"):
        raise ParakitError("metric must be 'l2', 'ip' or 'cosine'", code="E509")
    out_dir = Path(out_dir)
    work = out_dir / "work"
    work.mkdir(parents=True, exist_ok=True)
    vector_path = work / "embeddings.f32"
    store = _TextStore(work / "texts.jsonl")
    source_ids: dict[str, int] = {}
    source_codes = array.array("i")
    dim = None
    n = 0
    bar: Any = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(desc="embed", unit="sent")
    try:
        with open(vector_path, "wb") as vec_handle:
            for chunk in _chunks(iter_sentences(input_path, text_field, source_field), chunk_size):
                texts = [t for t, _ in chunk]
                vectors = encoder.encode(texts)
                dim = vectors.shape[1]
                vec_handle.write(vectors.tobytes())
                store.extend(texts)
                source_codes.extend(source_ids.setdefault(s, len(source_ids)) for _, s in chunk)
                n += len(chunk)
                if bar is not None:
                    bar.update(len(chunk))
    finally:
        store.close()
        if bar is not None:
            bar.close()
    if n == 0 or dim is None:
        raise ParakitError(f"no sentence found in {input_path}", code="E501")
    vectors = np.memmap(vector_path, dtype=np.float32, mode="r", shape=(n, dim))
    codes = np.frombuffer(source_codes, dtype=np.int32)
    all_pairs = []
    for name, code in source_ids.items():
        rows = np.flatnonzero(codes == code)
        if len(rows) < 2:
            logger.info("source %r has one sentence: no pair", name)
            continue
        all_pairs.append(_search_source(vectors, rows, k, factory, metric, chunk_size, seed))
    pairs = np.concatenate(all_pairs) if all_pairs else np.empty((0, 2), dtype=np.int64)
    del vectors
    names = {code: name for name, code in source_ids.items()}
    sim = CharNgramSimilarity(ngram_range=(2, 4), analyzer="char_wb")
    bins = np.empty(len(pairs), dtype=np.int16)
    candidates_path = out_dir / "candidates.jsonl"
    header = {
        "parakit": 1,
        **PairSet(
            [],
            scheme="binary",
            name="knn-candidates",
            metadata={
                "knn": {"k": k, "metric": metric, "factory": factory, "encoder": encoder.model}
            },
        ).header(),
    }
    with atomic_write(candidates_path) as handle:
        handle.write(json.dumps(header, ensure_ascii=False) + "\n")
        for start in range(0, len(pairs), chunk_size):
            block = pairs[start : start + chunk_size]
            texts1 = store.get(block[:, 0])
            texts2 = store.get(block[:, 1])
            values = sim.score(texts1, texts2)
            bins[start : start + len(block)] = similarity_bins(values, n_bins)
            for (a, b), t1, t2, v in zip(block, texts1, texts2, values, strict=True):
                pair = _pair(int(a), int(b), t1, t2, float(v), names[int(codes[a])])
                handle.write(json.dumps(pair.to_dict(), ensure_ascii=False) + "\n")
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
        texts1, texts2 = store.get(block[:, 0]), store.get(block[:, 1])
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
        from parakit.io import write

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
    for leftover in (vector_path, store.path):
        leftover.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        work.rmdir()  # only when empty
    return KnnResult(candidates_path, sample_path, n, len(pairs), counts, sampled)


def _pair(
    a: int, b: int, text1: str, text2: str, value: float, source: str, bin_: int | None = None
) -> Pair:
    meta: dict[str, Any] = {"char_tf_cosine": round(value, 6), "rows": [a, b]}
    if bin_ is not None:
        meta["bin"] = bin_
    return Pair(id=f"knn-{a}-{b}", text1=text1, text2=text2, source=source, metadata=meta)
