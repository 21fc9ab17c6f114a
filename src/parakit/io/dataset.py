"""Parquet files and Hugging Face datasets as pair sets: where the data already is.

- :func:`read_parquet` / :func:`write_parquet`: one Parquet file. parakit's own files keep
  every field (spans, judgments, metadata) and the corpus header (in the schema metadata); any
  other Parquet file is read like a table, with the same column mapping (``columns=``, CLI
  ``-c``) and default column names (``sentence1``, ``label``...) as CSV.
- :func:`read_hf_dataset`: a Hub dataset id with a config and a split, a local dataset folder
  (data files ``load_dataset`` reads) or a folder written by ``save_to_disk``. On the command
  line it is spelled ``hf:ID[:CONFIG][@SPLIT]`` wherever a pairs file is accepted, e.g.
  ``hf:nyu-mll/glue:mrpc@train`` or ``hf:./my-dataset@test``; without a split every split is
  read, each pair keeping its split's name in ``split``.

Example:
    >>> from parakit.io import read
    >>> ps = read("hf:nyu-mll/glue:mrpc@validation")  # doctest: +SKIP
    >>> len(ps), ps.scheme.name  # doctest: +SKIP
    (408, 'binary')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from parakit.errors import DataFormatError, Errors, require_extra
from parakit.io import validate as check
from parakit.io.atomic import atomic_write
from parakit.io.table import resolve_columns, row_to_pair
from parakit.io.validate import Where
from parakit.labels import LabelScheme, get_scheme
from parakit.schema import FLAT_COLUMNS, JSON_COLUMNS, Document, PairSet

#: the prefix that marks a Hugging Face dataset where a file is expected
HF_PREFIX = "hf:"
#: the schema-metadata key of parakit's Parquet files (the corpus header and documents)
PARQUET_KEY = b"parakit"


def _pyarrow() -> Any:
    return require_extra("pyarrow", "pyarrow.parquet", extra="datasets", needed_for="Parquet")


def pairs_from_rows(
    rows: Iterable[Mapping[str, Any]],
    header: list[str],
    *,
    path: str | Path,
    columns: Mapping[str, str] | None = None,
    scheme: str | LabelScheme = "binary",
    label_map: Mapping[str, str] | None = None,
    name: str | None = None,
    lang: str | None = None,
    unit: str = "row",
    id_prefix: str = "",
) -> PairSet:
    """Pairs from records of any tabular source: the column mapping and checks of
    :func:`~parakit.io.table.read_table` (mapped columns to fields, the rest to metadata).

    Raises:
        DataFormatError: E106 no column for a text, E143 no rows; values as in ``read_table``.
    """
    label_scheme = get_scheme(scheme)
    mapping = resolve_columns(header, columns, path=path)
    ids = check.UniqueIds()
    pairs = []
    for number, row in enumerate(rows, start=1):
        pair = row_to_pair(
            row,
            mapping,
            path=path,
            line=number,
            default_id=str(number - 1),
            scheme=label_scheme,
            label_map=label_map,
            unit=unit,
        )
        if id_prefix:
            pair = pair.replace(id=id_prefix + pair.id)
        ids.add(pair.id, Where(path, number, unit), mapping.get("id"))
        pairs.append(pair)
    return PairSet(pairs, scheme=label_scheme, name=name, lang=lang, validate=False)


def read_parquet(
    path: str | Path,
    columns: Mapping[str, str] | None = None,
    scheme: str | LabelScheme | None = None,
    label_map: Mapping[str, str] | None = None,
    name: str | None = None,
    lang: str | None = None,
) -> PairSet:
    """Read one Parquet file of pairs.

    Args:
        path: the file.
        columns: parakit field -> column (as for CSV); default column names are recognised.
        scheme: the label scheme (default: the file's own for parakit files, else binary).
        label_map: rewrite raw labels before validation (``{"equivalent": "1"}``).
        name, lang: corpus name (default: the file's stem) and language.

    Raises:
        DataFormatError: E103 an unreadable or non-Parquet file; E106 no text columns.

    Example:
        >>> ps = read_parquet("pairs.parquet", columns={"text1": "question1"})  # doctest: +SKIP
    """
    pa = _pyarrow()
    path = Path(path)
    try:
        table = pa.parquet.read_table(path)
    except (OSError, pa.ArrowException) as err:
        raise DataFormatError(Errors.E103_read_parquet_file.format(err=err), path=path) from None
    meta = table.schema.metadata or {}
    records = table.to_pylist()
    if PARQUET_KEY in meta and not columns:
        overrides = {k: v for k, v in (("name", name), ("lang", lang)) if v is not None}
        return PairSet.from_columns(records, meta[PARQUET_KEY].decode("utf-8"), scheme, **overrides)
    return pairs_from_rows(
        records,
        table.column_names,
        path=path,
        columns=columns,
        scheme=scheme or "binary",
        label_map=label_map,
        name=name or path.name.removesuffix(".parquet"),
        lang=lang,
    )


def write_parquet(pairs: PairSet, path: str | Path) -> Path:
    """Write a pair set as one Parquet file, atomically; :func:`read_parquet` reads back the
    same pairs, documents and corpus header. ``datasets.load_dataset("parquet", ...)`` and
    pandas read it too: flat columns, nested fields as JSON strings (:meth:`PairSet.to_columns`).
    """
    pa = _pyarrow()
    target = Path(path)
    try:  # metadata, judgments and the header as JSON text
        description, columns = pairs.description(), pairs.to_columns()
    except (TypeError, ValueError, RecursionError) as err:
        raise DataFormatError(
            Errors.E120_value_written_json.format(err=str(err)[:200]), path=target
        ) from None
    schema = pa.schema(
        [
            (key, pa.int32() if key == "fold" else pa.string())
            for key in (*FLAT_COLUMNS, *JSON_COLUMNS)
        ],
        metadata={PARQUET_KEY: description.encode("utf-8")},
    )
    table = pa.Table.from_pydict(columns, schema=schema)
    sink = pa.BufferOutputStream()
    pa.parquet.write_table(table, sink)
    with atomic_write(target, "wb") as handle:
        handle.write(sink.getvalue().to_pybytes())
    return target


def parse_hf_spec(spec: str | Path) -> tuple[str, str | None, str | None]:
    """``hf:ID[:CONFIG][@SPLIT]`` -> ``(ID, CONFIG, SPLIT)``; without the prefix the whole text
    is the id (or folder).

    Example:
        >>> parse_hf_spec("hf:nyu-mll/glue:mrpc@train")
        ('nyu-mll/glue', 'mrpc', 'train')
        >>> parse_hf_spec("hf:./data@test[:10]")
        ('./data', None, 'test[:10]')
    """
    text = str(spec)
    if not text.startswith(HF_PREFIX):
        return text, None, None
    text = text[len(HF_PREFIX) :]
    text, at, split = text.partition("@")
    source, colon, config = text.partition(":")
    return source, (config or None) if colon else None, (split or None) if at else None


def is_hf_spec(path: str | Path) -> bool:
    """Whether ``path`` names a Hugging Face dataset (``hf:...``) rather than a file."""
    return str(path).startswith(HF_PREFIX)


def _load(source: str, config: str | None, split: str | None, revision: str | None) -> Any:
    """The dataset (or dataset dict) of ``source``: ``load_from_disk`` for a ``save_to_disk``
    folder, ``load_dataset`` for anything else."""
    datasets = require_extra("datasets", extra="datasets", needed_for="a Hugging Face dataset")
    folder = Path(source).expanduser()
    saved = folder.is_dir() and any(
        (folder / marker).is_file() for marker in ("dataset_dict.json", "state.json")
    )
    try:
        if saved:
            data = datasets.load_from_disk(str(folder))
            if split is not None and isinstance(data, datasets.DatasetDict):
                if split not in data:
                    raise ValueError(f"Unknown split {split!r}; splits: {', '.join(data)}")
                data = data[split]
            return data
        return datasets.load_dataset(source, config, split=split, revision=revision)
    except (FileNotFoundError, ConnectionError, ValueError, OSError) as err:
        reason = " ".join(str(err).split())[:400].rstrip(".") or type(err).__name__
        raise DataFormatError(
            Errors.E150_cannot_load_dataset.format(
                source=source,
                config=f" (config {config!r})" if config else "",
                split=f" (split {split!r})" if split else "",
                reason=reason,
            ),
            path=source,
        ) from None


def _release_split(folder: str, split: str | None) -> PairSet:
    """A parakit release folder read whole (:func:`~parakit.io.release.read_release`), or the
    pairs of one of its splits."""
    from parakit.io.release import read_release

    pairs = read_release(folder)
    if split is None:
        return pairs
    names = sorted(pairs.by_split())
    if split not in names:
        raise DataFormatError(
            Errors.E150_release_split_splits.format(split=split, names=", ".join(names)),
            path=folder,
        )
    return pairs.filter(lambda p: p.split == split)


def read_hf_dataset(
    path: str | Path,
    config: str | None = None,
    split: str | None = None,
    columns: Mapping[str, str] | None = None,
    scheme: str | LabelScheme | None = None,
    label_map: Mapping[str, str] | None = None,
    revision: str | None = None,
    name: str | None = None,
    lang: str | None = None,
) -> PairSet:
    """Read a Hugging Face dataset as pairs.

    Args:
        path: ``hf:ID[:CONFIG][@SPLIT]``, or (with ``format="hf"``) a Hub id or a folder: data
            files ``datasets.load_dataset`` reads, a ``save_to_disk`` folder, or a parakit
            release (read with its scheme and documents, as ``parakit.read`` reads it).
        config: the dataset's configuration (``mrpc`` of GLUE); wins over the spec's.
        split: one split (``train``, ``test[:100]``); default every split, each pair's
            ``split`` set to its split's name and its id prefixed with it (``train-0``).
        columns: parakit field -> column, as for CSV (``sentence1``/``sentence2``/``label``
            are found without one).
        scheme: the label scheme (default binary; a parakit dataset keeps its own).
        label_map: rewrite raw labels before validation.
        revision: a Hub revision (branch, tag or commit).
        name, lang: corpus name (default: the id, config and split) and language.

    Raises:
        DataFormatError: E150 the dataset cannot be loaded (unknown id, config or split,
            offline and not cached), with the reason; E106 no text columns (map them);
            E138 a document of two splits with two texts.
    """
    source, spec_config, spec_split = parse_hf_spec(path)
    config = config or spec_config
    split = split or spec_split
    if config in (None, "pairs") and not columns and (Path(source) / "parakit.json").is_file():
        return _release_split(source, split)  # a parakit release: its scheme and documents
    data = _load(source, config, split, revision)
    title = name or ":".join(x for x in (source.rstrip("/").rsplit("/", 1)[-1], config, split) if x)
    parts = dict(data) if hasattr(data, "keys") else {None: data}
    sets = []
    documents: dict[str, Document] = {}  # of every split (each description carries its own)
    for part, dataset in parts.items():
        description = getattr(dataset.info, "description", "") or ""
        if description.startswith('{"parakit"') and not columns:
            pairs = PairSet.from_columns(dataset, description, scheme)
            if part is not None:
                pairs = pairs.derive(
                    [p.replace(id=f"{part}-{p.id}", split=p.split or part) for p in pairs]
                )
        else:
            pairs = pairs_from_rows(
                dataset,
                list(dataset.column_names),
                path=f"{path}" + (f"@{part}" if part else ""),
                columns=columns,
                scheme=scheme or "binary",
                label_map=label_map,
                id_prefix=f"{part}-" if part is not None else "",
            )
            if part is not None:
                pairs = pairs.derive([p.replace(split=p.split or part) for p in pairs])
        for doc in pairs.documents.values():
            if documents.setdefault(doc.id, doc).text != doc.text:
                raise DataFormatError(
                    Errors.E138_document_another_text.format(doc_id=doc.id, name=part),
                    path=str(path),
                )
        sets.append(pairs)
    first = sets[0]
    everything = [p for s in sets for p in s]
    if not everything:
        raise DataFormatError(Errors.E143_dataset_rows, path=str(path))
    return PairSet(
        everything,
        scheme=first.scheme,
        name=title if name or first.name is None else first.name,
        lang=lang or first.lang,
        documents=documents,
        metadata=first.metadata or None,
    )


__all__ = [
    "HF_PREFIX",
    "is_hf_spec",
    "pairs_from_rows",
    "parse_hf_spec",
    "read_hf_dataset",
    "read_parquet",
    "write_parquet",
]
