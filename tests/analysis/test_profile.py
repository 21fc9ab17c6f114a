"""Performance profiles: hand-computed accuracies, tests and prediction files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from parakit.analysis.phenomena import Phenomena
from parakit.analysis.profile import load_predictions, phenomena_checks, profile
from parakit.analysis.stats import mann_whitney, mcnemar
from parakit.errors import AnalysisError, DataFormatError


@pytest.fixture
def toy():
    rng = np.random.default_rng(0)
    n = 60
    y = rng.integers(0, 2, n)
    matrix = np.zeros((n, 4), dtype=bool)
    matrix[:20, 0] = True
    matrix[15:40, 1] = True
    matrix[30:, 2] = True
    matrix[:3, 3] = True  # a rare phenomenon
    ph = Phenomena(
        ["A", "B", "C", "rare"], ["x", "x", "y", "y"], matrix, [str(i) for i in range(n)]
    )
    s1 = y.copy()
    s1[:10] = 1 - s1[:10]  # S1 errs on the first 10 pairs (inside A)
    s2 = y.copy()
    s2[40:52] = 1 - s2[40:52]  # S2 errs inside C
    s3 = y.copy()
    s3[::7] = 1 - s3[::7]
    return y, {"S1": s1, "S2": s2, "S3": s3}, ph


def test_accuracies_are_subset_accuracies(toy):
    y, preds, ph = toy
    prof = profile(y, preds, ph, min_support=5)
    assert prof.overall["S1"]["accuracy"] == pytest.approx(50 / 60)
    assert prof.accuracy("S1", "A") == pytest.approx(10 / 20)
    assert prof.accuracy("S1", "B") == pytest.approx(1.0)
    assert prof.accuracy("S2", "C") == pytest.approx(18 / 30)
    from sklearn.metrics import f1_score

    assert prof.overall["S3"]["f1"] == pytest.approx(f1_score(y, preds["S3"]))


def test_significance_tests_match_direct_calls(toy):
    y, preds, ph = toy
    prof = profile(y, preds, ph, min_support=5)
    correct = (preds["S1"] == y).astype(int)
    row = next(r for r in prof.table if r["phenomenon"] == "A")
    assert row["p"]["S1"] == pytest.approx(mann_whitney(correct[:20], correct).p)
    rare = next(r for r in prof.table if r["phenomenon"] == "rare")
    assert rare["p"]["S1"] is None  # "na": fewer than min_support pairs
    mc = next(
        r
        for r in prof.mcnemar
        if (r["system_a"], r["system_b"], r["phenomenon"]) == ("S1", "S2", "A")
    )
    c2 = (preds["S2"] == y).astype(int)
    direct = mcnemar(correct[:20], c2[:20])
    assert (mc["b"], mc["c"], mc["p"]) == (0, 10, direct.p)
    assert mc["method"] == "mcnemar-exact"
    assert mc["p"] == pytest.approx(2 * 0.5**10)


def test_friedman_uses_supported_phenomena_only(toy):
    y, preds, ph = toy
    prof = profile(y, preds, ph, min_support=5)
    assert prof.friedman is not None
    assert prof.friedman.groups == ["A", "B", "C"]
    assert prof.friedman.ranks.shape == (3, 3)
    json.dumps(prof.to_dict())  # the whole profile is JSON-serialisable


def test_friedman_note_with_one_system(toy):
    y, preds, ph = toy
    prof = profile(y, {"S1": preds["S1"]}, ph)
    assert prof.friedman is None and "2 systems" in prof.friedman_note


def test_checks_distribution_and_correlation():
    y = np.array([1, 1, 0, 0])
    ph = Phenomena(
        ["a", "b", "c"],
        ["x"] * 3,
        np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1], [1, 0, 1]]),
        list("1234"),
    )
    checks = phenomena_checks(y, ph, threshold=0.1)
    dist = {d["phenomenon"]: (d["positives"], d["negatives"]) for d in checks["distribution"]}
    # Positives: a, b, a, b -> a 1/2, b 1/2; negatives: c, a, c -> a 1/3, c 2/3.
    assert dist["a"] == pytest.approx((0.5, 1 / 3)) and dist["c"] == pytest.approx((0.0, 2 / 3))
    assert checks["total_variation"] == pytest.approx(0.5 * (1 / 6 + 1 / 2 + 2 / 3))
    r_ab = next(
        item["r"]
        for item in checks["correlation"]["over_threshold"]
        if {item["a"], item["b"]} == {"a", "b"}
    )
    assert r_ab == pytest.approx(np.corrcoef([1, 1, 0, 1], [1, 1, 0, 0])[0, 1])


def test_bad_inputs(toy):
    y, preds, ph = toy
    with pytest.raises(AnalysisError, match="E1001"):
        profile(y[:-1], preds, ph)
    with pytest.raises(AnalysisError, match="non-binary"):
        profile(y, {"S": np.full(len(y), 2)}, ph)


def test_load_predictions_long_wide_jsonl(tmp_path):
    long = tmp_path / "long.csv"
    long.write_text("id,system,prediction\n1,A,1\n2,A,0\n1,B,true\n2,B,false\n")
    wide = tmp_path / "wide.tsv"
    wide.write_text("id\tA\tB\n2\t0\t0\n1\t1\t1\n")
    jl = tmp_path / "p.jsonl"
    jl.write_text(
        '{"id": "1", "predictions": {"A": 1, "B": 1}}\n'
        '{"id": "2", "system": "A", "prediction": 0}\n'
        '{"id": "2", "system": "B", "prediction": 0}\n'
    )
    for path in (long, wide, jl):
        out = load_predictions(path, ids=["1", "2"])
        assert out["A"].tolist() == [1, 0] and out["B"].tolist() == [1, 0]


def test_load_predictions_missing_id(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("id,A\n1,1\n")
    with pytest.raises(DataFormatError, match="E1006"):
        load_predictions(path, ids=["1", "2"])
    path.write_text("id,A\n1,maybe\n")
    with pytest.raises(DataFormatError, match="line 2"):
        load_predictions(path)
