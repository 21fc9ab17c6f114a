"""A FAISS vector index chosen by collection size, built from streamed chunks, saved with its texts.

Index kinds (``kind=``):

* ``flat``  – exact search (``IndexFlatIP``/``IndexFlatL2``); the default up to 100K vectors.
* ``ivf``   – inverted file over ``nlist`` k-means cells, exact vectors inside cells; the default
  above 100K vectors when ``n × dim × 4`` bytes fit ``memory_budget``. ``nprobe`` cells are
  visited per query (more: higher recall, slower).
* ``hnsw``  – graph index (``IndexHNSWSQ`` with half-precision vectors, ``hnsw_storage``): high
  recall at low latency; with a recall target ``auto`` chooses it from 50K vectors.
* ``ivfpq`` – IVF with product-quantised codes (``m`` bytes per vector instead of ``4·dim``): the
  default when the vectors do not fit ``memory_budget`` and ``on_disk`` is off.
* ``ivfopq`` – ``ivfpq`` after a learned rotation (OPQ, ``OPQm,IVFn,PQm``): the same bytes per
  vector, higher recall at small ``m``, a slower training.
* ``on_disk=True`` – IVF whose inverted lists live in a memory-mapped file
  (``faiss.contrib.ondisk.merge_ondisk``), built block by block: for collections larger than RAM.

**Index choice from measurement** (``recall=0.95``): with a recall target, ``kind="auto"``
draws ``calibration_queries`` rows of the collection (seeded), finds their exact neighbours
with one streamed flat pass (timed: the cost of exact search per query), builds the
approximate kind the collection calls for (``ivf`` up to 50K vectors, ``hnsw`` above, as
measured on real vectors; ``ivfpq`` when the vectors do not fit ``memory_budget``; ``ivf`` with
``on_disk``), then raises ``nprobe`` (IVF) or ``efSearch`` (HNSW) step by step until the
estimated recall@``recall_k`` of the calibration queries (their own row left out) meets the
target with 95 % confidence (mean − 1.645 standard errors). When the vectors do not fit
``memory_budget`` and no ``pq_m`` is given, the compressed configurations are measured in
order of their size (PQ then OPQ at each ``m`` of :func:`pq_sizes`, those whose codes fit the
budget) and the smallest one that meets the target is kept (every one tried is in
``calibration["configs"]`` with its bytes per vector and recall). It keeps exact ``flat`` search
when
the target is out of reach or the tuned index is not faster per query than the exact pass. The
choice, the trials and the estimate are in :meth:`VectorIndex.meta` (``calibration``), which
mining writes into its manifests. An explicit kind with a recall target is tuned the same way
(falling back to flat only when it cannot reach the target).

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

from parakit.errors import Errors, VectorError
from parakit.io.atomic import save_json

ChunkSource = Callable[[], Iterator[np.ndarray]]
#: below this many vectors, exact search is cheap enough and always chosen by ``kind="auto"``
FLAT_LIMIT = 100_000
#: with a recall target, ``auto`` keeps exact search up to this many vectors (calibrating costs
#: more than the exact search it would save)
CALIBRATE_MIN = 20_000
#: with a recall target, ``auto`` tries HNSW instead of IVF from this many vectors (measured on
#: real MiniLM vectors at recall@5 0.95: 31 % less CPU than the tuned IVF at 80K, 52 % at 160K,
#: CPU time growing as N^1.05 against IVF's N^1.6; docs/benchmarks.md)
HNSW_MIN = 50_000
KINDS = ("auto", "flat", "ivf", "hnsw", "ivfpq", "ivfopq")
#: how an HNSW graph keeps its vectors (``VectorIndex(hnsw_storage=...)``)
HNSW_STORAGES = ("fp16", "fp32")
#: kinds with inverted lists (``nlist`` cells, ``nprobe`` visited) and those with PQ codes
IVF_KINDS = ("ivf", "ivfpq", "ivfopq")
PQ_KINDS = ("ivfpq", "ivfopq")
#: bytes an IVF list stores per vector besides its code: the int64 id
ID_BYTES = 8
#: search breadths tried in turn by the calibration (IVF ``nprobe``, HNSW ``efSearch``)
NPROBE_STEPS = (1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
#: (from 64 up in steps of at most 1.25: on crowded 1M vectors the wide end is where the search
#: time goes, and a step of 1.5 overshot the breadth the target needs by up to a third)
EF_STEPS = (
    8, 12, 16, 24, 32, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640,
    800, 1000, 1250, 1500, 1800, 2000,
)  # fmt: skip
#: one-sided 95 % normal quantile: the calibrated recall must hold at this confidence
Z_95 = 1.645


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
    if memory_budget is not None and n * dim * 4 > memory_budget:
        return "ivfpq"  # the raw vectors do not fit, whatever their number
    if n <= FLAT_LIMIT:
        return "flat"
    return "ivf"


def pq_sizes(dim: int) -> list[int]:
    """The PQ code sizes ``m`` (bytes per vector at 8 bits) the calibration tries for ``dim``:
    dim/32 … dim/2 that divide ``dim``, at least 4, smallest first.

    Example:
        >>> pq_sizes(384), pq_sizes(768)[:3]
        ([12, 24, 48, 96, 192], [24, 48, 96])
    """
    sizes = {dim // d for d in (32, 16, 8, 4, 2) if dim % d == 0 and dim // d >= 4}
    return sorted(m for m in sizes if dim % m == 0)


def vector_bytes(kind: str, dim: int, pq_m: int | None = None, pq_bits: int = 8) -> int:
    """Bytes one vector takes in an index of ``kind`` (codes + ids; the fixed centroids and
    rotation left out): what ``memory_budget`` is compared with.

    Example:
        >>> vector_bytes("flat", 384), vector_bytes("ivfpq", 384, 48)
        (1536, 56)
    """
    if kind in PQ_KINDS:
        m = pq_m or max(1, dim // 8)
        return math.ceil(m * pq_bits / 8) + ID_BYTES
    return 4 * dim + (ID_BYTES if kind != "flat" else 0)


def default_nlist(n: int) -> int:
    """IVF cells: about 4·√n (FAISS guideline), at least 1, at most n / 39 (39 points per cell)."""
    return int(max(1, min(4 * math.sqrt(max(n, 1)), n // 39 or 1)))


#: neighbours fetched beyond ``k`` so that equal scores at the ``k``-th place are decided by row
#: id, the same way by every index kind and every shard layout (sentences that differ only in
#: case or punctuation embed identically with a lowercasing encoder: exact ties are common)
TIE_MARGIN = 4


def order_ties(scores: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's neighbours by descending score, equal scores by ascending id (missing ones,
    id -1, last), the first ``k`` kept: one order whatever index or shard found them.

    Example:
        >>> scores = np.array([[0.9, 0.5, 0.5, 0.5]], dtype=np.float32)
        >>> order_ties(scores, np.array([[4, 9, 2, 7]]), 3)[1].tolist()
        [[4, 2, 7]]
    """
    missing = np.iinfo(np.int64).max
    order = np.lexsort((np.where(ids < 0, missing, ids), -scores), axis=-1)[:, :k]
    return np.take_along_axis(scores, order, 1), np.take_along_axis(ids, order, 1)


class ChunkedVectors:
    """Rows of embedding chunk files (``00000.npy``, ``00001.npy``... of ``chunk_size`` rows
    each, memory-mapped) by global row id: what :func:`exact_order` re-scores with."""

    def __init__(self, folder: str | Path) -> None:
        files = sorted(Path(folder).glob("[0-9]*.npy"))
        if not files:
            raise VectorError(Errors.E801_embedding_chunks_npy_2.format(folder=folder))
        self.chunks = [np.load(f, mmap_mode="r") for f in files]
        self.chunk_size = len(self.chunks[0])

    def __getitem__(self, ids: np.ndarray) -> np.ndarray:
        flat = np.asarray(ids).ravel()
        out = np.empty((len(flat), self.chunks[0].shape[1]), dtype=np.float32)
        which, row = np.divmod(flat, self.chunk_size)
        for chunk in np.unique(which):
            mask = which == chunk
            out[mask] = self.chunks[int(chunk)][row[mask]]
        return out.reshape(*np.shape(ids), -1)


def calibration_rows(pool: int | np.ndarray, count: int, seed: int) -> np.ndarray:
    """The rows a recall target is measured on: ``count`` of ``pool`` (a number of rows, or
    the candidate rows), drawn without replacement with seed ``seed + 1``, sorted.

    Example:
        >>> calibration_rows(10, 3, 0).tolist() == calibration_rows(np.arange(10), 3, 0).tolist()
        True
    """
    size = min(count, int(pool) if np.ndim(pool) == 0 else len(pool))
    return np.sort(np.random.default_rng(seed + 1).choice(pool, size=size, replace=False))


def sample_calibration_queries(
    folder: str | Path,
    count: int,
    seed: int,
    codes: str | Path | None,
    source: int | None,
    own_rows: bool,
) -> tuple[np.ndarray, np.ndarray] | None:
    """``count`` rows (:func:`calibration_rows`) of the embedding chunks in ``folder`` that
    will search an index (with ``codes``, a ``.npy`` of their source codes: those of
    ``source`` only), as the ``calibration`` of :meth:`VectorIndex.build`: (vectors, ids),
    ids the global row ids where the rows are the indexed collection's own (``own_rows``: a
    query's own row is left out), else -1. None when no row qualifies."""
    vectors = ChunkedVectors(folder)
    candidates = (
        sum(len(chunk) for chunk in vectors.chunks)
        if codes is None
        else np.flatnonzero(np.asarray(np.load(codes, mmap_mode="r")) == source)
    )
    rows = calibration_rows(candidates, count, seed)
    if not len(rows):
        return None
    ids = rows if own_rows else np.full(len(rows), -1, dtype=np.int64)
    return vectors[rows], ids


def exact_order(
    queries: np.ndarray,
    ids: np.ndarray,
    vectors: ChunkedVectors,
    k: int,
    metric: str = "ip",
    block: int = 1024,
) -> tuple[np.ndarray, np.ndarray]:
    """Re-score the neighbours ``ids`` of ``queries`` exactly and keep the best ``k`` by
    :func:`order_ties`. An index's float32 scores of two identical vectors can differ in the
    last bit (BLAS handles the rows at the edge of a block with another kernel), so neither
    their order nor which one makes the ``k``-th place would be the same in one index and in
    shards; each score here is one float64 product and sum per row, the same for identical
    vectors wherever they stand. ``metric`` ``l2`` scores by minus the squared distance, as
    :meth:`VectorIndex.search` does.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> x = np.array([[1, 0], [0.6, 0.8], [0.6, 0.8]], dtype=np.float32)
        >>> np.save(folder / "00000.npy", x)
        >>> exact_order(x[:1], np.array([[2, 0, 1]]), ChunkedVectors(folder), 3)[1].tolist()
        [[0, 1, 2]]
    """
    scores = np.full(ids.shape, -np.inf, dtype=np.float64)
    for start in range(0, len(ids), block):
        part = ids[start : start + block]
        found = part >= 0
        rows = vectors[np.where(found, part, 0)].astype(np.float64)
        q = np.asarray(queries[start : start + block], dtype=np.float64)[:, None, :]
        value = -np.square(rows - q).sum(axis=-1) if metric == "l2" else (rows * q).sum(axis=-1)
        scores[start : start + block] = np.where(found, value, -np.inf)
    best, kept = order_ties(scores, ids, k)
    return best.astype(np.float32), kept


class VectorIndex:
    """FAISS index wrapper with streamed building, id mapping, save/load and a sentence store.

    Args:
        kind: one of ``auto``, ``flat``, ``ivf``, ``hnsw``, ``ivfpq``, ``ivfopq`` (see the
            module docs).
        metric: ``ip`` (cosine on normalised vectors) or ``l2``.
        nlist: IVF cells (None: :func:`default_nlist`).
        nprobe: IVF cells visited per query (None: max(32, nlist // 64), recall@5 0.96 on 100K
            real MiniLM vectors); more = higher recall, slower search (cost ~ linear in nprobe).
        pq_m: PQ sub-quantisers (code bytes at 8 bits) for ``ivfpq``/``ivfopq`` (None: dim //
            8, or chosen by measurement with a ``recall`` target and a ``memory_budget`` the
            flat vectors exceed).
        pq_bits: bits per sub-quantiser code (8: 256 centroids each, best recall; 4: faster
            training and scanning, lower recall).
        hnsw_m: HNSW neighbours per node (32: M 16 lost recall, 0.91 against 0.95 at the same
            ``ef_search`` on 1M crowded vectors; M 48 gained 0.001-0.02 for 6-15 % more time).
        hnsw_storage: how the graph keeps its vectors: ``fp16`` (half precision: half the
            memory, a build and a search 16-25 % faster at the same recall on 1M vectors) or
            ``fp32``. The scores an fp16 graph returns carry half precision's rounding
            (about 1e-3 on a cosine); mining re-scores every neighbour list from the stored
            float32 embeddings, so the scores it writes do not depend on it.
        ef_construction: HNSW build breadth (FAISS's default is 40). 128 builds a better
            graph in twice the time: mining 1M static-encoder vectors at recall 0.95, the
            build took 233 s against 118 s and the search needed ``ef_search`` 384 instead
            of 512 (692 s against 1,000 s; ``benchmarks/mine.py scale``).
        ef_search: HNSW search breadth; more = higher recall, slower (None: 128, or tuned
            from 8 upward with a ``recall`` target).
        train_size: vectors sampled (evenly over chunks) to train IVF/PQ (None: 64 per cell).
        memory_budget: bytes the raw vectors may take in RAM; used by ``kind="auto"``.
        on_disk: keep IVF lists in a memory-mapped file under ``workdir`` (requires ``workdir``).
        workdir: folder for on-disk lists and build blocks.
        block_size: vectors per on-disk build block (bounds build memory).
        threads: FAISS OpenMP threads (None: FAISS default).
        seed: k-means, training-sample and calibration-sample seed.
        recall: target recall@``recall_k`` in (0, 1] (None: no calibration, kinds by size).
            With a target, ``auto`` chooses flat / approximate by measurement and the search
            breadth (``nprobe``/``ef_search``) is tuned upward until the target is met; a
            given ``nprobe``/``ef_search`` is the first value tried. Costs one exact pass of
            ``calibration_queries`` queries over the collection plus a few small searches.
        recall_k: neighbours compared with exact search (mining: its ``k``).
        calibration_queries: collection rows used as calibration queries; more = tighter
            estimate (standard error ~ 0.1/sqrt(n)), longer exact pass. 4,000 puts the 95 %
            lower bound about 0.003 under the mean at recall 0.95: with 1,000 (0.007 under,
            and one sample's mean 0.009 below a 10,000-row measure) a 1M crowded collection
            was searched at ``efSearch`` 384 where 192 met the target.
        self_join: the index will be searched by its own rows, each passing its id
            (``search(vectors, k, rows=ids)``), as mining searches a collection against
            itself. An HNSW search then starts at the query's own node on the graph's bottom
            level instead of descending from the entry point, and a recall target on the
            index's own rows is calibrated that way. On 1M crowded vectors recall@5 0.9
            needed ``efSearch`` 16 instead of 32 (0.049 against 0.112 ms a query); at 0.95
            both ways need 160 (``benchmarks/mine.py selfstart``).
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
        hnsw_storage: str = "fp16",
        ef_construction: int = 128,
        ef_search: int | None = None,
        train_size: int | None = None,
        memory_budget: int | None = None,
        on_disk: bool = False,
        workdir: str | Path | None = None,
        block_size: int = 200_000,
        threads: int | None = None,
        seed: int = 0,
        recall: float | None = None,
        recall_k: int = 5,
        calibration_queries: int = 4_000,
        self_join: bool = False,
    ) -> None:
        self.kind = kind
        self.metric = metric
        self.nlist = nlist
        self.nprobe = nprobe
        self.pq_m = pq_m
        self.pq_bits = pq_bits
        self.hnsw_m = hnsw_m
        self.hnsw_storage = hnsw_storage
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.train_size = train_size
        self.memory_budget = memory_budget
        self.on_disk = on_disk
        self.workdir = workdir
        self.block_size = block_size
        self.threads = threads
        self.seed = seed
        self.recall = recall
        self.recall_k = recall_k
        self.calibration_queries = calibration_queries
        self.self_join = self_join

    # -- building ---------------------------------------------------------------------------
    def _check(self) -> None:
        if self.kind not in KINDS:
            raise VectorError(
                Errors.E801_unknown_index_kind.format(kind=self.kind, kinds=", ".join(KINDS))
            )
        if self.metric not in ("ip", "l2"):
            raise VectorError(Errors.E801_unknown_metric_use.format(metric=self.metric))
        if self.on_disk and self.kind in ("hnsw", "ivfopq"):
            raise VectorError(Errors.E801_disk_keeps_ivf.format(kind=self.kind))
        if self.on_disk and self.workdir is None:
            raise VectorError(Errors.E801_disk_true_needs)
        if self.recall is not None and not 0 < self.recall <= 1:
            raise VectorError(Errors.E801_recall_target_must.format(recall=self.recall))
        if self.recall_k < 1 or self.calibration_queries < 1:
            raise VectorError(Errors.E801_recall_calibration_queries)
        if self.hnsw_storage not in HNSW_STORAGES:
            raise VectorError(
                Errors.E801_unknown_hnsw_storage.format(
                    storage=self.hnsw_storage, storages=", ".join(HNSW_STORAGES)
                )
            )
        if self.ef_construction < 1:
            raise VectorError(
                Errors.E801_ef_construction_least.format(ef_construction=self.ef_construction)
            )

    def _empty(self, faiss: Any, n: int, dim: int) -> Any:
        metric = faiss.METRIC_INNER_PRODUCT if self.metric == "ip" else faiss.METRIC_L2
        kind = self.kind_
        if kind == "flat":
            return faiss.IndexIDMap2(faiss.IndexFlat(dim, metric))
        if kind == "hnsw":
            inner = (
                faiss.IndexHNSWSQ(dim, faiss.ScalarQuantizer.QT_fp16, self.hnsw_m, metric)
                if self.hnsw_storage == "fp16"
                else faiss.IndexHNSWFlat(dim, self.hnsw_m, metric)
            )
            inner.hnsw.efConstruction = self.ef_construction
            inner.hnsw.efSearch = self.ef_search_ = self.ef_search or 128
            return faiss.IndexIDMap2(inner)
        nlist = self.nlist_
        if kind == "ivf":
            return faiss.index_factory(dim, f"IVF{nlist},Flat", metric)
        m = self.pq_m_
        if dim % m:
            raise VectorError(Errors.E801_pq_must_divide.format(m=m, dim=dim))
        rotation = f"OPQ{m}," if kind == "ivfopq" else ""
        return faiss.index_factory(dim, f"{rotation}IVF{nlist},PQ{m}x{self.pq_bits}", metric)

    def build(
        self,
        chunks: ChunkSource,
        n: int | None = None,
        ids: Callable[[], Iterator[np.ndarray]] | None = None,
        progress: bool = False,
        calibration: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> VectorIndex:
        """Build from ``chunks()``, an iterator of float32 arrays (called once or twice).

        Args:
            chunks: zero-argument callable returning an iterator of (rows, dim) arrays; it is
                called a second time for trained kinds (one pass to sample, one to add), so
                memory stays at one chunk plus the training sample.
            n: total rows, if known (saves a counting pass for ``auto``/IVF settings).
            ids: like ``chunks`` but yielding int64 id arrays (default: 0..n-1 in order).
            progress: show a progress bar.
            calibration: the queries a recall target is measured with, as (vectors, ids): the
                rows the index will be asked about, where they are not its own (a shard is
                searched by every row of the collection; an index by another file's
                sentences). Their ids leave a query's own row out where the index holds it
                (-1: none). Default: ``calibration_queries`` of the index's own rows, which
                overstates the recall of other queries: a row of the graph leads the search
                to its own neighbourhood.

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
                raise VectorError(Errors.E801_build_index_zero)
            dim = first.shape[1]
        self.dim_ = int(dim)
        self.kind_ = (
            choose_kind(n, dim, self.memory_budget, self.on_disk)
            if self.kind == "auto"
            else self.kind
        )
        self.ef_search_ = None
        self.calibration_ = None
        calibrate = self.recall is not None and not (
            self.kind == "auto" and n <= CALIBRATE_MIN and not self._memory_bound(n, dim)
        )
        if self.kind == "auto" and self.recall is not None and self.kind_ == "flat":
            # a recall target replaces the size rule: approximate kinds are measured too
            self.kind_ = "ivf" if calibrate else "flat"
        if (
            self.kind == "auto"
            and self.recall is not None
            and self.kind_ == "ivf"
            and n >= HNSW_MIN
            and not self.on_disk
        ):
            self.kind_ = "hnsw"
        if self.kind_ == "flat" and self.recall is not None:
            calibrate = False
            self.calibration_ = {"chosen_by": "flat: exact search", "recall_estimate": 1.0}
        if self.kind_ in IVF_KINDS:
            self.nlist_ = min(self.nlist or default_nlist(n), max(1, n))
        else:
            self.nlist_ = None
        self.pq_m_ = (self.pq_m or max(1, dim // 8)) if self.kind_ in PQ_KINDS else None
        # with a target and a budget the flat vectors exceed, the code size is measured too
        choose_codes = (
            calibrate
            and self.kind_ in PQ_KINDS
            and self.pq_m is None
            and self._memory_bound(n, dim)
        )
        self.nprobe_ = None
        queries = truth = None
        # a self-join's own rows search from their own node, as the join will search them
        self._calibration_rows = self.self_join and calibration is None
        if calibrate:
            queries, query_ids = (
                self._calibration_sample(chunks, ids, n)
                if calibration is None
                else (
                    np.ascontiguousarray(calibration[0], dtype=np.float32),
                    np.asarray(calibration[1], dtype=np.int64),
                )
            )
            truth, flat_seconds = self._exact(chunks, ids, queries)
            self.calibration_ = {
                "queries": len(queries),
                "k": self.recall_k,
                "target": self.recall,
                "flat_ms_per_query": round(1000 * flat_seconds / len(queries), 4),
                "searched_from": "own node" if self._calibration_rows else "entry point",
                "trials": [],
            }
        if choose_codes:
            self._choose_codes(faiss, chunks, ids, n, dim, queries, query_ids, truth, progress)
        else:
            bar = _bar(n, "index", progress)
            self.index_ = self._fill(faiss, chunks, ids, n, dim, bar)
            bar.close()
            if calibrate:
                self._tune(faiss, chunks, ids, n, dim, queries, query_ids, truth, progress)
        self.ntotal_ = int(self.index_.ntotal)
        self.build_seconds_ = time.perf_counter() - started
        return self

    def _memory_bound(self, n: int, dim: int) -> bool:
        return self.memory_budget is not None and n * dim * 4 > self.memory_budget

    def _fill(self, faiss: Any, chunks: ChunkSource, ids: Any, n: int, dim: int, bar: Any) -> Any:
        """A new index of ``self.kind_``: trained (IVF kinds) and filled with every chunk."""
        index = self._empty(faiss, n, dim)
        if self.kind_ in IVF_KINDS:
            index.train(self._sample(chunks, n))
            self.nprobe_ = self.nprobe or max(32, self.nlist_ // 64)
            # through the OPQ rotation (an IndexPreTransform) to the IVF index itself
            faiss.extract_index_ivf(index).nprobe = self.nprobe_
        id_iter = ids() if ids is not None else None
        offset = 0
        if self.on_disk and self.kind_ != "flat":
            return self._build_on_disk(faiss, index, chunks, id_iter, bar)
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
        return index

    # -- calibration ------------------------------------------------------------------------
    def _calibration_sample(
        self, chunks: ChunkSource, ids: Any, n: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """``calibration_queries`` collection rows (seeded, spread over all chunks) and ids."""
        keep = calibration_rows(n, self.calibration_queries, self.seed)
        parts, part_ids, offset = [], [], 0
        id_iter = ids() if ids is not None else None
        for chunk in chunks():
            chunk_ids = (
                np.asarray(next(id_iter), dtype=np.int64)
                if id_iter is not None
                else np.arange(offset, offset + len(chunk), dtype=np.int64)
            )
            local = keep[(keep >= offset) & (keep < offset + len(chunk))] - offset
            if len(local):
                parts.append(np.asarray(chunk[local], dtype=np.float32))
                part_ids.append(chunk_ids[local])
            offset += len(chunk)
        return np.ascontiguousarray(np.concatenate(parts)), np.concatenate(part_ids)

    def _exact(
        self, chunks: ChunkSource, ids: Any, queries: np.ndarray
    ) -> tuple[np.ndarray, float]:
        """Exact top ``recall_k + 1`` ids of ``queries`` over all chunks, and the seconds taken."""
        import faiss

        width = self.recall_k + 1
        metric = faiss.METRIC_INNER_PRODUCT if self.metric == "ip" else faiss.METRIC_L2
        best_scores = np.full((len(queries), 0), -np.inf, dtype=np.float32)
        best_ids = np.zeros((len(queries), 0), dtype=np.int64)
        id_iter = ids() if ids is not None else None
        offset = 0
        started = time.perf_counter()
        for chunk in chunks():
            chunk = np.ascontiguousarray(chunk, dtype=np.float32)
            chunk_ids = (
                np.asarray(next(id_iter), dtype=np.int64)
                if id_iter is not None
                else np.arange(offset, offset + len(chunk), dtype=np.int64)
            )
            offset += len(chunk)
            scores, rows = faiss.knn(queries, chunk, min(width, len(chunk)), metric=metric)
            if self.metric == "l2":
                scores = -scores
            best_scores = np.concatenate([best_scores, scores], axis=1)
            best_ids = np.concatenate([best_ids, chunk_ids[rows]], axis=1)
            order = np.argsort(-best_scores, axis=1, kind="stable")[:, :width]
            best_scores = np.take_along_axis(best_scores, order, 1)
            best_ids = np.take_along_axis(best_ids, order, 1)
        return best_ids, time.perf_counter() - started

    def _recall(
        self, queries: np.ndarray, query_ids: np.ndarray, truth: np.ndarray
    ) -> tuple[float, float, float]:
        """(mean recall@k, its 95 % one-sided lower bound, seconds) of the current index."""
        started = time.perf_counter()
        rows = query_ids if self._calibration_rows else None
        _, found = self._faiss_search(queries, self.recall_k + 1, rows)
        seconds = time.perf_counter() - started
        per_query = recall_per_query(found, truth, query_ids, self.recall_k)
        mean = float(per_query.mean())
        error = (
            float(per_query.std(ddof=1) / math.sqrt(len(per_query))) if len(per_query) > 1 else 0.0
        )
        return mean, mean - Z_95 * error, seconds

    def _set_breadth(self, faiss: Any, value: int) -> None:
        if self.kind_ == "hnsw":
            faiss.downcast_index(self.index_.index).hnsw.efSearch = self.ef_search_ = value
        else:
            faiss.extract_index_ivf(self.index_).nprobe = self.nprobe_ = value

    def _tune(
        self,
        faiss: Any,
        chunks: ChunkSource,
        ids: Any,
        n: int,
        dim: int,
        queries: np.ndarray,
        query_ids: np.ndarray,
        truth: np.ndarray,
        progress: bool,
    ) -> None:
        """Raise nprobe / efSearch until the recall target holds; else fall back to flat."""
        cal = self.calibration_
        assert cal is not None and self.recall is not None
        if self.kind_ == "hnsw":
            first = max(self.ef_search or EF_STEPS[0], self.recall_k + 1)
            steps = [v for v in EF_STEPS if v >= first]
            name = "ef_search"
        else:
            first = self.nprobe or 1
            steps = [v for v in NPROBE_STEPS if first <= v <= max(1, self.nlist_ // 2)]
            name = "nprobe"
        steps = sorted({first, *steps})
        met = False
        for value in steps:
            self._set_breadth(faiss, value)
            mean, lower, seconds = self._recall(queries, query_ids, truth)
            cal["trials"].append({name: value, "recall": round(mean, 4), "lower": round(lower, 4)})
            if lower >= self.recall:
                met = True
                break
        cal.update(
            approx_kind=self.kind_,
            approx_ms_per_query=round(1000 * seconds / len(queries), 4),
            recall_estimate=round(mean, 4),
            recall_lower=round(lower, 4),
        )
        if self.kind_ in IVF_KINDS:
            cal["nlist"] = self.nlist_
        if self.kind_ in PQ_KINDS:
            cal["pq_m"] = self.pq_m_
        slower = cal["approx_ms_per_query"] >= cal["flat_ms_per_query"]
        # exact search is the fallback only where its vectors fit the memory budget
        fallback = not self._memory_bound(n, dim)
        if met and not (self.kind == "auto" and slower and fallback):
            cal["chosen_by"] = f"{name} {value}: recall target met"
            return
        if not met and not fallback:
            cal["chosen_by"] = (
                f"target not reached at {name} {value}; exact search does not fit the memory "
                "budget, so the best setting is kept"
            )
            return
        # exact search: recall 1 by definition
        cal["chosen_by"] = (
            f"flat: {self.kind_} slower per query than exact search"
            if met
            else f"flat: {self.kind_} did not reach the target (best {name} {value})"
        )
        self.kind_, self.nlist_, self.nprobe_, self.ef_search_ = "flat", None, None, None
        self.pq_m_ = None
        bar = _bar(n, "index (flat)", progress)
        self.index_ = self._fill(faiss, chunks, ids, n, dim, bar)
        bar.close()
        cal.update(recall_estimate=1.0, recall_lower=1.0)

    def _choose_codes(
        self,
        faiss: Any,
        chunks: ChunkSource,
        ids: Any,
        n: int,
        dim: int,
        queries: np.ndarray,
        query_ids: np.ndarray,
        truth: np.ndarray,
        progress: bool,
    ) -> None:
        """Measure the compressed configurations smallest first (PQ, then OPQ, at each ``m`` of
        :func:`pq_sizes` whose codes fit the budget), each with its ``nprobe`` tuned, and keep
        the first that meets the recall target, else the one with the best recall."""
        cal = self.calibration_
        assert cal is not None
        budget = self.memory_budget or 0
        fits = [
            m for m in pq_sizes(dim) if n * vector_bytes("ivfpq", dim, m, self.pq_bits) <= budget
        ]
        candidates = [(kind, m) for m in fits or pq_sizes(dim)[:1] for kind in ("ivfpq", "ivfopq")]
        if self.kind == "ivfpq":  # the rotation only where asked for or chosen by auto
            candidates = [c for c in candidates if c[0] == "ivfpq"]
        elif self.kind == "ivfopq":
            candidates = [c for c in candidates if c[0] == "ivfopq"]
        configs: list[dict[str, Any]] = []
        best: tuple[float, Any, dict[str, Any]] | None = None
        for kind, m in candidates:
            self.kind_, self.pq_m_ = kind, m
            cal["trials"] = []
            started = time.perf_counter()
            bar = _bar(n, f"index ({kind} m={m})", progress)
            self.index_ = self._fill(faiss, chunks, ids, n, dim, bar)
            bar.close()
            build_seconds = time.perf_counter() - started
            self._tune(faiss, chunks, ids, n, dim, queries, query_ids, truth, progress)
            config = {
                "kind": kind,
                "pq_m": m,
                "bytes_per_vector": vector_bytes(kind, dim, m, self.pq_bits),
                "nprobe": self.nprobe_,
                "recall": cal["recall_estimate"],
                "lower": cal["recall_lower"],
                "ms_per_query": cal["approx_ms_per_query"],
                "build_s": round(build_seconds, 2),
            }
            configs.append(config)
            state = (self.index_, self.nprobe_, dict(cal))
            if best is None or config["lower"] > best[0]:
                best = (config["lower"], state, config)
            if config["lower"] >= (self.recall or 0):
                break
        assert best is not None
        (self.index_, self.nprobe_, kept), config = best[1], best[2]
        self.kind_, self.pq_m_ = config["kind"], config["pq_m"]
        self.calibration_ = {**kept, "configs": configs}
        if config["lower"] >= (self.recall or 0):
            self.calibration_["chosen_by"] = (
                f"{config['kind']} m={config['pq_m']} ({config['bytes_per_vector']} B/vector), "
                f"nprobe {config['nprobe']}: the smallest code that met the recall target"
            )
        else:
            self.calibration_["chosen_by"] = (
                f"target not reached by any code that fits the memory budget; the best, "
                f"{config['kind']} m={config['pq_m']} at nprobe {config['nprobe']}, is kept"
            )

    def _sample(self, chunks: ChunkSource, n: int) -> np.ndarray:
        """An evenly spread training sample (same rows every run: seeded)."""
        wanted = 64 * self.nlist_
        if self.kind_ in PQ_KINDS:
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
    def search(
        self, queries: np.ndarray, k: int, rows: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best rows for each query: (scores, ids), higher score = more similar.

        Missing neighbours (fewer than ``k`` reachable rows) have id -1 and score -inf.
        ``rows``: the index's id of each query, where the queries are its own rows (a
        self-join; -1 for a query the index does not hold): an HNSW graph is then searched
        from each query's own node (see ``self_join``); other kinds ignore it.
        """
        if not hasattr(self, "index_"):
            raise VectorError(Errors.E801_index_built_call)
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if queries.ndim != 2 or queries.shape[1] != self.dim_:
            raise VectorError(
                Errors.E801_queries_must_shape.format(dim=self.dim_, queries_shape=queries.shape)
            )
        if rows is not None and np.shape(rows) != (len(queries),):
            shape = "x".join(str(size) for size in np.shape(rows))
            raise VectorError(Errors.E801_rows_one_query.format(rows=shape, queries=len(queries)))
        scores, ids = self._faiss_search(queries, k + TIE_MARGIN, rows)
        if self.metric == "l2":
            scores = -scores
        scores = np.where(ids < 0, -np.inf, scores).astype(np.float32)
        return order_ties(scores, ids, k)

    def _faiss_search(
        self, queries: np.ndarray, width: int, rows: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """FAISS's search output (scores in its own convention, ids). With ``rows``, an HNSW
        graph is searched on level 0 from each query's own node (FAISS ``search_level_0``),
        queries whose row the graph lacks from the entry point; without them, or for the
        other kinds, the index's own search."""
        import faiss

        if rows is None or self.kind_ != "hnsw":
            return self.index_.search(queries, width)
        graph = faiss.downcast_index(self.index_.index)
        start = self._positions(np.asarray(rows, dtype=np.int64))
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        dist = np.empty((len(queries), width), dtype=np.float32)
        found = np.empty((len(queries), width), dtype=np.int64)
        held = start >= 0
        if not held.all():
            lost = ~held
            dist[lost], found[lost] = self.index_.search(queries[lost], width)
        if held.any():
            sub = np.ascontiguousarray(queries[held])
            nodes = np.ascontiguousarray(start[held], dtype=np.int32)
            # the start node's own score in FAISS's convention, from its stored vector: a
            # row that is not the query's own costs recall, never a made-up score
            stored = faiss.downcast_index(graph.storage).reconstruct_batch(nodes.astype(np.int64))
            own = (
                np.einsum("ij,ij->i", sub, stored)
                if self.metric == "ip"
                else np.einsum("ij,ij->i", sub - stored, sub - stored)
            )
            own = np.ascontiguousarray(own, dtype=np.float32)
            d = np.empty((len(sub), width), dtype=np.float32)
            i = np.empty((len(sub), width), dtype=np.int64)
            graph.search_level_0(
                len(sub), faiss.swig_ptr(sub), width, faiss.swig_ptr(nodes),
                faiss.swig_ptr(own), faiss.swig_ptr(d), faiss.swig_ptr(i),
            )  # fmt: skip
            id_map = self._id_map()
            dist[held] = d
            found[held] = np.where(i >= 0, id_map[np.maximum(i, 0)], -1)
        return dist, found

    def _id_map(self) -> np.ndarray:
        """The ids of the graph's nodes, in node order, and their sorting order (cached until
        the index grows)."""
        import faiss

        cached = getattr(self, "_id_map_cache", None)
        if cached is None or len(cached) != self.index_.ntotal:
            cached = faiss.vector_to_array(self.index_.id_map)
            self._id_map_cache, self._id_order = cached, np.argsort(cached, kind="stable")
        return cached

    def _positions(self, rows: np.ndarray) -> np.ndarray:
        """The node of each id in ``rows`` (-1 where the index does not hold it)."""
        id_map = self._id_map()
        at = np.searchsorted(id_map, rows, sorter=self._id_order)
        nodes = self._id_order[np.minimum(at, len(id_map) - 1)]
        return np.where(id_map[nodes] == rows, nodes, -1)

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
            "on_disk": self.on_disk and self.kind_ != "flat",
            "ef_search": getattr(self, "ef_search_", None),
            "hnsw_m": self.hnsw_m if self.kind_ == "hnsw" else None,
            "hnsw_storage": self.hnsw_storage if self.kind_ == "hnsw" else None,
            "ef_construction": self.ef_construction if self.kind_ == "hnsw" else None,
            "self_join": self.self_join,
            "pq_m": getattr(self, "pq_m_", None),
            "pq_bits": self.pq_bits if getattr(self, "pq_m_", None) else None,
            "recall_target": self.recall,
            "recall_estimate": (self.calibration_ or {}).get("recall_estimate"),
            "calibration": getattr(self, "calibration_", None),
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
        if self.meta()["on_disk"] and Path(self.workdir).resolve() != folder.resolve():  # type: ignore[arg-type]
            shutil.copy2(Path(self.workdir) / "lists.ivfdata", folder / "lists.ivfdata")  # type: ignore[arg-type]
        tmp = folder / ".index.faiss.tmp"
        faiss.write_index(self.index_, str(tmp))
        os.replace(tmp, folder / "index.faiss")
        save_json(folder / "index.json", {**self.meta(), **(extra or {})}, indent=2)
        return folder

    @classmethod
    def load(cls, path: str | Path, mmap: bool = False) -> VectorIndex:
        """Load a saved index folder; ``mmap=True`` memory-maps what FAISS can map."""
        import faiss

        folder = Path(path)
        if not (folder / "index.faiss").exists():
            raise VectorError(Errors.E801_index_faiss_here.format(folder=folder))
        meta = json.loads((folder / "index.json").read_text())
        flags = faiss.IO_FLAG_ONDISK_SAME_DIR if meta.get("on_disk") else 0
        if mmap:
            flags |= faiss.IO_FLAG_MMAP
        self = cls(
            kind=meta["kind"],
            metric=meta["metric"],
            nprobe=meta.get("nprobe"),
            ef_search=meta.get("ef_search") or 128,
            # graphs saved before the key existed kept float32 vectors
            hnsw_storage=meta.get("hnsw_storage") or "fp32",
            on_disk=bool(meta.get("on_disk")),
            workdir=folder,
            self_join=bool(meta.get("self_join")),
        )
        self.index_ = faiss.read_index(str(folder / "index.faiss"), flags)
        self.kind_, self.dim_, self.ntotal_ = meta["kind"], meta["dim"], meta["ntotal"]
        self.nlist_, self.nprobe_ = meta.get("nlist"), meta.get("nprobe")
        self.ef_search_ = meta.get("ef_search")
        self.calibration_ = meta.get("calibration")
        self.recall = meta.get("recall_target")
        self.pq_m_ = meta.get("pq_m")
        if self.nprobe_ and self.kind_ in IVF_KINDS:
            faiss.extract_index_ivf(self.index_).nprobe = self.nprobe_
        if self.ef_search_ and self.kind_ == "hnsw":
            faiss.downcast_index(self.index_.index).hnsw.efSearch = self.ef_search_
        self.meta_ = meta
        if (folder / "store" / "offsets.npy").exists():
            from parakit.vectors.store import SentenceStore

            self.store_ = SentenceStore(folder / "store")
        return self


def recall_per_query(
    found: np.ndarray, truth: np.ndarray, query_ids: np.ndarray | None, k: int
) -> np.ndarray:
    """Recall@k of each query: the share of its ``k`` exact neighbours among the ``k`` found,
    the query's own id (``query_ids``, when the queries are collection rows) left out of both.

    Example:
        >>> truth = np.array([[7, 1, 2, 3]]); found = np.array([[7, 1, 3, 9]])
        >>> recall_per_query(found, truth, np.array([7]), 3).tolist()
        [0.6666666666666666]
    """
    out = np.empty(len(truth))
    for row in range(len(truth)):
        own = None if query_ids is None else int(query_ids[row])
        t = [int(i) for i in truth[row] if i >= 0 and i != own][:k]
        f = [int(i) for i in found[row] if i >= 0 and i != own][:k]
        out[row] = len(set(t) & set(f)) / max(1, len(t))
    return out


def _bar(total: int, desc: str, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="vec", disable=not enabled, smoothing=0.1)
