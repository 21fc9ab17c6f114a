"""Classification metrics for paraphrase identification, with JSON and Markdown reports.

* :func:`classification_metrics`: accuracy; precision/recall/F1/support per class, for the
  positive and the negative class (binary reading) and macro/weighted averages; confusion matrix;
* :func:`threshold_sweep` and :func:`calibration` for models with probabilities;
* :func:`turku_table`: the layout of Table 4 of the Turku journal paper (base labels with
  subsumption merged, flags i and s on their own, weighted average and accuracy over complete
  labels);
* :class:`ClassificationReport` (``to_json``, ``to_markdown``, ``save``) and
  :func:`evaluate_classifier` that builds one from a model and labelled pairs;
* :class:`ClassificationEvaluator`: the sentence-transformers evaluator protocol
  (``evaluator(model, output_path=None) -> dict[str, float]`` with ``primary_metric``).

Example:
    >>> m = classification_metrics(["1", "1", "0", "0"], ["1", "0", "0", "0"], positive_label="1")
    >>> m["accuracy"], round(m["positive"]["f1"], 4), m["confusion_matrix"]["matrix"]
    (0.75, 0.6667, [[2, 0], [1, 1]])
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import Errors, EvaluationError
from parakit.evaluate.base import Evaluator
from parakit.labels import LabelScheme, get_scheme


def _prf(truth: Sequence[Any], predicted: Sequence[Any], label: Any) -> dict[str, float]:
    t = np.asarray(truth, dtype=object) == label
    p = np.asarray(predicted, dtype=object) == label
    return {**_prf_of(t, p), "support": int(t.sum())}


def _prf_of(t: np.ndarray, p: np.ndarray) -> dict[str, float]:
    """Precision, recall and F1 of the boolean predictions ``p`` against the boolean truth
    ``t`` (0 where undefined)."""
    tp = float(np.sum(t & p))
    precision = tp / p.sum() if p.sum() else 0.0
    recall = tp / t.sum() if t.sum() else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": float(precision), "recall": float(recall), "f1": float(f1)}


def _average(rows: dict[str, dict[str, float]], weighted: bool) -> dict[str, float]:
    if not rows:
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}
    supports = np.array([r["support"] for r in rows.values()], dtype=float)
    weights = (
        supports / supports.sum()
        if weighted and supports.sum()
        else np.full(len(rows), 1 / len(rows))
    )
    out = {
        k: float(sum(w * r[k] for w, r in zip(weights, rows.values(), strict=True)))
        for k in ("precision", "recall", "f1")
    }
    out["support"] = int(supports.sum())
    return out


def classification_metrics(
    y_true: Sequence[Any],
    y_pred: Sequence[Any],
    *,
    labels: Sequence[Any] | None = None,
    positive_label: Any = None,
    scheme: LabelScheme | str | None = None,
    reading: str | None = None,
) -> dict[str, Any]:
    """Accuracy, per-class and averaged P/R/F, positive/negative class scores, confusion matrix.

    Args:
        y_true, y_pred: gold and predicted labels (compared as strings).
        labels: class order (default: sorted union of both).
        positive_label: the paraphrase class of binary labels (default ``"1"`` when present).
        scheme, reading: for multi-class schemes (Turku...), compute the positive/negative
            scores on the binary reading of the labels instead.

    Returns:
        a JSON-able dict with ``accuracy``, ``per_class``, ``macro``, ``weighted``,
        ``positive``, ``negative`` (when a binary view exists), ``confusion_matrix``, ``n``.
    """
    truth = [str(v) for v in y_true]
    predicted = [str(v) for v in y_pred]
    if len(truth) != len(predicted):
        raise ValueError(f"{len(truth)} gold labels but {len(predicted)} predictions")
    if labels is None:
        values = set(truth) | set(predicted)
        labels = sorted(values, key=lambda s: (not s.replace(".", "").isdigit(), s))
    labels = [str(v) for v in labels]
    per_class = {label: _prf(truth, predicted, label) for label in labels}
    present = {k: v for k, v in per_class.items() if v["support"] > 0 or k in predicted}
    from sklearn.metrics import confusion_matrix

    matrix = confusion_matrix(truth, predicted, labels=labels).tolist() if truth else []
    out: dict[str, Any] = {
        "n": len(truth),
        "accuracy": float(np.mean([a == b for a, b in zip(truth, predicted, strict=True)]))
        if truth
        else 0.0,
        "per_class": per_class,
        "macro": _average(present, weighted=False),
        "weighted": _average(present, weighted=True),
        "confusion_matrix": {
            "labels": labels,
            "matrix": matrix,
            "note": "rows = gold, columns = predicted",
        },
    }
    if scheme is not None:
        scheme = get_scheme(scheme)
        pairs = [
            (scheme.to_binary(a, reading), scheme.to_binary(b, reading))
            for a, b in zip(truth, predicted, strict=True)
        ]
        kept = [(a, b) for a, b in pairs if a is not None and b is not None]
        binary_truth = [str(a) for a, _ in kept]
        binary_pred = [str(b) for _, b in kept]
        out["positive"] = _prf(binary_truth, binary_pred, "1")
        out["negative"] = _prf(binary_truth, binary_pred, "0")
    elif len(labels) <= 2:
        positive = (
            str(positive_label)
            if positive_label is not None
            else ("1" if "1" in labels else labels[-1])
        )
        out["positive"] = _prf(truth, predicted, positive)
        negatives = [label for label in labels if label != positive]
        if negatives:
            out["negative"] = _prf(truth, predicted, negatives[0])
    return out


def threshold_sweep(
    y_true: Sequence[int], scores: Sequence[float], thresholds: Sequence[float] | None = None
) -> list[dict[str, float]]:
    """Precision, recall, F1 and accuracy of ``score >= t`` for each threshold ``t``.

    Args:
        y_true: binary gold labels (1 = paraphrase).
        scores: P(paraphrase) or any score where higher means paraphrase.
        thresholds: default 0.05, 0.10, ..., 0.95.

    Example:
        >>> rows = threshold_sweep([1, 0, 1], [0.9, 0.4, 0.6], [0.5])
        >>> rows[0]["f1"], rows[0]["accuracy"]
        (1.0, 1.0)
    """
    truth = np.asarray(y_true, dtype=int)
    s = np.asarray(scores, dtype=float)
    if thresholds is None:
        thresholds = np.round(np.arange(0.05, 0.96, 0.05), 2)
    positive = truth == 1
    rows = []
    for t in thresholds:
        pred = s >= t
        rows.append(
            {
                "threshold": float(t),
                # boolean arrays, not _prf's object-dtype comparison: one pass per threshold
                **_prf_of(positive, pred),
                "accuracy": float(np.mean(pred == positive)),
                "predicted_positive": int(pred.sum()),
            }
        )
    return rows


def calibration(y_true: Sequence[int], proba: Sequence[float], n_bins: int = 10) -> dict[str, Any]:
    """Reliability curve (equal-width bins), expected calibration error and Brier score.

    Example:
        >>> c = calibration([1, 0, 1, 0], [1.0, 0.0, 1.0, 0.0], n_bins=2)
        >>> c["ece"], c["brier"]
        (0.0, 0.0)
    """
    truth = np.asarray(y_true, dtype=float)
    p = np.clip(np.asarray(proba, dtype=float), 0.0, 1.0)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    index = np.digitize(p, edges[1:-1])  # 0 .. n_bins - 1: the interior edges split the bins
    bins, ece = [], 0.0
    for b in range(n_bins):
        mask = index == b
        if not mask.any():
            continue
        mean_p, frac = float(p[mask].mean()), float(truth[mask].mean())
        ece += mask.sum() / len(p) * abs(mean_p - frac)
        bins.append(
            {
                "bin": [float(edges[b]), float(edges[b + 1])],
                "count": int(mask.sum()),
                "mean_predicted": mean_p,
                "fraction_positive": frac,
            }
        )
    return {
        "bins": bins,
        "ece": float(ece),
        "brier": float(np.mean((p - truth) ** 2)) if len(p) else 0.0,
    }


def turku_table(y_true: Sequence[str], y_pred: Sequence[str]) -> dict[str, Any]:
    """Table 4 of the Turku journal paper for complete Turku labels.

    Upper section: one row per base label with the subsumption flag merged (``1``, ``2``,
    ``3``, ``4``, ``4<``, ``4>``) and one row per flag ``i`` / ``s`` (does the label carry the
    flag), each with P/R/F and support. Then ``W. avg`` (support-weighted P/R/F over the
    complete labels) and ``Acc`` (accuracy over the complete labels).

    Example:
        >>> t = turku_table(["4<i", "3", "4"], ["4<", "3", "4"])
        >>> t["rows"]["4<"]["f1"], t["rows"]["i"]["recall"], round(t["accuracy"], 4)
        (1.0, 0.0, 0.6667)
    """
    turku = get_scheme("turku")
    truth = [turku.normalize(v) for v in y_true]
    predicted = [turku.normalize(v) for v in y_pred]
    merged_t = [str(turku.reduce(v, "subsumption")) for v in truth]
    merged_p = [str(turku.reduce(v, "subsumption")) for v in predicted]
    rows: dict[str, dict[str, float]] = {}
    for label in ("1", "2", "3", "4", "4<", "4>"):
        if label in merged_t or label in merged_p:
            rows[label] = _prf(merged_t, merged_p, label)
    for flag in ("i", "s"):
        t = ["y" if turku.parse(v).has(flag) else "n" for v in truth]
        p = ["y" if turku.parse(v).has(flag) else "n" for v in predicted]
        rows[flag] = _prf(t, p, "y")
    full = classification_metrics(truth, predicted)
    return {
        "rows": rows,
        "weighted": full["weighted"],  # a predicted-only class weighs 0
        "accuracy": full["accuracy"],
        "n": len(truth),
    }


def _prf_row(name: str, r: dict[str, float], digits: int = 2) -> str:
    """A Markdown table row: ``name``, P/R/F in percent with ``digits`` decimals, support."""
    p, rc, f = (f"{100 * r[k]:.{digits}f}" for k in ("precision", "recall", "f1"))
    return f"| {name} | {p} | {rc} | {f} | {r['support']} |"


def turku_table_markdown(table: dict[str, Any]) -> str:
    """Markdown of :func:`turku_table` (percentages, as in the paper)."""
    lines = ["| label | P | R | F | support |", "|---|---:|---:|---:|---:|"]
    lines += [_prf_row(label, r, 1) for label, r in table["rows"].items()]
    lines.append(_prf_row("W. avg", table["weighted"], 1))
    lines.append(f"| Acc | | | {100 * table['accuracy']:.1f} | {table['n']} |")
    return "\n".join(lines)


@dataclass
class ClassificationReport:
    """A full evaluation: metrics, optional threshold sweep, calibration and Turku table."""

    metrics: dict[str, Any]
    threshold_sweep: list[dict[str, float]] | None = None
    calibration: dict[str, Any] | None = None
    turku: dict[str, Any] | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"info": self.info, "metrics": self.metrics}
        if self.threshold_sweep is not None:
            out["threshold_sweep"] = self.threshold_sweep
        if self.calibration is not None:
            out["calibration"] = self.calibration
        if self.turku is not None:
            out["turku_table"] = self.turku
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_markdown(self) -> str:
        m = self.metrics
        title = self.info.get("name", "Classification report")
        lines = [f"# {title}", ""]
        for key, value in self.info.items():
            if key != "name":
                lines.append(f"- {key}: {value}")
        lines += [
            "",
            f"Pairs: {m['n']}  ",
            f"Accuracy: {100 * m['accuracy']:.2f}",
            "",
            "| class | precision | recall | F1 | support |",
            "|---|---:|---:|---:|---:|",
        ]
        lines += [_prf_row(label, r) for label, r in m["per_class"].items()]
        lines += [
            _prf_row(f"**{name}**", m[name]) for name in ("positive", "negative") if name in m
        ]
        lines.append(_prf_row("macro avg", m["macro"]))
        lines.append(_prf_row("weighted avg", m["weighted"]))
        cm = m["confusion_matrix"]
        if cm["matrix"]:
            lines += [
                "",
                "Confusion matrix (rows = gold, columns = predicted):",
                "",
                "| gold \\ predicted | " + " | ".join(cm["labels"]) + " |",
                "|---|" + "---:|" * len(cm["labels"]),
            ]
            for label, counts in zip(cm["labels"], cm["matrix"], strict=True):
                lines.append(f"| {label} | " + " | ".join(str(c) for c in counts) + " |")
        if self.turku is not None:
            lines += ["", "Turku Table 4 layout:", "", turku_table_markdown(self.turku)]
        if self.threshold_sweep:
            lines += [
                "",
                "Threshold sweep on P(paraphrase):",
                "",
                "| threshold | precision | recall | F1 | accuracy |",
                "|---:|---:|---:|---:|---:|",
            ]
            for r in self.threshold_sweep:
                lines.append(
                    f"| {r['threshold']:.2f} | {100 * r['precision']:.2f} | "
                    f"{100 * r['recall']:.2f} | {100 * r['f1']:.2f} | "
                    f"{100 * r['accuracy']:.2f} |"
                )
        if self.calibration is not None:
            c = self.calibration
            lines += [
                "",
                f"Calibration: ECE {c['ece']:.4f}, Brier {c['brier']:.4f}",
                "",
                "| bin | count | mean P | fraction positive |",
                "|---|---:|---:|---:|",
            ]
            for b in c["bins"]:
                lines.append(
                    f"| {b['bin'][0]:.1f}–{b['bin'][1]:.1f} | {b['count']} | "
                    f"{b['mean_predicted']:.3f} | {b['fraction_positive']:.3f} |"
                )
        return "\n".join(lines) + "\n"

    def save(self, folder: str | Path, stem: str = "metrics") -> tuple[Path, Path]:
        """Write ``<stem>.json`` and ``<stem>.md`` into ``folder`` atomically."""
        from parakit.io.atomic import atomic_write

        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        json_path, md_path = target / f"{stem}.json", target / f"{stem}.md"
        with atomic_write(json_path) as handle:
            handle.write(self.to_json())
        with atomic_write(md_path) as handle:
            handle.write(self.to_markdown())
        return json_path, md_path


def gold_labels(pairs: Any) -> list[str]:
    """The labels of ``pairs``.

    Raises:
        EvaluationError: a pair without a label (E961, names it).
    """
    missing = next((p.id for p in pairs if p.label is None), None)
    if missing is not None:
        raise EvaluationError(Errors.E961_pair_gold_label.format(missing=missing))
    return [p.label for p in pairs]


def binary_view(model: Any, pairs: Any, reading: str | None = None) -> tuple[Any, Any]:
    """``pairs`` as ``model`` can be compared with them, and their scheme: a binary model
    (0/1) on graded labels (Turku 1-4 and flags) is compared with the binary reading of the
    labels, as ``--binary`` gives, not Turku labels with 0/1.

    Raises:
        EvaluationError: the labels have no binary reading (E969).
    """
    scheme = get_scheme(pairs.scheme) if hasattr(pairs, "scheme") else None
    if scheme is None or scheme.name == "binary" or not _is_binary_model(model):
        return pairs, scheme
    try:
        pairs = pairs.to_binary(reading)
    except Exception as err:
        raise EvaluationError(
            Errors.E969_model_predicts_binary.format(scheme_name=scheme.name, err=err)
        ) from None
    return pairs, get_scheme(pairs.scheme)


def evaluate_classifier(
    model: Any,
    pairs: Any,
    *,
    reading: str | None = None,
    name: str | None = None,
    n_bins: int = 10,
    predicted: Sequence[Any] | None = None,
) -> ClassificationReport:
    """Evaluate a fitted :class:`~parakit.models.base.PairClassifier` on labelled pairs.

    The threshold sweep and the calibration curve use ``model.paraphrase_proba`` when the
    labels have a binary reading; the Turku table is added for Turku labels.

    Args:
        predicted: ``model.predict`` of the pairs (of their :func:`binary_view`), when the
            caller has it already: the pairs are then not predicted again.
    """
    gold_labels(pairs)
    pairs, scheme = binary_view(model, pairs, reading)
    truth = gold_labels(pairs)
    proba = None  # the model's probabilities, when it predicts here (one pass for both)
    if predicted is None and hasattr(model, "predict_with_proba"):
        predicted, proba = model.predict_with_proba(pairs)
    elif predicted is None:
        predicted = model.predict(pairs)
    predicted = [str(v) for v in predicted]
    multi = scheme is not None and scheme.name != "binary" and len(model.classes_) > 2
    metrics = classification_metrics(
        truth, predicted, scheme=scheme if multi else None, reading=reading
    )
    report = ClassificationReport(
        metrics,
        info={
            "name": name or "Classification report",
            "model": getattr(model, "model_type", "?"),
            "classes": [str(c) for c in model.classes_],
            **({"reading": reading or scheme.default_reading} if multi else {}),
        },
    )
    try:
        binary_truth = [scheme.to_binary(t, reading) for t in truth] if scheme else None
    except Exception:  # a scheme without a binary reading: no sweep, no calibration
        binary_truth = None
    if binary_truth is not None:
        keep = [i for i, b in enumerate(binary_truth) if b is not None]
        if proba is None:
            paraphrase = model.paraphrase_proba(pairs, reading=reading)
        else:
            paraphrase = model.paraphrase_of(proba, reading)
        gold = [binary_truth[i] for i in keep]
        report.threshold_sweep = threshold_sweep(gold, paraphrase[keep])
        report.calibration = calibration(gold, paraphrase[keep], n_bins)
    if scheme is not None and scheme.name == "turku":
        report.turku = turku_table(truth, predicted)
    return report


def _is_binary_model(model: Any) -> bool:
    """Whether ``model`` predicts the binary labels ``0``/``1`` only."""
    classes = {str(c) for c in getattr(model, "classes_", ())}
    return bool(classes) and classes <= {"0", "1"}


def selection_metrics(
    truth: Sequence[Any], predicted: Sequence[Any], classes: Sequence[str], positive: str | None
) -> dict[str, float]:
    """The scores a development set selects a model by: ``accuracy``, ``macro_f1`` and
    ``weighted_f1`` over ``classes`` (absent classes count, with F1 0), and ``f1``: the F1 of
    ``positive`` for two classes, macro F1 otherwise; with a positive class also its
    ``positive_precision``/``_recall``/``_f1``.

    Example:
        >>> m = selection_metrics(["1", "1", "0", "0"], ["1", "0", "0", "0"], ["0", "1"], "1")
        >>> round(m["f1"], 4), m["accuracy"], round(m["macro_f1"], 4)
        (0.6667, 0.75, 0.7333)
    """
    from sklearn.metrics import accuracy_score, f1_score, precision_recall_fscore_support

    truth, predicted = [str(v) for v in truth], [str(v) for v in predicted]
    labels = [str(c) for c in classes]

    def averaged(average: str) -> float:
        return float(f1_score(truth, predicted, labels=labels, average=average, zero_division=0))

    values = {
        "accuracy": float(accuracy_score(truth, predicted)),
        "macro_f1": averaged("macro"),
        "weighted_f1": averaged("weighted"),
    }
    values["f1"] = values["macro_f1"]
    if positive is not None and len(labels) == 2:
        p, r, f, _ = precision_recall_fscore_support(
            truth, predicted, pos_label=positive, average="binary", zero_division=0
        )
        values.update(f1=float(f), positive_precision=float(p), positive_recall=float(r))
        values["positive_f1"] = values["f1"]
    return values


def positive_class(model: Any) -> str | None:
    """The paraphrase class of a two-class ``model`` (its ``positive_mask``; the last class
    when the mask does not single one out), None for more classes."""
    classes = np.array([str(c) for c in model.classes_], dtype=object)
    if len(classes) != 2:
        return None
    mask = np.asarray(model.positive_mask()) if hasattr(model, "positive_mask") else classes == "1"
    return str(classes[mask][0]) if mask.sum() == 1 else str(classes[-1])


class ClassificationEvaluator(Evaluator):
    """Evaluator in the sentence-transformers protocol for parakit classifiers: the one that
    scores development pairs during training (checkpoint and learning-rate selection) and
    anywhere else.

    ``evaluator(model)`` predicts the pairs once and returns :func:`selection_metrics` with
    ``score``, the value of ``primary``, prefixed by ``name``. With ``output_path`` the full
    report (:func:`evaluate_classifier`: threshold sweep, calibration, Turku table) is written
    there too, from the same predictions.

    Args:
        pairs: labelled development/test pairs (a PairSet, or a classifier's validated
            input with ``texts1``/``texts2``/``labels``).
        name: prefix of the metric keys (``dev`` gives ``dev_f1``...).
        reading: binary reading for multi-class schemes.
        primary: the key used as ``primary_metric``: ``f1`` (positive-class F1 for binary
            labels, macro F1 otherwise), ``accuracy``, ``macro_f1``, ``weighted_f1``.

    Raises:
        EvaluationError: an unknown ``primary`` (E963).

    Example:
        >>> evaluator = ClassificationEvaluator(dev_pairs, name="dev")   # doctest: +SKIP
        >>> evaluator(model)["dev_f1"], evaluator.primary_metric          # doctest: +SKIP
        (0.78, 'dev_f1')
    """

    METRICS = ("f1", "macro_f1", "weighted_f1", "accuracy")

    def __init__(
        self, pairs: Any, name: str = "", reading: str | None = None, primary: str = "f1"
    ) -> None:
        if primary not in self.METRICS:
            raise EvaluationError(
                Errors.E963_unknown_selection_metric.format(
                    primary=primary, metrics=", ".join(self.METRICS)
                )
            )
        self.pairs = pairs
        self.name = name
        self.reading = reading
        self.primary = primary

    def __call__(
        self, model: Any, output_path: str | Path | None = None, epoch: int = -1, steps: int = -1
    ) -> dict[str, float]:
        if hasattr(self.pairs, "texts1"):  # a classifier's validated input
            truth = list(self.pairs.labels or [])
            predicted = model.predict(self.pairs.texts1, self.pairs.texts2)
        else:
            pairs, _ = binary_view(model, self.pairs, self.reading)
            truth = gold_labels(pairs)
            predicted = model.predict(pairs)
        if output_path is not None:
            report = evaluate_classifier(
                model,
                self.pairs,
                reading=self.reading,
                name=self.name or None,
                predicted=predicted,  # the report's predictions are these: not predicted again
            )
            suffix = f"_epoch{epoch}_steps{steps}" if epoch >= 0 or steps >= 0 else ""
            report.save(output_path, stem=f"{self.name or 'classification'}{suffix}")
        values = selection_metrics(
            truth, predicted, [str(c) for c in model.classes_], positive_class(model)
        )
        values["score"] = values[self.primary]
        return self.prefixed(values)
