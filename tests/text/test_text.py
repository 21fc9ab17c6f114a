"""Tokenisation, normalisation, sentence splitting and BLEU."""

import pytest
import sacrebleu

from parakit.errors import ParakitError
from parakit.text import (
    corpus_bleu,
    dedup_key,
    normalize,
    sentence_bleu,
    split_sentences,
    tokenize,
)


def test_regex_tokenizer():
    assert tokenize("It's 3.5 km—far, isn't it?") == [
        "It's",
        "3",
        ".",
        "5",
        "km",
        "—",
        "far",
        ",",
        "isn't",
        "it",
        "?",
    ]
    assert tokenize("Hyvää huomenta!", lowercase=True) == ["hyvää", "huomenta", "!"]


def test_japanese_tokenizer():
    pytest.importorskip("fugashi")
    assert tokenize("雨が降った。", lang="ja") == ["雨", "が", "降っ", "た", "。"]
    with pytest.raises(ParakitError, match="unknown tokenisation method"):
        tokenize("x", method="bpe")


def test_normalize_and_dedup_key():
    assert normalize("Ｆｕｌｌ\u3000width") == "Full width"
    assert dedup_key("Wow!!  This is GREAT...") == dedup_key("wow this is great")


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        (
            "Mr. Smith arrived. He sat down! Did he? Yes.",
            None,
            ["Mr. Smith arrived.", "He sat down!", "Did he?", "Yes."],
        ),
        (
            "Esim. tämä on hyvä. Toinen lause alkaa tästä.",
            "fi",
            ["Esim. tämä on hyvä.", "Toinen lause alkaa tästä."],
        ),
        ('He said "Stop." Then he left.', None, ['He said "Stop."', "Then he left."]),
        (
            "J. R. R. Tolkien wrote it. It sold well.",
            None,
            ["J. R. R. Tolkien wrote it.", "It sold well."],
        ),
        ("version 3.5 is out. ok", None, ["version 3.5 is out. ok"]),
        ("雨が降った。傘を持っていた！", "ja", ["雨が降った。", "傘を持っていた！"]),
        ("", None, []),
    ],
)
def test_split_sentences(text, lang, expected):
    assert split_sentences(text, lang=lang) == expected


def test_sentence_bleu_matches_sacrebleu():
    hyp, ref = "the cat is on the mat", "the cat sat on the mat"
    assert sentence_bleu(hyp, ref) == pytest.approx(sacrebleu.sentence_bleu(hyp, [ref]).score)
    assert sentence_bleu(ref, [ref, "x"]) == pytest.approx(100.0)


def test_corpus_bleu_with_uneven_references():
    hyps = ["the cat sat", "a dog barked loudly"]
    refs = [["the cat sat", "a cat sat"], ["the dog barked loudly"]]
    score, signature = corpus_bleu(hyps, refs)
    expected = sacrebleu.corpus_bleu(
        hyps, [["the cat sat", "the dog barked loudly"], ["a cat sat", None]]
    ).score
    assert score == pytest.approx(expected)
    assert "nrefs:var" in signature
