"""T13 on Finnish: a thesaurus induced from the corpus's label-4 pairs (issue 20, item 8)."""

from __future__ import annotations

import json

import pytest

from parakit.analysis.synonyms import (
    SynonymResource,
    induce_synonyms,
    load_synonyms,
    substitutions,
    write_thesaurus,
)
from parakit.cli import main
from parakit.errors import AnalysisError
from parakit.io import read, write
from parakit.schema import Pair, PairSet

pytest.importorskip("simplemma")

# (text1, text2, label, what the induction sees)
ROWS = [
    ("Talo on suuri.", "Talo on iso.", "4", "iso ~ suuri"),
    ("Suuri koira juoksi.", "Iso koira juoksi.", "4s", "iso ~ suuri (flag s is fine)"),
    ("Koira juoksi pihalla.", "Hauva juoksi pihalla.", "4", "hauva ~ koira, once"),
    ("Puhelin soitti.", "Kännykkä soitti.", "4<", "skipped: subsumption"),
    ("Kissa on pieni.", "Kissa on iso.", "2", "skipped: not label 4"),
    ("Hän tuli kotiin.", "Se tuli kotiin.", "4", "skipped: function words"),
    ("Vanha auto 12.", "Vanha auto 13.", "4", "skipped: numbers"),
    ("Kaunis vanha talo.", "Ruma pieni talo.", "4", "skipped: two words for two"),
    ("Talo on suuri.", "Talo on iso!", "3", "skipped: label 3 (a positive for the shares)"),
]


def _corpus() -> PairSet:
    pairs = [Pair(str(i), a, b, label=lab) for i, (a, b, lab, _) in enumerate(ROWS)]
    return PairSet(pairs, scheme="turku", name="toy", lang="fi")


def test_substitutions_of_label_4_pairs():
    assert dict(substitutions(_corpus())) == {("iso", "suuri"): 2, ("hauva", "koira"): 1}
    assert induce_synonyms(_corpus(), min_count=2).counts == {("iso", "suuri"): 2}
    resource = induce_synonyms(_corpus(), min_count=1)
    assert resource.are_synonyms("koira", "hauva") and resource.are_synonyms("suuri", "iso")
    with pytest.raises(AnalysisError, match="Turku labels"):
        substitutions(PairSet([Pair("1", "a b", "a c", "1")], scheme="binary"))
    with pytest.raises(AnalysisError, match="induced"):
        load_synonyms("induced", "fi")


def test_thesaurus_file_round_trip(tmp_path):
    path = write_thesaurus({("iso", "suuri"): 2, ("hauva", "koira"): 1}, tmp_path / "fi.tsv")
    lines = [x for x in path.read_text(encoding="utf-8").splitlines() if not x.startswith("#")]
    assert lines == ["iso\tsuuri", "hauva\tkoira"]  # most frequent first
    back = SynonymResource.from_file(path)
    assert back.are_synonyms("iso", "suuri") and back.are_synonyms("hauva", "koira")


def _shares(tmp_path, corpus, *synonyms: str) -> tuple[dict[str, float], dict[str, str]]:
    out = tmp_path / "shares.json"
    assert main(["report", "patterns", str(corpus), "--synonyms", *synonyms, "-o", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    return data["shares"], {p["id"]: p["pattern"] for p in data["pairs"]}


def test_report_patterns_uses_the_induced_thesaurus(tmp_path, capsys):
    corpus = tmp_path / "toy.jsonl"
    write(_corpus(), corpus)
    thesaurus = tmp_path / "fi-induced.tsv"
    assert main(["report", "thesaurus", str(corpus), "-o", str(thesaurus)]) == 0
    assert "1 single-word substitutions" in capsys.readouterr().out
    # 8 positives (labels 3-4): pairs 0, 1 and 8 swap suuri for iso, pair 5 differs only by
    # function words (4); the rest is "other" (koira ~ hauva was seen once only)
    from_file, patterns = _shares(tmp_path, corpus, str(thesaurus))
    assert {k for k, v in patterns.items() if v == "synonym_substitution"} == {"0", "1", "8"}
    assert from_file["synonym_substitution"] == pytest.approx(3 / 8)
    assert from_file["same_content_lemmas"] == pytest.approx(1 / 8)
    assert from_file["other"] == pytest.approx(4 / 8)
    assert _shares(tmp_path, corpus, "induced")[0] == from_file
    without, _ = _shares(tmp_path, corpus, "none")
    assert without["synonym_substitution"] == 0 and without["other"] == pytest.approx(7 / 8)
    once, patterns = _shares(tmp_path, corpus, "induced", "--min-count", "1")
    assert once["synonym_substitution"] == pytest.approx(4 / 8) and patterns["2"] != "other"
    # report corpus takes the same option
    out = tmp_path / "corpus-report"
    argv = ["report", "corpus", str(corpus), "-o", str(out), "--sample-size", "0"]
    assert main([*argv, "--synonyms", "induced"]) == 0
    summary = json.loads(out.with_suffix(".json").read_text())["corpora"][0]
    assert summary["patterns_positive"] == pytest.approx(from_file)


@pytest.mark.slow
def test_opus_parsebank(tmp_path, data_path):
    """On opus-pb-dev no substitution recurs in two label-4 pairs: the default thesaurus is empty;
    every substitution seen once (58 with Voikko, 65 before lemmatiser errors were left out)
    makes 27 of the 1676 positives pattern (5) (33 before)."""
    from parakit.analysis.verbs import finnish_analyser

    path = data_path("turku/opus-pb-dev.json")
    thesaurus = tmp_path / "opus.tsv"
    assert main(["report", "thesaurus", str(path), "-o", str(thesaurus), "--min-count", "1"]) == 0
    resource = SynonymResource.from_file(thesaurus)
    # Voikko's readings, or the shared-stem rule where Voikko is not installed
    assert len(resource) == (112 if finnish_analyser() is not None else 108)
    assert resource.are_synonyms("ajatus", "idea") and resource.are_synonyms("kertoa", "sanoa")
    assert not resource.are_synonyms("lähetti", "lähettää")  # one verb, read apart
    shares, patterns = _shares(tmp_path, path, str(thesaurus))
    assert shares["synonym_substitution"] == pytest.approx(27 / 1676)
    assert len(patterns) == 1676
    assert sum(v == "synonym_substitution" for v in patterns.values()) == 27
    assert induce_synonyms(read(path), min_count=2).counts == {}


# issue 29.13: lemmatiser errors are no synonyms. simplemma reads "halua" as the noun halu
# (partitive), "haluaa" as the verb haluta: the same verb on both sides
_INFLECTED = [
    ("En halua lähteä.", "En haluaa lähteä.", "4"),
    ("Hän ei halua tulla.", "Hän ei haluaa tulla.", "4"),
    ("Poika lähetti kirjeen.", "Poika lähettää kirjeen.", "4"),
    ("Tyttö lähetti paketin.", "Tyttö lähettää paketin.", "4"),
    ("Talo on suuri.", "Talo on iso.", "4"),
    ("Suuri koira juoksi.", "Iso koira juoksi.", "4"),
]


def _inflected_corpus() -> PairSet:
    pairs = [Pair(str(i), a, b, label=lab) for i, (a, b, lab) in enumerate(_INFLECTED)]
    return PairSet(pairs, scheme="turku", name="toy", lang="fi")


def test_inflected_forms_of_one_word_are_no_synonyms():
    """halu~haluta and lähetti~lähettää are one word read apart; iso~suuri stays."""
    assert dict(substitutions(_inflected_corpus())) == {("iso", "suuri"): 2}
    assert induce_synonyms(_inflected_corpus(), min_count=2).counts == {("iso", "suuri"): 2}


def test_inflection_check_without_voikko(monkeypatch):
    """Without Voikko (or for another language) a shared stem tells an inflection apart."""
    import parakit.analysis.verbs as verbs
    from parakit.analysis.synonyms import inflection_check

    monkeypatch.setattr(verbs, "finnish_analyser", lambda: None)
    check = inflection_check("fi")
    assert check("halua", "halu", "haluaa", "haluta")
    assert check("lähetti", "lähetti", "lähettää", "lähettää")
    assert not check("alatte", "alkaa", "aloitatte", "aloittaa")
    assert not check("suuri", "suuri", "iso", "iso")
    assert dict(substitutions(_inflected_corpus())) == {("iso", "suuri"): 2}


def test_inflection_check_with_voikko_reads_every_reading():
    from parakit.analysis.synonyms import inflection_check
    from parakit.analysis.verbs import finnish_analyser

    if finnish_analyser() is None:
        pytest.skip("Voikko is not installed here (apt-get install libvoikko1 voikko-fi)")
    check = inflection_check("fi")
    assert check("halua", "halu", "haluaa", "haluta")  # halua: halu or haluta
    assert check("kantaisi", "kantaa", "kanna", "kanna")  # kanna: a form of kantaa
    assert not check("tosiaan", "tosiaan", "todella", "todella")  # two adverbs of one root
    assert not check("sanoi", "sanoa", "kertoo", "kertoa")
