"""T12's main-verb test: Voikko for Finnish, any tagger as module:function, from the CLI."""

from __future__ import annotations

import json

import pytest

from parakit.analysis.corpus import statement_structure
from parakit.analysis.verbs import make_verb_test
from parakit.cli import main
from parakit.errors import AnalysisError
from parakit.io import write
from parakit.schema import Pair, PairSet


@pytest.fixture(scope="module")
def voikko():
    try:
        return make_verb_test("voikko", "fi")
    except AnalysisError as err:
        pytest.skip(f"Voikko is not installed here ({err}); CI installs it (.ci/run)")


def test_voikko_word_classes(voikko):
    assert voikko("Kissa juoksi pihalla.")  # juosta
    assert voikko("Hän on kotona.")  # olla, the copula, is a verb
    assert not voikko("Kaunis kesäpäivä.")
    assert not voikko("Hyvää yötä!")
    # the well-formedness rule: capital + final punctuation + a verb
    assert statement_structure("Kaunis kesäpäivä.", voikko) == "phrase"
    assert statement_structure("Kaunis kesäpäivä.") == "sentence"
    assert statement_structure("Kissa juoksi pihalla.", voikko) == "sentence"


def test_the_negation_verb_is_a_verb(voikko):
    """Issue 29.11: Voikko classes ei/en/et/emme/ette/eivät/etten as ``kieltosana``, not
    ``teonsana``; the participle after it (nähnyt) is read as an adjective alone."""
    assert statement_structure("En kai nähnyt häntä.", voikko) == "sentence"
    for sentence in (
        "En halunnut Naten kuolevan.",
        "Sam ei kuollut Detroitissa.",
        "Emme nähneet mitään.",
        "Ette tienneet sitä.",
        "He eivät tulleet.",
        "Sanoin, etten tiennyt.",
    ):
        assert voikko(sentence), sentence
    assert not voikko("Hyvin kaunis kesäpäivä.")


def test_negated_sentences_of_opus_pb_dev_are_sentences(voikko, data_path):
    """On real data: every well-formed opus-pb-dev statement whose only verb is the negation
    verb (106 statements) is a sentence, not a phrase."""
    from parakit.io import read

    pairs = read(data_path("turku/opus-pb-dev.json"))
    negation = {"ei", "en", "et", "emme", "ette", "eivät"}
    negated = [
        t
        for p in pairs
        for t in (p.text1, p.text2)
        if t[:1].isupper()
        and t.rstrip('"').endswith((".", "!", "?"))
        and negation & {w.lower() for w in t.replace(",", " ").split()}
    ]
    assert len(negated) > 100
    phrases = [t for t in negated if statement_structure(t, voikko) == "phrase"]
    assert len(phrases) <= len(negated) // 20, phrases[:10]


# statements: 1 verb sentence, 2 verbless "sentence", 3 phrase (no capital), 4 two sentences
_PAIRS = [
    ("Kissa juoksi pihalla.", "Kaunis kesäpäivä."),
    ("Hän on kotona.", "kotona hän on"),
    ("Hyvää yötä!", "Hän meni. Hän nukkui."),
]


def _corpus(tmp_path, lang="fi"):
    path = tmp_path / f"corpus-{lang}.jsonl"
    pairs = [Pair(str(i), a, b, label="4") for i, (a, b) in enumerate(_PAIRS)]
    write(PairSet(pairs, scheme="turku", name="toy", lang=lang), path)
    return path


def _structure(tmp_path, corpus, *extra):
    out = tmp_path / "report"
    argv = ["report", "corpus", str(corpus), "-o", str(out), "--sample-size", "0"]
    assert main([*argv, "--synonyms", "none", *extra]) == 0
    data = json.loads(out.with_suffix(".json").read_text())["corpora"][0]
    return data["statement_structure"], out.with_suffix(".md").read_text()


def test_corpus_report_turns_the_verb_test_on(tmp_path, voikko):
    corpus = _corpus(tmp_path)
    off, md_off = _structure(tmp_path, corpus)
    on, md_on = _structure(tmp_path, corpus, "--verb-test", "voikko")
    # 6 statements: without the verb test 4 one-sentence well-formed (incl. the two verbless),
    # 1 phrase, 1 two sentences; Voikko turns the two verbless ones into phrases
    assert off == pytest.approx({"phrase": 1 / 6, "sentence": 4 / 6, "two": 1 / 6, "more": 0})
    assert on == pytest.approx({"phrase": 3 / 6, "sentence": 2 / 6, "two": 1 / 6, "more": 0})
    assert "the verb test is off" in md_off and "contains a verb (voikko)" in md_on


def test_any_tagger_as_module_function(tmp_path):
    # a tagger that never finds a verb: every one-sentence statement is a phrase
    on, md = _structure(tmp_path, _corpus(tmp_path), "--verb-test", "operator:not_")
    assert on == pytest.approx({"phrase": 5 / 6, "sentence": 0, "two": 1 / 6, "more": 0})
    assert "contains a verb (not_)" in md


@pytest.mark.parametrize(
    ("spec", "lang", "code"),
    [("voikko", "sv", "E1021"), ("no_such_module_x:f", "fi", "E1020"), ("bogus", "fi", "E1020")],
)
def test_bad_verb_tests(tmp_path, capsys, spec, lang, code):
    out = tmp_path / "r"
    argv = ["report", "corpus", str(_corpus(tmp_path, lang)), "-o", str(out), "--verb-test", spec]
    assert main(argv) == 2
    assert code in capsys.readouterr().err
