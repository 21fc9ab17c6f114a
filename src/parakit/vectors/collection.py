"""Read a sentence collection for mining: plain text, JSONL/TSV/CSV records, or any pair corpus.

Every reader yields ``{"text", "source", "id"}`` records; blank texts are skipped.

* ``.txt`` / ``.txt.gz``: one sentence per line (id = line number).
* ``.jsonl`` whose objects have ``text_field`` (default ``text``): one sentence per object.
* ``.tsv`` / ``.csv`` with a header containing ``text_field``.
* anything :func:`parakit.io.read` reads as pairs (canonical JSONL, Turku JSON, MultiPIT CSV...):
  the statements ``text1`` and ``text2`` of every pair, with the pair's ``source`` (or ``group``
  with ``source_field="group"``) as the source.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from parakit.errors import MineError


def _looks_like_records(path: Path, text_field: str) -> bool:
    from parakit.io._open import open_text

    with open_text(path) as handle:
        for line in handle:
            if line.strip():
                try:
                    first = json.loads(line)
                except json.JSONDecodeError:
                    return False
                return isinstance(first, dict) and text_field in first
    return False


def iter_collection(
    path: str | Path, text_field: str = "text", source_field: str = "source", id_field: str = "id"
) -> Iterator[dict[str, Any]]:
    """Yield the sentences of ``path`` as ``{"text", "source", "id"}`` records.

    Raises:
        MineError: a record without the text field, naming the file and line.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.txt"
        >>> _ = p.write_text("first\\n\\nsecond\\n")
        >>> [r["text"] for r in iter_collection(p)]
        ['first', 'second']
    """
    from parakit.io._open import open_text

    path = Path(path)
    if not path.exists():
        raise MineError(f"{path}: no such collection file", code="E803")
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(".txt"):
        with open_text(path) as handle:
            for number, line in enumerate(handle, start=1):
                text = line.rstrip("\r\n").strip()
                if text:
                    yield {"text": text, "source": None, "id": str(number)}
        return
    if name.endswith(".jsonl") and _looks_like_records(path, text_field):
        with open_text(path) as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except json.JSONDecodeError as err:
                    raise MineError(
                        f"{path}, line {number}: malformed JSON ({err.msg})", code="E803"
                    ) from None
                text = item.get(text_field) if isinstance(item, dict) else None
                if not isinstance(text, str):
                    raise MineError(
                        f"{path}, line {number}, field {text_field!r}: expected a "
                        "string; pass --text-field for another key",
                        code="E803",
                    )
                if text.strip():
                    yield {
                        "text": text.strip(),
                        "source": item.get(source_field),
                        "id": str(item.get(id_field, number)),
                    }
        return
    if name.endswith((".tsv", ".csv")):
        with open_text(path) as handle:
            reader = csv.DictReader(handle, delimiter="\t" if name.endswith(".tsv") else ",")
            if reader.fieldnames and text_field in reader.fieldnames:
                for number, row in enumerate(reader, start=2):
                    text = (row.get(text_field) or "").strip()
                    if text:
                        yield {
                            "text": text,
                            "source": row.get(source_field) or None,
                            "id": row.get(id_field) or str(number),
                        }
                return
    from parakit.io import read

    try:
        pairs = read(path)
    except Exception as err:
        raise MineError(
            f"{path}: not a sentence collection (.txt, .jsonl with {text_field!r}, "
            f".tsv/.csv with a {text_field!r} column) nor a pair corpus: {err}",
            code="E803",
        ) from err
    for pair in pairs:
        source = pair.group if source_field == "group" else pair.source
        for side, text in (("1", pair.text1), ("2", pair.text2)):
            if text.strip():
                yield {"text": text.strip(), "source": source, "id": f"{pair.id}:{side}"}
