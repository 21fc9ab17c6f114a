"""The Turku Paraphrase Corpus layout (T11): a JSON list of pairs plus a texts file.

Each item has ``txt1``, ``txt2``, ``label`` (``4<is``...), ``fold`` (0–99), ``goeswith``
(the source document group), ``rewrites`` and ``context`` (``doc1``/``beg1``/``end1`` and the
same for side 2, offsets into the texts file ``texts.json(.gz)``, a JSON object id -> text).

Also the opus-parsebank annotated sample (``label``, ``lex-similarity``, ``source``, ``txt1``,
``txt2``) in its JSON and TSV forms.
"""

from __future__ import annotations

import csv
import json
import logging
import re
from pathlib import Path
from typing import Any

from parakit.errors import DataFormatError, LabelError, SpanError, with_location
from parakit.io._open import load_json, open_text, require
from parakit.io.atomic import atomic_write
from parakit.labels import TurkuScheme, get_scheme
from parakit.schema import Document, Pair, PairSet, Span

logger = logging.getLogger(__name__)
_NON_WORD = re.compile(r"\W+")
_TURKU = TurkuScheme()


def find_texts_file(path: str | Path) -> Path | None:
    """The texts file beside a Turku data file: ``<prefix>-texts.json.gz`` (``sv-test.json`` ->
    ``sv-texts.json.gz``) or ``texts.json(.gz)``."""
    data = Path(path)
    prefix = data.stem.split("-")[0]
    for name in (f"{prefix}-texts.json.gz", f"{prefix}-texts.json", "texts.json.gz", "texts.json"):
        candidate = data.with_name(name)
        if candidate.exists():
            return candidate
    return None


def _span(context: dict[str, Any], side: int, *, path: Path, record: int) -> Span:
    doc = require(context, f"doc{side}", path=path, line=record)
    begin = require(context, f"beg{side}", path=path, line=record)
    end = require(context, f"end{side}", path=path, line=record)
    try:
        return Span(str(doc), begin, end)
    except SpanError as err:
        raise with_location(
            err, path=path, line=record, field=f"context.beg{side}", unit="record"
        ) from None


def read_turku(
    path: str | Path,
    texts: str | Path | None = None,
    verify: str = "bounds",
    require_texts: bool = False,
) -> PairSet:
    """Read a Turku corpus file (``train.json``, ``sv-test.json``...).

    Args:
        path: the JSON list of pairs.
        texts: the texts file; default: found beside ``path`` (:func:`find_texts_file`).
        verify: how to check context spans against the texts file. ``bounds`` (default): every
            span names a known document and lies inside it; ``text``: also the span text must
            equal the statement up to whitespace and punctuation (subtitle line breaks and
            ``...`` continuations); ``none``: no check. In every case
            ``metadata['span_check']`` counts exact, normalised and differing spans (the
            upstream statements were sometimes edited by annotators after extraction).
        require_texts: fail when no texts file is found (otherwise spans are kept unresolved).

    Raises:
        DataFormatError: naming the file, the record (1-based) and the field at fault.
    """
    path = Path(path)
    items = load_json(path)
    if not isinstance(items, list):
        raise DataFormatError("expected a JSON list of pairs", path=path, code="E105")
    texts_path = Path(texts) if texts is not None else find_texts_file(path)
    documents: dict[str, Document] = {}
    if texts_path is not None:
        raw = load_json(texts_path)
        if not isinstance(raw, dict):
            raise DataFormatError(
                "expected a JSON object: document id -> text", path=texts_path, code="E105"
            )
        documents = {str(k): Document(str(k), v) for k, v in raw.items()}
    elif require_texts:
        raise DataFormatError(
            "no texts file found beside the data; pass texts=PATH", path=path, code="E103"
        )
    pairs: list[Pair] = []
    for record, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise DataFormatError(
                "expected a JSON object", path=path, line=record, unit="record", code="E105"
            )
        txt1 = require(item, "txt1", path=path, line=record)
        txt2 = require(item, "txt2", path=path, line=record)
        raw_label = require(item, "label", path=path, line=record)
        try:
            label = _TURKU.normalize(raw_label)
        except LabelError as err:
            raise with_location(err, path=path, line=record, field="label", unit="record") from None
        context = item.get("context")
        span1 = span2 = None
        if context is not None:
            if not isinstance(context, dict):
                raise DataFormatError(
                    "expected an object or null",
                    path=path,
                    line=record,
                    field="context",
                    unit="record",
                    code="E106",
                )
            span1 = _span(context, 1, path=path, record=record)
            span2 = _span(context, 2, path=path, record=record)
            if verify != "none" and documents:
                for side, span, text in ((1, span1, txt1), (2, span2, txt2)):
                    _verify(
                        span,
                        text,
                        documents,
                        path=path,
                        record=record,
                        side=side,
                        check_text=verify == "text",
                    )
        rewrites = item.get("rewrites") or []
        try:
            rewrite_pairs = tuple((str(a), str(b)) for a, b in rewrites)
        except (TypeError, ValueError):
            raise DataFormatError(
                "expected a list of [rewrite1, rewrite2] pairs",
                path=path,
                line=record,
                field="rewrites",
                unit="record",
                code="E106",
            ) from None
        fold = item.get("fold")
        known = {"txt1", "txt2", "label", "context", "rewrites", "fold", "goeswith", "id"}
        metadata = {k: v for k, v in item.items() if k not in known}
        pairs.append(
            Pair(
                id=str(item.get("id", record - 1)),
                text1=txt1,
                text2=txt2,
                label=label,
                span1=span1,
                span2=span2,
                group=None if item.get("goeswith") is None else str(item["goeswith"]),
                fold=None if fold is None else int(fold),
                rewrites=rewrite_pairs,
                metadata=metadata,
            )
        )
    used = {s.doc_id for p in pairs for s in (p.span1, p.span2) if s is not None}
    kept = {doc_id: documents[doc_id] for doc_id in documents if doc_id in used}
    lang = "sv" if path.name.startswith("sv-") else "fi"
    meta: dict[str, Any] = {
        "format": "turku",
        "texts_file": texts_path.name if texts_path else None,
    }
    ps = PairSet(pairs, scheme=_TURKU, documents=kept, name=path.stem, lang=lang, metadata=meta)
    if documents:
        ps.metadata["span_check"] = span_agreement(ps)
    return ps


def _loose(text: str) -> str:
    return _NON_WORD.sub("", text)


def span_agreement(pairs: PairSet) -> dict[str, int]:
    """Count how the context spans of ``pairs`` match their statements.

    Returns:
        ``exact`` (identical), ``normalized`` (equal up to whitespace and punctuation),
        ``differ`` (the statement was edited), ``no_context`` (pairs without spans).
    """
    counts = {"exact": 0, "normalized": 0, "differ": 0, "no_context": 0}
    for pair in pairs:
        if pair.span1 is None or pair.span2 is None:
            counts["no_context"] += 1
            continue
        for span, text in ((pair.span1, pair.text1), (pair.span2, pair.text2)):
            covered = span.text(pairs.documents[span.doc_id])
            if covered == text:
                counts["exact"] += 1
            elif _loose(covered) == _loose(text):
                counts["normalized"] += 1
            else:
                counts["differ"] += 1
    return counts


def _verify(
    span: Span,
    text: str,
    documents: dict[str, Document],
    *,
    path: Path,
    record: int,
    side: int,
    check_text: bool,
) -> None:
    document = documents.get(span.doc_id)
    if document is None:
        raise DataFormatError(
            f"document {span.doc_id!r} is not in the texts file",
            path=path,
            line=record,
            field=f"context.doc{side}",
            unit="record",
            code="E101",
        )
    if span.end > len(document.text):
        raise DataFormatError(
            f"span [{span.begin}, {span.end}) lies outside document {span.doc_id!r} of length "
            f"{len(document.text)}",
            path=path,
            line=record,
            field=f"context.end{side}",
            unit="record",
            code="E101",
        )
    covered = document.text[span.begin : span.end]
    if check_text and _loose(covered) != _loose(text):
        raise DataFormatError(
            f"span [{span.begin}, {span.end}) of document {span.doc_id!r} covers "
            f"{covered[:60]!r}, not txt{side} {text[:60]!r}",
            path=path,
            line=record,
            field=f"context.beg{side}",
            unit="record",
            code="E101",
        )


def pair_to_turku(pair: Pair) -> dict[str, Any]:
    """One pair as a Turku JSON item (keys in the upstream order)."""
    context = None
    if pair.span1 is not None and pair.span2 is not None:
        context = {
            "beg1": pair.span1.begin,
            "beg2": pair.span2.begin,
            "doc1": pair.span1.doc_id,
            "doc2": pair.span2.doc_id,
            "end1": pair.span1.end,
            "end2": pair.span2.end,
        }
    item: dict[str, Any] = {
        "context": context,
        "fold": pair.fold,
        "goeswith": pair.group,
        "label": pair.label,
        "rewrites": [list(r) for r in pair.rewrites],
        "txt1": pair.text1,
        "txt2": pair.text2,
    }
    item.update(pair.metadata)
    return item


def write_turku(
    pairs: PairSet,
    path: str | Path,
    texts: str | Path | None = None,
    drop_labels: tuple[str, ...] = (),
) -> tuple[Path, Path | None]:
    """Write the Turku layout: the pair list and (when there are documents) the texts file.

    Args:
        pairs: a pair set with the Turku scheme (other schemes are written with their labels).
        path: the JSON file of pairs.
        texts: the texts file; default ``<prefix>-texts.json.gz`` beside ``path``.
        drop_labels: base labels to leave out of a release (T11: ``("1", "x")``).

    Returns:
        the two paths written (texts is None when the set has no documents).
    """
    target = Path(path)
    kept = [p for p in pairs if p.label is None or p.label[:1] not in drop_labels]
    used = {s.doc_id for p in kept for s in (p.span1, p.span2) if s is not None}
    missing = sorted(used - set(pairs.documents))
    if missing:  # check before writing anything, so no half release is left behind
        raise SpanError(f"spans point to documents the pair set does not hold: {missing[:5]}")
    texts_path = None
    if used:
        texts_path = (
            Path(texts)
            if texts is not None
            else target.with_name(f"{target.stem.split('-')[0]}-texts.json.gz")
        )
        with atomic_write(texts_path) as handle:
            json.dump(
                {d: pairs.documents[d].text for d in sorted(used)},
                handle,
                ensure_ascii=False,
                indent=4,
            )
    with atomic_write(target) as handle:
        json.dump([pair_to_turku(p) for p in kept], handle, ensure_ascii=False, indent=4)
        handle.write("\n")
    return target, texts_path


OPUS_PB_COLUMNS = ("label", "lex-similarity", "source", "txt1", "txt2")


def read_opus_parsebank(path: str | Path, fieldnames: tuple[str, ...] | None = None) -> PairSet:
    """Read the opus-parsebank annotated sample (JSON list, or TSV with or without a header).

    The lexical similarity column is kept as the float ``metadata['lex_similarity']``; labels
    follow the Turku scheme. A headerless TSV is read with ``fieldnames`` (default
    ``label, lex-similarity, source, txt1, txt2``).
    """
    path = Path(path)
    if path.suffix in (".json", ".gz") and not path.name.endswith(".tsv.gz"):
        items = load_json(path)
        if not isinstance(items, list):
            raise DataFormatError("expected a JSON list of pairs", path=path, code="E105")
        records = list(enumerate(items, start=1))
        unit = "record"
    else:
        with open_text(path) as handle:
            rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
        names = list(fieldnames or OPUS_PB_COLUMNS)
        start = 0
        if rows and "txt1" in rows[0]:
            names, start = rows[0], 1
        records = []
        for number, row in enumerate(rows[start:], start=start + 1):
            if not row:
                continue
            if len(row) != len(names):
                raise DataFormatError(
                    f"expected {len(names)} fields, found {len(row)}",
                    path=path,
                    line=number,
                    code="E110",
                )
            records.append((number, dict(zip(names, row, strict=True))))
        unit = "line"
    pairs = []
    for number, item in records:
        if not isinstance(item, dict):
            raise DataFormatError(
                "expected a JSON object", path=path, line=number, unit=unit, code="E105"
            )
        label_raw = require(item, "label", path=path, line=number, unit=unit)
        try:
            label = _TURKU.normalize(label_raw)
        except LabelError as err:
            raise with_location(err, path=path, line=number, field="label", unit=unit) from None
        metadata: dict[str, Any] = {}
        if "lex-similarity" in item:
            try:
                metadata["lex_similarity"] = float(item["lex-similarity"])
            except (TypeError, ValueError):
                raise DataFormatError(
                    f"expected a number, got {item['lex-similarity']!r}",
                    path=path,
                    line=number,
                    field="lex-similarity",
                    unit=unit,
                    code="E106",
                ) from None
        pairs.append(
            Pair(
                id=str(item.get("id", number - 1 if unit == "record" else len(pairs))),
                text1=require(item, "txt1", path=path, line=number, unit=unit),
                text2=require(item, "txt2", path=path, line=number, unit=unit),
                label=label,
                source=item.get("source"),
                metadata=metadata,
            )
        )
    return PairSet(
        pairs,
        scheme=get_scheme("turku"),
        name=path.stem,
        lang="fi",
        metadata={"format": "turku-opus-pb"},
    )
