"""The sentence collection of mining, read through :mod:`parakit.io` (one sniff, one open).

:func:`iter_collection` yields ``{"text", "source", "id"}`` records of plain text, JSONL/TSV/CSV
records or any pair corpus (:func:`parakit.io.read_sentences` says which layouts); a file that
is none of them is a :class:`~parakit.errors.VectorError` (E803) naming it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from parakit.errors import DataFormatError, VectorError


def iter_collection(
    path: str | Path, text_field: str = "text", source_field: str = "source", id_field: str = "id"
) -> Iterator[dict[str, Any]]:
    """Yield the sentences of ``path`` as ``{"text", "source", "id"}`` records.

    Raises:
        VectorError: E803, no such file, a layout that cannot be told, or a record without
            the text field (naming the file and line).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.txt"
        >>> _ = p.write_text("first\\n\\nsecond\\n")
        >>> [r["text"] for r in iter_collection(p)]
        ['first', 'second']
    """
    from parakit.io import read_sentences

    try:
        yield from read_sentences(path, text_field, source_field, id_field)
    except DataFormatError as err:
        unknown = err.code == "E113"  # neither a sentence layout nor a pair format
        hint = (
            f"not a sentence collection (.txt, .jsonl with {text_field!r}, .tsv/.csv with a "
            f"{text_field!r} column) nor a pair corpus: "
            if unknown
            else ""
        )
        raise VectorError(f"{hint}{err.message}", code="E803") from None
