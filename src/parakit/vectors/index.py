"""A FAISS vector index chosen by collection size, built from streamed chunks, saved with its texts.

Index kinds (``kind=``):

* ``flat``  – exact search (``IndexFlatIP``/``IndexFlatL2``); the default up to 100K vectors.
* ``ivf``   – inverted file over ``nlist`` k-means cells, exact vectors inside cells; the default
  above 100K vectors when ``n × dim × 4`` bytes fit ``memory_budget``. ``nprobe`` cells are
  visited per query (more: higher recall, slower).
* ``hnsw``  – graph index (``IndexHNSWFlat``): high recall at low latency for interactive
  queries, but slow to build on CPU; chosen only on request.
* ``ivfpq`` – IVF with product-quantised codes (``m`` bytes per vector instead of ``4·dim``): the
  default when the vectors do not fit ``memory_budget`` and ``on_disk`` is off.
* ``on_disk=True`` – IVF whose inverted lists live in a memory-mapped file
  (``faiss.contrib.ondisk.merge_ondisk``), built block by block: for collections larger than RAM.

Scores are "higher is better": inner product (= cosine for normalised vectors) for
``metric="ip"``, negative squared Euclidean distance for ``metric="l2"`` (the Turku paper's
choice).

Example:
    >>> import numpy as np
    >>> vectors = np.eye(4, dtype="float32")
    >>> index = VectorIndex(kind="flat").build(lambda: iter([vectors]))
    >>> scores, ids = index.search(vectors[:1], k=2)
    >>> int(ids[0, 0]), float(scores[0, 0])
    (0, 1.0)
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import MineError
from parakit.io.atomic import atomic_write

ChunkSource = Callable[[], Iterator[np.ndarray]]
#: below this many vectors, exact search is cheap enough and always chosen by ``kind="auto"``
FLAT_LIMIT = 100_000
KINDS = ("auto", "flat", "ivf", "hnsw", "ivfpq")


def choose_kind(n: int, dim: int, memory_budget: int | None = None, on_disk: bool = False) -> str:
    """The index kind ``kind="auto"`` picks for ``n`` vectors of ``dim`` floats.

    Example:
        >>> choose_kind(5_000, 384), choose_kind(1_000_000, 384)
        ('flat', 'ivf')
        >>> choose_kind(10**8, 384, memory_budget=8 * 2**30)
        'ivfpq'
    """
    if on_disk:
        return "ivf"
    if n <= FLAT_LIMIT:
        return "flat"
    if memory_budget is not None and n * dim * 4 > memory_budget:
        return "ivfpq"
    return "ivf"


def default_nlist(n: int) -> int:
    """IVF cells: about 4·√n (FAISS guideline), at least 1, at most n / 39 (39 points per cell)."""
    return int(max(1, min(4 * math.sqrt(max(n, 1)), n // 39 or 1)))


class VectorIndex:
    """FAISS index wrapper with streamed building, id mapping, save/load and a sentence store.

    Args:
        kind: one of ``auto``, ``flat``, ``ivf``, ``hnsw``, ``ivfpq`` (see the module docs).
        metric: ``ip`` (cosine on normalised vectors) or ``l2``.
        nlist: IVF cells (None: :func:`default_nlist`).
        nprobe: IVF cells visited per query (None: max(32, nlist // 64), recall@5 0.96 on 100K
            real MiniLM vectors); more = higher recall, slower search (cost ~ linear in nprobe).
        pq_m: PQ sub-quantisers for ``ivfpq`` (None: dim // 8).
        pq_bits: bits per sub-quantiser code (8: 256 centroids each, best recall; 4: faster
            training and scanning, lower recall).
        hnsw_m: HNSW neighbours per node.
        ef_search: HNSW search breadth; more = higher recall, slower.
        train_size: vectors sampled (evenly over chunks) to train IVF/PQ (None: 64 per cell).
        memory_budget: bytes the raw vectors may take in RAM; used by ``kind="auto"``.
        on_disk: keep IVF lists in a memory-mapped file under ``workdir`` (requires ``workdir``).
        workdir: folder for on-disk lists and build blocks.
        block_size: vectors per on-disk build block (bounds build memory).
        threads: FAISS OpenMP threads (None: FAISS default).
        seed: k-means seed.
    """

    def __init__(
        self,
        kind: str = "auto",
        metric: str = "ip",
        nlist: int | None = None,
        nprobe: int | None = None,
        pq_m: int | None = None,
        pq_bits: int = 8,
        hnsw_m: int = 32,
        ef_search: int = 128,
        train_size: int | None = None,
        memory_budget: int | None = None,
        on_disk: bool = False,
        workdir: str | Path | None = None,
        block_size: int = 200_000,
        threads: int | None = None,
        seed: int = 0,
    ) -> None:
        self.kind = kind
        self.metric = metric
        self.nlist = nlist
        self.nprobe = nprobe
        self.pq_m = pq_m
        self.pq_bits = pq_bits
        self.hnsw_m = hnsw_m
        self.ef_search = ef_search
        self.train_size = train_size
        self.memory_budget = memory_budget
        self.on_disk = on_disk
        self.workdir = workdir
        self.block_size = block_size
        self.threads = threads
        self.seed = seed

    # -- building ---------------------------------------------------------------------------
    def _check(self) -> None:
        if self.kind not in KINDS:
            raise MineError(
                f"unknown index kind {self.kind!r}; use one of {', '.join(KINDS)}", code="E801"
            )
        if self.metric not in ("ip", "l2"):
            raise MineError(f"unknown metric {self.metric!r}; use 'ip' or 'l2'", code="E801")
        if self.on_disk and self.workdir is None:
            raise MineError("on_disk=True needs a workdir for the inverted-list file", code="E801")

    def _empty(self, faiss: Any, n: int, dim: int) -> Any:
        metric = faiss.METRIC_INNER_PRODUCT if self.metric == "ip" else faiss.METRIC_L2
        kind = self.kind_
        if kind == "flat":
            return faiss.IndexIDMap2(faiss.IndexFlat(dim, metric))
        if kind == "hnsw":
            inner = faiss.IndexHNSWFlat(dim, self.hnsw_m, metric)
            inner.hnsw.efSearch = self.ef_search
            return faiss.IndexIDMap2(inner)
        nlist = self.nlist_
        if kind == "ivf":
            return faiss.index_factory(dim, f"IVF{nlist},Flat", metric)
        m = self.pq_m or max(1, dim // 8)
        if dim % m:
            raise MineError(f"pq_m={m} must divide the dimension {dim}", code="E801")
        return faiss.index_factory(dim, f"IVF{nlist},PQ{m}x{self.pq_bits}", metric)

    def build(
        self,
        chunks: ChunkSource,
        n: int | None = None,
        ids: Callable[[], Iterator[np.ndarray]] | None = None,
        progress: bool = False,
    ) -> VectorIndex:
        """Build from ``chunks()``, an iterator of float32 arrays (called once or twice).

        Args:
            chunks: zero-argument callable returning an iterator of (rows, dim) arrays; it is
                called a second time for trained kinds (one pass to sample, one to add), so
                memory stays at one chunk plus the training sample.
            n: total rows, if known (saves a counting pass for ``auto``/IVF settings).
            ids: like ``chunks`` but yielding int64 id arrays (default: 0..n-1 in order).
            progress: show a progress bar.

        Returns:
            self, with ``index_`` (the FAISS index), ``ntotal_``, ``dim_``, ``kind_``.
        """
        import faiss

        self._check()
        if self.threads:
            faiss.omp_set_num_threads(self.threads)
        started = time.perf_counter()
        dim = None
        if n is None:
            n = 0
            for chunk in chunks():
                n += len(chunk)
                dim = chunk.shape[1]
        if dim is None:
            first = next(chunks(), None)
            if first is None or n == 0:
                raise MineError("cannot build an index from zero vectors", code="E801")
            dim = first.shape[1]
        self.dim_ = int(dim)
        self.kind_ = (
            choose_kind(n, dim, self.memory_budget, self.on_disk)
            if self.kind == "auto"
            else self.kind
        )
        if self.kind_ in ("ivf", "ivfpq"):
            self.nlist_ = min(self.nlist or default_nlist(n), max(1, n))
        else:
            self.nlist_ = None
        index = self._empty(faiss, n, dim)
        if self.kind_ in ("ivf", "ivfpq"):
            index.train(self._sample(chunks, n))
            index.nprobe = self.nprobe_ = self.nprobe or max(32, self.nlist_ // 64)
        else:
            self.nprobe_ = None
        id_iter = ids() if ids is not None else None
        offset = 0
        bar = _bar(n, "index", progress)
        if self.on_disk:
            index = self._build_on_disk(faiss, index, chunks, id_iter, bar)
        else:
            for chunk in chunks():
                chunk_ids = (
                    next(id_iter)
                    if id_iter is not None
                    else np.arange(offset, offset + len(chunk), dtype=np.int64)
                )
                index.add_with_ids(
                    np.ascontiguousarray(chunk, dtype=np.float32),
                    np.asarray(chunk_ids, dtype=np.int64),
                )
                offset += len(chunk)
                bar.update(len(chunk))
        bar.close()
        self.index_ = index
        self.ntotal_ = int(index.ntotal)
        self.build_seconds_ = time.perf_counter() - started
        return self

    def _sample(self, chunks: ChunkSource, n: int) -> np.ndarray:
        """An evenly spread training sample (same rows every run: seeded)."""
        wanted = 64 * self.nlist_
        if self.kind_ == "ivfpq":
            wanted = max(wanted, 40 * 2**self.pq_bits)  # PQ codebooks: 2**bits centroids
        size = min(n, self.train_size or wanted)
        rng = np.random.default_rng(self.seed)
        keep = np.sort(rng.choice(n, size=size, replace=False))
        parts, offset = [], 0
        for chunk in chunks():
            local = keep[(keep >= offset) & (keep < offset + len(chunk))] - offset
            if len(local):
                parts.append(np.asarray(chunk[local], dtype=np.float32))
            offset += len(chunk)
        return np.ascontiguousarray(np.concatenate(parts))

    def _build_on_disk(
        self,
        faiss: Any,
        trained: Any,
        chunks: ChunkSource,
        id_iter: Iterator[np.ndarray] | None,
        bar: Any,
    ) -> Any:
        from faiss.contrib.ondisk import merge_ondisk

        folder = Path(self.workdir)  # type: ignore[arg-type]
        blocks_dir = folder / "blocks"
        blocks_dir.mkdir(parents=True, exist_ok=True)
        block_files: list[str] = []
        offset = 0
        block = faiss.clone_index(trained)

        def flush(block: Any) -> None:
            name = str(blocks_dir / f"block-{len(block_files):05d}.index")
            faiss.write_index(block, name)
            block_files.append(name)

        for chunk in chunks():
            chunk_ids = (
                next(id_iter)
                if id_iter is not None
                else np.arange(offset, offset + len(chunk), dtype=np.int64)
            )
            block.add_with_ids(
                np.ascontiguousarray(chunk, dtype=np.float32), np.asarray(chunk_ids, dtype=np.int64)
            )
            offset += len(chunk)
            bar.update(len(chunk))
            if block.ntotal >= self.block_size:
                flush(block)
                block = faiss.clone_index(trained)
        if block.ntotal:
            flush(block)
        index = faiss.clone_index(trained)
        merge_ondisk(index, block_files, str(folder / "lists.ivfdata"))
        shutil.rmtree(blocks_dir)
        return index

    # -- searching --------------------------------------------------------------------------
    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best rows for each query: (scores, ids), higher score = more similar.

        Missing neighbours (fewer than ``k`` reachable rows) have id -1 and score -inf.
        """
        if not hasattr(self, "index_"):
            raise MineError(
                "the index is not built; call build() or VectorIndex.load()", code="E801"
            )
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if queries.ndim != 2 or queries.shape[1] != self.dim_:
            raise MineError(
                f"queries must have shape (n, {self.dim_}), got {queries.shape}", code="E801"
            )
        scores, ids = self.index_.search(queries, k)
        if self.metric == "l2":
            scores = -scores
        scores = np.where(ids < 0, -np.inf, scores).astype(np.float32)
        return scores, ids

    def set_nprobe(self, nprobe: int) -> None:
        """Change the IVF cells visited per query (recall/speed trade-off) after building."""
        import faiss

        self.nprobe_ = nprobe
        faiss.extract_index_ivf(self.index_).nprobe = nprobe

    # -- persistence ------------------------------------------------------------------------
    def meta(self) -> dict[str, Any]:
        return {
            "kind": self.kind_,
            "metric": self.metric,
            "dim": self.dim_,
            "ntotal": self.ntotal_,
            "nlist": self.nlist_,
            "nprobe": self.nprobe_,
            "on_disk": self.on_disk,
            "ef_search": self.ef_search,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }

    def save(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Write ``index.faiss`` and ``index.json`` into folder ``path`` (atomically each).

        An on-disk index keeps its ``lists.ivfdata`` beside ``index.faiss``: save it into its
        own ``workdir``.
        """
        import faiss

        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        if self.on_disk and Path(self.workdir).resolve() != folder.resolve():  # type: ignore[arg-type]
            shutil.copy2(Path(self.workdir) / "lists.ivfdata", folder / "lists.ivfdata")  # type: ignore[arg-type]
        tmp = folder / ".index.faiss.tmp"
        faiss.write_index(self.index_, str(tmp))
        os.replace(tmp, folder / "index.faiss")
        with atomic_write(folder / "index.json") as handle:
            json.dump({**self.meta(), **(extra or {})}, handle, indent=2)
        return folder

    @classmethod
    def load(cls, path: str | Path, mmap: bool = False) -> VectorIndex:
        """Load a saved index folder; ``mmap=True`` memory-maps what FAISS can map."""
        import faiss

        folder = Path(path)
        if not (folder / "index.faiss").exists():
            raise MineError(
                f"{folder}: no index.faiss here; build one with `parakit mine "
                "index` or VectorIndex.build().save()",
                code="E801",
            )
        meta = json.loads((folder / "index.json").read_text())
        flags = faiss.IO_FLAG_ONDISK_SAME_DIR if meta.get("on_disk") else 0
        if mmap:
            flags |= faiss.IO_FLAG_MMAP
        self = cls(
            kind=meta["kind"],
            metric=meta["metric"],
            nprobe=meta.get("nprobe"),
            ef_search=meta.get("ef_search", 128),
            on_disk=bool(meta.get("on_disk")),
            workdir=folder,
        )
        self.index_ = faiss.read_index(str(folder / "index.faiss"), flags)
        self.kind_, self.dim_, self.ntotal_ = meta["kind"], meta["dim"], meta["ntotal"]
        self.nlist_, self.nprobe_ = meta.get("nlist"), meta.get("nprobe")
        self.meta_ = meta
        if (folder / "store" / "offsets.npy").exists():
            from parakit.vectors.store import SentenceStore

            self.store_ = SentenceStore(folder / "store")
        return self


def _bar(total: int, desc: str, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="vec", disable=not enabled, smoothing=0.1)
