"""Systematic ("trivial") paraphrase patterns of the Turku corpus paper (T13, §6.2).

Each pair gets at most one pattern; the checks run in this order and the first that holds
wins (so, as footnote h of the paper says, "same content lemmas" (4) wins over "synonym
substitution" (5) when both explain a pair):

=========================== ===============================================================
``identical``               the two texts are the same string
``surface_only``            same words in the same order; only case, punctuation or spacing
                            differ (the paper's "small character differences")
``word_reordering``         (1) the same words (multiset), in another order
``inflection_only``         (2) the same lemmas in the same order, some word forms differ
``lemma_reordering``        (3) the same lemmas (multiset) in another order
``same_content_lemmas``     (4) the same content-word lemmas once function words are ignored
``synonym_substitution``    (5) the lemmas differ only by synonym replacements
``content_synonyms``        (6) (4) + (5): content lemmas differ only by synonyms
``other``                   none of the above
=========================== ===============================================================

Lemmas come from simplemma (which ships Finnish, Swedish, English and ~45 more languages);
function words from :mod:`parakit.analysis.function_words`; synonyms from a
:class:`~parakit.analysis.synonyms.SynonymResource` (a user file or a shipped thesaurus).
Synonym matching ignores word order: every lemma left over on one side must pair with a
distinct synonym on the other side.

Example:
    >>> d = PatternDetector(lang="en", synonyms=None)
    >>> d.detect("The cat sat on the mat.", "On the mat the cat sat.")
    'word_reordering'
    >>> d.detect("The cats sat.", "The cat sits.")
    'inflection_only'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from parakit.analysis import _text
from parakit.analysis.function_words import function_words
from parakit.analysis.synonyms import SynonymResource, load_synonyms

from ..errors import Errors

#: The six T13 patterns, in detection order.
T13_PATTERNS = (
    "word_reordering",
    "inflection_only",
    "lemma_reordering",
    "same_content_lemmas",
    "synonym_substitution",
    "content_synonyms",
)
#: Every value :meth:`PatternDetector.detect` returns, in detection order.
PATTERNS = ("identical", "surface_only", *T13_PATTERNS, "other")
#: Human-readable names for reports.
PATTERN_TITLES = {
    "identical": "identical",
    "surface_only": "case/punctuation only",
    "word_reordering": "(1) word reordering",
    "inflection_only": "(2) inflection only",
    "lemma_reordering": "(3) lemma reordering",
    "same_content_lemmas": "(4) same content lemmas",
    "synonym_substitution": "(5) synonym substitution",
    "content_synonyms": "(6) content lemmas + synonyms",
    "other": "other",
}


class PatternDetector:
    """Assign each pair one of :data:`PATTERNS`.

    Args:
        lang: language code for the lemmatiser and the function-word list (``fi``, ``sv``,
            ``en``...). Without simplemma support lemmas are the lowercased words, so patterns
            (2) and (3) cannot fire; the report records the lemmatiser used.
        synonyms: None (no synonym patterns), ``"auto"`` (a thesaurus an OS package ships for
            ``lang``, e.g. Debian's ``mythes-sv`` / ``mythes-en-us``; none for Finnish), a path
            to a synonym file or MyThes ``.dat`` file, or a :class:`SynonymResource`.
        function_words: override the built-in function-word set.

    Example:
        >>> syn = SynonymResource.from_sets([["big", "large"]])
        >>> PatternDetector("en", synonyms=syn).detect("a big house", "a large house")
        'synonym_substitution'
    """

    def __init__(
        self,
        lang: str | None = None,
        synonyms: str | Path | SynonymResource | None = "auto",
        function_words: Iterable[str] | None = None,
    ) -> None:
        self.lang = lang
        self.synonyms = synonyms
        self.function_words = function_words

    # Resolved lazily so that construction stays free of I/O (scikit-learn style).
    def _resources(self) -> tuple[SynonymResource | None, frozenset[str]]:
        if not hasattr(self, "_resolved"):
            fw = (
                frozenset(w.lower() for w in self.function_words)
                if self.function_words is not None
                else function_words(self.lang)
            )
            self._resolved = (load_synonyms(self.synonyms, self.lang), fw)
        return self._resolved

    @property
    def signature(self) -> dict[str, Any]:
        """Settings that produced the patterns (for report provenance)."""
        syn, fw = self._resources()
        return {
            "lang": self.lang,
            "lemmatizer": _text.lemmatizer_for(self.lang),
            "synonyms": syn.name if syn is not None else None,
            "synonym_entries": len(syn) if syn is not None else 0,
            "function_words": len(fw),
        }

    def _lemmas(self, words: Sequence[str]) -> list[str]:
        return [_text.lemma(w, self.lang) for w in words]

    def detect(self, text1: str, text2: str) -> str:
        """The pattern of one pair (see the module table)."""
        if text1 == text2:
            return "identical"
        w1, w2 = _text.words(text1), _text.words(text2)
        if w1 == w2:
            return "surface_only"
        if Counter(w1) == Counter(w2):
            return "word_reordering"
        l1, l2 = self._lemmas(w1), self._lemmas(w2)
        if l1 == l2:
            return "inflection_only"
        if Counter(l1) == Counter(l2):
            return "lemma_reordering"
        syn, fw = self._resources()
        c1 = [lem for w, lem in zip(w1, l1, strict=True) if w not in fw and lem not in fw]
        c2 = [lem for w, lem in zip(w2, l2, strict=True) if w not in fw and lem not in fw]
        if c1 and Counter(c1) == Counter(c2):
            return "same_content_lemmas"
        if syn is not None:
            if _synonym_match(w1, l1, w2, l2, syn):
                return "synonym_substitution"
            cw1 = [w for w, lem in zip(w1, l1, strict=True) if w not in fw and lem not in fw]
            cw2 = [w for w, lem in zip(w2, l2, strict=True) if w not in fw and lem not in fw]
            if c1 and _synonym_match(cw1, c1, cw2, c2, syn):
                return "content_synonyms"
        return "other"

    def detect_many(self, texts1: Sequence[str], texts2: Sequence[str]) -> list[str]:
        """Patterns of many pairs."""
        if len(texts1) != len(texts2):
            from parakit.errors import AnalysisError

            raise AnalysisError(
                Errors.E1001_first_texts_but.format(n_texts1=len(texts1), n_texts2=len(texts2))
            )
        return [self.detect(a, b) for a, b in zip(texts1, texts2, strict=True)]


def _synonym_match(
    w1: Sequence[str], l1: Sequence[str], w2: Sequence[str], l2: Sequence[str], syn: SynonymResource
) -> bool:
    """Whether the lemmas left after removing shared ones pair up one-to-one as synonyms."""
    if len(l1) != len(l2):
        return False
    left1 = Counter(l1) - Counter(l2)
    left2 = Counter(l2) - Counter(l1)
    if not left1:
        return False
    # Keep one surface form per leftover lemma too: thesauri list base forms, not always lemmas.
    forms1 = {lem: w for w, lem in zip(w1, l1, strict=True)}
    forms2 = {lem: w for w, lem in zip(w2, l2, strict=True)}
    a = list(left1.elements())
    b = list(left2.elements())

    def related(x: str, y: str) -> bool:
        return syn.are_synonyms(x, y) or syn.are_synonyms(forms1[x], forms2[y])

    from scipy.optimize import linear_sum_assignment

    cost = np.array([[0.0 if related(x, y) else 1.0 for y in b] for x in a])
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].sum()) == 0.0


def pattern_shares(patterns: Sequence[str]) -> dict[str, float]:
    """Share of each pattern in :data:`PATTERNS` order (0 for absent ones)."""
    counts = Counter(patterns)
    total = max(len(patterns), 1)
    return {name: counts.get(name, 0) / total for name in PATTERNS}
