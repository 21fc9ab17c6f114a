"""Agreement measures against published worked examples."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("krippendorff", reason="pip install krippendorff (parakit[annotate])")
pytest.importorskip("statsmodels", reason="pip install statsmodels (parakit[annotate])")

from parakit.annotate import agreement as ag

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the reference data:
# 4 coders x 12 units with missing values; alpha nominal 0.743, ordinal 0.815, interval 0.849.
K = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def _kframe() -> pd.DataFrame:
    rows = [
        (u, f"coder{c}", str(v))
        for c, coder in enumerate(K)
        for u, v in enumerate(coder)
        if v is not None
    ]
    return ag.judgments_frame(rows)


def test_krippendorff_reference_data():
    frame = _kframe()
    assert ag.krippendorff_alpha(frame, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert ag.krippendorff_alpha(frame, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert ag.krippendorff_alpha(frame, "interval") == pytest.approx(0.849, abs=5e-4)


def test_cohen_kappa_textbook():
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> po = .7, pe = .5, kappa = .4
    a = ["y"] * 20 + ["y"] * 5 + ["n"] * 10 + ["n"] * 15
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert ag.cohen_kappa(a, b) == pytest.approx(0.4)


def test_fleiss_kappa_wikipedia_example():
    # Fleiss (1971) style example from Wikipedia: 10 subjects, 14 raters, 5 categories -> 0.210
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert ag.fleiss_kappa_table(table) == pytest.approx(0.210, abs=5e-4)
    # the same data as a long table of judgments gives the same value
    rows = []
    for item, counts in enumerate(table):
        rater = 0
        for category, count in enumerate(counts):
            for _ in range(count):
                rows.append((item, f"r{rater}", f"c{category}"))
                rater += 1
    assert ag.fleiss_kappa(ag.judgments_frame(rows)) == pytest.approx(0.210, abs=5e-4)


def test_pairwise_kappa_weighted_by_shared_items():
    rows = [(i, "a", lab) for i, lab in enumerate("yynn")] + [
        (i, "b", lab) for i, lab in enumerate("ynnn")
    ]
    rows += [(i, "c", lab) for i, lab in enumerate("yyyyyy", start=10)]
    rows += [(i, "a", lab) for i, lab in enumerate("yyyyny", start=10)]
    out = ag.pairwise_cohen_kappa(ag.judgments_frame(rows))
    assert out["a|b"] == pytest.approx(0.5)
    assert out["a|c"] == pytest.approx(0.0)  # c always says y: kappa 0
    assert "b|c" not in out  # no shared items
    assert out["weighted_mean"] == pytest.approx((0.5 * 4 + 0.0 * 6) / 10)


def test_turku_levels_and_consensus():
    rows = [
        ("i1", "a", "4<"),
        ("i1", "b", "4<s"),
        ("i2", "a", "2"),
        ("i2", "b", "3"),
        ("i3", "a", "4"),
        ("i3", "b", "4"),
        ("i4", "a", "1"),
        ("i4", "b", "1"),
    ]
    frame = ag.judgments_frame(rows)
    consensus = {"i1": "4<", "i2": "2", "i3": "4", "i4": "1"}
    report = ag.agreement_report(frame, "turku", consensus=consensus)
    # full labels: a matches consensus 4/4, b 2/4 -> 6/8
    assert report["full_accuracy"] == pytest.approx(6 / 8)
    # subsumption level: 4<s -> 4<, so only i2 differs -> 7/8
    assert report["subsumption_accuracy"] == pytest.approx(7 / 8)
    # binary (loose): 3 and 4 are paraphrases: b's "3" on i2 is wrong -> 7/8
    assert report["binary_accuracy"] == pytest.approx(7 / 8)
    # base level: a and b agree on 3 of 4 items with labels {4,2/3,4,1}
    base = ag.reduce_labels(frame, "turku", "base")
    kappa = ag.cohen_kappa(
        base[base.annotator == "a"].label.tolist(), base[base.annotator == "b"].label.tolist()
    )
    assert report["base_pairwise_kappa"] == pytest.approx(kappa)
    assert not math.isnan(report["full_alpha_nominal"])


def test_japanese_scheme_binary_drops_unnatural():
    frame = ag.judgments_frame(
        [
            ("a", "x", "Positive"),
            ("a", "y", "Unnatural"),
            ("b", "x", "Negative"),
            ("b", "y", "Negative"),
        ]
    )
    reduced = ag.reduce_labels(frame, "japanese", "binary")
    assert reduced["label"].tolist() == [1, 0, 0]


def test_likert_ordinal_alpha_perfect_and_missing_columns():
    rows = [(i, r, str(v)) for i, v in enumerate([1, 2, 3, 4, 5]) for r in ("r1", "r2", "r3")]
    report = ag.agreement_report(ag.judgments_frame(rows), "likert", levels=("full",), ordinal=True)
    assert report["full_alpha_ordinal"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="E620"):
        ag.judgments_frame(pd.DataFrame({"x": [1]}))
    assert np.isnan(ag.versus_consensus(ag.judgments_frame(rows), {})["accuracy"])
    one_value = ag.judgments_frame([(1, "a", "4"), (1, "b", "4")])
    assert np.isnan(ag.krippendorff_alpha(one_value))


def test_consensus_accuracy_counts_double_annotated_items_only():
    """T9: single-annotated items (their one label *is* the consensus) must not inflate
    accuracy against consensus; 100 of them leave the figures unchanged."""
    rows = [
        ("i1", "a", "4"), ("i1", "b", "4"),
        ("i2", "a", "2"), ("i2", "b", "3"),
        ("i3", "a", "1"), ("i3", "b", "1"),
        ("i4", "a", "4<"), ("i4", "b", "4"),
    ]  # fmt: skip
    consensus = {"i1": "4", "i2": "3", "i3": "1", "i4": "4"}
    double = ag.versus_consensus(ag.judgments_frame(rows), consensus)
    assert double["accuracy"] == 6 / 8 and double["n"] == 8
    singles = [(f"s{n}", "a", "4") for n in range(100)]
    consensus.update({f"s{n}": "4" for n in range(100)})
    mixed = ag.versus_consensus(ag.judgments_frame(rows + singles), consensus)
    assert mixed == double
    report = ag.agreement_report(ag.judgments_frame(rows + singles), "turku", consensus=consensus)
    assert report["full_accuracy"] == 6 / 8


def test_fleiss_kappa_with_mostly_single_annotated_items_and_why_nan(tmp_path):
    # 4 double-annotated items by hand: p_4 = 5/8, p_2 = 3/8 -> Pe = 34/64; agreeing items
    # i1, i2, i3 have P_i = 1, i4 has P_i = 0 -> Pbar = 3/4 -> kappa = (3/4 - 34/64) / (30/64)
    # = 14/30 = 7/15
    rows = [
        ("i1", "a", "4"), ("i1", "b", "4"),
        ("i2", "a", "2"), ("i2", "b", "2"),
        ("i3", "a", "4"), ("i3", "b", "4"),
        ("i4", "a", "2"), ("i4", "b", "4"),
    ]  # fmt: skip
    assert ag.fleiss_kappa(ag.judgments_frame(rows)) == pytest.approx(7 / 15)
    singles = [(f"s{n}", "a", "4") for n in range(100)]  # the mode of the counts is now 1
    frame = ag.judgments_frame(rows + singles)
    assert ag.fleiss_kappa(frame) == pytest.approx(7 / 15)  # was nan: 1-rater items only
    assert ag.undefined_reason(frame) == ""
    only_singles = ag.judgments_frame(singles)
    assert np.isnan(ag.fleiss_kappa(only_singles))
    assert "none of the 100 items has two judgments" in ag.undefined_reason(only_singles)
    same = ag.judgments_frame([("i1", "a", "4"), ("i1", "b", "4"), *singles])
    assert "all judgments of the 1 double-annotated items share one label" in (
        ag.undefined_reason(same)
    )
    # the CLI prints the reason beside nan
    from parakit.cli.app import main

    table = tmp_path / "judgments.csv"
    table.write_text(
        "item,annotator,label\n" + "".join(f"{i},{a},{x}\n" for i, a, x in singles),
        encoding="utf-8",
    )
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["annotate", "agreement", str(table)]) == 0
    lines = dict(line.split("\t", 1) for line in out.getvalue().splitlines() if "\t" in line)
    assert lines["full_fleiss_kappa"].startswith("nan\tundefined: none of the 100 items")


def test_alpha_nan_not_crash_when_no_item_is_double_annotated(tmp_path):
    # two labels but every item judged once: no pairable unit, alpha undefined (was ValueError)
    frame = ag.judgments_frame([("i1", "a", "4"), ("i2", "a", "2")])
    assert np.isnan(ag.krippendorff_alpha(frame))
    from parakit.cli.app import main

    table = tmp_path / "one.csv"
    table.write_text("item,annotator,label\ni1,a,4\ni2,a,2\n", encoding="utf-8")
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["annotate", "agreement", str(table)]) == 0
    lines = dict(line.split("\t", 1) for line in out.getvalue().splitlines() if "\t" in line)
    assert lines["full_alpha_nominal"].startswith("nan\tundefined: none of the 2 items")


def test_duplicate_judgments_by_one_annotator_are_refused():
    # a judged i1 twice ('1' and '2'): pairwise kappa and alpha kept the first (1.0) while
    # Fleiss counted a third rater; the figures disagreed about the same data
    rows = [
        ("i1", "a", "1"),
        ("i1", "a", "2"),
        ("i1", "b", "1"),
        ("i2", "a", "2"),
        ("i2", "b", "2"),
    ]
    from parakit.errors import AnnotationDataError

    with pytest.raises(AnnotationDataError, match=r"E624.*'a'.*'i1'"):
        ag.judgments_frame(rows)
    frame = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    with pytest.raises(AnnotationDataError, match="E624"):
        ag.judgments_frame(frame)


def test_agreement_cli_empty_file_and_unknown_label_name_the_file(tmp_path, capsys):
    # an empty file was an internal error (pandas' EmptyDataError); an unknown label was E201
    # without the file, line or field
    from parakit.cli.app import main

    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    assert main(["annotate", "agreement", str(empty)]) == 2
    err = capsys.readouterr().err
    assert "[E625]" in err and "empty.csv" in err and "internal error" not in err
    bad = tmp_path / "bad.csv"
    bad.write_text("item,annotator,label\ni1,a,4\ni1,b,banana\n", encoding="utf-8")
    assert main(["annotate", "agreement", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.csv, line 3, field 'label'" in err and "banana" in err
    typo = tmp_path / "typo.csv"
    typo.write_text("item,annotater,label\ni1,a,4\n", encoding="utf-8")
    assert main(["annotate", "agreement", str(typo)]) == 2
    err = capsys.readouterr().err
    assert "[E620]" in err and "typo.csv" in err and "'annotator'" in err


def test_fleiss_kappa_nan_when_no_item_has_the_given_rater_count():
    # raters=5 with only 2-rater items, or raters=1, raised numpy's ValueError (empty table)
    frame = ag.judgments_frame(
        [("i1", "a", "1"), ("i1", "b", "1"), ("i2", "a", "2"), ("i2", "b", "1")]
    )
    assert np.isnan(ag.fleiss_kappa(frame, raters=5))
    assert np.isnan(ag.fleiss_kappa(frame, raters=1))
    # p_1 = 3/4, p_2 = 1/4 -> Pe = 10/16; Pbar = 1/2 -> kappa = (8/16 - 10/16) / (6/16) = -1/3
    assert ag.fleiss_kappa(frame, raters=2) == pytest.approx(-1 / 3)
