"""Canonical JSONL: the lossless parakit corpus format.

Layout, one JSON object per line:

* line 1, the header: ``{"parakit": 1, "scheme": {...}, "name": ..., "lang": ..., "metadata": ...}``
* one line per document: ``{"document": {"id": ..., "text": ..., "metadata": {...}}}``
* one line per pair: ``{"id": ..., "text1": ..., "text2": ..., "label": ..., ...}`` (see
  :meth:`parakit.schema.Pair.to_dict`).

A file of pair lines alone (no header) is read too, with the scheme given by the caller.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from parakit.errors import DataFormatError, LabelError, SpanError, with_location
from parakit.io._open import iter_lines
from parakit.io.atomic import atomic_write
from parakit.labels import LabelScheme, get_scheme, scheme_from_spec
from parakit.schema import Document, Pair, PairSet

FORMAT_VERSION = 1
T = TypeVar("T")


def iter_jsonl(
    path: str | Path, encoding: str = "utf-8-sig", code: str = "E105"
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file (``.gz`` too).

    A malformed line raises a :class:`DataFormatError` naming the line, with error ``code``
    (callers pass their own package's code).
    """
    for line_number, line in iter_lines(path, encoding):
        if not line.strip():
            continue
        try:
            yield line_number, json.loads(line)
        except json.JSONDecodeError as err:
            raise DataFormatError(
                f"malformed JSON: {err.msg} (column {err.colno})",
                path=path,
                line=line_number,
                code=code,
            ) from None


def read_jsonl(
    path: str | Path,
    scheme: str | LabelScheme | None = None,
    columns: dict[str, str] | None = None,
    encoding: str = "utf-8-sig",
) -> PairSet:
    """Read canonical JSONL (or plain pair-per-line JSONL).

    Args:
        path: the file (``.gz`` allowed).
        scheme: label scheme; overrides the header's. Default: the header's, else ``binary``.
        columns: for plain JSONL, a mapping from parakit field to the file's key
            (``{"text1": "sentence1", "text2": "sentence2"}``); unmapped keys go to metadata.
        encoding: text encoding.
    """
    from parakit.io.table import row_to_pair

    header: dict[str, Any] = {}
    chosen: LabelScheme | None = get_scheme(scheme) if scheme is not None else None
    documents: list[Document] = []
    pairs: list[Pair] = []
    for line_number, record in iter_jsonl(path, encoding):
        if not isinstance(record, dict):
            raise DataFormatError(
                "expected a JSON object", path=path, line=line_number, code="E105"
            )
        if "parakit" in record:
            if pairs or documents or header:
                raise DataFormatError(
                    "the header must be the first line",
                    path=path,
                    line=line_number,
                    field="parakit",
                    code="E107",
                )
            header = record
            if chosen is None and "scheme" in header:
                chosen = _located(
                    partial(scheme_from_spec, header["scheme"]), path, line_number, "scheme"
                )
            continue
        if chosen is None:
            chosen = get_scheme("binary")
        if "document" in record:
            documents.append(
                _located(
                    partial(Document.from_dict, record["document"]), path, line_number, "document"
                )
            )
            continue
        if columns:
            pair = row_to_pair(
                record, columns, path=path, line=line_number, default_id=str(len(pairs))
            )
        else:
            for key in ("text1", "text2"):
                if key not in record:
                    raise DataFormatError(
                        "missing field", path=path, line=line_number, field=key, code="E106"
                    )
            if "id" not in record:
                record = {**record, "id": str(len(pairs))}
            pair = _located(partial(Pair.from_dict, record), path, line_number, None)
        if pair.label is not None:
            canonical = _located(partial(chosen.normalize, pair.label), path, line_number, "label")
            if canonical != pair.label:
                pair = pair.replace(label=canonical)
        pairs.append(pair)
    if chosen is None:
        chosen = get_scheme("binary")
    try:
        return PairSet(
            pairs,
            scheme=chosen,
            documents=documents,
            name=header.get("name"),
            lang=header.get("lang"),
            metadata=header.get("metadata"),
        )
    except ValueError as err:
        raise DataFormatError(str(err), path=path, code="E102") from None


def _located(build: Callable[[], T], path: str | Path, line: int, field: str | None) -> T:
    """Run ``build`` and turn any error it raises into a located :class:`DataFormatError`."""
    try:
        return build()
    except (LabelError, SpanError) as err:
        raise with_location(err, path=path, line=line, field=field) from None
    except (KeyError, TypeError, ValueError) as err:
        missing = err.args[0] if isinstance(err, KeyError) else field
        message = "missing field" if isinstance(err, KeyError) else f"invalid value: {err}"
        raise DataFormatError(message, path=path, line=line, field=missing, code="E106") from None


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
        self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")

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
