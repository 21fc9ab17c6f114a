"""Seq2seq generators: tiny models built from a config train a few steps, generate, save, load."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from parakit.errors import GeneratorError, ModelError  # noqa: E402
from parakit.models.base import PairClassifier, load_model  # noqa: E402
from parakit.models.generator import Seq2SeqGenerator, select_learning_rate  # noqa: E402
from parakit.schema import Pair, PairSet  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch.set_num_threads(1)

WORDS = [
    "the",
    "cat",
    "dog",
    "sat",
    "ran",
    "on",
    "mat",
    "rug",
    "a",
    "big",
    "small",
    "red",
    "blue",
    "house",
    "car",
    "is",
    "was",
    "my",
    "your",
    "love",
    "like",
    "song",
    "music",
    "today",
    "tomorrow",
    "weekend",
    "game",
    "win",
    "lost",
    "team",
]

#: a toy task with one right answer per input: reverse the word order
TRAIN = [
    (" ".join(ws), " ".join(reversed(ws)))
    for ws in (
        ["the", "cat", "sat"],
        ["a", "dog", "ran"],
        ["my", "big", "house"],
        ["the", "red", "car"],
        ["your", "small", "song"],
        ["the", "team", "lost"],
        ["a", "blue", "rug"],
        ["my", "music", "today"],
    )
]


def _tokenizer(folder: Path):
    from transformers import BertTokenizerFast

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    return BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True)


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory) -> dict[str, Path]:
    """Three tiny architectures saved to disk with a WordPiece tokenizer built from a vocab."""
    from transformers import (
        BartConfig,
        BartForConditionalGeneration,
        BertConfig,
        BertModel,
        GPT2Config,
        GPT2LMHeadModel,
    )

    root = tmp_path_factory.mktemp("tiny")
    out = {}
    torch.manual_seed(0)
    tok = _tokenizer(root / "tok")
    n = len(tok)
    bart = BartConfig(
        vocab_size=n,
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=64,
        pad_token_id=0,
        bos_token_id=2,
        eos_token_id=3,
        decoder_start_token_id=2,
        forced_eos_token_id=None,
    )
    gpt2 = GPT2Config(
        vocab_size=n,
        n_embd=32,
        n_layer=1,
        n_head=2,
        n_positions=64,
        bos_token_id=2,
        eos_token_id=3,
        pad_token_id=0,
    )
    bert = BertConfig(
        vocab_size=n,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    for name, model in (
        ("bart", BartForConditionalGeneration(bart)),
        ("gpt2", GPT2LMHeadModel(gpt2)),
        ("bert", BertModel(bert)),
    ):
        folder = root / name
        model.save_pretrained(folder)
        tok.save_pretrained(folder)
        out[name] = folder
    return out


def _fit(path: Path, **params) -> Seq2SeqGenerator:
    base = {
        "learning_rate": 1e-2,
        "epochs": 20,
        "batch_size": 8,
        "num_beams": 2,
        "max_new_tokens": 6,
        "progress": False,
        "seed": 1,
    }
    base.update(params)
    return Seq2SeqGenerator(path, **base).fit(TRAIN, TRAIN[:4])


@pytest.fixture(scope="module")
def fitted(tiny_models) -> dict[str, Seq2SeqGenerator]:
    """Each tiny architecture fine-tuned once (one optimiser step per epoch)."""
    return {
        "bart": _fit(tiny_models["bart"], epochs=40),
        "gpt2": _fit(tiny_models["gpt2"]),
        "bert": _fit(tiny_models["bert"]),
    }


@pytest.mark.parametrize(
    "name,arch", [("bart", "encoder-decoder"), ("gpt2", "decoder-only"), ("bert", "bert2bert")]
)
def test_tiny_model_learns_and_dev_perplexity_drops(fitted, name, arch):
    gen = fitted[name]
    assert gen.architecture_ == arch
    # per-epoch evaluation (training shorter than 3 * 500 steps): one entry per epoch
    assert len(gen.history_) == gen.epochs
    first, best = gen.history_[0]["dev_perplexity"], gen.best_dev_perplexity_
    assert best < first / 2
    assert gen.perplexity(TRAIN[:4]) == pytest.approx(best, rel=1e-4)
    outputs = gen.generate([s for s, _ in TRAIN[:4]])
    assert len(outputs) == 4 and all(isinstance(o, str) for o in outputs)


def test_encoder_decoder_memorises_reversal(fitted):
    outputs = fitted["bart"].generate([s for s, _ in TRAIN])
    correct = sum(o == t for o, (_, t) in zip(outputs, TRAIN, strict=True))
    assert correct >= 6, outputs


def test_save_load_roundtrip_gives_same_generations(fitted, tmp_path):
    gen = fitted["bart"]
    before = gen.generate(["the cat sat", "a dog ran"])
    gen.save(tmp_path / "model")
    info = json.loads((tmp_path / "model" / "parakit_model.json").read_text())
    assert info["architecture"] == "encoder-decoder" and len(info["history"]) == 40
    loaded = Seq2SeqGenerator.load(tmp_path / "model")
    assert loaded.generate(["the cat sat", "a dog ran"]) == before
    assert loaded.best_dev_perplexity_ == pytest.approx(gen.best_dev_perplexity_)
    # one model description for every family: the classifier loader says what it found
    assert info["model_type"] == "generator"
    with pytest.raises(ModelError, match="E711.*generator"):
        PairClassifier.load(tmp_path / "model")
    # the one loader of every family dispatches on the model type
    assert load_model(tmp_path / "model").generate(["the cat sat", "a dog ran"]) == before


def test_warm_started_bert2bert_saves_and_loads(fitted, tmp_path):
    gen = fitted["bert"]
    gen.save(tmp_path / "b2b")
    loaded = Seq2SeqGenerator.load(tmp_path / "b2b")
    assert loaded.architecture_ == "bert2bert"
    assert type(loaded.model_).__name__ == "EncoderDecoderModel"
    assert loaded.generate(["the cat sat"]) == gen.generate(["the cat sat"])


def test_recipe_schedule_and_accumulation(tiny_models):
    # 8 pairs, micro batch 2, effective batch 4 -> 2 optimiser steps per epoch
    gen = _fit(tiny_models["bart"], epochs=2, batch_size=4, micro_batch_size=2)
    assert [h["step"] for h in gen.history_] == [2.0, 4.0]
    gen = _fit(tiny_models["bart"], epochs=5, batch_size=4, max_steps=3, eval_steps=1)
    # eval every step when training is long enough (3 >= 3 * eval_steps)
    assert [h["step"] for h in gen.history_] == [1.0, 2.0, 3.0]
    # a time budget of zero stops after the first optimiser step (and still evaluates it)
    gen = _fit(tiny_models["bart"], epochs=5, batch_size=4, max_time=0)
    assert gen.n_steps_ == 1 and [h["step"] for h in gen.history_] == [1.0]


def test_sampling_and_multiple_returns(fitted):
    gen = fitted["gpt2"]
    many = gen.generate(["the cat sat"], num_return_sequences=3, num_beams=3)
    assert len(many) == 1 and len(many[0]) == 3
    sampled = gen.generate(["the cat sat", "a dog ran"], do_sample=True, top_p=0.9, temperature=1.5)
    assert len(sampled) == 2
    with pytest.raises(GeneratorError, match="E928"):
        gen.generate(["x"], beams=3)


def test_learning_rate_selection_picks_lowest_dev_perplexity(tiny_models):
    base = Seq2SeqGenerator(tiny_models["bart"], epochs=3, batch_size=8, progress=False)
    best, results = select_learning_rate(base, TRAIN, TRAIN[:4], learning_rates=(1e-6, 3e-3))
    assert set(results) == {1e-6, 3e-3}
    assert best.learning_rate == min(results, key=results.get)
    assert results[3e-3] < results[1e-6]


def test_pairset_input_and_errors(tiny_models, tmp_path):
    ps = PairSet([Pair(str(i), s, t) for i, (s, t) in enumerate(TRAIN)])
    gen = Seq2SeqGenerator(tiny_models["bart"], epochs=1, batch_size=8, progress=False)
    assert gen.fit(ps).history_[0].get("dev_perplexity") is None
    with pytest.raises(GeneratorError, match="E927"):
        Seq2SeqGenerator(tiny_models["bart"]).generate(["x"])
    with pytest.raises(GeneratorError, match="E929"):
        Seq2SeqGenerator.load(tmp_path)
    with pytest.raises(ModelError, match="E719"):  # a base path that does not exist
        Seq2SeqGenerator(tmp_path / "missing").fit(TRAIN)


def test_minilm_warm_start_trains_and_generates(minilm_path, tmp_path):
    """The offline MiniLM (an encoder only) becomes a BERT-to-BERT generator."""
    gen = Seq2SeqGenerator(
        minilm_path,
        epochs=1,
        batch_size=4,
        max_steps=2,
        num_beams=2,
        max_new_tokens=5,
        progress=False,
    )
    gen.fit(TRAIN[:4], TRAIN[:2])
    assert gen.architecture_ == "bert2bert"
    assert gen.model_.config.decoder_start_token_id == gen.tokenizer_.cls_token_id
    assert len(gen.history_) == 1 and gen.best_dev_perplexity_ > 1
    out = gen.generate(["the cat sat on the mat"])
    assert len(out) == 1 and isinstance(out[0], str)
