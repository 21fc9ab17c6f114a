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


def test_onnx_fp32_and_int8_agree_with_sentence_transformers(tmp_path, tiny_model):
    reference = SentenceEncoder(tiny_model, precision="fp32").encode(TEXTS)
    fp32 = OnnxEncoder(tiny_model, quantize=False, cache_dir=tmp_path, batch_size=2)
    out = fp32.encode(TEXTS)  # batches of 2 over length-sorted texts: padding must not leak
    np.testing.assert_allclose(out, reference, atol=1e-4)
    int8 = OnnxEncoder(tiny_model, quantize=True, cache_dir=tmp_path).encode(TEXTS)
    cosine = (int8 * reference).sum(axis=1)
    assert cosine.min() > 0.95
    assert np.allclose(np.linalg.norm(int8, axis=1), 1, atol=1e-5)
    assert len(list(tmp_path.rglob("model-int8-pc.onnx"))) == 1
    # blockwise int8 (MatMulNBits, blocks of 32 weights and activations)
    pytest.importorskip("onnx_ir")
    block = load_encoder(tiny_model, "onnx-int8-block", cache_dir=tmp_path)
    vectors = block.encode(TEXTS)
    block_cosine = (vectors * reference).sum(axis=1)
    assert block_cosine.min() > 0.99
    assert block.signature()["quantization"] == "block"
    assert len(list(tmp_path.rglob("model-int8-block32.onnx"))) == 1
    with pytest.raises(MineError, match="onnx-int8-block"):
        load_encoder(tiny_model, "onnx-int4")


def test_bf16_autocast_follows_the_cpu_and_keeps_the_neighbours(tiny_model, monkeypatch):
    from parakit.vectors import precision

    fp32 = SentenceEncoder(tiny_model, precision="fp32").encode(TEXTS)
    bf16 = SentenceEncoder(tiny_model, precision="bf16").encode(TEXTS)
    assert bf16.dtype == np.float32 and np.allclose(np.linalg.norm(bf16, axis=1), 1, atol=1e-5)
    # bf16 keeps 8 bits of mantissa: close to fp32 but not equal (the autocast really ran)
    cosine = (bf16 * fp32).sum(axis=1)
    assert cosine.min() > 0.99 and not np.array_equal(bf16, fp32)
    assert np.array_equal((bf16 @ bf16.T).argmax(1), (fp32 @ fp32.T).argmax(1))
    # auto is bf16 exactly where the CPU has bf16 matrix instructions
    for has_bf16, expected in ((True, "bf16"), (False, "fp32")):
        monkeypatch.setattr(precision, "cpu_has_bf16", lambda has=has_bf16: has)
        assert precision.resolve_precision("auto", "cpu") == expected
        encoder = SentenceEncoder(tiny_model)
        assert encoder.signature().get("precision", "fp32") == expected
    assert precision.resolve_precision("fp32", "cpu") == "fp32"
    with pytest.raises(MineError, match="E808"):
        precision.resolve_precision("fp16", "cpu")
    with pytest.raises(MineError, match="E808"):
        SentenceEncoder(tiny_model, precision="int4")
    with pytest.raises(MineError, match="E808"):
        load_encoder(tiny_model, "onnx", precision="bf16")


def test_cpu_bf16_detection_reads_the_flags():
    from parakit.vectors import precision

    flags = precision.cpu_flags()
    torch_says = precision.cpu_has_bf16()
    if flags:  # Linux: torch's cpuinfo probe and /proc/cpuinfo agree
        assert torch_says == any(f in flags for f in ("amx_bf16", "avx512_bf16"))


def test_tfidf_char_ngrams_and_errors():
    enc = TfidfEncoder(ngram_range=(2, 3)).fit(["abc", "abd"])
    vectors = enc.encode(["abc", "abd"]).toarray()
    # char 2-3-grams: abc -> ab, bc, abc ; abd -> ab, bd, abd ; only "ab" shared
    idf_ab, idf_other = 1.0, 1 + np.log(3 / 2)
    expected = idf_ab**2 / (idf_ab**2 + 2 * idf_other**2)
    assert vectors[0] @ vectors[1] == pytest.approx(expected)
    with pytest.raises(MineError, match="not fitted"):
        TfidfEncoder().encode(["x"])
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
