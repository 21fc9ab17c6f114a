"""Random sentence pairs from a monolingual corpus as non-trivial negatives (J5).

Random pairs of sentences are almost never paraphrases, but they almost never overlap either.
The Japanese corpus added such pairs to fill the *high word-overlap* negatives that MT
round-trips rarely yield. With ``wor_band=(low, high)`` only pairs whose WOR lies in the band
are kept: an anchor sentence is drawn at random, its partners are drawn at random among the
sentences sharing at least one token with it (an inverted index; pairs sharing no token have
WOR 0 and cannot be in a band with ``low > 0``; at most ``candidates_per_anchor`` random
sentences per token of the anchor), and the first in-band partner in random order is kept.

Example:
    >>> sents = [f"the cat number {i} sat on the mat" for i in range(50)] + \\
    ...         [f"completely different words here {i}" for i in range(50)]
    >>> ps = random_negatives(sents, n=5, wor_band=(0.5, 0.99), seed=1)
    >>> len(ps), all(0.5 <= p.metadata["wor"] <= 0.99 for p in ps)
    (5, True)
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Sequence

from parakit.errors import Errors, ParakitError
from parakit.schema import Pair, PairSet
from parakit.text import get_tokenizer

logger = logging.getLogger("parakit.build")


def random_negatives(
    sentences: Sequence[str],
    n: int,
    wor_band: tuple[float, float] | None = None,
    seed: int = 0,
    lang: str | None = None,
    method: str | None = None,
    candidates_per_anchor: int = 200,
    max_attempts: int | None = None,
    source: str = "random",
    exclude: Iterable[tuple[str, str]] = (),
) -> PairSet:
    """``n`` random sentence pairs (distinct texts, no pair twice in either order).

    Args:
        sentences: the monolingual corpus (one sentence per item).
        n: pairs wanted.
        wor_band: keep only pairs with WOR in ``[low, high]``.
        seed: random seed.
        lang, method: tokenisation of the WOR.
        candidates_per_anchor: partners tried per anchor sentence (and per anchor token
            when a band is given).
        max_attempts: anchors tried before giving up (default ``50 * n``); fewer than ``n``
            pairs are then returned and a warning is logged.
        source: ``Pair.source`` of the output.
        exclude: text pairs (either order) never to return, e.g. the known pairs of the
            corpus the sentences come from (a high-WOR random pair may be one of them).

    Returns:
        unlabelled candidate pairs with ``metadata["wor"]``.
    """
    if n < 0:
        raise ParakitError(Errors.E508_must)
    if wor_band is not None and not 0.0 <= wor_band[0] <= wor_band[1] <= 1.0:
        raise ParakitError(Errors.E508_wor_band_must)
    unique = list(dict.fromkeys(s for s in sentences if s.strip()))
    if len(unique) < 2:
        raise ParakitError(Errors.E501_need_least_two)
    tokenize = get_tokenizer(lang=lang, method=method)
    token_sets = [frozenset(tokenize(s)) for s in unique]
    rng = random.Random(seed)
    max_attempts = max_attempts if max_attempts is not None else 50 * max(n, 1)
    index: dict[str, list[int]] | None = None
    if wor_band is not None and wor_band[0] > 0:
        index = {}
        for i, tokens in enumerate(token_sets):
            for token in tokens:
                index.setdefault(token, []).append(i)
    excluded = {frozenset(pair) for pair in exclude}
    seen: set[tuple[int, int]] = set()
    out: list[Pair] = []
    attempts = 0
    while len(out) < n and attempts < max_attempts:
        attempts += 1
        i = rng.randrange(len(unique))
        if index is None:
            partners = [
                rng.randrange(len(unique)) for _ in range(candidates_per_anchor if wor_band else 1)
            ]
        else:
            pool: set[int] = set()
            for token in sorted(token_sets[i]):
                ids = index[token]
                pool.update(
                    ids
                    if len(ids) <= candidates_per_anchor
                    else rng.sample(ids, candidates_per_anchor)
                )
            partners = sorted(pool)
            rng.shuffle(partners)
        for j in partners:
            key = (min(i, j), max(i, j))
            if i == j or key in seen or frozenset((unique[i], unique[j])) in excluded:
                continue
            a, b = token_sets[i], token_sets[j]
            union = len(a | b)
            wor = len(a & b) / union if union else 0.0
            if wor_band is not None and not wor_band[0] <= wor <= wor_band[1]:
                continue
            seen.add(key)
            out.append(
                Pair(
                    id=f"neg-{len(out)}",
                    text1=unique[i],
                    text2=unique[j],
                    source=source,
                    metadata={"wor": round(wor, 6)},
                )
            )
            break
    if len(out) < n:
        logger.warning(
            "random_negatives: found %d of %d pairs in %d attempts (band %s)",
            len(out),
            n,
            attempts,
            wor_band,
        )
    return PairSet(
        out,
        scheme="binary",
        lang=lang,
        metadata={
            "negatives": {
                "requested": n,
                "found": len(out),
                "attempts": attempts,
                "wor_band": wor_band,
                "seed": seed,
            }
        },
    )


def nearest_negatives(
    pairs: PairSet,
    *,
    negative_label: str = "0",
    ngram_range: tuple[int, int] = (2, 4),
    chunk_size: int = 1024,
    source: str = "nearest",
    progress: bool = False,
) -> PairSet:
    """One hard negative per pair: ``text1`` with the most similar ``text2`` of another pair.

    For a set of positives only (MultiPIT auto, mined paraphrases), each ``text1`` is paired with
    the ``text2`` of a *different* pair that is closest under character n-gram TF-IDF cosine
    (scikit-learn's ``char_wb`` analyzer). Candidates sharing the anchor's ``text1``, equal to
    one of its texts, or forming a known pair of ``pairs`` (either order) are skipped, so a
    negative is on the same topic but is not one of the given paraphrases. Such negatives are
    noisy (some are paraphrases after all): filter them with a teacher
    (:mod:`parakit.models.noisy`) where that matters.

    Args:
        pairs: the source pairs (labels are ignored).
        negative_label: label of the returned pairs.
        ngram_range: character n-gram orders of the TF-IDF vectors.
        chunk_size: anchors scored per block (memory: ``chunk_size × len(pairs)`` floats).
        source: ``Pair.source`` of the output.
        progress: show a progress bar.

    Returns:
        one pair per input pair that has an admissible partner, ids ``<pair id>-neg``, with
        ``metadata["similarity"]`` (the TF-IDF cosine) and ``metadata["from_pair"]``.

    Example:
        >>> ps = PairSet([
        ...     Pair("a", "Amazon pauses police use of face recognition",
        ...          "Amazon halts facial recognition for police"),
        ...     Pair("b", "Snow is expected in Boston tonight", "Boston will get snow tonight"),
        ...     Pair("c", "IBM quits the facial recognition business",
        ...          "IBM exits facial recognition"),
        ... ])
        >>> for p in nearest_negatives(ps):
        ...     print(p.id, "<-", p.metadata["from_pair"], "|", p.text2)
        a-neg <- c | IBM exits facial recognition
        b-neg <- c | IBM exits facial recognition
        c-neg <- a | Amazon halts facial recognition for police
    """
    import numpy as np
    from tqdm.auto import tqdm

    from parakit.text.similarity import char_ngram_vectorizer

    if chunk_size < 1:
        raise ParakitError(Errors.E508_chunk_size_must)
    texts1 = [p.text1 for p in pairs]
    texts2 = [p.text2 for p in pairs]
    if len(pairs) < 2:
        raise ParakitError(Errors.E501_need_least_two_pairs)
    vectorizer = char_ngram_vectorizer(ngram_range).fit(texts1 + texts2)
    anchors, partners = vectorizer.transform(texts1), vectorizer.transform(texts2).T.tocsc()
    # integer ids of texts make the "same text" masks vectorised comparisons
    ids: dict[str, int] = {}
    g1 = np.array([ids.setdefault(t, len(ids)) for t in texts1])
    g2 = np.array([ids.setdefault(t, len(ids)) for t in texts2])
    known = {(a, b) for a, b in zip(g1.tolist(), g2.tolist(), strict=True)}
    known |= {(b, a) for a, b in known}
    out: list[Pair] = []
    top = 8  # candidates checked against the known pairs before giving up on an anchor
    for start in tqdm(
        range(0, len(pairs), chunk_size), desc="nearest negatives", disable=not progress
    ):
        rows = np.arange(start, min(start + chunk_size, len(pairs)))
        scores = (anchors[rows] @ partners).toarray()
        banned = (g1[None, :] == g1[rows, None]) | (g2[None, :] == g1[rows, None])
        banned |= g2[None, :] == g2[rows, None]
        scores[banned] = -1.0
        k = min(top, scores.shape[1])
        best = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        for r, i in enumerate(rows.tolist()):
            for j in sorted(best[r].tolist(), key=lambda c: (-scores[r, c], c)):
                if scores[r, j] < 0 or (int(g1[i]), int(g2[j])) in known:
                    continue
                out.append(
                    Pair(
                        id=f"{pairs[i].id}-neg",
                        text1=texts1[i],
                        text2=texts2[j],
                        label=negative_label,
                        source=source,
                        metadata={
                            "similarity": round(float(scores[r, j]), 6),
                            "from_pair": pairs[j].id,
                        },
                    )
                )
                break
    return PairSet(out, scheme=pairs.scheme, lang=pairs.lang)
