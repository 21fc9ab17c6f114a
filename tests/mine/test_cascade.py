"""The mining cascade: a cheap encoder mines, a better one re-scores the survivors' sentences,
each embedded once, checkpointed, and re-ranks (known answers on a hand-made collection)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from parakit.errors import MineError
from parakit.mine.cascade import teacher_ranks, teacher_scores
from parakit.mine.mining import mine
from parakit.vectors.store import SentenceStore

VOCAB = ["a", "b", "c", "d", "e", "f", "g"]


class Counting:
    """L2-normalised word counts over ``vocab`` with word weights; counts the texts encoded."""

    def __init__(self, weights: dict[str, float] | None = None) -> None:
        self.weights = weights or {}
        self.encoded: list[str] = []

    def encode(self, texts):
        texts = list(texts)
        self.encoded += texts
        out = np.zeros((len(texts), len(VOCAB)), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.split():
                out[row, VOCAB.index(word)] += self.weights.get(word, 1.0)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def signature(self):
        return {"model": "counting", "weights": self.weights}


def _cos(u: str, v: str, encoder: Counting) -> float:
    a, b = encoder.encode([u]), encoder.encode([v])
    return float(a[0] @ b[0])


def test_teacher_ranks_known_answers():
    rows, cols = np.array([0, 0, 1, 2]), np.array([1, 2, 2, 3])
    scores = np.array([0.9, 0.5, 0.7, np.nan])
    # query mining: among the pairs of the query row only; NaN last
    assert teacher_ranks(rows, cols, scores, self_mining=False).tolist() == [1, 2, 1, 1]
    # self-mining: among all pairs of each of its two sentences, the better of the two ranks
    # (pair 1 is 2nd for sentence 0 (0.9 > 0.5) and for sentence 2 (0.7 > 0.5 > NaN))
    assert teacher_ranks(rows, cols, scores, self_mining=True).tolist() == [1, 2, 1, 1]
    scores = np.array([0.9, 0.95, 0.7, 0.1])
    # pair 2 (1, 2) is 2nd for sentence 1 (after pair 0) and for sentence 2 (after pair 1)
    assert teacher_ranks(rows, cols, scores, self_mining=True).tolist() == [1, 1, 2, 1]
    assert teacher_ranks(rows, cols, scores, self_mining=False).tolist() == [2, 1, 1, 1]


def test_teacher_scores_embed_each_kept_sentence_once_and_resume(tmp_path):
    texts = ["a b", "a b c", "d e", "d e f", "a d"]
    collection = tmp_path / "c.txt"
    collection.write_text("\n".join(texts) + "\n")
    from parakit.mine.mining import build_store

    store = build_store(collection, tmp_path / "store", "text", "source")
    assert isinstance(store, SentenceStore)
    rows, cols = np.array([0, 0, 2, 3]), np.array([1, 4, 3, 4])
    keep = np.array([True, False, True, False])  # the classifier dropped (0, 4) and (3, 4)
    teacher = Counting({"c": 3.0})
    scores = teacher_scores(tmp_path / "rs", teacher, store, store, rows, cols, keep, True, 2)
    # only the sentences of kept pairs, each once: "a d" (row 4) is in no kept pair
    assert sorted(teacher.encoded) == sorted(["a b", "a b c", "d e", "d e f"])
    assert np.isnan(scores[1]) and np.isnan(scores[3])
    for i in (0, 2):
        want = _cos(texts[rows[i]], texts[cols[i]], Counting({"c": 3.0}))
        assert scores[i] == pytest.approx(want, abs=1e-6)
    # a rerun reads the checkpoints: nothing embedded again, the same scores
    again = Counting({"c": 3.0})
    repeat = teacher_scores(tmp_path / "rs", again, store, store, rows, cols, keep, True, 2)
    assert again.encoded == [] and np.allclose(repeat[[0, 2]], scores[[0, 2]])
    # other survivors than the checkpoints were made for: those are redone, not misread
    fewer = np.array([True, False, False, False])
    third = Counting({"c": 3.0})
    scores2 = teacher_scores(tmp_path / "rs", third, store, store, rows, cols, fewer, True, 2)
    assert sorted(third.encoded) == ["a b", "a b c"] and scores2[0] == pytest.approx(scores[0])


def _collection(tmp_path: Path) -> Path:
    texts = ["a b c", "a b d", "a b e", "a c d", "e f g", "e f a", "f g c"]
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    return path


def test_mine_cascade_rescores_and_keeps_each_sentences_teacher_best(tmp_path):
    collection = _collection(tmp_path)
    cheap, teacher = Counting(), Counting({"a": 0.2, "b": 0.2, "c": 4.0, "d": 4.0})
    result = mine(
        collection, tmp_path / "w", cheap, output=tmp_path / "p.jsonl", k=3,
        rescorer=teacher, rescore_k=1, progress=False,
    )  # fmt: skip
    lines = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()[1:]]
    assert result.n_written == len(lines) > 0
    for line in lines:
        meta = line["metadata"]
        assert meta["teacher_score"] == pytest.approx(
            _cos(line["text1"], line["text2"], Counting(teacher.weights)), abs=1e-5
        )
        assert meta["teacher_rank"] == 1
    # the run without the cascade lists every candidate with its teacher rank: the kept pairs
    # are exactly those ranked first by the teacher for one of their sentences
    full = mine(
        collection, tmp_path / "w2", Counting(), output=tmp_path / "all.jsonl", k=3,
        rescorer=Counting(teacher.weights), progress=False,
    )  # fmt: skip
    every = [json.loads(x) for x in (tmp_path / "all.jsonl").read_text().splitlines()[1:]]
    assert full.n_written == result.n_candidates
    best = {(x["text1"], x["text2"]) for x in every if x["metadata"]["teacher_rank"] == 1}
    assert {(x["text1"], x["text2"]) for x in lines} == best
    assert "rescore" in result.seconds
    # each sentence was embedded once by the teacher; a rerun embeds nothing again
    assert len(teacher.encoded) == len(set(teacher.encoded)) == 7
    again = Counting(teacher.weights)
    mine(
        collection, tmp_path / "w", Counting(), output=tmp_path / "p2.jsonl", k=3,
        rescorer=again, rescore_k=1, progress=False,
    )  # fmt: skip
    assert again.encoded == []
    assert (tmp_path / "p2.jsonl").read_text().splitlines()[1:] == (
        (tmp_path / "p.jsonl").read_text().splitlines()[1:]
    )


def test_cascade_options_need_a_rescorer_and_a_changed_rescorer_is_a_new_job(tmp_path):
    collection = _collection(tmp_path)
    with pytest.raises(MineError, match="rescorer"):
        mine(collection, tmp_path / "w", Counting(), k=2, rescore_k=1, progress=False)
    with pytest.raises(MineError, match="at least 1"):
        mine(collection, tmp_path / "w", Counting(), k=2, rescorer=Counting(), rescore_k=0)
    mine(collection, tmp_path / "w", Counting(), k=2, rescorer=Counting(), progress=False)
    with pytest.raises(MineError, match="other settings") as error:
        mine(collection, tmp_path / "w", Counting(), k=2, rescorer=Counting({"a": 2.0}))
    assert error.value.code == "E802"
