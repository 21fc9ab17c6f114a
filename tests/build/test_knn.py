"""T15 hard-negative candidates: ``mine(same_source=True)`` (the one kNN pipeline) and the
streamed sample over char n-gram bins, and ``build knn`` that chains the two."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from parakit.build.sample import balanced_sample, sample_file
from parakit.cli.build import app
from parakit.errors import ParakitError
from parakit.io import read
from parakit.mine.mining import mine
from parakit.vectors.encode import SentenceEncoder


class PositionEncoder:
    """Test double with known geometry: the sentence 'item N' sits at x = N on a line."""

    model = "position"

    def encode(self, texts):
        return np.array([[float(t.split()[1]), 0.0] for t in texts], dtype=np.float32)


def _write(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")


def _mine(tmp_path, k, chunk_size):
    return mine(
        tmp_path / "in.jsonl",
        tmp_path / "work",
        PositionEncoder(),
        output=tmp_path / "candidates.jsonl",
        k=k,
        same_source=True,
        index_kind="flat",
        metric="l2",
        chunk_size=chunk_size,
        progress=False,
    )


def test_knn_within_source_dedupes_directions_exactly(tmp_path):
    positions = {"a": [0, 1, 3, 7, 15], "b": [2, 4, 100]}
    rows = [{"text": f"item {x}", "source": s} for s in positions for x in positions[s]]
    _write(tmp_path / "in.jsonl", rows)
    result = _mine(tmp_path, k=1, chunk_size=2)
    ps = read(result.output)
    got = {frozenset((p.text1, p.text2)) for p in ps}
    # nearest neighbour of each point, within its source, as unordered pairs
    expected = {
        frozenset(("item 0", "item 1")),
        frozenset(("item 1", "item 3")),
        frozenset(("item 3", "item 1")),
        frozenset(("item 7", "item 3")),
        frozenset(("item 15", "item 7")),
        frozenset(("item 2", "item 4")),
        frozenset(("item 100", "item 4")),
    }
    assert got == expected and len(ps) == len(expected) == result.n_candidates
    assert all(p.source == ("a" if int(p.text1.split()[1]) in positions["a"] else "b") for p in ps)
    assert result.n_sentences == 8
    with pytest.raises(ParakitError, match="E801"):
        mine(tmp_path / "in.jsonl", tmp_path / "w0", PositionEncoder(), k=0, progress=False)


def test_stratified_sample_over_char_bins(tmp_path):
    rows = [{"text": f"item {i} " + "x" * (i % 7), "source": "s"} for i in range(60)]
    _write(tmp_path / "in.jsonl", rows)
    result = _mine(tmp_path, k=3, chunk_size=16)
    sample, report = sample_file(result.output, 2, "char", seed=1, chunk_size=7)
    assert sum(report.available) == result.n_candidates
    assert report.sampled == [min(2, c) for c in report.available]
    assert len(sample) == sum(report.sampled)
    for pair in sample:
        assert pair.metadata["bin"] == min(int(pair.metadata["char"] * 20), 19)
    assert sample.metadata["sampling"]["short_bins"] == [
        i for i, c in enumerate(report.available) if c < 2
    ]
    # streamed in chunks, the same draw as the in-memory sampler on the whole file
    whole, whole_report = balanced_sample(read(result.output), 2, measure="char", seed=1)
    assert [p.to_dict() for p in sample] == [p.to_dict() for p in whole]
    assert whole_report.available == report.available


def test_mean_pooled_tiny_bert_end_to_end(tmp_path):
    torch = pytest.importorskip("torch")
    from transformers import BertConfig, BertModel, BertTokenizerFast

    torch.set_num_threads(1)
    words = ["cat", "dog", "sat", "ran", "on", "the", "mat", "park", "a", "big", "small", "red"]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab))
    model_dir = tmp_path / "bert"
    BertTokenizerFast(vocab_file=str(tmp_path / "vocab.txt")).save_pretrained(model_dir)
    torch.manual_seed(0)
    BertModel(
        BertConfig(
            vocab_size=len(vocab),
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
        )
    ).save_pretrained(model_dir)
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(words, size=5)) for _ in range(40)]
    (tmp_path / "sents.txt").write_text("\n".join(lines))
    # a plain HF encoder (no modules.json): sentence-transformers wraps it with mean pooling
    # fp32: the check below is exact mean pooling (auto precision may pick bf16 autocast)
    encoder = SentenceEncoder(model_dir, batch_size=8, normalize=False, precision="fp32")
    vectors = encoder.encode(lines[:3])
    assert vectors.shape == (3, 16)
    assert type(encoder.model_[1]).__name__ == "Pooling"
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    batch = tok(lines[:3], padding=True, return_tensors="pt")
    with torch.inference_mode():
        hidden = BertModel.from_pretrained(model_dir)(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    expected = ((hidden * mask).sum(1) / mask.sum(1)).numpy()
    np.testing.assert_allclose(vectors, expected, atol=1e-5)
    out = tmp_path / "out"
    args = ["knn", str(tmp_path / "sents.txt"), "-o", str(out), "-m", str(model_dir)]
    result = CliRunner().invoke(app, [*args, "--k", "2", "--n", "3", "--chunk-size", "16"])
    assert result.exit_code == 0, result.output
    candidates, sample = read(out / "candidates.jsonl"), read(out / "sample.jsonl")
    # 40 sentences, 2 neighbours each; a pair found from both ends is kept once
    assert 40 <= len(candidates) <= 80
    assert len(sample) == sum(min(3, b["available"]) for b in sample.metadata["sampling"]["bins"])
    assert not (out / "work").exists()


def test_minilm_sentence_transformers(minilm_path, tmp_path):
    encoder = SentenceEncoder(minilm_path, normalize=True)
    vectors = encoder.encode(
        ["A man is eating food.", "A man eats a meal.", "The stock market crashed."]
    )
    assert vectors.shape == (3, 384)
    sims = vectors @ vectors.T
    assert sims[0, 1] > sims[0, 2]
