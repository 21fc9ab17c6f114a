"""Sentence collections (what mining embeds): one look at the file's head, then one reading pass.

Every layout yields ``{"text", "source", "id"}`` records; blank texts are skipped.

* ``lines`` (``.txt``, ``.txt.gz``): one sentence per line (id = line number);
* ``records``: a ``.jsonl`` file whose first object has ``text_field`` (default ``text``);
* ``table``: a ``.tsv``/``.csv`` file whose header has ``text_field``;
* any pair format :func:`parakit.io.detect_format` tells (canonical JSONL, Turku JSON,
  MultiPIT CSV...): the statements ``text1`` and ``text2`` of every pair, with the pair's
  ``source`` (or ``group`` with ``source_field="group"``) as the source.

Example:
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.txt"
    >>> _ = p.write_text("first\\n\\nsecond\\n")
    >>> [r["text"] for r in read_sentences(p)]
    ['first', 'second']
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from parakit.errors import DataFormatError
from parakit.io._open import loads_json, open_text

#: the layouts of sentence files beside the pair formats
SENTENCE_LAYOUTS = ("lines", "records", "table")


def read_sentences(
    path: str | Path,
    text_field: str = "text",
    source_field: str = "source",
    id_field: str = "id",
    format: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield the sentences of ``path`` as ``{"text", "source", "id"}`` records, in one pass.

    Args:
        path: a sentence file or any pair corpus.
        text_field, source_field, id_field: the keys (JSONL) or columns (TSV/CSV) of records.
        format: a layout of :data:`SENTENCE_LAYOUTS` or a pair format; None: told from the
            file's name and head (one read, handed on to :func:`parakit.io.detect_format`).

    Raises:
        DataFormatError: no such file (E103), a format that cannot be told (E113), a record
            whose text is not a string or malformed JSON (naming file, line and field), or what
            the pair reader finds.
    """
    from parakit.io import READERS, _head, detect_format

    path = Path(path)
    if not path.exists():
        raise DataFormatError("no such collection file", path=path, code="E103")
    name, layout = path.name.lower().removesuffix(".gz"), format
    if layout is None and name.endswith(".txt"):
        layout = "lines"
    elif layout is None and path.is_dir():
        layout = detect_format(path)
    elif layout is None:  # one read of the head tells the layout, or is handed on
        head = _head(path)
        first = next((line for line in head.splitlines() if line.strip()), "")
        if name.endswith(".jsonl"):
            try:
                record = loads_json(first)
            except (ValueError, RecursionError):
                record = None
            layout = "records" if isinstance(record, dict) and text_field in record else None
        if name.endswith((".tsv", ".csv")):
            row = next(csv.reader([first], delimiter="\t" if name.endswith(".tsv") else ","), [])
            layout = "table" if text_field in row else None
        layout = layout or detect_format(path, head=head)
    if layout == "lines":
        with open_text(path) as handle:
            for number, line in enumerate(handle, start=1):
                text = line.strip()
                if text:
                    yield {"text": text, "source": None, "id": str(number)}
    elif layout == "records":
        with open_text(path) as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except json.JSONDecodeError as err:
                    raise DataFormatError(
                        f"malformed JSON ({err.msg})", path=path, line=number, code="E105"
                    ) from None
                text = item.get(text_field) if isinstance(item, dict) else None
                if not isinstance(text, str):
                    raise DataFormatError(
                        "expected a string; pass --text-field for another key",
                        path=path,
                        line=number,
                        field=text_field,
                        code="E106",
                    )
                if text.strip():
                    yield {
                        "text": text.strip(),
                        "source": item.get(source_field),
                        "id": str(item.get(id_field, number)),
                    }
    elif layout == "table":
        with open_text(path) as handle:
            delimiter = "\t" if name.endswith(".tsv") else ","
            for number, row in enumerate(csv.DictReader(handle, delimiter=delimiter), start=2):
                text = (row.get(text_field) or "").strip()
                if text:
                    yield {
                        "text": text,
                        "source": row.get(source_field) or None,
                        "id": row.get(id_field) or str(number),
                    }
    else:  # a pair corpus, read by its format's reader
        for pair in READERS[layout](path):
            source = pair.group if source_field == "group" else pair.source
            for side, text in (("1", pair.text1), ("2", pair.text2)):
                if text.strip():
                    yield {"text": text.strip(), "source": source, "id": f"{pair.id}:{side}"}


__all__ = ["SENTENCE_LAYOUTS", "read_sentences"]
