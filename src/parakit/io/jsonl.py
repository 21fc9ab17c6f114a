"""Canonical JSONL: the lossless parakit corpus format.

Layout, one JSON object per line:

* line 1, the header: ``{"parakit": 1, "scheme": {...}, "name": ..., "lang": ..., "metadata": ...}``
* one line per document: ``{"document": {"id": ..., "text": ..., "metadata": {...}}}``
* one line per pair: ``{"id": ..., "text1": ..., "text2": ..., "label": ..., ...}`` (see
  :meth:`parakit.schema.Pair.to_dict`).

A file of pair lines alone (no header) is read too, with the scheme given by the caller.

A folder of parts (``pairs-00000.jsonl``... beside :data:`PARTS_MANIFEST`, what
``mine run --output-parts`` writes) is one corpus cut by rows: every part a canonical file
with the same header; :func:`read_jsonl_parts` reads them back as one :class:`PairSet`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from parakit.errors import DataFormatError, Errors, LabelError, SpanError, with_location
from parakit.io import validate as check
from parakit.io._open import iter_lines, json_error, loads_json
from parakit.io.atomic import atomic_write
from parakit.io.validate import Where
from parakit.labels import LabelScheme, get_scheme, scheme_from_spec
from parakit.schema import Document, Judgment, Pair, PairSet, Span

FORMAT_VERSION = 1
T = TypeVar("T")

#: the manifest of a folder of canonical JSONL parts (``mine run --output-parts``): the part
#: files in order, the query rows and pair count of each, and whether the run finished
PARTS_MANIFEST = "parakit_parts.json"


def iter_jsonl(
    path: str | Path, encoding: str = "utf-8-sig", code: str = "E105", strict: bool = False
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file (``.gz`` too).

    A malformed line (bad syntax, nested too deeply, an integer too long to read) raises a
    :class:`DataFormatError` naming the line, with error ``code`` (callers pass their own
    package's code). ``strict`` also refuses ``NaN``/``Infinity`` and keys repeated in one
    object (which ``json`` would silently resolve to the last value).
    """
    for line_number, line in iter_lines(path, encoding):
        if not line.strip():
            continue
        try:
            yield line_number, loads_json(line) if strict else json.loads(line)
        except (ValueError, RecursionError) as err:
            raise json_error(err, path, line_number, code) from None


#: Keys of the canonical JSONL header line.
HEADER_KEYS = ("parakit", "scheme", "name", "lang", "metadata")
#: Keys of a canonical pair line (:meth:`parakit.schema.Pair.to_dict`).
PAIR_KEYS = (
    "id",
    "text1",
    "text2",
    "label",
    "span1",
    "span2",
    "group",
    "split",
    "fold",
    "time",
    "source",
    "rewrites",
    "judgments",
    "metadata",
)
JUDGMENT_KEYS = ("annotator", "label", "time", "gold", "rewrite", "unsure", "comment", "metadata")


def read_jsonl(
    path: str | Path,
    scheme: str | LabelScheme | None = None,
    columns: dict[str, str] | None = None,
    encoding: str = "utf-8-sig",
    allow_unsafe_text: bool = False,
    verify: str = "bounds",
) -> PairSet:
    """Read canonical JSONL (or plain pair-per-line JSONL).

    Every value is checked, never coerced (:mod:`parakit.io.validate`): texts are strings,
    ``fold`` and span offsets integers, ids unique (the error names the line of the second
    one), documents unique, and every span names a document of the file and lies inside it.
    A canonical file (with a header) refuses unknown keys; in a plain file they go to metadata.

    Args:
        path: the file (``.gz`` allowed).
        scheme: label scheme; overrides the header's. Default: the header's, else ``binary``.
        columns: for plain JSONL, a mapping from parakit field to the file's key
            (``{"text1": "sentence1", "text2": "sentence2"}``); unmapped keys go to metadata.
        encoding: text encoding.
        allow_unsafe_text: keep texts with NUL characters or lone surrogates (E115).
        verify: spans whose text is not their statement, the rule of every reader with
            documents (:func:`~parakit.io.validate.check_span_texts`, as the Turku reader):
            counted in ``metadata['span_check']``; ``text`` refuses them; most spans
            differing is an error unless ``none``.

    Raises:
        DataFormatError: naming the file, the line and the field at fault; E143 an empty file
            (not even a header).
    """
    from parakit.io.table import row_to_pair

    header: dict[str, Any] = {}
    chosen: LabelScheme | None = get_scheme(scheme) if scheme is not None else None
    documents: dict[str, Document] = {}
    document_ids = check.UniqueIds("document", code="E122")
    pairs: list[Pair] = []
    lines: list[int] = []
    ids = check.UniqueIds()
    where = Where(path)
    for line_number, record in iter_jsonl(path, encoding, strict=True):
        here = where.at(line_number)
        if not isinstance(record, dict):
            raise here.error("expected a JSON object", None, "E105")
        if "parakit" in record:
            if pairs or documents or header:
                raise here.error("the header must be the first line", "parakit", "E107")
            header = _header(record, here)
            if chosen is None and "scheme" in header:
                chosen = _located(
                    partial(scheme_from_spec, header["scheme"]), path, line_number, "scheme"
                )
            continue
        if chosen is None:
            chosen = get_scheme("binary")
        if "document" in record:
            check.known_keys(record, ("document",), here)
            document = _document(record["document"], here, allow_unsafe_text)
            document_ids.add(document.id, here, "document.id")
            documents[document.id] = document
            continue
        if columns:
            pair = row_to_pair(
                record,
                columns,
                path=path,
                line=line_number,
                default_id=str(len(pairs)),
                allow_unsafe_text=allow_unsafe_text,
            )
        else:
            pair = pair_from_record(
                record,
                here,
                default_id=str(len(pairs)),
                canonical=bool(header),
                allow_unsafe_text=allow_unsafe_text,
            )
        ids.add(pair.id, here, "id")
        if pair.label is not None:
            canonical = _located(partial(chosen.normalize, pair.label), path, line_number, "label")
            if canonical != pair.label:
                pair = pair.replace(label=canonical)
        pairs.append(pair)
        lines.append(line_number)
    if not (header or pairs or documents):  # not even a header: nothing was written here
        raise where.at(1).error(
            "empty file: no pairs and no header line (a canonical corpus with no pairs still "
            "has its header)",
            None,
            "E143",
        )
    if chosen is None:
        chosen = get_scheme("binary")
    check.check_spans(pairs, documents, lines, where)
    ps = PairSet(
        pairs,
        scheme=chosen,
        documents=documents,
        name=header.get("name"),
        lang=header.get("lang"),
        metadata=header.get("metadata"),
        validate=False,
    )
    if any(p.span1 is not None or p.span2 is not None for p in pairs) or verify != "bounds":
        check.check_span_texts(ps, verify, where, lines)
    return ps


def _header(record: dict[str, Any], where: Where) -> dict[str, Any]:
    check.known_keys(record, HEADER_KEYS, where, "header field")
    version = record["parakit"]
    if isinstance(version, bool) or not isinstance(version, int) or version != FORMAT_VERSION:
        raise where.error(
            f"unsupported format version {check.quote(version)}; this parakit reads version "
            f"{FORMAT_VERSION}",
            "parakit",
            "E107",
        )
    scheme = record.get("scheme")
    if scheme is not None and not isinstance(scheme, (str, dict)):
        raise where.error("expected a scheme name or object", "scheme")
    out: dict[str, Any] = {"parakit": version}
    if scheme is not None:
        out["scheme"] = (
            check.mapping(scheme, where, "scheme") if isinstance(scheme, dict) else scheme
        )
    for key in ("name", "lang"):
        value = check.optional_text(record.get(key), where, key)
        if value is not None:
            out[key] = value
    if record.get("metadata") is not None:
        out["metadata"] = check.mapping(record["metadata"], where, "metadata")
    return out


def _document(data: Any, where: Where, allow_unsafe_text: bool) -> Document:
    if not isinstance(data, dict):
        raise where.error("expected an object", "document")
    check.known_keys(data, ("id", "text", "metadata"), where)
    for key in ("id", "text"):
        if key not in data:
            raise where.error("missing field", f"document.{key}")
    return Document(
        id=check.identifier(data["id"], where, "document.id"),
        text=check.text(data["text"], where, "document.text", allow_unsafe_text=allow_unsafe_text),
        metadata=check.mapping(data.get("metadata"), where, "document.metadata"),
    )


def _span(data: Any, where: Where, field: str) -> Span | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise where.error("expected an object {doc, begin, end} or null", field)
    check.known_keys(data, ("doc", "begin", "end"), where)
    for key in ("doc", "begin", "end"):
        if key not in data:
            raise where.error("missing field", f"{field}.{key}")
    doc = check.identifier(data["doc"], where, f"{field}.doc")
    begin = check.integer(data["begin"], where, f"{field}.begin", minimum=0)
    end = check.integer(data["end"], where, f"{field}.end", minimum=0)
    if end < begin:
        raise where.error(f"the span ends ({end}) before it begins ({begin})", field, "E101")
    return Span(doc, begin, end)


def _judgment(data: Any, where: Where, allow_unsafe_text: bool) -> Judgment:
    if not isinstance(data, dict):
        raise where.error("expected a judgment object", "judgments")
    check.known_keys(data, JUDGMENT_KEYS, where)
    if "annotator" not in data:
        raise where.error("missing field", "judgments.annotator")
    label = check.label_value(data.get("label"), where, "judgments.label")
    rewrite = data.get("rewrite")
    return Judgment(
        annotator=check.identifier(data["annotator"], where, "judgments.annotator"),
        label=None if label is None else str(label),
        time=check.optional_text(data.get("time"), where, "judgments.time"),
        gold=check.boolean(data.get("gold", False), where, "judgments.gold"),
        rewrite=None if rewrite is None else check.text_pair(rewrite, where, "judgments.rewrite"),
        unsure=check.boolean(data.get("unsure", False), where, "judgments.unsure"),
        comment=check.optional_text(
            data.get("comment"), where, "judgments.comment", allow_unsafe_text=allow_unsafe_text
        ),
        metadata=check.mapping(data.get("metadata"), where, "judgments.metadata"),
    )


def pair_from_record(
    record: dict[str, Any],
    where: Where,
    *,
    default_id: str,
    canonical: bool = True,
    allow_unsafe_text: bool = False,
) -> Pair:
    """The strict inverse of :meth:`Pair.to_dict`: every value type-checked, nothing coerced.

    ``canonical`` refuses keys that are not pair fields; otherwise they go to metadata.
    """
    record = dict(record)
    extra: dict[str, Any] = {}
    if canonical:
        check.known_keys(record, PAIR_KEYS, where)
    else:
        extra = {k: record.pop(k) for k in list(record) if k not in PAIR_KEYS}
    for key in ("text1", "text2"):
        if key not in record:
            raise where.error("missing field", key)
    metadata = check.mapping(record.get("metadata"), where, "metadata")
    for key, value in extra.items():
        if key in metadata:
            raise where.error(f"key {check.quote(key)} is both a field and in metadata", key)
        metadata[key] = check.json_value(value, where, key, allow_unsafe_text)
    label = check.label_value(record.get("label"), where, "label")
    judgments = record.get("judgments")
    if judgments is not None and not isinstance(judgments, list):
        raise where.error("expected a list of judgments", "judgments")
    safe = {"allow_unsafe_text": allow_unsafe_text}
    return Pair(
        id=check.identifier(record["id"], where, "id") if "id" in record else default_id,
        text1=check.text(record["text1"], where, "text1", **safe),
        text2=check.text(record["text2"], where, "text2", **safe),
        label=None if label is None else str(label),
        span1=_span(record.get("span1"), where, "span1"),
        span2=_span(record.get("span2"), where, "span2"),
        group=check.optional_text(record.get("group"), where, "group", **safe),
        split=check.optional_text(record.get("split"), where, "split", **safe),
        fold=check.optional_integer(record.get("fold"), where, "fold", minimum=0),
        time=check.optional_text(record.get("time"), where, "time", **safe),
        source=check.optional_text(record.get("source"), where, "source", **safe),
        rewrites=check.text_pairs(record.get("rewrites"), where, "rewrites"),
        judgments=tuple(_judgment(j, where, allow_unsafe_text) for j in judgments or ()),
        metadata=metadata,
    )


def _located(build: Callable[[], T], path: str | Path, line: int, field: str | None) -> T:
    """Run ``build`` and turn any error it raises into a located :class:`DataFormatError`."""
    try:
        return build()
    except (LabelError, SpanError) as err:
        raise with_location(err, path=path, line=line, field=field) from None
    except (KeyError, TypeError, ValueError) as err:
        missing = err.args[0] if isinstance(err, KeyError) else field
        message = "missing field" if isinstance(err, KeyError) else f"invalid value: {err}"
        raise DataFormatError(
            message[:300], path=path, line=line, field=str(missing)[:200], code="E106"
        ) from None


def parts_manifest(path: str | Path) -> dict[str, Any] | None:
    """The manifest of a folder of JSONL parts, or None where ``path`` is not one."""
    manifest = Path(path) / PARTS_MANIFEST
    if not manifest.is_file():
        return None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise DataFormatError(
            Errors.E145_unreadable_manifest.format(err=err), path=manifest
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("parts"), list):
        raise DataFormatError(Errors.E145_manifest_jsonl_parts, path=manifest)
    return data


def read_jsonl_parts(
    path: str | Path,
    scheme: str | LabelScheme | None = None,
    encoding: str = "utf-8-sig",
    allow_unsafe_text: bool = False,
    verify: str = "bounds",
) -> PairSet:
    """Read a folder of canonical JSONL parts as one corpus: the parts in the manifest's
    order, each read with :func:`read_jsonl` (the options are its own), their pairs in one
    :class:`PairSet` with the parts' common header.

    Raises:
        DataFormatError: E145 an unfinished output (the run stopped before its manifest was
            complete: rerun it), a part missing, holding another count of pairs than the
            manifest says, or with another header than the first; E102 a pair id in two parts.

    Example:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> for n, text in enumerate(["a cat", "a dog"]):
        ...     with JsonlWriter(folder / f"pairs-{n:05d}.jsonl", name="pairs") as out:
        ...         out.write_pair(Pair(id=str(n), text1=text, text2=text.upper()))
        >>> parts = [{"file": f"pairs-{n:05d}.jsonl", "pairs": 1} for n in range(2)]
        >>> _ = (folder / PARTS_MANIFEST).write_text(
        ...     json.dumps({"parakit_parts": 1, "complete": True, "parts": parts}))
        >>> [p.text1 for p in read_jsonl_parts(folder)]
        ['a cat', 'a dog']
    """
    folder = Path(path)
    manifest = parts_manifest(folder)
    if manifest is None:
        raise DataFormatError(
            Errors.E145_folder_parts.format(PARTS_MANIFEST=PARTS_MANIFEST), path=folder
        )
    if not manifest.get("complete"):
        raise DataFormatError(Errors.E145_unfinished_output_run, path=folder)
    pairs: list[Pair] = []
    first: PairSet | None = None
    for entry in manifest["parts"]:
        part_path = folder / str(entry.get("file"))
        if not part_path.is_file():
            raise DataFormatError(Errors.E145_part_named_manifest, path=part_path)
        part = read_jsonl(
            part_path,
            scheme=scheme,
            encoding=encoding,
            allow_unsafe_text=allow_unsafe_text,
            verify=verify,
        )
        if "pairs" in entry and len(part) != entry["pairs"]:
            raise DataFormatError(
                Errors.E145_pairs_where_manifest.format(
                    n_part=len(part), entry_pairs=entry["pairs"]
                ),
                path=part_path,
            )
        if first is None:
            first = part
        elif part.header() != first.header():
            raise DataFormatError(
                Errors.E145_another_header_parts.format(file=manifest["parts"][0].get("file")),
                path=part_path,
            )
        pairs.extend(part.pairs)
    if first is None:
        return PairSet([], scheme=scheme or "binary")
    # documents: canonical parts of mined pairs carry none; those of the first part are kept
    return PairSet(
        pairs,
        scheme=first.scheme,
        documents=first.documents,
        name=first.name,
        lang=first.lang,
        metadata=first.metadata,
    )


class JsonlWriter:
    """Stream a canonical JSONL corpus to disk, atomically: the one canonical JSONL writer.

    Use it as a context manager; the file appears, complete, only when the block ends without
    an error. Documents must be written before the first pair (the format puts them first).

    Example:
        >>> import tempfile, pathlib
        >>> from parakit.schema import Pair
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "mined.jsonl"
        >>> with JsonlWriter(path, name="mined", scheme="binary") as out:
        ...     out.write_pair(Pair(id="0-1", text1="a cat", text2="one cat"))
        >>> from parakit.io import read
        >>> len(read(path))
        1
    """

    def __init__(
        self,
        path: str | Path,
        *,
        scheme: str | LabelScheme = "binary",
        name: str | None = None,
        lang: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.path = Path(path)
        self._header = {
            "parakit": FORMAT_VERSION,
            **PairSet([], scheme=scheme, name=name, lang=lang, metadata=metadata).header(),
        }
        self._context: Any = None
        self._handle: Any = None
        self.pairs_written = 0
        self.documents_written = 0

    def __enter__(self) -> JsonlWriter:
        self._context = atomic_write(self.path)
        self._handle = self._context.__enter__()
        self._line(self._header)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        context, self._context, self._handle = self._context, None, None
        context.__exit__(*exc_info)

    def _line(self, record: dict[str, Any]) -> None:
        if self._handle is None:
            raise RuntimeError("JsonlWriter is used outside its 'with' block")
        try:
            line = json.dumps(record, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as err:
            what = record.get("id", record.get("document", {}).get("id", "header"))
            raise DataFormatError(
                Errors.E120_record_written_json.format(what=str(what)[:100], err=str(err)[:200]),
                path=self.path,
            ) from None
        self._handle.write(line + "\n")

    def write_document(self, document: Document) -> None:
        """Write one document line (before any pair)."""
        if self.pairs_written:
            raise RuntimeError("documents must be written before the first pair")
        self._line({"document": document.to_dict()})
        self.documents_written += 1

    def write_pair(self, pair: Pair) -> None:
        """Write one pair line."""
        self._line(pair.to_dict())
        self.pairs_written += 1


def write_jsonl(pairs: PairSet, path: str | Path) -> Path:
    """Write ``pairs`` as canonical JSONL, atomically. Returns the path written."""
    target = Path(path)
    with JsonlWriter(
        target, scheme=pairs.scheme, name=pairs.name, lang=pairs.lang, metadata=pairs.metadata
    ) as out:
        for document in pairs.documents.values():
            out.write_document(document)
        for pair in pairs:
            out.write_pair(pair)
    return target
