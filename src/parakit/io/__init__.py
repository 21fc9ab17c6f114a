"""Readers and writers for every supported corpus format, behind one ``read`` / ``write``.

Example:
    >>> from parakit.io import read, write, formats
    >>> sorted(formats()["read"])[:3]
    ['csv', 'doccano', 'etpc']
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from parakit.errors import DataFormatError, Errors
from parakit.io._open import _compression_error, loads_json, open_text
from parakit.io.atomic import atomic_write
from parakit.io.dataset import is_hf_spec, read_hf_dataset, read_parquet, write_parquet
from parakit.io.doccano import read_doccano, write_doccano
from parakit.io.etpc import read_etpc
from parakit.io.jsonl import PARTS_MANIFEST, read_jsonl, read_jsonl_parts, write_jsonl
from parakit.io.labelstudio import labeling_config, read_label_studio, write_label_studio
from parakit.io.mrpc import read_mrpc
from parakit.io.multipit import multireference, read_multipit, read_multireference
from parakit.io.prodigy import read_prodigy, write_prodigy
from parakit.io.release import read_release, write_release
from parakit.io.table import read_table, write_table
from parakit.io.tmup import read_tmup
from parakit.io.turku import read_opus_parsebank, read_turku, write_turku
from parakit.registry import Registry
from parakit.schema import PairSet

__all__ = [
    "atomic_write",
    "detect_format",
    "formats",
    "labeling_config",
    "multireference",
    "read",
    "read_doccano",
    "read_etpc",
    "read_hf_dataset",
    "read_jsonl",
    "read_jsonl_parts",
    "read_label_studio",
    "read_mrpc",
    "read_multipit",
    "read_multireference",
    "read_opus_parsebank",
    "read_parquet",
    "read_prodigy",
    "read_release",
    "read_sentences",
    "read_table",
    "read_tmup",
    "read_turku",
    "write",
    "write_doccano",
    "write_jsonl",
    "write_label_studio",
    "write_parquet",
    "write_prodigy",
    "write_release",
    "write_table",
    "write_turku",
]


#: format -> reader; other packages add formats with a ``parakit.readers`` entry point
READERS: Registry[Callable[..., PairSet]] = Registry(
    "readers",
    {
        "jsonl": read_jsonl,
        "jsonl-parts": read_jsonl_parts,
        "csv": partial(read_table, delimiter=","),
        "tsv": partial(read_table, delimiter="\t"),
        "turku": read_turku,
        "turku-opus-pb": read_opus_parsebank,
        "multipit": read_multipit,
        "multipit-multiref": read_multireference,
        "tmup": read_tmup,
        "mrpc": read_mrpc,
        "etpc": read_etpc,
        "release": read_release,
        "parquet": read_parquet,
        "hf": read_hf_dataset,
        # the annotation tools' formats (parakit.io.interchange)
        "label-studio": read_label_studio,
        "doccano": read_doccano,
        "prodigy": read_prodigy,
    },
)

#: format -> writer (``parakit.writers`` entry points)
WRITERS: Registry[Callable[..., Any]] = Registry(
    "writers",
    {
        "jsonl": write_jsonl,
        "csv": partial(write_table, delimiter=","),
        "tsv": partial(write_table, delimiter="\t"),
        "turku": write_turku,
        "parquet": write_parquet,
        "label-studio": write_label_studio,
        "doccano": write_doccano,
        "prodigy": write_prodigy,
    },
)


def formats() -> dict[str, list[str]]:
    """The format names ``read`` and ``write`` accept."""
    return {"read": sorted(READERS), "write": sorted(WRITERS)}


def _head(path: Path, size: int = 65536) -> str:
    """The first ``size`` bytes of a file (``.gz`` decompressed), decoded leniently."""
    import gzip
    import zlib

    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as handle:
            head = handle.read(size)
    except (EOFError, zlib.error) as err:
        raise _compression_error(path, err) from None
    except OSError as err:
        if path.suffix == ".gz":
            raise _compression_error(path, err) from None
        raise DataFormatError(Errors.E103_read_file.format(err=err), path=path) from None
    return head.decode("utf-8-sig", errors="replace")


#: keys a Label Studio task starts with (its export writes ``id`` first, an import ``data``)
_LABEL_STUDIO_KEYS = ("data", "id", "annotations", "predictions")


def _first_key(text: str) -> str | None:
    """The first key of the JSON object ``text`` starts with."""
    import re

    match = re.match(r'\{\s*"((?:[^"\\]|\\.)*)"', text)
    return match.group(1) if match else None


def _jsonl_layout(path: Path, head: str | None = None) -> str:
    """A ``.jsonl`` file's layout from its first line: Prodigy (underscore hashes or
    ``answer``), doccano (``text`` with a ``label`` list), else parakit JSONL."""
    line = (_head(path) if head is None else head).split("\n", 1)[0]
    try:
        record = loads_json(line)
    except (ValueError, RecursionError):
        return "jsonl"  # the reader says what is wrong
    if not isinstance(record, dict) or "parakit" in record:
        return "jsonl"
    if "_input_hash" in record or "_task_hash" in record or "answer" in record:
        return "prodigy"
    if "text" in record and isinstance(record.get("label"), list) and "text1" not in record:
        return "doccano"
    return "jsonl"


def detect_format(path: str | Path, *, head: str | None = None) -> str:
    """Guess a file's format from its name and first bytes (``head``: those bytes when the
    caller has read them already, decoded; the file is then not opened again).

    Raises:
        DataFormatError: when the format cannot be told; pass ``format=`` explicitly.
    """
    if is_hf_spec(path):
        return "hf"
    path = Path(path)
    if path.is_dir():
        if (path / "parakit.json").is_file():
            return "release"
        if (path / PARTS_MANIFEST).is_file():
            return "jsonl-parts"
        if (path / "paraphrase_types.xml").exists() or any(path.glob("textual_*.xml")):
            return "etpc"
        users = sorted(path.glob("*.jsonl"))
        if users and _jsonl_layout(users[0]) == "doccano":
            return "doccano"
        raise DataFormatError(Errors.E113_tell_format_folder, path=path)
    if not path.exists():
        raise DataFormatError(Errors.E103_such_file, path=path)
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(".jsonl"):
        return _jsonl_layout(path, head)
    if name.endswith(".parquet"):
        return "parquet"
    head = _head(path) if head is None else head
    first = head.splitlines()[0] + "\n" if head else ""
    if name.endswith(".json"):
        stripped = head.lstrip()
        if stripped.startswith("{"):
            return "label-studio" if _first_key(stripped) == "data" else "multipit-multiref"
        if '"lex-similarity"' in head:
            return "turku-opus-pb"
        if '"txt1"' in head:
            return "turku"
        task = stripped[1:].lstrip() if stripped.startswith("[") else ""
        if _first_key(task) in _LABEL_STUDIO_KEYS and '"data"' in head:
            return "label-studio"
        if '"references"' in head:
            return "multipit-multiref"
        raise DataFormatError(Errors.E113_tell_which_json, path=path)
    if first.startswith("Quality\t#1 ID"):
        return "mrpc"
    if first.startswith("label\tsentence_A_ja"):
        return "tmup"
    if "\t" in first and "txt1" in first and "lex-similarity" in first:
        return "turku-opus-pb"
    if name.endswith(".csv"):
        header = [h.strip().lower() for h in first.split(",")]
        if header[:2] == ["sentence1", "sentence2"]:
            return "multipit"
        return "csv"
    if name.endswith((".tsv", ".txt")):
        return "tsv"
    raise DataFormatError(Errors.E113_tell_format_file, path=path)


def read(path: str | Path, format: str | None = None, **options: Any) -> PairSet:
    """Read any supported corpus file into a :class:`~parakit.schema.PairSet`.

    Args:
        path: file or folder (ETPC, a release), or a Hugging Face dataset as
            ``hf:ID[:CONFIG][@SPLIT]`` (:mod:`parakit.io.dataset`).
        format: one of :func:`formats` ``["read"]``; guessed when omitted.
        **options: passed to the format's reader (``columns=``, ``scheme=``, ``texts=``...).

    Example:
        >>> ps = read("../shared/data/mrpc/msr_paraphrase_train.txt")  # doctest: +SKIP
        >>> len(ps)  # doctest: +SKIP
        4076
    """
    name = format or detect_format(path)
    try:
        reader = READERS[name]
    except (KeyError, TypeError):
        raise DataFormatError(
            Errors.E113_unknown_format_readable.format(
                name=name, readers=", ".join(sorted(READERS))
            ),
            path=path,
        ) from None
    _check_options(reader, name, path, options)
    return reader(path, **options)


#: the layouts of sentence files beside the pair formats
SENTENCE_LAYOUTS = ("lines", "records", "table")


def read_sentences(
    path: str | Path,
    text_field: str = "text",
    source_field: str = "source",
    id_field: str = "id",
    format: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield the sentences of ``path`` (what mining embeds) as ``{"text", "source", "id"}``
    records, blank texts skipped: one read of the head tells the layout, one open reads it.

    * ``lines`` (``.txt``, ``.txt.gz``): one sentence per line (id = line number);
    * ``records``: a ``.jsonl`` file whose first object has ``text_field``;
    * ``table``: a ``.tsv``/``.csv`` file whose header has ``text_field``;
    * any pair format :func:`detect_format` tells (handed the head already read): the
      statements ``text1`` and ``text2`` of every pair, with the pair's ``source`` (or
      ``group`` with ``source_field="group"``) as the source.

    Args:
        path: a sentence file or any pair corpus.
        text_field, source_field, id_field: the keys (JSONL) or columns (TSV/CSV) of records.
        format: a layout of :data:`SENTENCE_LAYOUTS` or a pair format; None: told from the
            file's name and head.

    Raises:
        DataFormatError: no such file (E103), a format that cannot be told (E113), a record
            whose text is not a string or malformed JSON (naming file, line and field), or what
            the pair reader finds.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.txt"
        >>> _ = p.write_text("first\\n\\nsecond\\n")
        >>> [r["text"] for r in read_sentences(p)]
        ['first', 'second']
    """
    path = Path(path)
    if not path.exists():
        raise DataFormatError(Errors.E103_such_collection_file, path=path)
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
                        Errors.E105_malformed_json.format(err_msg=err.msg), path=path, line=number
                    ) from None
                text = item.get(text_field) if isinstance(item, dict) else None
                if not isinstance(text, str):
                    raise DataFormatError(
                        Errors.E106_expected_string_pass, path=path, line=number, field=text_field
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


def _check_options(function: Callable[..., Any], name: str, path: Any, options: dict) -> None:
    """Refuse options the reader or writer does not take (E114) before calling it."""
    import inspect

    try:
        inspect.signature(function).bind(path, **options)
        if "delimiter" in options and getattr(function, "func", None) in (read_table, write_table):
            raise TypeError("the delimiter follows from the format (csv or tsv)")
    except TypeError as err:
        raise DataFormatError(
            Errors.E114_option_understood_reader.format(name=name, err=err), path=path
        ) from None


def write(pairs: PairSet, path: str | Path, format: str | None = None, **options: Any) -> Any:
    """Write a pair set atomically; the format is taken from the extension when omitted
    (``.jsonl``, ``.csv``, ``.tsv``, ``.parquet``, ``.json`` = Turku layout)."""
    path = Path(path)
    if format is None:
        suffix = path.name.lower().removesuffix(".gz").rsplit(".", 1)[-1]
        if suffix not in ("jsonl", "csv", "tsv", "json", "parquet"):
            raise DataFormatError(
                Errors.E113_tell_output_format.format(
                    path_name=path.name, writers=", ".join(sorted(WRITERS))
                ),
                path=path,
            )
        format = "turku" if suffix == "json" else suffix  # the other suffixes name their format
    try:
        writer = WRITERS[format]
    except (KeyError, TypeError):
        raise DataFormatError(
            Errors.E113_unknown_output_format.format(
                format_=format, writers=", ".join(sorted(WRITERS))
            ),
            path=path,
        ) from None
    _check_options(partial(writer, pairs), format, path, options)
    return writer(pairs, path, **options)
