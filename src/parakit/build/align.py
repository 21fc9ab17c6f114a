"""Document alignment by TF-IDF cosine of character n-grams inside word boundaries (T1).

The Turku corpus aligns documents (subtitle versions, news articles, forum messages) with
scikit-learn ``TfidfVectorizer(analyzer="char_wb", ngram_range=(4, 4), max_features=200_000,
sublinear_tf=True)`` document vectors and keeps pairs whose cosine lies inside a band: too
similar pairs are near-identical texts, too dissimilar ones are misalignments. The band
``[low, high]`` is yours to set (the paper found it by grid search and human judgement).

The output of every aligner in :mod:`parakit.build` is a :class:`~parakit.schema.PairSet` of
*document pairs*: each pair's ``text1`` / ``text2`` are the two whole documents, ``span1`` /
``span2`` cover them entirely, and the documents are attached to the set, so the pair set can
go straight into the extraction tool of :mod:`parakit.annotate`.

Example:
    >>> from parakit.schema import Document
    >>> docs = [Document("a", "The cat sat on the mat."), Document("b", "A cat sat on a mat."),
    ...         Document("c", "Stock markets fell sharply today.")]
    >>> aligner = DocumentAligner(low=0.2, high=0.95).fit([d.text for d in docs])
    >>> [(p.doc1.id, p.doc2.id) for p in aligner.align(docs)]
    [('a', 'b')]
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from parakit.build.documents import SkipCounter, drop_empty
from parakit.errors import Errors, ParakitError
from parakit.schema import Document, Pair, PairSet, Span


@dataclass(frozen=True)
class DocumentPair:
    """Two aligned documents and their similarity."""

    doc1: Document
    doc2: Document
    similarity: float
    metadata: dict[str, Any] = field(default_factory=dict)


class DocumentAligner:
    """TF-IDF char n-gram document vectors and cosine similarity in a band (T1).

    Args:
        low, high: keep pairs with ``low <= cosine <= high``.
        analyzer: ``char_wb`` (n-grams inside word boundaries, the paper's) or ``char``.
        ngram_range: n-gram lengths; the paper uses 4-grams.
        max_features: vocabulary size cap (the paper's 200K).
        sublinear_tf: ``1 + log(tf)`` (the paper's).
        lowercase: lowercase before extracting n-grams.
        block_size: candidate pairs are scored in batches of ``10 * block_size``.

    Example:
        >>> a = DocumentAligner().fit(["one two three", "one two four"])
        >>> round(float(a.similarity(["one two three"], ["one two three"])[0]), 3)
        1.0
    """

    def __init__(
        self,
        low: float = 0.0,
        high: float = 1.0,
        analyzer: str = "char_wb",
        ngram_range: tuple[int, int] = (4, 4),
        max_features: int | None = 200_000,
        sublinear_tf: bool = True,
        lowercase: bool = True,
        block_size: int = 2_000,
    ) -> None:
        self.low = low
        self.high = high
        self.analyzer = analyzer
        self.ngram_range = ngram_range
        self.max_features = max_features
        self.sublinear_tf = sublinear_tf
        self.lowercase = lowercase
        self.block_size = block_size

    def _check_band(self) -> None:
        if not 0.0 <= self.low <= self.high <= 1.0:
            raise ParakitError(
                Errors.E500_similarity_band_must.format(low=self.low, high=self.high)
            )

    def fit(self, texts: Iterable[str]) -> DocumentAligner:
        """Learn the vocabulary and idf from ``texts`` (all documents of the collection)."""
        from parakit.text.similarity import char_ngram_vectorizer

        self._check_band()
        texts = list(texts)
        if not any(t.strip() for t in texts):
            raise ParakitError(Errors.E501_fit_aligner_every)
        self.vectorizer_ = char_ngram_vectorizer(
            self.ngram_range,
            self.analyzer,
            max_features=self.max_features,
            sublinear_tf=self.sublinear_tf,
            lowercase=self.lowercase,
        ).fit(texts)
        return self

    def transform(self, texts: Sequence[str]) -> Any:
        """L2-normalised sparse document vectors (rows)."""
        if not hasattr(self, "vectorizer_"):
            raise ParakitError(Errors.E500_documentaligner_fitted_call)
        return self.vectorizer_.transform(list(texts))

    def similarity(self, texts1: Sequence[str], texts2: Sequence[str]) -> np.ndarray:
        """Cosine of each ``(texts1[i], texts2[i])``."""
        if len(texts1) != len(texts2):
            raise ParakitError(Errors.E500_texts_texts_differ)
        if not len(texts1):
            return np.empty(0, dtype=np.float64)
        a, b = self.transform(texts1), self.transform(texts2)
        # float32 rows: a text's cosine with itself can sum to 1.0000001 and leave [low, 1]
        return np.clip(np.asarray(a.multiply(b).sum(axis=1), dtype=np.float64).ravel(), 0.0, 1.0)

    def in_band(self, similarity: np.ndarray | float) -> np.ndarray:
        """Whether each similarity lies inside ``[low, high]``."""
        self._check_band()
        sim = np.asarray(similarity)
        return (sim >= self.low) & (sim <= self.high)

    def align(
        self,
        documents: Sequence[Document],
        key: Callable[[Document], Any] | None = None,
        candidates: Iterable[tuple[int, int]] | None = None,
        skips: SkipCounter | None = None,
    ) -> list[DocumentPair]:
        """Document pairs inside the band.

        Args:
            documents: the collection.
            key: only documents with the same ``key(doc)`` are compared (``None``: all pairs);
                documents whose key is ``None`` are never paired.
            candidates: explicit ``(i, j)`` index pairs to score instead of ``key``.
            skips: receives ``empty-document`` counts.

        Returns:
            pairs in band, most similar first.
        """
        skips = skips if skips is not None else SkipCounter()
        documents = drop_empty(documents, skips)
        if not hasattr(self, "vectorizer_"):
            self.fit([d.text for d in documents])
        if candidates is None:
            candidates = _candidate_pairs(documents, key)
        out: list[DocumentPair] = []
        batch: list[tuple[int, int]] = []
        for pair in itertools.chain(candidates, [None]):
            if pair is not None:
                batch.append(pair)
            if batch and (pair is None or len(batch) >= self.block_size * 10):
                sims = self.similarity(
                    [documents[i].text for i, _ in batch], [documents[j].text for _, j in batch]
                )
                keep = self.in_band(sims)
                out.extend(
                    DocumentPair(documents[i], documents[j], float(s))
                    for (i, j), s, k in zip(batch, sims, keep, strict=True)
                    if k
                )
                batch = []
        out.sort(key=lambda p: -p.similarity)
        return out


def _candidate_pairs(
    documents: Sequence[Document], key: Callable[[Document], Any] | None
) -> Iterable[tuple[int, int]]:
    if key is None:
        return itertools.combinations(range(len(documents)), 2)
    groups: dict[Any, list[int]] = {}
    for index, doc in enumerate(documents):
        value = key(doc)
        if value is not None:
            groups.setdefault(value, []).append(index)
    return itertools.chain.from_iterable(
        itertools.combinations(members, 2) for members in groups.values()
    )


def document_pairs_to_pairset(
    pairs: Iterable[DocumentPair],
    source: str | None = None,
    name: str | None = None,
    lang: str | None = None,
    group: Callable[[DocumentPair], str | None] | None = None,
    metadata: dict[str, Any] | None = None,
) -> PairSet:
    """Document pairs as a :class:`PairSet` ready for the extraction tool.

    Each pair's texts are the whole documents and its spans cover them; the pair id is
    ``"<doc1 id>|<doc2 id>"``, ``metadata["similarity"]`` holds the cosine.
    """
    out: list[Pair] = []
    documents: dict[str, Document] = {}
    for dp in pairs:
        documents[dp.doc1.id] = dp.doc1
        documents[dp.doc2.id] = dp.doc2
        out.append(
            Pair(
                id=f"{dp.doc1.id}|{dp.doc2.id}",
                text1=dp.doc1.text,
                text2=dp.doc2.text,
                span1=Span(dp.doc1.id, 0, len(dp.doc1.text)),
                span2=Span(dp.doc2.id, 0, len(dp.doc2.text)),
                group=group(dp) if group else None,
                source=source,
                metadata={"similarity": round(dp.similarity, 6), **dp.metadata},
            )
        )
    return PairSet(
        out,
        scheme="binary",
        documents=documents,
        name=name,
        lang=lang,
        metadata=dict(metadata or {}),
    )
