"""Bi-encoder training (T17) with a tiny BERT: learning signal, losses, save/load, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from parakit.errors import BiEncoderError, ModelError  # noqa: E402
from parakit.models.base import PairClassifier, load_model  # noqa: E402
from parakit.models.biencoder import BiEncoder  # noqa: E402
from parakit.schema import Pair, PairSet  # noqa: E402

WORDS = ["cat", "dog", "car", "tree", "bird", "fish", "house", "river", "stone", "cloud"]


@pytest.fixture(scope="module")
def plain_bert(tmp_path_factory):
    """A plain 2-layer BERT (not a sentence-transformers folder): gets mean pooling."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    torch.manual_seed(0)
    torch.set_num_threads(1)
    folder = tmp_path_factory.mktemp("bert")
    vocab = folder / "vocab.txt"
    vocab.write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "big", "small", *WORDS]) + "\n"
    )
    BertTokenizerFast(vocab=str(vocab)).save_pretrained(folder)
    config = BertConfig(
        vocab_size=17,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
    )
    BertModel(config).save_pretrained(folder)
    return folder


def _data(seed: int, n: int = 96) -> PairSet:
    """Paraphrase (label 4 or 3) = same noun; unrelated (1) or related (2) = different nouns."""
    rng = np.random.default_rng(seed)
    pairs = []
    for i in range(n):
        a = rng.choice(WORDS)
        if i % 2 == 0:
            pairs.append(Pair(str(i), f"big {a}", f"small {a}", "4" if i % 4 else "3"))
        else:
            b = rng.choice([w for w in WORDS if w != a])
            pairs.append(Pair(str(i), f"big {a}", f"big {b}", "1" if i % 4 == 1 else "2"))
    return PairSet(pairs, scheme="turku")


@pytest.mark.parametrize("loss", ["online_contrastive", "contrastive"])
def test_training_improves_dev_and_roundtrips(tmp_path, plain_bert, loss):
    model = BiEncoder(plain_bert, loss=loss, learning_rate=2e-3, epochs=4, margin=0.5, seed=1).fit(
        _data(0), eval_set=_data(1, 48)
    )
    before, after = model.history_[0], model.history_[-1]
    assert model.batch_size == 16
    assert after["dev_cosine_ap"] > before["dev_cosine_ap"] + 0.1
    assert after["dev_cosine_ap"] > 0.9
    model.save(tmp_path / "m")
    again = BiEncoder.load(tmp_path / "m")
    texts = ["big cat", "small dog"]
    np.testing.assert_allclose(again.encode(texts), model.encode(texts), atol=1e-6)
    assert again.loss == loss and again.history_ == model.history_
    # one save format for every model family: the classifier loader names what it found
    meta = json.loads((tmp_path / "m" / "parakit_model.json").read_text())
    assert meta["model_type"] == "biencoder" and meta["params"]["loss"] == loss
    with pytest.raises(ModelError, match="E711.*bi-encoder"):
        PairClassifier.load(tmp_path / "m")
    # the one loader of every family dispatches on the model type
    assert isinstance(load_model(tmp_path / "m"), BiEncoder)
    metrics = again.evaluate(_data(2, 40))
    assert metrics["test_retrieval_top1"] >= 0 and "test_cosine_accuracy" in metrics


def test_mnrl_with_hard_negatives(plain_bert):
    data = _data(0)
    negatives = PairSet(
        [
            Pair(
                f"n{i}", p.text1, "big " + WORDS[(WORDS.index(p.text1.split()[1]) + 1) % len(WORDS)]
            )
            for i, p in enumerate(data)
            if p.label in ("3", "4")
        ]
    )
    model = BiEncoder(plain_bert, loss="mnrl", learning_rate=2e-3, epochs=2).fit(
        data, eval_set=_data(1, 48), hard_negatives=negatives
    )
    assert model.history_[-1]["dev_cosine_ap"] > model.history_[0]["dev_cosine_ap"]


def test_errors(plain_bert, tmp_path):
    positives = _data(0).filter(lambda p: p.label in ("3", "4"))
    with pytest.raises(BiEncoderError, match="needs positive and negative"):
        BiEncoder(plain_bert).fit(positives)
    with pytest.raises(BiEncoderError, match="unknown loss"):
        BiEncoder(plain_bert, loss="triplet").fit(positives)
    with pytest.raises(BiEncoderError, match="modules.json"):
        BiEncoder.load(tmp_path)
