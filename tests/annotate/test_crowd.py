"""Crowd import, worker QC and aggregation on a seeded simulated crowd with known truth."""

from __future__ import annotations

import pandas as pd
import pytest

from parakit.annotate import crowd
from parakit.errors import DataFormatError


def test_threshold_rule_hand_computed():
    rows = []
    for pair, votes in (("a", 5), ("b", 4), ("c", 3), ("d", 2), ("e", 0)):
        for w in range(6):
            rows.append({"worker": f"w{w}", "pair": pair, "label": "1" if w < votes else "0"})
    rows.append({"worker": "w9", "pair": "f", "label": "1"})  # only one judgment
    frame = pd.DataFrame(rows)
    assert crowd.aggregate(frame, "threshold").to_dict() == {"a": "1", "b": "1", "d": "0", "e": "0"}
    strict = crowd.aggregate(frame, "threshold", threshold=4)
    assert strict.to_dict() == {"a": "1", "c": "0", "d": "0", "e": "0"}
    assert crowd.aggregate(frame, "majority").to_dict() == {
        "a": "1",
        "b": "1",
        "d": "0",
        "e": "0",
        "f": "1",
    }


def test_simulated_crowd_recovery_and_qc():
    pytest.importorskip("crowdkit", reason="pip install crowd-kit for Dawid-Skene")
    judgments, truth = crowd.simulate_crowd(n_items=300, n_workers=20, n_spammers=5, seed=7)
    assert len(judgments) == 300 * 6
    truth = truth.drop(judgments.loc[judgments["gold"], "pair"].unique())  # gold is not output
    assert len(truth) == 240
    results = {
        m: crowd.recovery_accuracy(crowd.aggregate(judgments, m), truth) for m in crowd.METHODS
    }

    def correct(r):
        return r["accuracy"] * r["coverage"]

    # 6 binary votes: the tie rule drops 3-3 splits; majority vote is the same rule
    assert results["threshold"] == results["majority"]
    assert 0.75 < results["threshold"]["coverage"] < 0.95
    assert results["threshold"]["accuracy"] > 0.9
    # Dawid-Skene labels every pair, and gets more pairs right than the vote rule
    assert results["dawid-skene"]["coverage"] == 1.0
    assert results["dawid-skene"]["accuracy"] > 0.9
    assert correct(results["dawid-skene"]) > correct(results["majority"])
    kept, quality = crowd.filter_workers(judgments, min_gold_accuracy=0.7, min_kappa=0.2)
    dropped = set(quality.index[~quality["kept"]])
    assert dropped == {w for w in quality.index if w.startswith("spam")}
    assert not kept["gold"].any()
    # QC then majority vote: fewer ties, more pairs right than majority vote on everyone
    after = crowd.recovery_accuracy(crowd.aggregate(kept, "majority"), truth)
    assert correct(after) > correct(results["majority"]) + 0.05


def test_worker_quality_hand_computed():
    rows = [
        # gold pair g: true label 1; w1 right, w2 wrong
        ("w1", "g", "1", True, "1"),
        ("w2", "g", "0", True, "1"),
        ("w3", "g", "1", True, "1"),
        ("w1", "p", "1", False, None),
        ("w2", "p", "1", False, None),
        ("w3", "p", "1", False, None),
        ("w1", "q", "0", False, None),
        ("w2", "q", "1", False, None),
        ("w3", "q", "0", False, None),
    ]
    frame = pd.DataFrame(rows, columns=["worker", "pair", "label", "gold", "gold_label"])
    quality = crowd.worker_quality(frame)
    assert quality.loc["w1", "gold_accuracy"] == 1.0
    assert quality.loc["w2", "gold_accuracy"] == 0.0
    # w1 vs others' majority: p -> (1,1)=1, q -> (1,0) tie skipped: one item only -> nan
    assert pd.isna(quality.loc["w1", "kappa"])
    # w2: p -> majority of w1,w3 = 1 (agree), q -> majority 0 (disagree): labels [1,1] vs [1,0]
    assert quality.loc["w2", "kappa"] == pytest.approx(0.0)


def test_read_judgments_csv_and_errors(tmp_path):
    good = tmp_path / "j.csv"
    good.write_text("WorkerId,pair,label,gold,gold_label\nA,p1,1,,\nB,p1,0,true,1\n")
    frame = crowd.read_judgments(good, columns={"worker": "WorkerId"})
    assert frame["worker"].tolist() == ["A", "B"]
    assert frame["gold"].tolist() == [False, True]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"worker": "A", "pair": "p1", "label": "1"}\n{"worker": "B", "pair": "p1"}\n')
    with pytest.raises(DataFormatError, match=r"bad.jsonl, line 2, field 'label'"):
        crowd.read_judgments(bad)
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"worker": "A", "pair": "p1", "label": "1", "gold": true}\n')
    with pytest.raises(DataFormatError, match="E632"):
        crowd.read_judgments(gold)


def test_attach_to_pairset():
    from parakit.schema import Pair, PairSet

    pairs = PairSet([Pair("a", "x", "y"), Pair("b", "u", "v")], scheme="binary")
    frame = pd.DataFrame(
        {
            "worker": ["w1", "w2", "w1"],
            "pair": ["a", "a", "b"],
            "label": ["1", "1", "0"],
            "time": ["t1", None, None],
            "gold": [False, False, True],
        }
    )
    labels = crowd.aggregate(frame, "majority")
    out = crowd.attach(pairs, frame, labels)
    assert [p.label for p in out] == ["1", None]  # b only has a gold judgment
    assert [(j.annotator, j.label, j.time, j.gold) for j in out[0].judgments] == [
        ("w1", "1", "t1", False),
        ("w2", "1", None, False),
    ]
    assert out[1].judgments[0].gold
    assert len(crowd.attach(pairs, frame, labels, drop_unlabelled=True)) == 1
    with pytest.raises(DataFormatError, match="E635"):
        crowd.attach(pairs, frame.assign(pair=["a", "zz", "b"]), labels)


def test_multipit_recipe_labels_a_simulated_crowd_after_quality_control():
    """M4: QC then the vote rule. The exact-6 rule after QC labels almost nothing (every
    pair that lost a spammer's judgment is dropped); the recipe applies the rule to what
    each pair keeps and recovers the known truth."""
    import numpy as np

    accuracies = np.random.default_rng(1).uniform(0.85, 0.97, size=16).tolist()
    judgments, truth = crowd.simulate_crowd(n_items=240, accuracies=accuracies, seed=0)
    kept, _ = crowd.filter_workers(judgments)
    assert len(crowd.aggregate(kept, "threshold")) < 0.05 * 240
    labels, quality = crowd.multipit_labels(judgments)
    assert {"spam0", "spam1", "spam2", "spam3"} <= set(quality.index[~quality["kept"]])
    result = crowd.recovery_accuracy(labels, truth)
    assert result["accuracy"] >= 0.95 and result["coverage"] >= 0.55
    # hand-computed scaled rule: 4 of 5 positive; 2 of 4 is a tie; 1 of 2 too few
    frame = pd.DataFrame(
        [("a", w, lab) for w, lab in zip("pqrst", "11110", strict=True)]
        + [("b", w, lab) for w, lab in zip("pqrs", "1100", strict=True)]
        + [("c", w, lab) for w, lab in zip("pq", "10", strict=True)]
        + [("d", w, lab) for w, lab in zip("pqr", "000", strict=True)],
        columns=["pair", "worker", "label"],
    )
    rule = crowd.aggregate(frame, "threshold", require_n=False, min_judgments=3)
    assert rule.to_dict() == {"a": "1", "d": "0"}


def test_read_judgments_refuses_a_worker_judging_a_pair_twice(tmp_path):
    # w1 voting four times for p1 made a 6-judgment pair with 4 paraphrase votes ('1');
    # the three distinct workers voted 1 vs 2
    path = tmp_path / "dup.csv"
    path.write_text("worker,pair,label\nw1,p1,1\nw2,p1,0\nw1,p1,1\nw3,p1,0\n", encoding="utf-8")
    with pytest.raises(
        DataFormatError,
        match=r"dup.csv, line 4, field 'worker'.*E636|E636.*dup.csv, line 4, field 'worker'",
    ):
        crowd.read_judgments(path)


def test_empty_judgments_file_is_an_error_not_a_crash(tmp_path):
    from parakit.cli.app import main

    for text in ("", "worker,pair,label\n"):
        path = tmp_path / "empty.csv"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(DataFormatError, match=r"E637.*empty.csv|empty.csv.*E637"):
            crowd.read_judgments(path)
        assert main(["annotate", "crowd", str(path)]) != 0  # was KeyError, an internal error


def test_quality_control_removing_every_worker_labels_nothing():
    # every worker disagrees with the others' majority: QC keeps none (was TypeError)
    frame = pd.DataFrame(
        {
            "worker": ["a", "b", "a", "b"],
            "pair": ["p1", "p1", "p2", "p2"],
            "label": list("1001"),
            "gold": [False] * 4,
        }
    )
    kept, quality = crowd.filter_workers(frame)
    assert not quality["kept"].any() and kept.empty
    labels = crowd.aggregate(kept, "threshold", require_n=False)
    assert labels.empty


def test_threshold_rule_refuses_labels_that_are_neither_positive_nor_negative():
    # 'yes' x4, 'no' x2 with positive '1' gave label '0' (every unknown label a negative vote)
    frame = pd.DataFrame(
        {
            "worker": [f"w{i}" for i in range(6)],
            "pair": ["p1"] * 6,
            "label": ["yes"] * 4 + ["no"] * 2,
        }
    )
    from parakit.errors import AnnotationDataError

    with pytest.raises(AnnotationDataError, match=r"E638.*'no', 'yes'.*positive '1'"):
        crowd.aggregate(frame, "threshold")
    labels = crowd.aggregate(frame, "threshold", positive="yes", negative="no")
    assert labels.to_dict() == {"p1": "yes"}


def test_crowd_cli_pairs_without_corpus_out_is_refused(tmp_path, capsys):
    # --pairs without --corpus-out (or the reverse) exited 0 and wrote no labelled pairs
    from parakit.cli.app import main

    judgments = tmp_path / "j.csv"
    judgments.write_text(
        "worker,pair,label\n" + "".join(f"w{i},p1,1\n" for i in range(6)), encoding="utf-8"
    )
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"id": "p1", "text1": "a b", "text2": "b a"}\n', encoding="utf-8")
    assert main(["annotate", "crowd", str(judgments), "--no-qc", "--pairs", str(pairs)]) == 2
    assert "--corpus-out" in capsys.readouterr().err
    out = tmp_path / "labelled.jsonl"
    assert main(["annotate", "crowd", str(judgments), "--no-qc", "--corpus-out", str(out)]) == 2
    assert "--pairs" in capsys.readouterr().err
    assert (
        main(
            [
                "annotate",
                "crowd",
                str(judgments),
                "--no-qc",
                "--pairs",
                str(pairs),
                "--corpus-out",
                str(out),
            ]
        )
        == 0
    )
    assert '"label": "1"' in out.read_text(encoding="utf-8")


def test_quality_control_on_a_table_without_the_optional_gold_column():
    # 'gold' is optional (aggregate reads tables without it); worker_quality raised KeyError
    rows = []
    for pair, votes in (("a", 5), ("b", 1), ("c", 6)):
        for w in range(6):
            rows.append({"worker": f"w{w}", "pair": pair, "label": "1" if w < votes else "0"})
    frame = pd.DataFrame(rows)
    quality = crowd.worker_quality(frame)
    assert quality["n_gold"].tolist() == [0] * 6 and quality["gold_accuracy"].isna().all()
    # w3 agrees with the others' majority on a, b, c (1, 0, 1): kappa 1; w0 says 1, 1, 1
    # against 1, 0, 1: p_o = 2/3 = p_e, kappa 0
    assert quality.loc["w3", "kappa"] == 1.0
    assert quality.loc["w0", "kappa"] == pytest.approx(0.0)
    kept, _ = crowd.filter_workers(frame)
    assert "w3" in set(kept["worker"]) and "w0" not in set(kept["worker"])
