"""The embedding pair classifier: learns a separable toy task, out-of-fold scores, save/load."""

from __future__ import annotations

import numpy as np

from parakit.mine.baseline import EmbeddingPairClassifier, out_of_fold_proba
from parakit.schema import Pair, PairSet
from parakit.vectors.encode import TfidfEncoder


class Dense(TfidfEncoder):
    def encode(self, texts):
        return super().encode(texts).toarray()


def _pairs(n: int = 60) -> PairSet:
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma"]
    out = []
    for i in range(n):
        a = " ".join(rng.choice(words, 3))
        if i % 3 == 0:
            out.append(Pair(str(i), a, "zzz qqq", "1"))
        elif i % 3 == 1:
            out.append(Pair(str(i), a, a + " x", "3"))
        else:
            out.append(Pair(str(i), a, a, "4"))
    return PairSet(out, scheme="turku")


def test_fit_predict_oof_save_load(tmp_path):
    pairs = _pairs()
    enc = Dense().fit([t for p in pairs for t in (p.text1, p.text2)])
    clf = EmbeddingPairClassifier(enc, C=10).fit(pairs)
    assert list(clf.classes_) == ["3", "4", "neg"]
    expected = np.array([("neg", "3", "4")[i % 3] for i in range(60)])
    assert (clf.predict(pairs) == expected).mean() > 0.9
    oof = out_of_fold_proba(EmbeddingPairClassifier(enc, C=10), pairs, folds=3)
    assert oof.shape == (60, 3) and np.allclose(oof.sum(1), 1)
    neg_col = 2
    assert oof[::3, neg_col].mean() > 0.8
    folder = clf.save(tmp_path / "clf")
    again = EmbeddingPairClassifier.load(folder, encoder=enc)
    np.testing.assert_allclose(again.predict_proba(pairs), clf.predict_proba(pairs))


def test_binary_corpus_gets_binary_classes_and_paraphrase_proba():
    """On a binary corpus the paraphrase class is '1' (it used to be called 'neg')."""
    turku = _pairs()
    binary = PairSet(
        [p.replace(label="0" if p.label == "1" else "1") for p in turku], scheme="binary"
    )
    enc = Dense().fit([t for p in binary for t in (p.text1, p.text2)])
    clf = EmbeddingPairClassifier(enc, C=10).fit(binary)
    assert list(clf.classes_) == ["0", "1"]
    proba = clf.predict_proba(binary)
    np.testing.assert_allclose(clf.paraphrase_proba(binary), proba[:, 1])
    assert clf.paraphrase_proba(binary)[1::3].mean() > 0.8  # the '3' and '4' pairs


def test_turku_paraphrase_proba_is_the_loose_reading():
    pairs = _pairs()
    enc = Dense().fit([t for p in pairs for t in (p.text1, p.text2)])
    clf = EmbeddingPairClassifier(enc, C=10).fit(pairs)
    proba = clf.predict_proba(pairs)  # columns 3, 4, neg
    np.testing.assert_allclose(clf.paraphrase_proba(pairs), proba[:, 0] + proba[:, 1])
    np.testing.assert_allclose(clf.paraphrase_proba(pairs, reading="strict"), proba[:, 1])


def test_saved_baseline_reloads_its_onnx_quantisation(tmp_path, monkeypatch):
    """A baseline saved with a blockwise-int8 encoder comes back with the same backend."""
    import json

    from parakit.mine import baseline as module

    pairs = _pairs()
    enc = Dense().fit([t for p in pairs for t in (p.text1, p.text2)])
    folder = EmbeddingPairClassifier(enc, C=10).fit(pairs).save(tmp_path / "clf")
    meta = json.loads((folder / "baseline.json").read_text())
    asked = []
    for quantization, backend in (("block", "onnx-int8-block"), ("dynamic", "onnx-int8")):
        meta["encoder"] = {"encoder": "onnxruntime", "model": "m", "quantization": quantization}
        (folder / "baseline.json").write_text(json.dumps(meta))
        monkeypatch.setattr(
            "parakit.vectors.encode.load_encoder", lambda m, b: asked.append(b) or enc
        )
        module.EmbeddingPairClassifier.load(folder)
        assert asked[-1] == backend
