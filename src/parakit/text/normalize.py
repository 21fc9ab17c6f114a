"""Text normalisation."""

from __future__ import annotations

import re
import unicodedata

_SPACES = re.compile(r"\s+")
_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)


def normalize(
    text: str,
    form: str | None = "NFKC",
    lowercase: bool = False,
    strip_punctuation: bool = False,
    collapse_whitespace: bool = True,
) -> str:
    """Normalise ``text``: Unicode form, optional lowercasing and punctuation removal,
    whitespace runs collapsed to one space and trimmed.

    Example:
        >>> normalize("  Ｈｅｌｌｏ,\\n world! ", lowercase=True, strip_punctuation=True)
        'hello world'
    """
    if form:
        text = unicodedata.normalize(form, text)
    if lowercase:
        text = text.lower()
    if strip_punctuation:
        text = _PUNCT.sub(" " if collapse_whitespace else "", text)
    if collapse_whitespace:
        text = _SPACES.sub(" ", text).strip()
    return text


def dedup_key(text: str) -> str:
    """The key two sentences are duplicates under (M2): lowercased, without punctuation,
    whitespace collapsed."""
    return normalize(text, lowercase=True, strip_punctuation=True)
