"""Knowledge distillation: a large teacher labels pairs, a small student learns its probabilities.

Mining millions of candidate pairs needs a fast classifier; the accurate one (an MPNet
cross-encoder) is several times slower. The teacher labels unlabelled pairs of the domain (auto
pairs, mined nearest-neighbour negatives) with soft labels, P(paraphrase); a small student
cross-encoder (MiniLM) is trained on them with a soft-label loss
(:meth:`~parakit.models.cross_encoder.CrossEncoderClassifier.fit_soft`: cross-entropy to the
teacher's distribution, or squared error on the probability) and selected on gold dev pairs.

Inputs / Requirements / Recommendations:
    * any fitted parakit classifier is a teacher (its
      :meth:`~parakit.models.base.PairClassifier.paraphrase_proba`); a cross-encoder is the
      usual one;
    * the transfer pairs need no gold labels; use many more than the gold training set, from
      the same domain, with both paraphrases and near misses;
    * the gold training pairs can be added to the transfer set with ``gold_weight``: their gold
      label (0 or 1) is used as the soft label.

Example:
    >>> from parakit.models.distill import distill, label_with_teacher
    >>> labelled = label_with_teacher(teacher, transfer_pairs)            # doctest: +SKIP
    >>> student = CrossEncoderClassifier("offline-minilm", max_length=64)  # doctest: +SKIP
    >>> distill(teacher, transfer_pairs, student, eval_set=dev)           # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from parakit.errors import Errors, ModelError
from parakit.models.base import PairClassifier
from parakit.schema import Pair, PairSet

#: the metadata key of a teacher's P(paraphrase)
TEACHER_KEY = "teacher_p"


def teacher_probabilities(
    teacher: PairClassifier,
    pairs: PairSet | Sequence[Pair],
    reading: str | None = None,
    chunk_size: int = 2048,
    progress: bool = False,
) -> np.ndarray:
    """The teacher's P(paraphrase) for each pair, computed in chunks (a progress bar over them).

    Args:
        teacher: a fitted classifier.
        pairs: the pairs to label (labels are ignored).
        reading: binary reading of the teacher's classes (Turku loose/strict).
        chunk_size: pairs per call (lower to save memory).
        progress: show a progress bar.
    """
    from tqdm.auto import tqdm

    pairs = list(pairs)
    out = np.empty(len(pairs), dtype=np.float64)
    for start in tqdm(
        range(0, len(pairs), chunk_size), desc="teacher", unit="chunk", disable=not progress
    ):
        chunk = pairs[start : start + chunk_size]
        out[start : start + len(chunk)] = teacher.paraphrase_proba(
            [p.text1 for p in chunk], [p.text2 for p in chunk], reading=reading
        )
    return out


def label_with_teacher(
    teacher: PairClassifier,
    pairs: PairSet | Sequence[Pair],
    *,
    reading: str | None = None,
    key: str = TEACHER_KEY,
    chunk_size: int = 2048,
    progress: bool = False,
) -> PairSet:
    """Copies of ``pairs`` with the teacher's P(paraphrase) in ``metadata[key]`` and its hard
    decision (``"1"`` when P >= 0.5) as the label; a gold label moves to
    ``metadata["gold_label"]``. Save the result (canonical JSONL) to train students later.
    """
    probabilities = teacher_probabilities(teacher, pairs, reading, chunk_size, progress)
    out = []
    for pair, p in zip(pairs, probabilities, strict=True):
        metadata = dict(pair.metadata)
        if pair.label is not None:
            metadata["gold_label"] = pair.label
        metadata[key] = round(float(p), 6)
        out.append(pair.replace(label="1" if p >= 0.5 else "0", metadata=metadata))
    name = getattr(pairs, "name", None)
    return PairSet(out, scheme="binary", name=name)


def distill(
    teacher: PairClassifier,
    transfer: PairSet | Sequence[Pair],
    student: Any,
    *,
    gold: PairSet | None = None,
    eval_set: PairSet | None = None,
    reading: str | None = None,
    progress: bool = False,
) -> Any:
    """Train ``student`` on the teacher's soft labels of ``transfer`` (plus ``gold`` pairs with
    their gold labels as hard 0/1 targets); returns the fitted student.

    Args:
        teacher: a fitted classifier.
        transfer: unlabelled (or ignored-label) pairs of the domain.
        student: an unfitted :class:`~parakit.models.cross_encoder.CrossEncoderClassifier`.
        gold: gold-labelled binary pairs added to the transfer set.
        eval_set: gold-labelled dev pairs for the student's model selection.
        reading: binary reading of the teacher's classes.
        progress: progress bar while the teacher labels.

    Raises:
        ModelError: the student has no ``fit_soft`` (E712); a gold label that is not 0/1 (E704).
    """
    if not hasattr(student, "fit_soft"):
        raise ModelError(Errors.E712_learn_soft_labels.format(name=type(student).__name__))
    start = time.perf_counter()
    pairs = list(transfer)
    soft = list(teacher_probabilities(teacher, pairs, reading, progress=progress))
    for pair in gold or []:
        if pair.label not in ("0", "1"):
            raise ModelError(
                Errors.E704_gold_pair_label.format(pair_id=pair.id, pair_label=pair.label)
            )
        pairs.append(pair)
        soft.append(float(pair.label))
    labelling = time.perf_counter() - start
    student.fit_soft([p.text1 for p in pairs], [p.text2 for p in pairs], soft, eval_set=eval_set)
    student.distillation_ = {
        "n_transfer": len(pairs) - len(gold or []),
        "n_gold": len(gold or []),
        "teacher": getattr(teacher, "model_type", type(teacher).__name__),
        "teacher_seconds": round(labelling, 1),
        "mean_teacher_p": float(np.mean(soft)) if soft else None,
    }
    return student
