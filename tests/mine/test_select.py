"""T16 selection over all candidates: ``select_pairs`` and ``parakit mine select``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from parakit.cli import main
from parakit.errors import MineError, ParakitError
from parakit.io import read, write
from parakit.mine.tiles import SelectionRules, candidate_lex_similarity, select_pairs
from parakit.schema import Pair, PairSet

# lexical similarity, negative confidence, label-4 confidence; by the paper's rules:
#   a: lex 0.05 < 0.1 -> negative; b: neg 0.5 > 0.4 -> negative; c: lex 0.6 > 0.5 and pos
#   0.999 >= 0.998 -> positive; d: neither; e: both rules hold (lex 0.6, neg 0.9, pos 0.999)
#   -> left out of both
ROWS = {"a": (0.05, 0.1, 0.2), "b": (0.3, 0.5, 0.1), "c": (0.6, 0.0, 0.999),
        "d": (0.3, 0.4, 0.997), "e": (0.6, 0.9, 0.999)}  # fmt: skip


def _candidates() -> PairSet:
    pairs = [Pair(k, f"left {k}", f"right {k}", metadata={"lex_similarity": v[0]})
             for k, v in ROWS.items()]  # fmt: skip
    return PairSet(pairs, scheme="turku", name="mined")


def test_select_pairs_applies_the_paper_rules():
    neg = [v[1] for v in ROWS.values()]
    pos = [v[2] for v in ROWS.values()]
    negatives, positives = select_pairs(_candidates(), neg, pos)
    assert [p.id for p in negatives] == ["a", "b"]
    assert [p.id for p in positives] == ["c"]
    assert negatives[1].metadata["neg_conf"] == 0.5
    assert negatives[1].metadata["tile_selection"] == "negative"
    # other rules: negatives need lex < 0.04 or confidence > 0.45
    negatives, _ = select_pairs(_candidates(), neg, pos, SelectionRules(0.04, 0.45))
    assert [p.id for p in negatives] == ["b"]
    with pytest.raises(MineError, match="5 pairs but 4"):
        select_pairs(_candidates(), neg[:4], pos[:4])


def test_lex_similarity_is_computed_when_absent():
    pairs = PairSet([Pair("1", "abc abc", "abc abc"), Pair("2", "abc", "xyz")])
    assert candidate_lex_similarity(pairs) == pytest.approx([1.0, 0.0])
    # char_wb 2-4-grams of "ab" and "abx": " a", "ab", "b ", " ab", "ab ", " ab " vs " a", "ab",
    # "bx", "x ", " ab", "abx", "bx ", " abx", "abx ": 3 shared of 6 and 9 -> 3 / sqrt(54)
    pairs = PairSet([Pair("1", "ab", "abx")])
    assert candidate_lex_similarity(pairs) == pytest.approx([3 / np.sqrt(54)])


def test_mine_select_reads_the_rules_of_mine_tiles(tmp_path, capsys):
    candidates = tmp_path / "mined.jsonl"
    write(_candidates(), candidates)
    scores = tmp_path / "scores.csv"
    scores.write_text("neg_conf,pos_conf\n" + "".join(f"{v[1]},{v[2]}\n" for v in ROWS.values()))
    tiles = tmp_path / "tiles"
    tiles.mkdir()
    estimate = {"rules": {"neg_lex_max": 0.1, "neg_conf_min": 0.55, "pos_lex_min": 0.5,
                          "pos_conf_min": 0.998},
                "negatives": {"selected": 40, "correct": 38, "precision": 0.95,
                              "ci95": [0.83, 0.99], "share": 0.4},
                "positives": {"selected": 0, "correct": 0, "precision": None,
                              "ci95": [None, None], "share": 0.0}}  # fmt: skip
    (tiles / "selection.json").write_text(json.dumps(estimate))
    out, pos_out = tmp_path / "negatives.jsonl", tmp_path / "positives.jsonl"
    argv = ["mine", "select", str(candidates), "-o", str(out), "--scores", str(scores)]
    assert main([*argv, "--tiles", str(tiles), "--positives", str(pos_out)]) == 0
    printed = capsys.readouterr().out
    assert [p.id for p in read(out)] == ["a"]  # the tiles' rule: b's 0.5 is not > 0.55
    assert "precision on the annotated sample 95.0%" in printed
    assert [p.id for p in read(pos_out)] == ["c"]
    # an option overrides the rule read from --tiles
    assert main([*argv, "--tiles", str(tiles), "--neg-conf-min", "0.45"]) == 0
    assert [p.id for p in read(out)] == ["a", "b"]
    # scores of another candidate set are refused
    scores.write_text("neg_conf,pos_conf\n0.1,0.2\n")
    assert main(argv) == 2
    assert "E805" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("cell", "expected"),
    [("", "expected a decimal number"), ("abc", "expected a decimal number"), ("1.5", "[0, 1]")],
)
def test_a_scores_cell_that_is_no_confidence_is_refused_naming_its_row(tmp_path, capsys, cell,
                                                                      expected):  # fmt: skip
    candidates = tmp_path / "mined.jsonl"
    write(_candidates(), candidates)
    rows = [f"{v[1]},{v[2]}" for v in ROWS.values()]
    rows[2] = f"{cell},{ROWS['c'][2]}"  # pair c, line 4 of the file (after the header)
    scores = tmp_path / "scores.csv"
    scores.write_text("neg_conf,pos_conf\n" + "\n".join(rows) + "\n")
    out = tmp_path / "negatives.jsonl"
    argv = ["mine", "select", str(candidates), "-o", str(out), "--scores", str(scores)]
    assert main(argv) == 2  # was: an internal ValueError (exit 1), or E805 naming no row
    err = capsys.readouterr().err
    assert f"{scores}, line 4, field 'neg_conf'" in err and expected in err
    assert not out.exists()


def test_mine_select_refuses_positives_onto_its_negatives(tmp_path, capsys):
    candidates = tmp_path / "mined.jsonl"
    write(_candidates(), candidates)
    scores = tmp_path / "scores.csv"
    scores.write_text("neg_conf,pos_conf\n" + "".join(f"{v[1]},{v[2]}\n" for v in ROWS.values()))
    out = tmp_path / "safe.jsonl"
    argv = ["mine", "select", str(candidates), "-o", str(out), "--scores", str(scores)]
    # was: exit 0, the positives written over the negatives
    assert main([*argv, "--positives", str(tmp_path / "." / "safe.jsonl")]) == 2
    assert "--positives" in capsys.readouterr().err and not out.exists()


def test_scores_written_by_tiles_read_back_for_their_pairs_only(tmp_path):
    from parakit.mine.tiles import read_confidences, write_confidences

    pairs = _candidates()
    neg = np.array([0.9, 0.5, 0.1, 0.0, 1.0])
    pos = np.array([0.0, 0.25, 0.9991234, 0.5, 0.125])
    path = write_confidences(tmp_path / "scores.csv", pairs, neg, pos)
    back_neg, back_pos = read_confidences(path, pairs, "mined.jsonl")
    assert back_neg.tolist() == neg.tolist()
    assert back_pos.tolist() == [0.0, 0.25, 0.999123, 0.5, 0.125]  # six decimals
    other = PairSet([pairs[1], pairs[0], *pairs[2:]])
    with pytest.raises(ParakitError, match=r"E140.*line 2, field 'id'.*the pairs"):
        read_confidences(path, other)
