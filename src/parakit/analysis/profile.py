"""Performance profiles of paraphrase identification systems (Q2–Q6).

A profile is the overall accuracy and F1 of each system plus its accuracy on the subset of
test pairs containing each phenomenon (a pair may be in several subsets), with

* Mann–Whitney U of each phenomenon's correct/incorrect predictions against the whole test
  set (Q4),
* McNemar's test per phenomenon for every two systems (Q5),
* Friedman over systems × phenomenon accuracies (phenomena ranked per system, ties averaged)
  and the Nemenyi critical difference (Q6),
* the checks made before profiling (Q3): how phenomena are distributed over positive and
  negative pairs, and the pairwise Pearson correlation of the phenomena.

Systems are just predictions: arrays, or a predictions file (:func:`load_predictions`).

Example:
    >>> import numpy as np
    >>> from parakit.analysis.phenomena import Phenomena
    >>> ph = Phenomena(["a", "b", "c"], ["x"] * 3,
    ...                np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1], [0, 0, 1]]), list("1234"))
    >>> prof = profile([1, 0, 1, 0], {"S1": [1, 0, 0, 0], "S2": [1, 1, 1, 0]}, ph,
    ...                min_support=1)
    >>> prof.overall["S1"]["accuracy"], prof.accuracy("S2", "a")
    (0.75, 0.5)
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from parakit.analysis.phenomena import Phenomena
from parakit.analysis.stats import (
    FriedmanNemenyi,
    friedman_nemenyi,
    mann_whitney,
    mcnemar,
    pearson_matrix,
)
from parakit.errors import AnalysisError, DataFormatError, Errors
from parakit.io.jsonl import iter_jsonl
from parakit.io.validate import Where, check_joined_texts

_TRUE = {"1", "true", "yes", "paraphrase", "positive"}
_FALSE = {"0", "false", "no", "non-paraphrase", "negative"}


def _binary(value: Any, *, path: Path | None = None, line: int | None = None) -> int:
    if isinstance(value, bool | np.bool_):
        return int(value)
    if isinstance(value, int | np.integer) and value in (0, 1):
        return int(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return 1
    if text in _FALSE:
        return 0
    raise DataFormatError(
        Errors.E1004_prediction_binary_use.format(value=value),
        path=path,
        line=line,
        field="prediction",
    )


def _is_canonical(path: Path) -> bool:
    """Whether a JSONL file starts with the canonical pair-set header (``{"parakit": 1, ...}``)."""
    records = iter_jsonl(path, code="E1004")
    try:
        first = next(records, None)
    finally:
        records.close()
    return first is not None and isinstance(first[1], dict) and "parakit" in first[1]


def load_predictions(
    path: str | Path,
    ids: Sequence[str] | None = None,
    texts: Mapping[str, tuple[str, str]] | None = None,
    against: str = "the test set",
) -> dict[str, np.ndarray]:
    """Read system predictions from CSV, TSV or JSONL.

    Layouts (header required for CSV/TSV):

    * long: columns ``id``, ``system``, ``prediction`` — one row per pair and system;
    * wide: column ``id`` and one column per system;
    * JSONL: ``{"id": ..., "system": ..., "prediction": ...}`` or
      ``{"id": ..., "predictions": {"S1": 1, "S2": 0}}`` per line;
    * canonical JSONL (what ``parakit identify predict -o X.jsonl`` writes): one system named
      after the file, predicting the binary reading of each pair's label (or
      ``metadata.prediction.p_paraphrase >= 0.5`` when the label has none).

    Args:
        path: the file.
        ids: the test pairs' ids; predictions are returned in this order and every id must
            have a prediction from every system. Without ``ids``, the file's order is kept.
        texts: the test pairs' ``(text1, text2)`` by id: a prediction that carries texts (the
            canonical JSONL of ``identify predict``, or ``text1``/``text2`` columns) must carry
            these, or it was made for another file (ids of CSV/TSV imports are row numbers).
        against: the test set's name, for that message.

    Returns:
        system name -> 0/1 array.

    Raises:
        DataFormatError: unknown layout, non-binary value, or a missing id (named); E140 a
            prediction whose texts differ from the test pair of its id (the first one named).
    """
    path = Path(path)
    if not path.exists():
        raise DataFormatError(Errors.E1005_predictions_file_found, path=path)
    table: dict[str, dict[str, int]] = {}
    order: list[str] = []

    def put(system: str, pid: str, value: Any, line: int, record: Any = None) -> None:
        if texts is not None and record is not None and "text1" in record and "text2" in record:
            check_joined_texts(
                texts, pid, (record["text1"], record["text2"]), Where(path, line), against
            )
        table.setdefault(system, {})[pid] = _binary(value, path=path, line=line)
        if pid not in seen:
            seen.add(pid)
            order.append(pid)

    seen: set[str] = set()
    if path.suffix in (".jsonl", ".json") and _is_canonical(path):
        # what `parakit identify predict` writes: a pair set whose labels are the predictions
        from parakit.io import read

        pairs = read(path, format="jsonl")
        for number, (pair, value) in enumerate(zip(pairs, pairs.binary_labels(), strict=True), 2):
            if value is None:  # no binary reading of the label: P(paraphrase) decides
                proba = (pair.metadata.get("prediction") or {}).get("p_paraphrase")
                value = None if proba is None else int(proba >= 0.5)
            put(path.stem, pair.id, value, number, {"text1": pair.text1, "text2": pair.text2})
    elif path.suffix in (".jsonl", ".json"):
        for number, record in iter_jsonl(path, code="E1004"):
            if "id" not in record:
                raise DataFormatError(
                    Errors.E1004_missing_field, path=path, line=number, field="id"
                )
            if "predictions" in record:
                for system, value in record["predictions"].items():
                    put(str(system), str(record["id"]), value, number, record)
            elif "system" in record and "prediction" in record:
                put(str(record["system"]), str(record["id"]), record["prediction"], number, record)
            else:
                raise DataFormatError(
                    Errors.E1004_expected_system_prediction, path=path, line=number
                )
    else:
        delimiter = "\t" if path.suffix in (".tsv", ".txt") else ","
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle, delimiter=delimiter)
            fields = reader.fieldnames or []
            if "id" not in fields:
                raise DataFormatError(Errors.E1004_header_needs_id, path=path, line=1, field="id")
            long = {"system", "prediction"} <= set(fields)
            for number, row in enumerate(reader, start=2):
                if long:
                    put(row["system"], row["id"], row["prediction"], number, row)
                else:
                    for system in fields:
                        if system not in ("id", "text1", "text2"):
                            put(system, row["id"], row[system], number, row)
    if not table:
        raise DataFormatError(Errors.E1004_predictions_file, path=path)
    wanted = list(ids) if ids is not None else order
    out = {}
    for system, values in table.items():
        missing = [i for i in wanted if i not in values]
        if missing:
            raise DataFormatError(
                Errors.E1006_system_prediction_pair.format(
                    system=system, n_missing=len(missing), missing_0=missing[0]
                ),
                path=path,
            )
        out[system] = np.array([values[i] for i in wanted], dtype=int)
    return out


@dataclass
class PerformanceProfile:
    """The result of :func:`profile`; see the module docstring.

    Attributes:
        systems: system names.
        phenomena: the phenomenon table used.
        y_true: gold 0/1 labels.
        predictions: system -> 0/1 predictions.
        overall: system -> {"accuracy", "f1", "n"}.
        table: one row per phenomenon: name, category, support, share of positives, and per
            system accuracy and Mann–Whitney p (None = "na").
        mcnemar: rows (system_a, system_b, phenomenon, acc_a, acc_b, b, c, p, method);
            phenomenon ``OVERALL`` is the whole test set.
        friedman: Friedman/Nemenyi over the phenomena with enough support, or None.
        friedman_note: why ``friedman`` is None.
        checks: the Q3 checks.
        settings: min_support, alpha...
    """

    systems: list[str]
    phenomena: Phenomena
    y_true: np.ndarray
    predictions: dict[str, np.ndarray]
    overall: dict[str, dict[str, float]]
    table: list[dict[str, Any]]
    mcnemar: list[dict[str, Any]]
    friedman: FriedmanNemenyi | None
    friedman_note: str | None
    checks: dict[str, Any]
    settings: dict[str, Any] = field(default_factory=dict)

    def accuracy(self, system: str, phenomenon: str) -> float | None:
        """Accuracy of ``system`` on the pairs with ``phenomenon`` (None if there are none)."""
        for row in self.table:
            if row["phenomenon"] == phenomenon:
                return row["accuracy"][system]
        raise AnalysisError(Errors.E1001_phenomenon_profile.format(phenomenon=phenomenon))

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable numbers of the whole profile."""
        return {
            "systems": self.systems,
            "n_pairs": len(self.y_true),
            "positives": int(self.y_true.sum()),
            "overall": self.overall,
            "phenomena": self.table,
            "mcnemar": self.mcnemar,
            "friedman": self.friedman.to_dict() if self.friedman is not None else None,
            "friedman_note": self.friedman_note,
            "checks": self.checks,
            "phenomena_source": self.phenomena.source,
            "signature": self.phenomena.signature,
            "settings": self.settings,
        }

    def to_frame(self):  # -> pandas.DataFrame
        """Phenomena × (support, accuracy per system) as a pandas DataFrame."""
        import pandas as pd

        rows = []
        for row in self.table:
            out = {
                "phenomenon": row["phenomenon"],
                "category": row["category"],
                "support": row["support"],
            }
            for system in self.systems:
                out[f"{system} acc"] = row["accuracy"][system]
                out[f"{system} p"] = row["p"][system]
            rows.append(out)
        return pd.DataFrame(rows)


def _f1(y: np.ndarray, p: np.ndarray) -> float:
    from sklearn.metrics import f1_score

    return float(f1_score(y, p, pos_label=1, zero_division=0))


def profile(
    y_true: Sequence[int] | np.ndarray,
    predictions: Mapping[str, Sequence[int] | np.ndarray],
    phenomena: Phenomena,
    *,
    min_support: int = 5,
    alpha: float = 0.05,
    mcnemar_pairs: Sequence[tuple[str, str]] | None = None,
    correlation_threshold: float = 0.1,
) -> PerformanceProfile:
    """Compute the performance profile of one or more systems.

    Args:
        y_true: gold binary labels, row-aligned with ``phenomena``.
        predictions: system name -> binary predictions (same order).
        phenomena: the pairs × phenomena table.
        min_support: phenomena with fewer pairs get accuracy but no test (the paper's "na")
            and are left out of the Friedman/Nemenyi ranking.
        alpha: significance level of the Nemenyi critical difference.
        mcnemar_pairs: which system pairs to compare (default: every pair).
        correlation_threshold: Q3 reports phenomenon pairs with |Pearson r| at or above it.

    Returns:
        :class:`PerformanceProfile`.

    Raises:
        AnalysisError: length mismatch, non-binary labels, or no systems.
    """
    y = np.asarray(y_true)
    n = len(y)
    if n != len(phenomena):
        raise AnalysisError(Errors.E1001_gold_labels_but.format(n=n, n_phenomena=len(phenomena)))
    if not set(np.unique(y)) <= {0, 1}:
        raise AnalysisError(Errors.E1001_gold_labels_must)
    if not predictions:
        raise AnalysisError(Errors.E1002_system_predictions_given)
    preds = {}
    for name, values in predictions.items():
        arr = np.asarray(values)
        if arr.shape != (n,):
            raise AnalysisError(
                Errors.E1001_system_predictions_pairs.format(name=name, arr_shape=arr.shape, n=n)
            )
        if not set(np.unique(arr)) <= {0, 1}:
            raise AnalysisError(Errors.E1001_system_non_binary.format(name=name))
        preds[str(name)] = arr.astype(int)
    systems = list(preds)
    y = y.astype(int)
    correct = {s: (p == y).astype(int) for s, p in preds.items()}
    overall = {
        s: {"accuracy": float(correct[s].mean()), "f1": _f1(y, preds[s]), "n": n} for s in systems
    }

    table = []
    for j, (name, category) in enumerate(zip(phenomena.names, phenomena.categories, strict=True)):
        mask = phenomena.matrix[:, j]
        support = int(mask.sum())
        row: dict[str, Any] = {
            "phenomenon": name,
            "category": category,
            "support": support,
            "positive_share": float(y[mask].mean()) if support else None,
            "accuracy": {},
            "p": {},
            "u": {},
        }
        for s in systems:
            sub = correct[s][mask]
            row["accuracy"][s] = float(sub.mean()) if support else None
            test = mann_whitney(sub, correct[s], min_support=min_support)
            row["p"][s] = test.p
            row["u"][s] = test.statistic
        table.append(row)

    pairs = list(mcnemar_pairs) if mcnemar_pairs is not None else list(combinations(systems, 2))
    mc_rows = []
    for a, b in pairs:
        if a not in preds or b not in preds:
            raise AnalysisError(Errors.E1001_unknown_system_mcnemar.format(a=a, b=b))
        masks = [("OVERALL", np.ones(n, dtype=bool))]
        masks += [(name, phenomena.matrix[:, j]) for j, name in enumerate(phenomena.names)]
        for name, mask in masks:
            if mask.sum() == 0:
                continue
            test = mcnemar(correct[a][mask], correct[b][mask])
            mc_rows.append(
                {
                    "system_a": a,
                    "system_b": b,
                    "phenomenon": name,
                    "support": int(mask.sum()),
                    "acc_a": float(correct[a][mask].mean()),
                    "acc_b": float(correct[b][mask].mean()),
                    "b": test.details["b"],
                    "c": test.details["c"],
                    "p": test.p,
                    "method": test.method,
                }
            )

    ranked = [r for r in table if r["support"] >= max(min_support, 1)]
    friedman, note = None, None
    if len(systems) < 2:
        note = "the Friedman test needs at least 2 systems"
    elif len(ranked) < 3:
        note = f"the Friedman test needs at least 3 phenomena with >= {min_support} pairs"
    else:
        scores = np.array([[r["accuracy"][s] for r in ranked] for s in systems])
        friedman = friedman_nemenyi(scores, [r["phenomenon"] for r in ranked], alpha=alpha)

    checks = phenomena_checks(y, phenomena, threshold=correlation_threshold)
    return PerformanceProfile(
        systems=systems,
        phenomena=phenomena,
        y_true=y,
        predictions=preds,
        overall=overall,
        table=table,
        mcnemar=mc_rows,
        friedman=friedman,
        friedman_note=note,
        checks=checks,
        settings={
            "min_support": min_support,
            "alpha": alpha,
            "correlation_threshold": correlation_threshold,
        },
    )


def phenomena_checks(
    y_true: np.ndarray, phenomena: Phenomena, threshold: float = 0.1
) -> dict[str, Any]:
    """The checks of Q3 (Kovatchev et al. 2019 §3.2).

    Returns:
        ``distribution``: per phenomenon, its share of all phenomenon occurrences among
        positive pairs and among negative pairs (the two distributions should be similar);
        ``total_variation``: half the L1 distance between them; ``correlation``: the largest
        absolute pairwise Pearson r and the phenomenon pairs with |r| >= ``threshold``.
    """
    y = np.asarray(y_true).astype(bool)
    m = phenomena.matrix.astype(float)
    pos = m[y].sum(axis=0)
    neg = m[~y].sum(axis=0)
    pos_dist = pos / pos.sum() if pos.sum() else np.zeros_like(pos)
    neg_dist = neg / neg.sum() if neg.sum() else np.zeros_like(neg)
    distribution = [
        {"phenomenon": name, "positives": float(p), "negatives": float(q)}
        for name, p, q in zip(phenomena.names, pos_dist, neg_dist, strict=True)
    ]
    out: dict[str, Any] = {
        "distribution": distribution,
        "total_variation": float(0.5 * np.abs(pos_dist - neg_dist).sum()),
    }
    varying = [j for j in range(m.shape[1]) if 0 < m[:, j].sum() < m.shape[0]]
    if len(varying) >= 2:
        r = pearson_matrix(m[:, varying])
        iu = np.triu_indices(len(varying), k=1)
        values = r[iu]
        over = [
            {
                "a": phenomena.names[varying[i]],
                "b": phenomena.names[varying[j]],
                "r": float(r[i, j]),
            }
            for i, j in zip(*iu, strict=True)
            if abs(r[i, j]) >= threshold
        ]
        over.sort(key=lambda item: -abs(item["r"]))
        out["correlation"] = {
            "max_abs_r": float(np.nanmax(np.abs(values))),
            "threshold": threshold,
            "n_over_threshold": len(over),
            "n_pairs": len(values),
            "over_threshold": over[:50],
        }
    else:
        out["correlation"] = {
            "max_abs_r": None,
            "threshold": threshold,
            "n_over_threshold": 0,
            "n_pairs": 0,
            "over_threshold": [],
        }
    return out
