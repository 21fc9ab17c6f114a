"""The output of a mining run: one canonical JSONL file, or a folder of part files.

``mine(..., output="pairs.jsonl")`` writes one file on the process that runs ``mine``; at
hundreds of millions of sentences that one writer (a store look-up and a JSON line per pair)
is the bottleneck after the search. ``mine(..., output="pairs/", output_parts=N)`` cuts the
pairs into ``N`` near-equal ranges of query rows, and one task per range (a Dask task on a
cluster) writes its part, ``pairs-00000.jsonl``..., atomically. Each part is a canonical JSONL
file with the header the single file would have; its pair lines are those of the single
file for its rows, in the same order, so the parts' lines in order are the single file's
lines. The filters (the pair found in the other direction, ``min_score``,
``min_probability``, the cascade's) run once over all pairs before the cut, so a pair dropped
as a duplicate is dropped the same way whichever part its sentences fall in.

Layout of the folder::

    pairs-00000.jsonl, pairs-00001.jsonl...   # query rows [0, n/N), [n/N, 2n/N)...
    parakit_parts.json                        # the manifest: parts, rows, pair counts, job

The manifest is written first (``complete: false``) and again when every part is there: a
killed run leaves an unfinished manifest, which the reader refuses (E145) and a rerun of the
same job finishes, writing only the missing parts. A folder holding anything else, or the
output of another job, is refused (E141) unless ``overwrite`` (an earlier mining output only:
other files are never removed). Read it back with ``parakit.io.read("pairs/")``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import Errors, MineError, WriteError
from parakit.io.atomic import atomic_write, check_output_folder, save_json
from parakit.io.jsonl import PARTS_MANIFEST, JsonlWriter, parts_manifest
from parakit.schema import Pair
from parakit.vectors.store import SentenceStore

#: what a folder of parts may hold besides the manifest: the parts and atomic-write temps
_PART_NAME = re.compile(
    r"(pairs-\d{5}\.jsonl|\.pairs-\d{5}\.jsonl\..*\.tmp|\.parakit_parts.*\.tmp)"
)


def kept(
    n: int,
    proba: np.ndarray | None,
    min_probability: float | None,
    teacher: tuple[np.ndarray, np.ndarray, int | None, float | None] | None,
) -> np.ndarray:
    """Which of ``n`` candidate pairs are written: ``P(paraphrase) >= min_probability``
    (none without a classifier's probabilities), and with the cascade's ``teacher`` (scores,
    ranks, rescore_k, min_teacher_score) the rescorer's rank and cosine. A NaN passes, as
    it passed the per-pair comparisons this replaces."""
    keep = np.ones(n, dtype=bool)
    if min_probability is not None:
        keep &= False if proba is None else ~(proba < min_probability)
    if teacher is not None:
        score, rank, keep_k, min_t = teacher
        if keep_k is not None:
            keep &= ~(rank > keep_k)
        if min_t is not None:
            keep &= ~(score < min_t)
    return keep


#: rows of a store whose span is at most this many bytes of ``sentences.jsonl`` are read in one
#: pass before writing: a seek and a parse per pair cost about 10 µs, a third of writing the
#: pairs of a million sentences (about 400 MB of records in memory at this size)
READ_SPAN_BYTES = 256 * 2**20


def _records(store: SentenceStore, *rows: np.ndarray) -> Callable[[int], dict[str, Any]]:
    """Look-up of the records of the ``rows`` arrays: from one sequential read of their span
    where it is small enough (:data:`READ_SPAN_BYTES`) and mostly needed, else a seek per
    look-up."""
    wanted = [r for r in rows if len(r)]
    if not wanted:
        return store.record
    start = min(int(r.min()) for r in wanted)
    stop = max(int(r.max()) for r in wanted) + 1
    needed = sum(len(r) for r in wanted)
    if stop - start > 4 * needed or store.span_bytes(start, stop) > READ_SPAN_BYTES:
        return store.record
    block = list(store.iter_records(start, stop))
    return lambda row: block[row - start]


def mined_pairs(
    qstore: SentenceStore, store: SentenceStore, arrays: dict[str, np.ndarray]
) -> Iterator[Pair]:
    """The pairs of candidate ``arrays`` (``rows``, ``cols``, ``scores``, ``ranks``, and
    ``proba``, ``teacher_score``, ``teacher_rank`` where the run has them), texts read from
    the stores: the records the output holds, whoever writes them."""
    rows, cols, scores, ranks = (arrays[key] for key in ("rows", "cols", "scores", "ranks"))
    proba = arrays.get("proba")
    t_score, t_rank = arrays.get("teacher_score"), arrays.get("teacher_rank")
    if qstore.path.resolve() == store.path.resolve():  # self-mining: one read serves both sides
        left_of = right_of = _records(store, rows, cols)
    else:
        left_of, right_of = _records(qstore, rows), _records(store, cols)
    left_row, left = -1, {}
    for i in range(len(rows)):
        if int(rows[i]) != left_row:  # rows come sorted: each query's record read once
            left_row = int(rows[i])
            left = left_of(left_row)
        right = right_of(int(cols[i]))
        metadata: dict[str, Any] = {
            "score": round(float(scores[i]), 6),
            "rank": int(ranks[i]),
            "row1": int(rows[i]),
            "row2": int(cols[i]),
        }
        if proba is not None:
            metadata["p_paraphrase"] = round(float(proba[i]), 6)
        if t_score is not None and t_rank is not None:
            metadata["teacher_score"] = round(float(t_score[i]), 6)
            metadata["teacher_rank"] = int(t_rank[i])
        if right.get("source") not in (None, left.get("source")):
            metadata["source2"] = right.get("source")
        yield Pair(
            id=f"{int(rows[i])}-{int(cols[i])}",
            text1=left["text"],
            text2=right["text"],
            source=left.get("source"),
            metadata=metadata,
        )


def write_pairs(
    path: Path,
    qstore: SentenceStore,
    store: SentenceStore,
    arrays: dict[str, np.ndarray],
    header: dict[str, Any],
    name: str | None = None,
) -> int:
    """Write the pairs of ``arrays`` as one canonical JSONL file, atomically (header
    ``metadata``: ``header``; ``name``: the corpus name, default the file's stem); returns
    the number written."""
    with JsonlWriter(path, name=name or path.stem, metadata=header) as out:
        for pair in mined_pairs(qstore, store, arrays):
            out.write_pair(pair)
    return out.pairs_written


def write_part(
    qstore_path: str, store_path: str, arrays_file: str, out: str, name: str,
    header: dict[str, Any],
) -> str:  # fmt: skip
    """One part of a folder output: the pairs of the arrays saved in ``arrays_file``
    (``.npz``) into ``out``, atomically. Runs on a worker; a part whose file exists is
    skipped (resumable)."""
    target = Path(out)
    if not target.exists():
        with np.load(arrays_file) as saved:
            arrays = {key: saved[key] for key in saved.files}
        write_pairs(
            target, SentenceStore(qstore_path), SentenceStore(store_path), arrays, header, name
        )
    return out


def job_digest(job: dict[str, Any]) -> str:
    """A short digest of what decides a folder output's lines (the mining settings, the
    work folder, the filters, the number of parts): a rerun of the same job resumes it."""
    text = json.dumps(job, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _is_parts_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a mining run's parts and nothing else: with its manifest, or
    only the temporary file of a first manifest whose write was killed (parts without a
    manifest are of no known run)."""
    names = [p.name for p in folder.iterdir()]
    if not all(name == PARTS_MANIFEST or _PART_NAME.fullmatch(name) for name in names):
        return False
    return PARTS_MANIFEST in names or not any(name.startswith("pairs-") for name in names)


def open_parts_folder(folder: Path, digest: str, overwrite: bool) -> None:
    """Make ``folder`` ready for the parts of job ``digest``: new or empty, or the output of
    the same job (kept: a rerun finishes it), or with ``overwrite`` the output of another
    mining job (its parts and manifest removed).

    Raises:
        WriteError: E141 a folder that holds other files, or another job's output without
            ``overwrite``; E121 a file in the way.
    """
    if folder.exists() and not folder.is_dir():
        raise WriteError(Errors.E121_file_way_output, path=folder)
    check_output_folder(folder, _is_parts_folder, "the output of a mining run (--output-parts)")
    manifest = parts_manifest(folder) if folder.is_dir() else None
    if manifest is None or manifest.get("job") == digest:
        return
    if not overwrite:
        raise WriteError(Errors.E141_folder_holds_output, path=folder)
    for path in folder.iterdir():  # only our files: _is_parts_folder checked there are no others
        path.unlink()


def write_parts(
    folder: Path,
    work: Path,
    qstore: SentenceStore,
    store: SentenceStore,
    arrays: dict[str, np.ndarray],
    header: dict[str, Any],
    n_parts: int,
    n_queries: int,
    digest: str,
    client: Any = None,
    progress: bool = False,
) -> int:
    """Write the pairs of ``arrays`` (sorted by query row) as ``n_parts`` part files, one
    task each (on ``client``'s workers, else here), then the complete manifest; the arrays
    of each part travel through ``work/parts/`` (removed at the end). Call
    :func:`open_parts_folder` first. Returns the number of pairs written."""
    from parakit.mine.distributed import run_tasks

    if n_parts < 1:
        raise MineError(Errors.E801_output_parts_must.format(n_parts=n_parts))
    bounds = np.linspace(0, n_queries, n_parts + 1).astype(np.int64)
    cuts = np.searchsorted(arrays["rows"], bounds)
    entries = [
        {"file": f"pairs-{n:05d}.jsonl", "rows": [int(bounds[n]), int(bounds[n + 1])],
         "pairs": int(cuts[n + 1] - cuts[n])}
        for n in range(n_parts)
    ]  # fmt: skip
    manifest = {"parakit_parts": 1, "complete": False, "job": digest, "header": header}
    save_json(folder / PARTS_MANIFEST, {**manifest, "parts": entries}, indent=2, ensure_ascii=False)
    staging = work / "parts"
    calls = []
    for n, entry in enumerate(entries):
        if (folder / entry["file"]).exists():
            continue
        arrays_file = staging / f"{n:05d}.npz"
        with atomic_write(arrays_file, "wb") as handle:
            np.savez(handle, **{k: v[cuts[n] : cuts[n + 1]] for k, v in arrays.items()})
        calls.append(
            (str(qstore.path), str(store.path), str(arrays_file), str(folder / entry["file"]),
             folder.name, header)
        )  # fmt: skip
    sizes = [entries[int(Path(call[2]).stem)]["pairs"] for call in calls]
    done = len(arrays["rows"]) - sum(sizes)
    run_tasks(client, write_part, calls, "write", progress, sizes, "pair", done)
    save_json(
        folder / PARTS_MANIFEST,
        {**manifest, "complete": True, "pairs": len(arrays["rows"]), "parts": entries},
        indent=2,
        ensure_ascii=False,
    )
    shutil.rmtree(staging, ignore_errors=True)
    return len(arrays["rows"])


__all__ = [
    "job_digest",
    "kept",
    "mined_pairs",
    "open_parts_folder",
    "write_pairs",
    "write_part",
    "write_parts",
]
