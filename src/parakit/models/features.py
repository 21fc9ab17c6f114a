"""Pair features for the baselines: lexical overlap, machine-translation metrics, embeddings.

* lexical (J7, Q7): word overlap rate (Jaccard of token sets), character n-gram TF / TF-IDF
  cosine, binary bag-of-words vectors (:class:`BinaryBow`) and their cosine;
* averaged word vectors (Q7): word2vec trained on the corpus with gensim (:class:`WordVectors`);
* MT metrics (Q7): BLEU n-gram precisions and score (sacrebleu), TER, chrF, a METEOR-like
  unigram F-mean, token edit distance, length ratio;
* pair features (Q7 setup): ``[|u - v|, u * v]`` of two sentence vectors, dense
  (:func:`embedding_pair_features`) or sparse (:func:`sparse_pair_features`).

Tokenisation and lexical similarity come from :mod:`parakit.text`.

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
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import Errors, require_extra
from parakit.text import CharNgramSimilarity
from parakit.text import word_overlap_rates as _text_wor
from parakit.text.tokenize import get_tokenizer


def tokenize(text: str, lang: str | None = None) -> list[str]:
    """Lower-cased tokens of ``text`` (:func:`parakit.text.tokenize`; Japanese via fugashi)."""
    return get_tokenizer(lang=lang, lowercase=True)(text)


class Tokenizer:
    """A picklable tokenizer callable (vectorisers saved with a model must be picklable)."""

    def __init__(self, lang: str | None = None) -> None:
        self.lang = lang

    def __call__(self, text: str) -> list[str]:
        return tokenize(text, self.lang)


# -- lexical similarities ---------------------------------------------------------------------


def word_overlap_rates(
    texts1: Sequence[str], texts2: Sequence[str], lang: str | None = None
) -> np.ndarray:
    """Word overlap rate (WOR) of each pair: ``|A ∩ B| / |A ∪ B|`` of the lower-cased token
    sets (J4)."""
    return _text_wor(texts1, texts2, lang=lang, lowercase=True)


def _rowwise_cosine(m1: Any, m2: Any) -> np.ndarray:
    """Cosine of matching rows of two L2-normalised sparse matrices."""
    return np.asarray(m1.multiply(m2).sum(axis=1)).ravel()


# the name saved baseline models (pickles) written before the class moved to parakit.text
CharNgramCosine = CharNgramSimilarity


class BowCosine:
    """Cosine similarity of binary bag-of-words vectors (Q7 reference system).

    Args:
        lang: language of the texts (tokenisation).
    """

    def __init__(self, lang: str | None = None) -> None:
        self.lang = lang

    def fit(self, texts: Sequence[str]) -> BowCosine:
        from sklearn.feature_extraction.text import TfidfVectorizer

        # binary counts, no idf, l2 norm = cosine of binary vectors
        self.vectorizer_ = TfidfVectorizer(
            tokenizer=Tokenizer(self.lang),
            token_pattern=None,
            lowercase=False,
            binary=True,
            use_idf=False,
            norm="l2",
        ).fit(list(texts))
        return self

    def score(self, texts1: Sequence[str], texts2: Sequence[str]) -> np.ndarray:
        return _rowwise_cosine(
            self.vectorizer_.transform(list(texts1)), self.vectorizer_.transform(list(texts2))
        )


class BinaryBow:
    """Binary bag-of-words vectors: 1 for each vocabulary word present in the sentence (Q7).

    The vocabulary is the lower-cased tokens of the texts given to :meth:`fit` (words seen in
    fewer than ``min_df`` texts are dropped); unknown words are ignored.

    Args:
        lang: language of the texts (tokenisation).
        min_df: minimum number of fitting texts a word must occur in.

    Example:
        >>> bow = BinaryBow().fit(["a b", "b c"])
        >>> bow.transform(["a a b"]).toarray().tolist()
        [[1.0, 1.0, 0.0]]
    """

    def __init__(self, lang: str | None = None, min_df: int = 1) -> None:
        self.lang = lang
        self.min_df = min_df

    def fit(self, texts: Sequence[str]) -> BinaryBow:
        from sklearn.feature_extraction.text import CountVectorizer

        self.vectorizer_ = CountVectorizer(
            tokenizer=Tokenizer(self.lang),
            token_pattern=None,
            lowercase=False,
            binary=True,
            min_df=self.min_df,
            dtype=np.float64,
        ).fit(list(texts))
        return self

    def transform(self, texts: Sequence[str]) -> Any:
        """``(n, vocabulary size)`` sparse CSR matrix of 0/1."""
        return self.vectorizer_.transform(list(texts))

    @property
    def vocabulary(self) -> list[str]:
        return list(self.vectorizer_.get_feature_names_out())


def sparse_pair_features(u: Any, v: Any) -> Any:
    """``[|u − v|, u * v]`` for rows of two sparse matrices (CSR result; symmetric in u, v).

    For binary vectors ``|u − v|`` marks the words in one sentence only and ``u * v`` the
    shared words.

    Example:
        >>> from scipy.sparse import csr_matrix
        >>> sparse_pair_features(csr_matrix([[1, 1, 0]]), csr_matrix([[0, 1, 1]])).toarray()
        array([[1, 0, 1, 0, 1, 0]])
    """
    from scipy.sparse import csr_matrix, hstack

    u, v = csr_matrix(u), csr_matrix(v)
    if u.shape != v.shape:
        raise ValueError(f"vector shapes differ: {u.shape} vs {v.shape}")
    return hstack([abs(u - v), u.multiply(v)], format="csr")


def _stable_hash(text: str) -> int:
    """A hash that does not change between processes (Python's ``hash`` of str does), so
    gensim's initial word vectors, and the trained vectors, depend on the seed alone."""
    import zlib

    return zlib.crc32(text.encode("utf-8"))


class WordVectors:
    """Sentence vectors as the average of word vectors (gensim; Q7).

    With ``pretrained`` (the paper's setup), the vectors are read from a word2vec or GloVe
    file: word2vec text (a ``count dim`` header line), GloVe text (no header), word2vec
    binary (``.bin``) or a gensim ``KeyedVectors`` file (``.kv``), each optionally gzipped.
    Without it, word2vec is trained on the texts given to :meth:`fit` (the training pairs,
    plus any unlabelled sentences of the same domain), deterministically for a seed (one
    worker thread, a stable hash).

    Args:
        pretrained: path of a pretrained vectors file; None trains word2vec on the texts.
        limit: read only the first ``limit`` vectors of ``pretrained`` (the most frequent
            words in the usual files), to bound memory.
        vector_size: dimensions of the word vectors (ignored with ``pretrained``).
        window: context window (words on each side).
        min_count: words rarer than this are dropped.
        epochs: passes over the texts.
        sg: 1 skip-gram, 0 CBOW.
        seed: seed of the initial vectors and the sampling.
        lang: language of the texts (tokenisation; word2vec trained here is lower-cased,
            pretrained vectors are looked up with case kept: :meth:`lookup`).

    Example:
        >>> wv = WordVectors(vector_size=4, epochs=1).fit(["a b", "b c"])
        >>> wv.encode(["a b", "zzz"]).shape
        (2, 4)
    """

    def __init__(
        self,
        vector_size: int = 100,
        window: int = 5,
        min_count: int = 1,
        epochs: int = 10,
        sg: int = 1,
        seed: int = 0,
        lang: str | None = None,
        pretrained: str | None = None,
        limit: int | None = None,
    ) -> None:
        self.pretrained = pretrained
        self.limit = limit
        self.vector_size = vector_size
        self.window = window
        self.min_count = min_count
        self.epochs = epochs
        self.sg = sg
        self.seed = seed
        self.lang = lang

    def fit(self, texts: Sequence[str]) -> WordVectors:
        """Read the pretrained vectors, or train word2vec on ``texts``; returns ``self``."""
        Word2Vec = require_extra(
            "gensim.models", extra="models", needed_for="averaged word vectors"
        ).Word2Vec
        if self.pretrained is not None:
            self.vectors_ = load_word_vectors(self.pretrained, limit=self.limit)
            self.vector_size = int(self.vectors_.vector_size)
            return self
        tokens = [tokenize(t, self.lang) for t in dict.fromkeys(texts)]
        model = Word2Vec(
            sentences=[t for t in tokens if t],
            vector_size=self.vector_size,
            window=self.window,
            min_count=self.min_count,
            epochs=self.epochs,
            sg=self.sg,
            seed=self.seed,
            workers=1,
            hashfxn=_stable_hash,
        )
        self.vectors_ = model.wv  # KeyedVectors: picklable, no training state
        return self

    def lookup(self, token: str) -> list[int]:
        """Rows of ``token``'s vectors: the token as written, else lower-cased, else split
        into a word and its clitic (``it's`` → ``it`` + ``'s``, ``don't`` → ``do`` + ``n't``,
        each part looked up the same way). Pretrained files keep case (GoogleNews has both
        ``US`` and ``us``); vectors trained here are lower-cased, so the lower-case fallback
        finds them."""
        index = self.vectors_.key_to_index
        token = token.replace("’", "'")
        for key in (token, token.lower()):
            if key in index:
                return [index[key]]
        match = _CLITIC.match(token)
        if match is None:
            return []
        return [row for part in match.groups() for row in self.lookup(part)]

    def tokens(self, text: str) -> list[str]:
        """The tokens of ``text`` as :meth:`encode` looks them up (case kept)."""
        return get_tokenizer(lang=self.lang)(text)

    def coverage(self, texts: Sequence[str]) -> float:
        """Share of the word tokens of ``texts`` (tokens with a letter or digit) that have a
        vector (:meth:`lookup`)."""
        words = [t for text in texts for t in self.tokens(text) if any(c.isalnum() for c in t)]
        return sum(bool(self.lookup(t)) for t in words) / len(words) if words else 0.0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(n, vector_size)`` float32: the mean vector of each text's known words (zeros
        when none is known; words found by :meth:`lookup`)."""
        out = np.zeros((len(texts), self.vector_size), dtype=np.float32)
        for row, text in enumerate(texts):
            known = [r for token in self.tokens(text) for r in self.lookup(token)]
            if known:
                out[row] = self.vectors_.vectors[known].mean(axis=0)
        return out


#: a word and its English clitic: it's, we're, I've, they'll, she'd, I'm, don't (do + n't)
_CLITIC = re.compile(r"^(.+?)(n't|'s|'re|'ve|'ll|'d|'m|')$", re.IGNORECASE)


def load_word_vectors(path: str | Path, limit: int | None = None) -> Any:
    """Pretrained word vectors as gensim ``KeyedVectors`` (see :class:`WordVectors` for the
    formats; the format is told by the name and the first line, not assumed).

    Raises:
        DataFormatError: E103 when the file is missing, E104 when it is not a vectors file
            of a known format (the message names the file and what was found).
    """
    import gzip

    from gensim.models import KeyedVectors

    from parakit.errors import DataFormatError

    path = Path(path)
    if not path.is_file():
        raise DataFormatError(Errors.E103_word_vectors_file.format(path=path))
    name = path.name.removesuffix(".gz")
    try:
        if name.endswith(".kv"):
            return KeyedVectors.load(str(path))
        if name.endswith(".bin"):
            return KeyedVectors.load_word2vec_format(str(path), binary=True, limit=limit)
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
            first = handle.readline().split()
        # word2vec text starts with "count dim"; GloVe starts with a word and its vector
        has_header = len(first) == 2 and all(f.isdigit() for f in first)
        if not has_header and len(first) < 2:
            raise ValueError(f"line 1 holds {len(first)} field(s), not a word and its vector")
        return KeyedVectors.load_word2vec_format(
            str(path), binary=False, no_header=not has_header, limit=limit
        )
    except DataFormatError:
        raise
    except (ValueError, UnicodeDecodeError, EOFError, OSError) as exc:
        raise DataFormatError(
            Errors.E104_word_vec_glove.format(path=path, name=type(exc).__name__, exc=exc)
        ) from None


# -- machine-translation metrics --------------------------------------------------------------

MT_FEATURE_NAMES: tuple[str, ...] = (
    "bleu_p1",
    "bleu_p2",
    "bleu_p3",
    "bleu_p4",
    "bleu",
    "bleu_p1_rev",
    "bleu_p2_rev",
    "bleu_p3_rev",
    "bleu_p4_rev",
    "bleu_rev",
    "ter",
    "chrf",
    "meteor_fmean",
    "edit_distance",
    "edit_distance_norm",
    "length_ratio",
)


def edit_distance(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Levenshtein distance between two sequences (tokens or characters).

    Uses rapidfuzz when installed (same exact result, faster), else dynamic programming.
    """
    try:
        from rapidfuzz.distance import Levenshtein
    except ImportError:
        Levenshtein = None
    if Levenshtein is not None:
        return int(Levenshtein.distance(a, b))
    previous = list(range(len(b) + 1))
    for i, item_a in enumerate(a, start=1):
        current = [i]
        for j, item_b in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (item_a != item_b))
            )
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


def mt_features(
    texts1: Sequence[str], texts2: Sequence[str], lang: str | None = None
) -> tuple[np.ndarray, list[str]]:
    """Machine-translation-metric features of each pair (text1 as hypothesis, text2 as
    reference; BLEU also the other way round).

    Features of a pair are memoised (LRU, 200,000 pairs), so re-fitting on overlapping data
    (learning-rate or λ grids, noisy-label students) does not recompute them.

    Returns:
        ``(matrix of shape (n, len(MT_FEATURE_NAMES)), feature names)``.
    """
    rows = [_pair_mt_features(a, b, lang) for a, b in zip(texts1, texts2, strict=True)]
    return np.asarray(rows, dtype=np.float64).reshape(-1, len(MT_FEATURE_NAMES)), list(
        MT_FEATURE_NAMES
    )


@lru_cache(maxsize=1)
def _metrics() -> tuple[Any, Any, Any]:
    from sacrebleu.metrics import BLEU, CHRF, TER

    return BLEU(effective_order=True), CHRF(), TER()


@lru_cache(maxsize=200_000)
def _pair_mt_features(a: str, b: str, lang: str | None) -> tuple[float, ...]:
    bleu, chrf, ter = _metrics()
    forward = bleu.sentence_score(a, [b])
    backward = bleu.sentence_score(b, [a])
    tok_a, tok_b = tokenize(a, lang), tokenize(b, lang)
    distance = edit_distance(tok_a, tok_b)
    longest = max(len(tok_a), len(tok_b), 1)
    return (
        *(p / 100 for p in forward.precisions),
        forward.score / 100,
        *(p / 100 for p in backward.precisions),
        backward.score / 100,
        ter.sentence_score(a, [b]).score,
        chrf.sentence_score(a, [b]).score,
        meteor_fmean(tok_a, tok_b),
        float(distance),
        distance / longest,
        min(len(tok_a), len(tok_b)) / longest,
    )


# -- embedding features -----------------------------------------------------------------------


def embedding_pair_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``[|u − v|, u * v]`` for rows of two embedding matrices (symmetric in u and v)."""
    u = np.asarray(u, dtype=np.float32)
    v = np.asarray(v, dtype=np.float32)
    if u.shape != v.shape:
        raise ValueError(f"embedding shapes differ: {u.shape} vs {v.shape}")
    return np.hstack([np.abs(u - v), u * v])
