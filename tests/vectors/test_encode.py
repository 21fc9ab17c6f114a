"""Encoders: ONNX Runtime export agrees with sentence-transformers; TF-IDF baseline; errors."""

from __future__ import annotations

import numpy as np
import pytest

from parakit.errors import MineError
from parakit.vectors.encode import OnnxEncoder, SentenceEncoder, TfidfEncoder, load_encoder

TEXTS = [
    "the cat sat on the mat",
    "a dog ran",
    "big red house and a small blue car",
    "she likes fish",
    "they walks to the tree",
]


def test_onnx_fp32_agrees_with_sentence_transformers(tmp_path, tiny_model):
    reference = SentenceEncoder(tiny_model, precision="fp32").encode(TEXTS)
    fp32 = OnnxEncoder(tiny_model, cache_dir=tmp_path, batch_size=2)
    out = fp32.encode(TEXTS)  # batches of 2 over length-sorted texts: padding must not leak
    np.testing.assert_allclose(out, reference, atol=1e-4)
    assert fp32.signature()["quantization"] is None
    assert [p.name for p in tmp_path.rglob("*.onnx")] == ["model.onnx"]
    # the int8 backends were removed (issue 24): no int8 graph kept recall@5 >= 0.99 faster
    for removed in ("onnx-int8", "onnx-int8-block"):
        with pytest.raises(MineError, match="onnx"):
            load_encoder(tiny_model, removed)


def test_tfidf_char_ngrams_and_errors():
    enc = TfidfEncoder(ngram_range=(2, 3)).fit(["abc", "abd"])
    vectors = enc.encode(["abc", "abd"]).toarray()
    # char 2-3-grams: abc -> ab, bc, abc ; abd -> ab, bd, abd ; only "ab" shared
    idf_ab, idf_other = 1.0, 1 + np.log(3 / 2)
    expected = idf_ab**2 / (idf_ab**2 + 2 * idf_other**2)
    assert vectors[0] @ vectors[1] == pytest.approx(expected)
    with pytest.raises(MineError, match="not fitted"):
        TfidfEncoder().encode(["x"])
    # one-character statements have no 2-gram: was scikit-learn's bare "empty vocabulary"
    with pytest.raises(MineError, match=r"E806.*none of the 2 texts has a character 2-gram"):
        TfidfEncoder().fit(["C", "D"])
    with pytest.raises(MineError, match="unknown encoder backend"):
        load_encoder("x", backend="tensorrt")
    with pytest.raises(MineError, match="E806"):
        SentenceEncoder("/nonexistent/model/folder").encode(["x"])


def test_one_loader_mean_pools_plain_encoders_and_names_bad_models(tmp_path, tiny_model):
    from parakit.errors import MineError
    from parakit.vectors.loading import load_sentence_transformer

    model = load_sentence_transformer(tiny_model, device="cpu", max_seq_length=16)
    assert model.max_seq_length == 16
    raw = load_sentence_transformer(tiny_model.parent / "raw", device="cpu")  # plain BERT
    assert type(raw[1]).__name__ == "Pooling"
    with pytest.raises(MineError, match=r"E806.*no-such-model"):
        load_sentence_transformer(tmp_path / "no-such-model")


def test_auto_precision_is_resolved_once_and_travels_with_the_encoder(monkeypatch, tiny_model):
    """``auto`` is resolved where the encoder is made: a Dask worker on a CPU without bf16
    loads the weights and signs the run as the client resolved it (resolving again there
    made its signature, and its weights, differ from the manifest's)."""
    import pickle

    from parakit.vectors import precision as precision_module

    monkeypatch.setattr(precision_module, "cpu_has_bf16", lambda: True)
    encoder = SentenceEncoder(tiny_model, precision="auto")
    assert encoder.precision_ == "bf16"
    monkeypatch.setattr(precision_module, "cpu_has_bf16", lambda: False)  # the worker's CPU
    worker = pickle.loads(pickle.dumps(encoder))
    assert worker.signature()["precision"] == "bf16"
    assert str(next(worker.model_.parameters()).dtype) == "torch.bfloat16"
