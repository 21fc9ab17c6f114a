"""Text helpers of the analysis package: words and lemmas on top of :mod:`parakit.text`."""

from __future__ import annotations

import re
from functools import lru_cache

from parakit.text.sentences import split_sentences as _split_sentences
from parakit.text.tokenize import TOKEN_PATTERN

_TOKEN = TOKEN_PATTERN
_WORD = re.compile(r"\w", re.UNICODE)
SIMPLEMMA_LANGS = frozenset(
    [
        "ast",
        "bg",
        "ca",
        "cs",
        "cy",
        "da",
        "de",
        "el",
        "en",
        "enm",
        "es",
        "et",
        "fa",
        "fi",
        "fr",
        "ga",
        "gd",
        "gl",
        "gv",
        "hbs",
        "hi",
        "hu",
        "hy",
        "id",
        "is",
        "it",
        "ka",
        "la",
        "lb",
        "lt",
        "lv",
        "mk",
        "ms",
        "nb",
        "nl",
        "nn",
        "pl",
        "pt",
        "ro",
        "ru",
        "se",
        "sk",
        "sl",
        "sq",
        "sv",
        "sw",
        "tl",
        "tr",
        "uk",
    ]
)


def tokenize(text: str) -> list[str]:
    """Tokens of :func:`parakit.text.tokenize` (regex method)."""
    return _TOKEN.findall(text)


def words(text: str) -> list[str]:
    """Lowercased word tokens (punctuation dropped)."""
    return [t.lower() for t in _TOKEN.findall(text) if _WORD.search(t)]


def split_sentences(text: str) -> list[str]:
    """Sentences of :func:`parakit.text.split_sentences`."""
    return _split_sentences(text)


def base_lang(lang: str | None) -> str | None:
    return (lang or "").split("-")[0].lower() or None


def lemmatizer_for(lang: str | None) -> str:
    """Name of the lemmatiser used for ``lang``: ``simplemma`` or ``none`` (lowercase only)."""
    return "simplemma" if base_lang(lang) in SIMPLEMMA_LANGS else "none"


@lru_cache(maxsize=200_000)
def lemma(word: str, lang: str | None) -> str:
    """simplemma lemma of a lowercased word, or the word itself for unsupported languages."""
    code = base_lang(lang)
    if code not in SIMPLEMMA_LANGS:
        return word
    import simplemma

    return simplemma.lemmatize(word, lang=code).lower()
