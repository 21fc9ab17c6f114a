"""The sentence collection of mining, read through :func:`parakit.io.read_sentences` (plain
text, JSONL/TSV/CSV records or any pair corpus; one sniff, one open)."""

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
        VectorError: E803, what :func:`~parakit.io.read_sentences` finds wrong (no such file,
            a layout that cannot be told, a record without the text field...).
    """
    from parakit.io import read_sentences

    try:
        yield from read_sentences(path, text_field, source_field, id_field)
    except DataFormatError as err:
        hint = (  # neither a sentence layout nor a pair format
            f"not a sentence collection (.txt, .jsonl with {text_field!r}, .tsv/.csv with a "
            f"{text_field!r} column) nor a pair corpus: "
            if err.code == "E113"
            else ""
        )
        raise VectorError(hint + err.message, code="E803") from None
