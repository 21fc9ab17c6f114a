"""The embedding pair classifier: learns a separable toy task, out-of-fold scores, save/load."""

from __future__ import annotations

import numpy as np

from parakit.mine.baseline import EmbeddingPairClassifier, out_of_fold_proba
from parakit.vectors.encode import TfidfEncoder
from parakit.schema import Pair, PairSet


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
