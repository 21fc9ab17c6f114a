"""Text helpers of the pages."""

from __future__ import annotations

import itertools
from typing import Any

from markupsafe import Markup


def segments(
    text: str, begin: int, end: int, marks: list[tuple[int, int, str]]
) -> list[dict[str, Any]]:
    """Split ``text[begin:end]`` at the borders of ``marks`` (``(b, e, css_class)``) into
    ``{"b": offset, "text": ..., "cls": "..."}`` pieces; the JS maps a DOM selection back to
    character offsets through ``b``."""
    cuts = {begin, end}
    for b, e, _ in marks:
        cuts.update(x for x in (b, e) if begin < x < end)
    points = sorted(cuts)
    out = []
    for b, e in itertools.pairwise(points):
        classes = sorted({cls for mb, me, cls in marks if mb <= b and e <= me})
        out.append({"b": b, "text": text[b:e], "cls": " ".join(classes)})
    return out


def markdown_html(source: str) -> Markup:
    """Project guidelines written in Markdown, as HTML safe to put in a page.

    CommonMark by markdown-it-py with raw HTML off: a ``<script>`` or ``<img onerror=...>``
    in the source comes out as escaped text, and its link validation drops ``javascript:``,
    ``vbscript:``, ``file:`` and ``data:`` (but image) URLs. Tables are on (GFM style).
    """
    from markdown_it import MarkdownIt

    renderer = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    return Markup(renderer.render(source))  # safe: rendered with raw HTML off
