"""Bootstrapped retraining (T16, Turku §7.3): a manually labelled corpus plus automatically
mined negatives under a single negative label.

Mined negatives carry no distinction between the negative labels (Turku 1 and 2), so they all
get one ``negative_label``; how many are added is set by ``negatives_per_pair`` (the paper adds
as many negatives as there are manual pairs: 84K + 84K) or ``n_negatives``.

Example:
    >>> from parakit.schema import Pair, PairSet
    >>> manual = PairSet([Pair("m1", "a", "b", "4"), Pair("m2", "c", "d", "3")], scheme="turku")
    >>> mined = PairSet([Pair(f"n{i}", "e", f"f{i}") for i in range(5)], scheme="turku")
    >>> train = bootstrap_training_set(manual, mined, negative_label="2", seed=0)
    >>> sorted(train.label_counts().items())
    [('2', 2), ('3', 1), ('4', 1)]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.base import clone

from parakit.errors import Errors, ModelError
from parakit.models.base import PairClassifier
from parakit.schema import PairSet


def bootstrap_training_set(
    manual: PairSet,
    negatives: PairSet,
    *,
    negative_label: str = "2",
    negatives_per_pair: float | None = 1.0,
    n_negatives: int | None = None,
    exclude_texts_of: PairSet | None = None,
    seed: int = 0,
) -> PairSet:
    """The manual pairs plus a seeded sample of mined negatives labelled ``negative_label``.

    Args:
        manual: the manually labelled corpus (kept whole).
        negatives: mined negative candidates (their labels, if any, are replaced).
        negative_label: the single negative label, valid in ``manual``'s scheme (Turku ``2``
            — the lowest base class of the T14 base head — or ``0`` for binary sets).
        negatives_per_pair: negatives added per manual pair (1.0 = as many as manual pairs).
        n_negatives: an absolute number instead (overrides ``negatives_per_pair``).
        exclude_texts_of: drop negatives sharing a statement with this set (a test set).
        seed: sampling seed.

    Returns:
        a shuffled PairSet in ``manual``'s scheme; mined pairs have ``source="mined"`` (unless
        already set) and ids prefixed ``mined:``.

    Raises:
        ModelError: ``negative_label`` is not valid in the scheme (E704), more negatives
            are requested than available (E712), or a candidate is one of ``mine select``'s
            safe positives (``metadata["tile_selection"] == "positive"``, E712).
    """
    if not manual.scheme.is_valid(negative_label):
        raise ModelError(
            Errors.E704_negative_label_valid.format(
                negative_label=negative_label, manual_scheme=manual.scheme
            )
        )
    negative_label = manual.scheme.normalize(negative_label)
    pool = list(negatives)
    for pair in pool:
        if pair.metadata.get("tile_selection") == "positive":
            raise ModelError(Errors.E712_mined_pair_positive.format(pair_id=pair.id))
    if exclude_texts_of is not None:
        banned = {t for p in exclude_texts_of for t in (p.text1, p.text2)}
        pool = [p for p in pool if p.text1 not in banned and p.text2 not in banned]
    if (
        n_negatives is None
        and negatives_per_pair is not None
        and not (math.isfinite(negatives_per_pair) and negatives_per_pair >= 0)
    ):
        raise ModelError(
            Errors.E712_negatives_per_pair_finite.format(negatives_per_pair=negatives_per_pair)
        )
    wanted = (
        n_negatives if n_negatives is not None else round((negatives_per_pair or 0.0) * len(manual))
    )
    if wanted < 0:
        raise ModelError(Errors.E712_number_negatives_must.format(wanted=wanted))
    if wanted > len(pool):
        raise ModelError(
            Errors.E712_negatives_requested_but.format(wanted=wanted, n_pool=len(pool))
        )
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(pool), size=wanted, replace=False) if wanted else []
    mined = [
        pool[i].replace(
            id=f"mined:{pool[i].id}", label=negative_label, source=pool[i].source or "mined"
        )
        for i in sorted(chosen)
    ]
    pairs = list(manual) + mined
    order = rng.permutation(len(pairs))
    return PairSet(
        [pairs[i] for i in order],
        scheme=manual.scheme,
        name=manual.name,
        lang=manual.lang,
        metadata=dict(
            manual.metadata,
            bootstrap={
                "negative_label": negative_label,
                "n_manual": len(manual),
                "n_negatives": wanted,
                "seed": seed,
            },
        ),
    )


def retrain_with_negatives(
    model: PairClassifier,
    manual: PairSet,
    negatives: PairSet,
    *,
    eval_set: PairSet | None = None,
    **options: Any,
) -> PairClassifier:
    """Fit a clone of ``model`` on :func:`bootstrap_training_set` (``options`` go there).

    Example:
        >>> final = retrain_with_negatives(make_model("multihead", model_name_or_path=enc),
        ...                                manual, mined, negative_label="2")  # doctest: +SKIP
    """
    train = bootstrap_training_set(manual, negatives, **options)
    return clone(model).fit(train, eval_set=eval_set)
