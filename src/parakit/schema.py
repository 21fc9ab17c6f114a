"""The parakit data model: documents, spans, pairs, judgments and pair sets.

Every stage of parakit reads and writes these types, so any stage can be entered on its own.
The objects are frozen dataclasses: derive changed copies with :meth:`Pair.replace`.

Example:
    >>> from parakit.schema import Pair, PairSet
    >>> ps = PairSet([Pair("p1", "A cat sat.", "The cat sat.", label="4")], scheme="turku")
    >>> len(ps), ps.binary_labels()
    (1, [1])
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from parakit.errors import DataFormatError, Errors, LabelError, SpanError, SplitError
from parakit.labels import LabelScheme, get_scheme, scheme_from_spec

if TYPE_CHECKING:  # pragma: no cover
    import datasets
    import pandas as pd


_NON_WORD = re.compile(r"\W+")


def span_match(covered: str, text: str) -> str:
    """How the text a span covers matches its statement: ``exact``, ``normalized`` (equal up
    to whitespace and punctuation: subtitle line breaks, ``...`` continuations) or ``differ``
    (the statement was edited after extraction, or the span points elsewhere).

    Example:
        >>> span_match("Hello,\\nthere.", "Hello there"), span_match("Hi.", "Bye.")
        ('normalized', 'differ')
    """
    if covered == text:
        return "exact"
    if _NON_WORD.sub("", covered) == _NON_WORD.sub("", text):
        return "normalized"
    return "differ"


@dataclass(frozen=True, slots=True)
class Document:
    """A source document: subtitles of an episode, a news article, a forum message...

    Attributes:
        id: unique document id.
        text: the full text; spans index into it.
        metadata: free metadata such as ``source``, ``title``, ``time``, ``group``, ``lang``.
    """

    id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "text": self.text}
        if self.metadata:
            out["metadata"] = self.metadata
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Document:
        return cls(id=str(data["id"]), text=data["text"], metadata=dict(data.get("metadata") or {}))


@dataclass(frozen=True, slots=True)
class Span:
    """Character offsets ``[begin, end)`` into a document (Python slice notation)."""

    doc_id: str
    begin: int
    end: int

    def __post_init__(self) -> None:
        if not (isinstance(self.begin, int) and isinstance(self.end, int)):
            raise SpanError(Errors.E101_span_offsets_must.format(begin=self.begin, end=self.end))
        if self.begin < 0 or self.end < self.begin:
            raise SpanError(
                Errors.E101_invalid_span_document.format(
                    begin=self.begin, end=self.end, doc_id=self.doc_id
                )
            )

    def text(self, document: Document | str) -> str:
        """The text the span covers; raises :class:`SpanError` if it lies outside the document."""
        text = document.text if isinstance(document, Document) else document
        if self.end > len(text):
            raise SpanError(
                Errors.E101_span_lies_outside_document.format(
                    begin=self.begin, end=self.end, doc_id=self.doc_id, n_text=len(text)
                )
            )
        return text[self.begin : self.end]

    def to_dict(self) -> dict[str, Any]:
        return {"doc": self.doc_id, "begin": self.begin, "end": self.end}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Span:
        return cls(str(data["doc"]), int(data["begin"]), int(data["end"]))


@dataclass(frozen=True, slots=True)
class Judgment:
    """One annotator's (or crowd worker's) judgment of a pair."""

    annotator: str
    label: str | None
    time: str | None = None
    gold: bool = False
    rewrite: tuple[str, str] | None = None
    unsure: bool = False
    comment: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"annotator": self.annotator, "label": self.label}
        for key in ("time", "comment"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.gold:
            out["gold"] = True
        if self.unsure:
            out["unsure"] = True
        if self.rewrite is not None:
            out["rewrite"] = list(self.rewrite)
        if self.metadata:
            out["metadata"] = self.metadata
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Judgment:
        rewrite = data.get("rewrite")
        return cls(
            annotator=str(data["annotator"]),
            label=None if data.get("label") is None else str(data["label"]),
            time=data.get("time"),
            gold=bool(data.get("gold", False)),
            rewrite=tuple(rewrite) if rewrite is not None else None,  # type: ignore[arg-type]
            unsure=bool(data.get("unsure", False)),
            comment=data.get("comment"),
            metadata=dict(data.get("metadata") or {}),
        )


@dataclass(frozen=True, slots=True)
class Pair:
    """A candidate or labelled statement pair.

    Attributes:
        id: unique pair id within its set.
        text1, text2: the two statements.
        label: canonical label string of the set's scheme, or None when unlabelled.
        span1, span2: where the statements come from in their documents (context), if known.
        group: pairs of one group stay in one split (Turku ``goeswith``, a MultiPIT topic...).
        split: ``train`` / ``dev`` / ``test`` ... if assigned.
        fold: 0–99 fold if assigned.
        time: ISO-8601 timestamp (used by time-ordered splits).
        source: where the pair comes from (``opus``, ``news-headings``, ``mt``...).
        rewrites: (rewrite1, rewrite2) pairs produced by annotators.
        judgments: the individual judgments the label was derived from.
        metadata: anything else (similarity scores, original ids, phenomena...).
    """

    id: str
    text1: str
    text2: str
    label: str | None = None
    span1: Span | None = None
    span2: Span | None = None
    group: str | None = None
    split: str | None = None
    fold: int | None = None
    time: str | None = None
    source: str | None = None
    rewrites: tuple[tuple[str, str], ...] = ()
    judgments: tuple[Judgment, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    def replace(self, **changes: Any) -> Pair:
        """A copy with ``changes`` applied."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict; empty optional fields are left out."""
        out: dict[str, Any] = {"id": self.id, "text1": self.text1, "text2": self.text2}
        if self.label is not None:
            out["label"] = self.label
        if self.span1 is not None:
            out["span1"] = self.span1.to_dict()
        if self.span2 is not None:
            out["span2"] = self.span2.to_dict()
        for key in ("group", "split", "fold", "time", "source"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.rewrites:
            out["rewrites"] = [list(r) for r in self.rewrites]
        if self.judgments:
            out["judgments"] = [j.to_dict() for j in self.judgments]
        if self.metadata:
            out["metadata"] = self.metadata
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Pair:
        """Inverse of :meth:`to_dict`."""
        span1 = data.get("span1")
        span2 = data.get("span2")
        fold = data.get("fold")
        label = data.get("label")
        return cls(
            id=str(data["id"]),
            text1=data["text1"],
            text2=data["text2"],
            label=None if label is None else str(label),
            span1=Span.from_dict(span1) if span1 else None,
            span2=Span.from_dict(span2) if span2 else None,
            group=None if data.get("group") is None else str(data["group"]),
            split=data.get("split"),
            fold=None if fold is None else int(fold),
            time=data.get("time"),
            source=data.get("source"),
            rewrites=tuple((r[0], r[1]) for r in data.get("rewrites") or ()),
            judgments=tuple(Judgment.from_dict(j) for j in data.get("judgments") or ()),
            metadata=dict(data.get("metadata") or {}),
        )


# Flat columns of a pair in tables (pandas, CSV, HF datasets); metadata keys become extra columns.
FLAT_COLUMNS = (
    "id",
    "text1",
    "text2",
    "label",
    "group",
    "split",
    "fold",
    "time",
    "source",
)
#: Nested fields of a pair, stored as JSON strings in :meth:`PairSet.to_columns`.
JSON_COLUMNS = ("span1", "span2", "rewrites", "judgments", "metadata")


def document_ids(pairs: Iterable[Pair]) -> set[str]:
    """The ids of the documents the spans of ``pairs`` point to."""
    return {s.doc_id for p in pairs for s in (p.span1, p.span2) if s is not None}


class PairSet(Sequence[Pair]):
    """An ordered collection of pairs with corpus-level information.

    Args:
        pairs: the pairs; ids must be unique.
        scheme: the label scheme (a name, a spec dict or a :class:`LabelScheme`); labels are
            validated and normalised against it.
        documents: documents that the pairs' spans point into, by id.
        name: corpus name.
        lang: language code(s) of the statements (``fi``, ``en``, ``ja``...).
        metadata: free corpus-level metadata (provenance, licence, reader settings...).
    """

    def __init__(
        self,
        pairs: Iterable[Pair] = (),
        *,
        scheme: str | dict[str, Any] | LabelScheme = "binary",
        documents: dict[str, Document] | Iterable[Document] | None = None,
        name: str | None = None,
        lang: str | None = None,
        metadata: dict[str, Any] | None = None,
        validate: bool = True,
    ) -> None:
        self.scheme: LabelScheme = (
            scheme_from_spec(scheme) if isinstance(scheme, dict) else get_scheme(scheme)
        )
        self.pairs: list[Pair] = list(pairs)
        if documents is None:
            self.documents: dict[str, Document] = {}
        elif isinstance(documents, dict):
            self.documents = dict(documents)
        else:
            self.documents = {d.id: d for d in documents}
        self.name = name
        self.lang = lang
        self.metadata: dict[str, Any] = dict(metadata or {})
        if validate:
            self.validate()

    # -- sequence protocol -------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.pairs)

    @overload
    def __getitem__(self, index: int) -> Pair: ...
    @overload
    def __getitem__(self, index: slice) -> PairSet: ...
    def __getitem__(self, index: int | slice) -> Pair | PairSet:
        if isinstance(index, slice):
            return self.derive(self.pairs[index])
        return self.pairs[index]

    def __iter__(self) -> Iterator[Pair]:
        return iter(self.pairs)

    def __repr__(self) -> str:
        return (
            f"PairSet(name={self.name!r}, pairs={len(self)}, scheme={self.scheme!r}, "
            f"documents={len(self.documents)})"
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, PairSet)
            and self.pairs == other.pairs
            and self.scheme == other.scheme
            and self.documents == other.documents
            and self.name == other.name
            and self.lang == other.lang
            and self.metadata == other.metadata
        )

    __hash__ = None  # type: ignore[assignment]

    # -- validation ----------------------------------------------------------------------------
    def validate(self) -> None:
        """Check unique ids and valid labels, normalising labels to the scheme's canonical form.

        Raises:
            LabelError: a pair's label is not valid in the scheme (names the pair id).
            DataFormatError: duplicate pair ids (``E102``; also a ``ValueError``).
        """
        seen: set[str] = set()
        normalised = []
        for pair in self.pairs:
            if pair.id in seen:
                raise DataFormatError(
                    Errors.E102_duplicate_pair_id.format(pair_id=pair.id, name=self.name)
                )
            seen.add(pair.id)
            if pair.label is not None:
                try:
                    canonical = self.scheme.normalize(pair.label)
                except LabelError as err:
                    raise LabelError(f"pair {pair.id!r}: {err.message}", code=err.code) from None
                if canonical != pair.label:
                    pair = pair.replace(label=canonical)
            normalised.append(pair)
        self.pairs = normalised

    def span_agreement(self) -> dict[str, int]:
        """Count how the spans match their statements (:func:`span_match`), the one report of
        every reader with document context (``metadata['span_check']``).

        Returns:
            ``exact``, ``normalized`` and ``differ`` spans, ``no_context``: pairs without any.

        Raises:
            SpanError: a span names an unknown document or lies outside it.
        """
        counts = {"exact": 0, "normalized": 0, "differ": 0, "no_context": 0}
        for pair in self.pairs:
            if pair.span1 is None and pair.span2 is None:
                counts["no_context"] += 1
            for _side, _span, text, covered in self.span_texts(pair):
                counts[span_match(covered, text)] += 1
        return counts

    def span_texts(self, pair: Pair) -> Iterator[tuple[int, Span, str, str]]:
        """``(side, span, statement, covered text)`` for each span of ``pair``."""
        for side, span, text in ((1, pair.span1, pair.text1), (2, pair.span2, pair.text2)):
            if span is None:
                continue
            doc = self.documents.get(span.doc_id)
            if doc is None:
                raise SpanError(
                    Errors.E101_pair_span_names.format(
                        pair_id=pair.id, side=side, span_doc_id=span.doc_id
                    )
                )
            try:
                covered = span.text(doc)
            except SpanError as err:
                raise SpanError(
                    Errors.E101_pair_span.format(
                        pair_id=pair.id, side=side, err_message=err.message
                    )
                ) from None
            yield side, span, text, covered

    def verify_spans(self) -> int:
        """Check that every span lies inside its document and covers exactly its statement.

        Returns:
            the number of spans checked.

        Raises:
            SpanError: naming the pair and the side that does not match.
        """
        checked = 0
        for pair in self.pairs:
            for side, span, text, covered in self.span_texts(pair):
                if covered != text:
                    raise SpanError(
                        Errors.E101_pair_span_document.format(
                            pair_id=pair.id,
                            side=side,
                            span_begin=span.begin,
                            span_end=span.end,
                            span_doc_id=span.doc_id,
                            covered_60=covered[:60],
                            text_60=text[:60],
                        )
                    )
                checked += 1
        return checked

    # -- derived views ------------------------------------------------------------------------
    def derive(self, pairs: Iterable[Pair], **changes: Any) -> PairSet:
        """A new set of ``pairs`` with this set's scheme, documents, name, language and
        metadata (``changes`` replace any of them); the pairs are not validated again."""
        kwargs: dict[str, Any] = {
            "scheme": self.scheme,
            "documents": self.documents,
            "name": self.name,
            "lang": self.lang,
            "metadata": self.metadata,
            **changes,
        }
        return PairSet(pairs, validate=False, **kwargs)

    def filter(self, predicate: Callable[[Pair], bool]) -> PairSet:
        """The pairs for which ``predicate`` is true, as a new set."""
        return self.derive(p for p in self.pairs if predicate(p))

    def drop_labels(self, bases: Iterable[str]) -> PairSet:
        """The pairs whose label's base is not in ``bases`` (a Turku label's ``1``-``4`` or
        ``x``, with its flags ignored; any other scheme's label itself), without the documents
        no kept span points to. Unlabelled pairs stay.

        Example:
            >>> pairs = PairSet([Pair("a", "x", "y", label="4<i"), Pair("b", "x", "z", label="x"),
            ...                  Pair("c", "y", "z", label="1")], scheme="turku")
            >>> [p.id for p in pairs.drop_labels(["1", "x"])]
            ['a']
        """
        dropped = set(bases)
        parse = self.scheme.parse
        kept = self.filter(lambda p: p.label is None or parse(p.label).base not in dropped)
        return kept.prune_documents()

    def prune_documents(self) -> PairSet:
        """This set without the documents that none of its spans points to."""
        used = document_ids(self.pairs)
        return self.derive(
            self.pairs, documents={k: v for k, v in self.documents.items() if k in used}
        )

    def sample(self, n: int, seed: int = 0) -> PairSet:
        """``n`` pairs drawn without replacement with ``seed``, kept in this set's order (a
        corpus is often ordered by topic, so the first ``n`` are not a sample), with the
        documents their spans point to.

        Raises:
            SplitError: ``n`` is not between 0 and the number of pairs (E400).

        Example:
            >>> pairs = PairSet([Pair(str(i), "a", "b") for i in range(10)])
            >>> [p.id for p in pairs.sample(3, seed=1)] == [p.id for p in pairs.sample(3, seed=1)]
            True
            >>> len(pairs.sample(3))
            3
        """
        import numpy as np

        if not 0 <= n <= len(self.pairs):
            raise SplitError(Errors.E400_sample_pairs_set.format(n=n, n_pairs=len(self.pairs)))
        rng = np.random.default_rng(seed)
        chosen = sorted(rng.choice(len(self.pairs), size=n, replace=False).tolist())
        return self.derive(self.pairs[i] for i in chosen).prune_documents()

    def map(self, function: Callable[[Pair], Pair]) -> PairSet:
        """A new set with ``function`` applied to every pair."""
        return self.derive(function(p) for p in self.pairs)

    def by_split(self) -> dict[str, PairSet]:
        """The pairs grouped by their ``split`` (pairs without one are under ``None``)."""
        groups: dict[Any, list[Pair]] = {}
        for pair in self.pairs:
            groups.setdefault(pair.split, []).append(pair)
        return {key: self.derive(value) for key, value in groups.items()}

    def binary_labels(self, reading: str | None = None) -> list[int | None]:
        """Each pair's binary reading (None for unlabelled or undecided pairs)."""
        return [
            None if p.label is None else self.scheme.to_binary(p.label, reading) for p in self.pairs
        ]

    def to_binary(self, reading: str | None = None, drop_undecided: bool = True) -> PairSet:
        """A binary-scheme copy of this set under ``reading``; undecided pairs are dropped.

        The original label is kept in ``metadata['original_label']``.
        """
        out = []
        for pair, value in zip(self.pairs, self.binary_labels(reading), strict=True):
            if value is None and drop_undecided:
                continue
            meta = dict(pair.metadata)
            if pair.label is not None:
                meta["original_label"] = pair.label
            out.append(pair.replace(label=None if value is None else str(value), metadata=meta))
        return self.derive(out, scheme=get_scheme("binary"))

    def label_counts(self) -> Counter[str | None]:
        """How many pairs carry each label."""
        return Counter(p.label for p in self.pairs)

    def texts(self) -> tuple[list[str], list[str]]:
        """The two statement columns."""
        return [p.text1 for p in self.pairs], [p.text2 for p in self.pairs]

    # -- conversions ---------------------------------------------------------------------------
    def header(self) -> dict[str, Any]:
        """Corpus-level fields written as the first line of canonical JSONL."""
        out: dict[str, Any] = {"scheme": self.scheme.spec()}
        if self.name is not None:
            out["name"] = self.name
        if self.lang is not None:
            out["lang"] = self.lang
        if self.metadata:
            out["metadata"] = self.metadata
        return out

    @classmethod
    def _from_parts(
        cls,
        pairs: list[Pair],
        header: dict[str, Any],
        documents: list[Document],
        scheme: str | dict[str, Any] | LabelScheme | None,
        overrides: dict[str, Any],
    ) -> PairSet:
        """A set from pairs plus the corpus header carried by a frame or a dataset."""
        options: dict[str, Any] = {
            "scheme": scheme or header.get("scheme", "binary"),
            "documents": documents,
            "name": header.get("name"),
            "lang": header.get("lang"),
            "metadata": header.get("metadata"),
            **overrides,
        }
        return cls(pairs, **options)

    def to_pandas(self) -> pd.DataFrame:
        """One row per pair: the flat columns, ``span1``/``span2``/``rewrites``/``judgments`` as
        objects, and one column per metadata key. Corpus fields go to ``DataFrame.attrs``."""
        import pandas as pd

        rows = []
        for pair in self.pairs:
            row = {key: getattr(pair, key) for key in FLAT_COLUMNS}
            row["span1"] = pair.span1.to_dict() if pair.span1 else None
            row["span2"] = pair.span2.to_dict() if pair.span2 else None
            row["rewrites"] = [list(r) for r in pair.rewrites]
            row["judgments"] = [j.to_dict() for j in pair.judgments]
            for key, value in pair.metadata.items():
                row[f"metadata.{key}"] = value
            rows.append(row)
        frame = pd.DataFrame(
            rows,
            columns=None if rows else [*FLAT_COLUMNS, "span1", "span2", "rewrites", "judgments"],
        )
        frame.attrs["parakit"] = self.header()
        frame.attrs["parakit_documents"] = [d.to_dict() for d in self.documents.values()]
        return frame

    @classmethod
    def from_pandas(
        cls,
        frame: pd.DataFrame,
        scheme: str | dict[str, Any] | LabelScheme | None = None,
        **kwargs: Any,
    ) -> PairSet:
        """Inverse of :meth:`to_pandas`; a plain frame needs at least ``text1`` and ``text2``
        (ids default to the row number)."""
        import math

        header = dict(frame.attrs.get("parakit") or {})
        documents = [Document.from_dict(d) for d in frame.attrs.get("parakit_documents") or []]

        def clean(value: Any) -> Any:
            """Plain Python values: NaN as None, and numpy's, at any depth (a frame read back
            from Parquet holds lists as arrays, also inside lists and dicts), as Python's."""
            if isinstance(value, float) and math.isnan(value):
                return None
            if isinstance(value, dict):
                return {k: clean(v) for k, v in value.items()}
            if isinstance(value, list | tuple):
                return [clean(v) for v in value]
            if hasattr(value, "tolist") and not isinstance(value, str):
                return clean(value.tolist())  # an array as a list, a scalar as a number
            return value

        pairs = []
        for index, record in enumerate(frame.to_dict(orient="records")):
            data: dict[str, Any] = {"metadata": {}}
            for key, value in record.items():
                value = clean(value)
                if key.startswith("metadata."):
                    if value is not None:
                        data["metadata"][key.removeprefix("metadata.")] = value
                else:
                    data[key] = value
            if data.get("id") is None:
                data["id"] = str(index)
            pairs.append(Pair.from_dict(data))
        return cls._from_parts(pairs, header, documents, scheme, kwargs)

    def to_columns(self) -> dict[str, list[Any]]:
        """The pairs as columns of equal length, the layout of :meth:`to_dataset` and of
        parakit's Parquet files: the flat fields, and ``span1``, ``span2``, ``rewrites``,
        ``judgments``, ``metadata`` as JSON strings (so every row has the same types)."""
        import json

        rows: dict[str, list[Any]] = {key: [] for key in (*FLAT_COLUMNS, *JSON_COLUMNS)}
        for pair in self.pairs:
            for key in FLAT_COLUMNS:
                rows[key].append(getattr(pair, key))
            rows["span1"].append(json.dumps(pair.span1.to_dict()) if pair.span1 else None)
            rows["span2"].append(json.dumps(pair.span2.to_dict()) if pair.span2 else None)
            rows["rewrites"].append(json.dumps([list(r) for r in pair.rewrites]))
            rows["judgments"].append(json.dumps([j.to_dict() for j in pair.judgments]))
            rows["metadata"].append(json.dumps(pair.metadata, ensure_ascii=False))
        return rows

    def description(self) -> str:
        """The corpus fields and documents as one JSON text (``info.description`` of
        :meth:`to_dataset`, the ``parakit`` key of a Parquet file's schema metadata)."""
        import json

        return json.dumps(
            {"parakit": self.header(), "documents": [d.to_dict() for d in self.documents.values()]},
            ensure_ascii=False,
        )

    def to_dataset(self) -> datasets.Dataset:
        """A Hugging Face :class:`datasets.Dataset`, one row per pair (nested fields as JSON
        strings so every row has the same features); corpus fields go to ``info.description``."""
        import datasets

        features = datasets.Features(
            {
                **{k: datasets.Value("string") for k in FLAT_COLUMNS if k != "fold"},
                "fold": datasets.Value("int32"),
                **{k: datasets.Value("string") for k in JSON_COLUMNS},
            }
        )
        info = datasets.DatasetInfo(description=self.description(), features=features)
        return datasets.Dataset.from_dict(self.to_columns(), features=features, info=info)

    @classmethod
    def from_columns(
        cls,
        rows: Iterable[dict[str, Any]],
        description: str = "",
        scheme: str | dict[str, Any] | LabelScheme | None = None,
        **kwargs: Any,
    ) -> PairSet:
        """Inverse of :meth:`to_columns` and :meth:`description`, row by row (``sentence1`` /
        ``sentence2`` are read as ``text1`` / ``text2``; a missing id is the row number)."""
        import json

        header: dict[str, Any] = {}
        documents: list[Document] = []
        if description.startswith("{"):
            with suppress(json.JSONDecodeError):
                info = json.loads(description)
                header = info.get("parakit", {})
                documents = [Document.from_dict(d) for d in info.get("documents", [])]
        rename = {"sentence1": "text1", "sentence2": "text2"}
        pairs = []
        for index, row in enumerate(rows):
            data: dict[str, Any] = {rename.get(k, k): v for k, v in row.items()}
            for key in JSON_COLUMNS:
                if isinstance(data.get(key), str):
                    data[key] = json.loads(data[key])
            if data.get("id") is None:
                data["id"] = str(index)
            pairs.append(Pair.from_dict(data))
        return cls._from_parts(pairs, header, documents, scheme, kwargs)

    @classmethod
    def from_dataset(
        cls,
        dataset: datasets.Dataset,
        scheme: str | dict[str, Any] | LabelScheme | None = None,
        **kwargs: Any,
    ) -> PairSet:
        """Inverse of :meth:`to_dataset`; a plain dataset needs ``text1`` and ``text2``
        columns (``sentence1``/``sentence2`` are accepted too)."""
        return cls.from_columns(dataset, dataset.info.description or "", scheme, **kwargs)
