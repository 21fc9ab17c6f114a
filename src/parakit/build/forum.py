"""Discussion-forum thread openers as document pairs (T4).

Thread-opening messages with an *identical title and sub-forum* are compared by TF-IDF char
4-gram cosine; pairs outside the band are dropped, and so are pairs where the shorter message
is merely contained in the longer one (quotes, reposts, edits). The Turku team then ran a quick
accept/reject pass on the pairs before extraction (done in the annotation tool).

Messages are JSON lines ``{"id", "title", "subforum", "text", ...}``.

Example:
    >>> from parakit.schema import Document
    >>> docs = [Document("m1", "My cat will not eat anything at all.", {"title": "Cat",
    ...     "subforum": "pets"}), Document("m2", "My cat will not eat anything at all. Help?",
    ...     {"title": "Cat", "subforum": "pets"})]
    >>> len(forum_pairs(docs, DocumentAligner()))
    0
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from parakit.build.align import DocumentAligner, document_pairs_to_pairset
from parakit.build.documents import SkipCounter, read_documents
from parakit.errors import DataFormatError, Errors
from parakit.schema import Document, PairSet
from parakit.text import normalize


def _norm_title(title: str) -> str:
    return normalize(title, lowercase=True)


def is_contained(shorter: str, longer: str) -> bool:
    """Whether the shorter text (whitespace- and case-normalised) occurs inside the longer."""
    a, b = normalize(shorter, lowercase=True), normalize(longer, lowercase=True)
    if len(a) > len(b):
        a, b = b, a
    return a in b


def forum_pairs(
    messages: Sequence[Document],
    aligner: DocumentAligner,
    drop_contained: bool = True,
    skips: SkipCounter | None = None,
) -> PairSet:
    """Pairs of thread openers with the same (normalised) title and sub-forum, in the band,
    the shorter not contained in the longer.

    Args:
        messages: documents with ``metadata["title"]`` and ``metadata["subforum"]``.
        aligner: band and vectoriser settings.
        drop_contained: drop pairs where one message contains the other.
        skips: counts of dropped pairs (``contained``) and skipped messages.
    """
    skips = skips if skips is not None else SkipCounter()
    for doc in messages:
        for key in ("title", "subforum"):
            if key not in doc.metadata:
                raise DataFormatError(Errors.E502_message.format(doc_id=doc.id, key=key), field=key)
    aligned = aligner.align(
        messages,
        key=lambda d: (_norm_title(str(d.metadata["title"])), str(d.metadata["subforum"])),
        skips=skips,
    )
    kept = []
    for dp in aligned:
        if drop_contained and is_contained(dp.doc1.text, dp.doc2.text):
            skips["contained"] += 1
            continue
        kept.append(dp)
    return document_pairs_to_pairset(
        kept,
        source="forum",
        group=lambda dp: f"{dp.doc1.metadata['subforum']}/{_norm_title(dp.doc1.metadata['title'])}",
        metadata={"skipped": skips.as_dict(), "band": [aligner.low, aligner.high]},
    )


def read_messages(path: str | Path, skips: SkipCounter | None = None) -> list[Document]:
    """Read forum messages JSONL (``id``, ``title``, ``subforum``, ``text``)."""
    return read_documents(path, skips=skips)
