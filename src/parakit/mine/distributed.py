"""Scale-out with Dask: embedding and index building per shard on a cluster, parallel search.

Why Dask (and not Ray Data or Spark): the work is NumPy arrays and FAISS calls in Python; Dask
runs them unchanged, installs with pip (no JVM as for Spark, no separate object store or
autoscaler daemon as for Ray), starts a multi-process ``LocalCluster`` on a laptop and scales
to SSH, Kubernetes, SLURM/PBS (dask-jobqueue) or cloud clusters with the same client code.
FAISS indexes are files, so shards live on a shared file system and any worker can load them.

Layout of a sharded build (``out``)::

    shard-00000/index.faiss, index.json   # rows [0, n/S) of the store, global ids
    shard-00001/...
    shards.json                           # shard list, model, row ranges (same-source
                                          # shards: each one's source code)

Example:
    >>> from dask.distributed import Client, LocalCluster  # doctest: +SKIP
    >>> client = Client(LocalCluster(n_workers=4, threads_per_worker=1))  # doctest: +SKIP
    >>> build_sharded("work/store", "all-MiniLM-L6-v2", "shards/", 4, client)  # doctest: +SKIP
    >>> # or, from the embeddings of a mining run:
    >>> build_sharded_from_embeddings("work/emb", "shards/", 4, client)  # doctest: +SKIP
    >>> ShardedIndex.load("shards/").search(queries, k=5, client=client)  # doctest: +SKIP
    >>> # every sentence of a mining run against all shards, one task per chunk and shard:
    >>> scores, ids = search_sharded("work/emb", "shards/", "knn/", 6, client)  # doctest: +SKIP

Fault tolerance: every task reads its inputs from files and writes its one output file
atomically (temp file + rename), and a task whose output exists returns at once. When a worker
dies mid-run, the Dask scheduler re-runs its unfinished tasks on the other workers (or on the
worker its nanny restarts), and the result is the same as an uninterrupted run
(``tests/mine/test_distributed.py`` kills a worker with SIGKILL in the middle of a search). A
job whose client or scheduler dies is resumed by calling the same function again.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from parakit.errors import Errors, MineError, require_extra
from parakit.io.atomic import atomic_write, save_json

if TYPE_CHECKING:
    from parakit.vectors.encode import Encoder


@functools.lru_cache(maxsize=4)
def _encoder(model: str, backend: str) -> Any:
    from parakit.vectors.encode import load_encoder

    return load_encoder(model, backend)


@functools.lru_cache(maxsize=64)
def _shard(path: str) -> Any:
    from parakit.vectors.index import VectorIndex

    return VectorIndex.load(path)


def run_tasks(
    client: Any,
    function: Callable[..., Any],
    calls: list[tuple[Any, ...]],
    desc: str,
    progress: bool = False,
    sizes: list[int] | None = None,
    unit: str = "task",
    initial: int = 0,
    pins: list[str] | None = None,
) -> list[Any]:
    """``function(*call)`` for every call, as Dask tasks on ``client`` (None: here, in order),
    with a progress bar (``sizes``: what each call counts for, in ``unit``; ``initial``:
    what earlier runs did); returns the results in call order. A failed task raises its
    error here (after the scheduler's retries, if it ran on a worker that died). ``pins``:
    the worker address each call should run on (a loose restriction: a call whose worker is
    gone runs on another)."""
    from tqdm.auto import tqdm

    weights = sizes or [1] * len(calls)
    with tqdm(
        total=initial + sum(weights),
        initial=initial,
        desc=desc,
        unit=unit,
        disable=not progress,
        smoothing=0.05,
    ) as bar:
        if client is None:
            results = []
            for call, weight in zip(calls, weights, strict=True):
                results.append(function(*call))
                bar.update(weight)
            return results
        from distributed import as_completed

        futures = [
            client.submit(function, *call, pure=False)
            if pin is None
            else client.submit(function, *call, pure=False, workers=[pin], allow_other_workers=True)
            for call, pin in zip(calls, pins or [None] * len(calls), strict=True)
        ]
        position = {future.key: n for n, future in enumerate(futures)}
        for future in as_completed(futures):
            bar.update(weights[position[future.key]])
        return client.gather(futures)


@contextlib.contextmanager
def cluster_client(workers: int | None = None, scheduler: str | None = None) -> Iterator[Any]:
    """A Dask client: of the running scheduler at ``scheduler`` (``tcp://host:8786``), else of
    a ``LocalCluster`` of ``workers`` processes with one thread each (closed on exit).

    Example:
        >>> with cluster_client(workers=2) as client:  # doctest: +SKIP
        ...     mine("sentences.txt", "work", encoder, "pairs.jsonl", client=client)
    """
    require_extra("distributed", extra="scale", needed_for="a Dask cluster")
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            client = Client(scheduler, timeout="30s")
        except OSError as err:
            raise MineError(
                Errors.E801_dask_scheduler_answers.format(scheduler=scheduler, err=err)
            ) from err
        with client:
            yield client
        return
    if workers is None or workers < 1:
        raise MineError(Errors.E801_workers_must_least.format(workers=workers))
    import dask

    # no work stealing: an idle worker that stole another's search task would load that
    # task's shard beside its own (see search_sharded); queued tasks still balance the rest
    with dask.config.set({"distributed.scheduler.work-stealing": False}):
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
    with cluster, Client(cluster) as client:
        yield client


def embed_chunk(store_path: str, start: int, stop: int, encoder: Encoder, out: str) -> str:
    """Embed rows ``[start, stop)`` of a sentence store into ``out`` (``.npy``, written
    atomically). Runs on a worker; a chunk whose file exists is skipped (resumable)."""
    from parakit.io.atomic import save_npy
    from parakit.vectors.store import SentenceStore

    target = Path(out)
    if not target.exists():
        texts = SentenceStore(store_path).texts(start, stop)
        save_npy(target, np.asarray(encoder.encode(texts), dtype=np.float32))
    return out


def rerank_batch(
    classifier: Any,
    qstore_path: str,
    store_path: str,
    rows: np.ndarray,
    cols: np.ndarray,
    positive: Any,
    out: str,
) -> str:
    """P(paraphrase) of the pairs (query row, collection row) into ``out`` (``.npy``, atomic).
    Runs on a worker; a batch whose file exists is skipped (resumable)."""
    from parakit.io.atomic import save_npy
    from parakit.mine.rerank import as_pairset, paraphrase_proba
    from parakit.vectors.store import SentenceStore

    target = Path(out)
    if not target.exists():
        qstore, store = SentenceStore(qstore_path), SentenceStore(store_path)
        pairs = as_pairset([qstore.text(int(r)) for r in rows], [store.text(int(c)) for c in cols])
        save_npy(target, np.asarray(paraphrase_proba(classifier, pairs, positive), np.float64))
    return out


def build_shard(
    store_path: str,
    start: int,
    stop: int,
    model: str,
    backend: str,
    out: str,
    kind: str = "flat",
    chunk_size: int = 5_000,
    index_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Embed rows ``[start, stop)`` of a store and build one index shard with global ids.

    Runs on a worker; skips the work when the shard is already saved (resumable).
    """
    from parakit.vectors.index import VectorIndex
    from parakit.vectors.store import SentenceStore

    folder = Path(out)
    if (folder / "index.json").exists():
        meta = json.loads((folder / "index.json").read_text())
        return {"path": str(folder), "start": start, "stop": stop, "ntotal": meta["ntotal"]}
    store = SentenceStore(store_path)
    encoder = _encoder(model, backend)
    chunks = []
    for a in range(start, stop, chunk_size):
        chunks.append(
            np.asarray(encoder.encode(store.texts(a, min(stop, a + chunk_size))), dtype=np.float32)
        )
    index = VectorIndex(kind=kind, **(index_options or {})).build(
        lambda: iter(chunks),
        n=stop - start,
        ids=lambda: iter(
            [
                np.arange(start + i * chunk_size, start + i * chunk_size + len(c))
                for i, c in enumerate(chunks)
            ]
        ),
    )
    index.save(folder, extra={"rows": [start, stop], "model": model, "backend": backend})
    return {"path": str(folder), "start": start, "stop": stop, "ntotal": index.ntotal_}


def build_sharded(
    store_path: str | Path,
    model: str | Path,
    out: str | Path,
    n_shards: int,
    client: Any,
    backend: str = "torch",
    kind: str = "flat",
    index_options: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Split a sentence store into ``n_shards`` row ranges; each Dask task embeds and indexes one.

    Args:
        store_path: a :class:`~parakit.vectors.store.SentenceStore` folder on a file system every
            worker can read.
        model: encoder model (path or id) loaded on each worker, once per process.
        out: folder for the shards (shared file system).
        n_shards: number of shards (≥ number of workers for full parallelism).
        client: a ``dask.distributed.Client``.
        backend: encoder backend (``torch``, ``onnx``).
        kind: index kind per shard.

    Returns:
        the shard list also written to ``out/shards.json``.
    """
    from parakit.vectors.store import SentenceStore

    n = len(SentenceStore(store_path))
    if n_shards < 1 or n_shards > n:
        raise MineError(Errors.E801_shards_must_between.format(n=n))
    bounds = np.linspace(0, n, n_shards + 1).astype(int)
    futures = [
        client.submit(
            build_shard,
            str(store_path),
            int(a),
            int(b),
            str(model),
            backend,
            str(Path(out) / f"shard-{i:05d}"),
            kind,
            5_000,
            index_options,
            pure=False,
        )
        for i, (a, b) in enumerate(itertools.pairwise(bounds))
    ]
    shards = client.gather(futures)
    save_json(
        Path(out) / "shards.json",
        {"shards": shards, "model": str(model), "backend": backend},
        indent=2,
    )
    return shards


def index_shard(
    parts: list[tuple[str, int, int, int]],
    out: str,
    kind: str = "flat",
    index_options: dict[str, Any] | None = None,
    codes: str | None = None,
    source: int | None = None,
    queries: str | None = None,
    query_codes: str | None = None,
) -> dict[str, Any]:
    """Build one index shard from row slices of embedding ``.npy`` files: each part is
    ``(file, first row, stop row, global id of the file's row 0)`` (a mining work folder's
    ``emb/`` chunks). With ``codes`` (a store's ``sources.npy``) only the rows of ``source``
    in those slices go in (a same-source shard). With a recall target in ``index_options``
    and ``queries`` (the folder of the embedding chunks that will search the shard: the
    collection's own, or a query file's; ``query_codes``: their source codes in the
    collection's code space, for a same-source shard) the target is measured on a sample of
    those queries, not of the shard's own rows. Runs on a worker; resumable."""
    from parakit.vectors.index import VectorIndex, sample_calibration_queries

    folder = Path(out)
    # the folder of the queries a recall target is measured on (None: no target)
    calibrated_on = None
    if queries is not None and (index_options or {}).get("recall") is not None:
        calibrated_on = Path(queries).name
    if (folder / "index.json").exists():
        meta = json.loads((folder / "index.json").read_text())
        # a shard of another plan (a rerun with other --shards) is rebuilt, not reused; files
        # by name, so that a work folder named another way (relative, absolute) still matches
        if (
            _plan_key(meta.get("parts") or []) == _plan_key(parts)
            and meta.get("source") == source
            and meta.get("calibrated_on") == calibrated_on
        ):
            return {"path": str(folder), "ntotal": meta["ntotal"], "source": source}
    keep = [slice(None)] * len(parts)
    if codes is not None:
        all_codes = np.load(codes, mmap_mode="r")
        keep = [
            np.flatnonzero(all_codes[base + lo : base + hi] == source) for _, lo, hi, base in parts
        ]

    def arrays() -> Iterator[np.ndarray]:
        # one file mapped at a time: its pages leave the process once the index has copied
        # them (a Dask nanny counts mapped pages as the worker's memory: at 5M vectors, all
        # files mapped and the index together near its limit of half this machine's memory)
        for (f, lo, hi, _), rows in zip(parts, keep, strict=True):
            yield np.asarray(np.load(f, mmap_mode="r")[lo:hi][rows], dtype=np.float32)

    options = dict(index_options or {})
    if options.get("on_disk"):  # the inverted lists live in the shard's own folder
        options["workdir"] = folder
    index = VectorIndex(kind=kind, **options)
    calibration = None
    if queries is not None and index.recall is not None:
        calibration = sample_calibration_queries(
            queries, index.calibration_queries, index.seed, query_codes, source,
            own_rows=Path(queries).resolve() == Path(parts[0][0]).parent.resolve(),
        )  # fmt: skip
    index.build(
        arrays,
        n=sum(
            hi - lo if isinstance(rows, slice) else len(rows)
            for (_, lo, hi, _), rows in zip(parts, keep, strict=True)
        ),
        ids=lambda: (
            np.arange(base + lo, base + hi)[rows]
            for (_, lo, hi, base), rows in zip(parts, keep, strict=True)
        ),
        calibration=calibration,
    )
    extra = {"parts": [list(part) for part in parts], "source": source}
    index.save(folder, extra={**extra, "calibrated_on": calibrated_on})
    return {"path": str(folder), "ntotal": index.ntotal_, "source": source}


def _plan_key(parts: list[Any]) -> list[tuple[str, int, int, int]]:
    """A shard's row plan (its ``parts``) with files by name: the same for a work folder
    named relatively or absolutely."""
    return [(Path(f).name, int(lo), int(hi), int(base)) for f, lo, hi, base in parts]


def _range_parts(
    files: list[str], sizes: list[int], starts: list[int], lo: int, hi: int
) -> list[tuple[str, int, int, int]]:
    """The slices of the embedding files that hold the rows ``[lo, hi)`` (positions counted
    over the files in order), as :func:`index_shard`'s parts."""
    parts = []
    offsets = np.cumsum([0, *sizes])
    for f, size, start, first in zip(files, sizes, starts, offsets[:-1], strict=True):
        a, b = max(lo, first), min(hi, first + size)
        if a < b:
            parts.append((f, int(a - first), int(b - first), int(start)))
    return parts


def plan_shards(
    files: list[str], sizes: list[int], starts: list[int], n_shards: int
) -> list[list[tuple[str, int, int, int]]]:
    """Cut the rows of embedding files (``sizes[i]`` rows, global ids from ``starts[i]``) into
    ``n_shards`` contiguous, near-equal row ranges; a file may be split between shards.

    Example:
        >>> plan_shards(["a.npy", "b.npy"], [4, 2], [0, 4], 2)
        [[('a.npy', 0, 3, 0)], [('a.npy', 3, 4, 0), ('b.npy', 0, 2, 4)]]
    """
    total = sum(sizes)
    if not 1 <= n_shards <= total:
        raise MineError(Errors.E801_number_shards_must.format(total=total, n_shards=n_shards))
    bounds = np.linspace(0, total, n_shards + 1).astype(int)
    return [_range_parts(files, sizes, starts, lo, hi) for lo, hi in itertools.pairwise(bounds)]


def plan_source_shards(
    files: list[str], sizes: list[int], starts: list[int], codes: np.ndarray, n_shards: int
) -> list[tuple[int, list[tuple[str, int, int, int]]]]:
    """Same-source shards: each source's rows (``codes``: one source code per row, in file
    order) cut into contiguous groups of at most ``ceil(rows / n_shards)``, so a source has
    one shard or several, never rows of another source. Returns ``(source, parts)`` per
    shard; :func:`index_shard` keeps only the source's rows of the parts.

    Example:
        >>> codes = np.array([0, 1, 0, 0, 1, 0])
        >>> plan_source_shards(["a.npy"], [6], [0], codes, 2)
        [(0, [('a.npy', 0, 3, 0)]), (0, [('a.npy', 3, 6, 0)]), (1, [('a.npy', 1, 5, 0)])]
    """
    total = sum(sizes)
    if not 1 <= n_shards <= total or len(codes) != total:
        raise MineError(
            Errors.E801_number_shards_must_between.format(
                total=total, n_shards=n_shards, n_codes=len(codes)
            )
        )
    most = -(-total // n_shards)
    plan = []
    for source in np.unique(codes):
        rows = np.flatnonzero(codes == source)
        for group in np.array_split(rows, -(-len(rows) // most)):
            parts = _range_parts(files, sizes, starts, int(group[0]), int(group[-1]) + 1)
            plan.append((int(source), parts))
    return plan


def build_sharded_from_embeddings(
    emb_dir: str | Path,
    out: str | Path,
    n_shards: int,
    client: Any,
    chunk_size: int | None = None,
    kind: str = "flat",
    index_options: dict[str, Any] | None = None,
    progress: bool = False,
    codes: str | Path | None = None,
    queries: str | Path | None = None,
    query_codes: str | Path | None = None,
) -> list[dict[str, Any]]:
    """Shard the embedding chunks of a mining work folder (``emb/00000.npy``...) over Dask
    workers: ``n_shards`` near-equal row ranges (a chunk may be split), one index per shard
    with global row ids. ``chunk_size`` defaults to the row count of the first file (all but
    the last chunk have the same size). ``client`` None: build the shards here, one by one.
    ``codes`` (the store's ``sources.npy``): same-source shards (:func:`plan_source_shards`),
    each listed in ``shards.json`` with its ``source`` code. ``queries`` / ``query_codes``:
    the embedding chunks that will search the shards and their source codes, to calibrate
    a recall target on (:func:`index_shard`)."""
    files = sorted(str(f) for f in Path(emb_dir).glob("[0-9]*.npy"))
    if not files:
        raise MineError(Errors.E801_embedding_chunks_npy.format(emb_dir=emb_dir))
    size = chunk_size or len(np.load(files[0], mmap_mode="r"))
    starts = [int(Path(f).stem) * size for f in files]
    sizes = [len(np.load(f, mmap_mode="r")) for f in files]
    if codes is None:
        plan = [(None, parts) for parts in plan_shards(files, sizes, starts, n_shards)]
    else:
        plan = list(plan_source_shards(files, sizes, starts, np.load(codes), n_shards))
    shared = None if codes is None else str(codes)
    shards = run_tasks(
        client,
        index_shard,
        [
            (
                parts,
                str(Path(out) / f"shard-{n:05d}"),
                kind,
                index_options,
                shared,
                source,
                None if queries is None else str(queries),
                None if query_codes is None else str(query_codes),
            )
            for n, (source, parts) in enumerate(plan)
        ],
        "index",
        progress,
    )
    save_json(Path(out) / "shards.json", {"shards": shards, "emb_dir": str(emb_dir)}, indent=2)
    return shards


def _search_shard(
    path: str, queries: np.ndarray, k: int, rows: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    return _shard(path).search(queries, k, rows)


def merge_results(
    results: list[tuple[np.ndarray, np.ndarray]], k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Merge per-shard (scores, ids) into the global top ``k`` (higher score first, equal
    scores by row id: the order one index gives, :func:`~parakit.vectors.index.order_ties`).

    Example:
        >>> a = (np.array([[0.9, 0.1]]), np.array([[1, 2]]))
        >>> b = (np.array([[0.5, 0.4]]), np.array([[7, 8]]))
        >>> merge_results([a, b], 3)[1].tolist()
        [[1, 7, 8]]
    """
    from parakit.vectors.index import order_ties

    scores = np.concatenate([r[0] for r in results], axis=1)
    ids = np.concatenate([r[1] for r in results], axis=1)
    return order_ties(scores, ids, k)


def search_part(
    emb_file: str,
    shard_path: str,
    k: int,
    out_file: str,
    source: int | None = None,
    codes: np.ndarray | None = None,
    first_row: int | None = None,
) -> str:
    """Search one embedding chunk against one shard; write its top ``k`` (``.npz`` with
    ``ids`` and ``scores``) to ``out_file`` atomically. With ``source`` and ``codes`` (the
    chunk's rows' source codes) only the rows of that source search it; the others get id -1
    and score -inf. ``first_row``: the collection row of the chunk's first sentence, where the
    chunk is the collection's own: the shard's own rows are then searched from their own node
    of an HNSW graph, as one index searches its collection (the others from the entry point).
    Runs on a worker (the one holding the shard, see :func:`search_sharded`); a part whose
    output exists is skipped."""
    out = Path(out_file)
    if out.exists():
        return str(out)
    queries = np.ascontiguousarray(np.load(emb_file), dtype=np.float32)
    own = None if first_row is None else np.arange(first_row, first_row + len(queries))
    if codes is None:
        scores, ids = _search_shard(shard_path, queries, k, own)
    else:
        scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        ids = np.full((len(queries), k), -1, dtype=np.int64)
        rows = np.flatnonzero(codes == source)
        if len(rows):
            scores[rows], ids[rows] = _search_shard(
                shard_path, queries[rows], k, None if own is None else own[rows]
            )
    with atomic_write(out, "wb") as handle:
        np.savez(handle, ids=ids, scores=scores)
    return str(out)


def merge_chunk(
    part_files: list[str],
    k: int,
    out_file: str,
    emb_file: str,
    collection_emb: str | None = None,
    metric: str = "ip",
) -> str:
    """Merge one chunk's per-shard results (:func:`search_part`) into its top ``k`` and write
    them to ``out_file`` atomically (no parts: no neighbours, ids -1); the part files are then
    removed. With ``collection_emb``
    (the collection's chunk folder) the parts hold ``k`` + 4 neighbours each, re-scored
    exactly (:func:`~parakit.vectors.index.exact_order`) as the one-process search does, so
    ties fall the same way. A chunk whose output exists is skipped."""
    from parakit.vectors.index import TIE_MARGIN, ChunkedVectors, exact_order

    out = Path(out_file)
    if not out.exists():
        parts = [np.load(f) for f in part_files]
        wide = k if collection_emb is None else k + TIE_MARGIN
        if parts:
            scores, ids = merge_results([(p["scores"], p["ids"]) for p in parts], wide)
        else:  # same-source: no shard holds the source of any of this chunk's rows
            rows = len(np.load(emb_file, mmap_mode="r"))
            scores = np.full((rows, wide), -np.inf, dtype=np.float32)
            ids = np.full((rows, wide), -1, dtype=np.int64)
        if collection_emb is not None:
            queries = np.ascontiguousarray(np.load(emb_file), dtype=np.float32)
            scores, ids = exact_order(queries, ids, ChunkedVectors(collection_emb), k, metric)
        with atomic_write(out, "wb") as handle:
            np.savez(handle, ids=ids, scores=scores)
    for f in part_files:
        Path(f).unlink(missing_ok=True)
    return str(out)


def search_sharded(
    emb_dir: str | Path,
    shards: str | Path,
    out: str | Path,
    k: int,
    client: Any = None,
    progress: bool = False,
    collection_emb: str | Path | None = None,
    metric: str = "ip",
    codes: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top ``k`` neighbours of every embedded sentence over all shards: one task per chunk and
    shard (each shard's tasks pinned to one worker; with ``codes``, only the shards of a source
    some row of the chunk has), then one merge task per chunk.

    Args:
        emb_dir: embedding chunks (a mining work folder's ``emb/``: ``00000.npy``...), on a file
            system every worker can read.
        shards: a folder from :func:`build_sharded` / :func:`build_sharded_from_embeddings`.
        out: folder for the per-chunk results (``00000.npz``...), shared like ``emb_dir``.
        k: neighbours per sentence (mining: its ``k`` + 1, the sentence itself included).
        client: a ``dask.distributed.Client`` (None: run the tasks here, one after another).
        collection_emb: the collection's embedding chunks: neighbours are re-scored exactly
            from them (as ``mine`` does in one process), so ties fall the same way.
        metric: the shards' metric (``ip`` or ``l2``), for the exact scores.
        codes: the source code of every embedded sentence (in the collection's code space;
            -1: a source it lacks): each is searched against the same-source shards of its
            own source only (``build_sharded_from_embeddings(..., codes=...)``).

    Returns:
        (scores, ids) for all sentences in chunk order, the same with or without a cluster and
        after lost workers or a resumed run.
    """
    from parakit.vectors.index import TIE_MARGIN

    files = sorted(str(f) for f in Path(emb_dir).glob("[0-9]*.npy"))
    if not files:
        raise MineError(Errors.E801_embedding_chunks_npy.format(emb_dir=emb_dir))
    listed = ShardedIndex.load(shards)
    if codes is not None and any(s is None for s in listed.sources):
        raise MineError(Errors.E801_shards_same_source.format(shards=shards))
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    targets = [str(folder / (Path(f).stem + ".npz")) for f in files]
    shared = None if collection_emb is None else str(collection_emb)
    wide = k if shared is None else k + TIE_MARGIN
    bounds = np.cumsum([0, *(len(np.load(f, mmap_mode="r")) for f in files)])
    # the collection searching itself: each chunk's rows are the collection's rows from bounds[n]
    own = shared is not None and Path(emb_dir).resolve() == Path(shared).resolve()
    # one task per chunk and shard, shard-major, each shard's tasks pinned to one worker: a
    # worker holds one shard in memory, not all of them (at 10M sentences, 6 GB a shard)
    todo = [n for n, t in enumerate(targets) if not Path(t).exists()]
    chunk_codes = {
        n: None if codes is None else np.asarray(codes[bounds[n] : bounds[n + 1]]) for n in todo
    }
    workers = sorted(client.scheduler_info()["workers"]) if client is not None else []
    calls, shard_of, part_files = [], [], {n: [] for n in todo}
    for s, (path, source) in enumerate(zip(listed.paths, listed.sources, strict=True)):
        for n in todo:
            if chunk_codes[n] is not None and not (chunk_codes[n] == source).any():
                continue  # no row of this chunk is of the shard's source: nothing to search
            part = str(folder / f"{Path(files[n]).stem}.shard-{s:05d}.npz")
            part_files[n].append(part)
            first = int(bounds[n]) if own else None
            calls.append((files[n], path, wide, part, source, chunk_codes[n], first))
            shard_of.append(s)
    pins = [workers[s % len(workers)] for s in shard_of] if workers else None
    run_tasks(client, search_part, calls, "search", progress, pins=pins)
    # the shards are searched: free them, for the merge's reads and the steps after it
    if client is not None:
        client.run(_shard.cache_clear)
    else:
        _shard.cache_clear()
    merges = [(part_files[n], k, targets[n], files[n], shared, metric) for n in todo]
    run_tasks(client, merge_chunk, merges, "merge", progress)
    parts = [np.load(t) for t in targets]
    return (
        np.concatenate([p["scores"] for p in parts]),
        np.concatenate([p["ids"] for p in parts]),
    )


class ShardedIndex:
    """Index shards searched in parallel (Dask tasks, or sequentially without a client)."""

    def __init__(self, paths: list[str], sources: list[int | None] | None = None) -> None:
        self.paths = paths
        #: each shard's source code (same-source shards), else None
        self.sources = sources or [None] * len(paths)

    @classmethod
    def load(cls, folder: str | Path) -> ShardedIndex:
        meta_path = Path(folder) / "shards.json"
        if not meta_path.exists():
            raise MineError(Errors.E801_shards_json_build.format(folder=folder))
        shards = json.loads(meta_path.read_text())["shards"]
        return cls([s["path"] for s in shards], [s.get("source") for s in shards])

    def search(
        self, queries: np.ndarray, k: int, client: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Global top ``k`` over all shards: every shard answers ``k``, results are merged."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if client is None:
            results = [_search_shard(p, queries, k) for p in self.paths]
        else:
            scattered = client.scatter(queries, broadcast=True)
            results = client.gather(
                [client.submit(_search_shard, p, scattered, k, pure=False) for p in self.paths]
            )
        return merge_results(results, k)
