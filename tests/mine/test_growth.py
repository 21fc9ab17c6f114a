"""Growing dataset (M9): threshold, protected test groups removed, versions and manifest."""

from __future__ import annotations

import json

import numpy as np

from parakit.mine.growth import GrowingDataset
from parakit.schema import Pair, PairSet


class BagOfWords:
    def __init__(self, vocab):
        self.vocab = {w: i for i, w in enumerate(vocab)}

    def encode(self, texts):
        out = np.zeros((len(texts), len(self.vocab)), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.split():
                out[row, self.vocab[word]] += 1
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def signature(self):
        return {"encoder": "bag-of-words", "size": len(self.vocab)}


class Overlap:
    """P(paraphrase) = Jaccard overlap of the word sets."""

    classes_ = np.array([0, 1])

    def predict_proba(self, pairs):
        p = np.array(
            [
                len(set(a.split()) & set(b.split())) / len(set(a.split()) | set(b.split()))
                for a, b in zip(*pairs.texts(), strict=True)
            ]
        )
        return np.column_stack([1 - p, p])


def _batch(path, rows):
    path.write_text("".join(json.dumps({"text": t, "group": g}) + "\n" for t, g in rows))
    return path


def test_grow_two_versions(tmp_path):
    enc = BagOfWords(list("abcdefgh"))
    batch1 = _batch(
        tmp_path / "b1.jsonl",
        [
            ("a b c", "t1"),
            ("a b c d", "t1"),
            ("e f", "t2"),
            ("e f g", "t2"),
            ("a h", "t3"),
            ("b h", "t3"),
        ],
    )
    protected = PairSet([Pair("p", "x", "y", "1", group="t2")], scheme="binary")
    ds = GrowingDataset(tmp_path / "ds")
    entry = ds.grow(batch1, enc, Overlap(), threshold=0.5, protected=protected, k=1)
    # t1: a b c ~ a b c d (J = 0.75) kept; t2 removed (protected group); t3: a h ~ b h (J = 1/3)
    assert entry["counts"]["added"] == 1 and entry["counts"]["removed_test_group"] == 1
    assert entry["models"]["encoder"] == {"encoder": "bag-of-words", "size": 8}
    batch2 = _batch(
        tmp_path / "b2.jsonl", [("a b c d", "t9"), ("a b c", "t9"), ("g h", "t8"), ("g h a", "t8")]
    )
    entry2 = ds.grow(batch2, enc, Overlap(), threshold=0.5, k=1)
    assert entry2["counts"]["duplicates"] == 1 and entry2["counts"]["added"] == 1
    assert entry2["counts"]["total"] == 2
    assert ds.versions() == ["v0001", "v0002"]
    texts = sorted(tuple(sorted((p.text1, p.text2))) for p in ds.pairs())
    assert texts == [("a b c", "a b c d"), ("g h", "g h a")]
    assert {p.group for p in ds.pairs()} == {"t1", "t8"}


def test_versions_whose_batches_give_the_same_pair_ids(tmp_path):
    """Every batch numbers its pairs by store row ("0-1"): a third batch read the earlier
    versions back and stopped with E102 (duplicate pair id) before ids carried the version."""
    enc = BagOfWords(list("abcdefgh"))
    ds = GrowingDataset(tmp_path / "ds")
    for n, rows in enumerate([("a b c", "a b c d"), ("e f", "e f g"), ("g h", "g h a")]):
        batch = _batch(tmp_path / f"b{n}.jsonl", [(text, f"t{n}") for text in rows])
        assert ds.grow(batch, enc, Overlap(), threshold=0.5, k=1)["counts"]["added"] == 1
    assert [p.id for p in ds.pairs()] == ["v0001:0-1", "v0002:0-1", "v0003:0-1"]
