"""Back-translation quality estimate of MT candidate pairs (J3).

``QE_i = SBLEU(e_i, BT_A(e_i)) · SBLEU(e_i, BT_B(e_i))``: each MT system's output is
translated back into the source language and compared with the source sentence by sentence
BLEU (SacreBLEU, exp smoothing, effective order). The operator is lost in the paper's text;
the product is the usual reading. Scores are taken on the 0–1 scale (BLEU / 100), so QE is in
[0, 1]; with more than two systems the product runs over all of them.

Example:
    >>> round(float(back_translation_qe(["the cat sat on the mat"],
    ...                           [["the cat sat on the mat"], ["the cat sat on the mat"]])[0]), 3)
    1.0
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from parakit.errors import Errors, ParakitError
from parakit.text import sentence_bleu


def back_translation_qe(
    sources: Sequence[str], back_translations: Sequence[Sequence[str]], tokenize: str = "13a"
) -> np.ndarray:
    """QE of each source: the product over systems of ``SBLEU(source, back_translation)/100``.

    Args:
        sources: the source sentences ``e_i``.
        back_translations: one list per system, aligned with ``sources``.
        tokenize: SacreBLEU tokenizer of the source language.
    """
    if not back_translations:
        raise ParakitError(Errors.E505_need_back_translations)
    qe = np.ones(len(sources), dtype=np.float64)
    for system in back_translations:
        if len(system) != len(sources):
            raise ParakitError(Errors.E505_each_system_needs)
        qe *= np.array(
            [
                sentence_bleu(bt, src, tokenize=tokenize) / 100.0
                for src, bt in zip(sources, system, strict=True)
            ]
        )
    return qe
