"""Answers to the same assignment as document pairs (T5).

Student translations of one exercise text, or exam essays answering one question (or one
subtopic of it): all pairs of answers to the same assignment are candidates; when there are
many, at most ``max_pairs`` (3 in the paper) pairs per source text are kept, drawn at random,
so that one assignment does not flood the corpus with repetitive paraphrases.

Answers are JSON lines ``{"id", "assignment", "text", ...}``.

Example:
    >>> from parakit.schema import Document
    >>> docs = [Document(f"s{i}", f"answer number {i}", {"assignment": "q1"}) for i in range(4)]
    >>> len(assignment_pairs(docs, max_pairs=3))
    3
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from parakit.build.align import DocumentAligner, DocumentPair, document_pairs_to_pairset
from parakit.build.documents import SkipCounter, drop_empty
from parakit.errors import DataFormatError, Errors, ParakitError
from parakit.schema import Document, PairSet


def assignment_pairs(
    answers: Sequence[Document],
    max_pairs: int | None = 3,
    key: str = "assignment",
    aligner: DocumentAligner | None = None,
    seed: int = 0,
    skips: SkipCounter | None = None,
) -> PairSet:
    """All answer pairs per assignment, at most ``max_pairs`` per assignment (random).

    Args:
        answers: documents with ``metadata[key]`` naming the assignment / source text.
        max_pairs: cap per assignment (``None``: all pairs).
        key: the metadata field grouping the answers.
        aligner: optional band filter (and similarity in the output); without it the
            similarity is still reported with default T1 settings.
        seed: random seed of the capped choice.
    """
    if max_pairs is not None and max_pairs < 1:
        raise ParakitError(Errors.E500_max_pairs_must)
    skips = skips if skips is not None else SkipCounter()
    answers = drop_empty(answers, skips)
    groups: dict[str, list[Document]] = {}
    for doc in answers:
        if key not in doc.metadata:
            raise DataFormatError(Errors.E502_answer.format(doc_id=doc.id, key=key), field=key)
        groups.setdefault(str(doc.metadata[key]), []).append(doc)
    band = aligner is not None
    aligner = aligner or DocumentAligner()
    if answers and not hasattr(aligner, "vectorizer_"):
        aligner.fit([d.text for d in answers])
    rng = random.Random(seed)
    out: list[DocumentPair] = []
    for name in sorted(groups):
        members = groups[name]
        if len(members) < 2:
            skips.skip("single-answer", f"assignment {name!r}")
            continue
        pairs = list(itertools.combinations(members, 2))
        sims = aligner.similarity([a.text for a, _ in pairs], [b.text for _, b in pairs])
        candidates = [
            (a, b, float(s))
            for (a, b), s in zip(pairs, sims, strict=True)
            if not band or aligner.in_band(s)
        ]
        if max_pairs is not None and len(candidates) > max_pairs:
            skips["over-cap"] += len(candidates) - max_pairs
            candidates = rng.sample(candidates, max_pairs)
        out.extend(DocumentPair(a, b, s, {"assignment": name}) for a, b, s in candidates)
    return document_pairs_to_pairset(
        out,
        source="assignments",
        group=lambda dp: dp.metadata["assignment"],
        metadata={"skipped": skips.as_dict(), "max_pairs": max_pairs, "seed": seed},
    )
