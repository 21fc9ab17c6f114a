"""The validation layer every reader shares: types checked (never coerced), ids unique, texts
clean, spans inside known documents, header names unique; errors located and short.

Each check takes the location of the value (``path``, ``line``, ``field``, ``unit``) through a
:class:`Where` and raises a :class:`~parakit.errors.DataFormatError` that names it. Values are
quoted through :func:`quote`, so a 20 MB header never becomes a 20 MB message.

Error codes used here (see :mod:`parakit.errors`):

======  =====================================================================================
E101    a span outside its document or naming an unknown document
E102    a duplicate pair id (the error names the line of the second occurrence)
E105    JSON nested too deeply
E106    a value of the wrong type or form (``fold: 1.9``, ``"label": true``, ``fold: "1_0"``)
E115    a text with a NUL character or a lone surrogate (``allow_unsafe_text=True`` keeps them)
E116    a header with a repeated or empty column name
E117    a file cut inside its last record (a last row without line break, short of fields)
E118    a stray quote in a CSV/TSV file
E122    a duplicate document id
E140    a record joined by id to a pair whose texts it does not carry (predictions or scores
        made for another file)
======  =====================================================================================

Example:
    >>> w = Where("pairs.jsonl", 3, unit="line")
    >>> integer(7, w, "fold")
    7
    >>> try:
    ...     integer(True, w, "fold")
    ... except DataFormatError as err:
    ...     print(err)
    [E106] pairs.jsonl, line 3, field 'fold': expected an integer, got the boolean True
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parakit.errors import DataFormatError, Errors

#: Longest excerpt of the input an error message quotes.
QUOTE_LIMIT = 200
#: Deepest nesting of lists and objects accepted in JSON values (metadata, judgments...).
MAX_DEPTH = 64

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_INTEGER_TEXT = re.compile(r"-?[0-9]+")
_NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@dataclass(frozen=True)
class Where:
    """Where a value comes from: the file, the line or record number and its unit."""

    path: str | Path | None
    line: int | None = None
    unit: str = "line"

    def error(self, message: str, field: str | None = None, code: str = "E106") -> DataFormatError:
        """A located error (returned, not raised, so callers write ``raise where.error(...)``)."""
        return DataFormatError(
            message, path=self.path, line=self.line, field=field, code=code, unit=self.unit
        )

    def at(self, line: int | None) -> Where:
        """The same file, another line or record."""
        return Where(self.path, line, self.unit)


def quote(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)`` cut to at most ``limit`` characters (with a note of the full length)."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value):,} characters)"
    if isinstance(value, (list, dict, tuple)) and len(value) > 20:
        kind = type(value).__name__
        return f"a {kind} of {len(value):,} items"
    text = repr(value)
    if len(text) > limit:
        return f"{text[:limit]}... ({len(text):,} characters)"
    return text


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {value!r}"
    if isinstance(value, (int, float)):
        return f"the number {quote(value)}"
    if isinstance(value, str):
        return f"the text {quote(value)}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return quote(value)


def check_text_content(
    value: str, where: Where, field: str | None, allow_unsafe_text: bool = False
) -> str:
    """Refuse NUL characters and lone surrogates in a text (unless ``allow_unsafe_text``)."""
    if allow_unsafe_text:
        return value
    if "\x00" in value:
        raise where.error(
            f"the text contains a NUL character at position {value.index(chr(0))}: the file is "
            "probably binary or corrupt (pass allow_unsafe_text=True to keep such texts)",
            field,
            "E115",
        )
    match = _LONE_SURROGATE.search(value)
    if match:
        raise where.error(
            f"the text contains a lone surrogate {match.group()!r} at position {match.start()}, "
            "which no UTF encoding can write (pass allow_unsafe_text=True to keep it)",
            field,
            "E115",
        )
    return value


def text(value: Any, where: Where, field: str | None, *, allow_unsafe_text: bool = False) -> str:
    """A required text: a string (not a number, not null) without NUL or lone surrogates."""
    if not isinstance(value, str):
        raise where.error(f"expected a text, got {_kind(value)}", field)
    return check_text_content(value, where, field, allow_unsafe_text)


def optional_text(
    value: Any, where: Where, field: str | None, *, allow_unsafe_text: bool = False
) -> str | None:
    """A text or null."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise where.error(f"expected a text or null, got {_kind(value)}", field)
    return check_text_content(value, where, field, allow_unsafe_text)


def identifier(value: Any, where: Where, field: str | None) -> str:
    """An id: a text, or an integer (not a boolean, not a float) read as its decimal string."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise where.error(f"expected a text or an integer id, got {_kind(value)}", field)
    out = str(value)
    return check_text_content(out, where, field)


def integer(
    value: Any,
    where: Where,
    field: str | None,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    """A JSON integer: ``True`` and ``1.0`` are refused, nothing is truncated."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise where.error(f"expected an integer, got {_kind(value)}", field)
    _check_range(value, where, field, minimum, maximum)
    return value


def _check_range(
    value: float, where: Where, field: str | None, minimum: float | None, maximum: float | None
) -> None:
    if minimum is not None and value < minimum:
        raise where.error(f"expected a number >= {minimum}, got {quote(value)}", field)
    if maximum is not None and value > maximum:
        raise where.error(f"expected a number <= {maximum}, got {quote(value)}", field)


def optional_integer(value: Any, where: Where, field: str | None, **bounds: Any) -> int | None:
    """An integer or null."""
    return None if value is None else integer(value, where, field, **bounds)


def integer_text(value: str, where: Where, field: str | None, *, minimum: int | None = None) -> int:
    """An integer written in a text cell: ASCII digits with an optional minus sign only
    (``int()`` would also take ``" 1"``, ``"1_0"`` and non-ASCII digits)."""
    if not isinstance(value, str) or not _INTEGER_TEXT.fullmatch(value):
        raise where.error(f"expected an integer, got {quote(value)}", field)
    out = int(value)
    _check_range(out, where, field, minimum, None)
    return out


def number(value: Any, where: Where, field: str | None) -> float:
    """A finite JSON number (integer or float, not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise where.error(f"expected a number, got {_kind(value)}", field)
    if not math.isfinite(value):
        raise where.error(f"expected a finite number, got {quote(value)}", field)
    return float(value)


def number_text(value: Any, where: Where, field: str | None) -> float:
    """A decimal number written as text (``0.25``, ``-1e-3``); ``1_0``, ``nan``, ``inf`` and
    surrounding spaces are refused."""
    if not isinstance(value, str) or not _NUMBER_TEXT.fullmatch(value):
        raise where.error(f"expected a decimal number, got {_kind(value)}", field)
    return float(value)


def boolean(value: Any, where: Where, field: str | None) -> bool:
    """A JSON boolean (``1`` and ``"true"`` are refused)."""
    if not isinstance(value, bool):
        raise where.error(f"expected true or false, got {_kind(value)}", field)
    return value


def label_value(value: Any, where: Where, field: str | None, *, allow_int: bool = True) -> Any:
    """A raw label before the scheme parses it: a text, or (``allow_int``) an integer."""
    if value is None:
        return None
    if isinstance(value, str):
        return check_text_content(value, where, field)
    if allow_int and isinstance(value, int) and not isinstance(value, bool):
        return value
    expected = "a text or an integer" if allow_int else "a text"
    raise where.error(f"expected a label ({expected}), got {_kind(value)}", field)


def mapping(value: Any, where: Where, field: str | None, *, optional: bool = True) -> dict:
    """A JSON object (``None`` gives ``{}`` when ``optional``); its strings are checked and
    its nesting bounded (:func:`json_value`)."""
    if value is None and optional:
        return {}
    if not isinstance(value, dict):
        raise where.error(f"expected an object, got {_kind(value)}", field)
    json_value(value, where, field)
    return dict(value)


def json_value(value: Any, where: Where, field: str | None, allow_unsafe_text: bool = False) -> Any:
    """Check a free JSON value (metadata): strings without NUL/lone surrogates, finite numbers,
    nesting at most :data:`MAX_DEPTH` levels. Iterative, so deep input cannot exhaust the stack."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            check_text_content(item, where, field, allow_unsafe_text)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise where.error(f"expected a finite number, got {item!r}", field)
        elif isinstance(item, (list, tuple, dict)):
            if depth >= MAX_DEPTH:
                raise where.error(f"nested deeper than {MAX_DEPTH} levels", field, "E105")
            if isinstance(item, dict):
                for key, sub in item.items():
                    if not isinstance(key, str):
                        raise where.error(f"expected text keys, got {quote(key)}", field)
                    check_text_content(key, where, field, allow_unsafe_text)
                    stack.append((sub, depth + 1))
            else:
                stack.extend((sub, depth + 1) for sub in item)
        elif not (item is None or isinstance(item, (bool, int))):
            raise where.error(f"expected a JSON value, got {quote(item)}", field)
    return value


def text_pair(value: Any, where: Where, field: str | None) -> tuple[str, str]:
    """A ``[text, text]`` list (a rewrite): a list of exactly two texts, not a 2-letter string."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise where.error(f"expected a list of two texts, got {_kind(value)}", field)
    first = text(value[0], where, field)
    second = text(value[1], where, field)
    return first, second


def text_pairs(value: Any, where: Where, field: str | None) -> tuple[tuple[str, str], ...]:
    """A list of ``[text, text]`` lists (``rewrites``); null or missing gives ``()``."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise where.error(f"expected a list of [text, text] lists, got {_kind(value)}", field)
    return tuple(text_pair(item, where, field) for item in value)


def known_keys(
    record: Mapping[str, Any], allowed: Iterable[str], where: Where, what: str = "field"
) -> None:
    """Refuse keys outside ``allowed`` (a typo such as ``labl`` would otherwise be dropped)."""
    allowed = set(allowed)
    unknown = [key for key in record if key not in allowed]
    if unknown:
        raise where.error(
            f"unknown {what} {quote(unknown[0])}; expected one of {', '.join(sorted(allowed))}",
            str(unknown[0])[:QUOTE_LIMIT],
        )


class UniqueIds:
    """Remember ids and where they were seen; a repeat raises E102 naming both places.

    Example:
        >>> ids = UniqueIds()
        >>> ids.add("a", Where("f.jsonl", 2))
        >>> try:
        ...     ids.add("a", Where("f.jsonl", 5))
        ... except DataFormatError as err:
        ...     print(err)
        [E102] f.jsonl, line 5: duplicate pair id 'a' (first seen on line 2)
    """

    def __init__(self, what: str = "pair", code: str = "E102") -> None:
        self.what = what
        self.code = code
        self.seen: dict[str, int | None] = {}

    def add(self, value: str, where: Where, field: str | None = None) -> None:
        first = self.seen.get(value, -1)
        if first != -1:
            raise where.error(
                f"duplicate {self.what} id {quote(value)} (first seen on {where.unit} {first})",
                field,
                self.code,
            )
        self.seen[value] = where.line

    def __contains__(self, value: object) -> bool:
        return value in self.seen


def check_joined_texts(
    expected: Mapping[str, tuple[str, str]],
    pair_id: str,
    texts: tuple[Any, Any],
    where: Where,
    against: str,
    fields: tuple[str, str] = ("text1", "text2"),
) -> None:
    """Refuse a record joined by id to a pair whose texts it does not carry (E140).

    Predictions and scores are matched to pairs by id, and readers of CSV/TSV/MRPC files number
    the rows: ids alone match the predictions made for any file of the same length. Every
    command that joins such a record back to pairs checks the texts it carries with this.

    Args:
        expected: pair id -> ``(text1, text2)`` of the pairs joined to.
        pair_id: the record's id (an id not in ``expected`` is left to the caller).
        texts: the record's ``(text1, text2)``.
        where: the record's file and line.
        against: the pairs' file, for the message.
        fields: the names of the two texts in the record.

    Example:
        >>> try:
        ...     check_joined_texts({"1": ("a", "b")}, "1", ("a", "c"), Where("p", 4), "t")
        ... except DataFormatError as err:
        ...     print(err.message)
        p, line 4, field 'text2': pair id '1' has other texts than in t ('c', there 'b'): ...
    """
    want = expected.get(pair_id)
    if want is None:
        return
    for index, field in enumerate(fields):
        got = texts[index]
        if (got.strip() if isinstance(got, str) else got) != want[index].strip():
            raise where.error(
                f"pair id {quote(pair_id)} has other texts than in {against} "
                f"({quote(got, 60)}, there {quote(want[index], 60)}): made for another file?",
                field,
                "E140",
            )


def check_header(names: list[str], where: Where) -> list[str]:
    """Refuse repeated or empty column names (``sentence1,sentence2,sentence1``).

    Returns:
        the names, unchanged.
    """
    seen: dict[str, int] = {}
    for position, name in enumerate(names, start=1):
        if not name:
            raise where.error(
                f"column {position} of the header has no name; every column needs one",
                None,
                "E116",
            )
        check_text_content(name, where, None)
        if name in seen:
            raise where.error(
                f"column name {quote(name)} is repeated (columns {seen[name]} and {position}); "
                "rename one so no value is silently dropped",
                name[:QUOTE_LIMIT],
                "E116",
            )
        seen[name] = position
    return names


def check_spans(
    pairs: Iterable[Any], documents: Mapping[str, Any], lines: list[int], where: Where
) -> None:
    """Every span names a known document and lies inside it (``lines[i]`` locates pair ``i``)."""
    for index, pair in enumerate(pairs):
        for side, span in ((1, pair.span1), (2, pair.span2)):
            if span is None:
                continue
            here = where.at(lines[index])
            document = documents.get(span.doc_id)
            if document is None:
                raise here.error(
                    f"span{side} names document {quote(span.doc_id)}, which the file does not hold",
                    f"span{side}",
                    "E101",
                )
            if span.end > len(document.text):
                raise here.error(
                    f"span{side} [{span.begin}, {span.end}) lies outside document "
                    f"{quote(span.doc_id)} of length {len(document.text)}",
                    f"span{side}",
                    "E101",
                )


#: the ``verify`` values of the readers with document context
VERIFY_MODES = ("bounds", "text", "none")


def check_span_texts(
    pairs: Any,
    verify: str,
    where: Where,
    lines: Sequence[int],
    *,
    field: str = "span{side}",
    mismatch: str = "the documents of this file do not seem to belong to its pairs",
) -> None:
    """The one rule of every reader with document context (Turku, canonical JSONL) for spans
    whose text is not their statement (statements edited after extraction, spans pointing
    elsewhere).

    Every span is counted in ``pairs.metadata['span_check']``
    (:meth:`~parakit.schema.PairSet.span_agreement`). ``verify='text'``: the first span that
    differs beyond whitespace and punctuation is E101 at its line or record; any mode but
    ``none``: when at least 4 spans are checked and most differ, the documents do not belong
    to the pairs (E101). Spans must already be inside their documents (:func:`check_spans`).

    Args:
        pairs: the pair set read, in file order; ``lines[i]`` locates pair ``i``.
        verify: ``bounds``, ``text`` or ``none``.
        where: the file (and its unit, line or record).
        field: the field named by an error, ``{side}`` is 1 or 2.
        mismatch: what the majority error says is wrong.
    """
    from parakit.schema import span_match

    if verify not in VERIFY_MODES:
        raise DataFormatError(
            Errors.E114_verify_must_bounds_text.format(quote_verify=quote(verify))
        )
    if verify == "text":
        for index, pair in enumerate(pairs):
            for side, _span, text, covered in pairs.span_texts(pair):
                if span_match(covered, text) == "differ":
                    raise where.at(lines[index]).error(
                        f"span{side} covers {quote(covered[:60])}, not text{side} "
                        f"{quote(text[:60])}",
                        field.format(side=side),
                        "E101",
                    )
    counts = pairs.span_agreement()
    pairs.metadata["span_check"] = counts
    checked = counts["exact"] + counts["normalized"] + counts["differ"]
    if verify != "none" and checked >= 4 and counts["differ"] * 2 > checked:
        raise DataFormatError(
            Errors.E101_context_spans_cover_other.format(
                counts_differ=counts["differ"], checked=checked, mismatch=mismatch
            ),
            path=where.path,
        )
