"""News article alignment in a sliding time window, and heading candidates (T3).

Two article streams (e.g. YLE and HS) are aligned by publication time — only articles at
most ``window_days`` (7) apart are compared — and by the TF-IDF char 4-gram cosine of their
bodies, kept inside a band. Bodies of aligned pairs go to manual extraction
(:func:`news_body_pairs`); headings of the aligned pairs are ranked so that *maximally similar
bodies with maximally dissimilar headings* come first and go straight to classification
(:func:`heading_candidates`).

Articles are JSON lines ``{"id", "source", "time" (ISO 8601), "heading", "body"}``.

Example:
    >>> import datetime as dt
    >>> t = dt.datetime(2020, 1, 1)
    >>> a = [Article("a1", "yle", t, "Storm hits coast", "A storm hit the coast on Monday.")]
    >>> b = [Article("b1", "hs", t + dt.timedelta(days=8), "Coast storm",
    ...              "A storm hit the coast on Monday.")]
    >>> align_news(a, b, DocumentAligner(low=0.0, high=1.0))
    []
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from parakit.build.align import DocumentAligner, DocumentPair, document_pairs_to_pairset
from parakit.build.documents import SkipCounter, iter_records
from parakit.errors import DataFormatError, Errors, ParakitError
from parakit.schema import Document, Pair, PairSet


@dataclass(frozen=True)
class Article:
    """A news article."""

    id: str
    source: str
    time: dt.datetime
    heading: str
    body: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AlignedArticles:
    """Two articles of different streams inside the window, with their body cosine."""

    a: Article
    b: Article
    body_similarity: float

    @property
    def days_apart(self) -> float:
        return abs((self.a.time - self.b.time).total_seconds()) / 86400.0


def _parse_time(value: Any, path: str | Path, line: int) -> dt.datetime:
    try:
        time = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise DataFormatError(
            Errors.E502_iso_time.format(value=value), path=path, line=line, field="time"
        ) from None
    if time.tzinfo is None:
        time = time.replace(tzinfo=dt.UTC)  # naive times are read as UTC
    return time


def read_articles(path: str | Path, skips: SkipCounter | None = None) -> list[Article]:
    """Read articles JSONL; articles with an empty body are skipped and counted."""
    skips = skips if skips is not None else SkipCounter()
    out = []
    for line, record in iter_records(path):
        if not isinstance(record, dict):
            raise DataFormatError(Errors.E502_expected_json_object, path=path, line=line)
        for key in ("id", "source", "time", "body"):
            if key not in record:
                raise DataFormatError(
                    Errors.E502_missing_field.format(key=key), path=path, line=line, field=key
                )
        body = str(record["body"] or "")
        if not body.strip():
            skips.skip("empty-document", f"{path} line {line}")
            continue
        extra = {
            k: v for k, v in record.items() if k not in ("id", "source", "time", "heading", "body")
        }
        out.append(
            Article(
                str(record["id"]),
                str(record["source"]),
                _parse_time(record["time"], path, line),
                str(record.get("heading") or ""),
                body,
                extra,
            )
        )
    return out


def align_news(
    articles_a: Sequence[Article],
    articles_b: Sequence[Article],
    aligner: DocumentAligner,
    window_days: float = 7.0,
    max_per_article: int | None = None,
) -> list[AlignedArticles]:
    """Pairs (a, b) with ``|time_a - time_b| <= window_days`` and body cosine in the band.

    Args:
        articles_a, articles_b: the two streams.
        aligner: band and vectoriser; fitted on all bodies here if not yet fitted.
        window_days: the sliding window (7 days in the paper).
        max_per_article: keep only the ``n`` most similar partners of each article of
            ``articles_a`` (``None``: all pairs in band).

    Returns:
        aligned pairs, highest body similarity first.
    """
    if window_days < 0:
        raise ParakitError(Errors.E500_window_days_must)
    if not articles_a or not articles_b:
        return []
    if not hasattr(aligner, "vectorizer_"):
        aligner.fit([x.body for x in [*articles_a, *articles_b]])
    window = dt.timedelta(days=window_days)
    b_sorted = sorted(articles_b, key=lambda x: x.time)
    b_times = [x.time for x in b_sorted]
    b_vectors = aligner.transform([x.body for x in b_sorted])
    a_sorted = sorted(articles_a, key=lambda x: x.time)
    out: list[AlignedArticles] = []
    block = max(1, aligner.block_size)
    for start in range(0, len(a_sorted), block):
        chunk = a_sorted[start : start + block]
        lo = bisect.bisect_left(b_times, chunk[0].time - window)
        hi = bisect.bisect_right(b_times, chunk[-1].time + window)
        if lo >= hi:
            continue
        sims = np.clip(
            (aligner.transform([x.body for x in chunk]) @ b_vectors[lo:hi].T).toarray(), 0.0, 1.0
        ).astype(np.float64)  # float32 rows: identical bodies can sum above 1.0
        for row, article in enumerate(chunk):
            # the exact window of this article inside the block's range
            first = bisect.bisect_left(b_times, article.time - window, lo, hi)
            last = bisect.bisect_right(b_times, article.time + window, lo, hi)
            cols = np.arange(first - lo, last - lo)
            values = sims[row, cols]
            keep = cols[aligner.in_band(values)]
            partners = [
                AlignedArticles(article, b_sorted[lo + c], float(sims[row, c])) for c in keep
            ]
            partners.sort(key=lambda p: -p.body_similarity)
            if max_per_article is not None:
                partners = partners[:max_per_article]
            out.extend(partners)
    out.sort(key=lambda p: -p.body_similarity)
    return out


def _doc(article: Article) -> Document:
    return Document(
        article.id,
        article.body,
        {
            "source": article.source,
            "time": article.time.isoformat(),
            "heading": article.heading,
            **article.metadata,
        },
    )


def news_body_pairs(
    aligned: Sequence[AlignedArticles], metadata: dict[str, Any] | None = None
) -> PairSet:
    """Aligned article bodies as document pairs for manual extraction."""
    return document_pairs_to_pairset(
        (
            DocumentPair(
                _doc(p.a), _doc(p.b), p.body_similarity, {"days_apart": round(p.days_apart, 4)}
            )
            for p in aligned
        ),
        source="news-bodies",
        metadata=metadata,
    )


def heading_candidates(
    aligned: Sequence[AlignedArticles],
    n: int | None = None,
    min_body_similarity: float = 0.0,
    body_weight: float = 1.0,
    heading_weight: float = 1.0,
    heading_aligner: DocumentAligner | None = None,
) -> PairSet:
    """Heading pairs ranked by ``body_weight * body_sim - heading_weight * heading_sim``.

    Maximally similar bodies with maximally dissimilar headings come first: these go to the
    classification tool directly. Pairs with an empty heading or identical headings are left
    out.

    Args:
        aligned: output of :func:`align_news`.
        n: keep the top ``n`` (``None``: all).
        min_body_similarity: drop pairs whose bodies are less similar.
        body_weight, heading_weight: weights of the ranking score.
        heading_aligner: vectoriser for headings (default: same settings as T1, fitted on
            the headings).
    """
    usable = [
        p
        for p in aligned
        if p.a.heading.strip()
        and p.b.heading.strip()
        and p.a.heading.strip() != p.b.heading.strip()
        and p.body_similarity >= min_body_similarity
    ]
    if not usable:
        return PairSet([], scheme="binary")
    heading_aligner = heading_aligner or DocumentAligner()
    if not hasattr(heading_aligner, "vectorizer_"):
        heading_aligner.fit([h for p in usable for h in (p.a.heading, p.b.heading)])
    heading_sims = heading_aligner.similarity(
        [p.a.heading for p in usable], [p.b.heading for p in usable]
    )
    scores = (
        body_weight * np.array([p.body_similarity for p in usable]) - heading_weight * heading_sims
    )
    order = np.argsort(-scores, kind="stable")
    if n is not None:
        order = order[:n]
    pairs = []
    for rank, index in enumerate(order, start=1):
        p = usable[index]
        pairs.append(
            Pair(
                id=f"{p.a.id}|{p.b.id}",
                text1=p.a.heading,
                text2=p.b.heading,
                source="news-headings",
                group=f"{p.a.id}|{p.b.id}",
                time=min(p.a.time, p.b.time).isoformat(),
                metadata={
                    "body_similarity": round(p.body_similarity, 6),
                    "heading_similarity": round(float(heading_sims[index]), 6),
                    "score": round(float(scores[index]), 6),
                    "rank": rank,
                    "days_apart": round(p.days_apart, 4),
                },
            )
        )
    return PairSet(pairs, scheme="binary")
