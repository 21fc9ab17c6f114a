"""The Turku Paraphrase Corpus layout (T11): a JSON list of pairs plus a texts file.

Each item has ``txt1``, ``txt2``, ``label`` (``4<is``...), ``fold`` (0–99), ``goeswith``
(the source document group), ``rewrites`` and ``context`` (``doc1``/``beg1``/``end1`` and the
same for side 2, offsets into the texts file ``texts.json(.gz)``, a JSON object id -> text).

Also the opus-parsebank annotated sample (``label``, ``lex-similarity``, ``source``, ``txt1``,
``txt2``) in its JSON and TSV forms.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from parakit.errors import DataFormatError, Errors, LabelError, SpanError, with_location
from parakit.io import validate as check
from parakit.io._open import load_json, read_text, require
from parakit.io.atomic import atomic_files
from parakit.io.delimited import check_last_record, tokenize
from parakit.io.jsonl import _judgment
from parakit.io.validate import Where
from parakit.labels import TurkuScheme, get_scheme
from parakit.schema import Document, Pair, PairSet, Span, document_ids

logger = logging.getLogger(__name__)
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


#: Keys of a Turku item that are pair fields (all other keys go to metadata).
TURKU_KEYS = (
    "context",
    "fold",
    "goeswith",
    "id",
    "judgments",
    "label",
    "rewrites",
    "source",
    "split",
    "time",
    "txt1",
    "txt2",
)
_CONTEXT_KEYS = ("beg1", "beg2", "doc1", "doc2", "end1", "end2")
_LANG_PREFIX = re.compile(r"([a-z]{2})-")


def lang_from_name(path: str | Path) -> str:
    """The language a Turku file name implies: a two-letter prefix (``sv-test.json`` -> ``sv``),
    else ``fi`` (the upstream Finnish files are ``train.json``, ``dev.json``, ``test.json``)."""
    match = _LANG_PREFIX.match(Path(path).name)
    return match.group(1) if match else "fi"


def _span(context: dict[str, Any], side: int, where: Where) -> Span:
    for key in (f"doc{side}", f"beg{side}", f"end{side}"):
        if key not in context:
            raise where.error("missing field", f"context.{key}")
    doc = check.text(context[f"doc{side}"], where, f"context.doc{side}")
    begin = check.integer(context[f"beg{side}"], where, f"context.beg{side}", minimum=0)
    end = check.integer(context[f"end{side}"], where, f"context.end{side}", minimum=0)
    if end < begin:
        raise where.error(
            f"invalid span [{begin}, {end}) in document {check.quote(doc)}",
            f"context.beg{side}",
            "E101",
        )
    return Span(doc, begin, end)


def read_turku(
    path: str | Path,
    texts: str | Path | None = None,
    verify: str = "bounds",
    require_texts: bool = False,
    lang: str | None = None,
    allow_unsafe_text: bool = False,
) -> PairSet:
    """Read a Turku corpus file (``train.json``, ``sv-test.json``...).

    Args:
        path: the JSON list of pairs.
        texts: the texts file; default: found beside ``path`` (:func:`find_texts_file`).
        verify: how to check context spans against the texts file. ``bounds`` (default): every
            span names a known document and lies inside it, and the texts file must belong to
            the data (if most spans cover none of their statement's words, it does not);
            ``text``: also every span text must equal the statement up to whitespace and
            punctuation (subtitle line breaks and ``...`` continuations); ``none``: no check.
            In every case ``metadata['span_check']`` counts exact, normalised and differing
            spans (the upstream statements were sometimes edited by annotators after
            extraction).
        require_texts: fail when no texts file is found (otherwise spans are kept unresolved).
        lang: the statements' language. The layout has no language field: by default it is
            taken from the file name (:func:`lang_from_name`) and
            ``metadata['lang_from']`` says so.
        allow_unsafe_text: keep texts with NUL characters or lone surrogates (E115).

    Values are checked, never coerced (:mod:`parakit.io.validate`): ``label`` is a string,
    ``fold`` and the span offsets integers, ``rewrites`` a list of ``[text, text]`` lists.
    Items may also carry ``id``, ``source``, ``split``, ``time`` and ``judgments`` (as
    :func:`write_turku` writes them); other keys go to metadata.

    Raises:
        DataFormatError: naming the file, the record (1-based) and the field at fault.
    """
    path = Path(path)
    if verify not in check.VERIFY_MODES:
        raise DataFormatError(
            Errors.E114_verify_must_bounds.format(check_quote_verify=check.quote(verify))
        )
    items = load_json(path, jsonl_hint="read it as JSONL (CLI: -f jsonl, or no -f)")
    if not isinstance(items, list):
        raise DataFormatError(Errors.E105_expected_json_list, path=path)
    texts_path = Path(texts) if texts is not None else find_texts_file(path)
    documents: dict[str, Document] = {}
    if texts_path is not None:
        raw = load_json(texts_path)
        if not isinstance(raw, dict):
            raise DataFormatError(Errors.E105_expected_json_object, path=texts_path)
        for doc_id, doc_text in raw.items():
            here = Where(texts_path, None)
            check.check_text_content(doc_id, here, "id", allow_unsafe_text)
            documents[doc_id] = Document(
                doc_id,
                check.text(doc_text, here, doc_id[:200], allow_unsafe_text=allow_unsafe_text),
            )
    elif require_texts:
        raise DataFormatError(Errors.E103_texts_file_found, path=path)
    pairs: list[Pair] = []
    ids = check.UniqueIds()
    safe = {"allow_unsafe_text": allow_unsafe_text}
    for record, item in enumerate(items, start=1):
        where = Where(path, record, "record")
        if not isinstance(item, dict):
            raise where.error("expected a JSON object", None, "E105")
        txt1 = check.text(require(item, "txt1", path=path, line=record), where, "txt1", **safe)
        txt2 = check.text(require(item, "txt2", path=path, line=record), where, "txt2", **safe)
        raw_label = check.label_value(
            require(item, "label", path=path, line=record), where, "label", allow_int=False
        )
        if raw_label is None:
            raise where.error("expected a Turku label, got null", "label", "E201")
        try:
            label = _TURKU.normalize(raw_label)
        except LabelError as err:
            raise with_location(err, path=path, line=record, field="label", unit="record") from None
        context = item.get("context")
        span1 = span2 = None
        if context is not None:
            if not isinstance(context, dict):
                raise where.error("expected an object or null", "context")
            check.known_keys(context, _CONTEXT_KEYS, where)
            span1 = _span(context, 1, where)
            span2 = _span(context, 2, where)
            if verify != "none" and documents:
                for side, span in ((1, span1), (2, span2)):
                    _verify(span, documents, path=path, record=record, side=side)
        judgments = item.get("judgments")
        if judgments is not None and not isinstance(judgments, list):
            raise where.error("expected a list of judgments", "judgments")
        metadata = {k: v for k, v in item.items() if k not in TURKU_KEYS}
        check.json_value(metadata, where, None, allow_unsafe_text)
        pair = Pair(
            id=check.identifier(item["id"], where, "id") if "id" in item else str(record - 1),
            text1=txt1,
            text2=txt2,
            label=label,
            span1=span1,
            span2=span2,
            group=check.optional_text(item.get("goeswith"), where, "goeswith", **safe),
            split=check.optional_text(item.get("split"), where, "split", **safe),
            fold=check.optional_integer(item.get("fold"), where, "fold", minimum=0),
            time=check.optional_text(item.get("time"), where, "time", **safe),
            source=check.optional_text(item.get("source"), where, "source", **safe),
            rewrites=check.text_pairs(item.get("rewrites"), where, "rewrites"),
            judgments=tuple(_judgment(j, where, allow_unsafe_text) for j in judgments or ()),
            metadata=metadata,
        )
        ids.add(pair.id, where, "id")
        pairs.append(pair)
    used = document_ids(pairs)
    kept = {doc_id: documents[doc_id] for doc_id in documents if doc_id in used}
    meta: dict[str, Any] = {
        "format": "turku",
        "texts_file": texts_path.name if texts_path else None,
    }
    if lang is None:
        lang = lang_from_name(path)
        meta["lang_from"] = "file name"
    ps = PairSet(
        pairs,
        scheme=_TURKU,
        documents=kept,
        name=path.stem,
        lang=lang,
        metadata=meta,
        validate=False,
    )
    if documents and all(doc_id in documents for doc_id in used):
        check.check_span_texts(
            ps,
            verify,
            Where(path, unit="record"),
            range(1, len(pairs) + 1),
            field="context.beg{side}",
            mismatch=f"the texts file {texts_path.name if texts_path else ''} does not seem to "
            "belong to this data file (pass texts=PATH with the right one)",
        )
    return ps


def _verify(
    span: Span, documents: dict[str, Document], *, path: Path, record: int, side: int
) -> None:
    document = documents.get(span.doc_id)
    if document is None:
        raise DataFormatError(
            Errors.E101_document_texts_file.format(span_doc_id=span.doc_id),
            path=path,
            line=record,
            field=f"context.doc{side}",
            unit="record",
        )
    if span.end > len(document.text):
        raise DataFormatError(
            Errors.E101_span_lies_outside.format(
                span_begin=span.begin,
                span_end=span.end,
                span_doc_id=span.doc_id,
                n_document_text=len(document.text),
            ),
            path=path,
            line=record,
            field=f"context.end{side}",
            unit="record",
        )


def pair_to_turku(pair: Pair, index: int | None = None, label: str | None = None) -> dict[str, Any]:
    """One pair as a Turku JSON item (keys in the upstream order).

    Args:
        pair: the pair.
        index: its position in the written list; ``id`` is left out when it is the position
            (the reader's default), so upstream files are written back unchanged.
        label: the Turku label to write (default ``pair.label``).

    Raises:
        DataFormatError: a metadata key would take the place of a Turku field (E120).
    """
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
    elif pair.span1 is not None or pair.span2 is not None:
        raise DataFormatError(
            Errors.E120_pair_only_one.format(check_quote_pair_id=check.quote(pair.id))
        )
    item: dict[str, Any] = {
        "context": context,
        "fold": pair.fold,
        "goeswith": pair.group,
        "label": pair.label if label is None else label,
        "rewrites": [list(r) for r in pair.rewrites],
        "txt1": pair.text1,
        "txt2": pair.text2,
    }
    if index is None or pair.id != str(index):
        item["id"] = pair.id
    for key in ("source", "split", "time"):
        value = getattr(pair, key)
        if value is not None:
            item[key] = value
    if pair.judgments:
        item["judgments"] = [j.to_dict() for j in pair.judgments]
    clash = sorted(set(pair.metadata) & set(TURKU_KEYS))
    if clash:
        raise DataFormatError(
            Errors.E120_pair_metadata_key.format(
                check_quote_pair_id=check.quote(pair.id), check_quote_clash_0=check.quote(clash[0])
            )
        )
    item.update(pair.metadata)
    return item


def write_turku(
    pairs: PairSet,
    path: str | Path,
    texts: str | Path | None = None,
    drop_labels: tuple[str, ...] = (),
    label_map: Mapping[str, str] | None = None,
) -> tuple[Path, Path | None]:
    """Write the Turku layout: the pair list and (when there are documents) the texts file.

    Both files are written together or not at all (:func:`~parakit.io.atomic.atomic_files`):
    a failed write never leaves a new texts file beside an old pair list. Everything is checked
    before the first byte is written.

    The layout keeps ``id`` (when it is not the item's position), ``source``, ``split``,
    ``time``, ``judgments`` and metadata beside the upstream keys. It has no language field:
    :func:`read_turku` takes the language from the file name, so a set whose ``lang`` differs
    from what the name implies is written with a warning (name the file ``<lang>-....json``).

    Args:
        pairs: a pair set with the Turku scheme; sets of other schemes need ``label_map``.
        path: the JSON file of pairs.
        texts: the texts file; default ``<prefix>-texts.json.gz`` beside ``path``.
        drop_labels: base labels to leave out of a release (T11: ``("1", "x")``).
        label_map: the Turku label of each of the set's labels (``{"1": "4", "0": "2"}`` for a
            binary set), for sets of other schemes: the writer never guesses a mapping.

    Returns:
        the two paths written (texts is None when the set has no documents).

    Raises:
        DataFormatError: E120 for a label the Turku scheme cannot express (or that has no entry
            in ``label_map``), an unlabelled pair, a value JSON cannot hold; SpanError for spans
            into documents the set does not hold.
    """
    target = Path(path)
    if pairs.scheme.name != "turku" and label_map is None:
        raise DataFormatError(
            Errors.E120_turku_layout_holds.format(pairs_scheme_name=pairs.scheme.name), path=target
        )
    kept: list[tuple[Pair, str]] = []
    for pair in pairs:
        label = pair.label
        if label_map is not None:
            if label not in label_map:
                raise DataFormatError(
                    Errors.E120_pair_label_entry.format(
                        check_quote_pair_id=check.quote(pair.id),
                        check_quote_label=check.quote(label),
                    ),
                    path=target,
                )
            label = label_map[label]
        if label is None:
            raise DataFormatError(
                Errors.E120_pair_label_every.format(check_quote_pair_id=check.quote(pair.id)),
                path=target,
            )
        try:
            label = _TURKU.normalize(label)
        except LabelError as err:
            raise DataFormatError(
                Errors.E120_pair.format(
                    check_quote_pair_id=check.quote(pair.id),
                    str_err_split_1_1=str(err).split("] ", 1)[-1],
                ),
                path=target,
            ) from None
        if _TURKU.parse(label).base not in drop_labels:
            kept.append((pair, label))
    used = document_ids(p for p, _ in kept)
    missing = sorted(used - set(pairs.documents))
    if missing:  # check before writing anything, so no half release is left behind
        raise SpanError(Errors.E101_spans_point_documents.format(missing_5=missing[:5]))
    expected = lang_from_name(target)
    if pairs.lang is not None and pairs.lang != expected:
        logger.warning(
            "the Turku layout has no language field: %s will read back as language %r (from "
            "its name), not %r; name it '%s-...json' to keep the language",
            target.name,
            expected,
            pairs.lang,
            pairs.lang.split(",")[0],
        )
    try:
        items = json.dumps(
            [pair_to_turku(p, index, label) for index, (p, label) in enumerate(kept)],
            ensure_ascii=False,
            indent=4,
            allow_nan=False,
        )
    except (TypeError, ValueError) as err:
        raise DataFormatError(
            Errors.E120_value_written_json.format(err=str(err)[:200]), path=target
        ) from None
    if not used:
        with atomic_files([target]) as (handle,):
            handle.write(items + "\n")
        return target, None
    texts_path = (
        Path(texts)
        if texts is not None
        else target.with_name(f"{target.stem.split('-')[0]}-texts.json.gz")
    )
    documents = {d: pairs.documents[d].text for d in used}
    # other pair files that read this texts file keep their documents in it, unchanged
    for doc_id, (text, other) in _shared_documents(target, texts_path).items():
        if documents.setdefault(doc_id, text) != text:
            raise DataFormatError(
                Errors.E120_texts_file_shared.format(
                    doc_id=doc_id, texts=texts_path, other=other.name
                ),
                path=target,
            )
    texts_json = json.dumps(dict(sorted(documents.items())), ensure_ascii=False, indent=4)
    with atomic_files([texts_path, target]) as (texts_handle, handle):
        texts_handle.write(texts_json)
        handle.write(items + "\n")
    return target, texts_path


def _shared_documents(target: Path, texts_path: Path) -> dict[str, tuple[str, Path]]:
    """The documents of an existing ``texts_path`` that other Turku files beside ``target``
    point into (``sv-train.json`` and ``sv-test.json`` share ``sv-texts.json.gz``), as
    id -> (text, the first such file); files that are not Turku pair lists are passed over."""
    if not texts_path.exists():
        return {}
    users: dict[str, Path] = {}
    for other in sorted(target.parent.glob("*.json")):
        found = find_texts_file(other)
        if (
            other.resolve() == target.resolve()
            or not found
            or found.resolve() != texts_path.resolve()
        ):
            continue
        try:
            items = load_json(other)
        except DataFormatError:
            continue
        for item in items if isinstance(items, list) else ():
            context = item.get("context") if isinstance(item, dict) else None
            if isinstance(context, dict):
                for key in ("doc1", "doc2"):
                    users.setdefault(str(context.get(key)), other)
    texts = load_json(texts_path) if users else {}
    return {d: (texts[d], users[d]) for d in users if isinstance(texts, dict) and d in texts}


OPUS_PB_COLUMNS = ("label", "lex-similarity", "source", "txt1", "txt2")


def read_opus_parsebank(
    path: str | Path,
    fieldnames: tuple[str, ...] | None = None,
    allow_unsafe_text: bool = False,
    encoding: str = "utf-8-sig",
) -> PairSet:
    """Read the opus-parsebank annotated sample (JSON list, or TSV with or without a header).

    The lexical similarity column is kept as the float ``metadata['lex_similarity']`` (a
    decimal number; ``1_0``, ``nan`` are refused); labels follow the Turku scheme. A headerless
    TSV is read with ``fieldnames`` (default ``label, lex-similarity, source, txt1, txt2``).
    Other keys or columns go to metadata. A TSV cut inside its last record is refused (E117,
    told by its structure: the last line may end without a line break), a file with no pairs
    too (E143).
    """
    path = Path(path)
    if path.suffix in (".json", ".gz") and not path.name.endswith(".tsv.gz"):
        items = load_json(path, encoding)
        if not isinstance(items, list):
            raise DataFormatError(Errors.E105_expected_json_list, path=path)
        records = list(enumerate(items, start=1))
        unit = "record"
    else:
        text = read_text(path, encoding)
        rows, terminated = tokenize(text, "\t", path=path, quoting=False)
        names = list(fieldnames or OPUS_PB_COLUMNS)
        if rows and "txt1" in rows[0][1]:
            names, rows = rows[0][1], rows[1:]
        check_last_record(rows, terminated, len(names), path=path)
        check.check_header(names, Where(path, 1))
        records = []
        for number, row in rows:
            if row == [""]:
                continue
            if len(row) != len(names):
                raise DataFormatError(
                    Errors.E110_expected_fields_found_2.format(n_names=len(names), n_row=len(row)),
                    path=path,
                    line=number,
                )
            records.append((number, dict(zip(names, row, strict=True))))
        unit = "line"
    if not records:
        raise DataFormatError(
            Errors.E143_no_pairs_empty_list if unit == "record" else Errors.E143_no_pairs_header,
            path=path,
            line=1,
        )
    pairs = []
    ids = check.UniqueIds()
    safe = {"allow_unsafe_text": allow_unsafe_text}
    for number, item in records:
        where = Where(path, number, unit)
        if not isinstance(item, dict):
            raise where.error("expected a JSON object", None, "E105")
        label_raw = check.label_value(
            require(item, "label", path=path, line=number, unit=unit),
            where,
            "label",
            allow_int=False,
        )
        if label_raw is None:
            raise where.error("expected a Turku label, got null", "label", "E201")
        try:
            label = _TURKU.normalize(label_raw)
        except LabelError as err:
            raise with_location(err, path=path, line=number, field="label", unit=unit) from None
        metadata: dict[str, Any] = {}
        if "lex-similarity" in item:
            value = item["lex-similarity"]
            metadata["lex_similarity"] = (
                check.number_text(value, where, "lex-similarity")
                if isinstance(value, str)
                else check.number(value, where, "lex-similarity")
            )
        known = ("label", "lex-similarity", "source", "txt1", "txt2", "id")
        for key, value in item.items():
            if key not in known:
                if key in metadata:
                    raise where.error(f"key {check.quote(key)} is given twice", key, "E116")
                metadata[key] = check.json_value(value, where, key, allow_unsafe_text)
        default_id = str(number - 1 if unit == "record" else len(pairs))
        pair = Pair(
            id=check.identifier(item["id"], where, "id") if "id" in item else default_id,
            text1=check.text(
                require(item, "txt1", path=path, line=number, unit=unit), where, "txt1", **safe
            ),
            text2=check.text(
                require(item, "txt2", path=path, line=number, unit=unit), where, "txt2", **safe
            ),
            label=label,
            source=check.optional_text(item.get("source"), where, "source", **safe),
            metadata=metadata,
        )
        ids.add(pair.id, where, "id")
        pairs.append(pair)
    return PairSet(
        pairs,
        scheme=get_scheme("turku"),
        name=path.stem,
        lang="fi",
        metadata={"format": "turku-opus-pb"},
        validate=False,
    )
