"""Generation training data: directions, BLEU filter (against MultiPIT-auto), dedupe, overlap."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import sacrebleu

from parakit.errors import ParakitError
from parakit.io import read, read_multireference
from parakit.models.generation_data import (
    bleu_filter,
    deduplicate,
    directed_pairs,
    pair_bleu,
    prepare_generation_data,
    remove_test_overlap,
)
from parakit.schema import Pair, PairSet

NMR = Path(__file__).parents[1] / "evaluate" / "data" / "nmr_sample.json"


def test_turku_labels_decide_directions():
    ps = PairSet(
        [
            Pair("a", "short", "long one", label="4"),
            Pair("b", "general", "detailed", label="4<"),
            Pair("c", "detailed", "general", label="4>"),
            Pair("d", "x", "y", label="3"),
            Pair("e", "x", "y", label="4s"),
        ],
        scheme="turku",
    )
    out = directed_pairs(ps)
    assert [(p.id, p.text1, p.text2) for p in out] == [
        ("a>", "short", "long one"),
        ("a<", "long one", "short"),
        ("b<", "detailed", "general"),
        ("c>", "detailed", "general"),
    ]
    assert out[1].metadata == {"direction": "backward", "pair_id": "a"}


def test_binary_labels_keep_positives_and_unlabelled():
    ps = PairSet(
        [Pair("p", "a", "b", label="1"), Pair("n", "c", "d", label="0"), Pair("u", "e", "f")]
    )
    assert [p.id for p in directed_pairs(ps, "forward")] == ["p>", "u>"]
    assert [p.id for p in directed_pairs(ps, "both")] == ["p>", "p<", "u>", "u<"]
    assert [p.text1 for p in directed_pairs(ps, "backward")] == ["b", "f"]
    with pytest.raises(ParakitError, match="E901"):
        directed_pairs(ps, "sideways")  # type: ignore[arg-type]


def test_bleu_filter_uses_output_vs_input_and_keeps_below_threshold():
    # hand-computed: 'the cat sat on the mat' vs 'the cat is on the mat' = 37.99 either way;
    # 'a b c d e' (output) vs 'a b c d' (input): p = 4/5, 3/4, 2/3, 1/2, BP = 1 -> 66.87;
    # the other direction (input vs output) has p = 1 and BP = exp(1 - 5/4) -> 77.88
    ps = PairSet([Pair("x", "a b c d", "a b c d e"), Pair("y", "the cat sat", "a dog ran")])
    scores = pair_bleu(ps)
    assert scores[0] == pytest.approx(100 * (4 / 5 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25, abs=1e-6)
    assert scores[0] == pytest.approx(sacrebleu.sentence_bleu("a b c d e", ["a b c d"]).score)
    assert scores[1] == 0.0
    kept = bleu_filter(ps, threshold=60)
    assert [p.id for p in kept] == ["y"]
    # 66.87 < 67 <= 77.88: kept only because the filter scores output vs input
    assert [p.id for p in bleu_filter(ps, threshold=67)] == ["x", "y"]
    assert kept[0].metadata["bleu"] == 0.0


def test_dedupe_and_identical_pairs():
    ps = PairSet(
        [
            Pair("1", "Hello there!", "hi there"),
            Pair("2", "hello there", "Hi there."),
            Pair("3", "Same words", "same words!"),
            Pair("4", "hi there", "Hello there!"),
        ]
    )
    assert [p.id for p in deduplicate(ps)] == ["1", "4"]
    assert [p.id for p in deduplicate(ps, drop_identical=False)] == ["1", "3", "4"]


def test_remove_test_overlap_by_group_and_text():
    test = read_multireference(NMR)
    src = test[0].text1
    train = PairSet(
        [
            Pair("a", src.upper(), "whatever"),  # a test source (any case)
            Pair("b", "fine", test[5].text2),  # a test reference
            Pair("c", "other", "pair", group="src-0"),  # a test group
            Pair("d", "kept", "pair", group="trend-9"),
        ]
    )
    assert [p.id for p in remove_test_overlap(train, test)] == ["d"]
    assert [p.id for p in remove_test_overlap(train, test, by_text=False)] == ["a", "b", "d"]
    assert [p.id for p in remove_test_overlap(train, test, by_group=False)] == ["c", "d"]


def test_prepare_reports_every_step():
    test = read_multireference(NMR)
    ps = PairSet(
        [
            Pair("1", "I adore that tune", "I love this song so much"),
            Pair("2", "I adore that tune", "I love this song so much"),
            Pair("3", "the cat sat on the mat", "the cat sat on the mat ."),
            Pair("4", test[0].text1, "x y z"),
        ]
    )
    out, report = prepare_generation_data(ps, directions="forward", test=test)
    assert report.to_dict() == {
        "input": 4,
        "directed": 4,
        "test-overlap": 3,
        "dedupe": 1,
        "bleu<14": 1,
    }
    assert [p.id for p in out] == ["1>"]
    assert out.metadata["generation_data"]["bleu<14"] == 1


def test_multipit_auto_train_passes_the_filter(data_path, tmp_path):
    """auto-train.csv is MultiPIT's filtered set: output-vs-input BLEU < 14 holds for every
    pair (checked on the first 3,000 here; the full file in the slow test)."""
    path = data_path("multipit/auto-train.csv")
    head = tmp_path / "auto-head.csv"
    with path.open(encoding="utf-8") as source:
        head.write_text("".join(itertools.islice(source, 3001)), encoding="utf-8")
    ps = read(head, format="multipit")
    assert len(ps) == 3000
    scores = pair_bleu(ps)
    assert max(scores) < 14
    assert len(bleu_filter(ps)) == len(ps)


@pytest.mark.slow
def test_multipit_auto_train_filter_fraction_full(data_path):
    ps = read(data_path("multipit/auto-train.csv"), format="multipit")
    assert len(ps) == 136645  # Table 11: #Train 136,645
    assert len(bleu_filter(ps)) == len(ps)  # 100% pass output vs input
    reverse = [sacrebleu.sentence_bleu(p.text1, [p.text2]).score for p in ps]
    passed = sum(s < 14 for s in reverse) / len(ps)
    assert 0.99 < passed < 1.0  # the other direction would have dropped ~0.4%
    # lowercased BLEU would not reproduce the released file at all
    lower = sacrebleu.metrics.BLEU(lowercase=True, effective_order=True)
    sample = list(itertools.islice(ps, 2000))
    assert sum(lower.sentence_score(p.text2, [p.text1]).score >= 14 for p in sample) > 100


def test_backward_copies_mirror_the_subsumption_flag():
    # 4< says txt1 is the more general statement; the backward copy swaps the texts, so its
    # label must say 4> (the arrow points to the general statement, now txt2). Kept as 4<, the
    # written file claims the detailed statement is the general one, and preparing it again
    # turns it back into general -> detailed.
    ps = PairSet(
        [
            Pair("b", "general", "detailed", label="4<i"),
            Pair("c", "detailed", "general", label="4>"),
            Pair("a", "one", "two", label="4s"),
            Pair("d", "three", "four", label="4"),
        ],
        scheme="turku",
    )
    out = directed_pairs(ps)
    assert [(p.id, p.text1, p.text2, p.label) for p in out] == [
        ("c>", "detailed", "general", "4>"),
        ("d>", "three", "four", "4"),
        ("d<", "four", "three", "4"),
    ]
    both = directed_pairs(ps, "both")
    assert [(p.id, p.label) for p in both] == [
        ("b>", "4<i"),
        ("b<", "4>i"),
        ("c>", "4>"),
        ("c<", "4<"),
        ("a>", "4s"),
        ("a<", "4s"),
        ("d>", "4"),
        ("d<", "4"),
    ]
    subsumption = PairSet([Pair("b", "general", "detailed", label="4<")], scheme="turku")
    once = directed_pairs(subsumption)
    assert [(p.text1, p.text2, p.label) for p in once] == [("detailed", "general", "4>")]
    again = directed_pairs(once)  # the prepared file prepared again keeps its direction
    assert [(p.text1, p.text2) for p in again] == [("detailed", "general")]


def test_unknown_bleu_tokenizer_is_a_parakit_error():
    # a mistyped --tokenize ended in an internal KeyError from SacreBLEU
    ps = PairSet([Pair("a", "I adore that tune", "I love this song so much")])
    with pytest.raises(ParakitError, match=r"E902.*'13A'.*13a"):
        bleu_filter(ps, tokenize="13A")
    with pytest.raises(ParakitError, match="E902"):
        prepare_generation_data(PairSet([]), tokenize="nope")
    assert [p.id for p in bleu_filter(ps, tokenize="char")] == ["a"]


def test_prepare_stops_when_no_pair_is_left():
    # a test set that shares every sentence (or a filter that drops everything) left an empty
    # training file and exit 0; the step that emptied the set is named instead
    ps = PairSet([Pair("1", "I adore that tune", "I love this song so much")])
    with pytest.raises(ParakitError, match=r"E904.*test-overlap"):
        prepare_generation_data(ps, directions="forward", test=ps)
    with pytest.raises(ParakitError, match=r"E904.*directed"):
        prepare_generation_data(PairSet([Pair("n", "a b", "c d", "0")]))
    out, report = prepare_generation_data(ps, directions="forward")
    assert [p.id for p in out] == ["1>"] and report.to_dict()["bleu<14"] == 1
