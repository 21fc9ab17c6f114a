"""Dask scale-out: shards built on a 2-process LocalCluster answer exactly like one flat index."""

from __future__ import annotations

import numpy as np
import pytest

from parakit.mine.distributed import (
    ShardedIndex,
    build_sharded,
    build_sharded_from_embeddings,
    merge_results,
    search_sharded,
)
from parakit.vectors.encode import SentenceEncoder
from parakit.vectors.index import VectorIndex
from parakit.vectors.store import SentenceStore


def test_merge_results_known_answer():
    a = (np.array([[0.9, 0.2], [0.3, 0.1]]), np.array([[1, 2], [3, 4]]))
    b = (np.array([[0.5, 0.4], [0.8, 0.7]]), np.array([[7, 8], [9, 10]]))
    scores, ids = merge_results([a, b], 3)
    assert ids.tolist() == [[1, 7, 8], [9, 10, 3]]
    np.testing.assert_allclose(scores[1], [0.8, 0.7, 0.3])


def test_shards_from_embedding_chunks_match_exact_search(tmp_path, dask_client):
    client = dask_client
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((1050, 24)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    (tmp_path / "emb").mkdir()
    for c in range(0, 1050, 200):  # a mining work folder's layout: 00000.npy, 00001.npy, ...
        np.save(tmp_path / "emb" / f"{c // 200:05d}.npy", vectors[c : c + 200])
    shards = build_sharded_from_embeddings(tmp_path / "emb", tmp_path / "shards", 3, client)
    assert sum(s["ntotal"] for s in shards) == 1050 and len(shards) == 3
    sharded = ShardedIndex.load(tmp_path / "shards")
    scores, ids = sharded.search(vectors[::50], 7, client=client)
    exact_scores, exact_ids = (
        VectorIndex(kind="flat").build(lambda: iter([vectors])).search(vectors[::50], 7)
    )
    np.testing.assert_array_equal(ids, exact_ids)
    np.testing.assert_allclose(scores, exact_scores, atol=1e-5)
    local = sharded.search(vectors[::50], 7)  # without a client: sequential, same answer
    np.testing.assert_array_equal(local[1], ids)


def test_lost_worker_mid_run_gives_the_same_output(tmp_path, two_workers):
    """A 2-process LocalCluster loses a worker (SIGKILL) while searching every chunk of a
    mining run against the shards; the scheduler re-runs the lost tasks and the neighbours are
    exactly those of a run without a cluster."""
    import os
    import signal
    import threading
    import time

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((16 * 800, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    emb = tmp_path / "emb"
    emb.mkdir()
    for c in range(16):
        np.save(emb / f"{c:05d}.npy", vectors[c * 800 : (c + 1) * 800])
    with two_workers() as client:
        build_sharded_from_embeddings(emb, tmp_path / "shards", 2, client)
        expected = search_sharded(emb, tmp_path / "shards", tmp_path / "knn-ref", 6)
        out = tmp_path / "knn"
        result: dict = {}
        job = threading.Thread(
            target=lambda: result.update(
                answer=search_sharded(emb, tmp_path / "shards", out, 6, client)
            )
        )
        pids = client.run(os.getpid)
        job.start()
        deadline = time.monotonic() + 40
        parts = "*.shard-*.npz"  # one per chunk and shard, merged per chunk once all exist
        while len(list(out.glob(parts))) < 1 and time.monotonic() < deadline:
            time.sleep(0.005)
        done_at_kill = len(list(out.glob(parts)))
        victim = sorted(pids)[0]
        os.kill(pids[victim], signal.SIGKILL)
        job.join(timeout=180)  # a loaded machine (CI) needs more than a minute
        assert not job.is_alive(), "the job did not finish after losing a worker"
        assert 1 <= done_at_kill < 32, "the worker was not killed mid-search"
        assert pids[victim] not in client.run(os.getpid).values()
    np.testing.assert_array_equal(result["answer"][1], expected[1])
    np.testing.assert_array_equal(result["answer"][0], expected[0])
    exact = VectorIndex(kind="flat").build(lambda: iter([vectors])).search(vectors[::97], 6)
    np.testing.assert_array_equal(expected[1][::97], exact[1])


@pytest.mark.slow
def test_sharded_embedding_on_local_cluster(tmp_path, tiny_model, mine_words, two_workers):
    words = mine_words

    rng = np.random.default_rng(5)
    texts = [" ".join(rng.choice(words, size=rng.integers(3, 8))) for _ in range(300)]
    store = SentenceStore.write(tmp_path / "store", ({"text": t} for t in texts))
    with two_workers() as client:
        shards = build_sharded(store.path, tiny_model, tmp_path / "shards", 3, client)
        assert [s["ntotal"] for s in shards] == [100, 100, 100]
        enc = SentenceEncoder(tiny_model)
        queries = enc.encode(texts[:20])
        scores, ids = ShardedIndex.load(tmp_path / "shards").search(queries, 5, client=client)
    vectors = enc.encode(texts)
    exact_scores, _exact_ids = (
        VectorIndex(kind="flat").build(lambda: iter([vectors])).search(queries, 5)
    )
    np.testing.assert_allclose(scores, exact_scores, atol=1e-5)
    assert (ids[:, 0] == np.arange(20)).all()


def test_each_worker_searches_its_own_shard_and_frees_it(tmp_path, dask_client):
    """The search pins every shard's tasks to one worker: with two shards on two workers, each
    worker runs its shard's nine tasks (a worker holding every shard would not fit in memory
    at 10M sentences), frees the shard once the search is done, and the result is the exact
    top k."""
    from distributed import get_task_stream

    from parakit.mine.distributed import _shard

    client = dask_client
    rng = np.random.default_rng(2)
    vectors = rng.standard_normal((900, 16)).astype(np.float32)
    (tmp_path / "emb").mkdir()
    for c in range(0, 900, 100):
        np.save(tmp_path / "emb" / f"{c // 100:05d}.npy", vectors[c : c + 100])
    build_sharded_from_embeddings(tmp_path / "emb", tmp_path / "shards", 2, client)
    with get_task_stream(client) as stream:
        scores, ids = search_sharded(
            tmp_path / "emb", tmp_path / "shards", tmp_path / "knn", 4, client
        )
    searched = {}  # worker -> how many search tasks it ran
    for task in stream.data:
        if task["key"].startswith("search_part"):
            searched[task["worker"]] = searched.get(task["worker"], 0) + 1
    assert sorted(searched.values()) == [9, 9]  # each worker searched its shard's 9 chunks
    held = client.run(lambda: _shard.cache_info().currsize)
    assert sorted(held.values()) == [0, 0]  # and let the shard go once the search was done
    exact = VectorIndex(kind="flat").build(lambda: iter([vectors])).search(vectors, 4)
    np.testing.assert_array_equal(ids, exact[1])
    np.testing.assert_allclose(scores, exact[0], atol=1e-5)
    assert not list((tmp_path / "knn").glob("*.shard-*"))  # the per-shard parts are merged away


def test_pinned_tasks_run_on_their_worker(dask_client):
    """``run_tasks(..., pins=...)``: each call runs on the worker it is pinned to."""
    import os

    from parakit.mine.distributed import run_tasks

    client = dask_client
    pids = client.run(os.getpid)  # worker address -> its process id
    first, second = sorted(pids)
    pins = [first, second, second, first, second, first]
    ran = run_tasks(client, os.getpid, [()] * len(pins), "pid", pins=pins)
    assert ran == [pids[pin] for pin in pins]


def test_a_collection_searching_its_shards_starts_from_its_own_nodes(tmp_path, monkeypatch):
    """The collection's own chunks pass their rows' collection ids to every shard (an HNSW
    shard starts its own rows at their node, the others at the entry point); a query folder
    of other sentences passes none."""
    from parakit.mine.distributed import search_sharded

    rng = np.random.default_rng(2)
    vectors = rng.standard_normal((900, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for name in ("emb", "qemb"):
        (tmp_path / name).mkdir()
        for c in range(0, 900, 300):
            np.save(tmp_path / name / f"{c // 300:05d}.npy", vectors[c : c + 300])
    options = {"hnsw_m": 8, "ef_search": 64, "threads": 1}
    build_sharded_from_embeddings(
        tmp_path / "emb", tmp_path / "shards", 2, None, None, "hnsw", options
    )
    passed = []
    search = VectorIndex.search

    def spy(self, queries, k, rows=None):
        passed.append(None if rows is None else np.asarray(rows).copy())
        return search(self, queries, k, rows)

    monkeypatch.setattr(VectorIndex, "search", spy)
    emb = tmp_path / "emb"
    ids = search_sharded(emb, tmp_path / "shards", tmp_path / "knn", 4, collection_emb=emb)[1]
    # 3 chunks x 2 shards, each told the collection rows of its chunk
    assert len(passed) == 6 and all(rows is not None for rows in passed)
    np.testing.assert_array_equal(np.sort(np.concatenate(passed)), np.repeat(np.arange(900), 2))
    assert (ids[:, 0] == np.arange(900)).all()  # each sentence finds itself first
    passed.clear()
    search_sharded(tmp_path / "qemb", tmp_path / "shards", tmp_path / "qknn", 4, collection_emb=emb)
    assert len(passed) == 6 and all(rows is None for rows in passed)
