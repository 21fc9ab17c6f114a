"""Extraction assist: passage-pair suggestions (issue 16)."""

from __future__ import annotations

import numpy as np
import pytest

from parakit.build.suggest import (
    PairSuggester,
    Suggestion,
    _path_distance,
    document_pairs_of,
    evaluate_suggestions,
    monotone_path,
    sentence_spans,
    suggest_for_pairs,
    suggest_pairs,
    window_spans,
)
from parakit.errors import SuggestError
from parakit.schema import Document, Pair, PairSet, Span
from parakit.text.similarity import CharNgramSimilarity

DOC1 = Document("a", "Ge mig nåt fint.\nDet regnar\nute i kväll.\n- Vi går hem.\n- Nu?")
DOC2 = Document("b", "Ge mig nåt fint.\nDet regnar utomhus i kväll.\nNu går vi hem.\nOkej.")


def texts(doc: Document, spans) -> list[str]:
    return [doc.text[b:e] for b, e in spans]


def test_sentence_spans_merge_subtitle_lines_and_split_dialogue_turns():
    spans = sentence_spans(DOC1.text)
    assert texts(DOC1, spans) == [
        "Ge mig nåt fint.",
        "Det regnar\nute i kväll.",
        "- Vi går hem.",
        "- Nu?",
    ]
    assert spans[0] == (0, 16)
    assert sentence_spans("") == []
    assert sentence_spans("  one line without end  ") == [(2, 22)]


def test_window_spans():
    sentences = [(0, 3), (4, 9), (10, 12)]
    assert window_spans(sentences, max_window=3) == [
        (0, 3, 0, 1),
        (0, 9, 0, 2),
        (0, 12, 0, 3),
        (4, 9, 1, 2),
        (4, 12, 1, 3),
        (10, 12, 2, 3),
    ]
    with pytest.raises(SuggestError, match="E511"):
        window_spans(sentences, max_window=0)


def test_monotone_path_hand_computed():
    # gains (similarity - 0.1): the path (0,0) (1,1) (2,1) collects 0.8 + 0.7 + 0.6 = 2.1;
    # going on to (2,2) or (3,2) would only lose 0.1 per cell
    sim = np.array([[0.9, 0.0, 0.0], [0.0, 0.8, 0.0], [0.0, 0.7, 0.0], [0.0, 0.0, 0.0]])
    assert monotone_path(sim, gap=0.1) == [(0, 0), (1, 1), (2, 1)]
    # a local alignment: the low corner (0, 0) is not on the path
    sim = np.array([[0.0, 0.0], [0.0, 0.5]])
    assert monotone_path(sim, gap=0.1) == [(1, 1)]
    assert monotone_path(np.zeros((2, 2)), gap=0.1) == []
    assert monotone_path(np.zeros((0, 3))) == []


def test_path_distance_is_chebyshev():
    dist = _path_distance([(0, 0), (1, 1)], (3, 4))
    assert dist.tolist() == [[0, 1, 1, 2], [1, 0, 1, 2], [1, 1, 1, 2]]
    assert np.isinf(_path_distance([], (2, 2))).all()
    capped = _path_distance([(0, 0), (1, 1)], (3, 4), max_distance=1)
    assert capped.tolist() == [[0, 1, 1, np.inf], [1, 0, 1, np.inf], [1, 1, 1, np.inf]]


def test_suggest_ranks_the_aligned_paraphrases_first_and_copies_last():
    out = suggest_pairs(DOC1, DOC2, max_window=1)
    kept = [s for s in out if not s.suppressed]
    pairs = [(s.text1, s.text2) for s in kept]
    # the verbatim copy is penalised below both paraphrases
    assert set(pairs[:2]) == {
        ("Det regnar\nute i kväll.", "Det regnar utomhus i kväll."),
        ("- Vi går hem.", "Nu går vi hem."),
    }
    copies = [s for s in out if s.copy]
    assert [(s.text1, s.text2) for s in copies] == [("Ge mig nåt fint.", "Ge mig nåt fint.")]
    assert kept.index(copies[0]) > 1
    # spans are character offsets into the documents
    top = next(s for s in out if s.text1.startswith("Det regnar"))
    assert top.span1 == Span("a", 17, 40) and DOC1.text[17:40] == top.text1
    assert top.span2 == Span("b", 17, 44) and DOC2.text[17:44] == top.text2
    # the lexical similarity is the shared char n-gram TF-IDF cosine, idf from both documents
    sim = CharNgramSimilarity(ngram_range=(2, 4), use_idf=True)
    sim.fit(texts(DOC1, sentence_spans(DOC1.text)) + texts(DOC2, sentence_spans(DOC2.text)))
    assert top.lexical == pytest.approx(float(sim.score([top.text1], [top.text2])[0]))
    # on the path: prior 1, match = similarity + 0.5 * prior; the near-copy penalty rises
    # linearly from lexical 0.5 to 0.95
    assert top.prior == 1.0
    assert top.match == pytest.approx(top.similarity + 0.5)
    assert top.near_copy == pytest.approx(min(max((top.lexical - 0.5) / 0.45, 0), 1))
    assert top.score == pytest.approx(top.match - top.near_copy)
    assert copies[0].near_copy == 1.0
    assert copies[0].score == pytest.approx(copies[0].match - 1.0)


def test_nms_keeps_non_overlapping_suggestions_first():
    out = PairSuggester(max_window=2).suggest(DOC1, DOC2)
    kept = [s for s in out if not s.suppressed]
    assert out[: len(kept)] == kept  # kept ones come first
    for k, s in enumerate(kept):
        for t in kept[k + 1 :]:
            assert s.span1.end <= t.span1.begin or t.span1.end <= s.span1.begin
            assert s.span2.end <= t.span2.begin or t.span2.end <= s.span2.begin
    # without NMS the ranking is by score alone
    plain = PairSuggester(max_window=2, nms=False).suggest(DOC1, DOC2)
    assert [s.score for s in plain] == sorted((s.score for s in plain), reverse=True)
    assert not any(s.suppressed for s in plain)


def test_alignment_band_limits_candidates_and_prior():
    far = PairSuggester(max_window=1, band=0).suggest(DOC1, DOC2)
    assert all(s.prior == 1.0 for s in far)
    wide = PairSuggester(max_window=1, band=2).suggest(DOC1, DOC2)
    assert {round(s.prior, 6) for s in wide} <= {1.0, round(2 / 3, 6), round(1 / 3, 6)}
    everything = PairSuggester(max_window=1, alignment=False).suggest(DOC1, DOC2)
    assert len(everything) == 4 * 4 and all(s.prior == 1.0 for s in everything)


def test_deterministic_and_limit():
    a = [s.to_dict() for s in suggest_pairs(DOC1, DOC2)]
    b = [s.to_dict() for s in suggest_pairs(DOC1, DOC2)]
    assert a == b
    assert len(suggest_pairs(DOC1, DOC2, limit=3)) == 3
    assert suggest_pairs("", "Hej.") == []
    # plain strings become documents doc1 / doc2
    assert suggest_pairs("Hej där.", "Hej hej där.")[0].span1.doc_id == "doc1"


class _Letters:
    """A tiny deterministic encoder: normalised letter counts a-z."""

    def encode(self, texts):
        out = np.zeros((len(texts), 26), dtype=np.float32)
        for row, text in enumerate(texts):
            for ch in text.lower():
                if "a" <= ch <= "z":
                    out[row, ord(ch) - 97] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1)


def test_embedding_signal_is_a_weighted_mean():
    enc = _Letters()
    out = PairSuggester(max_window=1, encoder=enc, lexical_weight=1, embedding_weight=3).suggest(
        DOC1, DOC2
    )
    s = out[0]
    expected = float(enc.encode([s.text1])[0] @ enc.encode([s.text2])[0])
    assert s.embedding == pytest.approx(expected, abs=1e-6)
    assert s.similarity == pytest.approx((s.lexical + 3 * s.embedding) / 4, abs=1e-6)
    assert PairSuggester(encoder=enc).signature()["encoder"] == "_Letters"
    with pytest.raises(SuggestError, match="E511"):
        PairSuggester(lexical_weight=0).suggest(DOC1, DOC2)  # no encoder: nothing to score


def test_evaluate_suggestions_hand_computed():
    gold = [
        Pair("g1", "x", "y", span1=Span("a", 0, 10), span2=Span("b", 0, 10)),
        Pair("g2", "x", "y", span1=Span("a", 20, 30), span2=Span("b", 20, 30)),
        Pair("other", "x", "y"),  # no spans: ignored
    ]

    def s(b1, e1, b2, e2):
        return Suggestion(Span("a", b1, e1), Span("b", b2, e2), "", "", 0, 0, 0, None, 1, False)

    ranked = {
        ("a", "b"): [
            s(0, 4, 0, 10),  # covers 4/10 of g1's first span: not enough
            s(15, 25, 20, 30),  # covers 5/10 and 10/10 of g2: found
            s(0, 30, 0, 30),  # covers both g1 and g2
        ]
    }
    out = evaluate_suggestions(ranked, gold, budgets=[0.5, 1, 2])
    assert out["gold"] == 2
    # budget 0.5x -> 1 suggestion, 1x -> 2, 2x -> 4 (3 available)
    assert out["recall@0.5x"] == 0.0 and out["precision@0.5x"] == 0.0
    assert out["recall@1x"] == 0.5 and out["precision@1x"] == 0.5
    assert out["recall@2x"] == 1.0 and out["precision@2x"] == pytest.approx(2 / 3)
    assert out["suggestions@2x"] == 3


def test_suggest_for_pairs_reads_document_pairs_from_a_pairset():
    ps = PairSet(
        [Pair("p", "Det regnar", "Det regnar", span1=Span("a", 17, 27), span2=Span("b", 17, 27))],
        scheme="binary",
        documents=[DOC1, DOC2],
    )
    assert [(a.id, b.id) for a, b in document_pairs_of(ps)] == [("a", "b")]
    ((doc1, doc2, suggestions),) = suggest_for_pairs(ps, limit=2, max_window=1)
    assert (doc1.id, doc2.id) == ("a", "b") and len(suggestions) == 2
    with pytest.raises(SuggestError, match="E512"):
        document_pairs_of(PairSet([Pair("p", "x", "y")], scheme="binary"))


@pytest.fixture(scope="module")
def swedish(data_path):
    import parakit

    data = data_path("turku/sv-test.json")
    pairs = parakit.read(data, texts=data.with_name("sv-texts.json.gz"))
    return pairs, document_pairs_of(pairs)


def test_recall_on_two_swedish_document_pairs(swedish):
    """The CI check of issue 16 on the two smallest fully annotated document pairs (15 and 20
    gold pairs; a few seconds): at 2 suggestions per gold pair the default suggester finds all
    15 gold pairs of the first and 15 of the 20 of the second (checked by hand: e.g. gold 858
    'Vart är vi på väg?' / 'Vart ska vi?' is suggestion 7 of the first pair)."""
    pairs, doc_pairs = swedish
    chosen = {
        (a.id[:6], b.id[:6]): (a, b)
        for a, b in doc_pairs
        if (a.id[:6], b.id[:6]) in {("0e5f2d", "127666"), ("a3161c", "059c03")}
    }
    assert len(chosen) == 2
    suggester = PairSuggester()
    ranked = {(a.id, b.id): suggester.suggest(a, b) for a, b in chosen.values()}
    first = evaluate_suggestions(
        {k: v for k, v in ranked.items() if k[0].startswith("0e5f2d")}, pairs, budgets=[2]
    )
    assert first["gold"] == 15 and first["recall@2x"] == 1.0
    out = evaluate_suggestions(ranked, pairs, budgets=[2])
    assert out["gold"] == 35
    assert out["recall@2x"] == pytest.approx(30 / 35)
    top = ranked[next(k for k in ranked if k[0].startswith("0e5f2d"))]
    assert ("Vart är vi på väg?", "Vart ska vi?") in [(s.text1, s.text2) for s in top[:10]]


@pytest.mark.slow
def test_recall_on_the_swedish_test_set(swedish):
    """Issue 16's target on all 17 document pairs (1,067 gold pairs): at 2 suggestions per gold
    pair the default (lexical + alignment + near-copy + NMS) finds at least 60% (measured: see
    docs/benchmarks.md). About 20 s on an idle CPU core, minutes on a loaded one."""
    pairs, doc_pairs = swedish
    assert len(doc_pairs) == 17
    suggester = PairSuggester()
    ranked = {(a.id, b.id): suggester.suggest(a, b, limit=400) for a, b in doc_pairs}
    out = evaluate_suggestions(ranked, pairs, budgets=[2])
    assert out["gold"] == 1067
    assert out["recall@2x"] >= 0.60


def test_cli_two_text_files_and_a_corpus(tmp_path):
    from typer.testing import CliRunner

    from parakit.cli.build import app
    from parakit.io import read, write

    runner = CliRunner()
    (tmp_path / "a.txt").write_text(DOC1.text, encoding="utf-8")
    (tmp_path / "b.txt").write_text(DOC2.text, encoding="utf-8")
    out = tmp_path / "s.jsonl"
    args = ["suggest", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-o", str(out)]
    result = runner.invoke(app, [*args, "--max-window", "1"])
    assert result.exit_code == 0, result.output
    got = read(out)
    assert set(got.documents) == {"a", "b"}
    expected = [s for s in suggest_pairs(DOC1, DOC2, max_window=1) if not s.suppressed]
    assert [(p.span1, p.span2) for p in got] == [
        (Span("a", s.span1.begin, s.span1.end), Span("b", s.span2.begin, s.span2.end))
        for s in expected
    ]
    first = got.pairs[0]
    assert first.id == "a|b#1" and first.group == "a|b" and first.source == "suggest"
    assert first.metadata["rank"] == 1 and first.metadata["score"] == round(expected[0].score, 6)
    assert got.metadata["suggest"]["max_window"] == 1
    # --limit past the non-overlapping ones: the overlapping ones follow
    result = runner.invoke(app, [*args, "--max-window", "2", "--limit", "12"])
    assert result.exit_code == 0, result.output
    assert len(read(out)) == 12
    # a corpus with documents: its document pairs, evaluated against its own pairs
    corpus = PairSet(
        [
            Pair(
                "g",
                "Det regnar\nute i kväll.",
                "Det regnar utomhus i kväll.",
                span1=Span("a", 17, 40),
                span2=Span("b", 17, 44),
            )
        ],
        scheme="binary",
        documents=[DOC1, DOC2],
    )
    write(corpus, tmp_path / "gold.jsonl", format="jsonl")
    result = runner.invoke(
        app, ["suggest", str(tmp_path / "gold.jsonl"), "-o", str(out), "--evaluate"]
    )
    assert result.exit_code == 0, result.output
    assert "gold pairs: 1" in result.output
    assert "    2x   1.000" in result.output
    result = runner.invoke(app, ["suggest", "x", "y", "z", "-o", str(out)])
    assert result.exit_code == 2
