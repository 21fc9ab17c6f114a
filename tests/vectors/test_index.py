"""VectorIndex: exact answers on hand-made vectors, approximate kinds against exact search."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from parakit.errors import MineError
from parakit.vectors.index import (
    EF_STEPS,
    VectorIndex,
    choose_kind,
    default_nlist,
    recall_per_query,
)


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


# -- index choice from measurement (recall targets) ----------------------------------------------


def _held_out_recall(index: VectorIndex, x: np.ndarray, rows: np.ndarray, k: int = 5) -> float:
    """Recall@k of ``index`` against exact search for collection rows ``rows`` (self left out)."""
    from parakit.vectors.index import recall_per_query

    exact = VectorIndex(kind="flat").build(_chunks(x))
    truth = exact.search(x[rows], k + 1)[1]
    found = index.search(x[rows], k + 1)[1]
    return float(recall_per_query(found, truth, rows, k).mean())


def _held_out_rows(index: VectorIndex, n: int, size: int = 1000) -> np.ndarray:
    """Rows that were not calibration queries (calibration draws with seed + 1)."""
    used = np.random.default_rng(index.seed + 1).choice(
        n, size=min(n, index.calibration_queries), replace=False
    )
    free = np.setdiff1d(np.arange(n), used)
    return np.random.default_rng(99).choice(free, size=size, replace=False)


def test_recall_per_query_known_answer():
    from parakit.vectors.index import recall_per_query

    truth = np.array([[0, 1, 2, 3], [1, 0, 5, 6]])
    found = np.array([[0, 1, 3, 9], [1, 6, 7, 8]])
    # query 0: own row 0 left out, {1,2,3} vs {1,3,9} -> 2/3; query 1: {0,5,6} vs {6,7,8} -> 1/3
    np.testing.assert_allclose(recall_per_query(found, truth, np.array([0, 1]), 3), [2 / 3, 1 / 3])


def test_flat_gives_recall_one_and_small_auto_stays_exact():
    x = _clustered(3000)
    index = VectorIndex(kind="auto", recall=0.95).build(_chunks(x), n=len(x))
    assert index.kind_ == "flat" and index.meta()["recall_estimate"] == 1.0
    assert _held_out_recall(index, x, np.arange(0, 3000, 7)) == 1.0


def test_calibrated_ivf_reaches_target_on_held_out_queries(tmp_path):
    x = _clustered(8000)
    index = VectorIndex(kind="ivf", nlist=64, recall=0.95, calibration_queries=500).build(
        _chunks(x), n=len(x)
    )
    cal = index.calibration_
    assert index.kind_ == "ivf" and cal["chosen_by"].startswith("nprobe")
    trials = cal["trials"]
    # the smallest nprobe whose lower bound meets the target; the one before did not
    assert trials[-1]["nprobe"] == index.nprobe_ and trials[-1]["lower"] >= 0.95
    assert all(t["lower"] < 0.95 for t in trials[:-1]) and len(trials) > 1
    assert _held_out_recall(index, x, _held_out_rows(index, len(x))) >= 0.95
    index.save(tmp_path / "ivf")
    again = VectorIndex.load(tmp_path / "ivf")
    assert (
        again.nprobe_ == index.nprobe_ and again.meta()["recall_estimate"] == cal["recall_estimate"]
    )
    np.testing.assert_array_equal(again.search(x[:50], 6)[1], index.search(x[:50], 6)[1])


def test_calibrated_hnsw_tunes_ef_search():
    rng = np.random.default_rng(0)  # unclustered: HNSW needs a wider search here
    x = rng.standard_normal((5000, 32)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    # a sparse graph (build breadth 16), where ef_search 8 falls short of the target
    sparse = {"hnsw_m": 8, "ef_construction": 16}
    index = VectorIndex(
        kind="hnsw", ef_search=8, recall=0.95, calibration_queries=500, **sparse
    ).build(_chunks(x), n=len(x))
    trials = index.calibration_["trials"]
    assert index.kind_ == "hnsw" and trials[0]["ef_search"] == 8 and trials[0]["lower"] < 0.95
    assert trials[-1]["ef_search"] == index.ef_search_ > 8
    assert _held_out_recall(index, x, _held_out_rows(index, len(x))) >= 0.95


def test_calibration_stops_at_the_first_breadth_that_meets_the_target():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6000, 32)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    # a sparse graph, where the target needs a breadth above 64
    index = VectorIndex(kind="hnsw", recall=0.97, hnsw_m=8, ef_construction=16).build(
        _chunks(x), n=len(x)
    )
    cal = index.calibration_
    trials = cal["trials"]
    # the default sample: 4,000 rows (the bound within ~0.003 of the mean at recall 0.95)
    assert cal["queries"] == 4000
    assert all(t["lower"] < 0.97 for t in trials[:-1]) and trials[-1]["lower"] >= 0.97
    assert index.ef_search_ == trials[-1]["ef_search"] > 64
    # from 64 up every step is tried in turn (where the graph stops varies a little: a build
    # on several threads is not repeatable) and grows by at most 1.25, so it overshoots by
    # at most that
    wide = [t["ef_search"] for t in trials if t["ef_search"] >= 64]
    steps = [v for v in EF_STEPS if v >= 64]
    assert len(wide) >= 3 and wide == steps[: len(wide)]
    assert all(b / a <= 1.25 for a, b in itertools.pairwise(steps))


def _sparse_graph(x: np.ndarray, ids: np.ndarray, **options) -> VectorIndex:
    """A graph sparse enough (M 8, build breadth 16) that the search start matters."""
    return VectorIndex(kind="hnsw", hnsw_m=8, ef_construction=16, threads=1, **options).build(
        _chunks(x), n=len(x), ids=lambda: (ids[i : i + 700] for i in range(0, len(ids), 700))
    )


def _exact_top(x: np.ndarray, ids: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """The ids of each of ``rows``' exact top ``k``, its own row left out."""
    scores = x[rows] @ x.T
    scores[np.arange(len(rows)), rows] = -np.inf
    return ids[np.argsort(-scores, axis=1, kind="stable")[:, :k]]


def test_a_self_join_searches_each_row_from_its_own_node():
    x = _clustered(6000)
    # ids that are neither positions nor sorted: the node of an id is looked up
    ids = np.random.default_rng(0).permutation(6000).astype(np.int64) * 7 + 3
    index = _sparse_graph(x, ids, ef_search=8)
    rows = np.arange(0, 6000, 5)
    truth = _exact_top(x, ids, rows, 5)
    _, from_entry = index.search(x[rows], 6)
    scores, from_own = index.search(x[rows], 6, rows=ids[rows])
    # each row comes back first (itself, score 1 at half precision), then its neighbours
    assert (from_own[:, 0] == ids[rows]).all()
    np.testing.assert_allclose(scores[:, 0], 1.0, atol=2e-3)
    # measured on this graph (one thread: repeatable): 0.860 from the entry point, 0.904
    # from the own node
    own_recall = recall_per_query(from_own, truth, ids[rows], 5).mean()
    assert own_recall >= recall_per_query(from_entry, truth, ids[rows], 5).mean() + 0.03
    # rows that are not the queries' own cost recall, never a made-up score: every score is
    # the found row's own (at half precision)
    position = {int(i): p for p, i in enumerate(ids)}
    scores, found = index.search(x[rows], 6, rows=ids[rows[::-1]])
    exact = [[x[q] @ x[position[int(i)]] for i in f] for q, f in zip(rows, found, strict=True)]
    np.testing.assert_allclose(scores, exact, atol=2e-3)
    # a query the index does not hold (-1, or an unknown id) is searched from the entry point
    missing = np.array([-1, 5], dtype=np.int64)
    assert (index.search(x[:2], 6, rows=missing)[1] == index.search(x[:2], 6)[1]).all()
    with pytest.raises(MineError, match="one index id per query: 1 rows for 2 queries"):
        index.search(x[:2], 6, rows=np.array([3]))
    with pytest.raises(MineError, match="one index id per query: 2x1 rows for 2 queries"):
        index.search(x[:2], 6, rows=np.array([[3], [4]]))


def test_a_self_join_is_calibrated_from_the_own_node(tmp_path):
    x = _clustered(6000)
    ids = np.arange(6000, dtype=np.int64)
    options = {"recall": 0.9, "calibration_queries": 2000}
    entry = _sparse_graph(x, ids, **options)
    own = _sparse_graph(x, ids, self_join=True, **options)
    assert entry.calibration_["searched_from"] == "entry point"
    assert own.calibration_["searched_from"] == "own node"
    # the same target at a narrower search (measured: 8 against 48)
    assert own.ef_search_ < entry.ef_search_
    # and it holds on rows the calibration did not draw, searched as a self-join
    rows = np.arange(1, 6000, 7)
    truth = _exact_top(x, ids, rows, 5)
    found = own.search(x[rows], 6, rows=rows)[1]
    assert recall_per_query(found, truth, rows, 5).mean() >= 0.9
    loaded = VectorIndex.load(own.save(tmp_path / "own"))
    assert loaded.self_join and loaded.meta()["self_join"]
    assert (loaded.search(x[rows], 6, rows=rows)[1] == own.search(x[rows], 6, rows=rows)[1]).all()


def test_impossible_target_falls_back_to_flat():
    x = _clustered(6000)
    index = VectorIndex(
        kind="ivfpq", nlist=32, pq_m=4, pq_bits=4, recall=0.99, calibration_queries=300
    ).build(_chunks(x), n=len(x))
    assert index.kind_ == "flat" and index.calibration_["chosen_by"].startswith("flat")
    assert index.meta()["recall_estimate"] == 1.0
    assert _held_out_recall(index, x, np.arange(0, 6000, 11)) == 1.0
    # memory-bound: exact search does not fit, so the best IVF-PQ setting is kept and reported
    bound = VectorIndex(
        kind="ivfpq",
        nlist=32,
        pq_m=4,
        pq_bits=4,
        recall=0.99,
        calibration_queries=300,
        memory_budget=1000,
    ).build(_chunks(x), n=len(x))
    assert bound.kind_ == "ivfpq" and "memory budget" in bound.calibration_["chosen_by"]
    assert bound.meta()["recall_estimate"] < 0.99


def test_auto_with_target_measures_above_the_exact_limit():
    x = _clustered(24_000, dim=16)
    index = VectorIndex(kind="auto", recall=0.9, calibration_queries=400).build(
        _chunks(x, 5000), n=len(x)
    )
    cal = index.calibration_
    assert cal["approx_kind"] == "ivf" and cal["flat_ms_per_query"] > 0
    if index.kind_ == "ivf":  # faster per query than exact search on this machine
        assert _held_out_recall(index, x, _held_out_rows(index, len(x), 500)) >= 0.9
    else:
        assert index.kind_ == "flat" and "slower" in cal["chosen_by"]


def test_bad_recall_target():
    with pytest.raises(MineError, match="recall target"):
        VectorIndex(recall=1.5).build(_chunks(np.eye(3, dtype=np.float32)))


def test_auto_with_target_uses_hnsw_for_large_collections():
    from parakit.vectors.index import HNSW_MIN

    x = _clustered(HNSW_MIN, dim=8)
    index = VectorIndex(kind="auto", recall=0.9, calibration_queries=300).build(
        _chunks(x, 10_000), n=len(x)
    )
    cal = index.calibration_
    assert cal["approx_kind"] == "hnsw" and "ef_search" in cal["trials"][0]
    assert index.kind_ in ("hnsw", "flat")


# -- compressed codes chosen by measurement (IVF-PQ / OPQ) --------------------------------------


def test_pq_sizes_and_bytes_per_vector():
    from parakit.vectors.index import pq_sizes, vector_bytes

    assert pq_sizes(32) == [4, 8, 16]
    assert pq_sizes(384) == [12, 24, 48, 96, 192]
    # flat: 4 bytes a float, no id; IVF lists: the int64 id beside the code
    assert vector_bytes("flat", 384) == 1536
    assert vector_bytes("ivf", 384) == 1544
    assert vector_bytes("ivfpq", 384, 48) == vector_bytes("ivfopq", 384, 48) == 56
    assert vector_bytes("ivfpq", 384, 48, pq_bits=4) == 32
    # a budget the raw vectors exceed means compressed codes at any size
    assert choose_kind(5_000, 384, memory_budget=5_000 * 1536 - 1) == "ivfpq"


def test_memory_bound_auto_measures_codes_smallest_first():
    x = _clustered(12_000, dim=32)
    budget = len(x) * 32 * 4 - 1  # the flat vectors do not fit, every PQ size does
    # on these noisy clusters recall@5 is about 0.12 at m=4 (PQ and OPQ) and 0.28 at m=8
    index = VectorIndex(recall=0.25, calibration_queries=400, memory_budget=budget).build(
        _chunks(x, 4000), n=len(x)
    )
    cal = index.calibration_
    tried = [(c["kind"], c["pq_m"]) for c in cal["configs"]]
    # PQ then OPQ at each size, smallest first, stopping at the first that meets the target
    assert tried == [("ivfpq", 4), ("ivfopq", 4), ("ivfpq", 8)]
    assert (
        all(c["lower"] < 0.25 for c in cal["configs"][:-1]) and cal["configs"][-1]["lower"] >= 0.25
    )
    assert (index.kind_, index.pq_m_) == ("ivfpq", 8) and "smallest code" in cal["chosen_by"]
    assert [c["bytes_per_vector"] for c in cal["configs"]] == [12, 12, 16]
    assert index.meta()["pq_m"] == 8
    assert _held_out_recall(index, x, _held_out_rows(index, len(x))) >= 0.22


def test_memory_bound_unreachable_target_keeps_the_best_code(tmp_path):
    x = _clustered(12_000, dim=32)
    budget = len(x) * (4 + 8)  # only the 4-byte codes (+ ids) fit
    index = VectorIndex(recall=0.999, calibration_queries=300, memory_budget=budget).build(
        _chunks(x, 4000), n=len(x)
    )
    cal = index.calibration_
    assert [(c["kind"], c["pq_m"]) for c in cal["configs"]] == [("ivfpq", 4), ("ivfopq", 4)]
    best = max(cal["configs"], key=lambda c: c["lower"])
    assert (index.kind_, index.pq_m_) == (best["kind"], best["pq_m"])
    assert "not reached" in cal["chosen_by"] and cal["recall_estimate"] == best["recall"]
    # what was kept is what is saved and loaded back
    folder = index.save(tmp_path / "ix")
    loaded = VectorIndex.load(folder)
    assert loaded.kind_ == index.kind_ and loaded.pq_m_ == 4 and loaded.nprobe_ == index.nprobe_
    np.testing.assert_array_equal(loaded.search(x[:50], 5)[1], index.search(x[:50], 5)[1])


def test_explicit_opq_builds_saves_and_loads(tmp_path):
    x = _clustered(12_000, dim=32)
    index = VectorIndex(kind="ivfopq", nlist=64, nprobe=16, pq_m=4).build(_chunks(x), n=len(x))
    assert index.kind_ == "ivfopq" and index.meta()["pq_m"] == 4
    assert type(index.index_).__name__ == "IndexPreTransform"  # the rotation, then IVF-PQ
    rows = np.arange(0, len(x), 37)
    assert _held_out_recall(index, x, rows) > 0.05
    loaded = VectorIndex.load(index.save(tmp_path / "opq"))
    assert loaded.kind_ == "ivfopq" and loaded.nprobe_ == 16
    np.testing.assert_array_equal(loaded.search(x[:40], 5)[1], index.search(x[:40], 5)[1])


def test_on_disk_refuses_kinds_without_mappable_lists(tmp_path):
    x = _clustered(500)
    for kind in ("hnsw", "ivfopq"):
        with pytest.raises(MineError, match="on_disk"):
            VectorIndex(kind=kind, on_disk=True, workdir=tmp_path).build(_chunks(x), n=len(x))


def test_memory_budget_option_reads_sizes_and_refuses_others():
    import typer

    from parakit.cli.options import parse_bytes

    assert parse_bytes("8G") == 8 * 2**30 and parse_bytes("1.5GiB") == 3 * 2**29
    assert parse_bytes("512m") == 512 * 2**20 and parse_bytes("1000") == 1000
    for bad in ("", "8 gigs", "-1G", "0"):
        with pytest.raises(typer.BadParameter, match="8G"):
            parse_bytes(bad)


def test_a_build_breadth_below_one_is_refused():
    x = _clustered(100)
    with pytest.raises(MineError, match="ef_construction must be >= 1, got 0") as caught:
        VectorIndex(kind="hnsw", ef_construction=0).build(_chunks(x), n=len(x))
    assert caught.value.code == "E801"


def test_hnsw_keeps_half_precision_vectors_and_finds_what_the_float32_graph_finds(tmp_path):
    import faiss

    x = _clustered(3000)
    _, truth = VectorIndex(kind="flat").build(_chunks(x)).search(x[:300], k=6)
    found = {}
    for storage, klass in (("fp16", faiss.IndexHNSWSQ), ("fp32", faiss.IndexHNSWFlat)):
        index = VectorIndex(kind="hnsw", hnsw_storage=storage, ef_search=64)
        index.build(_chunks(x), n=len(x))
        assert isinstance(faiss.downcast_index(index.index_.index), klass)
        assert index.meta()["hnsw_storage"] == storage
        scores, found[storage] = index.search(x[:300], k=6)
        # a row's own score: 1 in float32, within half precision's rounding in fp16
        np.testing.assert_allclose(scores[:, 0], 1.0, atol=1e-6 if storage == "fp32" else 2e-3)
        index.save(tmp_path / storage)
        again = VectorIndex.load(tmp_path / storage)
        assert again.hnsw_storage == storage
        np.testing.assert_array_equal(again.search(x[:300], k=6)[1], found[storage])
    for storage in found:
        recall = np.mean(
            [len(set(a) & set(b)) / 6 for a, b in zip(truth, found[storage], strict=True)]
        )
        assert recall >= 0.98, (storage, recall)
    # a graph saved before the setting existed kept float32 vectors, and loads as such
    meta = tmp_path / "fp32" / "index.json"
    saved = json.loads(meta.read_text())
    del saved["hnsw_storage"]
    meta.write_text(json.dumps(saved))
    assert VectorIndex.load(tmp_path / "fp32").hnsw_storage == "fp32"


def test_an_unknown_hnsw_storage_is_refused():
    x = _clustered(100)
    with pytest.raises(MineError, match="unknown hnsw_storage 'int4'; use one of: fp16, fp32"):
        VectorIndex(kind="hnsw", hnsw_storage="int4").build(_chunks(x), n=len(x))
