"""Noisy-label filtering and flipping (M8)."""

from __future__ import annotations

import numpy as np
import pytest

from parakit.errors import ModelError
from parakit.models.base import make_model
from parakit.models.noisy import NoisyLabelCleaner, NoisyLabelResult, noisy_label_grid, relabel
from parakit.schema import Pair, PairSet


def four_pairs() -> PairSet:
    return PairSet(
        [Pair(f"p{i}", f"a{i}", f"b{i}", label) for i, label in enumerate(["1", "1", "0", "0"])]
    )


def test_filter_drops_pairs_at_or_below_lambda():
    out, report = relabel(
        four_pairs(), np.array([0.35, 0.36, 0.1, 0.9]), ["0", "1"], "filter", 0.35
    )
    assert [p.id for p in out] == ["p1", "p3"]
    assert report == {
        "method": "filter",
        "threshold": 0.35,
        "n_noisy": 4,
        "dropped": 2,
        "flipped": 0,
        "kept": 2,
    }


def test_flip_relabels_binary_pairs_and_keeps_the_old_label():
    out, report = relabel(four_pairs(), np.array([0.2, 0.8, 0.25, 0.9]), ["0", "1"], "flip", 0.25)
    assert [p.label for p in out] == ["0", "1", "1", "0"]
    assert report["flipped"] == 2 and report["dropped"] == 0
    assert out[0].metadata["noisy_label"] == "1"
    assert out[0].metadata["teacher_p"] == pytest.approx(0.2)


def test_flip_multiclass_goes_to_the_teacher_argmax():
    pairs = PairSet([Pair("a", "x", "y", "2")], scheme="turku")
    proba = np.array([[0.1, 0.3, 0.6]])
    out, _ = relabel(pairs, np.array([0.1]), ["2", "3", "4"], "flip", 0.25, proba)
    assert out[0].label == "4"


def test_bad_method_and_lambda():
    with pytest.raises(ModelError, match="E712"):
        relabel(four_pairs(), np.zeros(4), ["0", "1"], "drop", 0.3)
    with pytest.raises(ModelError, match="E712"):
        relabel(four_pairs(), np.zeros(4), ["0", "1"], "flip", 1.5)


def simulated_noise(pairs: PairSet, rate: float, seed: int) -> tuple[PairSet, np.ndarray]:
    rng = np.random.default_rng(seed)
    flipped = rng.random(len(pairs)) < rate
    noisy = [
        p.replace(id=f"n{p.id}", label=str(1 - int(p.label)) if f else p.label)
        for p, f in zip(pairs, flipped, strict=True)
    ]
    return PairSet(noisy, scheme="binary"), flipped


def test_teacher_flipping_repairs_simulated_noise(multipit):
    """A WOR teacher on clean MultiPIT pairs flips more wrong labels back than right ones."""
    train, _dev = multipit
    clean, rest = train[:300], train[300:]
    noisy, _corrupted = simulated_noise(rest, 0.4, seed=0)
    cleaner = NoisyLabelCleaner(make_model("wor"), method="flip", threshold=0.25).fit(clean)
    repaired = cleaner.transform(noisy)
    truth = [p.label for p in rest]
    before = np.mean([p.label == t for p, t in zip(noisy, truth, strict=True)])
    after = np.mean([p.label == t for p, t in zip(repaired, truth, strict=True)])
    assert cleaner.report_["flipped"] > 0
    assert after > before


def test_grid_reports_counts_that_grow_with_lambda(multipit):
    train, dev = multipit
    noisy, _ = simulated_noise(train[300:], 0.3, seed=1)
    result = noisy_label_grid(
        make_model("tfidf"), train[:300], noisy, dev, thresholds=(0.15, 0.35, 0.45)
    )
    assert [r["method"] for r in result.rows] == ["clean", "raw"] + ["filter"] * 3 + ["flip"] * 3
    dropped = [r["dropped"] for r in result.rows if r["method"] == "filter"]
    flipped = [r["flipped"] for r in result.rows if r["method"] == "flip"]
    assert dropped == sorted(dropped) and flipped == dropped
    for row in result.rows[2:5]:
        assert row["n_train"] == 300 + len(noisy) - row["dropped"]
    assert result.best()["dev_f1"] == max(r["dev_f1"] for r in result.rows)
    assert "| clean + flipped noisy | 0.35 |" in result.to_markdown()


def test_flip_multiclass_counts_only_labels_that_change():
    # with three classes a label can be the teacher's most probable one and still have
    # P <= λ (0.40 <= 0.45, a λ of the grid): relabelling it to the argmax changes nothing,
    # so it is not a flip (it was counted as one and marked with a noisy_label)
    pairs = PairSet([Pair("a", "x", "y", "4"), Pair("b", "x", "z", "2")], scheme="turku")
    proba = np.array([[0.3, 0.3, 0.4], [0.1, 0.3, 0.6]])
    out, report = relabel(pairs, np.array([0.4, 0.1]), ["2", "3", "4"], "flip", 0.45, proba)
    assert [p.label for p in out] == ["4", "4"]
    assert report["flipped"] == 1 and report["kept"] == 2
    assert "noisy_label" not in out[0].metadata
    assert out[1].metadata["noisy_label"] == "2"


def test_best_of_a_method_the_grid_did_not_run_is_named():
    # was: max() of an empty list, a bare ValueError
    result = NoisyLabelResult(rows=[{"method": "filter", "dev_f1": 0.5}])
    assert result.best("filter")["dev_f1"] == 0.5
    with pytest.raises(ModelError, match=r"E712.*'flip'.*\['filter'\]"):
        result.best("flip")
