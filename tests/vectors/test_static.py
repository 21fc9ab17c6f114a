"""Static encoders (issue 28): a real Model2Vec distillation, usable wherever an encoder is,
and the gold recall that says what it keeps of its teacher."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from parakit.errors import MineError
from parakit.vectors.encode import SentenceEncoder, load_encoder
from parakit.vectors.static import (
    STATIC_FILE,
    distill_static,
    gold_recall,
    is_static_encoder,
)

pytest.importorskip("model2vec", reason="pip install 'parakit[static]' for static encoders")


class Letters:
    """Vectors (count of a, count of b, 1), normalised: neighbours computable by hand."""

    def encode(self, texts):
        v = np.array([[t.count("a"), t.count("b"), 1.0] for t in texts])
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_gold_recall_counts_both_directions_by_hand():
    # "a" -> "aa" (cos .949) beats "aaa" (.894): hit at 1; "aa" -> "aaa" (.990) beats its
    # partner "a" (.949): a miss at 1, a hit at 2; "b" <-> "bb" hit at 1 both ways: 3 of 4
    recall = gold_recall(Letters(), [("a", "aa"), ("b", "bb")], ["aaa"], ks=[1, 2])
    assert recall == {"1": 0.75, "2": 1.0}
    with pytest.raises(MineError, match="at least one gold pair"):
        gold_recall(Letters(), [], ["aaa"])


@pytest.fixture(scope="module")
def tiny_static(tiny_model, tmp_path_factory):
    folder = tmp_path_factory.mktemp("static") / "tiny-static"
    info = distill_static(tiny_model, folder, pca_dims=16)
    return folder, info


def test_distilled_folder_is_a_sentence_transformers_static_encoder(tiny_static):
    from sentence_transformers import SentenceTransformer

    folder, info = tiny_static
    assert is_static_encoder(folder)
    assert info["dim"] == 16 and info["method"] == "model2vec"
    assert json.loads((folder / STATIC_FILE).read_text())["pca_dims"] == 16
    vectors = SentenceTransformer(str(folder), device="cpu").encode(["the cat sat", "a dog ran"])
    assert vectors.shape == (2, 16)


def test_static_encoder_runs_in_fp32_whatever_the_precision(tiny_static):
    folder, _ = tiny_static
    texts = ["the cat sat", "a dog ran", "she likes fish"]
    fp32 = SentenceEncoder(folder, precision="fp32").encode(texts)
    auto = load_encoder(folder, "torch", precision="auto").encode(texts)
    np.testing.assert_array_equal(auto, fp32)  # no bf16 cast of a lookup table
    np.testing.assert_allclose(np.linalg.norm(fp32, axis=1), 1.0, rtol=1e-5)
    signature = SentenceEncoder(folder).signature()
    assert signature["static"] is True and signature["max_seq_length"] is None
    assert not is_static_encoder(folder.parent)  # no modules.json there


def test_missing_model2vec_names_the_extra(tiny_model, tmp_path, monkeypatch, capsys):
    from parakit.cli.app import main

    monkeypatch.setitem(sys.modules, "model2vec.distill", None)  # as on an install without it
    code = main(["embed", "distill-static", str(tiny_model), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code != 0
    assert "[E090]" in err and "parakit[static]" in err
    assert not (tmp_path / "out").exists()


def test_real_minilm_distillation_keeps_most_of_its_gold_recall(minilm_path, multipit, tmp_path):
    """The offline all-MiniLM-L6-v2 distilled for real; 150 MultiPIT expert paraphrase pairs
    hidden among the other sentences of the seeded 600 + 300 pair sample."""
    train, dev = multipit
    positives = [(p.text1, p.text2) for p in dev if p.label == "1"][:150]
    pool = [t for p in train for t in (p.text1, p.text2)]
    folder = tmp_path / "static-minilm"
    info = distill_static("offline-minilm", folder, pca_dims=128)
    assert info["teacher"] == "offline-minilm" and info["dim"] == 128
    assert info["vocabulary"] > 25_000  # the teacher's whole WordPiece vocabulary
    teacher = gold_recall(load_encoder(minilm_path, "torch", precision="fp32"), positives, pool)
    static = gold_recall(load_encoder(folder, "torch"), positives, pool)
    assert teacher["50"] >= 0.9
    assert static["50"] >= 0.8 * teacher["50"]
    assert static["5"] < teacher["5"]  # the price of dropping the transformer
