"""Crowd judgments (M4): import, worker quality control with hidden gold pairs, aggregation.

The judgments table has one row per judgment: ``worker``, ``pair``, ``label`` and optionally
``time``, ``gold`` (the pair is a hidden gold question) and ``gold_label`` (its true label).

Aggregation methods:

* ``threshold`` — MultiPIT's vote rule: with 6 judgments, more than 3 paraphrase votes →
  paraphrase, fewer → not, exactly 3 → dropped (threshold 4 for the strict set);
* ``majority`` — the most frequent label, ties dropped;
* ``dawid-skene`` — the EM model of Dawid & Skene (1979), from crowd-kit.

Example:
    >>> from parakit.annotate.crowd import aggregate, recovery_accuracy, simulate_crowd
    >>> judgments, truth = simulate_crowd(n_items=50, seed=0)
    >>> labels = aggregate(judgments, method="majority")
    >>> recovery_accuracy(labels, truth)["accuracy"] > 0.8
    True
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from parakit.errors import AnnotationDataError, DataFormatError, Errors
from parakit.io.jsonl import iter_jsonl

REQUIRED = ("worker", "pair", "label")
METHODS = ("threshold", "majority", "dawid-skene")
_TRUE = {"1", "true", "yes", "y", "t"}


def read_judgments(path: str | Path, columns: dict[str, str] | None = None) -> pd.DataFrame:
    """Read crowd judgments from CSV, TSV or JSONL.

    Args:
        path: the file; the format follows the extension (``.csv``, ``.tsv``, ``.jsonl``).
        columns: mapping from our column name to the file's (``{"worker": "WorkerId"}``).
    Returns:
        a DataFrame with ``worker``, ``pair``, ``label`` (strings), ``time`` (or None),
        ``gold`` (bool) and ``gold_label`` (string or None).
    Raises:
        DataFormatError: naming the file, the line and the missing or bad field.
    """
    path = Path(path)
    names = {key: key for key in (*REQUIRED, "time", "gold", "gold_label")}
    names.update(columns or {})
    records: list[tuple[int, dict[str, Any]]] = []
    suffix = path.name.lower().removesuffix(".gz").rsplit(".", 1)[-1]
    if suffix == "jsonl":
        records.extend(iter_jsonl(path, code="E630"))
    elif suffix in ("csv", "tsv"):
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle, delimiter="," if suffix == "csv" else "\t")
            records = [(number, row) for number, row in enumerate(reader, start=2)]
    else:
        raise DataFormatError(Errors.E630_crowd_judgments_must, path=path)
    if not records:
        raise DataFormatError(Errors.E637_file_holds_judgments, path=path)
    rows = []
    seen: dict[tuple[str, str], int] = {}
    for number, record in records:
        row: dict[str, Any] = {}
        for key in REQUIRED:
            value = record.get(names[key])
            if value is None or str(value).strip() == "":
                raise DataFormatError(
                    Errors.E631_missing_every_judgment.format(key=key),
                    path=path,
                    line=number,
                    field=names[key],
                )
            row[key] = str(value).strip()
        first = seen.setdefault((row["worker"], row["pair"]), number)
        if first != number:
            raise DataFormatError(
                Errors.E636_worker_judged_pair.format(
                    worker=row["worker"], pair=row["pair"], first=first
                ),
                path=path,
                line=number,
                field=names["worker"],
            )
        time = record.get(names["time"])
        row["time"] = None if time in (None, "") else str(time)
        gold = record.get(names["gold"], False)
        row["gold"] = gold if isinstance(gold, bool) else str(gold).strip().lower() in _TRUE
        gold_label = record.get(names["gold_label"])
        row["gold_label"] = None if gold_label in (None, "") else str(gold_label).strip()
        if row["gold"] and row["gold_label"] is None:
            raise DataFormatError(
                Errors.E632_gold_judgment_needs, path=path, line=number, field=names["gold_label"]
            )
        rows.append(row)
    return pd.DataFrame(rows, columns=[*REQUIRED, "time", "gold", "gold_label"])


def _majority(labels: pd.Series) -> Any:
    counts = labels.value_counts()
    if len(counts) > 1 and counts.iloc[0] == counts.iloc[1]:
        return None
    return counts.index[0]


def worker_quality(judgments: pd.DataFrame) -> pd.DataFrame:
    """Per worker: judgments, gold questions, gold accuracy and Cohen's kappa against the
    majority label of the *other* workers on the same pairs (ties among them skipped).

    Returns:
        DataFrame indexed by worker with ``n``, ``n_gold``, ``gold_accuracy``, ``kappa``.
    """
    from sklearn.metrics import cohen_kappa_score

    if "gold" not in judgments:  # the column is optional: no gold questions
        judgments = judgments.assign(gold=False, gold_label=None)
    ordinary = judgments[~judgments["gold"].astype(bool)]
    by_pair = {pair: group for pair, group in ordinary.groupby("pair")}
    rows = []
    for worker, own in judgments.groupby("worker"):
        gold = own[own["gold"].astype(bool)]
        accuracy = float((gold["label"] == gold["gold_label"]).mean()) if len(gold) else np.nan
        mine, theirs = [], []
        for pair, label in own[~own["gold"].astype(bool)][["pair", "label"]].itertuples(
            index=False
        ):
            others = by_pair[pair]
            others = others[others["worker"] != worker]["label"]
            if others.empty:
                continue
            majority = _majority(others)
            if majority is None:
                continue
            mine.append(label)
            theirs.append(majority)
        kappa = np.nan
        if len(mine) >= 2:
            kappa = 1.0 if mine == theirs else float(cohen_kappa_score(mine, theirs))
        rows.append(
            {
                "worker": worker,
                "n": len(own),
                "n_gold": len(gold),
                "gold_accuracy": accuracy,
                "kappa": kappa,
            }
        )
    return pd.DataFrame(rows).set_index("worker")


def filter_workers(
    judgments: pd.DataFrame, min_gold_accuracy: float = 0.85, min_kappa: float = 0.2
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Keep the judgments of workers with gold accuracy > ``min_gold_accuracy`` and kappa >
    ``min_kappa`` (MultiPIT's rule); gold questions are removed from the result.

    Returns:
        (kept ordinary judgments, the quality table with a boolean ``kept`` column).
    """
    if "gold" not in judgments:  # the column is optional: no gold questions
        judgments = judgments.assign(gold=False)
    quality = worker_quality(judgments)
    accuracy_ok = quality["gold_accuracy"].isna() | (quality["gold_accuracy"] > min_gold_accuracy)
    kappa_ok = quality["kappa"].fillna(-1.0) > min_kappa
    quality = quality.assign(kept=accuracy_ok & kappa_ok)
    keep = set(quality.index[quality["kept"]])
    kept = judgments[judgments["worker"].isin(keep) & ~judgments["gold"].astype(bool)]
    return kept.reset_index(drop=True), quality


def vote_counts(judgments: pd.DataFrame, positive: str = "1") -> pd.DataFrame:
    """Per pair: the number of judgments and of ``positive`` votes."""
    ordinary = judgments[~judgments["gold"].astype(bool)] if "gold" in judgments else judgments
    grouped = ordinary.groupby("pair")["label"]
    return pd.DataFrame(
        {
            "n": grouped.count(),
            "votes": grouped.apply(lambda s: int((s == positive).sum())).astype(int),
        }
    )


def aggregate(
    judgments: pd.DataFrame,
    method: str = "threshold",
    *,
    n_judgments: int = 6,
    threshold: int = 3,
    positive: str = "1",
    negative: str = "0",
    require_n: bool = True,
    min_judgments: int = 1,
    n_iter: int = 100,
) -> pd.Series:
    """Aggregate judgments into one label per pair.

    Args:
        method: ``threshold``, ``majority`` or ``dawid-skene``.
        n_judgments, threshold: the vote rule (``> threshold`` → ``positive``, ``<`` →
            ``negative``, ``=`` → dropped); MultiPIT: 6 and 3, strict set 6 and 4.
        require_n: with ``threshold``, drop pairs that do not have exactly ``n_judgments``.
            False: the rule scales to the judgments a pair has left (after quality control
            removed some): ``votes / n`` against ``threshold / n_judgments``, so 4 of 5 is
            positive, 2 of 4 is a tie and dropped; pairs with fewer than ``min_judgments``
            are dropped. With exactly ``n_judgments`` both readings agree.
        min_judgments: the fewest judgments a pair may keep (``require_n=False``).
        n_iter: EM iterations of Dawid–Skene.
    Returns:
        a Series pair -> label (dropped pairs are absent), sorted by pair.
    """
    ordinary = judgments[~judgments["gold"].astype(bool)] if "gold" in judgments else judgments
    if method == "threshold":
        stray = ~ordinary["label"].isin([positive, negative])
        if stray.any():
            raise AnnotationDataError(
                Errors.E638_labels_neither_positive.format(
                    unknown=sorted(set(ordinary["label"][stray]), key=str),
                    positive=positive,
                    negative=negative,
                    pair=ordinary["pair"][stray].iloc[0],
                )
            )
        counts = vote_counts(ordinary, positive)
        if require_n:
            counts = counts[counts["n"] == n_judgments]
        else:
            counts = counts[counts["n"] >= max(min_judgments, 1)]
        # votes/n against threshold/n_judgments, in integers (n == n_judgments: votes vs threshold)
        scaled = counts["votes"] * n_judgments - threshold * counts["n"]
        counts, scaled = counts[scaled != 0], scaled[scaled != 0]
        return pd.Series(
            np.where(scaled > 0, positive, negative),
            index=counts.index,
            name="label",
        ).sort_index()
    if method == "majority":
        labels = ordinary.groupby("pair")["label"].apply(_majority)
        return labels.dropna().rename("label").sort_index()
    if method == "dawid-skene":
        import warnings

        from crowdkit.aggregation import DawidSkene

        data = ordinary.rename(columns={"pair": "task"})[["task", "worker", "label"]]
        with warnings.catch_warnings():  # crowd-kit uses pandas APIs that newer pandas warns on
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            result = DawidSkene(n_iter=n_iter).fit_predict(data)
        return result.rename("label").rename_axis("pair").sort_index()
    raise AnnotationDataError(
        Errors.E633_unknown_aggregation_method.format(method=method, methods=", ".join(METHODS))
    )


def multipit_labels(
    judgments: pd.DataFrame,
    *,
    min_gold_accuracy: float = 0.85,
    min_kappa: float = 0.2,
    n_judgments: int = 6,
    threshold: int = 3,
    min_judgments: int = 3,
    positive: str = "1",
    negative: str = "0",
) -> tuple[pd.Series, pd.DataFrame]:
    """M4, the MultiPIT recipe: worker quality control, then the vote-threshold rule.

    Workers with gold accuracy <= ``min_gold_accuracy`` or kappa against the others'
    majority <= ``min_kappa`` are removed with all their judgments (:func:`filter_workers`).
    MultiPIT then had the removed workers' judgments collected again; without that second
    round a pair keeps fewer than ``n_judgments``, so the rule is applied to what is left
    (``votes / n`` against ``threshold / n_judgments``: more than half positive is a
    paraphrase, less than half is not, exactly half is dropped), and pairs left with fewer
    than ``min_judgments`` are dropped. Applying the exact-6 rule after QC labels almost
    nothing: every pair that lost a judgment would be dropped.

    Returns:
        (labels: pair -> ``positive``/``negative``, the worker quality table with ``kept``).

    Example:
        >>> judgments, truth = simulate_crowd(n_items=240, seed=0)
        >>> labels, quality = multipit_labels(judgments)
        >>> recovery_accuracy(labels, truth)["accuracy"] > 0.95
        True
        >>> sorted(quality.index[~quality["kept"]])[:4]   # the four spammers are out
        ['spam0', 'spam1', 'spam2', 'spam3']
    """
    kept, quality = filter_workers(judgments, min_gold_accuracy, min_kappa)
    labels = aggregate(
        kept,
        "threshold",
        n_judgments=n_judgments,
        threshold=threshold,
        positive=positive,
        negative=negative,
        require_n=False,
        min_judgments=min_judgments,
    )
    return labels, quality


def simulate_crowd(
    n_items: int = 200,
    n_workers: int = 20,
    n_judgments: int = 6,
    accuracies: Sequence[float] | None = None,
    n_spammers: int = 4,
    gold_every: int = 5,
    positive_rate: float = 0.5,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.Series]:
    """A simulated binary crowd with known truth, for testing aggregation and QC.

    Honest workers answer correctly with their accuracy (default: drawn from U(0.7, 0.95));
    spammers answer at random. Each item gets ``n_judgments`` distinct workers; every
    ``gold_every``-th item is a hidden gold question (``gold=True`` with ``gold_label``).

    Returns:
        (judgments table, truth Series pair -> label ``"0"``/``"1"``).
    """
    rng = np.random.default_rng(seed)
    honest = n_workers - n_spammers
    if accuracies is None:
        accuracies = rng.uniform(0.7, 0.95, size=honest).tolist()
    skill = list(accuracies) + [0.5] * n_spammers
    if len(skill) != n_workers or n_judgments > n_workers:
        raise AnnotationDataError(Errors.E634_need_one_accuracy)
    workers = [f"w{i:02d}" for i in range(honest)] + [f"spam{i}" for i in range(n_spammers)]
    truth = {f"p{i:04d}": str(int(rng.random() < positive_rate)) for i in range(n_items)}
    rows = []
    for number, (pair, label) in enumerate(truth.items()):
        gold = gold_every > 0 and number % gold_every == 0
        for w in rng.choice(n_workers, size=n_judgments, replace=False):
            if workers[w].startswith("spam"):
                given = str(int(rng.random() < 0.5))
            else:
                given = label if rng.random() < skill[w] else str(1 - int(label))
            rows.append(
                {
                    "worker": workers[w],
                    "pair": pair,
                    "label": given,
                    "time": None,
                    "gold": gold,
                    "gold_label": label if gold else None,
                }
            )
    return pd.DataFrame(rows), pd.Series(truth, name="label")


def recovery_accuracy(labels: pd.Series, truth: pd.Series) -> dict[str, float]:
    """Accuracy of aggregated labels on the pairs they cover, and the coverage."""
    common = labels.index.intersection(truth.index)
    if len(common) == 0:
        return {"accuracy": float("nan"), "coverage": 0.0}
    return {
        "accuracy": float((labels[common] == truth[common]).mean()),
        "coverage": len(common) / len(truth),
    }


def attach(
    pairs: Any,
    judgments: pd.DataFrame,
    labels: pd.Series | None = None,
    drop_unlabelled: bool = False,
) -> Any:
    """A copy of ``pairs`` (a PairSet) with each pair's crowd judgments and aggregated label.

    Args:
        pairs: the candidate pairs the judgments refer to (by ``pair`` = pair id).
        judgments: the judgments table (gold questions included or not).
        labels: aggregated labels (from :func:`aggregate`); pairs without one keep label None.
        drop_unlabelled: leave out pairs without an aggregated label.
    Returns:
        a PairSet whose pairs carry ``judgments`` (:class:`~parakit.schema.Judgment`, gold flag
        and time kept) and ``label``.
    Raises:
        DataFormatError: judgments name pairs the set does not contain.
    """
    from parakit.schema import Judgment

    known = {p.id for p in pairs}
    unknown = sorted(set(judgments["pair"]) - known)
    if unknown:
        raise DataFormatError(
            Errors.E635_judgments_pairs_pair.format(
                unknown_5=unknown[:5], if_len_unknown_5_else=" ..." if len(unknown) > 5 else ""
            ),
            field="pair",
        )
    by_pair: dict[str, list[Judgment]] = {}
    for row in judgments.itertuples(index=False):
        time = getattr(row, "time", None)
        by_pair.setdefault(row.pair, []).append(
            Judgment(
                annotator=str(row.worker),
                label=str(row.label),
                time=None if time is None or pd.isna(time) else str(time),
                gold=bool(getattr(row, "gold", False)),
            )
        )
    labelled = {} if labels is None else labels.to_dict()
    out = []
    for pair in pairs:
        label = labelled.get(pair.id)
        if drop_unlabelled and label is None:
            continue
        out.append(pair.replace(label=label, judgments=tuple(by_pair.get(pair.id, ()))))
    return pairs.derive(out)
