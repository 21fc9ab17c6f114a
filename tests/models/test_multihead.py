"""The Turku multi-head classifier (T14) and the plain multi-class model, on Swedish Turku data."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from parakit.errors import ModelError
from parakit.labels import get_scheme
from parakit.models.base import load_model
from parakit.models.multihead import (
    MultiClassClassifier,
    MultiHeadClassifier,
    _pooled_features,
    decode_heads,
    label_space,
)
from parakit.schema import Pair, PairSet


def small(cls, encoder: str, **overrides):
    params = dict(
        model_name_or_path=encoder,
        max_length=48,
        epochs=2,
        learning_rate=2e-3,
        micro_batch_size=32,
        progress=False,
        seed=3,
        num_threads=2,
    )
    params.update(overrides)
    return cls(**params)


def test_label_space_has_every_flag_combination_once():
    space = label_space(["2", "3", "4"])
    turku = get_scheme("turku")
    assert space[:2] == ["2", "3"] and len(space) == 2 + 12
    assert all(turku.normalize(s) == s for s in space)
    assert "4>is" in space and len(set(space)) == len(space)
    assert label_space(["2", "3"]) == ["2", "3"]


def test_decode_heads_uses_marginals_per_head():
    classes = label_space(["2", "3", "4"])
    joint = np.zeros((2, len(classes)))
    # P(4) = 0.5 spread over 4, 4s, 4<s; P(3) = 0.45 -> base 4 wins, style marginal 0.3 > 0.2
    joint[0, classes.index("3")] = 0.45
    joint[0, classes.index("2")] = 0.05
    joint[0, classes.index("4")] = 0.2
    joint[0, classes.index("4s")] = 0.15
    joint[0, classes.index("4<s")] = 0.15
    # the arg-max of the joint would be 3; head-wise decoding gives 4 + style
    joint[1, classes.index("3")] = 1.0
    assert decode_heads(joint, classes).tolist() == ["4s", "3"]


def test_pooled_features_pick_cls_seps_and_segment_means():
    import torch

    # [CLS] a a [SEP] b [SEP] [PAD] with hidden value = position index
    ids = torch.tensor([[101, 7, 8, 102, 9, 102, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 1, 0]])
    hidden = torch.arange(7, dtype=torch.float32).reshape(1, 7, 1)
    pooled = _pooled_features(hidden, ids, mask, sep_id=102)
    # CLS = 0, first SEP = 3, last SEP = 5, mean(A) = (1+2)/2, mean(B) = 4
    assert pooled.tolist() == [[0.0, 3.0, 5.0, 1.5, 4.0]]
    # RoBERTa layout: <s> a </s></s> b b </s>
    ids = torch.tensor([[0, 7, 2, 2, 8, 9, 2]])
    pooled = _pooled_features(hidden, ids, torch.ones_like(ids), sep_id=2)
    assert pooled.tolist() == [[0.0, 2.0, 6.0, 1.0, 4.5]]


def test_flag_heads_get_no_gradient_from_pairs_without_label_4(tiny_encoder, turku_sv):
    train, _ = turku_sv
    model = small(MultiHeadClassifier, tiny_encoder, epochs=1).fit(train[:40])
    assert model.base_labels_ == ["3", "4"]
    network = model.network_.train()
    device = next(network.parameters()).device
    batch = ["3", "3", "3"]
    encoded = model._encode(["a b c"] * 3, ["a b d"] * 3, device)
    targets = model._targets(batch)
    network.zero_grad()
    model._loss(network, encoded, targets).backward()
    for head in ("subsumption", "style", "minor"):
        assert float(network.heads[head].weight.grad.abs().sum()) == 0.0
    assert float(network.heads["base"].weight.grad.abs().sum()) > 0.0
    network.zero_grad()
    model._loss(network, encoded, model._targets(["4<s", "3", "3"])).backward()
    assert float(network.heads["subsumption"].weight.grad.abs().sum()) > 0.0


def test_multihead_trains_decodes_valid_labels_and_reloads(tiny_encoder, turku_sv, tmp_path):
    train, dev = turku_sv[0][:128], turku_sv[1][:48]
    model = small(MultiHeadClassifier, tiny_encoder, max_length=32).fit(train, eval_set=dev)
    assert model.base_labels_ == sorted({p.label[0] for p in train})
    predicted = model.predict(dev)
    turku = get_scheme("turku")
    assert all(turku.is_valid(label) for label in predicted)
    proba = model.predict_proba(dev)
    assert proba.shape == (len(dev), len(model.classes_))
    assert np.allclose(proba.sum(axis=1), 1.0, atol=1e-5)
    # better than always predicting the most frequent training label
    majority = collections.Counter(p.label for p in train).most_common(1)[0][0]
    truth = [p.label for p in dev]
    assert model.score(dev) >= np.mean([t == majority for t in truth]) - 0.05
    # loose reading: P(paraphrase) sums labels 3 and 4*
    assert np.allclose(
        model.paraphrase_proba(dev), proba[:, [c[0] in "34" for c in model.classes_]].sum(axis=1)
    )
    model.save(tmp_path / "mh")
    again = load_model(tmp_path / "mh")
    assert isinstance(again, MultiHeadClassifier)
    assert np.allclose(again.predict_proba(dev), proba, atol=1e-6)
    assert list(again.predict(dev)) == list(predicted)


def test_multiclass_comparison_model_trains_and_reloads(tiny_encoder, turku_sv, tmp_path):
    train, dev = turku_sv[0][:96], turku_sv[1][:48]
    model = small(MultiClassClassifier, tiny_encoder, epochs=1, max_length=32).fit(train)
    assert set(model.classes_) == {p.label for p in train}
    proba = model.predict_proba(dev)
    model.save(tmp_path / "mc")
    again = load_model(tmp_path / "mc")
    assert np.allclose(again.predict_proba(dev), proba, atol=1e-6)


def test_multihead_rejects_non_turku_and_skipped_labels(tiny_encoder):
    pairs = PairSet([Pair("a", "x y", "x z", "4"), Pair("b", "p q", "r s", "x")], scheme="turku")
    with pytest.raises(ModelError, match=r"E704.*'b'"):
        small(MultiHeadClassifier, tiny_encoder).fit(pairs)
    with pytest.raises(ModelError, match="E704"):
        small(MultiHeadClassifier, tiny_encoder).fit(["a b", "c d"], ["a c", "c e"], ["0", "1"])
