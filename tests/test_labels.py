"""Label schemes: parsing, printing, validation and the papers' readings."""

import pytest

from parakit.errors import LabelError
from parakit.labels import Label, VoteScheme, available_schemes, get_scheme, scheme_from_spec

TURKU = get_scheme("turku")


@pytest.mark.parametrize(
    ("raw", "canonical", "base", "flags"),
    [
        ("4", "4", "4", ()),
        ("4<is", "4<is", "4", ("<", "i", "s")),
        ("4si<", "4<is", "4", ("<", "i", "s")),
        ("4>s", "4>s", "4", (">", "s")),
        (" 3 ", "3", "3", ()),
        ("x", "x", "x", ()),
        (2, "2", "2", ()),
    ],
)
def test_turku_parse_and_print(raw, canonical, base, flags):
    label = TURKU.parse(raw)
    assert (str(label), label.base, label.flags) == (canonical, base, flags)


@pytest.mark.parametrize("raw", ["4<>", "5", "3<", "2s", "4ii", "4q", "", "44", "x<"])
def test_turku_rejects_invalid_labels(raw):
    with pytest.raises(LabelError) as err:
        TURKU.parse(raw)
    assert repr(raw.strip()) in str(err.value) or raw == ""


def test_turku_values_are_all_valid_and_complete():
    values = TURKU.values
    # 1, 2, 3, x and 4 with {'', <, >} x {'', i} x {'', s}
    assert len(values) == 4 + 12
    assert all(TURKU.is_valid(v) for v in values)


# loose: 3 and 4 (any flags) -> 1; strict: i -> 2, </> -> 3, only 4 stays positive
@pytest.mark.parametrize(
    ("label", "loose", "strict", "strict_label"),
    [
        ("1", 0, 0, "1"),
        ("2", 0, 0, "2"),
        ("3", 1, 0, "3"),
        ("4", 1, 1, "4"),
        ("4s", 1, 1, "4s"),
        ("4i", 1, 0, "2"),
        ("4<", 1, 0, "3"),
        ("4>s", 1, 0, "3"),
        ("4<i", 1, 0, "2"),
        ("x", None, None, "x"),
    ],
)
def test_turku_readings(label, loose, strict, strict_label):
    assert TURKU.to_binary(label) == loose
    assert TURKU.to_binary(label, reading="loose") == loose
    assert TURKU.to_binary(label, reading="strict") == strict
    assert str(TURKU.strict(label)) == strict_label


@pytest.mark.parametrize(
    ("label", "directions"),
    [
        ("4", [(1, 2), (2, 1)]),
        ("4<", [(2, 1)]),  # txt1 more general: detailed txt2 -> general txt1
        ("4>", [(1, 2)]),
        ("4s", []),
        ("4<i", []),
        ("3", []),
        ("2", []),
        ("1", []),
    ],
)
def test_turku_generation_directions(label, directions):
    assert TURKU.generation_directions(label) == directions


def test_turku_reduce_for_agreement():
    assert TURKU.reduce("4<is") == Label("4", ("<",))
    assert TURKU.reduce("4<is", level="base") == Label("4")
    with pytest.raises(LabelError):
        TURKU.reduce("4", level="flags")


def test_unknown_reading_is_an_error():
    with pytest.raises(LabelError, match="unknown reading"):
        TURKU.to_binary("4", reading="lenient")


def test_vote_threshold_reading_m4():
    votes = get_scheme("votes")  # 6 judgments, threshold 3
    assert [votes.to_binary(v) for v in range(7)] == [0, 0, 0, None, 1, 1, 1]
    strict = VoteScheme(threshold=4)
    assert [strict.to_binary(v) for v in range(7)] == [0, 0, 0, 0, None, 1, 1]
    with pytest.raises(LabelError):
        votes.parse("7")
    with pytest.raises(LabelError):
        VoteScheme(n_judgments=6, threshold=7)


def test_japanese_binary_graded_likert():
    ja = get_scheme("japanese")
    assert [ja.to_binary(v) for v in ja.values] == [1, 0, None, None]
    assert ja.normalize("positive") == "Positive"
    binary = get_scheme("binary")
    assert binary.normalize(True) == "1" and binary.normalize("false") == "0"
    with pytest.raises(LabelError):
        binary.parse("2")
    graded = get_scheme("graded")
    assert [graded.to_binary(v) for v in "1234"] == [0, 0, 1, 1]
    likert = get_scheme("likert")
    assert likert.values == ["1", "2", "3", "4", "5"]
    with pytest.raises(LabelError, match="no binary reading"):
        likert.to_binary("3")


def test_scheme_specs_round_trip():
    for name in available_schemes():
        scheme = get_scheme(name)
        assert scheme_from_spec(scheme.spec()) == scheme
    assert scheme_from_spec({"name": "votes", "threshold": 4}).threshold == 4
    with pytest.raises(LabelError, match="unknown label scheme"):
        get_scheme("stars")


def test_turku_base_of_reads_the_base_label_once():
    turku = get_scheme("turku")
    assert [turku.base_of(v) for v in ("4<is", "4", "3", "1", "x", "", None)] == [
        "4",
        "4",
        "3",
        "1",
        None,
        None,
        None,
    ]
    with pytest.raises(LabelError, match="E201"):
        turku.base_of("neg")  # slicing would have read 'n' as a base
