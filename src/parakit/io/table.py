"""Generic delimited tables (CSV / TSV) and the row-to-pair mapping shared by all readers."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from parakit.errors import DataFormatError, LabelError, with_location
from parakit.io._open import open_text
from parakit.io.atomic import atomic_write
from parakit.labels import LabelScheme, get_scheme
from parakit.schema import FLAT_COLUMNS, Pair, PairSet

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))

#: Column names recognised without a mapping, per parakit field (first match wins).
DEFAULT_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "pair_id"),
    "text1": ("text1", "sentence1", "txt1", "sentence_a", "s1", "source"),
    "text2": ("text2", "sentence2", "txt2", "sentence_b", "s2", "target"),
    "label": ("label", "quality", "gold_label"),
    "group": ("group", "goeswith", "topic"),
    "split": ("split",),
    "fold": ("fold",),
    "time": ("time", "date", "timestamp"),
    "source": ("source",),
}
_REQUIRED = ("text1", "text2")


def resolve_columns(
    header: Iterable[str], columns: Mapping[str, str] | None, *, path: str | Path | None = None
) -> dict[str, str]:
    """Decide which file column feeds each parakit field.

    ``columns`` maps parakit fields to file columns and wins over the default aliases;
    a mapped column that does not exist raises a :class:`DataFormatError` naming it.
    """
    names = list(header)
    lowered = {name.lower(): name for name in names}
    resolved: dict[str, str] = {}
    for field, column in (columns or {}).items():
        if field not in FLAT_COLUMNS:
            raise DataFormatError(
                f"unknown parakit field {field!r} in the column mapping; fields: "
                f"{', '.join(FLAT_COLUMNS)}",
                path=path,
                code="E108",
            )
        if column not in names:
            raise DataFormatError(
                f"column {column!r} (mapped to {field}) is not in the header; columns: "
                f"{', '.join(names)}",
                path=path,
                line=1,
                field=column,
                code="E106",
            )
        resolved[field] = column
    used = set(resolved.values())
    for field, aliases in DEFAULT_ALIASES.items():
        if field in resolved:
            continue
        for alias in aliases:
            name = lowered.get(alias)
            if name is not None and name not in used:
                resolved[field] = name
                used.add(name)
                break
    for field in _REQUIRED:
        if field not in resolved:
            raise DataFormatError(
                f"no column for {field}; columns are {', '.join(names)}; map one with "
                f"columns={{'{field}': NAME}} (CLI: --column {field}=NAME)",
                path=path,
                line=1,
                field=field,
                code="E106",
            )
    return resolved


def row_to_pair(
    row: Mapping[str, Any],
    columns: Mapping[str, str],
    *,
    path: str | Path | None,
    line: int,
    default_id: str,
    scheme: LabelScheme | None = None,
    label_map: Mapping[str, str] | None = None,
    unit: str = "line",
) -> Pair:
    """Build a :class:`Pair` from one row: mapped columns to fields, the rest to metadata."""
    values: dict[str, Any] = {}
    for field, column in columns.items():
        if column not in row:
            raise DataFormatError(
                "missing field", path=path, line=line, field=column, code="E106", unit=unit
            )
        value = row[column]
        if value is None or (isinstance(value, str) and value == "" and field not in _REQUIRED):
            continue
        values[field] = value
    for field in _REQUIRED:
        text = values.get(field)
        if not isinstance(text, str):
            raise DataFormatError(
                f"expected text, got {text!r}",
                path=path,
                line=line,
                field=columns.get(field, field),
                code="E106",
                unit=unit,
            )
    if "label" in values:
        label = str(values["label"]).strip()
        if label_map is not None:
            label = label_map.get(label, label)
        if scheme is not None:
            try:
                label = scheme.normalize(label)
            except LabelError as err:
                raise with_location(
                    err, path=path, line=line, field=columns["label"], unit=unit
                ) from None
        values["label"] = label
    if "fold" in values:
        try:
            values["fold"] = int(values["fold"])
        except (TypeError, ValueError):
            raise DataFormatError(
                f"fold must be an integer, got {values['fold']!r}",
                path=path,
                line=line,
                field=columns["fold"],
                code="E106",
                unit=unit,
            ) from None
    for field in ("id", "group", "split", "time", "source"):
        if field in values:
            values[field] = str(values[field])
    used = set(columns.values())
    metadata = {key: value for key, value in row.items() if key not in used and key is not None}
    return Pair(id=values.pop("id", default_id), metadata=metadata, **values)


def read_table(
    path: str | Path,
    delimiter: str = ",",
    columns: Mapping[str, str] | None = None,
    scheme: str | LabelScheme = "binary",
    label_map: Mapping[str, str] | None = None,
    quoting: str = "minimal",
    fieldnames: list[str] | None = None,
    encoding: str = "utf-8-sig",
    name: str | None = None,
    lang: str | None = None,
) -> PairSet:
    """Read a CSV/TSV file of pairs with a header row (or ``fieldnames`` for headerless files).

    Args:
        path: the file (``.gz`` allowed).
        delimiter: ``,`` for CSV, ``\\t`` for TSV.
        columns: parakit field -> file column; by default common names are recognised
            (``sentence1``, ``txt1``, ``label``, ``goeswith``... see :data:`DEFAULT_ALIASES`).
        scheme: the label scheme labels are validated against.
        label_map: rewrite raw labels before validation (``{"True": "1"}``).
        quoting: ``minimal`` (standard CSV quotes) or ``none`` (quotes are ordinary
            characters, as in MRPC).
        fieldnames: column names of a headerless file.
        encoding: text encoding (default drops a UTF-8 BOM).
    """
    label_scheme = get_scheme(scheme)
    quote_mode = {"minimal": csv.QUOTE_MINIMAL, "none": csv.QUOTE_NONE}.get(quoting)
    if quote_mode is None:
        raise ValueError(f"quoting must be 'minimal' or 'none', not {quoting!r}")
    pairs: list[Pair] = []
    line = 1
    with open_text(path, encoding) as handle:
        reader = csv.reader(handle, delimiter=delimiter, quoting=quote_mode)
        try:
            header = fieldnames or next(reader)
        except StopIteration:
            raise DataFormatError(
                "empty file: no header row", path=path, line=1, code="E109"
            ) from None
        except UnicodeDecodeError as err:
            raise DataFormatError(
                f"cannot decode the file as {encoding}: {err.reason}",
                path=path,
                line=1,
                code="E104",
            ) from None
        header = [h.strip() for h in header]
        mapping = resolve_columns(header, columns, path=path)
        try:
            for row in reader:
                line = reader.line_num
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if len(row) != len(header):
                    raise DataFormatError(
                        f"expected {len(header)} fields ({', '.join(header)}), found {len(row)}",
                        path=path,
                        line=line,
                        code="E110",
                    )
                record = dict(zip(header, row, strict=True))
                pairs.append(
                    row_to_pair(
                        record,
                        mapping,
                        path=path,
                        line=line,
                        default_id=str(len(pairs)),
                        scheme=label_scheme,
                        label_map=label_map,
                    )
                )
        except UnicodeDecodeError as err:
            raise DataFormatError(
                f"cannot decode the file as {encoding}: {err.reason}",
                path=path,
                line=line + 1,
                code="E104",
            ) from None
        except csv.Error as err:
            raise DataFormatError(
                f"malformed {('CSV', 'TSV')[delimiter == chr(9)]}: {err}",
                path=path,
                line=reader.line_num,
                code="E110",
            ) from None
    try:
        return PairSet(
            pairs, scheme=label_scheme, name=name or Path(path).stem, lang=lang, validate=True
        )
    except ValueError as err:
        raise DataFormatError(str(err), path=path, code="E102") from None


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def write_table(pairs: PairSet, path: str | Path, delimiter: str = ",") -> Path:
    """Write the flat columns and one column per metadata key, atomically.

    Documents, spans, rewrites and judgments are not representable in a flat table; use
    JSONL or the Turku layout to keep them.
    """
    base = ["id", "text1", "text2"] + [
        c for c in FLAT_COLUMNS[3:] if any(getattr(p, c) is not None for p in pairs)
    ]
    extra: list[str] = []
    for pair in pairs:
        for key in pair.metadata:
            if key not in extra:
                extra.append(key)
    header = base + [f"metadata.{k}" if k in base else k for k in extra]
    target = Path(path)
    with atomic_write(target, newline="") as handle:
        writer = csv.writer(handle, delimiter=delimiter, lineterminator="\n")
        writer.writerow(header)
        for pair in pairs:
            row = [_cell(getattr(pair, c)) for c in base]
            row += [_cell(pair.metadata.get(k)) for k in extra]
            writer.writerow(row)
    return target
