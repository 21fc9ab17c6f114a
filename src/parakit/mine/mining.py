"""Two-stage paraphrase mining (T15, T19): embed, k nearest neighbours, filter, re-rank.

``mine()`` runs in a work folder, one checkpointed stage after another, so a crash, ``kill -9`` or
Ctrl-C continues where it stopped and the final output is identical to an uninterrupted run:

1. ``store/``   unique sentences (exact duplicates dropped, first occurrence kept) + source codes;
2. ``emb/``     embeddings, one ``.npy`` per chunk of ``chunk_size`` sentences;
3. ``index/``   one FAISS index (or one per source with ``same_source=True``), saved once built;
4. ``knn_*.npy`` k+1 neighbours per sentence in memory-mapped arrays, a marker per finished chunk;
5. ``rerank/``  classifier P(paraphrase) per chunk of candidate pairs (optional);
6. ``rescore/`` a better encoder's vectors of the surviving pairs' sentences, for the cascade
   (optional, :mod:`parakit.mine.cascade`);
7. the output   canonical JSONL of candidate pairs, written atomically (or a folder of part
   files, one task each: :mod:`parakit.mine.output`).

Memory is bounded by one chunk of embeddings, the index, and 8 bytes per sentence for
de-duplication; the neighbour arrays live on disk.

Example:
    >>> from parakit.vectors.encode import SentenceEncoder
    >>> result = mine("sentences.txt", "work/", SentenceEncoder("all-MiniLM-L6-v2"),
    ...               output="pairs.jsonl", k=5)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from parakit.errors import Errors, MineError
from parakit.io.atomic import atomic_write, save_json, save_npy
from parakit.vectors.collection import iter_collection
from parakit.vectors.index import VectorIndex
from parakit.vectors.store import SentenceStore

if TYPE_CHECKING:
    from parakit.vectors.encode import Encoder


@dataclass
class MiningResult:
    """What a mining run produced."""

    output: Path | None
    n_sentences: int
    n_candidates: int
    n_written: int
    seconds: dict[str, float] = field(default_factory=dict)
    #: per index (key ``"all"`` or the source name): kind, nlist, nprobe, ef_search and, with a
    #: recall target, the calibration (estimated recall@k against exact search)
    index: dict[str, Any] = field(default_factory=dict)


def _hash64(text: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little", signed=True
    )


def build_store(
    collection: str | Path, folder: Path, text_field: str = "text", source_field: str = "source"
) -> SentenceStore:
    """Write the unique sentences of ``collection`` into a store (two streaming passes).

    Pass 1 hashes every text (8 bytes per sentence); pass 2 writes the first occurrence of each
    distinct text. Source names are coded as ``sources.npy`` (int32) + ``sources.json``.
    """
    if (folder / "offsets.npy").exists() and (folder / "sources.npy").exists():
        return SentenceStore(folder)
    hashes = np.fromiter(
        (
            _hash64(r["text"])
            for r in iter_collection(collection, text_field=text_field, source_field=source_field)
        ),
        dtype=np.int64,
    )
    if len(hashes) == 0:
        raise MineError(Errors.E803_sentences_found.format(collection=collection))
    _, first = np.unique(hashes, return_index=True)
    keep = np.zeros(len(hashes), dtype=bool)
    keep[first] = True
    folder.mkdir(parents=True, exist_ok=True)
    save_npy(folder / "hashes.npy", hashes[keep])
    del hashes
    names: dict[str, int] = {}
    codes: list[int] = []

    def kept() -> Iterator[dict[str, Any]]:
        for position, record in enumerate(
            iter_collection(collection, text_field=text_field, source_field=source_field)
        ):
            if keep[position]:
                source = "" if record.get("source") is None else str(record["source"])
                codes.append(names.setdefault(source, len(names)))
                yield record

    # offsets.npy is moved in last, after sources and hashes: it marks the store complete
    tmp_store = SentenceStore.write(folder / ".partial", kept())
    save_json(folder / "sources.json", list(names), ensure_ascii=False)
    save_npy(folder / "sources.npy", np.asarray(codes, dtype=np.int32))
    os.replace(tmp_store.path / "sentences.jsonl", folder / "sentences.jsonl")
    os.replace(tmp_store.path / "offsets.npy", folder / "offsets.npy")
    tmp_store.close()
    os.rmdir(tmp_store.path)
    return SentenceStore(folder)


def _n_chunks(n: int, size: int) -> int:
    return (n + size - 1) // size


def embed_store(
    store: SentenceStore,
    folder: Path,
    encoder: Encoder,
    chunk_size: int,
    progress: bool = True,
    client: Any = None,
) -> None:
    """Embed every chunk of ``store`` missing from ``folder`` (``00000.npy``...): here, or one
    Dask task per chunk on ``client``'s workers (the encoder travels once to each worker,
    which loads its model on first use)."""
    from parakit.mine.distributed import embed_chunk, run_tasks

    folder.mkdir(parents=True, exist_ok=True)
    n = len(store)
    todo = [c for c in range(_n_chunks(n, chunk_size)) if not (folder / f"{c:05d}.npy").exists()]
    sizes = [min(chunk_size, n - c * chunk_size) for c in todo]
    if client is not None and todo:
        encoder = client.scatter(encoder, broadcast=True)
    calls = [
        (str(store.path), c * chunk_size, min(n, (c + 1) * chunk_size), encoder,
         str(folder / f"{c:05d}.npy"))
        for c in todo
    ]  # fmt: skip
    run_tasks(client, embed_chunk, calls, "embed", progress, sizes, "sent", n - sum(sizes))


class _Chunks:
    """Re-iterable views of the embedding chunk files, optionally restricted to one source."""

    def __init__(
        self,
        folder: Path,
        n_chunks: int,
        chunk_size: int,
        codes: np.ndarray | None = None,
        code: int | None = None,
    ) -> None:
        self.folder, self.n_chunks, self.chunk_size = folder, n_chunks, chunk_size
        self.codes, self.code = codes, code

    def _mask(self, chunk: int, length: int) -> np.ndarray | None:
        if self.codes is None:
            return None
        start = chunk * self.chunk_size
        return self.codes[start : start + length] == self.code

    def vectors(self) -> Iterator[np.ndarray]:
        for chunk in range(self.n_chunks):
            array = np.load(self.folder / f"{chunk:05d}.npy", mmap_mode="r")
            mask = self._mask(chunk, len(array))
            yield np.asarray(array if mask is None else array[mask], dtype=np.float32)

    def ids(self) -> Iterator[np.ndarray]:
        for chunk in range(self.n_chunks):
            array = np.load(self.folder / f"{chunk:05d}.npy", mmap_mode="r")
            rows = np.arange(chunk * self.chunk_size, chunk * self.chunk_size + len(array))
            mask = self._mask(chunk, len(array))
            yield rows if mask is None else rows[mask]


def _job_settings(**settings: Any) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in settings.items()}


def portable_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """The job's settings as an output file records them: the input files by name and
    SHA-256, the encoder's model by alias, folder name or Hub id (its content digest stays),
    never the absolute paths of this machine (``job.json`` in the work folder keeps them, to
    tell a rerun of the same job)."""
    from parakit.offline import model_label

    out = dict(settings)
    for key in ("collection", "queries"):
        if out.get(key):
            out[key] = file_identity(out[key])
    encoder = out.get("encoder")
    if isinstance(encoder, dict) and encoder.get("model"):
        out["encoder"] = {**encoder, "model": model_label(encoder["model"])}
    return out


def file_identity(path: str | Path) -> dict[str, Any]:
    """``{"name": ..., "sha256": ...}`` of a file (a folder: its name only)."""
    path = Path(path)
    if not path.is_file():
        return {"name": path.name}
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"name": path.name, "sha256": digest.hexdigest()}


def mine(
    collection: str | Path,
    workdir: str | Path,
    encoder: Encoder,
    output: str | Path | None = None,
    k: int = 5,
    same_source: bool = False,
    queries: str | Path | None = None,
    classifier: Any = None,
    min_probability: float | None = None,
    min_score: float | None = None,
    positive_class: Any = None,
    index_kind: str = "auto",
    metric: str = "ip",
    nprobe: int | None = None,
    recall: float | None = None,
    chunk_size: int = 10_000,
    rerank_batch: int = 2_048,
    text_field: str = "text",
    source_field: str = "source",
    progress: bool = True,
    overwrite: bool = False,
    index_options: dict[str, Any] | None = None,
    rescorer: Any = None,
    rescore_k: int | None = None,
    min_teacher_score: float | None = None,
    client: Any = None,
    shards: int | None = None,
    output_parts: int | None = None,
) -> MiningResult:
    """Mine paraphrase candidates: every sentence's (or query's) ``k`` nearest neighbours.

    Args:
        collection: sentence collection (see :mod:`parakit.vectors.collection`).
        workdir: checkpoint folder; rerunning with the same settings resumes.
        encoder: object with ``encode(texts) -> array`` (see :mod:`parakit.vectors.encode`).
        output: JSONL file for the candidate pairs (canonical parakit format); with
            ``output_parts`` a folder of part files.
        k: neighbours kept per sentence (the Turku paper: 5).
        same_source: only pair sentences of the same source (one index per source).
        queries: optional file of query sentences searched against the collection instead of
            mining the collection against itself.
        classifier: optional pair classifier (``predict_proba(PairSet)``) for re-ranking.
        min_probability: drop pairs whose P(paraphrase) is below this (needs ``classifier``).
        min_score: drop pairs whose embedding score is below this.
        positive_class: one class column taken as P(paraphrase) instead of the classifier's own
            ``paraphrase_proba`` (for third-party classifiers; see :mod:`parakit.mine.rerank`).
        index_kind, metric, nprobe, index_options: see :class:`~parakit.vectors.index.VectorIndex`.
        recall: target recall@``k`` of the search against exact search (e.g. 0.95): the index
            kind and its search breadth are chosen by a calibration against exact search on a
            sample of the collection; the estimate is in ``MiningResult.index``, the output's
            header and ``run.json``. None: kinds by size (exact up to 100K vectors).
        chunk_size: sentences per checkpoint; smaller = less memory and lost work per crash,
            more files.
        rerank_batch: candidate pairs per classifier call and re-rank checkpoint.
        text_field, source_field: record keys of JSONL/TSV collections.
        progress: progress bars with ETA on stderr.
        overwrite: discard a work folder made with other settings instead of failing, and
            replace an ``output_parts`` folder that holds another mining run's output.
        rescorer: a better (slower) encoder for the cascade: the sentences of the pairs that
            survive ``min_probability`` are embedded with it, once each, and every such pair
            gets its cosine (``teacher_score``) and rank (``teacher_rank``, among the pairs of
            either sentence); mine with a cheap encoder and a larger ``k``, keep the teacher's
            best with ``rescore_k``.
        rescore_k: keep the pairs among the ``rescore_k`` best by the rescorer of one of their
            sentences (needs ``rescorer``).
        min_teacher_score: drop pairs whose rescorer cosine is below this (needs ``rescorer``).
        client: a ``dask.distributed.Client`` (see
            :func:`~parakit.mine.distributed.cluster_client`): embedding chunks, index shards,
            the search of every chunk against every shard and the classifier's batches run
            as tasks on its workers, each writing one checkpoint file atomically, so a lost
            worker's tasks are re-run elsewhere and a rerun resumes. The work folder must be
            on a file system every worker reads. Exact shards (``flat``, or ``auto`` up to 100K
            vectors a shard) give the pairs of the one-process run, with ``same_source``
            too.
        shards: index shards (default with a client: one per worker; without one, the
            single index of the one-process run). With ``same_source`` each source's rows are
            cut into shards of their own, at most ``ceil(sentences / shards)`` rows each, and
            every sentence is searched against its own source's shards only.
        output_parts: write ``output`` as a folder of that many part files,
            ``pairs-00000.jsonl``... (near-equal ranges of query rows, one task each: on
            ``client``'s workers with a cluster) and a manifest ``parakit_parts.json``; the
            parts' pair lines in order are those of the single file (see
            :mod:`parakit.mine.output`). A rerun of the same job writes only missing parts.

    Returns:
        A :class:`MiningResult`. Pairs carry ``metadata`` ``score`` (cosine for ``ip``),
        ``rank`` (1 = nearest), with a classifier ``p_paraphrase``, with a rescorer
        ``teacher_score`` and ``teacher_rank``; pairs are ordered by query row then rank.
    """
    if k < 1:
        raise MineError(Errors.E801_must_least_got.format(k=k))
    if output_parts is not None and (output is None or output_parts < 1):
        raise MineError(Errors.E801_output_parts_writes.format(output_parts=output_parts))
    if rescorer is None and (rescore_k is not None or min_teacher_score is not None):
        raise MineError(Errors.E801_rescore_min_teacher)
    if rescore_k is not None and rescore_k < 1:
        raise MineError(Errors.E801_rescore_must_least.format(rescore_k=rescore_k))
    for what, source in (("collection", collection), ("query file", queries)):
        if output is not None and source is not None and _same_file(output, source):
            raise MineError(Errors.E803_output_is_input.format(output=output, what=what))
    if client is not None and shards is None:
        shards = len(client.scheduler_info()["workers"]) or 1
    work = Path(workdir)
    settings = _job_settings(
        collection=Path(collection).resolve(),
        queries=queries and Path(queries).resolve(),
        k=k,
        same_source=same_source,
        index_kind=index_kind,
        metric=metric,
        nprobe=nprobe,
        recall=recall,
        chunk_size=chunk_size,
        encoder=_encoder_signature(encoder),
        index_options=index_options or {},
        classifier=_classifier_signature(classifier),
        rerank_batch=rerank_batch,
        positive_class=positive_class,
        **(
            {}
            if rescorer is None
            else {
                "rescorer": _encoder_signature(rescorer),
                "rescore_k": rescore_k,
                "min_teacher_score": min_teacher_score,
            }
        ),
    )
    digest = ""
    if output_parts is not None:  # the output folder is checked before hours of mining
        from parakit.mine.output import job_digest, open_parts_folder

        digest = job_digest(
            {**settings, "workdir": str(work.resolve()), "min_score": min_score,
             "min_probability": min_probability, "output_parts": output_parts}
        )  # fmt: skip
        open_parts_folder(Path(str(output)), digest, overwrite)
    _open_job(work, settings, overwrite)
    timer = _Timer()
    with timer("store"):
        store = build_store(collection, work / "store", text_field, source_field)
    with timer("embed"):
        embed_store(store, work / "emb", encoder, chunk_size, progress, client)
        qstore, qcodes = store, np.load(work / "store" / "sources.npy")
        if queries is not None:
            qstore = build_store(queries, work / "qstore", text_field, source_field)
            qcodes = _map_codes(work / "qstore", work / "store")
            embed_store(qstore, work / "qemb", encoder, chunk_size, progress, client)
    recall_options = {"recall": recall, "recall_k": k} if recall is not None else {}
    options = {**recall_options, **(index_options or {})}
    shard_sources: dict[int, int | None] = {}
    # a recall target is measured on the sentences that will search the index
    emb = work / ("emb" if queries is None else "qemb")
    query_codes = None
    if same_source:
        query_codes = work / "store" / "sources.npy"
        if queries is not None:  # the queries' sources in the collection's code space
            query_codes = work / "qstore" / "codes-in-collection.npy"
            save_npy(query_codes, np.asarray(qcodes, dtype=np.int64))
    if shards is None:
        with timer("index"):
            indexes = _build_indexes(
                work, len(store), chunk_size, same_source, index_kind, metric, nprobe, options,
                progress, None if queries is None else (emb, query_codes),
            )  # fmt: skip
            metas = {key: ix.meta() for key, ix in indexes.items()}
        with timer("search"):
            knn_ids, knn_scores = _search(
                work, indexes, len(qstore), qcodes, k, same_source, chunk_size, queries, progress,
                metric,
            )  # fmt: skip
        # the graph is done with: at 10M it is most of the 8.7 GB the search holds, and the
        # filter's candidate arrays would otherwise come on top of it (a 13.7 GB peak)
        del indexes
    else:
        from parakit.mine.distributed import build_sharded_from_embeddings, search_sharded

        with timer("index"):
            # same-source: each source's rows in shards of their own (one or several)
            shard_list = build_sharded_from_embeddings(
                work / "emb", work / "shards", shards, client, chunk_size, index_kind,
                {"metric": metric, "nprobe": nprobe, **options}, progress,
                codes=work / "store" / "sources.npy" if same_source else None,
                queries=emb, query_codes=query_codes,
            )  # fmt: skip
            # the saved settings only: loading every shard here would hold the whole
            # collection's index in this process (the workers hold one shard each)
            saved = [json.loads((Path(s["path"]) / "index.json").read_text()) for s in shard_list]
            metas = {
                n: {k: v for k, v in meta.items() if k not in ("parts", "source")}
                for n, meta in enumerate(saved)
            }
            shard_sources = {n: s.get("source") for n, s in enumerate(shard_list)}
        with timer("search"):
            knn_scores, knn_ids = search_sharded(
                emb, work / "shards", _knn_folder(work, saved), k + 1, client, progress,
                collection_emb=work / "emb", metric=metric,
                codes=qcodes if same_source else None,
            )  # fmt: skip
    with timer("filter"):
        hashes = np.load(qstore.path / "hashes.npy"), np.load(store.path / "hashes.npy")
        rows, cols, scores, ranks = _candidates(
            knn_ids, knn_scores, k, queries is None, min_score, *hashes
        )
    proba = None
    if classifier is not None:
        with timer("rerank"):
            proba = _rerank(
                work / "rerank",
                classifier,
                qstore,
                store,
                rows,
                cols,
                rerank_batch,
                positive_class,
                progress,
                client,
            )
    teacher = None
    if rescorer is not None:
        from parakit.mine.cascade import teacher_ranks, teacher_scores

        keep = np.ones(len(rows), dtype=bool)
        if proba is not None and min_probability is not None:
            keep = proba >= min_probability  # only the classifier's survivors
        with timer("rescore"):
            score = teacher_scores(
                work / "rescore", rescorer, qstore, store, rows, cols, keep, queries is None,
                chunk_size, progress,
            )  # fmt: skip
            rank = np.full(len(rows), np.iinfo(np.int64).max, dtype=np.int64)
            rank[keep] = teacher_ranks(rows[keep], cols[keep], score[keep], queries is None)
        teacher = (score, rank, rescore_k, min_teacher_score)
    index_info = _index_info(work, metas, shards is not None, shard_sources)
    written = 0
    if output is not None:
        header = {"mining": portable_settings(settings), "index": index_info}
        parts = None if output_parts is None else (output_parts, digest)
        with timer("write"):
            written = _write_output(
                Path(output), work, qstore, store, (rows, cols, scores, ranks), proba,
                min_probability, teacher, header, parts, client, progress,
            )  # fmt: skip
    result = MiningResult(
        Path(output) if output else None, len(store), len(rows), written, dict(timer), index_info
    )
    _write_run(work, settings, result)
    return result


def _write_output(
    path: Path,
    work: Path,
    qstore: SentenceStore,
    store: SentenceStore,
    candidates: tuple[np.ndarray, ...],
    proba: np.ndarray | None,
    min_probability: float | None,
    teacher: tuple[np.ndarray, np.ndarray, int | None, float | None] | None,
    header: dict[str, Any],
    parts: tuple[int, str] | None,
    client: Any,
    progress: bool,
) -> int:
    """The pairs that pass the output filters into one file, or with ``parts`` (how many, the
    job's digest) into part files (:mod:`parakit.mine.output`); returns the number written."""
    from parakit.mine.output import kept, write_pairs, write_parts

    rows = candidates[0]
    keep = kept(len(rows), proba, min_probability, teacher)
    names = ("rows", "cols", "scores", "ranks")
    arrays = {name: values[keep] for name, values in zip(names, candidates, strict=True)}
    if proba is not None:
        arrays["proba"] = proba[keep]
    if teacher is not None:
        arrays["teacher_score"], arrays["teacher_rank"] = teacher[0][keep], teacher[1][keep]
    if parts is None:
        return write_pairs(path, qstore, store, arrays, header)
    return write_parts(
        path, work, qstore, store, arrays, header, parts[0], len(qstore), parts[1], client,
        progress,
    )  # fmt: skip


class _Timer(dict[str, float]):
    """Seconds per step: ``with timer("embed"): ...``."""

    @contextlib.contextmanager
    def __call__(self, step: str) -> Iterator[None]:
        tic = time.perf_counter()
        yield
        self[step] = time.perf_counter() - tic


def _open_job(work: Path, settings: dict[str, Any], overwrite: bool) -> None:
    """Start or resume the job in ``work``: a folder made with other settings is refused
    (E802), or emptied with ``overwrite``; ``job.json`` records the settings."""
    work.mkdir(parents=True, exist_ok=True)
    job_file = work / "job.json"
    if job_file.exists() and json.loads(job_file.read_text()) != json.loads(json.dumps(settings)):
        if not overwrite:
            raise MineError(Errors.E802_holds_mining_job.format(work=work))
        shutil.rmtree(work)
        work.mkdir(parents=True)
    save_json(job_file, settings, indent=2, ensure_ascii=False)


def _same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one file (one that exists, or the same resolved path)."""
    a, b = Path(a), Path(b)
    if a.exists() and b.exists():
        return a.samefile(b)
    return a.resolve() == b.resolve()


def _knn_folder(work: Path, saved: list[dict[str, Any]]) -> Path:
    """The folder of the sharded search's results for the shards whose ``index.json`` is
    ``saved``: ``knn-shards-DIGEST``, named by their row plan, so that results searched against
    other shards (a rerun with another ``--shards`` or cluster size) are never taken for these;
    those are removed."""
    from parakit.mine.distributed import _plan_key

    plan = [[_plan_key(meta["parts"]), meta.get("source"), meta["ntotal"]] for meta in saved]
    digest = hashlib.sha256(json.dumps(plan, sort_keys=True).encode()).hexdigest()[:12]
    folder = work / f"knn-shards-{digest}"
    for stale in work.glob("knn-shards*"):
        if stale != folder:
            shutil.rmtree(stale)
    return folder


def _index_info(
    work: Path,
    metas: dict[int, dict[str, Any]],
    sharded: bool = False,
    sources: dict[int, int | None] | None = None,
) -> dict[str, Any]:
    """Per index (``all``, the source's name or ``shard-00000``...): its settings and
    calibration (``metas``: :meth:`VectorIndex.meta` by index key); same-source shards
    (``sources``: shard -> source code) name their source."""
    names = json.loads((work / "store" / "sources.json").read_text())
    info = {}
    for key, saved in metas.items():
        meta = {k: v for k, v in saved.items() if k not in ("created", "on_disk")}
        source = (sources or {}).get(key)
        if source is not None:
            meta["source"] = names[source]
        info[f"shard-{key:05d}" if sharded else "all" if key < 0 else names[key]] = meta
    return info


def _write_run(work: Path, settings: dict[str, Any], result: MiningResult) -> None:
    """``run.json``: the settings, counts, seconds per step and index of a finished run."""
    save_json(
        work / "run.json",
        {
            "settings": settings,
            "sentences": result.n_sentences,
            "candidates": result.n_candidates,
            "written": result.n_written,
            "seconds": {key: round(v, 3) for key, v in result.seconds.items()},
            "index": result.index,
        },
        indent=2,
        ensure_ascii=False,
    )


def build_index_folder(
    collection: str | Path,
    out: str | Path,
    encoder: Encoder,
    kind: str = "auto",
    metric: str = "ip",
    chunk_size: int = 10_000,
    text_field: str = "text",
    source_field: str = "source",
    progress: bool = True,
    **index_options: Any,
) -> VectorIndex:
    """Embed a collection and save a searchable index folder with its sentence store.

    ``out`` gets ``store/`` (texts), ``emb/`` (embedding chunks, resumable), ``index.faiss`` and
    ``index.json`` (with the encoder signature); ``VectorIndex.load(out).store_`` gives texts.
    """
    folder = Path(out)
    store = build_store(collection, folder / "store", text_field, source_field)
    embed_store(store, folder / "emb", encoder, chunk_size, progress)
    chunks = _Chunks(folder / "emb", _n_chunks(len(store), chunk_size), chunk_size)
    on_disk = bool(index_options.get("on_disk"))
    index = VectorIndex(
        kind=kind, metric=metric, workdir=folder if on_disk else None, **index_options
    )
    index.build(chunks.vectors, n=len(store), ids=chunks.ids, progress=progress)
    signature = encoder.signature() if hasattr(encoder, "signature") else {}
    index.save(folder, extra={"encoder": signature, "collection": str(collection)})
    index.store_ = store
    return index


def _encoder_signature(encoder: Encoder) -> Any:
    """What identifies an encoder in ``job.json`` (its model, precision, ... where it says)."""
    return (
        encoder.signature()
        if hasattr(encoder, "signature")
        else {"encoder": type(encoder).__name__}
    )


def _classifier_signature(classifier: Any) -> Any:
    """What identifies the re-ranker in ``job.json``: its ``signature()`` if it has one (so a
    retrained classifier invalidates the re-rank checkpoints), else its class name."""
    if classifier is None:
        return None
    if hasattr(classifier, "signature"):
        return json.loads(json.dumps(classifier.signature(), default=str))
    return type(classifier).__name__


def _map_codes(qfolder: Path, folder: Path) -> np.ndarray:
    """Query source codes re-expressed in the collection's code space (-1: unknown source)."""
    names = json.loads((folder / "sources.json").read_text())
    qnames = json.loads((qfolder / "sources.json").read_text())
    lookup = np.asarray([names.index(s) if s in names else -1 for s in qnames], dtype=np.int32)
    return lookup[np.load(qfolder / "sources.npy")]


def _new_memmap(path: Path, shape: tuple[int, int], dtype: Any) -> None:
    tmp = path.with_suffix(".tmp.npy")
    array = np.lib.format.open_memmap(tmp, mode="w+", dtype=dtype, shape=shape)
    array[:] = -1
    array.flush()
    del array
    os.replace(tmp, path)


def _build_indexes(
    work: Path,
    n: int,
    chunk_size: int,
    same_source: bool,
    kind: str,
    metric: str,
    nprobe: int | None,
    options: dict[str, Any],
    progress: bool,
    queries: tuple[Path, Path | None] | None = None,
) -> dict[int, VectorIndex]:
    """One index for all sentences (key -1) or one per source code; built once, then loaded.
    ``queries`` (a query file's embedding folder and, with ``same_source``, its codes): a
    recall target is measured on them, not on the collection's own rows."""
    codes = np.load(work / "store" / "sources.npy")
    done = work / "index" / "done.json"
    n_chunks = _n_chunks(n, chunk_size)
    keys = sorted(int(c) for c in np.unique(codes)) if same_source else [-1]
    if done.exists():
        return {key: VectorIndex.load(work / "index" / str(key)) for key in keys}
    out = {}
    for key in keys:
        folder = work / "index" / str(key)
        if (folder / "index.json").exists():
            out[key] = VectorIndex.load(folder)
            continue
        chunks = (
            _Chunks(work / "emb", n_chunks, chunk_size)
            if key < 0
            else _Chunks(work / "emb", n_chunks, chunk_size, codes, key)
        )
        count = n if key < 0 else int((codes == key).sum())
        index = VectorIndex(
            kind=kind,
            metric=metric,
            nprobe=nprobe,
            workdir=folder if options.get("on_disk") else None,
            # the collection searched against itself: each sentence from its own node
            **{"self_join": queries is None, **options},
        )
        calibration = None
        if queries is not None and index.recall is not None:
            from parakit.vectors.index import sample_calibration_queries

            calibration = sample_calibration_queries(
                str(queries[0]), index.calibration_queries, index.seed,
                None if queries[1] is None else str(queries[1]), None if key < 0 else key,
                own_rows=False,
            )  # fmt: skip
        index.build(
            chunks.vectors, n=count, ids=chunks.ids, progress=progress, calibration=calibration
        )
        index.save(folder)
        out[key] = index
    save_json(done, {"indexes": keys})
    return out


def _search(
    work: Path,
    indexes: dict[int, VectorIndex],
    nq: int,
    qcodes: np.ndarray,
    k: int,
    same_source: bool,
    chunk_size: int,
    queries: Any,
    progress: bool,
    metric: str = "ip",
) -> tuple[np.ndarray, np.ndarray]:
    """``k + 1`` neighbours of every query (or collection) sentence, leaving room for the
    sentence itself, in memory-mapped ``knn_ids.npy`` / ``knn_scores.npy``; a marker per
    finished chunk, so a rerun searches only what is missing. The index's ``k + 5`` best are
    re-scored exactly from the embeddings (:func:`~parakit.vectors.index.exact_order`): the
    same neighbours, scores and ties as a sharded search of the same vectors."""
    from tqdm.auto import tqdm

    from parakit.vectors.index import TIE_MARGIN, ChunkedVectors, exact_order

    width = k + 1
    wide = width + TIE_MARGIN
    collection = ChunkedVectors(work / "emb")
    emb = work / ("emb" if queries is None else "qemb")
    ids_path, scores_path = work / "knn_ids.npy", work / "knn_scores.npy"
    if not ids_path.exists():
        _new_memmap(ids_path, (nq, width), np.int64)
        _new_memmap(scores_path, (nq, width), np.float32)
    knn_ids = np.load(ids_path, mmap_mode="r+")
    knn_scores = np.load(scores_path, mmap_mode="r+")
    marks = work / "knn_done"
    marks.mkdir(exist_ok=True)
    n_chunks = _n_chunks(nq, chunk_size)
    todo = [c for c in range(n_chunks) if not (marks / f"{c:05d}").exists()]
    done_rows = nq - sum(min(chunk_size, nq - c * chunk_size) for c in todo)
    with tqdm(
        total=nq,
        initial=done_rows,
        desc="search",
        unit="sent",
        disable=not progress,
        smoothing=0.05,
    ) as bar:
        for chunk in todo:
            start = chunk * chunk_size
            vectors = np.load(emb / f"{chunk:05d}.npy")
            stop = start + len(vectors)
            own = np.arange(start, stop) if queries is None else None  # a self-join's rows
            if not same_source:
                index = indexes[-1]
                ids = index.search(vectors, wide, own if index.self_join else None)[1]
            else:
                local_codes = qcodes[start:stop]
                ids = np.full((len(vectors), wide), -1, dtype=np.int64)
                for code in np.unique(local_codes):
                    if int(code) not in indexes:
                        continue  # a query source absent from the collection: no neighbours
                    rows = np.flatnonzero(local_codes == code)
                    index = indexes[int(code)]
                    starts = own[rows] if own is not None and index.self_join else None
                    ids[rows] = index.search(vectors[rows], wide, starts)[1]
            scores, ids = exact_order(vectors, ids, collection, width, metric)
            knn_ids[start:stop], knn_scores[start:stop] = ids, scores
            knn_ids.flush()
            knn_scores.flush()
            with atomic_write(marks / f"{chunk:05d}") as handle:
                handle.write("done")
            bar.update(stop - start)
    return knn_ids, knn_scores


def _candidates(
    knn_ids: np.ndarray,
    knn_scores: np.ndarray,
    k: int,
    self_mining: bool,
    min_score: float | None,
    qhashes: np.ndarray,
    hashes: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """Candidate (query row, collection row, score, rank) arrays after the filters.

    Self-mining: drop the sentence itself, keep the first ``k`` others, and drop a pair already
    produced in the other direction (``j < i`` and ``i`` among ``j``'s kept neighbours).
    Query mining: drop collection sentences identical to the query, keep the first ``k`` others.
    """
    ids = np.asarray(knn_ids)
    scores = np.asarray(knn_scores)
    nq = ids.shape[0]
    rows_all = np.repeat(np.arange(nq), ids.shape[1]).reshape(ids.shape)
    valid = ids >= 0
    if self_mining:
        valid &= ids != rows_all
    else:
        valid &= qhashes[rows_all] != hashes[np.where(valid, ids, 0)]
    # rank among valid neighbours, keep the first k
    rank = np.cumsum(valid, axis=1)
    keep = valid & (rank <= k)
    kept_ids = np.where(keep, ids, -1)
    rows, cols = np.nonzero(keep)
    col_ids = ids[rows, cols]
    out_scores = scores[rows, cols]
    out_ranks = rank[rows, cols]
    mask = np.ones(len(rows), dtype=bool)
    if self_mining:
        earlier = col_ids < rows
        back = (kept_ids[col_ids[earlier]] == rows[earlier, None]).any(axis=1)
        mask[np.flatnonzero(earlier)[back]] = False
    if min_score is not None:
        mask &= out_scores >= min_score
    return rows[mask], col_ids[mask], out_scores[mask], out_ranks[mask]


def _rerank(
    folder: Path,
    classifier: Any,
    qstore: SentenceStore,
    store: SentenceStore,
    rows: np.ndarray,
    cols: np.ndarray,
    batch: int,
    positive: Any,
    progress: bool,
    client: Any = None,
) -> np.ndarray:
    """P(paraphrase) of every candidate pair, ``batch`` pairs a checkpoint file (``00000.npy``
    ...), here or one Dask task a batch on ``client``'s workers."""
    from parakit.mine.distributed import rerank_batch, run_tasks

    folder.mkdir(parents=True, exist_ok=True)
    starts = range(0, len(rows), batch)
    paths = [folder / f"{number:05d}.npy" for number in range(len(starts))]
    todo = [n for n, path in enumerate(paths) if not path.exists()]
    if client is not None and todo:
        classifier = client.scatter(classifier, broadcast=True)
    calls = [
        (classifier, str(qstore.path), str(store.path), rows[starts[n] : starts[n] + batch],
         cols[starts[n] : starts[n] + batch], positive, str(paths[n]))
        for n in todo
    ]  # fmt: skip
    sizes = [len(call[3]) for call in calls]
    done = len(rows) - sum(sizes)
    run_tasks(client, rerank_batch, calls, "rerank", progress, sizes, "pair", done)
    out = np.zeros(len(rows), dtype=np.float64)
    for start, path in zip(starts, paths, strict=True):
        out[start : start + batch] = np.load(path)
    return out


__all__ = ["MiningResult", "build_index_folder", "build_store", "embed_store", "mine"]
