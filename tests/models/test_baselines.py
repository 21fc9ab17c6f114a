"""Baselines and the common classifier API: training on real data, save/load, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.base import clone

from parakit.errors import DataFormatError, ModelError
from parakit.models.base import MODEL_FILE, PairClassifier, available_models, load_model, make_model
from parakit.models.baselines import WORClassifier, best_threshold
from parakit.schema import Pair, PairSet


def majority_rate(pairs: PairSet) -> float:
    counts = pairs.label_counts()
    return max(counts.values()) / len(pairs)


def test_best_threshold_known_answers():
    scores = np.array([0.1, 0.4, 0.6, 0.9])
    assert best_threshold(scores, np.array([0, 0, 1, 1])) == (0.5, 1.0)
    # one positive below a negative: accuracy 3/4 at 0.75 or at 0.25; F1 prefers recall
    t, acc = best_threshold(scores, np.array([0, 1, 0, 1]), "accuracy")
    assert acc == 0.75
    t, f1 = best_threshold(scores, np.array([0, 1, 0, 1]), "f1")
    assert t == pytest.approx(0.25) and f1 == pytest.approx(0.8)
    with pytest.raises(ModelError, match="E712"):
        best_threshold(scores, np.array([0, 1, 0, 1]), "auc")


def test_registry_lists_every_model_type():
    assert {
        "wor",
        "tfidf",
        "bow",
        "bow-cosine",
        "word-vectors",
        "mt-features",
        "embedding-lr",
        "cross-encoder",
        "multihead",
        "multiclass",
    } <= set(available_models())
    with pytest.raises(ModelError, match="E711"):
        make_model("svm")
    with pytest.raises(ModelError, match="E712"):
        make_model("wor", threshold=0.3)


@pytest.mark.parametrize("name", ["wor", "tfidf", "bow", "bow-cosine", "mt-features"])
def test_baseline_beats_majority_on_multipit_and_reloads(name, multipit, tmp_path):
    train, dev = multipit
    if name == "mt-features":  # sentence-level sacrebleu is the slow part: fewer pairs
        train, dev = train[:300], dev[:150]
        model = make_model(name, n_estimators=100).fit(train)
    else:
        model = make_model(name).fit(train)
    assert model.score(dev) > majority_rate(dev)
    proba = model.predict_proba(dev)
    assert proba.shape == (len(dev), 2) and np.allclose(proba.sum(axis=1), 1.0)
    predicted = model.predict(dev)
    # predict agrees with the probabilities
    assert list(predicted) == list(model.classes_[np.argmax(proba, axis=1)])
    model.save(tmp_path / name)
    again = PairClassifier.load(tmp_path / name)
    assert type(again) is type(model)
    assert list(again.predict(dev)) == list(predicted)
    assert np.array_equal(again.predict_proba(dev), proba)


def test_bow_classifier_learns_from_one_sided_and_shared_words(tmp_path):
    # paraphrases share their words; non-paraphrases share none
    texts1 = ["a b", "c d", "e f", "a b", "c d", "e f"]
    texts2 = ["a b", "c d", "e f", "c d", "e f", "a b"]
    labels = [1, 1, 1, 0, 0, 0]
    model = make_model("bow", C=10.0).fit(texts1, texts2, labels)
    assert model.vectors_.vocabulary == ["a", "b", "c", "d", "e", "f"]
    # [|u - v| over a..f, u * v over a..f] of ("a b", "a c")
    from parakit.models.base import as_pair_input

    features = model._pair_features(as_pair_input(["a b"], ["a c"])).toarray()
    assert features.tolist() == [[0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0]]
    assert model.predict(["b a", "a b"], ["a b", "e f"]).tolist() == [1, 0]
    model.save(tmp_path / "bow")
    again = load_model(tmp_path / "bow")
    assert np.array_equal(
        again.predict_proba(["a c"], ["c a"]), model.predict_proba(["a c"], ["c a"])
    )


def test_word_vector_classifier_uses_an_extra_corpus(tmp_path):
    pytest.importorskip("gensim")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("zebra quagga okapi\n" * 3 + "\n", encoding="utf-8")
    texts1 = ["a cat sat", "the dog ran", "a cat sat", "the dog ran"]
    texts2 = ["a cat sat", "the dog ran", "the dog ran", "a cat sat"]
    model = make_model("word-vectors", corpus=str(corpus), vector_size=8, epochs=5)
    model.fit(texts1, texts2, [1, 1, 0, 0])
    assert "okapi" in model.vectors_.vectors_.key_to_index
    proba = model.predict_proba(["a cat sat", "a cat sat"], ["a cat sat", "the dog ran"])
    assert proba.shape == (2, 2) and np.allclose(proba.sum(axis=1), 1.0)
    model.save(tmp_path / "wv")
    again = load_model(tmp_path / "wv")
    assert np.array_equal(
        again.predict_proba(["a cat sat", "a cat sat"], ["a cat sat", "the dog ran"]), proba
    )
    with pytest.raises(DataFormatError, match="E103"):
        make_model("word-vectors", corpus=str(tmp_path / "missing.txt")).fit(
            texts1, texts2, [1, 1, 0, 0]
        )


def test_embedding_classifier_with_minilm(multipit, minilm_path, tmp_path):
    train, dev = multipit
    model = make_model("embedding-lr", model_name_or_path=str(minilm_path), C=10.0).fit(train[:60])
    proba = model.predict_proba(dev[:40])
    truth = np.array([p.label for p in dev[:40]], dtype=object)
    assert np.mean(model.classes_[proba.argmax(axis=1)] == truth) > majority_rate(dev[:40]) - 0.1
    model.save(tmp_path / "emb")
    again = load_model(tmp_path / "emb")
    assert np.allclose(again.predict_proba(dev[:40]), proba, atol=1e-6)


def test_embedding_classifier_with_missing_encoder_fails_clearly(multipit, tmp_path):
    model = make_model("embedding-lr", model_name_or_path=str(tmp_path / "no-such-model"))
    with pytest.raises(ModelError, match="E713"):
        model.fit(multipit[0][:20])


def test_text_columns_and_int_labels_round_trip(tmp_path):
    model = WORClassifier().fit(
        ["a cat sat", "dogs bark", "we eat", "a red car"],
        ["the cat sat", "it rains", "they sleep", "the red car"],
        [1, 0, 0, 1],
    )
    predicted = model.predict(["a dog ran"], ["the dog ran"])
    assert predicted.tolist() == [1] and isinstance(predicted[0], (int, np.integer))
    model.save(tmp_path / "m")
    assert load_model(tmp_path / "m").predict(["a dog ran"], ["the dog ran"]).tolist() == [1]
    assert model.paraphrase_proba(["x y"], ["x y"])[0] > 0.5


def test_clone_gives_an_unfitted_copy_with_the_same_params():
    model = make_model("tfidf", ngram_range=(1, 3), criterion="f1")
    copy = clone(model)
    assert copy.get_params() == model.get_params() and not hasattr(copy, "classes_")


def test_empty_text_names_the_pair():
    pairs = PairSet([Pair("ok", "a b", "a c", "1"), Pair("bad", "x", "  ", "0")])
    with pytest.raises(ModelError, match=r"E701.*'bad'.*text2"):
        WORClassifier().fit(pairs)


def test_missing_label_and_single_class_and_multiclass_errors():
    with pytest.raises(ModelError, match=r"E702.*'p2'"):
        WORClassifier().fit(PairSet([Pair("p1", "a", "b", "1"), Pair("p2", "a", "c")]))
    with pytest.raises(ModelError, match="E703"):
        WORClassifier().fit(["a", "b"], ["a", "c"], ["1", "1"])
    with pytest.raises(ModelError, match=r"E703.*--binary"):
        WORClassifier().fit(["a", "b", "c"], ["a", "c", "d"], ["2", "3", "4"])
    with pytest.raises(ModelError, match="E706"):
        WORClassifier().fit(["a", "b"], ["a"], [1, 0])
    with pytest.raises(ModelError, match="E705"):
        WORClassifier().predict(["a"], ["b"])


def test_unknown_dev_label_is_rejected():
    with pytest.raises(ModelError, match="E704"):
        make_model("mt-features", n_estimators=5).fit(
            ["a b", "c d"], ["a b", "e f"], ["1", "0"], eval_set=(["a"], ["b"], ["2"])
        )


def test_a_folder_that_is_not_a_model(tmp_path):
    with pytest.raises(ModelError, match="E710"):
        load_model(tmp_path)
    (tmp_path / MODEL_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelError, match="E710"):
        load_model(tmp_path)
    (tmp_path / MODEL_FILE).write_text(json.dumps({"model_type": "nope"}), encoding="utf-8")
    with pytest.raises(ModelError, match="E711"):
        load_model(tmp_path)


def test_loading_through_the_wrong_class_is_refused(tmp_path):
    WORClassifier().fit(["a b", "c d"], ["a b", "e f"], [1, 0]).save(tmp_path / "w")
    from parakit.models.baselines import MTFeatureClassifier

    with pytest.raises(ModelError, match="E711"):
        MTFeatureClassifier.load(tmp_path / "w")


def test_label_pairs_puts_the_predictions_in_metadata(multipit):
    # what identify predict writes, from the library: labels, gold kept, probabilities
    train, dev = multipit
    model = make_model("tfidf").fit(train)
    sample = dev[:20]
    labelled = model.label_pairs(sample)
    assert [p.id for p in labelled] == [p.id for p in sample] and labelled.scheme.name == "binary"
    assert [p.label for p in labelled] == [str(v) for v in model.predict(sample)]
    assert [p.metadata["gold_label"] for p in labelled] == [p.label for p in sample]
    proba, para = model.predict_proba(sample), model.paraphrase_proba(sample)
    first = labelled[0].metadata["prediction"]
    assert first["proba"] == {"0": round(proba[0, 0], 6), "1": round(proba[0, 1], 6)}
    assert [p.metadata["prediction"]["p_paraphrase"] for p in labelled] == [
        round(float(v), 6) for v in para
    ]
