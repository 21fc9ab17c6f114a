"""The embedding classifier as the mining / tiles baseline: the Turku three-class target,
out-of-fold scores, P(paraphrase) by the scheme, one save format (``parakit_model.json``)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from parakit.errors import ModelError, ParakitFutureWarning
from parakit.mine.rerank import load_classifier, paraphrase_proba, tile_confidences
from parakit.models.base import MODEL_FILE, load_model, make_model
from parakit.models.baselines import EmbeddingClassifier, out_of_fold_proba
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
            out.append(Pair(str(i), a, a, "4<"))
    return PairSet(out, scheme="turku")


def _encoder(pairs: PairSet) -> Dense:
    return Dense().fit([t for p in pairs for t in (p.text1, p.text2)])


def test_turku3_classes_fit_and_out_of_fold():
    pairs = _pairs()
    extra = [Pair("skip", "a b", "c d", "x"), Pair("none", "a b", "c d")]
    with_skips = PairSet([*pairs, *extra], scheme="turku")
    clf = EmbeddingClassifier(_encoder(pairs), "turku3", C=10).fit(with_skips)
    assert list(clf.classes_) == ["3", "4", "neg"]  # x and the unlabelled pair left out
    expected = np.array([("neg", "3", "4")[i % 3] for i in range(60)])
    assert (clf.predict(pairs) == expected).mean() > 0.9
    oof = out_of_fold_proba(EmbeddingClassifier(_encoder(pairs), "turku3", C=10), with_skips, 3)
    assert oof.shape == (62, 3) and np.allclose(oof[:60].sum(1), 1)
    assert np.isnan(oof[60:]).all()  # never trained on, never scored
    assert oof[:60:3, 2].mean() > 0.8  # the label-1 pairs: 'neg' column
    with pytest.raises(ModelError, match="E712"):
        EmbeddingClassifier(_encoder(pairs), "turku4").fit(pairs)
    # what mining's job.json records: the same fit gives the same signature, a refit another
    again = EmbeddingClassifier(_encoder(pairs), "turku3", C=10).fit(with_skips)
    assert again.signature()["weights"] == clf.signature()["weights"]
    other = EmbeddingClassifier(_encoder(pairs), "turku3", C=0.1).fit(with_skips)
    assert other.signature()["weights"] != clf.signature()["weights"]


def test_turku_paraphrase_proba_is_the_scheme_reading():
    pairs = _pairs()
    clf = EmbeddingClassifier(_encoder(pairs), "turku3", C=10).fit(pairs)
    proba = clf.predict_proba(pairs)  # columns 3, 4, neg
    np.testing.assert_allclose(paraphrase_proba(clf, pairs), proba[:, 0] + proba[:, 1])
    np.testing.assert_allclose(clf.paraphrase_proba(pairs, reading="strict"), proba[:, 1])
    neg, four = tile_confidences(clf, pairs)
    np.testing.assert_allclose(neg, proba[:, 2], atol=1e-6)
    np.testing.assert_allclose(four, proba[:, 1], atol=1e-6)


def test_binary_labels_get_binary_classes():
    turku = _pairs()
    binary = turku.to_binary()
    clf = EmbeddingClassifier(_encoder(binary), C=10).fit(binary)
    assert list(clf.classes_) == ["0", "1"]
    proba = clf.predict_proba(binary)
    np.testing.assert_allclose(clf.paraphrase_proba(binary), proba[:, 1])
    assert clf.paraphrase_proba(binary)[1::3].mean() > 0.8  # the '3' and '4' pairs


def test_one_save_format_for_the_baseline(minilm_path, tmp_path):
    """Saved as every classifier (parakit_model.json), loaded by mining's load_classifier."""
    pairs = _pairs(30)
    clf = EmbeddingClassifier(str(minilm_path), "turku3", C=10).fit(pairs)
    folder = clf.save(tmp_path / "clf")
    meta = json.loads((folder / MODEL_FILE).read_text())
    assert meta["model_type"] == "embedding-lr" and meta["params"]["target"] == "turku3"
    assert meta["scheme"]["name"] == "turku" and meta["classes"] == ["3", "4", "neg"]
    again = load_classifier(folder)
    np.testing.assert_allclose(again.predict_proba(pairs), clf.predict_proba(pairs), atol=1e-6)
    np.testing.assert_allclose(
        paraphrase_proba(again, pairs), paraphrase_proba(clf, pairs), atol=1e-6
    )
    with pytest.raises(ModelError, match="E712"):  # an encoder object cannot be saved
        EmbeddingClassifier(_encoder(pairs), "turku3").fit(pairs).save(tmp_path / "obj")


def test_encoder_is_read_as_model_name_or_path_with_a_warning():
    """``encoder`` (the name before the one vocabulary) given to make_model or set_params is
    ``model_name_or_path``, with a FutureWarning naming it; it gives the same model."""
    pairs = _pairs().to_binary()
    encoder = _encoder(pairs)
    with pytest.warns(ParakitFutureWarning, match=r"encoder= is now called model_name_or_path="):
        old = make_model("embedding-lr", encoder=encoder, C=10)
    assert issubclass(ParakitFutureWarning, FutureWarning)
    assert old.get_params()["model_name_or_path"] is encoder and "encoder" not in old.get_params()
    new = make_model("embedding-lr", model_name_or_path=encoder, C=10)
    np.testing.assert_array_equal(
        old.fit(pairs).predict_proba(pairs), new.fit(pairs).predict_proba(pairs)
    )
    other = _encoder(_pairs(30))
    with pytest.warns(ParakitFutureWarning, match="model_name_or_path="):
        assert new.set_params(encoder=other).model_name_or_path is other
    with pytest.raises(ModelError, match=r"E712.*give model_name_or_path= only"):
        make_model("embedding-lr", encoder=encoder, model_name_or_path=encoder)
    # a name that is no parameter, old or new, is refused as before
    with pytest.raises(ModelError, match=r"E712.*unknown hyperparameter.*'encoders'"):
        make_model("embedding-lr", encoders=encoder)
    with pytest.raises(ModelError, match=r"E712.*unknown hyperparameter.*'encoder'"):
        make_model("wor", encoder=encoder)  # wor has no model_name_or_path either


def test_a_folder_saved_with_encoder_loads(tiny_model, tmp_path):
    """A folder whose parakit_model.json names the encoder ``encoder`` (as saved before the
    rename) loads, without a warning, and predicts what it did."""
    pairs = _pairs(30).to_binary()
    clf = EmbeddingClassifier(str(tiny_model), C=10).fit(pairs)
    folder = clf.save(tmp_path / "clf")
    meta = json.loads((folder / MODEL_FILE).read_text())
    params = meta["params"]
    params["encoder"] = params.pop("model_name_or_path")
    (folder / MODEL_FILE).write_text(json.dumps(meta))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ParakitFutureWarning)
        again = load_model(folder)
    assert again.get_params() == clf.get_params()
    assert again.model_name_or_path == str(tiny_model)
    np.testing.assert_allclose(again.predict_proba(pairs), clf.predict_proba(pairs), atol=1e-6)
