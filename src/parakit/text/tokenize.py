"""Language-aware tokenisation.

The default tokenizer is a Unicode regex (numbers with inner separators, words with inner
hyphens/apostrophes, and single punctuation marks). Japanese uses a real morphological
analyser (fugashi with the unidic-lite dictionary, ``pip install parakit[ja]``); text that is
already space-separated (like TMUP) can use ``method="whitespace"``.

Example:
    >>> tokenize("Don't stop-believing, now!")
    ["Don't", 'stop-believing', ',', 'now', '!']
    >>> tokenize("a  b\\tc", method="whitespace")
    ['a', 'b', 'c']
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from parakit.errors import Errors, ParakitError, require_extra

# numbers with inner separators (3.5, 1,000, 12:30) stay whole; words keep inner ' ’ -
TOKEN_PATTERN = re.compile(r"\d+(?:[.,:]\d+)+|\w+(?:['’\-]\w+)*|[^\w\s]", re.UNICODE)
_METHODS = ("regex", "whitespace", "fugashi")


@lru_cache(maxsize=1)
def _fugashi_tagger():  # type: ignore[no-untyped-def]
    fugashi = require_extra("fugashi", extra="ja", needed_for="Japanese tokenisation")
    try:
        return fugashi.Tagger()
    except RuntimeError as err:
        raise ParakitError(Errors.E301_fugashi_found_dictionary.format(err=err)) from None


def default_method(lang: str | None) -> str:
    """The tokenisation method used for ``lang`` when none is given."""
    return "fugashi" if lang in ("ja", "jpn", "japanese") else "regex"


def tokenize(
    text: str, lang: str | None = None, method: str | None = None, lowercase: bool = False
) -> list[str]:
    """Split ``text`` into tokens.

    Args:
        text: the text.
        lang: ISO language code; ``ja`` selects the morphological analyser.
        method: ``regex`` (default), ``whitespace`` or ``fugashi``; overrides ``lang``.
        lowercase: lowercase the tokens.
    """
    chosen = method or default_method(lang)
    if chosen == "regex":
        tokens = TOKEN_PATTERN.findall(text)
    elif chosen == "whitespace":
        tokens = text.split()
    elif chosen == "fugashi":
        tokens = [word.surface for word in _fugashi_tagger()(text)]
    else:
        raise ParakitError(
            Errors.E302_unknown_tokenisation_method.format(chosen=chosen, METHODS=_METHODS)
        )
    if lowercase:
        tokens = [t.lower() for t in tokens]
    return tokens


def get_tokenizer(
    lang: str | None = None, method: str | None = None, lowercase: bool = False
) -> Callable[[str], list[str]]:
    """A one-argument tokenizer function with the settings fixed (fast path for loops)."""
    chosen = method or default_method(lang)
    if chosen == "regex" and not lowercase:
        return TOKEN_PATTERN.findall
    if chosen == "whitespace" and not lowercase:
        return str.split
    return lambda text: tokenize(text, method=chosen, lowercase=lowercase)
