"""What the annotation-tool formats (Label Studio, doccano, Prodigy) share.

Each tool keeps a record's own keys beside the texts it shows (Label Studio's ``data``,
Prodigy's ``meta``, doccano's extra columns). parakit puts a pair's own fields there
(:func:`pair_fields`) and reads them back with the canonical pair reader
(:func:`pair_from_fields`), so a pair goes out to a tool and comes back equal; keys a tool or a
user added become metadata. Judgments travel in the tool's own annotation shape (one per
annotator); a pair read without a label of its own gets the majority label of its judgments
(:func:`majority_label`; a tie stays unlabelled).

Error codes (see :mod:`parakit.errors`):

======  =====================================================================================
E151    a file that is not the tool's layout (not a list of Label Studio tasks, a doccano
        record without ``text``, a Prodigy line without the pair's texts)
E152    an annotation whose label cannot be read: no choice of the control, several choices
        for one pair, several choice controls and none named, an unknown Prodigy ``answer``
E153    one pair given twice with other texts (Prodigy lines of one input hash, doccano files
        of two annotators)
======  =====================================================================================
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parakit.errors import DataFormatError, Errors, LabelError, with_location
from parakit.io.jsonl import pair_from_record
from parakit.io.validate import Where
from parakit.labels import LabelScheme, get_scheme
from parakit.schema import Judgment, Pair, PairSet

logger = logging.getLogger(__name__)

#: Tried in this order when no scheme is given: the first that takes every label is used
#: (``graded`` labels also fit ``turku``: name it).
INFERRED_SCHEMES = ("binary", "turku", "likert", "japanese")


def pair_fields(pair: Pair) -> dict[str, Any]:
    """A pair's own fields for the tool's free-form place: id, label, group, split, fold,
    time, source, rewrites and metadata (texts, spans and judgments go elsewhere)."""
    out = pair.to_dict()
    for key in ("text1", "text2", "span1", "span2", "judgments"):
        out.pop(key, None)
    return out


def pair_from_fields(
    text1: Any,
    text2: Any,
    fields: dict[str, Any],
    where: Where,
    *,
    names: tuple[str, str] = ("text1", "text2"),
    default_id: str,
    allow_unsafe_text: bool = False,
) -> Pair:
    """A pair from its two texts and the fields :func:`pair_fields` wrote (or a tool's own
    keys, which become metadata). ``names`` are the texts' fields in the tool's record, for
    the error message."""
    for value, name in ((text1, names[0]), (text2, names[1])):
        if value is None:
            raise where.error("missing field (the text of the pair)", name)
        if not isinstance(value, str):
            raise where.error(f"expected a text, got {type(value).__name__}", name)
    record = {k: v for k, v in fields.items() if k not in ("text1", "text2", "judgments")}
    return pair_from_record(
        {**record, "text1": text1, "text2": text2},
        where,
        default_id=default_id,
        canonical=False,
        allow_unsafe_text=allow_unsafe_text,
    )


def majority_label(judgments: Iterable[Judgment]) -> str | None:
    """The label most judgments give; None when two labels tie or nobody judged."""
    counts = Counter(j.label for j in judgments if j.label is not None).most_common(2)
    if not counts or (len(counts) == 2 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


@dataclass
class Found:
    """A pair as read, with where its labels came from (to locate a label error)."""

    pair: Pair
    where: Where
    label_field: str
    #: where each judgment's label was read: (record, field)
    judgment_fields: Sequence[tuple[Where, str]] = field(default_factory=list)
    label_given: bool = False


def finish(
    found: list[Found], scheme: str | LabelScheme | None, path: str | Path, **info: Any
) -> PairSet:
    """The pair set: labels checked against ``scheme`` (inferred when None), pairs without a
    label of their own labelled by :func:`majority_label` of their judgments."""
    chosen = get_scheme(scheme) if scheme is not None else _infer(found, path)
    pairs = []
    for item in found:
        pair = item.pair
        judged = tuple(
            dataclasses.replace(j, label=_normalize(chosen, j.label, where, name))
            for j, (where, name) in zip(pair.judgments, item.judgment_fields, strict=True)
        )
        label = (
            _normalize(chosen, pair.label, item.where, item.label_field)
            if item.label_given
            else majority_label(judged)
        )
        pairs.append(pair.replace(label=label, judgments=judged))
    return PairSet(pairs, scheme=chosen, name=info.pop("name", Path(path).stem), **info)


def _normalize(scheme: LabelScheme, label: str | None, where: Where, name: str) -> str | None:
    if label is None:
        return None
    try:
        return scheme.normalize(label)
    except LabelError as err:
        raise with_location(
            err, path=where.path, line=where.line, field=name, unit=where.unit
        ) from None


def _infer(found: list[Found], path: str | Path) -> LabelScheme:
    labels = {j.label for f in found for j in f.pair.judgments if j.label is not None}
    labels |= {f.pair.label for f in found if f.label_given and f.pair.label is not None}
    for name in INFERRED_SCHEMES:
        scheme = get_scheme(name)
        if all(scheme.is_valid(label) for label in labels):
            return scheme
    shown = ", ".join(sorted(labels)[:10])
    raise DataFormatError(
        Errors.E201_labels_fit_none.format(
            shown=shown, inferred_schemes=", ".join(INFERRED_SCHEMES)
        ),
        path=path,
    )


def judgment_extras(judgment: Judgment, kept: tuple[str, ...]) -> list[str]:
    """The judgment's fields a format cannot hold (to warn about what it leaves out)."""
    lost = []
    for name in ("time", "gold", "unsure", "comment", "rewrite", "metadata"):
        value = getattr(judgment, name)
        if name not in kept and value not in (None, False, {}, ()):
            lost.append(name)
    return lost


def warn_lost(path: str | Path, fmt: str, lost: Counter[str]) -> None:
    """Say, once per write, which judgment fields the format left out."""
    if lost:
        said = ", ".join(f"{name} ({n} judgments)" for name, n in sorted(lost.items()))
        logger.warning("%s: the %s layout has no place for %s; left out", path, fmt, said)


def warn_documents(pairs: PairSet, path: str | Path, fmt: str) -> None:
    """Spans and documents are not written: the tools show the two texts."""
    spans = sum(p.span1 is not None or p.span2 is not None for p in pairs)
    if spans or pairs.documents:
        logger.warning(
            "%s: the %s layout shows the two texts only; the spans of %d pairs and %d "
            "documents are left out (canonical JSONL keeps them)",
            path,
            fmt,
            spans,
            len(pairs.documents),
        )


def json_line(record: dict[str, Any], path: str | Path, what: str) -> str:
    """One record as JSON text; a value JSON cannot hold back is E120."""
    try:
        return json.dumps(record, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as err:
        raise DataFormatError(
            Errors.E120_written_json.format(what=what, err=str(err)[:200]), path=path
        ) from None


def require_label(judgment: Judgment, pair: Pair, path: str | Path, fmt: str) -> str:
    """A judgment's label; a judgment without one has no shape in the tools (E120)."""
    if judgment.label is None:
        raise DataFormatError(
            Errors.E120_pair_judgment_label.format(
                pair_id=pair.id, judgment_annotator=judgment.annotator, fmt=fmt
            ),
            path=path,
        )
    return judgment.label
