"""Bootstrapped retraining with mined negatives (T16)."""

from __future__ import annotations

import numpy as np
import pytest

from parakit.errors import ModelError
from parakit.models.base import make_model
from parakit.models.bootstrap import bootstrap_training_set, retrain_with_negatives
from parakit.schema import Pair, PairSet


def mined(n: int) -> PairSet:
    return PairSet(
        [Pair(f"n{i}", f"mined text {i}", f"other text {i}") for i in range(n)], scheme="turku"
    )


def test_single_negative_label_and_balance(turku_sv):
    manual = turku_sv[0][:100]
    train = bootstrap_training_set(manual, mined(500), negative_label="2", seed=0)
    mined_pairs = [p for p in train if p.id.startswith("mined:")]
    assert len(train) == 200 and len(mined_pairs) == 100
    assert {p.label for p in mined_pairs} == {"2"}
    assert {p.source for p in mined_pairs} == {"mined"}
    assert train.metadata["bootstrap"]["n_negatives"] == 100
    half = bootstrap_training_set(manual, mined(500), negatives_per_pair=0.5, seed=0)
    assert sum(p.id.startswith("mined:") for p in half) == 50
    fixed = bootstrap_training_set(manual, mined(500), n_negatives=7, seed=0)
    assert sum(p.id.startswith("mined:") for p in fixed) == 7


def test_sampling_is_seeded():
    manual = PairSet([Pair("m", "a b", "a c", "4")], scheme="turku")
    first = bootstrap_training_set(manual, mined(50), n_negatives=5, seed=3)
    again = bootstrap_training_set(manual, mined(50), n_negatives=5, seed=3)
    other = bootstrap_training_set(manual, mined(50), n_negatives=5, seed=4)
    assert [p.id for p in first] == [p.id for p in again] != [p.id for p in other]


def test_negatives_sharing_test_statements_are_excluded():
    manual = PairSet([Pair("m", "a b", "a c", "4")], scheme="turku")
    test = PairSet([Pair("t", "mined text 0", "zzz", "4")], scheme="turku")
    train = bootstrap_training_set(manual, mined(3), n_negatives=2, exclude_texts_of=test)
    assert "mined:n0" not in {p.id for p in train}
    with pytest.raises(ModelError, match="E712"):
        bootstrap_training_set(manual, mined(3), n_negatives=3, exclude_texts_of=test)


def test_negative_label_must_fit_the_scheme():
    manual = PairSet([Pair("m", "a b", "a c", "1")], scheme="binary")
    with pytest.raises(ModelError, match="E704"):
        bootstrap_training_set(manual, mined(3), negative_label="2")


def test_retraining_a_binary_model_with_mined_negatives(multipit):
    train, dev = multipit
    positives = train.filter(lambda p: p.label == "1")
    # negatives mined by pairing statements of different pairs
    t1, t2 = positives.texts()
    negatives = PairSet(
        [Pair(f"x{i}", t1[i], t2[(i + len(t2) // 2) % len(t2)]) for i in range(len(t1))]
    )
    model = retrain_with_negatives(
        make_model("tfidf"), positives, negatives, negative_label="0", seed=0
    )
    assert list(model.classes_) == ["0", "1"]
    # unseen statements: real dev paraphrases vs dev statements paired at random
    dev_pos = dev.filter(lambda p: p.label == "1")
    d1, d2 = dev_pos.texts()
    shuffled = [d2[(i + len(d2) // 2) % len(d2)] for i in range(len(d1))]
    assert np.mean(model.predict(d1, shuffled) == "0") > 0.9
    assert np.mean(model.predict(dev_pos) == "1") > 0.8


@pytest.mark.parametrize("ratio", [float("nan"), float("inf"), -1.0])
def test_negatives_per_pair_must_be_a_finite_ratio(ratio):
    # nan ended in a ValueError and inf in an OverflowError from round()
    manual = PairSet([Pair("m", "a b", "a c", "4")], scheme="turku")
    with pytest.raises(ModelError, match="E712"):
        bootstrap_training_set(manual, mined(3), negatives_per_pair=ratio)
    assert len(bootstrap_training_set(manual, mined(3), negatives_per_pair=2.0)) == 3


def test_safe_positives_given_as_negatives_are_refused():
    # `mine select --positives` writes the safe positives beside the negatives; given to
    # --negatives, they were relabelled "2" and trained on as negatives without a word
    manual = PairSet([Pair("m", "a b", "a c", "4")], scheme="turku")
    positives = PairSet(
        [
            Pair(f"p{i}", f"same {i}", f"same {i}!", metadata={"tile_selection": "positive"})
            for i in range(3)
        ]
    )
    with pytest.raises(ModelError, match=r"E712.*'p0'.*tile_selection"):
        bootstrap_training_set(manual, positives, n_negatives=1)
    negatives = PairSet(
        [Pair("n", "x", "y", metadata={"tile_selection": "negative"})], scheme="turku"
    )
    train = bootstrap_training_set(manual, negatives, n_negatives=1)
    assert sorted((p.id, p.label) for p in train) == [("m", "4"), ("mined:n", "2")]
