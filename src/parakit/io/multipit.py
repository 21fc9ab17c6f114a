"""MultiPIT (Twitter) files: expert/auto CSV, crowd-style vote files and multi-reference JSON."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from parakit.errors import DataFormatError, Errors
from parakit.io import validate as check
from parakit.io._open import load_json
from parakit.io.table import read_table
from parakit.io.validate import Where
from parakit.labels import VoteScheme
from parakit.schema import Pair, PairSet


def read_multipit(
    path: str | Path,
    columns: Mapping[str, str] | None = None,
    votes_column: str | None = None,
    n_judgments: int = 6,
    threshold: int = 3,
    encoding: str = "utf-8-sig",
    allow_unsafe_text: bool = False,
) -> PairSet:
    """Read a MultiPIT CSV (``sentence1,sentence2[,label]``).

    The expert files carry binary labels; the automatically identified ``auto-*`` files have
    no label column (the pairs are unlabelled, ``label=None``). In a file with a label column
    an empty label (``c,d,``) is refused (E144), not read as an unlabelled pair.

    Crowd-style files with one vote count per pair are read with ``votes_column`` naming the
    column of paraphrase votes: labels then follow :class:`~parakit.labels.VoteScheme`
    (``n_judgments`` votes, ``> threshold`` paraphrase, ``< threshold`` not, ties dropped when
    read as binary).
    """
    mapping = dict(columns or {})
    if votes_column is not None:
        mapping["label"] = votes_column
        scheme: Any = VoteScheme(n_judgments=n_judgments, threshold=threshold)
    else:
        scheme = "binary"
    ps = read_table(
        path,
        delimiter=",",
        columns=mapping,
        scheme=scheme,
        lang="en",
        encoding=encoding,
        allow_unsafe_text=allow_unsafe_text,
        require_labels=True,
    )
    ps.metadata["format"] = "multipit"
    return ps


def read_multireference(path: str | Path, allow_unsafe_text: bool = False) -> PairSet:
    """Read a multi-reference JSON: ``{source: [reference, ...]}`` or a list of
    ``{"source": ..., "references": [...]}`` objects.

    Each (source, reference) becomes a pair labelled ``1``, grouped by source (``group`` =
    ``src-<n>``), so a split never separates a source's references.
    """
    path = Path(path)
    data = load_json(path)
    if isinstance(data, dict) and data and all(isinstance(v, str) for v in data.values()):
        raise DataFormatError(Errors.E113_object_texts_id, path=path)
    if isinstance(data, dict):
        items = [
            (number, {"source": k, "references": v})
            for number, (k, v) in enumerate(data.items(), start=1)
        ]
    elif isinstance(data, list):
        items = list(enumerate(data, start=1))
    else:
        raise DataFormatError(Errors.E105_expected_object_source, path=path)
    pairs = []
    for number, item in items:
        if not isinstance(item, dict) or "source" not in item:
            raise DataFormatError(
                Errors.E106_missing_field, path=path, line=number, field="source", unit="record"
            )
        where = Where(path, number, "record")
        check.known_keys(item, ("source", "references"), where)
        source = check.text(item["source"], where, "source", allow_unsafe_text=allow_unsafe_text)
        references = item.get("references")
        if not isinstance(references, list):
            raise where.error("expected a list of reference texts", "references")
        for index, reference in enumerate(references):
            check.text(reference, where, "references", allow_unsafe_text=allow_unsafe_text)
            pairs.append(
                Pair(
                    id=f"{number - 1}-{index}",
                    text1=source,
                    text2=reference,
                    label="1",
                    group=f"src-{number - 1}",
                )
            )
    return PairSet(
        pairs, scheme="binary", name=path.stem, lang="en", metadata={"format": "multipit-multiref"}
    )


def multireference(pairs: PairSet) -> dict[str, list[str]]:
    """Group a pair set into ``{source: [references]}`` (inverse of :func:`read_multireference`)."""
    out: dict[str, list[str]] = {}
    for pair in pairs:
        out.setdefault(pair.text1, []).append(pair.text2)
    return out
