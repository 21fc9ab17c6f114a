"""Issue 27: the cross-encoder's cheaper step (tokenised once, length-grouped batches) and the
recipe's ledger callback, on a tiny encoder and real MultiPIT pairs."""

from __future__ import annotations

import sys
from pathlib import Path

from parakit.models.cross_encoder import CrossEncoderClassifier

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from identify import ledger_callback  # noqa: E402
from ledger import Ledger  # noqa: E402


def tiny(encoder: str, **overrides) -> CrossEncoderClassifier:
    params = dict(
        model_name_or_path=encoder,
        max_length=64,
        epochs=1,
        learning_rate=1e-3,
        micro_batch_size=8,
        batch_size=8,
        progress=False,
        seed=3,
        num_threads=2,
    )
    params.update(overrides)
    return CrossEncoderClassifier(**params)


def padded_tokens(model: CrossEncoderClassifier, data) -> tuple[int, int]:
    """(padded tokens over one epoch, batches): every batch the loss saw."""
    shapes: list[tuple[int, int]] = []
    loss = model._loss

    def recording(network, encoded, targets):
        shapes.append(tuple(encoded["input_ids"].shape))
        return loss(network, encoded, targets)

    model._loss = recording  # type: ignore[method-assign]
    model.fit(data)
    return sum(rows * width for rows, width in shapes), len(shapes)


def test_length_grouped_batches_pad_less_over_the_same_pairs(tiny_encoder, multipit):
    data = multipit[0][:96]
    grouped, n_grouped = padded_tokens(tiny(tiny_encoder, group_by_length=True), data)
    shuffled, n_shuffled = padded_tokens(tiny(tiny_encoder, group_by_length=False), data)
    assert n_grouped == n_shuffled == 12  # every pair once, 8 a batch
    # each batch is padded to its longest pair: batches of similar lengths pad less
    assert grouped < 0.9 * shuffled, (grouped, shuffled)


def test_tokenised_examples_are_unpadded_and_indexed(tiny_encoder, multipit):
    from transformers import AutoTokenizer

    model = tiny(tiny_encoder)
    model.tokenizer_ = AutoTokenizer.from_pretrained(tiny_encoder)
    texts1, texts2 = (list(t) for t in multipit[0][:5].texts())
    examples = model._tokenised_examples(texts1, texts2)
    assert [e["index"] for e in examples] == [0, 1, 2, 3, 4]
    lengths = {len(e["input_ids"]) for e in examples}
    assert len(lengths) > 1  # not padded to a common length
    assert all(len(e["input_ids"]) <= 64 for e in examples)
    one = model.tokenizer_(texts1[2], texts2[2], truncation=True, max_length=64)
    assert examples[2]["input_ids"] == one["input_ids"]


def test_recipe_writes_one_ledger_line_per_epoch_and_a_rerun_adds_none(
    tiny_encoder, multipit, tmp_path
):
    train, dev = multipit[0][:48], multipit[1][:24]
    ledger = Ledger("recipe", command="test", folder=tmp_path / "results")
    unit = {"model": "tiny", "lr": 1e-3}
    steps_per_epoch = 6  # 48 pairs, batch 8
    model = tiny(
        tiny_encoder, epochs=2, eval_steps=steps_per_epoch, output_dir=str(tmp_path / "ck")
    )
    callback = ledger_callback(ledger, unit, {"seed": 3}, steps_per_epoch)
    model.fit(train, eval_set=dev, callbacks=[callback])
    lines = ledger.lines()
    assert [line["unit"] for line in lines] == [{**unit, "epoch": 1}, {**unit, "epoch": 2}]
    scores = [round(100 * h["dev_score"], 2) for h in model.history_ if "dev_score" in h]
    assert [line["metrics"]["dev_f1"] for line in lines] == scores
    assert all(0 <= line["metrics"]["dev_accuracy"] <= 100 for line in lines)
    # the clock is recorded on every line; figures are rounded to 0.1 s, and a tiny epoch on a
    # fast CPU takes less than 0.05 s (CI read 0.0), so only their presence and sign are known
    assert all(line["wall_s"] >= 0 and line["cpu_s"] >= 0 for line in lines)
    assert all(isinstance(line["load"], float) and line["load"] >= 0 for line in lines)
    # the same command again: training is finished (checkpoints), nothing new is recorded
    again = tiny(
        tiny_encoder, epochs=2, eval_steps=steps_per_epoch, output_dir=str(tmp_path / "ck")
    )
    again.fit(train, eval_set=dev, callbacks=[ledger_callback(ledger, unit, {}, steps_per_epoch)])
    assert len(ledger.lines()) == 2
