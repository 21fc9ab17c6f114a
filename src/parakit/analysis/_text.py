"""Small text helpers of the analysis package (tokens, words, sentences, lemmas).

``parakit.text`` will provide the project-wide tokenizer and sentence splitter; these helpers
are the analysis package's own, deterministic versions, kept here so the analysis results do
not change under it.
"""

from __future__ import annotations

import re
from functools import lru_cache

_TOKEN = re.compile(r"\w+(?:[-'’.]\w+)*|[^\w\s]", re.UNICODE)
_WORD = re.compile(r"\w", re.UNICODE)
# A sentence ends at . ! ? … (with closing quotes/brackets) followed by whitespace.
_SENT_END = re.compile(r"[.!?…。！？]+[\"'”’»)\]」』]*\s*")
_OPENERS = "\"'“‘«([-–— "
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
    """Words (with inner hyphens/apostrophes) and single punctuation characters."""
    return _TOKEN.findall(text)


def words(text: str) -> list[str]:
    """Lowercased word tokens (punctuation dropped)."""
    return [t.lower() for t in _TOKEN.findall(text) if _WORD.search(t)]


def split_sentences(text: str) -> list[str]:
    """Split after sentence-final punctuation followed by whitespace and a capital or digit."""
    text = text.strip()
    out: list[str] = []
    start = 0
    for match in _SENT_END.finditer(text):
        rest = text[match.end() :].lstrip(_OPENERS)
        if match.group().strip()[-1:] not in "。！？" and match.group() == match.group().rstrip():
            continue  # Latin punctuation needs whitespace after it
        # Next sentence starts with a capital, a digit, or an uncased letter (CJK...).
        if rest and (
            rest[0].isupper() or rest[0].isdigit() or (rest[0].isalpha() and not rest[0].islower())
        ):
            out.append(text[start : match.end()].strip())
            start = match.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


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
