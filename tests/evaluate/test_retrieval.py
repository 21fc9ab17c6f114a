"""Retrieval evaluation (T18) and large-scale ranks (T19): hand-computed ranks and real data."""

from __future__ import annotations

import numpy as np
import pytest

from parakit.errors import EvaluationError
from parakit.evaluate.largescale import LargeScaleEvaluator, plot_large_scale
from parakit.evaluate.retrieval import RetrievalEvaluator, label_class, plot_retrieval
from parakit.schema import Pair, PairSet
from parakit.vectors.encode import TfidfEncoder


class Fixed:
    """Returns hand-chosen vectors per text."""

    def __init__(self, table):
        self.table = table

    def encode(self, texts):
        return np.asarray([self.table[t] for t in texts], dtype=np.float32)


PAIRS = PairSet(
    [Pair("0", "A", "B", "4"), Pair("1", "C", "D", "2"), Pair("2", "E", "F", "4<i")], scheme="turku"
)
# unit vectors at angles (degrees): A 0, B 10, C 90, D 200, E 45, F 5
ANGLES = {"A": 0, "B": 10, "C": 90, "D": 200, "E": 45, "F": 5}
VECS = {t: [np.cos(np.radians(a)), np.sin(np.radians(a))] for t, a in ANGLES.items()}


def test_known_ranks_and_metrics(tmp_path):
    ev = RetrievalEvaluator(PAIRS, name="t", top_n=(1, 2))
    metrics = ev(Fixed(VECS), output_path=tmp_path / "m.json")
    # A: others by angle distance F(5) B(10) E(45) C(90) D(200) -> B is 2nd
    # C: E(45) B(80) F(85) A(90) D(110) -> D is 5th ; E: F(40) B(35)... B(35) F(40) A(45) -> F 2nd
    assert ev.ranks_.tolist() == [2, 5, 2]
    assert metrics["t_top1"] == 0.0 and metrics["t_top2"] == 1.0
    assert metrics["t_n_positive"] == 2
    assert metrics["t_avg_rank_pct_2"] == pytest.approx(100 * 4 / 6)
    assert metrics["t_avg_rank_pct_4"] == pytest.approx(100 * 1 / 6)
    assert metrics["t_avg_rank_pct_4<>"] == pytest.approx(100 * 1 / 6)
    assert (tmp_path / "m.json").exists()
    assert plot_retrieval({"fixed": metrics}, tmp_path / "p.png", name="t").stat().st_size > 0


def test_label_classes():
    assert [label_class(x) for x in ("1", "3", "4<s", "4is", "x")] == ["1", "3", "4<>", "4", None]


def test_tfidf_baseline_on_swedish_test_set(data_path):
    from parakit.io import read

    pairs = read(data_path("turku/sv-test.json"))
    ev = RetrievalEvaluator(pairs, name="sv")
    metrics = ev(TfidfEncoder(ngram_range=(2, 3)).fit(ev.candidates_))
    assert metrics["sv_n_candidates"] == len(ev.candidates_) == 2154
    # measured: top-1 0.676; label 4 ranks better than label 3 (the paper's ordering)
    assert 0.6 < metrics["sv_top1"] < 0.75
    assert metrics["sv_avg_rank_pct_4"] < metrics["sv_avg_rank_pct_3"]


def test_large_scale_ranks_with_distractors(tmp_path):
    ev = LargeScaleEvaluator(PAIRS, top_n=(1, 2, 4), max_rank=4, index_kind="flat")
    extra = {
        "G": [np.cos(np.radians(3)), np.sin(np.radians(3))],
        "H": [np.cos(np.radians(50)), np.sin(np.radians(50))],
    }
    metrics = ev(Fixed({**VECS, **extra}), distractors=["G", "H", "B"])  # B: a test statement
    # A: G(3) F(5) B(10) -> 3 ; C: H(40) E(45) ... D(110) is 8th -> NA ; E: H(5) B(35) F(40) -> 3
    assert ev.ranks_.tolist() == [3, 0, 3]
    assert ev.n_collection_ == 8  # 6 statements + 2 distractors; the copy of B is merged
    assert metrics["top2_4"] == 0.0 and metrics["top4_4"] == 1.0
    assert metrics["na_2"] == 1.0
    assert plot_large_scale({"m": metrics}, tmp_path / "f.png", top_n=(1, 2, 4)).exists()


@pytest.mark.parametrize("top_n", [(0,), (1, -3)])
def test_a_top_n_cut_off_below_one_is_refused(top_n):
    # was: top0 / top-3 reported as 0.0 accuracy (exit 0)
    with pytest.raises(EvaluationError, match=r"E960.*at least 1"):
        RetrievalEvaluator(PAIRS, top_n=top_n)
    with pytest.raises(EvaluationError, match=r"E960.*at least 1"):
        LargeScaleEvaluator(PAIRS, top_n=top_n)


@pytest.mark.parametrize("max_rank", [0, -1])
def test_a_max_rank_below_one_is_refused(max_rank):
    # was: every pair NA (na_4 == 1.0) whatever the model, exit 0
    with pytest.raises(EvaluationError, match=r"E960.*max_rank must be at least 1"):
        LargeScaleEvaluator(PAIRS, top_n=(), max_rank=max_rank)


def test_eval_large_refuses_a_limit_below_one(tmp_path, capsys):
    from parakit.cli import main
    from parakit.io import write

    write(PAIRS, tmp_path / "test.jsonl")
    (tmp_path / "d.txt").write_text("G\nH\n")
    argv = ["mine", "eval-large", str(tmp_path / "test.jsonl"), "--distractors"]
    # was: an internal ValueError of itertools.islice (exit 1)
    assert main([*argv, str(tmp_path / "d.txt"), "--limit", "-1"]) == 2
    assert "--limit" in capsys.readouterr().err


def test_unlabelled_pairs_are_refused_and_a_missing_top_n_is_null_in_the_json(tmp_path, capsys):
    import json

    from parakit.cli import main
    from parakit.io import write

    unlabelled = PairSet([p.replace(label=None) for p in PAIRS], scheme="turku")
    # was: n_candidates and NaN accuracies, nothing measured, exit 0
    with pytest.raises(EvaluationError, match=r"E961.*'0' has no gold label"):
        RetrievalEvaluator(unlabelled)
    # no positive pair (one label-2 pair): top1 is undefined, written as null, not NaN
    negative = Pair("1", "the cat sat", "dogs bark", "2")
    write(PairSet([negative], scheme="turku"), tmp_path / "neg.jsonl")
    out = tmp_path / "r.json"
    assert main(["mine", "eval-retrieval", str(tmp_path / "neg.jsonl"), "-o", str(out)]) == 0
    metrics = json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(c))["tfidf"]
    assert metrics["top1"] is None and metrics["n_positive"] == 0.0
    assert metrics["avg_rank_pct_2"] == 0.0  # the only other candidate
    assert "NaN" not in capsys.readouterr().out
