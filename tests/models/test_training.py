"""The one trainer (models/training.py): Evaluator-based selection, precision, stop and resume,
and no optimiser step anywhere else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from parakit.errors import ModelError  # noqa: E402
from parakit.evaluate.base import Evaluator  # noqa: E402
from parakit.models.training import (  # noqa: E402
    TrainSettings,
    plan_steps,
    recipe_eval_steps,
    train_transformer,
)

SRC = Path(__file__).resolve().parents[2] / "src" / "parakit"


class Scripted(Evaluator):
    """Scores that follow a script per evaluation (a known answer for the selection), and a
    copy of the weights at each evaluation."""

    name = "dev"
    primary = "score"

    def __init__(self, scores: list[float], greater_is_better: bool = True) -> None:
        self.scores, self.greater_is_better = scores, greater_is_better
        self.weights: dict[int, torch.Tensor] = {}

    def __call__(self, model, output_path=None, epoch=-1, steps=-1):
        self.weights[steps] = model.weight.detach().clone()
        return self.prefixed({"score": self.scores[len(self.weights) - 1]})


def _data(n: int = 32) -> list[tuple[list[float], float]]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 4, generator=g)
    y = x @ torch.tensor([1.0, -2.0, 0.5, 3.0])
    return [(row.tolist(), float(t)) for row, t in zip(x, y, strict=True)]


def _collate(batch):
    return {
        "x": torch.tensor([b[0] for b in batch]),
        "y": torch.tensor([b[1] for b in batch]),
    }


def _mse(model, batch):
    return ((model(batch["x"]).squeeze(-1) - batch["y"]) ** 2).mean()


def _settings(**kw) -> TrainSettings:
    base = dict(
        learning_rate=0.05,
        epochs=2,
        batch_size=8,
        micro_batch_size=4,
        eval_steps=2,
        warmup_ratio=0.0,
        weight_decay=0.0,
        seed=3,
        precision="fp32",
        device="cpu",
        progress=False,
    )
    base.update(kw)
    return TrainSettings(**base)


def _linear() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Linear(4, 1)


def test_plan_and_the_recipe_rule():
    # 32 examples, micro 4, effective 8: 8 micro batches, 2 accumulated per step -> 4 per epoch
    assert plan_steps(32, 8, 4, 2) == (2, 4, 8)
    assert plan_steps(33, 8, 4, 2) == (2, 5, 10)  # 9 micro batches: the last step has one
    assert plan_steps(32, 8, 4, 2, max_steps=3) == (2, 4, 3)
    # MultiPIT App. C: every 500 steps, every epoch when training is shorter than 1,500
    assert recipe_eval_steps(1499, 300) == 300
    assert recipe_eval_steps(1500, 300) == 500


@pytest.mark.parametrize("greater, best", [(True, 4), (False, 6)])
def test_the_evaluator_selects_the_weights_kept(greater, best):
    evaluator = Scripted([0.2, 0.9, 0.1, 0.5], greater_is_better=greater)
    model = _linear()
    result = train_transformer(model, _data(), _collate, _mse, _settings(), evaluator=evaluator)
    assert [h["step"] for h in result.history] == [2, 4, 6, 8]
    assert [h["dev_score"] for h in result.history] == [0.2, 0.9, 0.1, 0.5]
    assert all(h["train_loss"] > 0 for h in result.history)
    assert result.best_step == best and result.steps == 8 and not result.stopped
    assert result.best_score == (0.9 if greater else 0.1)
    # the network holds the weights of the selected evaluation, not the last ones
    assert torch.equal(model.weight, evaluator.weights[best])
    assert not torch.equal(evaluator.weights[best], evaluator.weights[8])


def test_without_an_evaluator_the_last_weights_are_kept_and_training_learns():
    model = _linear()
    before = _mse(model, _collate(_data())).item()
    result = train_transformer(
        model, _data(), _collate, _mse, _settings(epochs=6, learning_rate=0.5)
    )
    assert result.best_score is None and result.steps == 24
    assert [h["step"] for h in result.history] == list(range(2, 25, 2))
    assert _mse(model, _collate(_data())).item() < before / 4


@pytest.mark.parametrize("precision, expected", [("fp32", None), ("bf16", torch.bfloat16)])
def test_the_loss_runs_under_the_asked_precision(precision, expected):
    seen = []

    def loss(model, batch):
        enabled = torch.is_autocast_enabled("cpu")
        seen.append(torch.get_autocast_dtype("cpu") if enabled else None)
        return _mse(model, batch)

    train_transformer(_linear(), _data(8), _collate, loss, _settings(precision=precision))
    assert seen and set(seen) == {expected}


def test_a_stopped_run_resumes_to_the_uninterrupted_result(tmp_path):
    from transformers import TrainerCallback

    class StopAt(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step == 4:
                control.should_training_stop = True
            return control

    reference = _linear()
    full = train_transformer(
        reference, _data(), _collate, _mse, _settings(), evaluator=Scripted([0.1, 0.2, 0.3, 0.4])
    )
    signature = {"run": 1}
    model = _linear()
    first = train_transformer(
        model,
        _data(),
        _collate,
        _mse,
        _settings(),
        evaluator=Scripted([0.1, 0.2, 0.3, 0.4]),
        output_dir=tmp_path,
        signature=signature,
        callbacks=[StopAt()],
    )
    assert first.steps == 4 and first.stopped
    evaluator = Scripted([0.3, 0.4])  # the resumed run evaluates steps 6 and 8 only
    again = _linear()
    resumed = train_transformer(
        again,
        _data(),
        _collate,
        _mse,
        _settings(),
        evaluator=evaluator,
        output_dir=tmp_path,
        signature=signature,
    )
    assert sorted(evaluator.weights) == [6, 8]
    assert [h["step"] for h in resumed.history] == [2, 4, 6, 8]
    assert resumed.best_step == 8 and resumed.steps == 8
    assert torch.allclose(again.weight, reference.weight, atol=1e-6)
    assert [h["train_loss"] for h in resumed.history] == pytest.approx(
        [h["train_loss"] for h in full.history], rel=1e-5
    )
    with pytest.raises(ModelError, match="E714"):
        train_transformer(
            _linear(), _data(), _collate, _mse, _settings(), output_dir=tmp_path, signature={}
        )


def test_no_training_code_outside_the_one_trainer_steps_an_optimiser():
    pattern = re.compile(r"optim\w*\.step\(|\.backward\(|scheduler\.step\(|GradScaler\(")
    offenders = [
        f"{path.relative_to(SRC)}:{number}"
        for path in SRC.rglob("*.py")
        if path.name != "training.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []


def test_the_estimator_base_builds_settings_signature_and_grid(monkeypatch, tmp_path):
    """TransformerEstimator: TrainSettings from the estimator's own parameters (by name), the
    checkpoint signature without the run parameters, one checkpoint folder per rate, the grid
    by clone + set_params, and bf16 asked of a trainer only where the device runs it."""
    import parakit.models.training as training
    from parakit.models.cross_encoder import CrossEncoderClassifier
    from parakit.models.generator import Seq2SeqGenerator

    model = CrossEncoderClassifier(
        "m",
        batch_size=32,
        micro_batch_size=8,
        seed=3,
        precision="fp32",
        device="cpu",
        output_dir=str(tmp_path),
    )
    settings = model.train_settings(128)
    assert (settings.batch_size, settings.micro_batch_size, settings.seed) == (32, 8, 3)
    assert settings.precision == "fp32" and settings.device == "cpu"
    assert settings.eval_steps == 4  # the recipe: each epoch (4 steps) when training is short
    assert model.set_params(eval_steps=3).train_settings(128).eval_steps == 3
    signature = model.run_signature(n_pairs=128)
    assert signature["n_pairs"] == 128 and signature["micro_batch_size"] == 8
    assert not {"output_dir", "progress", "device", "resume"} & set(signature)
    assert model.checkpoint_dir() == tmp_path / "lr-2e-05"
    generator = Seq2SeqGenerator("m", micro_batch_size=None, batch_size=16)
    assert generator.train_settings(10).micro_batch_size == 16
    assert "num_beams" not in generator.run_signature()

    fitted: list[float] = []

    def fit(copy):
        fitted.append(copy.learning_rate)
        copy.best_dev_perplexity_ = {1e-4: 3.0, 3e-4: 2.0, 1e-5: 5.0}[copy.learning_rate]

    best, scores = generator.fit_grid([1e-4, 3e-4, 1e-5], fit)
    assert fitted == [1e-4, 3e-4, 1e-5] and scores == {1e-4: 3.0, 3e-4: 2.0, 1e-5: 5.0}
    assert best is not generator and best.learning_rate == 3e-4  # lower perplexity wins
    assert generator.learning_rate == 1e-4 and not hasattr(generator, "best_dev_perplexity_")

    monkeypatch.setattr(training, "cpu_has_bf16", lambda: False)
    assert model.set_params(precision="bf16").trainer_precision() == {"bf16": False, "fp16": False}
    monkeypatch.setattr(training, "cpu_has_bf16", lambda: True)
    assert model.trainer_precision() == {"bf16": True, "fp16": False}
