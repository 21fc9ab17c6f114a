"""Human evaluation: sheets round trip, Krippendorff's alpha against published values, Spearman."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

from parakit.annotate.agreement import krippendorff_alpha as alpha
from parakit.errors import DataFormatError, HumanEvalError
from parakit.evaluate.human import (
    ASPECTS,
    ERROR_TYPES,
    SCALE,
    aspect_judgments,
    error_type_summary,
    export_rating_sheet,
    instructions_markdown,
    mean_scores,
    metric_correlations,
    read_key,
    read_ratings,
)

#: Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders x 12 units,
#: published alphas: nominal 0.743, ordinal 0.815, interval 0.849.
K2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def _long(table: dict[str, list[int | None]], aspect: str = "fluency") -> pd.DataFrame:
    rows = [
        {
            "item_id": f"u{j}",
            "rater": r,
            "source": f"s{j}",
            "generation": f"g{j}",
            "aspect": aspect,
            "score": v,
            "error_types": [],
        }
        for r, values in table.items()
        for j, v in enumerate(values)
        if v is not None
    ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    "level,expected", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_krippendorff_alpha_reproduces_published_values(level, expected):
    assert krippendorff_alpha(_long(K2011), "fluency", level) == pytest.approx(expected, abs=5e-4)


def test_alpha_extremes():
    perfect = _long({"a": [1, 2, 3, 4, 5], "b": [1, 2, 3, 4, 5]})
    assert krippendorff_alpha(perfect, "fluency") == pytest.approx(1.0)
    # two raters who disagree systematically at the ends of the scale
    opposed = _long({"a": [1, 5, 1, 5], "b": [5, 1, 5, 1]})
    assert krippendorff_alpha(opposed, "fluency") < 0
    # every rating the same: no expected disagreement, alpha undefined
    assert np.isnan(krippendorff_alpha(_long({"a": [3, 3], "b": [3, 3]}), "fluency"))
    with pytest.raises(HumanEvalError, match="E947"):
        aspect_judgments(_long({"a": [1, 2, 3]}), "fluency")


def krippendorff_alpha(ratings, aspect, level="ordinal"):
    """The one alpha (annotate.agreement) on one aspect's ratings, over the 1-5 scale."""
    return alpha(aspect_judgments(ratings, aspect), level, SCALE)


def _fill(path, scores: dict[str, tuple[int, int, int]], types: dict[str, str] | None = None):
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    for row in rows:
        key = row["generation"]
        row["fluency"], row["semantic_similarity"], row["diversity"] = scores[key]
        row["error_types"] = (types or {}).get(key, "")
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


ITEMS = [
    {"source": "I love this song", "generation": "This song is great", "system": "auto"},
    {"source": "I love this song", "generation": "I love this song", "system": "paranmt"},
    {"source": "Turn off Bluetooth", "generation": "Switch Bluetooth off", "system": "auto"},
    {"source": "Turn off Bluetooth", "generation": "turn off the bluetooth", "system": "paranmt"},
]


def test_export_import_roundtrip_agreement_and_means(tmp_path):
    out = export_rating_sheet(ITEMS, tmp_path / "sheet", raters=["ann", "bob"], seed=3)
    assert [p.name for p in out["sheets"]] == ["ratings-ann.csv", "ratings-bob.csv"]
    header = out["sheets"][0].read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header == [
        "item_id",
        "rater",
        "source",
        "generation",
        *ASPECTS,
        "error_types",
        "comment",
    ]
    # raters see no system
    assert "paranmt" not in out["sheets"][0].read_text(encoding="utf-8")
    text = out["instructions"].read_text(encoding="utf-8")
    assert "5 = best" in text and "misinterpretation" in text
    key = read_key(out["key"])
    assert sorted(key["system"]) == ["auto", "auto", "paranmt", "paranmt"]
    ann = {
        "This song is great": (5, 4, 4),
        "I love this song": (5, 5, 1),
        "Switch Bluetooth off": (5, 5, 3),
        "turn off the bluetooth": (4, 5, 2),
    }
    bob = {
        "This song is great": (5, 4, 5),
        "I love this song": (5, 5, 1),
        "Switch Bluetooth off": (4, 5, 3),
        "turn off the bluetooth": (4, 5, 2),
    }
    _fill(
        out["sheets"][0],
        ann,
        {"I love this song": "copy", "This song is great": "structure; word_synonym"},
    )
    _fill(out["sheets"][1], bob, {"turn off the bluetooth": "small_change"})
    ratings = read_ratings(out["sheets"])
    assert len(ratings) == 2 * 4 * 3
    alphas = {a: krippendorff_alpha(ratings, a) for a in ASPECTS}
    assert set(alphas) == set(ASPECTS)
    assert alphas["semantic_similarity"] == pytest.approx(1.0)
    means = mean_scores(ratings, key)
    # auto: fluency (5+5+5+4)/4, diversity (4+5+3+3)/4
    assert means.loc["auto", "fluency"] == pytest.approx(4.75)
    assert means.loc["auto", "diversity"] == pytest.approx(3.75)
    assert means.loc["paranmt", "diversity"] == pytest.approx(1.5)
    summary = error_type_summary(ratings, key)
    assert summary.loc["auto", "good_per_generation"] == pytest.approx(1.0)  # 2 types / 2 items
    assert summary.loc["paranmt", "poor_percent"] == pytest.approx(100.0)
    assert summary.loc["paranmt", "copy"] == pytest.approx(50.0)


def test_spearman_against_hand_computed_rho(tmp_path):
    # item means of diversity: 1, 2, 3, 4; metric ranks 1, 3, 2, 4 -> rho = 1 - 6*2/(4*15) = 0.8
    rows = [
        {
            "item_id": f"i{k}",
            "rater": r,
            "source": f"s{k}",
            "generation": f"g{k}",
            "aspect": "diversity",
            "score": k,
            "error_types": [],
        }
        for k in range(1, 5)
        for r in ("a", "b")
    ]
    ratings = pd.DataFrame(rows)
    metrics = pd.DataFrame(
        {
            "source": [f"s{k}" for k in range(1, 5)],
            "generation": [f"g{k}" for k in range(1, 5)],
            "self_bleu": [10.0, 30.0, 20.0, 40.0],
        }
    )
    rho, p = metric_correlations(ratings, metrics)
    assert rho.loc["self_bleu", "diversity"] == pytest.approx(0.8)
    assert 0 < p.loc["self_bleu", "diversity"] < 1
    # overall = sum of aspects; with one aspect it equals diversity
    assert rho.loc["self_bleu", "overall"] == pytest.approx(0.8)


def test_bad_sheets_name_file_line_and_field(tmp_path):
    out = export_rating_sheet(ITEMS[:2], tmp_path, raters=["ann"])
    sheet = out["sheets"][0]
    _fill(sheet, {"This song is great": (6, 4, 4), "I love this song": (5, 5, 1)})
    with pytest.raises(DataFormatError, match=r"ratings-ann.csv, line \d, field 'fluency'"):
        read_ratings([sheet])
    _fill(
        sheet,
        {"This song is great": (5, 4, 4), "I love this song": (5, 5, 1)},
        {"I love this song": "copy;typo"},
    )
    with pytest.raises(DataFormatError, match="unknown paraphrase type 'typo'"):
        read_ratings([sheet])


def test_error_typology_is_the_papers_label_set():
    good = [k for k, (kind, _) in ERROR_TYPES.items() if kind == "good"]
    poor = [k for k, (kind, _) in ERROR_TYPES.items() if kind == "poor"]
    assert len(good) == 5 and len(poor) == 6
    assert "hallucination" in poor and "simplification" in good
    assert "error_types" not in instructions_markdown(error_types=False)
