"""Cross-encoder fine-tuning with a tiny BERT built from a config (real MultiPIT pairs)."""

from __future__ import annotations

import numpy as np
import pytest

from parakit.errors import ModelError
from parakit.models import cross_encoder
from parakit.models.base import load_model
from parakit.models.cross_encoder import CrossEncoderClassifier, selection_score


def small(encoder: str, **overrides) -> CrossEncoderClassifier:
    params = dict(
        model_name_or_path=encoder,
        max_length=48,
        epochs=2,
        learning_rate=1e-3,
        per_device_batch_size=16,
        batch_size=32,
        progress=False,
        seed=1,
        num_threads=2,
    )
    params.update(overrides)
    return CrossEncoderClassifier(**params)


def test_selection_score_known_answers():
    truth, pred = ["1", "1", "0", "0"], ["1", "0", "0", "0"]
    assert selection_score(truth, pred, ["0", "1"], "1", "f1") == pytest.approx(2 / 3)
    assert selection_score(truth, pred, ["0", "1"], "1", "accuracy") == 0.75
    macro = (2 / 3 + 0.8) / 2
    assert selection_score(truth, pred, ["0", "1"], None, "macro_f1") == pytest.approx(macro)
    with pytest.raises(ModelError, match="E712"):
        selection_score(truth, pred, ["0", "1"], "1", "auc")


def test_trains_selects_on_dev_and_reloads_identically(tiny_encoder, multipit, tmp_path):
    train, dev = multipit
    model = small(tiny_encoder, eval_steps=3).fit(train[:128], eval_set=dev[:100])
    # the recipe's steps: 128 pairs / effective batch 32 = 4 steps per epoch, 2 epochs
    steps = [h["step"] for h in model.history_]
    assert steps == [3, 6, 8]
    assert model.best_score_ == max(h["dev_score"] for h in model.history_)
    proba = model.predict_proba(dev[:100])
    assert proba.shape == (100, 2) and np.allclose(proba.sum(1), 1, atol=1e-5)
    # the kept model is the best one: its dev F1 equals the best score
    predicted = [str(v) for v in model.predict(dev[:100])]
    f1 = selection_score([p.label for p in dev[:100]], predicted, ["0", "1"], "1", "f1")
    assert f1 == pytest.approx(model.best_score_)
    model.save(tmp_path / "ce")
    again = load_model(tmp_path / "ce")
    assert isinstance(again, CrossEncoderClassifier)
    assert np.allclose(again.predict_proba(dev[:100]), proba, atol=1e-6)
    assert list(again.predict(dev[:100])) == list(model.predict(dev[:100]))


def test_learning_rate_grid_keeps_the_best_rate(tiny_encoder, multipit):
    train, dev = multipit
    model = small(tiny_encoder, epochs=1, learning_rates=[1e-5, 1e-3]).fit(
        train[:64], eval_set=dev[:32]
    )
    rates = {h["learning_rate"] for h in model.history_}
    assert rates == {1e-5, 1e-3}
    best = max(model.history_, key=lambda h: h["dev_score"])
    assert model.best_score_ == best["dev_score"]
    assert model.best_learning_rate_ == best["learning_rate"]


def test_both_orders_doubles_the_training_pairs(tiny_encoder, multipit):
    train, _ = multipit
    model = small(tiny_encoder, epochs=1, both_orders=True).fit(train[:32])
    assert model.history_[-1]["step"] == 2  # 64 pairs / 32


def test_interrupted_training_resumes_to_the_same_model(
    tiny_encoder, multipit, tmp_path, monkeypatch
):
    train, dev = multipit
    data, held = train[:64], dev[:40]
    reference = small(tiny_encoder, eval_steps=1, output_dir=str(tmp_path / "a")).fit(
        data, eval_set=held
    )

    real = cross_encoder.selection_score
    calls = {"n": 0}

    def crash_on_second_evaluation(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(cross_encoder, "selection_score", crash_on_second_evaluation)
    with pytest.raises(KeyboardInterrupt):
        small(tiny_encoder, eval_steps=1, output_dir=str(tmp_path / "b")).fit(data, eval_set=held)
    assert (tmp_path / "b" / "lr-0.001" / "last.pt").exists()
    monkeypatch.setattr(cross_encoder, "selection_score", real)
    resumed = small(tiny_encoder, eval_steps=1, output_dir=str(tmp_path / "b")).fit(
        data, eval_set=held
    )
    assert [h["step"] for h in resumed.history_] == [h["step"] for h in reference.history_]
    assert np.allclose(resumed.predict_proba(held), reference.predict_proba(held), atol=1e-5)


def test_checkpoint_from_other_settings_is_refused(tiny_encoder, multipit, tmp_path):
    train, _ = multipit
    small(tiny_encoder, epochs=1, output_dir=str(tmp_path)).fit(train[:32])
    with pytest.raises(ModelError, match="E714"):
        small(tiny_encoder, epochs=1, max_length=32, output_dir=str(tmp_path)).fit(train[:32])
    # the same settings find the finished run and do not train again
    again = small(tiny_encoder, epochs=1, output_dir=str(tmp_path)).fit(train[:32])
    assert [h["step"] for h in again.history_] == [1]


def test_training_continues_from_a_saved_cross_encoder(tiny_encoder, multipit, tmp_path):
    train, dev = multipit
    first = small(tiny_encoder, epochs=1).fit(train[:64])
    first.save(tmp_path / "stage1")
    # a zero learning rate leaves every weight as loaded: the head and encoder of stage 1
    continued = small(str(tmp_path / "stage1"), epochs=1, learning_rate=0.0).fit(train[64:96])
    assert np.allclose(continued.predict_proba(dev[:50]), first.predict_proba(dev[:50]), atol=1e-6)
    # starting from the plain encoder instead gives a new, untrained head
    fresh = small(tiny_encoder, epochs=1, learning_rate=0.0).fit(train[64:96])
    assert not np.allclose(fresh.predict_proba(dev[:50]), first.predict_proba(dev[:50]), atol=1e-3)


def test_not_a_model_path_fails_clearly(tmp_path, multipit):
    with pytest.raises(ModelError, match="E713"):
        small(str(tmp_path / "missing")).fit(multipit[0][:20])
