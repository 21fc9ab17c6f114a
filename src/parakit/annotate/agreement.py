"""Inter-annotator agreement (T9, J6, M4, M13) on full and reduced labels.

Thin, tested wrappers around established implementations: scikit-learn's
``cohen_kappa_score``, statsmodels' ``fleiss_kappa`` and the ``krippendorff`` package. The
input is always a long table of judgments — one row per (item, annotator, label) — so no
ad-hoc reshaping happens at the call site (a reshaping bug once made a popular tool report
alpha = 0).

Example:
    >>> from parakit.annotate.agreement import cohen_kappa
    >>> round(cohen_kappa(["y", "y", "n", "n"], ["y", "n", "n", "n"]), 3)
    0.5
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from parakit.errors import AnnotationDataError, Errors
from parakit.labels import LabelScheme, TurkuScheme, get_scheme

#: the label reductions of T9: full labels, base + subsumption flags, base label, binary
LEVELS = ("full", "subsumption", "base", "binary")


def judgments_frame(
    judgments: pd.DataFrame | Iterable[tuple[Any, Any, Any]],
    item: str = "item",
    annotator: str = "annotator",
    label: str = "label",
) -> pd.DataFrame:
    """A judgments table with columns ``item``, ``annotator``, ``label`` (rows without a label
    dropped). Accepts a DataFrame (columns renamed from ``item``/``annotator``/``label``) or
    an iterable of ``(item, annotator, label)`` triples."""
    if isinstance(judgments, pd.DataFrame):
        missing = [c for c in (item, annotator, label) if c not in judgments.columns]
        if missing:
            raise AnnotationDataError(
                Errors.E620_judgments_table_lacks.format(
                    missing=missing, judgments_columns=list(judgments.columns)
                )
            )
        frame = judgments[[item, annotator, label]].rename(
            columns={item: "item", annotator: "annotator", label: "label"}
        )
    else:
        frame = pd.DataFrame(list(judgments), columns=["item", "annotator", "label"])
    frame = frame.dropna(subset=["label"]).reset_index(drop=True)
    times = frame.groupby(["item", "annotator"]).size()
    if (times > 1).any():
        (item_, annotator_), n = next((key, n) for key, n in times.items() if n > 1)
        raise AnnotationDataError(
            Errors.E624_annotator_judged_item.format(annotator=annotator_, item=item_, n=n)
        )
    return frame


def reducer(
    scheme: str | LabelScheme, level: str = "full", reading: str | None = None
) -> Callable[[Any], Any]:
    """A function mapping a label to its reduced form (None = dropped).

    Args:
        scheme: label scheme of the labels.
        level: ``full`` (canonical label), ``subsumption`` (Turku base + ``<``/``>``), ``base``
            (Turku base label) or ``binary`` (the scheme's binary reading).
        reading: binary reading name (Turku ``loose``/``strict``).
    """
    scheme = get_scheme(scheme) if isinstance(scheme, str) else scheme
    if level == "full":
        return scheme.normalize
    if level == "binary":
        return lambda value: scheme.to_binary(value, reading)
    if level in ("subsumption", "base"):
        if not isinstance(scheme, TurkuScheme):
            return scheme.normalize  # no flags to drop
        return lambda value: str(scheme.reduce(value, level))
    raise AnnotationDataError(
        Errors.E621_unknown_level_choose.format(level=level, levels=", ".join(LEVELS))
    )


def reduce_labels(
    frame: pd.DataFrame, scheme: str | LabelScheme, level: str = "full", reading: str | None = None
) -> pd.DataFrame:
    """``frame`` with its ``label`` column reduced to ``level`` (rows reduced to None dropped)."""
    function = reducer(scheme, level, reading)
    out = frame.copy()
    out["label"] = [function(v) for v in out["label"]]
    return out.dropna(subset=["label"]).reset_index(drop=True)


def cohen_kappa(
    labels1: Sequence[Any],
    labels2: Sequence[Any],
    weights: str | None = None,
    labels: Sequence[Any] | None = None,
) -> float:
    """Cohen's kappa of two aligned label sequences (``sklearn.metrics.cohen_kappa_score``).

    ``weights``: None, ``linear`` or ``quadratic`` (then ``labels`` gives the order)."""
    from sklearn.metrics import cohen_kappa_score

    if len(labels1) != len(labels2):
        raise AnnotationDataError(
            Errors.E622_label_sequences_differ.format(
                n_labels1=len(labels1), n_labels2=len(labels2)
            )
        )
    return float(
        cohen_kappa_score(
            list(labels1),
            list(labels2),
            weights=weights,
            labels=None if labels is None else list(labels),
        )
    )


def pairwise_cohen_kappa(frame: pd.DataFrame) -> dict[str, float]:
    """Cohen's kappa of every annotator pair on their shared items, and their average
    weighted by the number of shared items (T9).

    Returns:
        ``{"weighted_mean": ..., "<a>|<b>": kappa, ...}``; pairs sharing fewer than two items
        are skipped.
    """
    wide = frame.pivot_table(index="item", columns="annotator", values="label", aggfunc="first")
    total = 0.0
    weight = 0
    out: dict[str, float] = {}
    for a, b in combinations(sorted(wide.columns, key=str), 2):
        both = wide[[a, b]].dropna()
        if len(both) < 2:
            continue
        value = cohen_kappa(both[a].tolist(), both[b].tolist())
        if np.isnan(value):
            continue
        out[f"{a}|{b}"] = value
        total += value * len(both)
        weight += len(both)
    out["weighted_mean"] = total / weight if weight else float("nan")
    return out


def fleiss_kappa(frame: pd.DataFrame, raters: int | None = None) -> float:
    """Fleiss' kappa (``statsmodels.stats.inter_rater.fleiss_kappa``) over items that have
    exactly ``raters`` judgments (default: the most common count among the items judged at
    least twice; single judgments carry no agreement). ``nan`` when undefined:
    :func:`undefined_reason` says why."""
    from statsmodels.stats.inter_rater import fleiss_kappa as _fleiss

    counts = frame.groupby("item")["label"].count()
    multiple = counts[counts >= 2]
    if raters is None and multiple.empty:
        return float("nan")
    n = int(raters or multiple.mode().iloc[0])
    keep = counts[counts == n].index
    if n < 2 or keep.empty:
        return float("nan")  # no item with n >= 2 judgments: nothing to agree on
    table = pd.crosstab(
        frame[frame["item"].isin(keep)]["item"], frame[frame["item"].isin(keep)]["label"]
    )
    return float(_fleiss(table.to_numpy(), method="fleiss"))


def undefined_reason(frame: pd.DataFrame) -> str:
    """Why chance-corrected agreement (kappa, alpha) of ``frame`` is ``nan``; ``""`` when
    nothing makes it undefined.

    Example:
        >>> undefined_reason(judgments_frame([("i1", "a", "4"), ("i2", "a", "2")]))
        'undefined: none of the 2 items has two judgments yet (agreement needs double annotation)'
    """
    counts = frame.groupby("item")["label"].count()
    multiple = counts[counts >= 2]
    if multiple.empty:
        return (
            f"undefined: none of the {len(counts)} items has two judgments yet "
            "(agreement needs double annotation)"
        )
    if frame[frame["item"].isin(multiple.index)]["label"].nunique() < 2:
        return (
            f"undefined: all judgments of the {len(multiple)} double-annotated items share one "
            "label, so chance agreement is 1 and the chance correction divides by zero"
        )
    return ""


def undefined_reasons(
    judgments: pd.DataFrame,
    scheme: str | LabelScheme,
    levels: Sequence[str] = LEVELS,
    reading: str | None = None,
) -> dict[str, str]:
    """:func:`undefined_reason` at each label level of :func:`agreement_report`:
    ``{level: reason}``, levels where agreement is defined left out."""
    scheme = get_scheme(scheme) if isinstance(scheme, str) else scheme
    out = {}
    for level in levels:
        if level == "binary" and not scheme.readings():
            continue
        reason = undefined_reason(reduce_labels(judgments, scheme, level, reading))
        if reason:
            out[level] = reason
    return out


def fleiss_kappa_table(table: Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa of an items × categories count table (statsmodels)."""
    from statsmodels.stats.inter_rater import fleiss_kappa as _fleiss

    return float(_fleiss(np.asarray(table), method="fleiss"))


def krippendorff_alpha(
    frame: pd.DataFrame, level: str = "nominal", order: Sequence[Any] | None = None
) -> float:
    """Krippendorff's alpha (the ``krippendorff`` package), missing judgments allowed.

    Args:
        level: ``nominal``, ``ordinal``, ``interval`` or ``ratio``.
        order: the label order for ordinal/interval data (default: sorted labels; numeric
            strings sort numerically).
    """
    import krippendorff

    values = list(order) if order is not None else _sorted_values(frame["label"].unique())
    code = {v: i + 1 for i, v in enumerate(values)}
    unknown = set(frame["label"]) - set(code)
    if unknown:
        raise AnnotationDataError(
            Errors.E623_labels_order.format(unknown=sorted(map(str, unknown)), values=values)
        )
    if len(values) < 2:
        return float("nan")  # alpha is undefined when only one value occurs
    wide = frame.assign(code=frame["label"].map(code)).pivot_table(
        index="annotator", columns="item", values="code", aggfunc="first"
    )
    data = wide.to_numpy(dtype=float)
    if not ((~np.isnan(data)).sum(axis=0) >= 2).any():
        return float("nan")  # no item judged twice: nothing pairable, alpha undefined
    # every judgment the same value: the expected disagreement is 0 and alpha NaN (0/0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(
            krippendorff.alpha(
                reliability_data=data,
                level_of_measurement=level,
                value_domain=list(range(1, len(values) + 1)),
            )
        )


def _sorted_values(values: Iterable[Any]) -> list[Any]:
    values = list(values)
    try:
        return sorted(values, key=lambda v: float(v))
    except (TypeError, ValueError):
        return sorted(values, key=str)


def versus_consensus(
    frame: pd.DataFrame, consensus: dict[Any, Any], min_annotators: int = 2
) -> dict[str, float]:
    """Accuracy and Cohen's kappa of individual judgments against the consensus labels (T9).

    Only items judged by at least ``min_annotators`` different annotators count (T9 measures
    the double-annotated items: a single annotator's label *is* the consensus, and counting
    it would inflate accuracy); every judgment of such an item counts once.
    """
    raters = frame.groupby("item")["annotator"].nunique()
    multi = set(raters.index[raters >= min_annotators])
    rows = frame[frame["item"].isin([i for i in consensus if i in multi])]
    if rows.empty:
        return {"accuracy": float("nan"), "kappa": float("nan"), "n": 0.0}
    truth = [consensus[i] for i in rows["item"]]
    given = rows["label"].tolist()
    accuracy = float(np.mean([a == b for a, b in zip(given, truth, strict=True)]))
    return {"accuracy": accuracy, "kappa": cohen_kappa(given, truth), "n": float(len(rows))}


def agreement_report(
    judgments: pd.DataFrame,
    scheme: str | LabelScheme,
    consensus: dict[Any, Any] | None = None,
    levels: Sequence[str] = LEVELS,
    reading: str | None = None,
    ordinal: bool = False,
) -> dict[str, float]:
    """All agreement figures of T9 at each label level.

    Args:
        judgments: long table (``item``, ``annotator``, ``label``).
        scheme: the label scheme (reductions and the binary reading depend on it).
        consensus: item -> resolved label; adds ``accuracy`` and ``kappa_vs_consensus``
            (on the items with at least two annotators only, see :func:`versus_consensus`).
        levels: label reductions to report (binary is skipped for schemes without a reading).
        ordinal: also report ordinal Krippendorff's alpha (Likert ratings, M13).
    Returns:
        flat ``{"<level>_<metric>": value}``: ``pairwise_kappa``, ``fleiss_kappa``,
        ``alpha_nominal`` (and ``alpha_ordinal``), ``accuracy``, ``kappa_vs_consensus``.
    """
    scheme = get_scheme(scheme) if isinstance(scheme, str) else scheme
    out: dict[str, float] = {}
    for level in levels:
        if level == "binary" and not scheme.readings():
            continue
        frame = reduce_labels(judgments, scheme, level, reading)
        out[f"{level}_pairwise_kappa"] = pairwise_cohen_kappa(frame)["weighted_mean"]
        out[f"{level}_fleiss_kappa"] = fleiss_kappa(frame)
        out[f"{level}_alpha_nominal"] = krippendorff_alpha(frame, "nominal")
        if ordinal:
            out[f"{level}_alpha_ordinal"] = krippendorff_alpha(frame, "ordinal")
        if consensus:
            function = reducer(scheme, level, reading)
            reduced = {k: function(v) for k, v in consensus.items() if v is not None}
            reduced = {k: v for k, v in reduced.items() if v is not None}
            stats = versus_consensus(frame, reduced)
            out[f"{level}_accuracy"] = stats["accuracy"]
            out[f"{level}_kappa_vs_consensus"] = stats["kappa"]
    return out


# -- the same figures from aggregated counts (what the database returns) ----------------------
# The admin's statistics page gets its agreement from GROUP BY queries (155,000
# items must not be read into Python); these functions turn those counts into the figures of
# the reference implementations above, and tests/annotate/test_agreement_sql.py holds them
# equal on random data.


def kappa_from_table(table: np.ndarray) -> float:
    """Cohen's kappa of a square contingency table (rows: one rater's labels, columns: the
    other's, both in one label order), as ``sklearn.metrics.cohen_kappa_score`` computes it;
    ``nan`` when chance agreement is total.

    Example:
        >>> round(kappa_from_table(np.array([[2, 0], [1, 1]])), 3)  # y,y,n,n vs y,n,n,n
        0.5
    """
    table = np.asarray(table, dtype=float)
    total = table.sum()
    if total == 0:
        return float("nan")
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / total
    off = 1 - np.eye(len(table))
    denominator = (off * expected).sum()
    if denominator == 0:
        return float("nan")
    return float(1 - (off * table).sum() / denominator)


def fleiss_from_counts(items: int, raters: int, totals: Sequence[int], squares: int) -> float:
    """Fleiss' kappa of ``items`` items with ``raters`` judgments each, from each category's
    total count (``totals``) and the sum over items and categories of the squared counts
    (``squares``): the statsmodels formula without the items × categories table."""
    if items == 0 or raters < 2:
        return float("nan")
    n_total = items * raters
    p_mean = (squares - n_total) / (n_total * (raters - 1))
    p_expected = sum((t / n_total) ** 2 for t in totals)
    if p_expected == 1:
        return float("nan")
    return float((p_mean - p_expected) / (1 - p_expected))


def alpha_from_coincidences(coincidences: np.ndarray) -> float:
    """Krippendorff's nominal alpha from the coincidence matrix ``o[c, k]`` (pairs of values
    within a unit, each weighted by 1 / (values in the unit - 1)), as the ``krippendorff``
    package computes it; ``nan`` when the expected disagreement is 0."""
    o = np.asarray(coincidences, dtype=float)
    n_v = o.sum(axis=0)
    n = n_v.sum()
    if n <= 1:
        return float("nan")
    expected = (n * n - (n_v * n_v).sum()) / (n - 1)
    if expected == 0:
        return float("nan")
    return float(1 - (n - np.trace(o)) / expected)
