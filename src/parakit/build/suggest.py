"""Extraction assist: ranked candidate passage pairs for a document pair.

In the Turku extraction protocol an annotator reads two documents side by side and picks the
passages that say the same thing. :class:`PairSuggester` proposes such passage pairs, best
first, so the annotator can accept or skip them instead of searching:

1. **Units.** Each document is cut into sentences (:func:`sentence_spans`); subtitle lines are
   merged first: a line break ends a sentence only where the line ends a sentence (``.!?…``),
   or where the next line opens a dialogue turn (``- ...``). Candidate passages are windows of
   1 to ``max_window`` consecutive sentences.
2. **Similarity.** Each window pair gets a lexical similarity (TF-IDF cosine of char n-grams,
   :class:`parakit.text.similarity.CharNgramSimilarity`, idf fitted on the sentences of the
   two documents) and, with an ``encoder``, an embedding cosine; ``similarity`` is their
   weighted mean.
3. **Alignment prior.** Documents that run in parallel (subtitle versions, news about one
   event) say things in the same order. A monotone path through the sentence similarity
   matrix (dynamic programming, :func:`monotone_path`) locates that order; a window pair gets
   ``prior = 1 - d / (band + 1)`` where ``d`` is its distance to the path in sentences
   (Chebyshev), and window pairs farther than ``band`` are not candidates at all.
4. **Selection.** ``match = similarity + prior_weight * prior``. With ``nms`` (non-maximum
   suppression) window pairs are taken greedily by ``match`` and a window pair is kept only
   when neither of its passages overlaps a passage already kept: this segments the two
   documents into non-overlapping passage pairs, copies included (so that a copied sentence
   stays a unit of its own instead of joining the window of its neighbour).
5. **Ranking.** The protocol skips verbatim copies, and annotators skip near-verbatim pairs
   too: ``score = match - copy_penalty * near_copy``, where ``near_copy`` is 1 for copies
   (equal texts after normalising case, punctuation and spacing, or a lexical cosine at or
   above ``copy_threshold``) and rises linearly from 0 at ``near_copy_start`` to 1 at
   ``copy_threshold``. Kept suggestions come first, by score; the suppressed ones follow, by
   score, so a caller that wants more suggestions than the kept ones still gets a full ranking.
   Without ``nms`` the ranking is by score alone.

Everything is deterministic (no sampling; ties broken by position).

Example:
    >>> from parakit.schema import Document
    >>> a = Document("a", "The cat sat on the mat. It was raining. We went home early.")
    >>> b = Document("b", "A cat was sitting on a mat. Rain fell all day. We left home early.")
    >>> for s in suggest_pairs(a, b, max_window=1, limit=2):
    ...     print(s.text1, "|", s.text2)
    The cat sat on the mat. | A cat was sitting on a mat.
    We went home early. | We left home early.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from parakit.errors import Errors, SuggestError
from parakit.schema import Document, Pair, PairSet, Span
from parakit.text.sentences import split_sentences
from parakit.text.similarity import CharNgramSimilarity

__all__ = [
    "PairSuggester",
    "Suggestion",
    "evaluate_suggestions",
    "monotone_path",
    "sentence_spans",
    "suggest_for_pairs",
    "suggest_pairs",
    "window_spans",
]

_DIALOGUE_TURN = re.compile(r"(?<=[.!?…\"'»”’)\]])[ \t]*\n(?=[ \t]*[-–—])")
_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Suggestion:
    """One suggested passage pair.

    Attributes:
        span1, span2: the passages, character offsets into the two documents.
        text1, text2: their texts.
        score: the ranking score (higher is better).
        similarity: the weighted lexical/embedding similarity.
        lexical: char n-gram TF-IDF cosine.
        embedding: encoder cosine (``None`` without an encoder).
        prior: alignment prior in [0, 1] (1 on the path; 1 everywhere without alignment).
        copy: whether the pair is a verbatim copy.
        near_copy: how close to a copy in [0, 1] (1 for copies), the share of
            ``copy_penalty`` taken off the score.
        match: ``similarity + prior_weight * prior``, what non-maximum suppression selects by.
        suppressed: whether non-maximum suppression put it after the kept suggestions.
    """

    span1: Span
    span2: Span
    text1: str
    text2: str
    score: float
    similarity: float
    lexical: float
    embedding: float | None
    prior: float
    copy: bool
    near_copy: float = 0.0
    match: float = 0.0
    suppressed: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Plain data (one JSONL record of ``parakit build suggest``)."""
        return {
            "span1": self.span1.to_dict(),
            "span2": self.span2.to_dict(),
            "text1": self.text1,
            "text2": self.text2,
            "score": round(self.score, 6),
            "similarity": round(self.similarity, 6),
            "lexical": round(self.lexical, 6),
            "embedding": None if self.embedding is None else round(self.embedding, 6),
            "prior": round(self.prior, 6),
            "copy": self.copy,
            "near_copy": round(self.near_copy, 6),
            "match": round(self.match, 6),
            "suppressed": self.suppressed,
        }

    def to_pair(self, rank: int) -> Pair:
        """The suggestion as an unlabelled :class:`~parakit.schema.Pair` (id
        ``"<doc1>|<doc2>#<rank>"``, group ``"<doc1>|<doc2>"``, source ``suggest``; the scores
        and ``rank`` in ``metadata``), e.g. to write with :class:`parakit.io.jsonl.JsonlWriter`."""
        group = f"{self.span1.doc_id}|{self.span2.doc_id}"
        record = self.to_dict()
        keys = ("score", "match", "similarity", "lexical", "embedding", "prior", "near_copy")
        metadata = {k: record[k] for k in keys}
        metadata.update(copy=self.copy, suppressed=self.suppressed, rank=rank)
        return Pair(
            id=f"{group}#{rank}",
            text1=self.text1,
            text2=self.text2,
            span1=self.span1,
            span2=self.span2,
            group=group,
            source="suggest",
            metadata=metadata,
        )


# -- units -----------------------------------------------------------------------------------
def sentence_spans(text: str, lang: str | None = None) -> list[tuple[int, int]]:
    """Character spans ``(begin, end)`` of the sentences of ``text``, subtitle lines merged.

    Sentences come from :func:`parakit.text.sentences.split_sentences` (a line break is plain
    whitespace to it, so subtitle lines that do not end a sentence are merged with the next);
    a sentence is further cut where a line ending in sentence punctuation is followed by a
    dialogue-turn line (``- ...``). Spans exclude surrounding whitespace.

    Example:
        >>> text = "Hello there.\\nHow are\\nyou?\\n- Fine.\\n- Good."
        >>> [text[b:e] for b, e in sentence_spans(text)]
        ['Hello there.', 'How are\\nyou?', '- Fine.', '- Good.']
    """
    spans: list[tuple[int, int]] = []
    cursor = 0
    for sentence in split_sentences(text, lang=lang):
        begin = text.find(sentence, cursor)
        if begin < 0:  # split_sentences only strips, so this cannot happen; stay safe
            continue
        end = begin + len(sentence)
        cursor = end
        start = begin
        for match in _DIALOGUE_TURN.finditer(text, begin, end):
            spans.append((start, match.start()))
            start = match.end()
            while start < end and text[start].isspace():
                start += 1
        spans.append((start, end))
    return [(b, e) for b, e in spans if e > b]


def window_spans(
    sentences: Sequence[tuple[int, int]], max_window: int = 3
) -> list[tuple[int, int, int, int]]:
    """Windows of 1..``max_window`` consecutive sentences: ``(begin, end, first, stop)`` with
    character offsets ``[begin, end)`` and sentence indices ``[first, stop)``, ordered by
    ``first`` then size.

    Example:
        >>> window_spans([(0, 3), (4, 9), (10, 12)], max_window=2)
        [(0, 3, 0, 1), (0, 9, 0, 2), (4, 9, 1, 2), (4, 12, 1, 3), (10, 12, 2, 3)]
    """
    if max_window < 1:
        raise SuggestError(Errors.E511_max_window_must.format(max_window=max_window))
    out = []
    for first in range(len(sentences)):
        for size in range(1, max_window + 1):
            stop = first + size
            if stop > len(sentences):
                break
            out.append((sentences[first][0], sentences[stop - 1][1], first, stop))
    return out


def _normalise(text: str) -> str:
    return _NOT_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())


# -- alignment -------------------------------------------------------------------------------
def monotone_path(similarity: np.ndarray, gap: float = 0.1) -> list[tuple[int, int]]:
    """The best monotone alignment path through a similarity matrix.

    Dynamic programming over cells ``(i, j)`` with moves ``(1, 1)``, ``(1, 0)`` and ``(0, 1)``
    (one sentence may pair with several on the other side), maximising the sum of
    ``similarity[i, j] - gap`` over the cells the path visits; the path may start and end
    anywhere (a local alignment), so unrelated heads and tails of the documents stay off it.
    The gap is the similarity a cell needs to be worth visiting.

    Args:
        similarity: ``n x m`` matrix (rows: sentences of document 1).
        gap: the per-cell cost; larger gives shorter paths through only the clearest matches.

    Returns:
        the cells of the path, in order; empty when no cell beats ``gap``.

    Example:
        >>> sim = np.array([[0.9, 0.0, 0.0], [0.0, 0.8, 0.0], [0.0, 0.7, 0.0], [0.0, 0.0, 0.0]])
        >>> monotone_path(sim)
        [(0, 0), (1, 1), (2, 1)]
    """
    sim = np.asarray(similarity, dtype=np.float64)
    if sim.ndim != 2:
        raise SuggestError(Errors.E512_similarity_must_matrix)
    n, m = sim.shape
    if n == 0 or m == 0:
        return []
    gain = sim - gap
    best = np.full((n + 1, m + 1), -np.inf)
    move = np.zeros((n + 1, m + 1), dtype=np.int8)  # 0 start, 1 diagonal, 2 down, 3 right
    best[0, :] = 0.0
    best[:, 0] = 0.0
    for i in range(1, n + 1):
        row_gain = gain[i - 1]
        diag = best[i - 1, :-1]
        down = best[i - 1, 1:]
        # start fresh (0), come diagonally, or from above: all known before the row scan
        options = np.stack([np.zeros(m), diag, down])
        choice = options.argmax(axis=0)
        value = options.max(axis=0) + row_gain
        # moves from the left depend on the row itself: a scan (m is a few hundred)
        row = best[i]
        mv = move[i]
        for j in range(1, m + 1):
            v, c = value[j - 1], choice[j - 1]
            left = row[j - 1] + row_gain[j - 1]
            if j > 1 and left > v:
                v, c = left, 3
            row[j] = v
            mv[j] = c
    # the path ends at the best cell; a cell reached by a fresh start has move 0
    end = np.unravel_index(int(np.argmax(best[1:, 1:])), (n, m))
    if best[end[0] + 1, end[1] + 1] <= 0:
        return []
    i, j = int(end[0]) + 1, int(end[1]) + 1
    path = []
    while i > 0 and j > 0:
        path.append((i - 1, j - 1))
        mv = move[i, j]
        if mv == 0:
            break
        if mv == 1:
            i, j = i - 1, j - 1
        elif mv == 2:
            i -= 1
        else:
            j -= 1
    path.reverse()
    return path


def _window_rows(first: np.ndarray, stop: np.ndarray, max_window: int) -> np.ndarray:
    """``(windows, max_window)`` row indices covering each window (the last row repeated)."""
    steps = np.arange(max_window)[None, :]
    return first[:, None] + np.minimum(steps, (stop - first - 1)[:, None])


def _path_distance(
    path: Sequence[tuple[int, int]], shape: tuple[int, int], max_distance: int | None = None
) -> np.ndarray:
    """Chebyshev distance of every cell to the nearest path cell; cells farther than
    ``max_distance`` (default: any) and every cell of an empty path get ``inf``."""
    n, m = shape
    dist = np.full((n, m), np.inf)
    if not path:
        return dist
    reached = np.zeros((n, m), dtype=bool)
    cells = np.asarray(path, dtype=np.int64)
    reached[cells[:, 0], cells[:, 1]] = True
    limit = max(n, m) if max_distance is None else max_distance
    for distance in range(limit + 1):
        dist[reached & np.isinf(dist)] = distance
        if distance == limit or not np.isinf(dist).any():
            break
        # grow by one cell in the 8 directions (one Chebyshev step)
        grown = reached.copy()
        grown[1:] |= reached[:-1]
        grown[:-1] |= reached[1:]
        rows = grown.copy()
        grown[:, 1:] |= rows[:, :-1]
        grown[:, :-1] |= rows[:, 1:]
        reached = grown
    return dist


# -- the suggester ---------------------------------------------------------------------------
class PairSuggester:
    """Rank candidate passage pairs of two documents (see the module docstring).

    Args:
        max_window: passages are windows of 1..``max_window`` sentences on each side.
        encoder: anything with ``encode(texts) -> array`` of L2-normalised rows (e.g.
            ``parakit.vectors.encode.load_encoder("offline-minilm")``); ``None``: lexical only.
        lexical_weight, embedding_weight: weights of the two similarities in ``similarity``
            (a weighted mean; the embedding weight counts only with an encoder).
        ngram_range: char n-gram lengths of the lexical similarity (``char_wb`` analyzer).
        alignment: use the monotone-alignment prior and restrict candidates to its band.
            Without it every window pair is a candidate: ``O(max_window^2 * n * m)`` scorings,
            slow on long documents.
        band: window pairs farther than this many sentences from the path are not candidates.
        prior_weight: weight of the prior in the score.
        gap: per-cell cost of the alignment path (:func:`monotone_path`).
        copy_threshold: a lexical cosine at or above it makes a pair a verbatim copy (equal
            normalised texts always do); ``None``: only equal texts.
        near_copy_start: the lexical cosine where the near-copy penalty starts; it grows
            linearly to the full ``copy_penalty`` at ``copy_threshold`` (annotators skip
            near-verbatim pairs too; see docs/benchmarks.md). ``None``: copies only.
        copy_penalty: the most taken off a score for being a (near) copy (0: no penalty).
        nms: non-maximum suppression: select non-overlapping passage pairs by ``match`` and
            put the suppressed ones after them.
        min_chars: passages shorter than this (stripped) are never suggested.
        lang: language for sentence splitting (``ja``/``zh`` use CJK rules).
        batch_size: texts per ``encoder.encode`` call (memory vs. speed).

    Example:
        >>> from parakit.schema import Document
        >>> s = PairSuggester(max_window=1)
        >>> top = s.suggest(Document("a", "Hi. I am cold."), Document("b", "Hello. I feel cold."))
        >>> top[0].text1, top[0].text2
        ('I am cold.', 'I feel cold.')
    """

    def __init__(
        self,
        max_window: int = 3,
        encoder: Any = None,
        lexical_weight: float = 1.0,
        embedding_weight: float = 1.0,
        ngram_range: tuple[int, int] = (2, 4),
        alignment: bool = True,
        band: int = 2,
        prior_weight: float = 0.5,
        gap: float = 0.1,
        copy_threshold: float | None = 0.95,
        near_copy_start: float | None = 0.5,
        copy_penalty: float = 1.0,
        nms: bool = True,
        min_chars: int = 2,
        lang: str | None = None,
        batch_size: int = 256,
    ) -> None:
        self.max_window = max_window
        self.encoder = encoder
        self.lexical_weight = lexical_weight
        self.embedding_weight = embedding_weight
        self.ngram_range = ngram_range
        self.alignment = alignment
        self.band = band
        self.prior_weight = prior_weight
        self.gap = gap
        self.copy_threshold = copy_threshold
        self.near_copy_start = near_copy_start
        self.copy_penalty = copy_penalty
        self.nms = nms
        self.min_chars = min_chars
        self.lang = lang
        self.batch_size = batch_size

    # -- settings ----------------------------------------------------------------------------
    def _check(self) -> None:
        if self.max_window < 1:
            raise SuggestError(Errors.E511_max_window_must.format(max_window=self.max_window))
        if self.band < 0:
            raise SuggestError(Errors.E511_band_must.format(band=self.band))
        weights = self.lexical_weight + (self.embedding_weight if self.encoder else 0.0)
        if self.lexical_weight < 0 or self.embedding_weight < 0 or weights <= 0:
            raise SuggestError(Errors.E511_lexical_weight_embedding)

    def get_params(self) -> dict[str, Any]:
        """The constructor arguments (scikit-learn convention)."""
        return {
            name: getattr(self, name)
            for name in (
                "max_window",
                "encoder",
                "lexical_weight",
                "embedding_weight",
                "ngram_range",
                "alignment",
                "band",
                "prior_weight",
                "gap",
                "copy_threshold",
                "near_copy_start",
                "copy_penalty",
                "nms",
                "min_chars",
                "lang",
                "batch_size",
            )
        }

    def signature(self) -> dict[str, Any]:
        """The settings that produced a ranking (recorded with evaluation figures)."""
        params = self.get_params()
        params.pop("batch_size")
        encoder = params.pop("encoder")
        if encoder is None:
            params["encoder"] = None
        elif hasattr(encoder, "signature"):
            params["encoder"] = encoder.signature()
        else:
            params["encoder"] = type(encoder).__name__
        params["ngram_range"] = list(self.ngram_range)
        return params

    # -- scoring -----------------------------------------------------------------------------
    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        parts = []
        for start in range(0, len(texts), self.batch_size):
            vectors = self.encoder.encode(list(texts[start : start + self.batch_size]))
            if hasattr(vectors, "toarray"):
                vectors = vectors.toarray()
            parts.append(np.asarray(vectors, dtype=np.float32))
        if not parts:
            return np.zeros((0, 1), dtype=np.float32)
        out = np.concatenate(parts)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)

    def suggest(
        self,
        doc1: Document | str,
        doc2: Document | str,
        limit: int | None = None,
    ) -> list[Suggestion]:
        """Ranked suggestions for one document pair.

        Args:
            doc1, doc2: the documents (a plain string becomes a document with id ``doc1`` /
                ``doc2``).
            limit: return at most this many (``None``: all candidates, kept ones first).

        Returns:
            suggestions, best first.
        """
        self._check()
        if isinstance(doc1, str):
            doc1 = Document("doc1", doc1)
        if isinstance(doc2, str):
            doc2 = Document("doc2", doc2)
        sent1 = sentence_spans(doc1.text, self.lang)
        sent2 = sentence_spans(doc2.text, self.lang)
        if not sent1 or not sent2:
            return []
        text1 = [doc1.text[b:e] for b, e in sent1]
        text2 = [doc2.text[b:e] for b, e in sent2]
        n, m = len(sent1), len(sent2)
        lexical = CharNgramSimilarity(ngram_range=self.ngram_range, use_idf=True)
        lexical.fit(text1 + text2)
        use_embedding = self.encoder is not None and self.embedding_weight > 0
        total_weight = self.lexical_weight + (self.embedding_weight if use_embedding else 0.0)

        win1 = window_spans(sent1, self.max_window)
        win2 = window_spans(sent2, self.max_window)
        wtext1 = [doc1.text[b:e] for b, e, _, _ in win1]
        wtext2 = [doc2.text[b:e] for b, e, _, _ in win2]
        if use_embedding:
            vec1 = self._encode(wtext1)
            vec2 = self._encode(wtext2)

        # sentence-level similarity matrix and the alignment path
        if self.alignment:
            # every sentence pair: n * m lexical scorings (the bulk of the run time)
            sent_sim = np.zeros((n, m))
            if self.lexical_weight > 0:
                rows, cols = np.divmod(np.arange(n * m), m)
                sent_sim += self.lexical_weight * lexical.score(
                    [text1[i] for i in rows], [text2[j] for j in cols]
                ).reshape(n, m)
            if use_embedding:
                single1 = [k for k, w in enumerate(win1) if w[3] - w[2] == 1]
                single2 = [k for k, w in enumerate(win2) if w[3] - w[2] == 1]
                sent_sim += self.embedding_weight * (vec1[single1] @ vec2[single2].T)
            sent_sim /= total_weight
            path = monotone_path(sent_sim, gap=self.gap)
            dist = _path_distance(path, (n, m), max_distance=self.band)
        # candidate window pairs
        first1 = np.array([w[2] for w in win1])
        stop1 = np.array([w[3] for w in win1])
        first2 = np.array([w[2] for w in win2])
        stop2 = np.array([w[3] for w in win2])
        if self.alignment:
            # distance of a window pair to the path = min over its cells
            rows_of = _window_rows(first1, stop1, self.max_window)
            cols_of = _window_rows(first2, stop2, self.max_window)
            window_dist = dist[rows_of].min(axis=1)[:, cols_of].min(axis=2)
            ii, jj = np.nonzero(window_dist <= self.band)
            prior = 1.0 - window_dist[ii, jj] / (self.band + 1)
        else:
            ii, jj = (x.ravel() for x in np.indices((len(win1), len(win2))))
            prior = np.ones(ii.size)
        if ii.size == 0:
            return []
        lex = lexical.score([wtext1[a] for a in ii], [wtext2[b] for b in jj])
        sim = self.lexical_weight * lex
        emb = None
        if use_embedding:
            # one window x window product (small) instead of gathering row pairs (memory)
            emb = (vec1 @ vec2.T)[ii, jj].astype(np.float64)
            sim = sim + self.embedding_weight * emb
        sim = sim / total_weight
        # verbatim copies: equal normalised texts (compared as integer ids, one per text)
        ids: dict[str, int] = {}
        norm1 = np.array([ids.setdefault(_normalise(t), len(ids)) for t in wtext1])
        norm2 = np.array([ids.setdefault(_normalise(t), len(ids)) for t in wtext2])
        copy = norm1[ii] == norm2[jj]
        if self.copy_threshold is not None:
            copy |= lex >= self.copy_threshold
        near = np.zeros(ii.size)
        if self.near_copy_start is not None and self.copy_threshold is not None:
            width = max(self.copy_threshold - self.near_copy_start, 1e-9)
            near = np.clip((lex - self.near_copy_start) / width, 0.0, 1.0)
        near = np.where(copy, 1.0, near)
        match = sim + self.prior_weight * prior
        score = match - self.copy_penalty * near
        # too-short passages are never suggested
        short1 = np.array([len(t.strip()) < self.min_chars for t in wtext1])
        short2 = np.array([len(t.strip()) < self.min_chars for t in wtext2])
        keep = ~(short1[ii] | short2[jj])
        ii, jj, match, score, sim, lex, prior, copy, near = (
            x[keep] for x in (ii, jj, match, score, sim, lex, prior, copy, near)
        )
        if emb is not None:
            emb = emb[keep]
        # deterministic order: by a key, then position, then smaller windows first
        ties = (stop2[jj] - first2[jj], stop1[ii] - first1[ii], first2[jj], first1[ii])
        order = np.lexsort((*ties, -score))
        suppressed = np.zeros(order.size, dtype=bool)
        if self.nms:
            # select non-overlapping passage pairs by how well they match (copies included,
            # so they do not leak into the windows of their neighbours), then rank the kept
            # ones by score
            taken1 = np.zeros(n, dtype=bool)
            taken2 = np.zeros(m, dtype=bool)
            kept = []
            for k in np.lexsort((*ties, -match)):
                a, b = ii[k], jj[k]
                if taken1[first1[a] : stop1[a]].any() or taken2[first2[b] : stop2[b]].any():
                    continue
                taken1[first1[a] : stop1[a]] = True
                taken2[first2[b] : stop2[b]] = True
                kept.append(k)
            is_kept = np.zeros(order.size, dtype=bool)
            is_kept[kept] = True
            suppressed = ~is_kept[order]
            order = np.concatenate((order[~suppressed], order[suppressed]))
            suppressed = np.sort(suppressed, kind="stable")
        if limit is not None:
            order, suppressed = order[:limit], suppressed[:limit]
        out = []
        for k, sup in zip(order, suppressed, strict=True):
            a, b = ii[k], jj[k]
            out.append(
                Suggestion(
                    span1=Span(doc1.id, win1[a][0], win1[a][1]),
                    span2=Span(doc2.id, win2[b][0], win2[b][1]),
                    text1=wtext1[a],
                    text2=wtext2[b],
                    score=float(score[k]),
                    similarity=float(sim[k]),
                    lexical=float(lex[k]),
                    embedding=None if emb is None else float(emb[k]),
                    prior=float(prior[k]),
                    copy=bool(copy[k]),
                    near_copy=float(near[k]),
                    match=float(match[k]),
                    suppressed=bool(sup),
                )
            )
        return out

    def suggest_many(
        self,
        pairs: Iterable[tuple[Document, Document]],
        limit: int | Callable[[Document, Document], int | None] | None = None,
        progress: bool = False,
        total: int | None = None,
    ) -> Iterator[tuple[Document, Document, list[Suggestion]]]:
        """Suggestions for each document pair, lazily.

        Args:
            pairs: ``(doc1, doc2)`` tuples.
            limit: a number, or a function of the pair giving one (``None``: all).
            progress: show a progress bar.
            total: the number of pairs, for the progress bar.
        """
        iterator: Iterable[tuple[Document, Document]] = pairs
        if progress:
            from tqdm.auto import tqdm

            iterator = tqdm(pairs, total=total, desc="suggest", unit="pair")
        for doc1, doc2 in iterator:
            cap = limit(doc1, doc2) if callable(limit) else limit
            yield doc1, doc2, self.suggest(doc1, doc2, limit=cap)


def suggest_pairs(
    doc1: Document | str, doc2: Document | str, limit: int | None = None, **options: Any
) -> list[Suggestion]:
    """Ranked suggestions for one document pair; ``options`` are :class:`PairSuggester`'s."""
    return PairSuggester(**options).suggest(doc1, doc2, limit=limit)


def document_pairs_of(pairs: PairSet) -> list[tuple[Document, Document]]:
    """The distinct document pairs a pair set's spans point into, in first-seen order.

    Raises:
        SuggestError: ``E512`` when the set has no pair with document context.
    """
    seen: dict[tuple[str, str], None] = {}
    for pair in pairs:
        if pair.span1 is not None and pair.span2 is not None:
            seen.setdefault((pair.span1.doc_id, pair.span2.doc_id), None)
    out = []
    for id1, id2 in seen:
        if id1 in pairs.documents and id2 in pairs.documents:
            out.append((pairs.documents[id1], pairs.documents[id2]))
    if not out:
        raise SuggestError(Errors.E512_pair_document_context)
    return out


def suggest_for_pairs(
    pairs: PairSet | Iterable[tuple[Document, Document]],
    limit: int | None = None,
    progress: bool = False,
    **options: Any,
) -> list[tuple[Document, Document, list[Suggestion]]]:
    """Suggestions for a set of document pairs: ``(doc1, doc2)`` tuples, or every document
    pair a :class:`PairSet` with documents points into (document-pair sets from
    :mod:`parakit.build.align` included); ``options`` are :class:`PairSuggester`'s."""
    doc_pairs = document_pairs_of(pairs) if isinstance(pairs, PairSet) else list(pairs)
    suggester = PairSuggester(**options)
    return list(
        suggester.suggest_many(doc_pairs, limit=limit, progress=progress, total=len(doc_pairs))
    )


# -- evaluation ------------------------------------------------------------------------------
def _covers(span: Span, gold: Span, min_overlap: float) -> bool:
    overlap = min(span.end, gold.end) - max(span.begin, gold.begin)
    length = gold.end - gold.begin
    return overlap > 0 and overlap >= min_overlap * length if length else False


def evaluate_suggestions(
    suggestions: Mapping[tuple[str, str], Sequence[Suggestion]],
    gold: PairSet | Iterable[Pair],
    budgets: Sequence[float] = (0.5, 1.0, 2.0, 3.0, 5.0),
    min_overlap: float = 0.5,
) -> dict[str, float]:
    """Recall and precision of ranked suggestions against gold pairs, per budget.

    A gold pair is *found* when one suggestion overlaps at least ``min_overlap`` of the
    characters of each of its two spans; a suggestion is *correct* when it finds at least one
    gold pair. The budget of a document pair is ``round(b * its gold count)`` suggestions
    (at least 1); figures are micro-averaged over document pairs.

    Args:
        suggestions: ``(doc1 id, doc2 id) -> ranked suggestions`` (the first ``budget`` count).
        gold: pairs with ``span1`` / ``span2``; pairs without spans are ignored.
        budgets: multiples of each document pair's gold count.
        min_overlap: the share of each gold span a suggestion must cover.

    Returns:
        ``recall@<b>x``, ``precision@<b>x`` and ``suggestions@<b>x`` for each budget, and
        ``gold`` (the number of gold pairs with a suggestion list).

    Example:
        >>> g = [Pair("p", "a", "b", span1=Span("d1", 0, 10), span2=Span("d2", 0, 8))]
        >>> s = Suggestion(Span("d1", 0, 6), Span("d2", 0, 8), "", "", 1, 1, 1, None, 1, False)
        >>> evaluate_suggestions({("d1", "d2"): [s]}, g, budgets=[1])["recall@1x"]
        1.0
    """
    by_pair: dict[tuple[str, str], list[tuple[Span, Span]]] = {}
    for pair in gold:
        if pair.span1 is None or pair.span2 is None:
            continue
        key = (pair.span1.doc_id, pair.span2.doc_id)
        if key in suggestions:
            by_pair.setdefault(key, []).append((pair.span1, pair.span2))
    out: dict[str, float] = {"gold": float(sum(map(len, by_pair.values())))}
    for budget in budgets:
        found = correct = given = 0
        for key, golds in by_pair.items():
            top = list(suggestions[key])[: max(1, round(budget * len(golds)))]
            given += len(top)
            hit = np.zeros(len(golds), dtype=bool)
            for s in top:
                matches = [
                    _covers(s.span1, g1, min_overlap) and _covers(s.span2, g2, min_overlap)
                    for g1, g2 in golds
                ]
                if any(matches):
                    correct += 1
                    hit |= matches
            found += int(hit.sum())
        label = f"{budget:g}x"
        out[f"recall@{label}"] = found / out["gold"] if out["gold"] else 0.0
        out[f"precision@{label}"] = correct / given if given else 0.0
        out[f"suggestions@{label}"] = float(given)
    return out
