"""Known-answer tests of the classification metrics and reports."""

from __future__ import annotations

import json

import numpy as np
import pytest

from parakit.evaluate.classification import (
    ClassificationEvaluator,
    calibration,
    classification_metrics,
    evaluate_classifier,
    threshold_sweep,
    turku_table,
    turku_table_markdown,
)
from parakit.models.base import make_model
from parakit.schema import Pair, PairSet


def test_binary_metrics_known_answer():
    m = classification_metrics(["1", "1", "1", "0", "0"], ["1", "1", "0", "0", "1"])
    assert m["accuracy"] == pytest.approx(0.6)
    assert m["positive"] == {
        "precision": pytest.approx(2 / 3),
        "recall": pytest.approx(2 / 3),
        "f1": pytest.approx(2 / 3),
        "support": 3,
    }
    assert m["negative"]["precision"] == 0.5 and m["negative"]["recall"] == 0.5
    assert m["macro"]["f1"] == pytest.approx((2 / 3 + 0.5) / 2)
    assert m["weighted"]["f1"] == pytest.approx(0.6 * 2 / 3 + 0.4 * 0.5)
    assert m["confusion_matrix"]["labels"] == ["0", "1"]
    assert m["confusion_matrix"]["matrix"] == [[1, 1], [1, 2]]


def test_multiclass_positive_negative_use_the_binary_reading():
    truth = ["2", "3", "4<", "4"]
    pred = ["3", "3", "4", "2"]
    m = classification_metrics(truth, pred, scheme="turku")
    # loose reading: truth 0,1,1,1; pred 1,1,1,0
    assert m["positive"]["precision"] == pytest.approx(2 / 3)
    assert m["positive"]["recall"] == pytest.approx(2 / 3)
    assert m["negative"]["f1"] == 0.0
    assert m["accuracy"] == 0.25


def test_threshold_sweep_and_calibration_known_answers():
    rows = threshold_sweep([1, 1, 0, 0], [0.9, 0.4, 0.6, 0.1], [0.5, 0.3])
    assert rows[0]["precision"] == 0.5 and rows[0]["recall"] == 0.5
    assert rows[1]["recall"] == 1.0 and rows[1]["precision"] == pytest.approx(2 / 3)
    c = calibration([1, 0, 1, 1], [0.9, 0.1, 0.7, 0.3], n_bins=2)
    # bin [0, .5): p .1, .3 -> mean .2, frac .5; bin [.5, 1]: p .9, .7 -> mean .8, frac 1
    assert [b["count"] for b in c["bins"]] == [2, 2]
    assert c["ece"] == pytest.approx(0.5 * 0.3 + 0.5 * 0.2)
    assert c["brier"] == pytest.approx((0.01 + 0.01 + 0.09 + 0.49) / 4)


def test_turku_table_layout():
    truth = ["4<i", "4", "3", "2", "4s", "4>"]
    pred = ["4<", "4", "4", "2", "4s", "3"]
    table = turku_table(truth, pred)
    assert list(table["rows"]) == ["2", "3", "4", "4<", "4>", "i", "s"]
    assert table["rows"]["4<"]["f1"] == 1.0  # subsumption merged with the base
    assert table["rows"]["4"]["precision"] == pytest.approx(2 / 3)  # 4, 4s right; 3 -> 4 wrong
    assert table["rows"]["i"]["recall"] == 0.0 and table["rows"]["s"]["f1"] == 1.0
    assert table["accuracy"] == pytest.approx(3 / 6)  # complete labels: 4, 2, 4s
    md = turku_table_markdown(table)
    assert "| W. avg |" in md and "| Acc | | | 50.0 | 6 |" in md


def test_evaluate_classifier_writes_json_and_markdown(multipit, tmp_path):
    train, dev = multipit
    model = make_model("wor").fit(train)
    report = evaluate_classifier(model, dev, name="dev")
    assert report.metrics["accuracy"] == pytest.approx(model.score(dev))
    assert len(report.threshold_sweep) == 19 and 0 <= report.calibration["ece"] <= 1
    json_path, md_path = report.save(tmp_path)
    data = json.loads(json_path.read_text())
    assert data["metrics"]["n"] == len(dev)
    assert "| **positive** |" in md_path.read_text()


def test_evaluator_protocol(multipit, tmp_path):
    train, dev = multipit
    model = make_model("bow").fit(train)
    evaluator = ClassificationEvaluator(dev, name="dev")
    scores = evaluator(model, output_path=tmp_path, epoch=1, steps=10)
    assert evaluator.primary_metric == "dev_f1" and evaluator.greater_is_better
    assert scores["dev_accuracy"] == pytest.approx(model.score(dev))
    assert set(scores) >= {"dev_f1", "dev_macro_f1", "dev_weighted_f1", "dev_positive_recall"}
    assert (tmp_path / "dev_epoch1_steps10.json").exists()


class _Counting:
    """A fitted binary classifier's surface with fixed answers, counting its predict calls."""

    model_type = "fixed"
    classes_ = np.array(["0", "1"], dtype=object)

    def __init__(self, predicted: list[str], proba: list[float]) -> None:
        self.predicted, self.proba, self.predict_calls = predicted, proba, 0

    def predict(self, pairs):
        self.predict_calls += 1
        return np.array(self.predicted, dtype=object)

    def paraphrase_proba(self, pairs, reading=None):
        return np.array(self.proba)


def test_evaluator_with_a_report_predicts_once(tmp_path):
    dev = PairSet([Pair(str(i), "a", "b", label) for i, label in enumerate("1100")])
    evaluator = ClassificationEvaluator(dev, name="dev")
    plain = _Counting(["1", "0", "0", "0"], [0.9, 0.4, 0.2, 0.1])
    expected = evaluator(plain)
    assert plain.predict_calls == 1
    # the known answers (selection_metrics' example): one of two paraphrases found
    assert expected["dev_f1"] == pytest.approx(2 / 3) and expected["dev_accuracy"] == 0.75
    assert expected["dev_macro_f1"] == pytest.approx((2 / 3 + 0.8) / 2)
    assert expected["dev_positive_precision"] == 1.0 and expected["dev_positive_recall"] == 0.5
    model = _Counting(["1", "0", "0", "0"], [0.9, 0.4, 0.2, 0.1])
    assert evaluator(model, output_path=tmp_path, epoch=0, steps=5) == expected
    assert model.predict_calls == 1  # the report is written from the same predictions
    report = json.loads((tmp_path / "dev_epoch0_steps5.json").read_text())
    assert report["metrics"]["accuracy"] == 0.75
    assert report["metrics"]["confusion_matrix"]["matrix"] == [[2, 0], [1, 1]]
    assert report["metrics"]["positive"]["f1"] == pytest.approx(2 / 3)
    at_half = next(r for r in report["threshold_sweep"] if r["threshold"] == 0.5)
    assert at_half["recall"] == 0.5 and at_half["precision"] == 1.0
    # evaluate_classifier alone still predicts for itself
    alone = _Counting(["1", "0", "0", "0"], [0.9, 0.4, 0.2, 0.1])
    assert evaluate_classifier(alone, dev, name="dev").metrics == report["metrics"]
    assert alone.predict_calls == 1


def test_evaluate_classifier_runs_the_model_once(multipit):
    # labels and the sweep's P(paraphrase) come from one pass (a transformer's minutes, once)
    train, dev = multipit
    model = make_model("tfidf").fit(train)
    expected = evaluate_classifier(model, dev, name="dev").to_dict()
    passes = []
    inner = model._predict_proba
    model._predict_proba = lambda data: passes.append(1) or inner(data)
    report = evaluate_classifier(model, dev, name="dev")
    assert len(passes) == 1
    assert report.to_dict() == expected
    assert report.metrics["accuracy"] == pytest.approx(model.score(dev))
    by_threshold = {r["threshold"]: r for r in report.threshold_sweep}
    positives = model.paraphrase_proba(dev) >= 0.5
    assert by_threshold[0.5]["predicted_positive"] == int(positives.sum())


def test_evaluation_needs_gold_labels():
    from parakit.errors import EvaluationError

    model = make_model("wor").fit(["a b", "c d"], ["a b", "e f"], ["1", "0"])
    with pytest.raises(EvaluationError, match=r"E961.*'u'"):
        evaluate_classifier(model, PairSet([Pair("u", "a", "b")]))
