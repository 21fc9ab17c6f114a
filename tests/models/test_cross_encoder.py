"""Cross-encoder fine-tuning with a tiny BERT built from a config (real MultiPIT pairs)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from parakit.errors import ModelError
from parakit.evaluate.classification import ClassificationEvaluator, selection_metrics
from parakit.models.base import load_model
from parakit.models.cross_encoder import CrossEncoderClassifier
from parakit.schema import PairSet


def small(encoder: str, **overrides) -> CrossEncoderClassifier:
    params = dict(
        model_name_or_path=encoder,
        max_length=48,
        epochs=2,
        learning_rate=1e-3,
        micro_batch_size=16,
        batch_size=32,
        progress=False,
        seed=1,
        num_threads=2,
    )
    params.update(overrides)
    return CrossEncoderClassifier(**params)


def selection_score(truth, pred, classes, positive, metric):
    return selection_metrics(list(truth), list(pred), classes, positive)[metric]


def test_selection_score_known_answers(tiny_encoder, multipit):
    truth, pred = ["1", "1", "0", "0"], ["1", "0", "0", "0"]
    assert selection_score(truth, pred, ["0", "1"], "1", "f1") == pytest.approx(2 / 3)
    assert selection_score(truth, pred, ["0", "1"], "1", "accuracy") == 0.75
    macro = (2 / 3 + 0.8) / 2
    assert selection_score(truth, pred, ["0", "1"], None, "macro_f1") == pytest.approx(macro)
    # without a positive class, f1 is the macro F1 (multi-class selection)
    assert selection_score(truth, pred, ["0", "1"], None, "f1") == pytest.approx(macro)
    train, dev = multipit
    with pytest.raises(ModelError, match="E712"):
        small(tiny_encoder, selection_metric="auc").fit(train[:8], eval_set=dev[:8])


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


#: a training run in its own process that SIGKILLs itself right after its first checkpoint
KILLED_RUN = """
import os, signal, sys
import transformers
from parakit.io import read
from parakit.models.cross_encoder import CrossEncoderClassifier

save = transformers.Trainer._save_checkpoint

def save_then_die(self, *args, **kwargs):
    save(self, *args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)

transformers.Trainer._save_checkpoint = save_then_die
encoder, train, dev, out = sys.argv[1:5]
data, held = read(train), read(dev)
CrossEncoderClassifier(
    encoder, max_length=48, epochs=1, learning_rate=1e-3, micro_batch_size=16,
    batch_size=32, progress=False, seed=1, num_threads=2, eval_steps=1, output_dir=out,
).fit(data, eval_set=held)
"""


def test_killed_training_resumes_to_the_same_model(tiny_encoder, multipit, tmp_path, monkeypatch):
    from parakit.io import write

    train, dev = multipit
    data, held = train[:64], dev[:40]
    write(PairSet(list(data), scheme="binary"), tmp_path / "train.jsonl")
    write(PairSet(list(held), scheme="binary"), tmp_path / "dev.jsonl")
    reference = small(tiny_encoder, epochs=1, eval_steps=1, output_dir=str(tmp_path / "a")).fit(
        data, eval_set=held
    )
    out = tmp_path / "b"
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(KILLED_RUN),
            tiny_encoder,
            str(tmp_path / "train.jsonl"),
            str(tmp_path / "dev.jsonl"),
            str(out),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "TQDM_DISABLE": "1"},
        timeout=900,  # a hang guard; a loaded machine (nice 19 beside a training run) is slow
    )
    assert run.returncode == -signal.SIGKILL, run.stderr[-2000:]
    # killed after the checkpoint of step 1 of 2: that is all there is
    assert sorted(p.name for p in (out / "lr-0.001").glob("checkpoint-*")) == ["checkpoint-1"]
    evaluated = []
    score = ClassificationEvaluator.__call__

    def counting(self, model, output_path=None, epoch=-1, steps=-1):
        evaluated.append(steps)
        return score(self, model, output_path, epoch, steps)

    monkeypatch.setattr(ClassificationEvaluator, "__call__", counting)
    resumed = small(tiny_encoder, epochs=1, eval_steps=1, output_dir=str(out))
    resumed.fit(data, eval_set=held)
    # the rerun continued after step 1: it trained and evaluated step 2 only, and its history
    # holds step 1 from the killed process
    assert evaluated == [2]
    assert [h["step"] for h in resumed.history_] == [1, 2]
    assert [h["step"] for h in reference.history_] == [1, 2]
    for a, b in zip(resumed.history_, reference.history_, strict=True):
        assert a["dev_score"] == pytest.approx(b["dev_score"], abs=1e-6)
        assert a["train_loss"] == pytest.approx(b["train_loss"], rel=1e-4)
    assert resumed.best_score_ == pytest.approx(reference.best_score_)
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
    with pytest.raises(ModelError, match="E719"):  # no such folder (not the Hub's repo-id text)
        small(str(tmp_path / "missing")).fit(multipit[0][:20])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="E713"):  # a folder, but no model in it
        small(str(tmp_path / "empty")).fit(multipit[0][:20])


def test_precision_from_the_command_line(tiny_encoder, multipit, tmp_path):
    """`identify predict --precision fp32` gives the fp32 probabilities of the library; bf16
    (what `auto` means on a CPU with AVX512-BF16/AMX) moves them only slightly."""
    from parakit.cli import main
    from parakit.io import read, write

    train, dev = multipit
    small(tiny_encoder, epochs=1).fit(train[:64]).save(tmp_path / "ce")
    write(PairSet(list(dev[:40]), scheme="binary"), tmp_path / "dev.jsonl")
    fp32 = load_model(tmp_path / "ce", precision="fp32")
    expected = fp32.paraphrase_proba(dev[:40])
    for precision in ("fp32", "bf16"):
        out = tmp_path / f"{precision}.jsonl"
        args = ["identify", "predict", str(tmp_path / "ce"), str(tmp_path / "dev.jsonl")]
        assert main([*args, "-o", str(out), "--precision", precision]) == 0
        got = np.array([p.metadata["prediction"]["p_paraphrase"] for p in read(out)])
        if precision == "fp32":
            assert np.allclose(got, expected, atol=2e-6)
        else:
            assert np.abs(got - expected).max() < 0.02
    assert main([*args, "-o", str(out), "--precision", "int4"]) == 2
