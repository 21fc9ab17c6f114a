"""Rule-based sentence splitting for space-separated languages and Japanese/Chinese.

A sentence ends at ``.``, ``!``, ``?``, ``…`` (optionally followed by closing quotes or
brackets) before whitespace and an upper-case letter, digit or opening quote; and at the
CJK full stops ``。！？``. Common abbreviations (``Mr.``, ``e.g.``, Finnish ``esim.``...) and
single initials do not end a sentence.

Example:
    >>> split_sentences("Mr. Smith arrived. He sat down! Did he? Yes.")
    ['Mr. Smith arrived.', 'He sat down!', 'Did he?', 'Yes.']
    >>> split_sentences("雨が降った。傘を持っていた。", lang="ja")
    ['雨が降った。', '傘を持っていた。']
"""

from __future__ import annotations

import re

ABBREVIATIONS = frozenset(
    {
        # English
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "inc",
        "ltd",
        "co",
        "corp",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "no",
        "fig",
        "approx",
        "dept",
        "est",
        "gen",
        "gov",
        "u.s",
        "u.k",
        # Finnish
        "esim",
        "ym",
        "yms",
        "jne",
        "mm",
        "ns",
        "tms",
        "ko",
        "eli",
        "klo",
        "kts",
        "ks",
        "nro",
        "s",
        "v",
        "n",
        "tri",
        # Swedish
        "bl.a",
        "t.ex",
        "d.v.s",
        "dvs",
        "osv",
        "m.m",
        "s.k",
        "fr.o.m",
        "t.o.m",
        "kl",
        "nr",
    }
)

_CANDIDATE = re.compile(r"([.!?…]+[\"'»”’)\]]*)(\s+)(?=[\"'«“‘(\[]?[\w\d])")
_CJK_END = re.compile(r"(?<=[。！？])(?![」』）])|(?<=[。！？][」』）])")


def split_sentences(text: str, lang: str | None = None) -> list[str]:
    """Split ``text`` into sentences (see the module docstring for the rules)."""
    text = text.strip()
    if not text:
        return []
    if lang in ("ja", "zh"):
        return [s.strip() for s in _CJK_END.split(text) if s.strip()]
    sentences: list[str] = []
    start = 0
    for match in _CANDIDATE.finditer(text):
        end = match.end(1)
        following = text[match.end() : match.end() + 1]
        before = text[start : match.start(1)]
        last_word = before.rsplit(None, 1)[-1] if before.split() else ""
        stripped = last_word.lower().rstrip(".")
        if match.group(1).startswith(".") and (
            stripped in ABBREVIATIONS or (len(last_word) == 1 and last_word.isalpha())
        ):
            continue
        if following.islower():
            continue
        sentences.append(text[start:end].strip())
        start = match.end()
    rest = text[start:].strip()
    if rest:
        sentences.append(rest)
    return sentences
