"""VectorIndex: exact answers on hand-made vectors, approximate kinds against exact search."""

from __future__ import annotations

import numpy as np
import pytest

from parakit.errors import MineError
from parakit.vectors.index import VectorIndex, choose_kind, default_nlist


def _clustered(n: int = 4000, dim: int = 16, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, dim))
    x = centres[rng.integers(0, 40, n)] + 0.3 * rng.standard_normal((n, dim))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32)


def _chunks(x: np.ndarray, size: int = 700):
    return lambda: (x[i : i + size] for i in range(0, len(x), size))


def test_flat_known_answer_cosine_and_l2():
    v = np.array([[1, 0], [0.8, 0.6], [0, 1], [-1, 0]], dtype=np.float32)
    index = VectorIndex(kind="flat").build(_chunks(v, 3))
    scores, ids = index.search(v[:1], k=4)
    assert ids[0].tolist() == [0, 1, 2, 3]
    np.testing.assert_allclose(scores[0], [1.0, 0.8, 0.0, -1.0], atol=1e-6)
    l2 = VectorIndex(kind="flat", metric="l2").build(_chunks(v, 3))
    scores, ids = l2.search(v[:1], k=2)
    assert ids[0].tolist() == [0, 1]
    np.testing.assert_allclose(scores[0], [0.0, -(0.2**2 + 0.6**2)], atol=1e-6)


def test_missing_neighbours_are_minus_one():
    v = np.eye(3, dtype=np.float32)
    scores, ids = VectorIndex(kind="flat").build(_chunks(v)).search(v[:1], k=5)
    assert ids[0, 3:].tolist() == [-1, -1] and np.isinf(scores[0, 3:]).all()


def test_auto_kind_by_size():
    assert choose_kind(10_000, 384) == "flat"
    assert choose_kind(2_000_000, 384) == "ivf"
    assert choose_kind(2_000_000, 384, memory_budget=1 << 30) == "ivfpq"
    assert choose_kind(500, 384, on_disk=True) == "ivf"
    assert default_nlist(1_000_000) == 4000


@pytest.mark.parametrize(
    ("kind", "options", "min_recall"),
    [
        ("ivf", {"nlist": 40, "nprobe": 8}, 0.95),
        ("hnsw", {}, 0.95),
        ("ivfpq", {"nlist": 40, "nprobe": 8, "pq_m": 8, "pq_bits": 4}, 0.3),
        ("ivf", {"nlist": 40, "nprobe": 8, "on_disk": True}, 0.95),
    ],
)
def test_approximate_recall_and_save_load(tmp_path, kind, options, min_recall):
    x = _clustered()
    exact = VectorIndex(kind="flat").build(_chunks(x))
    _, truth = exact.search(x[:200], k=5)
    folder = tmp_path / kind
    index = VectorIndex(kind=kind, workdir=folder, **options).build(_chunks(x), n=len(x))
    _, found = index.search(x[:200], k=5)
    recall = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(truth, found, strict=True)])
    assert recall >= min_recall
    index.save(folder)
    again = VectorIndex.load(folder)
    assert again.ntotal_ == len(x) and again.kind_ == kind
    np.testing.assert_array_equal(again.search(x[:200], k=5)[1], found)


def test_custom_ids_and_errors():
    v = np.eye(4, dtype=np.float32)
    index = VectorIndex(kind="flat").build(
        _chunks(v, 2), ids=lambda: iter([np.array([10, 11]), np.array([12, 13])])
    )
    assert index.search(v[2:3], k=1)[1][0, 0] == 12
    with pytest.raises(MineError, match="E801"):
        index.search(np.ones((1, 3), dtype=np.float32), k=1)
    with pytest.raises(MineError, match="unknown index kind"):
        VectorIndex(kind="lsh").build(_chunks(v))
    with pytest.raises(MineError, match="no index.faiss"):
        VectorIndex.load("/nonexistent-folder")
