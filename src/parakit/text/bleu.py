"""Sentence and corpus BLEU through SacreBLEU, with its reproducibility signature."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from parakit.errors import Errors, GenerationDataError


@lru_cache(maxsize=16)
def _metric(tokenize: str, smooth_method: str, lowercase: bool, effective_order: bool) -> Any:
    """The SacreBLEU metric of these settings; a tokenizer SacreBLEU does not know (E902) or
    cannot load (E903: ``ja-mecab`` without its packages) is refused before anything is scored."""
    from sacrebleu.metrics import BLEU

    if tokenize not in BLEU.TOKENIZERS:
        raise GenerationDataError(
            Errors.E902_unknown_bleu_tokenizer.format(
                tokenize=tokenize, choices=", ".join(BLEU.TOKENIZERS)
            )
        )
    try:
        return BLEU(
            tokenize=tokenize,
            smooth_method=smooth_method,
            lowercase=lowercase,
            effective_order=effective_order,
        )
    except (RuntimeError, ImportError) as err:
        reason = " ".join(str(err).split())
        raise GenerationDataError(
            Errors.E903_bleu_tokenizer_cannot.format(tokenize=tokenize, reason=reason)
        ) from err


def check_tokenizer(tokenize: str) -> None:
    """Refuse a tokenizer SacreBLEU does not know (E902) or cannot load (E903) before anything
    is scored (an empty input scores nothing, and would say nothing)."""
    _metric(tokenize, "exp", False, True)


def sentence_bleu(
    hypothesis: str,
    references: str | Sequence[str],
    tokenize: str = "13a",
    smooth_method: str = "exp",
    lowercase: bool = False,
) -> float:
    """Sentence BLEU (0–100) of ``hypothesis`` against one or more references.

    Uses SacreBLEU's sentence-level BLEU (effective order, ``exp`` smoothing by default);
    ``tokenize='ja-mecab'`` or ``'char'`` for Japanese.

    Example:
        >>> round(sentence_bleu("the cat sat on the mat", "the cat sat on the mat"), 1)
        100.0
    """
    refs = [references] if isinstance(references, str) else list(references)
    metric = _metric(tokenize, smooth_method, lowercase, True)
    return float(metric.sentence_score(hypothesis, refs).score)


def corpus_bleu(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]] | Sequence[str],
    tokenize: str = "13a",
    lowercase: bool = False,
) -> tuple[float, str]:
    """Corpus BLEU and its SacreBLEU signature.

    Args:
        hypotheses: one output per segment.
        references: one reference per segment, or one list of references per segment
            (lists may differ in length).
    """
    refs_per_segment = [[r] if isinstance(r, str) else list(r) for r in references]
    if len(refs_per_segment) != len(hypotheses):
        raise ValueError("hypotheses and references differ in length")
    width = max((len(r) for r in refs_per_segment), default=1)
    # sacrebleu wants reference *streams*; missing references are None
    streams = [[r[i] if i < len(r) else None for r in refs_per_segment] for i in range(width)]
    metric = _metric(tokenize, "exp", lowercase, False)
    result = metric.corpus_score(list(hypotheses), streams)
    return float(result.score), str(metric.get_signature())
