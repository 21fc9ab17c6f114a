"""Reading documents and raw text files robustly: explicit encodings, located errors, counted
skips.

Input documents are JSON lines ``{"id": ..., "text": ..., "metadata": {...}}`` (other keys go
into metadata, so ``{"id": "a1", "text": "...", "title": "..."}`` works too).

Error codes: ``E501`` empty document, ``E502`` missing field, ``E503`` undecodable file.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from parakit.errors import DataFormatError, Errors
from parakit.schema import Document

logger = logging.getLogger("parakit.build")

#: Encodings tried, in order, when reading raw text files (SRT...) unless the user names others.
DEFAULT_ENCODINGS: tuple[str, ...] = ("utf-8-sig",)


class SkipCounter(Counter):
    """Counts of skipped inputs by reason; logged once per reason and stored in outputs'
    metadata so that no skip goes unnoticed."""

    def skip(self, reason: str, where: str, detail: str = "") -> None:
        self[reason] += 1
        logger.warning("skipped %s (%s)%s", where, reason, f": {detail}" if detail else "")

    def as_dict(self) -> dict[str, int]:
        return dict(sorted(self.items()))


def decode_bytes(
    data: bytes, path: str | Path, encodings: Sequence[str] = DEFAULT_ENCODINGS
) -> str:
    """Decode ``data`` with the first encoding of ``encodings`` that works.

    Raises:
        DataFormatError: ``E503`` when none works, naming the file and the tried encodings.
    """
    for encoding in encodings:
        try:
            return data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
    raise DataFormatError(Errors.E503_decode_file_any.format(encodings=list(encodings)), path=path)


def read_text_file(path: str | Path, encodings: Sequence[str] = DEFAULT_ENCODINGS) -> str:
    """Read a whole text file with :func:`decode_bytes`."""
    path = Path(path)
    if not path.is_file():
        raise DataFormatError(Errors.E103_such_file, path=path)
    return decode_bytes(path.read_bytes(), path, encodings)


def document_from_record(
    record: dict[str, Any], path: str | Path, line: int, text_field: str = "text"
) -> Document:
    """A :class:`Document` from one JSON record; keys other than id/text go to metadata."""
    if not isinstance(record, dict):
        raise DataFormatError(Errors.E502_expected_json_object, path=path, line=line)
    for key in ("id", text_field):
        if key not in record:
            raise DataFormatError(
                Errors.E502_missing_field.format(key=key), path=path, line=line, field=key
            )
    text = record[text_field]
    if not isinstance(text, str):
        raise DataFormatError(Errors.E502_expected_string, path=path, line=line, field=text_field)
    metadata = dict(record.get("metadata") or {})
    metadata.update({k: v for k, v in record.items() if k not in ("id", text_field, "metadata")})
    return Document(str(record["id"]), text, metadata)


def iter_records(path: str | Path, encoding: str = "utf-8-sig") -> Iterable[tuple[int, Any]]:
    """``(line, object)`` of a JSONL file (blank lines skipped), errors located."""
    from parakit.io.jsonl import iter_jsonl

    yield from iter_jsonl(path, encoding=encoding)


def read_documents(
    path: str | Path,
    text_field: str = "text",
    encoding: str = "utf-8-sig",
    skips: SkipCounter | None = None,
) -> list[Document]:
    """Read a documents JSONL; empty documents are skipped (logged and counted in ``skips``).

    Args:
        path: JSON lines with ``id`` and ``text`` (``text_field``) per line.
        text_field: the key holding the text.
        encoding: file encoding.
        skips: counter receiving ``empty-document`` / ``duplicate-id`` skips.

    Raises:
        DataFormatError: a line is not an object or lacks ``id`` / the text field.
    """
    skips = skips if skips is not None else SkipCounter()
    out: list[Document] = []
    seen: set[str] = set()
    for line, record in iter_records(path, encoding):
        doc = document_from_record(record, path, line, text_field)
        if not doc.text.strip():
            skips.skip("empty-document", f"{path} line {line} (id {doc.id!r})")
            continue
        if doc.id in seen:
            skips.skip("duplicate-id", f"{path} line {line} (id {doc.id!r})")
            continue
        seen.add(doc.id)
        out.append(doc)
    return out


def drop_empty(documents: Iterable[Document], skips: SkipCounter) -> list[Document]:
    """The documents with non-blank text; the others are counted as ``empty-document``."""
    out = []
    for doc in documents:
        if doc.text.strip():
            out.append(doc)
        else:
            skips.skip("empty-document", f"document {doc.id!r}")
    return out


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False)
