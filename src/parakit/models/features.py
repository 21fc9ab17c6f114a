"""Pair features for the baselines: lexical overlap, machine-translation metrics, embeddings.

* lexical (J7, Q7): word overlap rate (Jaccard of token sets), character n-gram TF / TF-IDF
  cosine, binary bag-of-words cosine;
* MT metrics (Q7): BLEU n-gram precisions and score (sacrebleu), TER, chrF, a METEOR-like
  unigram F-mean, token edit distance, length ratio;
* embeddings (Q7 unsupervised setup): ``[|u - v|, u * v]`` of two sentence vectors.

Tokenisation goes through :func:`tokenize`, the single place to swap in ``parakit.text``.

Example:
    >>> from parakit.models.features import word_overlap_rates, mt_features
    >>> word_overlap_rates(["a cat sat"], ["the cat sat"]).round(2).tolist()
    [0.5]
    >>> matrix, names = mt_features(["a cat sat"], ["a cat sat"])
    >>> float(matrix[0, names.index("chrf")])
    100.0
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (``\\w+``) of ``text``; punctuation is dropped."""
    return _TOKEN.findall(text.lower())


# -- lexical similarities ---------------------------------------------------------------------


def word_overlap_rates(texts1: Sequence[str], texts2: Sequence[str]) -> np.ndarray:
    """Word overlap rate (WOR) of each pair: ``|A ∩ B| / |A ∪ B|`` of the token sets (J4).

    Two texts without any tokens have overlap 1 if both are empty, else 0.
    """
    out = np.empty(len(texts1), dtype=np.float64)
    for i, (a, b) in enumerate(zip(texts1, texts2, strict=True)):
        sa, sb = set(tokenize(a)), set(tokenize(b))
        union = sa | sb
        out[i] = len(sa & sb) / len(union) if union else 1.0
    return out


def _rowwise_cosine(m1: Any, m2: Any) -> np.ndarray:
    """Cosine of matching rows of two L2-normalised sparse matrices."""
    return np.asarray(m1.multiply(m2).sum(axis=1)).ravel()


class CharNgramCosine:
    """Cosine similarity of character n-gram TF or TF-IDF vectors (Turku's lexical similarity
    uses TF of 2–4-grams; ``use_idf=True`` gives the TF-IDF baseline).

    Args:
        ngram_range: n-gram lengths.
        analyzer: ``char_wb`` (n-grams inside word boundaries) or ``char``.
        use_idf: weight by inverse document frequency learned in :meth:`fit`.
        sublinear_tf: use ``1 + log(tf)``.
    """

    def __init__(
        self,
        ngram_range: tuple[int, int] = (2, 4),
        analyzer: str = "char_wb",
        use_idf: bool = True,
        sublinear_tf: bool = False,
    ) -> None:
        self.ngram_range = tuple(ngram_range)
        self.analyzer = analyzer
        self.use_idf = use_idf
        self.sublinear_tf = sublinear_tf

    def fit(self, texts: Sequence[str]) -> CharNgramCosine:
        """Learn the vocabulary (and idf) from ``texts``."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer_ = TfidfVectorizer(
            analyzer=self.analyzer, ngram_range=self.ngram_range, lowercase=True,
            use_idf=self.use_idf, sublinear_tf=self.sublinear_tf, norm="l2",
        ).fit(list(texts))
        return self

    def score(self, texts1: Sequence[str], texts2: Sequence[str]) -> np.ndarray:
        """Cosine similarity of each pair, in [0, 1]."""
        return _rowwise_cosine(self.vectorizer_.transform(list(texts1)),
                               self.vectorizer_.transform(list(texts2)))


class BowCosine:
    """Cosine similarity of binary bag-of-words vectors (Q7 reference system)."""

    def fit(self, texts: Sequence[str]) -> BowCosine:
        from sklearn.feature_extraction.text import TfidfVectorizer

        # binary counts, no idf, l2 norm = cosine of binary vectors
        self.vectorizer_ = TfidfVectorizer(
            tokenizer=tokenize, token_pattern=None, lowercase=False, binary=True,
            use_idf=False, norm="l2",
        ).fit(list(texts))
        return self

    def score(self, texts1: Sequence[str], texts2: Sequence[str]) -> np.ndarray:
        return _rowwise_cosine(self.vectorizer_.transform(list(texts1)),
                               self.vectorizer_.transform(list(texts2)))


# -- machine-translation metrics --------------------------------------------------------------

MT_FEATURE_NAMES: tuple[str, ...] = (
    "bleu_p1", "bleu_p2", "bleu_p3", "bleu_p4", "bleu",
    "bleu_p1_rev", "bleu_p2_rev", "bleu_p3_rev", "bleu_p4_rev", "bleu_rev",
    "ter", "chrf", "meteor_fmean", "edit_distance", "edit_distance_norm", "length_ratio",
)


def edit_distance(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Levenshtein distance between two sequences (tokens or characters).

    Uses rapidfuzz when installed (same exact result, faster), else dynamic programming.
    """
    try:
        from rapidfuzz.distance import Levenshtein
    except ImportError:
        Levenshtein = None  # noqa: N806
    if Levenshtein is not None:
        return int(Levenshtein.distance(a, b))
    previous = list(range(len(b) + 1))
    for i, item_a in enumerate(a, start=1):
        current = [i]
        for j, item_b in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (item_a != item_b)))
        previous = current
    return previous[-1]


def meteor_fmean(hypothesis: Sequence[str], reference: Sequence[str]) -> float:
    """METEOR's unigram F-mean ``10PR / (R + 9P)`` over exact token matches (no stemming,
    synonyms or fragmentation penalty: "METEOR-like")."""
    from collections import Counter

    if not hypothesis or not reference:
        return 0.0
    matches = sum((Counter(hypothesis) & Counter(reference)).values())
    if matches == 0:
        return 0.0
    precision = matches / len(hypothesis)
    recall = matches / len(reference)
    return 10 * precision * recall / (recall + 9 * precision)


def mt_features(texts1: Sequence[str], texts2: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Machine-translation-metric features of each pair (text1 as hypothesis, text2 as
    reference; BLEU also the other way round).

    Returns:
        ``(matrix of shape (n, len(MT_FEATURE_NAMES)), feature names)``.
    """
    from sacrebleu.metrics import BLEU, CHRF, TER

    bleu = BLEU(effective_order=True)
    chrf = CHRF()
    ter = TER()
    rows = []
    for a, b in zip(texts1, texts2, strict=True):
        forward = bleu.sentence_score(a, [b])
        backward = bleu.sentence_score(b, [a])
        tok_a, tok_b = tokenize(a), tokenize(b)
        distance = edit_distance(tok_a, tok_b)
        longest = max(len(tok_a), len(tok_b), 1)
        rows.append([
            *(p / 100 for p in forward.precisions), forward.score / 100,
            *(p / 100 for p in backward.precisions), backward.score / 100,
            ter.sentence_score(a, [b]).score,
            chrf.sentence_score(a, [b]).score,
            meteor_fmean(tok_a, tok_b),
            float(distance),
            distance / longest,
            min(len(tok_a), len(tok_b)) / longest,
        ])
    return np.asarray(rows, dtype=np.float64).reshape(-1, len(MT_FEATURE_NAMES)), list(
        MT_FEATURE_NAMES
    )


# -- embedding features -----------------------------------------------------------------------


def embedding_pair_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``[|u − v|, u * v]`` for rows of two embedding matrices (symmetric in u and v)."""
    u = np.asarray(u, dtype=np.float32)
    v = np.asarray(v, dtype=np.float32)
    if u.shape != v.shape:
        raise ValueError(f"embedding shapes differ: {u.shape} vs {v.shape}")
    return np.hstack([np.abs(u - v), u * v])


def encode_texts(encoder: Any, texts: Sequence[str], batch_size: int = 64,
                 progress: bool = False) -> np.ndarray:
    """Encode ``texts`` with a sentence-transformers model, each distinct text once."""
    unique = list(dict.fromkeys(texts))
    vectors = encoder.encode(unique, batch_size=batch_size, convert_to_numpy=True,
                             show_progress_bar=progress)
    index = {text: i for i, text in enumerate(unique)}
    return np.asarray(vectors)[[index[t] for t in texts]]
