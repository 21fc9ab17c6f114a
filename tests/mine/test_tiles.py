"""Tiles (T16): hand-computed tile densities and rule precision; the real opus-pb dev sample."""

from __future__ import annotations

import numpy as np
import pytest

from parakit.errors import MineError
from parakit.mine.tiles import SelectionRules, TileAnalysis, estimate_precision, select


def test_tile_densities_known_answer(tmp_path):
    lex = [0.05, 0.05, 0.15, 0.95, 0.95, 0.55, 1.0]
    neg = [0.9, 0.95, 0.1, 0.1, 0.05, 0.5, 0.0]
    labels = ["1", "2", "3", "4", "2", "4<", "x"]  # x is ignored
    tiles = TileAnalysis().fit(lex, neg, labels)
    assert tiles.counts_.values.sum() == 6
    # bottom row (lex 0.0-0.2), last column (neg 0.8-1.0): two pairs, both negative
    assert tiles.counts_.iloc[4, 4] == 2 and tiles.density_.iloc[4, 4] == 100.0
    assert tiles.density_.iloc[4, 0] == 0.0  # lex 0.15 / neg 0.1: label 3
    assert tiles.counts_.iloc[0, 0] == 2 and tiles.density_.iloc[0, 0] == 50.0
    assert np.isnan(tiles.density_.iloc[1, 1])
    assert "100% (2)" in tiles.to_markdown()
    assert tiles.plot(tmp_path / "h.png").stat().st_size > 0


def test_rules_and_precision():
    lex = np.array([0.05, 0.3, 0.3, 0.6, 0.7, 0.8])
    neg = np.array([0.1, 0.5, 0.2, 0.0, 0.0, 0.0])
    pos = np.array([0.0, 0.1, 0.5, 0.999, 0.9985, 0.9])
    labels = ["1", "3", "2", "4", "2", "4"]
    negatives, positives = select(lex, neg, pos)
    assert negatives.tolist() == [True, True, False, False, False, False]
    assert positives.tolist() == [False, False, False, True, True, False]
    est = estimate_precision(lex, neg, pos, labels)
    assert est["negatives"]["selected"] == 2 and est["negatives"]["precision"] == 0.5
    assert est["positives"]["precision"] == 0.5
    low, high = est["positives"]["ci95"]
    assert low < 0.5 < high
    strict = estimate_precision(lex, neg, pos, labels, SelectionRules(pos_conf_min=0.999))
    assert strict["positives"]["selected"] == 1 and strict["positives"]["precision"] == 1.0


def test_bad_scores_are_rejected():
    with pytest.raises(MineError, match="E805"):
        TileAnalysis().fit([0.1, 1.2], [0.1, 0.2], ["1", "2"])
    with pytest.raises(MineError, match="lengths differ"):
        TileAnalysis().fit([0.1], [0.1, 0.2], ["1", "2"])


def test_tiles_on_opus_parsebank_dev_with_lexical_column(data_path):
    from parakit.io import read

    pairs = read(data_path("turku/opus-pb-dev.json"))
    lex = [p.metadata["lex_similarity"] for p in pairs]
    # a score that knows nothing: every pair in the middle column; densities = row densities
    tiles = TileAnalysis().fit(lex, np.full(len(pairs), 0.5), [p.label for p in pairs])
    assert tiles.counts_.values.sum() == len(pairs) == 4894
    column = tiles.density_.iloc[:, 2]
    # negatives (1, 2) dominate low lexical similarity and thin out at the top (paper, Fig. 7)
    assert column.iloc[-1] > 80 and column.iloc[0] < column.iloc[-1]


def test_tile_edges_are_labelled_exactly_for_any_number_of_bins():
    # 4 bins of 0.25: the one-decimal labels said 0.2–0.5 for 0.25–0.50
    tiles = TileAnalysis(bins=4).fit([0.3, 0.8], [0.3, 0.1], ["1", "4"])
    assert list(tiles.density_.index) == ["0.75–1.00", "0.50–0.75", "0.25–0.50", "0.00–0.25"]
    assert list(tiles.density_.columns)[:2] == ["0.00–0.25", "0.25–0.50"]
    # 20 bins of 0.05: the labels repeated (0.1–0.1 twice) and to_markdown crashed
    tiles = TileAnalysis(bins=20).fit([0.05, 0.12, 0.9], [0.1, 0.1, 0.5], ["1", "4", "2"])
    assert tiles.density_.index.is_unique and tiles.density_.index[-2] == "0.05–0.10"
    table = tiles.to_markdown()
    assert "| 0.05–0.10 | – | – | 100% (1) |" in table and "| 0.10–0.15 | – | – | 0% (1) |" in table
    # the paper's 5 bins keep their labels
    assert list(TileAnalysis().fit([0.1], [0.1], ["1"]).density_.index)[-1] == "0.0–0.2"


def test_tiles_need_an_annotated_sample_and_a_tile():
    # was: an empty table and "precision nan%" (no labels), an internal error (bins=0)
    with pytest.raises(MineError, match=r"E805.*none of the 3 pairs has a label"):
        TileAnalysis().fit([0.1, 0.5, 0.9], [0.2, 0.4, 0.6], [None, "x", None])
    with pytest.raises(MineError, match=r"E805.*at least 1, not 0"):
        TileAnalysis(bins=0).fit([0.1], [0.2], ["2"])
    assert int(TileAnalysis().fit([0.1, 0.5], [0.2, 0.4], ["x", "2"]).counts_.values.sum()) == 1
