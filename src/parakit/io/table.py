"""Generic delimited tables (CSV / TSV) and the row-to-pair mapping shared by all readers."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from parakit.errors import DataFormatError, Errors, LabelError, with_location
from parakit.io import validate as check
from parakit.io._open import loads_json, read_text
from parakit.io.atomic import atomic_write
from parakit.io.delimited import check_last_record, tokenize
from parakit.io.validate import Where
from parakit.labels import LabelScheme, get_scheme
from parakit.schema import FLAT_COLUMNS, Pair, PairSet

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
                Errors.E108_unknown_parakit_field.format(
                    check_quote_field=check.quote(field), flat_columns=", ".join(FLAT_COLUMNS)
                ),
                path=path,
            )
        if column not in names:
            raise DataFormatError(
                Errors.E106_column_mapped_header.format(
                    check_quote_column=check.quote(column), field=field, names_names=_names(names)
                ),
                path=path,
                line=1,
                field=str(column)[:200],
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
                Errors.E106_column_columns_map.format(field=field, names_names=_names(names)),
                path=path,
                line=1,
                field=field,
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
    allow_unsafe_text: bool = False,
    decode_columns: bool = False,
) -> Pair:
    """Build a :class:`Pair` from one row: mapped columns to fields, the rest to metadata.

    Values are checked, not coerced (:mod:`parakit.io.validate`): texts must be strings, a fold
    an integer (``"3"`` in a text cell, ``3`` in JSON; never ``"1_0"``, ``1.9`` or ``true``),
    labels strings or integers. With ``decode_columns`` (tables written by
    :func:`write_table`), a column ``metadata.KEY`` fills metadata ``KEY`` and a column
    ``KEY:json`` holds JSON values (an empty cell: no value).
    """
    where = Where(path, line, unit)
    values: dict[str, Any] = {}
    for field, column in columns.items():
        if column not in row:
            raise where.error("missing field", column, "E106")
        value = row[column]
        if value is None or (isinstance(value, str) and value == "" and field not in _REQUIRED):
            continue
        values[field] = value
    for field in _REQUIRED:
        values[field] = check.text(
            values.get(field), where, columns.get(field, field), allow_unsafe_text=allow_unsafe_text
        )
    if "label" in values:
        raw = check.label_value(values["label"], where, columns["label"])
        label = raw.strip() if isinstance(raw, str) else str(raw)
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
        fold = values["fold"]
        values["fold"] = (
            check.integer_text(fold.strip(), where, columns["fold"], minimum=0)
            if isinstance(fold, str)
            else check.integer(fold, where, columns["fold"], minimum=0)
        )
    if "id" in values:
        values["id"] = check.identifier(values["id"], where, columns["id"])
    for field in ("group", "split", "time", "source"):
        if field in values:
            values[field] = check.text(
                values[field], where, columns[field], allow_unsafe_text=allow_unsafe_text
            )
    used = set(columns.values())
    metadata: dict[str, Any] = {}
    for key, value in row.items():
        if key in used or key is None:
            continue
        name = key
        if decode_columns:
            if name.endswith(JSON_SUFFIX):
                name = name[: -len(JSON_SUFFIX)]
                if value == "":
                    continue
                try:
                    value = loads_json(value)
                except (ValueError, RecursionError):
                    raise where.error(
                        f"expected a JSON value, got {check.quote(value)}", key
                    ) from None
            if name.startswith(METADATA_PREFIX):
                name = name[len(METADATA_PREFIX) :]
        if name in metadata:
            raise where.error(f"two columns give metadata {check.quote(name)}", key, "E116")
        metadata[name] = check.json_value(value, where, key, allow_unsafe_text)
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
    allow_unsafe_text: bool = False,
    require_labels: bool = False,
) -> PairSet:
    """Read a CSV/TSV file of pairs with a header row (or ``fieldnames`` for headerless files).

    Args:
        path: the file (``.gz`` allowed).
        delimiter: ``,`` for CSV, ``\\t`` for TSV.
        columns: parakit field -> file column; by default common names are recognised
            (``sentence1``, ``txt1``, ``label``, ``goeswith``... see :data:`DEFAULT_ALIASES`).
        scheme: the label scheme labels are validated against.
        label_map: rewrite raw labels before validation (``{"True": "1"}``).
        require_labels: a file with a label column is labelled throughout: an empty label
            cell is refused (E144) instead of read as an unlabelled pair.
        quoting: ``minimal`` (standard CSV quotes, checked strictly: a stray quote is an
            error) or ``none`` (quotes are ordinary characters, as in MRPC).
        fieldnames: column names of a headerless file.
        encoding: text encoding (default drops a UTF-8 BOM).
        allow_unsafe_text: keep NUL characters (refused by default: E115).

    The last record may end without a line break (RFC 4180); a file cut inside it is refused
    by its structure (:func:`~parakit.io.delimited.check_last_record`, E117).

    Raises:
        DataFormatError: located (file, line, column) and coded; see :mod:`parakit.io.validate`.
    """
    label_scheme = get_scheme(scheme)
    if quoting not in ("minimal", "none"):
        raise DataFormatError(
            Errors.E114_quoting_must_minimal.format(check_quote_quoting=check.quote(quoting))
        )
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '"\r\n':
        raise DataFormatError(
            Errors.E114_delimiter_must_one.format(check_quote_delimiter=check.quote(delimiter))
        )
    text = read_text(path, encoding)
    where = Where(path, 1)
    if not allow_unsafe_text:
        for bad in ("\x00", None):
            position = text.find(bad) if bad else _first_surrogate(text)
            if position >= 0:
                here = where.at(text.count("\n", 0, position) + 1)
                check.check_text_content(text[position], here, None)
    rows, terminated = tokenize(text, delimiter, path=path, quoting=quoting == "minimal")
    if fieldnames is not None:
        header = list(fieldnames)
        body = rows
    else:
        if not rows or rows[0][1] == [""]:
            raise DataFormatError(Errors.E109_empty_file_header, path=path, line=1)
        header, body = rows[0][1], rows[1:]
    check_last_record(body, terminated, len(header), path=path)
    header = check.check_header([h.strip() for h in header], where)
    mapping = resolve_columns(header, columns, path=path)
    pairs: list[Pair] = []
    ids = check.UniqueIds()
    for line, row in body:
        if len(row) == 1 and not row[0].strip():
            continue
        if len(row) != len(header):
            raise DataFormatError(
                Errors.E110_expected_fields_found.format(
                    n_header=len(header), names_header=_names(header), n_row=len(row)
                ),
                path=path,
                line=line,
            )
        pair = row_to_pair(
            dict(zip(header, row, strict=True)),
            mapping,
            path=path,
            line=line,
            default_id=str(len(pairs)),
            scheme=label_scheme,
            label_map=label_map,
            allow_unsafe_text=allow_unsafe_text,
            decode_columns=True,
        )
        if require_labels and pair.label is None and "label" in mapping:
            raise where.at(line).error(
                "empty label in a labelled file; give every pair its label (or remove the "
                "pair): an empty cell is not an unlabelled pair here",
                mapping["label"],
                "E144",
            )
        ids.add(pair.id, where.at(line), mapping.get("id"))
        pairs.append(pair)
    return PairSet(
        pairs, scheme=label_scheme, name=name or Path(path).stem, lang=lang, validate=False
    )


def _first_surrogate(text: str) -> int:
    match = _SURROGATE.search(text)
    return match.start() if match else -1


def _names(names: list[str]) -> str:
    return check.quote(", ".join(names), 160).strip("'\"")


#: Prefix of a metadata column whose key would otherwise be read as a parakit field.
METADATA_PREFIX = "metadata."
#: Suffix of a column holding JSON values (metadata that is not text in every pair).
JSON_SUFFIX = ":json"
_SPECIAL = re.compile(r'[\r\n"]')


def _field(value: str, delimiter: str) -> str:
    if delimiter in value or _SPECIAL.search(value):
        return '"' + value.replace('"', '""') + '"'
    return value


def _flat(pair: Pair, column: str) -> str:
    value = getattr(pair, column)
    if value is None:
        return ""
    if value == "" and column not in _REQUIRED:
        raise DataFormatError(
            Errors.E120_pair_empty_told.format(
                check_quote_pair_id=check.quote(pair.id), column=column
            ),
            field=column,
        )
    return str(value)


def write_table(pairs: PairSet, path: str | Path, delimiter: str = ",") -> Path:
    """Write the flat columns and one column per metadata key, atomically.

    Every field that holds the delimiter, a quote or a line break (``\\r`` included) is
    quoted. Metadata keeps its types: a key whose values are texts in every pair is a plain
    column; any other key (numbers, booleans, lists, missing in some pairs, a name ending in
    ``:json``) is a ``KEY:json`` column of JSON values that :func:`read_table` decodes. A key
    that :func:`read_table` would take for a parakit field (or an empty one) is written as
    ``metadata.KEY``.

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
    reserved = {alias for aliases in DEFAULT_ALIASES.values() for alias in aliases}
    reserved.update(FLAT_COLUMNS)
    header = list(base)
    as_json: list[bool] = []
    for key in extra:
        # a key ending in ':json' is a JSON column whatever its values: the reader decodes it
        plain = not key.endswith(JSON_SUFFIX) and all(
            isinstance(p.metadata.get(key), str) for p in pairs
        )
        name = key
        if (
            not name
            or name.strip().lower() in reserved
            or name.startswith(METADATA_PREFIX)
            or name.endswith(JSON_SUFFIX)
            or name != name.strip()
        ):
            name = METADATA_PREFIX + name
        header.append(name if plain else name + JSON_SUFFIX)
        as_json.append(not plain)
    target = Path(path)
    with atomic_write(target, newline="") as handle:
        handle.write(delimiter.join(_field(h, delimiter) for h in header) + "\n")
        for pair in pairs:
            row = [_flat(pair, c) for c in base]
            for key, encode in zip(extra, as_json, strict=True):
                if encode:
                    value = pair.metadata.get(key, _MISSING)
                    row.append("" if value is _MISSING else _json_cell(value, pair, key, target))
                else:
                    row.append(pair.metadata[key])
            handle.write(delimiter.join(_field(v, delimiter) for v in row) + "\n")
    return target


_MISSING = object()


def _json_cell(value: Any, pair: Pair, key: str, target: Path) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as err:
        raise DataFormatError(
            Errors.E120_pair_metadata_written.format(
                check_quote_pair_id=check.quote(pair.id),
                check_quote_key=check.quote(key),
                err=str(err)[:200],
            ),
            path=target,
        ) from None


_SURROGATE = re.compile("[\ud800-\udfff]")
