"""Lexical similarity of statement pairs: word overlap rate and character n-gram cosine.

* :func:`word_overlap_rate` — Jaccard coefficient of the two token sets (J4, J7).
* :class:`CharNgramSimilarity` — cosine of TF or TF-IDF vectors of character n-grams
  (T1 document alignment, T12 corpus statistics with 2–4-grams, T15 sampling bins).

The n-gram similarity is computed in a vectorised way for millions of pairs: the texts of a
chunk are concatenated into one code-point array, every n-gram is hashed to 64 bits with numpy
arithmetic, and counts, norms and dot products come from sorting and ``bincount`` — no Python
loop per n-gram. It follows scikit-learn's ``char`` / ``char_wb`` analyzers exactly (same
preprocessing, same n-grams, smooth idf); the only difference is that n-grams are identified
by a 44-bit hash instead of a vocabulary, so two distinct n-grams collide with a probability
of about 1e-9 per pair of texts.

Example:
    >>> word_overlap_rate("the cat sat", "the cat slept")
    0.5
    >>> sim = CharNgramSimilarity(ngram_range=(2, 4))
    >>> [round(float(x), 4) for x in sim.score(["night"], ["nacht"])]  # 4 shared of 15 each
    [0.2667]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from more_itertools import chunked

from parakit.errors import Errors, ParakitError
from parakit.text.tokenize import get_tokenizer

_WHITE_SPACES = re.compile(r"\s\s+")  # scikit-learn's preprocessing of char analyzers
_DOC_BITS = 20  # low bits of a key hold the document index within a chunk
_DOC_MASK = np.uint64((1 << _DOC_BITS) - 1)
_MULT = np.uint64(0x100000001B3)  # FNV-style multiplier for the rolling hash
_LEN_SALT = 0x9E3779B97F4A7C15
_MASK64 = (1 << 64) - 1


def _salt(n: int) -> np.uint64:
    """A per-length constant so n-grams of different lengths hash apart."""
    return np.uint64((n * _LEN_SALT) & _MASK64)


def word_overlap_rate(
    text1: str | Sequence[str],
    text2: str | Sequence[str],
    tokenizer: Callable[[str], list[str]] | None = None,
) -> float:
    """Word overlap rate (WOR): ``|A ∩ B| / |A ∪ B|`` of the two token sets.

    Args:
        text1, text2: texts, or already tokenised sequences.
        tokenizer: used on strings; default :func:`parakit.text.tokenize` (regex).

    Returns:
        a value in [0, 1]; 0 when both are empty.
    """
    tokenize = tokenizer or get_tokenizer()
    a = set(tokenize(text1) if isinstance(text1, str) else text1)
    b = set(tokenize(text2) if isinstance(text2, str) else text2)
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def word_overlap_rates(
    texts1: Iterable[str],
    texts2: Iterable[str],
    lang: str | None = None,
    method: str | None = None,
    lowercase: bool = False,
) -> np.ndarray:
    """WOR for many pairs at once (see :func:`word_overlap_rate`); returns a float array."""
    tokenize = get_tokenizer(lang=lang, method=method, lowercase=lowercase)
    out = []
    append = out.append
    for a_text, b_text in zip(texts1, texts2, strict=True):
        a = set(tokenize(a_text))
        b = set(tokenize(b_text))
        union = len(a | b)
        append(len(a & b) / union if union else 0.0)
    return np.asarray(out, dtype=np.float64)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: spreads the rolling hash over all 64 bits."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


class CharNgramSimilarity:
    """Cosine similarity of character n-gram vectors, TF or TF-IDF, for many pairs.

    Args:
        ngram_range: (min_n, max_n), inclusive.
        analyzer: ``char_wb`` (n-grams inside word boundaries, words padded with a space) or
            ``char`` (n-grams over the whole text), as in scikit-learn.
        use_idf: weight by smoothed inverse document frequency learnt in :meth:`fit`
            (``idf = ln((1 + N) / (1 + df)) + 1``); requires ``fit``.
        sublinear_tf: replace tf by ``1 + ln(tf)``.
        lowercase: lowercase before extracting n-grams.
        chunk_size: pairs processed at once. Memory is about 50 bytes per n-gram occurrence
            (~30 KB per pair of tweets); the default keeps a chunk's sort inside the CPU cache,
            which is faster than larger chunks. Raise it only for very short texts.

    Example:
        >>> sim = CharNgramSimilarity(ngram_range=(2, 4), use_idf=True)
        >>> _ = sim.fit(["a cat", "a dog", "the cat sat"])
        >>> round(float(sim.score(["a cat"], ["a cat"])[0]), 6)
        1.0
    """

    def __init__(
        self,
        ngram_range: tuple[int, int] = (2, 4),
        analyzer: str = "char_wb",
        use_idf: bool = False,
        sublinear_tf: bool = False,
        lowercase: bool = True,
        chunk_size: int = 1_000,
    ) -> None:
        self.ngram_range = ngram_range
        self.analyzer = analyzer
        self.use_idf = use_idf
        self.sublinear_tf = sublinear_tf
        self.lowercase = lowercase
        self.chunk_size = chunk_size

    def _check(self) -> tuple[int, int]:
        min_n, max_n = self.ngram_range
        if not 1 <= min_n <= max_n:
            raise ParakitError(Errors.E303_invalid_ngram_range.format(ngram_range=self.ngram_range))
        if self.analyzer not in ("char", "char_wb"):
            raise ParakitError(Errors.E303_analyzer_must_char.format(analyzer=self.analyzer))
        if self.chunk_size < 1 or self.chunk_size > (1 << _DOC_BITS) // 2:
            raise ParakitError(
                Errors.E303_chunk_size_must.format(v_1_doc_bits_2=(1 << _DOC_BITS) // 2)
            )
        return min_n, max_n

    # -- n-gram extraction -------------------------------------------------------------------
    def _prepare(self, texts: Sequence[str]) -> list[str]:
        """Apply scikit-learn's preprocessing; for ``char_wb`` pad every word with a space, so
        that the text becomes the concatenation of its padded words (`` w1  w2 ``)."""
        if self.analyzer == "char_wb":
            if self.lowercase:
                return [
                    f" {'  '.join(words)} " if (words := t.lower().split()) else "" for t in texts
                ]
            return [f" {'  '.join(words)} " if (words := t.split()) else "" for t in texts]
        sub = _WHITE_SPACES.sub
        if self.lowercase:
            return [sub(" ", t.lower()) for t in texts]
        return [sub(" ", t) for t in texts]

    def _keys(self, texts: Sequence[str]) -> np.ndarray:
        """Sorted 64-bit keys ``hash << 20 | text index`` of every n-gram occurrence."""
        min_n, max_n = self._check()
        prepared = self._prepare(texts)
        joined = "".join(prepared)
        if not joined:
            return np.empty(0, dtype=np.uint64)
        text_lengths = np.fromiter(map(len, prepared), dtype=np.int64, count=len(prepared))
        codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
        total = codes.size
        position = np.arange(total)
        char_owner = np.repeat(np.arange(len(prepared), dtype=np.uint64), text_lengths)
        if self.analyzer == "char_wb":
            # a segment (padded word) starts at a space that follows a space or the start
            is_start = codes == 32
            is_start[1:] &= codes[:-1] == 32
            seg_starts = np.flatnonzero(is_start)
        else:
            # a segment is a whole text
            seg_starts = np.cumsum(text_lengths) - text_lengths
            seg_starts = seg_starts[text_lengths > 0]
        seg_ends = np.append(seg_starts[1:], total)
        seg_lengths = seg_ends - seg_starts
        char_seg = np.repeat(np.arange(seg_starts.size), seg_lengths)
        room = seg_ends[char_seg] - position  # chars left in the segment from here
        parts: list[np.ndarray] = []
        rolling = np.zeros(total, dtype=np.uint64)
        for n in range(1, max_n + 1):
            # rolling[i] = hash of codes[i : i + n]
            usable = total - n + 1
            if usable <= 0:
                break
            rolling = rolling[:usable] * _MULT + codes[n - 1 : n - 1 + usable]
            if n < min_n:
                continue
            valid = room[:usable] >= n
            hashed = _mix(rolling[valid] ^ _salt(n))
            parts.append((hashed & ~_DOC_MASK) | char_owner[:usable][valid])
        if self.analyzer == "char_wb":
            # scikit-learn counts a padded word shorter than min_n once, as its own gram
            short = seg_lengths < min_n
            for length in np.unique(seg_lengths[short]):
                pick = seg_starts[short & (seg_lengths == length)]
                h = np.zeros(pick.size, dtype=np.uint64)
                for offset in range(int(length)):
                    h = h * _MULT + codes[pick + offset]
                hashed = _mix(h ^ _salt(int(length)))
                parts.append((hashed & ~_DOC_MASK) | char_owner[pick])
        if not parts:
            return np.empty(0, dtype=np.uint64)
        keys = np.concatenate(parts)
        keys.sort()
        return keys

    @staticmethod
    def _count(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Unique keys of a sorted array and their counts."""
        if keys.size == 0:
            return keys, np.empty(0, dtype=np.float64)
        starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
        counts = np.diff(np.append(starts, keys.size)).astype(np.float64)
        return keys[starts], counts

    def _weights(self, unique: np.ndarray, counts: np.ndarray) -> np.ndarray:
        tf = 1.0 + np.log(counts) if self.sublinear_tf else counts
        if not self.use_idf:
            return tf
        grams = unique & ~_DOC_MASK
        pos = np.searchsorted(self.vocabulary_, grams)
        pos_clipped = np.minimum(pos, max(self.vocabulary_.size - 1, 0))
        known = (self.vocabulary_.size > 0) & (self.vocabulary_[pos_clipped] == grams)
        idf = np.where(known, self.idf_[pos_clipped], 0.0)  # unseen n-grams: no feature
        return tf * idf

    # -- public API ---------------------------------------------------------------------------
    def fit(self, texts: Iterable[str]) -> CharNgramSimilarity:
        """Learn document frequencies (needed when ``use_idf``); returns ``self``."""
        self._check()
        vocabulary = np.empty(0, dtype=np.uint64)
        df = np.empty(0, dtype=np.float64)
        n_docs = 0
        for chunk in chunked(texts, self.chunk_size * 2):
            n_docs += len(chunk)
            unique, _ = self._count(self._keys(chunk))
            grams = np.sort(unique & ~_DOC_MASK)
            grams, counts = self._count(grams)
            merged = np.concatenate((vocabulary, grams))
            weights = np.concatenate((df, counts))
            order = np.argsort(merged, kind="stable")
            merged, weights = merged[order], weights[order]
            vocabulary, first = np.unique(merged, return_index=True)
            df = np.add.reduceat(weights, first) if merged.size else weights
        self.vocabulary_ = vocabulary
        self.df_ = df
        self.n_documents_ = n_docs
        self.idf_ = np.log((1.0 + n_docs) / (1.0 + df)) + 1.0
        return self

    def score(
        self, texts1: Sequence[str], texts2: Sequence[str], progress: bool = False
    ) -> np.ndarray:
        """Cosine similarity of each ``(texts1[i], texts2[i])``; 0 where a text has no n-gram.

        Args:
            texts1, texts2: equally long sequences of texts.
            progress: show a progress bar.
        """
        if len(texts1) != len(texts2):
            raise ParakitError(
                Errors.E304_texts_texts_differ.format(n_texts1=len(texts1), n_texts2=len(texts2))
            )
        if self.use_idf and not hasattr(self, "idf_"):
            raise ParakitError(Errors.E305_use_idf_true)
        out = np.empty(len(texts1), dtype=np.float64)
        starts = range(0, len(texts1), self.chunk_size)
        iterator: Iterable[int] = starts
        if progress:
            from tqdm.auto import tqdm

            iterator = tqdm(starts, desc="char n-gram cosine", unit="chunk")
        for start in iterator:
            end = min(start + self.chunk_size, len(texts1))
            out[start:end] = self._score_chunk(texts1[start:end], texts2[start:end])
        return out

    def _score_chunk(self, texts1: Sequence[str], texts2: Sequence[str]) -> np.ndarray:
        n = len(texts1)
        u1, c1 = self._count(self._keys(texts1))
        u2, c2 = self._count(self._keys(texts2))
        w1, w2 = self._weights(u1, c1), self._weights(u2, c2)
        doc1 = (u1 & _DOC_MASK).astype(np.int64)
        doc2 = (u2 & _DOC_MASK).astype(np.int64)
        norm1 = np.sqrt(np.bincount(doc1, w1 * w1, minlength=n))
        norm2 = np.sqrt(np.bincount(doc2, w2 * w2, minlength=n))
        dot = np.zeros(n, dtype=np.float64)
        if u1.size and u2.size:
            pos = np.searchsorted(u1, u2)
            pos_clipped = np.minimum(pos, u1.size - 1)
            shared = u1[pos_clipped] == u2
            dot = np.bincount(doc2[shared], w1[pos_clipped[shared]] * w2[shared], minlength=n)
        denominator = norm1 * norm2
        with np.errstate(invalid="ignore", divide="ignore"):
            cosine = np.where(denominator > 0, dot / np.where(denominator > 0, denominator, 1), 0.0)
        return np.clip(cosine, 0.0, 1.0)

    def get_params(self) -> dict[str, Any]:
        """The constructor arguments (scikit-learn convention)."""
        return {
            "ngram_range": self.ngram_range,
            "analyzer": self.analyzer,
            "use_idf": self.use_idf,
            "sublinear_tf": self.sublinear_tf,
            "lowercase": self.lowercase,
            "chunk_size": self.chunk_size,
        }

    def signature(self) -> str:
        """A reproducibility signature of the settings (printed with reported scores)."""
        kind = "tfidf" if self.use_idf else "tf"
        return (
            f"{kind}:{self.analyzer}:{self.ngram_range[0]}-{self.ngram_range[1]}"
            f"|sublinear:{self.sublinear_tf}|lc:{self.lowercase}"
        )


def char_ngram_vectorizer(
    ngram_range: tuple[int, int] = (2, 4), analyzer: str = "char_wb", **options: Any
) -> Any:
    """The char n-gram TF-IDF vectors (scikit-learn's ``TfidfVectorizer``, float32, rows
    L2-normalised) behind every char n-gram *vector* in parakit: document alignment, nearest
    negatives, the TF-IDF encoder. :class:`CharNgramSimilarity` scores aligned pairs without
    building vectors; ``options`` go to ``TfidfVectorizer`` (``sublinear_tf``, ``max_features``,
    ``lowercase``, ``use_idf``, ``dtype``...)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    if analyzer not in ("char", "char_wb"):
        raise ParakitError(Errors.E303_analyzer_must_char.format(analyzer=analyzer))
    options.setdefault("dtype", np.float32)
    return TfidfVectorizer(analyzer=analyzer, ngram_range=ngram_range, **options)


def char_ngram_cosine(
    texts1: Sequence[str],
    texts2: Sequence[str],
    ngram_range: tuple[int, int] = (2, 4),
    analyzer: str = "char_wb",
    use_idf: bool = False,
    fit_texts: Iterable[str] | None = None,
    **options: Any,
) -> np.ndarray:
    """One-call TF (default) or TF-IDF char n-gram cosine; TF-IDF is fitted on ``fit_texts``
    (default: all texts of both sides)."""
    sim = CharNgramSimilarity(
        ngram_range=ngram_range, analyzer=analyzer, use_idf=use_idf, **options
    )
    if use_idf:
        sim.fit(fit_texts if fit_texts is not None else [*texts1, *texts2])
    return sim.score(texts1, texts2)


def similarity_bins(
    values: np.ndarray, n_bins: int, low: float = 0.0, high: float = 1.0
) -> np.ndarray:
    """Bin index of each value for ``n_bins`` equal-width bins over [low, high] (the top edge
    belongs to the last bin; a value on an inner edge to the bin that starts there).

    Example:
        >>> similarity_bins([0.3, 0.15, 1.0], 10).tolist()
        [3, 1, 9]
    """
    if n_bins < 1:
        raise ParakitError(Errors.E303_bins_must_least)
    # floor((v - low) * n / (high - low)) with wor_bin_index's tolerance: dividing by the width
    # instead puts a value on an edge one bin low (0.3 / 0.1 < 3)
    scaled = (np.asarray(values, dtype=np.float64) - low) * n_bins / (high - low)
    return np.clip(np.floor(scaled + 1e-9), 0, n_bins - 1).astype(np.int64)
