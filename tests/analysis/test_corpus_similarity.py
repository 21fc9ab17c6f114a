"""T12's lexical similarity is the one char n-gram cosine of parakit.text (sklearn parity)."""

from __future__ import annotations

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from parakit.analysis.corpus import lexical_similarity


def test_lexical_similarity_equals_sklearn_tfidf_char_cosine():
    a = ["The cat sat on the mat.", "Hello world", "Paraphrase corpora are fun"]
    b = ["A cat sat on a mat", "hello, World!", "corpora of paraphrases"]
    vectorizer = TfidfVectorizer(analyzer="char", ngram_range=(2, 4)).fit(a + b)
    expected = np.asarray(vectorizer.transform(a).multiply(vectorizer.transform(b)).sum(1))
    np.testing.assert_allclose(lexical_similarity(a, b), expected.ravel(), atol=1e-12)
