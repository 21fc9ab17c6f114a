import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from parakit.build.align import DocumentAligner, document_pairs_to_pairset
from parakit.build.documents import SkipCounter, read_documents
from parakit.errors import DataFormatError, ParakitError
from parakit.io import read, write
from parakit.schema import Document

DOCS = [
    Document("a", "The committee approved the new budget on Tuesday evening."),
    Document("b", "On Tuesday evening the committee approved a new budget."),
    Document("c", "Heavy snow closed several roads in the north."),
    Document("d", "The committee approved the new budget on Tuesday evening."),
]


def test_similarity_is_sklearn_tfidf_char_wb_4gram_cosine():
    texts = [d.text for d in DOCS]
    aligner = DocumentAligner().fit(texts)
    vec = TfidfVectorizer(
        analyzer="char_wb", ngram_range=(4, 4), sublinear_tf=True, max_features=200_000
    ).fit(texts)
    m = vec.transform(texts).toarray()
    expected = m[0] @ m[1] / (np.linalg.norm(m[0]) * np.linalg.norm(m[1]))
    got = aligner.similarity([texts[0]], [texts[1]])[0]
    assert got == pytest.approx(expected, abs=1e-6)
    assert aligner.similarity([texts[0]], [texts[3]])[0] == pytest.approx(1.0, abs=1e-6)


def test_band_drops_identical_and_unrelated_documents():
    aligner = DocumentAligner(low=0.2, high=0.95)
    pairs = aligner.align(DOCS)
    ids = {(p.doc1.id, p.doc2.id) for p in pairs}
    assert ids == {("a", "b"), ("b", "d")}  # a/d identical (1.0), c unrelated
    assert all(0.2 <= p.similarity <= 0.95 for p in pairs)


def test_key_restricts_comparisons_and_bad_band_is_rejected():
    docs = [Document(d.id, d.text, {"site": "x" if d.id in "ab" else "y"}) for d in DOCS]
    pairs = DocumentAligner(low=0.0, high=0.99).align(docs, key=lambda d: d.metadata["site"])
    assert {(p.doc1.id, p.doc2.id) for p in pairs} == {("a", "b"), ("c", "d")}
    with pytest.raises(ParakitError, match="E500"):
        DocumentAligner(low=0.8, high=0.2).fit(["x y z"])


def test_empty_documents_are_skipped_with_a_count(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(
        '{"id": "a", "text": "one two three four"}\n{"id": "b", "text": "  "}\n'
        '{"id": "c", "text": "one two three five"}\n'
    )
    skips = SkipCounter()
    docs = read_documents(path, skips=skips)
    assert [d.id for d in docs] == ["a", "c"] and skips["empty-document"] == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a"}\n')
    with pytest.raises(DataFormatError, match=r"bad.jsonl, line 1, field 'text'"):
        read_documents(bad)


def test_document_pairs_round_trip_with_whole_document_spans(tmp_path):
    pairs = DocumentAligner(low=0.2, high=0.95).align(DOCS)
    ps = document_pairs_to_pairset(pairs, source="test")
    out = tmp_path / "pairs.jsonl"
    write(ps, out)
    back = read(out)
    assert len(back) == 2
    for pair in back:
        doc1 = back.documents[pair.span1.doc_id]
        assert pair.span1.begin == 0 and pair.span1.end == len(doc1.text)
        assert pair.text1 == doc1.text and pair.source == "test"
        assert 0.2 <= pair.metadata["similarity"] <= 0.95


def test_identical_documents_stay_inside_the_default_band():
    # float32 TF-IDF rows: the self-cosine of this text sums to 1.0000001; the default band
    # [0, 1] keeps every pair, so two copies of a text must be paired (and score 1.0)
    docs = [Document("a", "the cat sat away"), Document("b", "the cat sat away")]
    aligner = DocumentAligner()
    pairs = aligner.align(docs)
    assert [(p.doc1.id, p.doc2.id, p.similarity) for p in pairs] == [("a", "b", 1.0)]
    assert aligner.similarity(["the cat sat away"], ["the cat sat away"]).tolist() == [1.0]
