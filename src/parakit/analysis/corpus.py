"""Corpus statistics and comparison (T12, Turku journal paper §6.2).

For one corpus: label distribution; tokens per statement; lexical similarity of each pair
(cosine of TF-IDF character 2–4-gram vectors) with histograms per label; sentence structure of
statements (phrase / one well-formed sentence / two / more) and of pairs (1–1, 1–2,
1–phrase...); the share of each T13 systematic pattern among the positive pairs.

For several corpora: the same numbers on equal-size random samples (12,000 pairs by default,
as in the paper) so that the plots compare like with like.

Example:
    >>> from parakit.schema import Pair, PairSet
    >>> ps = PairSet([Pair("1", "The cat sat.", "A cat sat.", label="1"),
    ...               Pair("2", "Dogs bark. Cats meow.", "dogs", label="0")])
    >>> st = corpus_stats(ps, name="toy", lang="en", synonyms=None)
    >>> st.statement_structure
    {'phrase': 1, 'sentence': 2, 'two': 1, 'more': 0}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from parakit.analysis import _text
from parakit.analysis.patterns import PATTERNS, PatternDetector, pattern_shares
from parakit.analysis.verbs import verb_test_label
from parakit.schema import PairSet
from parakit.text.tokenize import get_tokenizer

#: Statement structure classes, in display order.
STATEMENT_CLASSES = ("phrase", "sentence", "two", "more")
_SHORT = {"phrase": "phrase", "sentence": "1", "two": "2", "more": "3+"}
_ORDER = {"1": 0, "2": 1, "3+": 2, "phrase": 3}
_FINAL = ".!?…。！？"
_CLOSERS = "\"'”’»)]」』"
_OPENERS = "\"'“‘«([-–— ¿¡"


def is_well_formed(sentence: str, has_verb: Callable[[str], bool] | None = None) -> bool:
    """The well-formedness rule of T12: starts with a capital letter (or an uncased letter,
    e.g. Japanese), ends with final punctuation, and — when a POS tagger is given as
    ``has_verb`` — contains a verb.

    Example:
        >>> is_well_formed("The cat sat."), is_well_formed("the cat sat."), is_well_formed("Cats")
        (True, False, False)
    """
    text = sentence.strip().lstrip(_OPENERS)
    end = sentence.strip().rstrip(_CLOSERS)
    if not text or not end:
        return False
    first = next((ch for ch in text if ch.isalpha() or ch.isdigit()), "")
    if not first or (first.isalpha() and first.islower()):
        return False
    if end[-1] not in _FINAL:
        return False
    return has_verb(sentence) if has_verb is not None else True


def statement_structure(text: str, has_verb: Callable[[str], bool] | None = None) -> str:
    """``phrase`` (one sentence that is not well-formed), ``sentence`` (one well-formed),
    ``two`` or ``more`` sentences."""
    sentences = _text.split_sentences(text)
    if len(sentences) >= 3:
        return "more"
    if len(sentences) == 2:
        return "two"
    return "sentence" if sentences and is_well_formed(sentences[0], has_verb) else "phrase"


def pair_structure(a: str, b: str) -> str:
    """The pair's structure from its statements' classes, e.g. ``1-1``, ``1-2``, ``1-phrase``."""
    x, y = sorted((_SHORT[a], _SHORT[b]), key=_ORDER.__getitem__)
    return f"{x}-{y}"


def lexical_similarity(
    texts1: Sequence[str],
    texts2: Sequence[str],
    *,
    ngram_range: tuple[int, int] = (2, 4),
    analyzer: str = "char",
    use_idf: bool = True,
) -> np.ndarray:
    """Cosine of TF-IDF character n-gram vectors of each pair (T12), with the IDF fitted on all
    statements of the given pairs — :class:`parakit.text.similarity.CharNgramSimilarity`, the
    one char n-gram cosine (identical to scikit-learn's ``TfidfVectorizer``, with no feature
    cap).

    Example:
        >>> s = lexical_similarity(["abc def", "xyz"], ["abc def", "abc"])
        >>> float(round(s[0], 6)), bool(s[1] < 0.5)
        (1.0, True)
    """
    from parakit.text.similarity import CharNgramSimilarity

    if len(texts1) == 0:
        return np.zeros(0)
    similarity = CharNgramSimilarity(ngram_range=ngram_range, analyzer=analyzer, use_idf=use_idf)
    if use_idf:
        similarity.fit(list(texts1) + list(texts2))
    return np.asarray(similarity.score(texts1, texts2), dtype=np.float64)


@dataclass
class CorpusStats:
    """Statistics of one corpus (or sample of it); see :func:`corpus_stats`.

    Per-pair arrays (``labels``, ``binary``, ``similarity``, ``patterns``, ``pair_classes``)
    are kept so plots can be drawn; :meth:`summary` has the numbers.
    """

    name: str
    lang: str | None
    n_pairs: int
    n_total: int
    labels: list[str | None]
    binary: np.ndarray
    tokens: np.ndarray
    similarity: np.ndarray
    statement_structure: dict[str, int]
    pair_classes: list[str]
    patterns: list[str]
    signature: dict[str, Any] = field(default_factory=dict)

    @property
    def label_counts(self) -> dict[str, int]:
        counts = Counter("none" if lab is None else lab for lab in self.labels)
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    @property
    def pair_structure(self) -> dict[str, int]:
        return dict(Counter(self.pair_classes).most_common())

    def pattern_shares(self, positives_only: bool = True) -> dict[str, float]:
        """Share of each pattern among the positive pairs (all pairs if there are no labels
        or ``positives_only`` is False)."""
        pats = self.patterns
        if positives_only and (self.binary == 1).any():
            pats = [p for p, b in zip(self.patterns, self.binary, strict=True) if b == 1]
        return pattern_shares(pats)

    def summary(self) -> dict[str, Any]:
        """JSON-serialisable numbers."""
        statements = sum(self.statement_structure.values()) or 1
        pairs = max(len(self.pair_classes), 1)
        sims = {}
        for value, name in ((1, "positive"), (0, "negative")):
            sel = self.similarity[self.binary == value]
            if len(sel):
                sims[name] = {
                    "mean": float(sel.mean()),
                    "median": float(np.median(sel)),
                    "n": len(sel),
                }
        return {
            "name": self.name,
            "lang": self.lang,
            "n_pairs": self.n_pairs,
            "n_total": self.n_total,
            "labels": self.label_counts,
            "binary": {
                "positive": int((self.binary == 1).sum()),
                "negative": int((self.binary == 0).sum()),
                "unknown": int((self.binary < 0).sum()),
            },
            "tokens_per_statement": {
                "mean": float(self.tokens.mean()) if len(self.tokens) else 0.0,
                "median": float(np.median(self.tokens)) if len(self.tokens) else 0.0,
            },
            "similarity": {
                "mean": float(self.similarity.mean()) if len(self.similarity) else 0.0,
                "by_label": sims,
            },
            "statement_structure": {k: v / statements for k, v in self.statement_structure.items()},
            "pair_structure": {k: v / pairs for k, v in self.pair_structure.items()},
            "patterns_positive": self.pattern_shares(True),
            "signature": self.signature,
        }


def corpus_stats(
    pairs: PairSet,
    *,
    name: str | None = None,
    lang: str | None = None,
    synonyms: str | Path | Any = "auto",
    sample_size: int | None = None,
    seed: int = 0,
    has_verb: Callable[[str], bool] | None = None,
    ngram_range: tuple[int, int] = (2, 4),
    reading: str | None = None,
) -> CorpusStats:
    """Compute the T12 statistics of a corpus.

    Args:
        pairs: the corpus.
        name: display name (default: the set's name).
        lang: language for lemmas / function words / synonyms (default: the set's ``lang``).
        synonyms: synonym resource for the T13 patterns (see
            :class:`~parakit.analysis.patterns.PatternDetector`).
        sample_size: draw this many pairs at random (without replacement) first; None = all.
        seed: seed of the sample.
        has_verb: the main-verb check of the well-formedness rule (a callable sentence ->
            bool, e.g. :func:`parakit.analysis.verbs.make_verb_test` ``("voikko")``); None
            leaves it off.
        ngram_range: character n-gram lengths of the lexical similarity.
        reading: binary reading of the labels (scheme default when None).

    Returns:
        :class:`CorpusStats`.
    """
    n_total = len(pairs)
    if sample_size is not None and n_total > sample_size:
        rng = np.random.default_rng(seed)
        idx = np.sort(rng.choice(n_total, size=sample_size, replace=False))
        pairs = pairs.derive([pairs[int(i)] for i in idx])
    lang = lang or pairs.lang
    texts1, texts2 = pairs.texts()
    binary = (
        np.array([-1 if b is None else b for b in pairs.binary_labels(reading)], dtype=int)
        if len(pairs)
        else np.zeros(0, dtype=int)
    )
    tokenize = get_tokenizer(lang=_text.base_lang(lang))  # a morphological analyser for ja
    tokens = np.array([len(tokenize(t)) for t in texts1 + texts2], dtype=int)
    classes1 = [statement_structure(t, has_verb) for t in texts1]
    classes2 = [statement_structure(t, has_verb) for t in texts2]
    structure = Counter(classes1 + classes2)
    detector = PatternDetector(lang, synonyms=synonyms)
    return CorpusStats(
        name=name or pairs.name or "corpus",
        lang=lang,
        n_pairs=len(pairs),
        n_total=n_total,
        labels=[p.label for p in pairs],
        binary=binary,
        tokens=tokens,
        similarity=lexical_similarity(texts1, texts2, ngram_range=ngram_range),
        statement_structure={k: structure.get(k, 0) for k in STATEMENT_CLASSES},
        pair_classes=[pair_structure(a, b) for a, b in zip(classes1, classes2, strict=True)],
        patterns=detector.detect_many(texts1, texts2),
        signature={
            "sample_size": sample_size,
            "seed": seed,
            "similarity": f"tfidf-char-{ngram_range[0]}-{ngram_range[1]}-cosine",
            "tokenizer": "parakit.analysis regex",
            "verb_check": verb_test_label(has_verb),
            "patterns": detector.signature,
            "patterns_order": list(PATTERNS),
        },
    )


def compare_corpora(
    corpora: Mapping[str, PairSet],
    *,
    sample_size: int | None = 12_000,
    seed: int = 0,
    synonyms: str | Path | Any = "auto",
    langs: Mapping[str, str] | None = None,
    has_verb: Callable[[str], bool] | None = None,
) -> list[CorpusStats]:
    """:func:`corpus_stats` of several corpora on equal-size samples (T12: 12,000 pairs).

    A corpus smaller than ``sample_size`` is used whole; the report says so. ``has_verb`` is
    the main-verb test of every corpus (see :func:`corpus_stats`).
    """
    return [
        corpus_stats(
            pairs,
            name=name,
            lang=(langs or {}).get(name),
            synonyms=synonyms,
            sample_size=sample_size,
            seed=seed,
            has_verb=has_verb,
        )
        for name, pairs in corpora.items()
    ]
