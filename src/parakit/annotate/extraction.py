"""Helpers of the extraction view (T6): verbatim overlaps to skip and Table 1 statistics.

Example:
    >>> from parakit.annotate.extraction import verbatim_overlaps
    >>> a = "He said that the weather will be fine tomorrow. Then he left."
    >>> b = "Reports: the weather will be fine tomorrow, they say."
    >>> [(a[s1:e1]) for s1, e1, _, _ in verbatim_overlaps(a, b, min_words=5)]
    ['the weather will be fine tomorrow']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

_WORD = re.compile(r"\w+", re.UNICODE)
_ALNUM = re.compile(r"[^\W_]", re.UNICODE)


def verbatim_overlaps(
    text1: str, text2: str, min_words: int = 6, min_chars: int = 0
) -> list[tuple[int, int, int, int]]:
    """Maximal verbatim copies shared by two documents, as character spans.

    Words are compared case-insensitively; a copy is a run of at least ``min_words``
    consecutive equal words (and ``min_chars`` characters), found wherever it sits in either
    document (news paragraphs are often reordered, so no monotone alignment is assumed).

    Returns:
        ``(begin1, end1, begin2, end2)`` tuples sorted by ``begin1``.
    """
    words1 = [(m.group().lower(), m.start(), m.end()) for m in _WORD.finditer(text1)]
    words2 = [(m.group().lower(), m.start(), m.end()) for m in _WORD.finditer(text2)]
    if len(words1) < min_words or len(words2) < min_words:
        return []
    index: dict[tuple[str, ...], list[int]] = {}
    for j in range(len(words2) - min_words + 1):
        index.setdefault(tuple(w for w, _, _ in words2[j : j + min_words]), []).append(j)
    out = []
    for i in range(len(words1) - min_words + 1):
        key = tuple(w for w, _, _ in words1[i : i + min_words])
        for j in index.get(key, ()):
            if i > 0 and j > 0 and words1[i - 1][0] == words2[j - 1][0]:
                continue  # not maximal: the copy started earlier
            n = min_words
            while (
                i + n < len(words1) and j + n < len(words2) and words1[i + n][0] == words2[j + n][0]
            ):
                n += 1
            span = (words1[i][1], words1[i + n - 1][2], words2[j][1], words2[j + n - 1][2])
            if span[1] - span[0] >= min_chars:
                out.append(span)
    return sorted(set(out))


def _alnum(text: str) -> int:
    return len(_ALNUM.findall(text))


def _covered(text: str, spans: Iterable[tuple[int, int]]) -> int:
    mask = [False] * len(text)
    for begin, end in spans:
        for k in range(max(begin, 0), min(end, len(text))):
            mask[k] = True
    return sum(1 for k, c in enumerate(text) if mask[k] and _ALNUM.match(c))


def extraction_stats(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-source extraction statistics in the layout of the Turku journal paper's Table 1.

    Args:
        rows: closed document pairs, each ``{"source", "text1", "text2", "spans1",
            "spans2"}`` (see :meth:`parakit.annotate.store.Store.extraction_rows`).
    Returns:
        one dict per source: ``documents`` (non-empty document pairs), ``empty`` (% of document
        pairs without any pair), ``yield`` (pairs per non-empty document pair), ``coverage``
        (% of alphanumeric characters selected, non-empty pairs) and ``length`` (mean
        alphanumeric length of a document, non-empty pairs).
    """
    by_source: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_source.setdefault(row["source"], []).append(row)
    out = []
    for source, group in sorted(by_source.items()):
        full = [r for r in group if r["spans1"]]
        total = sum(_alnum(r["text1"]) + _alnum(r["text2"]) for r in full)
        covered = sum(
            _covered(r["text1"], r["spans1"]) + _covered(r["text2"], r["spans2"]) for r in full
        )
        out.append(
            {
                "source": source,
                "documents": len(full),
                "empty": 100.0 * (len(group) - len(full)) / len(group),
                "yield": (sum(len(r["spans1"]) for r in full) / len(full)) if full else 0.0,
                "coverage": 100.0 * covered / total if total else 0.0,
                "length": total / (2 * len(full)) if full else 0.0,
            }
        )
    return out
