"""Known-answer tests of the pair features."""

from __future__ import annotations

import numpy as np
import pytest

from parakit.models import features
from parakit.models.features import (
    BinaryBow,
    BowCosine,
    WordVectors,
    edit_distance,
    embedding_pair_features,
    meteor_fmean,
    mt_features,
    sparse_pair_features,
    word_overlap_rates,
)
from parakit.text import CharNgramSimilarity


def test_word_overlap_rate_is_jaccard_of_lowercased_token_sets():
    # {the, cat, sat} vs {a, cat, sat, .}: 2 shared of 5
    assert word_overlap_rates(["The cat sat"], ["a cat sat."]).tolist() == [pytest.approx(0.4)]


def test_binary_bow_cosine_ignores_counts():
    bow = BowCosine().fit(["a a b c", "a b d"])
    # binary vectors {a,b,c} and {a,b,d}: cosine 2 / (sqrt3 * sqrt3)
    assert bow.score(["a a b c"], ["a b d"])[0] == pytest.approx(2 / 3)


def test_binary_bow_pair_features_mark_one_sided_and_shared_words():
    bow = BinaryBow().fit(["The cat sat", "a dog sat"])
    assert bow.vocabulary == ["a", "cat", "dog", "sat", "the"]
    u = bow.transform(["the cat sat sat"])  # counts ignored, unknown words ignored
    v = bow.transform(["a cat ran"])
    assert u.toarray().tolist() == [[0, 1, 0, 1, 1]]
    features = sparse_pair_features(u, v).toarray()
    # |u - v|: a, sat, the in one sentence only; u * v: cat shared
    assert features.tolist() == [[1, 0, 0, 1, 1, 0, 1, 0, 0, 0]]
    assert (sparse_pair_features(v, u).toarray() == features).all()


def test_averaged_word_vectors_are_the_mean_of_known_words_and_seeded():
    pytest.importorskip("gensim")
    texts = ["the cat sat on the mat", "a dog sat on a log", "the cat ran"] * 5
    wv = WordVectors(vector_size=8, epochs=3, seed=1).fit(texts)
    keyed = wv.vectors_
    encoded = wv.encode(["The cat sat", "zebra", "cat zebra"])
    expected = (keyed["the"] + keyed["cat"] + keyed["sat"]) / 3
    assert np.allclose(encoded[0], expected, atol=1e-6)
    assert encoded[1].tolist() == [0.0] * 8  # no known word
    assert np.allclose(encoded[2], keyed["cat"])  # unknown words do not count
    # one worker and a stable hash: the same seed gives the same vectors in any process
    again = WordVectors(vector_size=8, epochs=3, seed=1).fit(texts)
    assert np.array_equal(again.encode(["the cat sat"]), encoded[:1])
    other = WordVectors(vector_size=8, epochs=3, seed=2).fit(texts)
    assert not np.allclose(other.encode(["the cat sat"]), encoded[:1])


def test_char_ngram_tf_cosine_known_value():
    sim = CharNgramSimilarity(ngram_range=(2, 2), analyzer="char", use_idf=False).fit(
        ["abc", "abd"]
    )
    # bigrams {ab, bc} vs {ab, bd}: cosine 1/2
    assert sim.score(["abc"], ["abd"])[0] == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("a", "b", "expected"), [("kitten", "sitting", 3), ("", "abc", 3), ("flaw", "lawn", 2)]
)
def test_edit_distance(a, b, expected):
    assert edit_distance(list(a), list(b)) == expected


def test_edit_distance_dynamic_programming_without_rapidfuzz(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_rapidfuzz(name, *args, **kwargs):
        if name.startswith("rapidfuzz"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_rapidfuzz)
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance(["a", "b"], ["b"]) == 1


def test_meteor_fmean_known_value():
    # 2 matches, P = 2/3, R = 2/4: 10PR / (R + 9P) = (10/3) / (0.5 + 6)
    assert meteor_fmean(["a", "b", "c"], ["a", "b", "x", "y"]) == pytest.approx((10 / 3) / 6.5)
    assert meteor_fmean([], ["a"]) == 0.0


def test_mt_features_of_identical_and_disjoint_pairs():
    matrix, names = mt_features(
        ["the cat sat on the mat", "the cat sat on the mat"],
        ["the cat sat on the mat", "dogs bark loudly"],
    )
    same = dict(zip(names, matrix[0], strict=True))
    other = dict(zip(names, matrix[1], strict=True))
    assert same["bleu"] == pytest.approx(1.0)
    assert same["ter"] == 0.0 and same["chrf"] == pytest.approx(100.0)
    assert same["edit_distance"] == 0 and same["length_ratio"] == 1.0
    assert other["bleu_p1"] == 0.0 and other["meteor_fmean"] == 0.0
    assert other["length_ratio"] == pytest.approx(3 / 6)
    assert matrix.shape == (2, len(features.MT_FEATURE_NAMES))


def test_embedding_pair_features_are_abs_difference_and_product():
    u = np.array([[1.0, -2.0]])
    v = np.array([[3.0, 1.0]])
    assert embedding_pair_features(u, v).tolist() == [[2.0, 3.0, 3.0, -2.0]]
    assert np.array_equal(embedding_pair_features(u, v), embedding_pair_features(v, u))
    with pytest.raises(ValueError):
        embedding_pair_features(u, np.zeros((1, 3)))


def test_word_vectors_without_gensim_name_the_extra(monkeypatch):
    import sys

    from parakit.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "gensim.models", None)  # import gensim.models fails
    with pytest.raises(
        MissingExtraError, match=r"E090.*needs gensim: pip install 'parakit\[models\]'"
    ):
        WordVectors(vector_size=4, epochs=1).fit(["a b"])
