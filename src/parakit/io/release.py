"""A corpus release that ``datasets.load_dataset(folder)`` loads with no loading script.

Layout (written all-or-nothing by :func:`write_release`, read back by :func:`read_release`)::

    rel/
      README.md                  dataset card: YAML front matter (configs, dataset_info, language,
                                 license, task_categories, size_categories) and a body
      data/<split>.parquet       the pairs ("pairs" config, the default), one file per split
      documents/<split>.parquet  the documents their spans point into ("documents" config)
      parakit.json               the corpus header (scheme, name, lang, metadata) for the reader
      turku/                     optional: the Turku JSON files of the original release

The ``datasets`` loading scripts were dropped in ``datasets`` 4 (the upstream Turku loader broke
with them), so a release is plain Parquet plus a card: any ``datasets`` version, pandas, polars
or DuckDB reads it.

Example:
    >>> import tempfile
    >>> from parakit.schema import Pair, PairSet
    >>> ps = PairSet([Pair("a", "x", "y", label="1", split="train"),
    ...               Pair("b", "x", "z", label="0", split="test")])
    >>> folder = write_release(ps, tempfile.mkdtemp() + "/rel", license="cc-by-4.0")
    >>> read_release(folder) == ps
    True
"""

from __future__ import annotations

import inspect
import io
import json
import math
import re
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from parakit.errors import DataFormatError, Errors, require_extra
from parakit.io.atomic import atomic_files, check_output_folder
from parakit.io.hub import check_license
from parakit.labels import LabelScheme, scheme_from_spec
from parakit.schema import Document, Pair, PairSet

#: the file that marks a release folder and carries the corpus header
RELEASE_FILE = "parakit.json"
RELEASE_VERSION = 1
PAIRS_CONFIG = "pairs"
DOCUMENTS_CONFIG = "documents"
#: split names the Hub accepts (``datasets``: ``\w+(\.\w+)*``)
_SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")
#: the Hub's ``size_categories`` (``datasets/utils/resources/size_categories.json``) with the
#: upper bound of each; above the last, ``n>1T``
_SIZES = (
    (10**3, "n<1K"),
    (10**4, "1K<n<10K"),
    (10**5, "10K<n<100K"),
    (10**6, "100K<n<1M"),
    (10**7, "1M<n<10M"),
    (10**8, "10M<n<100M"),
    (10**9, "100M<n<1B"),
    (10**10, "1B<n<10B"),
    (10**11, "10B<n<100B"),
    (10**12, "100B<n<1T"),
)
_SPLIT_ORDER = ("train", "validation", "dev", "test")


def is_flat(scheme: LabelScheme) -> bool:
    """Whether every label of ``scheme`` is one plain class (binary, graded, Japanese, votes,
    Likert): then the release stores it as a ``ClassLabel``. Turku labels combine a base label
    with flags (``4<is``) and stay strings."""
    return all(not scheme.parse(value).flags for value in scheme.values)


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` value for ``n`` examples.

    Example:
        >>> size_category(1081), size_category(999)
        ('1K<n<10K', 'n<1K')
    """
    return next((name for bound, name in _SIZES if n < bound), "n>1T")


def _split_order(names: Iterable[str]) -> list[str]:
    known = [s for s in _SPLIT_ORDER if s in names]
    return known + sorted(s for s in names if s not in known)


def binary_reading(scheme: LabelScheme, reading: str | None = None) -> str | None:
    """The reading behind a release's ``binary_label`` column: ``reading`` (default the
    scheme's own default) for a graded scheme; None for a binary scheme or one without a
    binary reading (Likert), which get no such column.

    Raises:
        DataFormatError: E137 a reading the scheme does not have.

    Example:
        >>> from parakit.labels import get_scheme
        >>> binary_reading(get_scheme("turku")), binary_reading(get_scheme("binary"))
        ('loose', None)
    """
    readings = scheme.readings()
    if scheme.name == "binary" or not readings:
        if reading is not None and not readings:
            raise DataFormatError(
                Errors.E137_label_scheme_binary.format(scheme_name=scheme.name), field="label"
            )
        return None
    name = reading or scheme.default_reading
    if name not in readings:
        name = reading or next(iter(readings))
    if name not in readings:
        raise DataFormatError(
            Errors.E137_unknown_binary_reading.format(
                name=name, scheme_name=scheme.name, readings=", ".join(sorted(readings))
            ),
            field="label",
        )
    return name


def _features(scheme: LabelScheme, binary: str | None = None) -> tuple[Any, Any]:
    """The ``datasets`` features of the pairs (with ``binary_label`` when ``binary`` names a
    reading) and of the documents."""
    import datasets

    span = {
        "doc": datasets.Value("string"),
        "begin": datasets.Value("int64"),
        "end": datasets.Value("int64"),
    }
    label = (
        datasets.ClassLabel(names=list(scheme.values))
        if is_flat(scheme)
        else datasets.Value("string")
    )
    listed = getattr(datasets, "List", None) or datasets.Sequence  # List from datasets 4
    pairs = datasets.Features(
        {
            "id": datasets.Value("string"),
            "text1": datasets.Value("string"),
            "text2": datasets.Value("string"),
            "label": label,
            **({"binary_label": datasets.Value("int8")} if binary else {}),
            "span1": span,
            "span2": dict(span),
            "group": datasets.Value("string"),
            "fold": datasets.Value("int32"),
            "time": datasets.Value("string"),
            "source": datasets.Value("string"),
            "rewrites": listed(listed(datasets.Value("string"))),
            # judgments and metadata vary in shape from pair to pair: JSON text keeps them exact
            "judgments": datasets.Value("string"),
            "metadata": datasets.Value("string"),
        }
    )
    documents = datasets.Features(
        {
            "id": datasets.Value("string"),
            "text": datasets.Value("string"),
            "metadata": datasets.Value("string"),
        }
    )
    return pairs, documents


def _pair_row(pair: Pair, scheme: LabelScheme, binary: str | None = None) -> dict[str, Any]:
    extra = {"binary_label": scheme.to_binary(pair.label, binary)} if binary else {}
    return {
        **extra,
        "id": pair.id,
        "text1": pair.text1,
        "text2": pair.text2,
        "label": pair.label,
        "span1": pair.span1.to_dict() if pair.span1 else None,
        "span2": pair.span2.to_dict() if pair.span2 else None,
        "group": pair.group,
        "fold": pair.fold,
        "time": pair.time,
        "source": pair.source,
        "rewrites": [list(r) for r in pair.rewrites],
        "judgments": json.dumps([j.to_dict() for j in pair.judgments], ensure_ascii=False),
        "metadata": json.dumps(pair.metadata, ensure_ascii=False),
    }


def _parquet(rows: list[dict[str, Any]], features: Any) -> tuple[bytes, int]:
    """Parquet bytes of ``rows`` (the ``datasets`` features travel in the schema) and the
    in-memory size ``datasets`` reports as ``num_bytes``."""
    import datasets
    import pyarrow.parquet as pq

    columns = {name: [row[name] for row in rows] for name in features}
    table = datasets.Dataset.from_dict(columns, features=features).data.table
    buffer = io.BytesIO()
    pq.write_table(table, buffer)  # the schema carries the features (ClassLabel names)
    return buffer.getvalue(), int(table.nbytes)


def _check(pairs: PairSet, folder: Path) -> list[str]:
    """Refuse what a release cannot hold; returns the split names in release order."""
    for index, pair in enumerate(pairs, start=1):
        error = partial(DataFormatError, path=folder, line=index, unit="record")
        if pair.label is None:
            raise error(Errors.E130_pair_label_release.format(pair_id=pair.id), field="label")
        if pair.split is None or not _SPLIT_NAME.match(pair.split):
            raise error(
                Errors.E131_pair_split_every.format(pair_id=pair.id, pair_split=pair.split),
                field="split",
            )
        for side, span in ((1, pair.span1), (2, pair.span2)):
            if span is not None and span.doc_id not in pairs.documents:
                raise error(
                    Errors.E132_pair_span_names.format(
                        pair_id=pair.id, side=side, span_doc_id=span.doc_id
                    ),
                    field=f"span{side}",
                )
        try:  # written as JSON text: refuse what JSON cannot hold before writing anything
            json.dumps([pair.metadata, [j.to_dict() for j in pair.judgments]])
        except (TypeError, ValueError, RecursionError) as err:
            raise error(Errors.E120_value_written_json.format(err=str(err)[:200])) from None
    try:
        json.dumps([pairs.header(), [d.to_dict() for d in pairs.documents.values()]])
    except (TypeError, ValueError, RecursionError) as err:
        raise DataFormatError(
            Errors.E120_value_written_json.format(err=str(err)[:200]), path=folder
        ) from None
    return _split_order({str(p.split) for p in pairs})  # every pair has one (checked above)


def join_splits(sets: Mapping[str, PairSet]) -> PairSet:
    """One pair set of official split files, each pair in the split its file names (the
    corpus's own train/dev/test, kept as they are: ``parakit release --split NAME=FILE``).

    Ids repeated across files (each file numbering from 0) are prefixed with the split name
    (``train-0``); a document in several files must have the same text in each.

    Raises:
        DataFormatError: E131 a split name that is not letters, digits and underscores, E138
            files of different label schemes, or one document with two texts.

    Example:
        >>> a = PairSet([Pair("0", "x", "y", label="1")])
        >>> b = PairSet([Pair("0", "x", "z", label="0")])
        >>> [(p.id, p.split) for p in join_splits({"train": a, "test": b})]
        [('train-0', 'train'), ('test-0', 'test')]
    """
    if not sets:
        raise DataFormatError(Errors.E131_split_files_given)
    for name in sets:
        if not _SPLIT_NAME.match(name):
            raise DataFormatError(Errors.E131_split_name_use.format(name=name), field="split")
    first = next(iter(sets.values()))
    for name, part in sets.items():
        if part.scheme.spec() != first.scheme.spec():
            raise DataFormatError(
                Errors.E138_split_label_scheme.format(
                    name=name,
                    part_scheme_name=part.scheme.name,
                    first_scheme_name=first.scheme.name,
                ),
                field="label",
            )
    seen: Counter[str] = Counter(p.id for part in sets.values() for p in part)
    prefix = any(count > 1 for count in seen.values())
    documents: dict[str, Document] = {}
    pairs: list[Pair] = []
    for name, part in sets.items():
        for doc in part.documents.values():
            if documents.setdefault(doc.id, doc).text != doc.text:
                raise DataFormatError(
                    Errors.E138_document_another_text.format(doc_id=doc.id, name=name),
                    field="documents",
                )
        pairs += [p.replace(id=f"{name}-{p.id}" if prefix else p.id, split=name) for p in part]
    langs = {part.lang for part in sets.values() if part.lang}
    return PairSet(
        pairs,
        scheme=first.scheme,
        documents=list(documents.values()),
        name=first.name,
        lang=first.lang if len(langs) <= 1 else ",".join(sorted(langs)),
        metadata=first.metadata or None,
    )


def prepare_release(
    pairs: PairSet,
    *,
    judgments: bool = False,
    drop_labels: Sequence[str] = (),
    lang: str | None = None,
    resplit: bool = False,
    ratios: Sequence[float] = (80, 10, 10),
    names: Sequence[str] = ("train", "validation", "test"),
    stratify: bool | str = False,
    seed: int = 0,
) -> PairSet:
    """The pairs as they are released: individual judgments dropped unless ``judgments``,
    the base labels ``drop_labels`` left out (as the Turku release drops ``1`` and ``x``),
    unreferenced documents pruned, ``lang`` set, and split (``ratios`` over ``names``,
    documents and groups kept whole, ``stratify`` as :func:`parakit.split.random_split`, which
    also refuses ratios that do not match the names) when a pair has no split or ``resplit``;
    official splits are kept otherwise.

    Example:
        >>> pairs = PairSet([Pair(str(i), f"a{i}", f"b{i}", label="4") for i in range(10)],
        ...                 scheme="turku")
        >>> released = prepare_release(pairs, ratios=(8, 1, 1), seed=0)
        >>> sorted({p.split for p in released})
        ['test', 'train', 'validation']
    """
    from parakit.split import linked_groups, random_split

    if not judgments:
        pairs = pairs.map(lambda p: p.replace(judgments=()))
    if drop_labels:
        pairs = pairs.drop_labels(drop_labels)
    pairs = pairs.prune_documents()
    if lang:
        pairs.lang = lang
    if resplit or any(p.split is None for p in pairs):
        shares = [x / sum(ratios) for x in ratios]
        pairs = random_split(
            pairs, shares, list(names), group_by=linked_groups(pairs), stratify=stratify, seed=seed
        )
    return pairs


def document_splits(pairs: PairSet) -> dict[str, str]:
    """The split of every document (the split of the pairs pointing into it; documents no pair
    points into go to the first split).

    Raises:
        DataFormatError: E133 when a document's statements lie in two splits.
    """
    found: dict[str, str] = {}
    for pair in pairs:
        for span in (pair.span1, pair.span2):
            if span is None:
                continue
            seen = found.setdefault(span.doc_id, str(pair.split))
            if seen != pair.split:
                raise DataFormatError(
                    Errors.E133_document_statements_splits.format(
                        span_doc_id=span.doc_id, seen=seen, pair_split=pair.split, pair_id=pair.id
                    ),
                    field="split",
                )
    first = (_split_order({str(p.split) for p in pairs}) or ["train"])[0]
    return {doc: found.get(doc, first) for doc in pairs.documents}


def _fmt(value: float | None) -> str:
    """A figure of the card: three decimals, ``n/a`` when missing or NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.3f}"


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def card_body(
    pairs: PairSet,
    splits: list[str],
    *,
    pretty_name: str,
    license: str,
    agreement: Mapping[str, float] | None = None,
    candidates: str | None = None,
    citation: str | None = None,
    binary: str | None = None,
) -> str:
    """The Markdown body of the dataset card (what a reader of the papers looks for);
    ``binary``: the reading behind the ``binary_label`` column, if the release has one."""
    by_split = pairs.by_split()
    counts = {s: by_split[s].label_counts() for s in splits}
    labels = [v for v in pairs.scheme.values if any(v in c for c in counts.values())]
    readings = pairs.scheme.readings()
    out = [f"# {pretty_name}", ""]
    out.append(
        f"{len(pairs):,} labelled statement pairs"
        + (f" in `{pairs.lang}`" if pairs.lang else "")
        + f" with the {len(pairs.documents):,} documents their spans point into, "
        f"released with parakit under `{license}`."
    )
    out += ["", "## Loading", "", "```python", "from datasets import load_dataset", ""]
    out.append('pairs = load_dataset("REPO_OR_FOLDER")               # ' + ", ".join(splits))
    if pairs.documents:
        out.append(f'documents = load_dataset("REPO_OR_FOLDER", "{DOCUMENTS_CONFIG}")')
    out += ["```", ""]
    out.append(
        "`span1`/`span2` are character offsets `[begin, end)` into the document `doc` of the "
        "`documents` config (`text[begin:end]`). `group` keeps pairs together in splits. "
        "`judgments` and `metadata` are JSON text. `parakit.read(FOLDER)` (or `parakit convert "
        "FOLDER -o out.jsonl`) gives the corpus back as a parakit pair set."
    )
    out += ["", "## Label scheme", ""]
    doc = inspect.getdoc(type(pairs.scheme)) or pairs.scheme.name
    out.append(f"Scheme `{pairs.scheme.name}` (spec `{json.dumps(pairs.scheme.spec())}`):")
    # the scheme's docstring is the one description of its labels (reST -> Markdown quote)
    quoted = [line.strip().replace("``", "`") for line in doc.splitlines()]
    out += ["", *("> " + line if line else ">" for line in quoted), ""]
    if is_flat(pairs.scheme):
        out.append(
            "`label` is a `ClassLabel` with names "
            + ", ".join(f"`{v}`" for v in pairs.scheme.values)
            + " (in this order)."
        )
    else:
        out.append("`label` is the canonical label string of the scheme (e.g. `4<is`).")
    if readings:
        out.append("Binary readings: " + ", ".join(f"`{r}`" for r in readings) + ".")
    if binary:
        out += [
            "",
            f"`binary_label` is the `{binary}` reading of `label`: 1 paraphrase, 0 not a "
            "paraphrase, empty (null) where the reading leaves the pair undecided. Use it to "
            "train or evaluate binary classifiers; `label` keeps the full annotation.",
        ]
    out += ["", "## Label distribution", ""]
    rows = [[f"`{label}`", *(counts[s].get(label, 0) for s in splits)] for label in labels]
    rows.append(["**total**", *(sum(counts[s].values()) for s in splits)])
    out.append(_table(["label", *splits], rows))
    if readings:
        reading = binary or binary_reading(pairs.scheme) or pairs.scheme.default_reading
        shares = []
        for s in splits:
            values = [v for v in by_split[s].binary_labels(reading) if v is not None]
            shares.append(f"{100 * sum(values) / len(values):.1f}%" if values else "n/a")
        out += [
            "",
            f"Paraphrases under the `{reading}` reading: "
            + ", ".join(f"{s} {share}" for s, share in zip(splits, shares, strict=True))
            + ".",
        ]
    docs_per_split = Counter(document_splits(pairs).values())
    out += ["", "## Splits", ""]
    out.append(
        _table(
            ["split", "pairs", "documents", "groups"],
            [
                [
                    s,
                    len(by_split[s]),
                    docs_per_split.get(s, 0),
                    len({p.group for p in by_split[s] if p.group is not None}),
                ]
                for s in splits
            ],
        )
    )
    out += [
        "",
        "No document and no group has pairs in two splits (the release policy of parakit: "
        "pairs linked by a group or a shared document stay together).",
    ]
    out += ["", "## Annotation agreement", ""]
    if agreement:
        out.append(
            "Measured on the double-annotated subset: accuracy and Cohen's κ of individual "
            "judgments against the consensus label, pairwise and Fleiss' κ, Krippendorff's α "
            "(nominal), at each label level."
        )
        out.append("")
        levels: dict[str, dict[str, float]] = {}
        for key, value in agreement.items():
            level, _, metric = key.partition("_")
            levels.setdefault(level, {})[metric] = value
        metrics = sorted({m for values in levels.values() for m in values})
        out.append(
            _table(
                ["level", *metrics],
                [[level, *(_fmt(v.get(m)) for m in metrics)] for level, v in levels.items()],
            )
        )
    else:
        out.append("No double annotation was recorded with this release.")
    out += ["", "## How the candidates were made", ""]
    sources = Counter(p.source for p in pairs if p.source)
    if candidates:
        out.append(candidates.strip())
        out.append("")
    if sources:
        out.append(
            "Sources of the pairs: "
            + ", ".join(f"`{s}` {n:,}" for s, n in sources.most_common())
            + "."
        )
    elif not candidates:
        out.append("Not recorded.")
    out += ["", "## Citation", "", "```bibtex"]
    if citation:
        out.append(citation.strip())
    else:
        key = re.sub(r"\W+", "_", pretty_name).strip("_").lower() or "corpus"
        out += [
            f"@misc{{{key},",
            f"  title = {{{pretty_name}}},",
            "  note = {Released with parakit},",
            "}",
        ]
    out += ["```", ""]
    return "\n".join(out)


def write_release(
    pairs: PairSet,
    folder: str | Path,
    *,
    license: str,
    pretty_name: str | None = None,
    agreement: Mapping[str, float] | None = None,
    candidates: str | None = None,
    citation: str | None = None,
    turku: bool = False,
    reading: str | None = None,
) -> Path:
    """Write ``pairs`` (every pair labelled and in a split) as a release folder.

    Args:
        pairs: the corpus; splits come from ``Pair.split`` (assign them with
            :func:`parakit.split.random_split` and ``group_by=``
            :func:`parakit.split.linked_groups` so documents never cross splits).
        folder: the release folder (created; files of an earlier release are replaced, its
            stale split files and ``turku/`` removed; a non-empty folder of another kind is
            refused).
        license: a Hub license id (``cc-by-sa-4.0``, ``cc-by-4.0``, ``mit``...).
        pretty_name: the card's title (default: the set's name).
        agreement: ``{"<level>_<metric>": value}`` as the annotation store's agreement
            report returns it (:func:`parakit.annotate.agreement.agreement_report`).
        candidates: how the candidates were made (a paragraph of the card).
        citation: a BibTeX entry for the card (a placeholder entry when omitted).
        turku: also write the Turku JSON files of the original release under ``turku/``
            (Turku labels only).
        reading: the binary reading of a graded scheme (Turku, graded, votes, Japanese) put
            beside ``label`` as ``binary_label`` (default: the scheme's default reading); the
            card states it. Binary and Likert labels get no such column.

    Returns:
        the folder.

    Raises:
        DataFormatError: E130 unlabelled pair, E131 missing or bad split name, E132 a span
            into a document the set does not hold, E133 a document in two splits, E134 a
            language code the Hub does not know; E137 a reading the scheme does not have.
        MissingExtraError: E090 ``datasets`` or ``huggingface_hub`` missing.
        WriteError: E142 a licence id the Hub does not know; E141 a non-empty folder that is
            not a release.
    """
    datasets = require_extra(
        "datasets", "huggingface_hub", extra="datasets", needed_for="a release"
    )
    from huggingface_hub import DatasetCard, DatasetCardData

    target = Path(folder)
    check_license(license, target)
    # a release into a model folder replaced its card and left the model beside the corpus
    check_output_folder(target, is_release, "a parakit release folder")
    splits = _check(pairs, target)
    doc_split = document_splits(pairs)
    # a multilingual set names its languages with commas ("en,fi,ja")
    languages = [code.strip() for code in (pairs.lang or "").split(",") if code.strip()]
    unknown = unknown_languages(pairs.lang or "")
    if unknown:
        raise DataFormatError(
            language_message(unknown[0]) + " (CLI: --lang; library: PairSet.lang)",
            path=target,
            field="lang",
            code="E134",
        )
    binary = binary_reading(pairs.scheme, reading)
    pair_features, doc_features = _features(pairs.scheme, binary)
    by_split = pairs.by_split()
    files: dict[str, bytes] = {}
    infos: dict[str, datasets.DatasetInfo] = {}
    configs: dict[str, dict[str, Any]] = {}
    for config, features, rows_of in (
        (
            PAIRS_CONFIG,
            pair_features,
            lambda s: [_pair_row(p, pairs.scheme, binary) for p in by_split[s]],
        ),
        (
            DOCUMENTS_CONFIG,
            doc_features,
            lambda s: [
                {
                    "id": d.id,
                    "text": d.text,
                    "metadata": json.dumps(d.metadata, ensure_ascii=False),
                }
                for d in pairs.documents.values()
                if doc_split[d.id] == s
            ],
        ),
    ):
        split_dict = datasets.SplitDict()
        data_files = []
        for split in splits:
            rows = rows_of(split)
            if not rows:  # a split without documents (datasets cannot read 0-row Parquet)
                continue
            data, nbytes = _parquet(rows, features)
            path = f"{'data' if config == PAIRS_CONFIG else config}/{split}.parquet"
            files[path] = data
            data_files.append({"split": split, "path": path})
            split_dict.add(datasets.SplitInfo(name=split, num_bytes=nbytes, num_examples=len(rows)))
        if not data_files:  # no document at all: no documents config
            continue
        infos[config] = datasets.DatasetInfo(
            features=features,
            splits=split_dict,
            download_size=sum(len(files[f["path"]]) for f in data_files),
            dataset_size=sum(s.num_bytes for s in split_dict.values()),
        )
        configs[config] = {"data_files": data_files}
    configs[PAIRS_CONFIG]["default"] = True
    name = pretty_name or pairs.name or "paraphrase corpus"
    card_data = DatasetCardData(
        language=languages or None,
        license=license,
        pretty_name=name,
        task_categories=["text-classification", "sentence-similarity"],
        task_ids=["semantic-similarity-classification"],
        size_categories=[size_category(len(pairs))],
        tags=["paraphrase", "parakit"],
    )
    datasets.utils.metadata.MetadataConfigs(configs).to_dataset_card_data(card_data)
    datasets.info.DatasetInfosDict(infos).to_dataset_card_data(card_data)
    body = card_body(
        pairs,
        splits,
        pretty_name=name,
        license=license,
        agreement=agreement,
        candidates=candidates,
        citation=citation,
        binary=binary,
    )
    card = DatasetCard(f"---\n{card_data.to_yaml()}\n---\n\n{body}")
    files["README.md"] = str(card).encode("utf-8")
    header = {
        "parakit_release": RELEASE_VERSION,
        "header": pairs.header(),
        "label_names": list(pairs.scheme.values) if is_flat(pairs.scheme) else None,
        "splits": splits,
        "document_splits": [
            f["split"] for f in configs.get(DOCUMENTS_CONFIG, {}).get("data_files", [])
        ],
        "license": license,
        "binary_reading": binary,
    }
    original = [p.id for p in pairs]
    if original != [p.id for split in splits for p in by_split[split]]:
        header["order"] = original  # the reader gives the pairs back in the input's order
    files[RELEASE_FILE] = json.dumps(header, ensure_ascii=False, indent=2).encode("utf-8")
    _remove_stale(target, files)
    with atomic_files([target / relative for relative in files], mode="wb") as handles:
        for handle, data in zip(handles, files.values(), strict=True):
            handle.write(data)
    if turku:
        _write_turku_files(pairs, target / "turku", splits)
    return target


def _remove_stale(target: Path, files: Mapping[str, bytes]) -> None:
    """Parquet files of an earlier release into the same folder whose split is gone (they would
    not be loaded through the card, but ``read_release`` and a glob would see them), and its
    ``turku/`` files (rewritten whole with ``turku``, else of the earlier release only)."""
    for sub in ("data", DOCUMENTS_CONFIG):
        for old in (target / sub).glob("*.parquet") if (target / sub).is_dir() else ():
            if f"{sub}/{old.name}" not in files:
                old.unlink()
    if (target / "turku").is_dir():
        shutil.rmtree(target / "turku")


def _write_turku_files(pairs: PairSet, folder: Path, splits: list[str]) -> None:
    """``<split>.json`` per split (``dev`` for validation, as upstream) and one texts file
    with the documents of every split (each write keeps the documents the files before it
    point into); a language other than Finnish prefixes the names (``sv-test.json``,
    ``sv-texts.json.gz``) so :func:`parakit.io.turku.read_turku` takes the language from the
    name."""
    from parakit.io.turku import write_turku

    single = pairs.lang is not None and "," not in pairs.lang
    prefix = f"{pairs.lang}-" if single and pairs.lang != "fi" else ""
    texts = folder / f"{prefix}texts.json.gz"
    by_split = pairs.by_split()
    for split in splits:
        name = "dev" if split == "validation" else split
        write_turku(by_split[split], folder / f"{prefix}{name}.json", texts=texts)


def _hub_languages() -> dict[str, str]:
    """The Hub's language codes and their names (the resource ``datasets`` ships), or {}."""
    try:
        import datasets
    except ImportError:
        return {}
    path = Path(datasets.__file__).parent / "utils" / "resources" / "languages.json"
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except OSError:  # pragma: no cover - the resource ships with datasets
        return {}


def unknown_languages(lang: str) -> list[str]:
    """The codes of ``lang`` (``en`` or ``en,fi,ja``) that are not language codes the Hub
    knows (none when ``datasets`` is not installed to tell)."""
    known = _hub_languages()
    return [c.strip() for c in lang.split(",") if c.strip() and known and c.strip() not in known]


def language_message(code: str) -> str:
    """Why ``code`` is refused, with the code of a language named in full (``english`` → en)."""
    names = {name.lower(): key for key, name in _hub_languages().items() if len(key) <= 3}
    hint = f" ({code!r} is {names[code.lower()]!r})" if code.lower() in names else ""
    return (
        f"language {code!r} is not an ISO 639 code the Hub knows; give a code such as en, fi "
        f"or sv (several: en,fi){hint}"
    )


def is_release(folder: str | Path) -> bool:
    """Whether ``folder`` is a release written by :func:`write_release`."""
    return (Path(folder) / RELEASE_FILE).is_file()


def read_release(folder: str | Path) -> PairSet:
    """Read a release folder back into the pair set it was written from, in its order
    (``Pair.split`` is the split the release put the pair in).

    Raises:
        DataFormatError: E135 not a release folder or a damaged one (names the file and field).
    """
    root = Path(folder)
    meta_path = root / RELEASE_FILE
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        header = meta["header"]
        splits = list(meta["splits"])
    except FileNotFoundError:
        raise DataFormatError(
            Errors.E135_parakit_release_folder.format(RELEASE_FILE=RELEASE_FILE), path=root
        ) from None
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise DataFormatError(
            Errors.E135_unreadable_release_description.format(err=err), path=meta_path
        ) from None
    names = meta.get("label_names")
    documents: list[Document] = []
    pairs: list[Pair] = []
    for split in splits:
        doc_path = root / DOCUMENTS_CONFIG / f"{split}.parquet"
        doc_rows = _rows(doc_path) if split in meta.get("document_splits", splits) else []
        for index, row in enumerate(doc_rows, start=1):
            about = _json(row["metadata"], doc_path, index, "metadata")
            documents.append(Document(row["id"], row["text"], about))
        pair_path = root / "data" / f"{split}.parquet"
        for index, row in enumerate(_rows(pair_path), start=1):
            label = row["label"]
            if names is not None and label is not None:
                label = names[label]
            # a row holds Pair.to_dict's fields, judgments and metadata as JSON text
            pairs.append(
                Pair.from_dict(
                    {
                        **row,
                        "label": label,
                        "split": split,
                        "judgments": _json(row["judgments"], pair_path, index, "judgments"),
                        "metadata": _json(row["metadata"], pair_path, index, "metadata"),
                    }
                )
            )
    order = meta.get("order")
    if order is not None:
        position = {pair_id: i for i, pair_id in enumerate(order)}
        if len(position) != len(pairs) or any(p.id not in position for p in pairs):
            raise DataFormatError(Errors.E135_pair_order_does, path=meta_path, field="order")
        pairs.sort(key=lambda p: position[p.id])
    return PairSet(
        pairs,
        scheme=scheme_from_spec(header.get("scheme", "binary")),
        documents=documents,
        name=header.get("name"),
        lang=header.get("lang"),
        metadata=header.get("metadata"),
    )


def _rows(path: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path).to_pylist()
    except FileNotFoundError:
        raise DataFormatError(Errors.E135_missing_split_file, path=path) from None
    except Exception as err:  # pyarrow raises ArrowInvalid and friends
        raise DataFormatError(Errors.E135_unreadable_parquet.format(err=err), path=path) from None


def _json(text: str | None, path: Path, index: int, field: str) -> Any:
    if text is None:
        return [] if field == "judgments" else {}
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise DataFormatError(
            Errors.E135_json.format(err=err), path=path, line=index, field=field, unit="record"
        ) from None


__all__ = [
    "DOCUMENTS_CONFIG",
    "PAIRS_CONFIG",
    "RELEASE_FILE",
    "binary_reading",
    "card_body",
    "document_splits",
    "is_flat",
    "is_release",
    "join_splits",
    "read_release",
    "size_category",
    "write_release",
]
