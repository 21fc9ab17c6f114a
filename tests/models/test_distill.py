"""Distillation: teacher soft labels, the soft-label loss, a tiny student cross-encoder."""

from __future__ import annotations

import math

import numpy as np
import pytest

from parakit.errors import ModelError
from parakit.models.base import load_model, make_model
from parakit.models.cross_encoder import CrossEncoderClassifier, soft_label_loss
from parakit.models.distill import distill, label_with_teacher, teacher_probabilities


def student(encoder: str, **overrides) -> CrossEncoderClassifier:
    params = dict(
        model_name_or_path=encoder,
        max_length=32,
        epochs=2,
        learning_rate=1e-3,
        micro_batch_size=16,
        batch_size=16,
        progress=False,
        seed=1,
        num_threads=2,
    )
    params.update(overrides)
    return CrossEncoderClassifier(**params)


def test_soft_label_loss_known_answers():
    torch = pytest.importorskip("torch")
    logits = torch.tensor([[0.0, 0.0], [0.0, math.log(3.0)]])  # q = 0.5 and q = 0.75
    soft = torch.tensor([0.25, 1.0])
    ce = (-(0.25 * math.log(0.5) + 0.75 * math.log(0.5)) - math.log(0.75)) / 2
    assert float(soft_label_loss(logits, soft)) == pytest.approx(ce, abs=1e-6)
    mse = ((0.5 - 0.25) ** 2 + (0.75 - 1.0) ** 2) / 2
    assert float(soft_label_loss(logits, soft, "mse")) == pytest.approx(mse, abs=1e-6)


def test_teacher_labels_are_its_paraphrase_probabilities(multipit):
    train, dev = multipit
    teacher = make_model("tfidf").fit(train)
    expected = teacher.paraphrase_proba(dev[:50])
    assert np.allclose(teacher_probabilities(teacher, dev[:50], chunk_size=7), expected)
    labelled = label_with_teacher(teacher, dev[:50])
    assert [p.metadata["teacher_p"] for p in labelled] == [round(float(p), 6) for p in expected]
    assert [p.label for p in labelled] == ["1" if p >= 0.5 else "0" for p in expected]
    assert [p.metadata["gold_label"] for p in labelled] == [p.label for p in dev[:50]]


def test_student_learns_soft_targets_and_reloads(tiny_encoder, multipit, tmp_path):
    pairs = multipit[0][:32]
    # the same student trained towards P = 0.9 and towards P = 0.1 on every pair
    high = student(tiny_encoder, learning_rate=5e-3, epochs=3).fit_soft(pairs, soft=[0.9] * 32)
    low = student(tiny_encoder, learning_rate=5e-3, epochs=3).fit_soft(pairs, soft=[0.1] * 32)
    assert list(high.classes_) == ["0", "1"]
    p_high, p_low = high.paraphrase_proba(pairs), low.paraphrase_proba(pairs)
    assert p_high.mean() > 0.6 and p_low.mean() < 0.4
    high.save(tmp_path / "student")
    again = load_model(tmp_path / "student")
    assert np.allclose(again.paraphrase_proba(pairs), p_high, atol=1e-6)


def test_distill_with_gold_pairs_and_dev_selection(tiny_encoder, multipit):
    train, dev = multipit
    teacher = make_model("tfidf").fit(train)
    model = distill(
        teacher,
        train[:48],
        student(tiny_encoder, epochs=1, soft_loss="mse"),
        gold=train[48:64],
        eval_set=dev[:40],
    )
    assert model.distillation_["n_transfer"] == 48 and model.distillation_["n_gold"] == 16
    assert model.history_ and "dev_score" in model.history_[-1]
    # soft labels read from the metadata of teacher-labelled pairs
    labelled = label_with_teacher(teacher, train[:32])
    assert student(tiny_encoder, epochs=1).fit_soft(labelled).predict(dev[:5]).shape == (5,)


def test_soft_label_errors(tiny_encoder, multipit):
    train, _ = multipit
    with pytest.raises(ModelError, match="E702.*no soft label"):
        student(tiny_encoder).fit_soft(train[:4])
    with pytest.raises(ModelError, match="E704.*not a probability"):
        student(tiny_encoder).fit_soft(train[:2], soft=[0.5, 1.5])
    with pytest.raises(ModelError, match="E706"):
        student(tiny_encoder).fit_soft(train[:2], soft=[0.5])
    with pytest.raises(ModelError, match="E712.*soft_loss"):
        student(tiny_encoder, soft_loss="kl").fit_soft(train[:2], soft=[0.5, 0.5])
    with pytest.raises(ModelError, match="E712.*cannot learn soft labels"):
        distill(make_model("wor").fit(train[:20]), train[:4], make_model("wor"))


def test_distillation_from_the_command_line(tiny_encoder, multipit, tmp_path, capsys):
    from parakit.cli import main
    from parakit.io import read, write

    train, dev = multipit
    write(train, tmp_path / "train.jsonl")
    write(train[:32], tmp_path / "transfer.jsonl")
    write(dev[:20], tmp_path / "dev.jsonl")
    teacher = tmp_path / "teacher"
    assert main(["identify", "train", str(tmp_path / "train.jsonl"), "-o", str(teacher)]) == 0
    labelled = tmp_path / "transfer-teacher.jsonl"
    assert (
        main(
            [
                "identify",
                "predict",
                str(teacher),
                str(tmp_path / "transfer.jsonl"),
                "-o",
                str(labelled),
            ]
        )
        == 0
    )
    soft = [p.metadata["prediction"]["p_paraphrase"] for p in read(labelled)]
    args = ["identify", "train", str(labelled), "--model", "cross-encoder"]
    args += ["--soft-labels", "prediction.p_paraphrase", "--dev", str(tmp_path / "dev.jsonl")]
    args += ["-p", f"model_name_or_path={tiny_encoder}", "-p", "epochs=1", "-p", "max_length=32"]
    args += ["-p", "progress=false", "-o", str(tmp_path / "student")]
    assert main(args) == 0
    assert "dev accuracy" in capsys.readouterr().out
    assert len(soft) == 32 and 0 <= min(soft) <= max(soft) <= 1
    assert (
        main(["identify", "train", str(labelled), "--soft-labels", "x", "-o", str(tmp_path / "w")])
        == 2
    )
    assert "cannot learn soft labels" in capsys.readouterr().err
