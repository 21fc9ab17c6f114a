"""Lexical similarity: hand-computed answers and agreement with scikit-learn on real data."""

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from parakit.errors import ParakitError
from parakit.io import read
from parakit.text import (
    CharNgramSimilarity,
    char_ngram_cosine,
    similarity_bins,
    word_overlap_rate,
    word_overlap_rates,
)


def test_word_overlap_rate_hand_computed():
    # {the, cat, sat} vs {the, cat, slept}: 2 shared of 4
    assert word_overlap_rate("the cat sat", "the cat slept") == 0.5
    # punctuation is a token: {a, b, .} vs {a, b}: 2 of 3
    assert word_overlap_rate("a b.", "a b") == pytest.approx(2 / 3)
    assert word_overlap_rate("", "") == 0.0
    assert word_overlap_rate(["x", "y"], ["y", "z"]) == pytest.approx(1 / 3)
    # duplicates do not count twice (sets)
    assert word_overlap_rate("a a a b", "a b b") == 1.0


def test_word_overlap_rates_japanese_uses_a_morphological_analyser():
    pytest.importorskip("fugashi")
    # 雨/が/降っ/た/。 vs 雨/が/止ん/だ/。 : {雨, が, 。} shared of 7 types
    rates = word_overlap_rates(["雨が降った。"], ["雨が止んだ。"], lang="ja")
    assert rates[0] == pytest.approx(3 / 7)
    assert word_overlap_rates(["雨 が"], ["雨 だ"], method="whitespace")[0] == pytest.approx(1 / 3)


def test_char_ngram_cosine_hand_computed():
    # " night " and " nacht " have 15 distinct 2-4-grams each, 4 shared: " n", "ht", "t ", "ht "
    assert char_ngram_cosine(["night"], ["nacht"])[0] == pytest.approx(4 / 15)
    # char analyzer, bigrams: "abab" -> ab:2, ba:1 ; "ab" -> ab:1 ; cos = 2/sqrt(5)
    sim = CharNgramSimilarity(ngram_range=(2, 2), analyzer="char")
    assert sim.score(["abab"], ["ab"])[0] == pytest.approx(2 / np.sqrt(5))
    assert sim.score([""], ["ab"])[0] == 0.0


@pytest.mark.parametrize(
    ("analyzer", "ngram_range", "use_idf", "sublinear"),
    [
        ("char_wb", (2, 4), False, False),
        ("char", (2, 4), False, False),
        ("char_wb", (4, 4), True, True),
        ("char", (2, 3), True, False),
        ("char_wb", (5, 6), True, False),
        ("char_wb", (1, 3), False, True),
    ],
)
def test_char_ngram_cosine_equals_scikit_learn(
    data_path, analyzer, ngram_range, use_idf, sublinear
):
    texts1, texts2 = read(data_path("multipit/expert-val.csv")).texts()
    texts1 = [*texts1, "", "a b c", "  spaced\tout\n text "]
    texts2 = [*texts2, "x", "a", "spaced out text"]
    vectorizer = TfidfVectorizer(
        analyzer=analyzer, ngram_range=ngram_range, use_idf=use_idf, sublinear_tf=sublinear
    )
    matrix = vectorizer.fit_transform(texts1 + texts2)
    expected = np.asarray(matrix[: len(texts1)].multiply(matrix[len(texts1) :]).sum(1)).ravel()
    sim = CharNgramSimilarity(
        ngram_range=ngram_range,
        analyzer=analyzer,
        use_idf=use_idf,
        sublinear_tf=sublinear,
        chunk_size=97,
    )
    if use_idf:
        sim.fit(texts1 + texts2)
    np.testing.assert_allclose(sim.score(texts1, texts2), expected, atol=1e-12)


def test_idf_needs_fit_and_unseen_ngrams_have_no_weight():
    sim = CharNgramSimilarity(use_idf=True)
    with pytest.raises(ParakitError, match="needs fit"):
        sim.score(["a"], ["a"])
    sim.fit(["abc"])
    assert sim.score(["zzz"], ["zzz"])[0] == 0.0  # no known n-gram: zero vector
    with pytest.raises(ParakitError, match="differ in length"):
        sim.score(["a"], [])
    with pytest.raises(ParakitError, match="ngram_range"):
        CharNgramSimilarity(ngram_range=(3, 2)).score(["a"], ["b"])


def test_similarity_bins():
    values = np.array([0.0, 0.049, 0.05, 0.5, 0.999, 1.0])
    assert similarity_bins(values, 20).tolist() == [0, 0, 1, 10, 19, 19]
    assert similarity_bins(np.array([0.0, 1.0]), 11).tolist() == [0, 10]
    # a value on an inner edge starts its bin (0.3 / 0.1 is 2.9999999999999996)
    assert similarity_bins(np.array([0.3, 0.05, 0.15, 0.35]), 10).tolist() == [3, 0, 1, 3]
    assert similarity_bins(np.array([0.05, 0.15, 0.35]), 20).tolist() == [1, 3, 7]


def test_char_ngram_vectorizer_agrees_with_the_pair_scorer():
    """The vectors of alignment, negatives and the TF-IDF encoder and the aligned-pair scorer
    are one measure: their row cosines agree."""
    from parakit.text.similarity import char_ngram_vectorizer

    texts1 = ["The cat sat on the mat.", "Stocks fell sharply", "a b c"]
    texts2 = ["A cat was sitting on the mat", "Shares dropped a lot", "c b a"]
    vectors = char_ngram_vectorizer((2, 4)).fit(texts1 + texts2)
    assert vectors.transform(texts1).dtype == np.float32
    cosine = np.asarray(vectors.transform(texts1).multiply(vectors.transform(texts2)).sum(1))
    sim = CharNgramSimilarity(ngram_range=(2, 4), use_idf=True).fit(texts1 + texts2)
    np.testing.assert_allclose(cosine.ravel(), sim.score(texts1, texts2), atol=1e-6)
    with pytest.raises(ParakitError, match="E303"):
        char_ngram_vectorizer(analyzer="word")
