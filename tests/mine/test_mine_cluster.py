"""The whole ``mine run`` on a Dask cluster: every stage a task with one atomic output, the
same pairs as the one-process run, a worker SIGKILLed mid-run, a rerun that resumes."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import numpy as np
import pytest

from parakit.errors import MineError
from parakit.io import read
from parakit.mine.distributed import (
    build_sharded_from_embeddings,
    plan_shards,
    plan_source_shards,
)
from parakit.mine.mining import mine
from parakit.schema import Pair, PairSet
from parakit.vectors.encode import SentenceEncoder

pytest.importorskip("distributed")


def _pairs(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    return {
        row["id"]: row
        for row in (json.loads(line) for line in lines[1:])  # line 0: the header
    }


def test_plan_shards_cuts_rows_not_files():
    # one 5,000-row chunk asked for 2 shards: two shards (the run got one, silently)
    plan = plan_shards(["00000.npy"], [5000], [0], 2)
    assert plan == [[("00000.npy", 0, 2500, 0)], [("00000.npy", 2500, 5000, 0)]]
    plan = plan_shards(["a", "b", "c"], [4, 4, 2], [0, 4, 8], 3)
    assert [sum(hi - lo for _, lo, hi, _ in parts) for parts in plan] == [3, 3, 4]
    assert plan[1] == [("a", 3, 4, 0), ("b", 0, 2, 4)]
    with pytest.raises(MineError, match="between 1 and the 10 vectors"):
        plan_shards(["a", "b", "c"], [4, 4, 2], [0, 4, 8], 11)


def test_shards_of_one_chunk_hold_every_vector_once(tmp_path):
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((500, 8)).astype(np.float32)
    (tmp_path / "emb").mkdir()
    np.save(tmp_path / "emb" / "00000.npy", vectors)
    shards = build_sharded_from_embeddings(tmp_path / "emb", tmp_path / "shards", 2, None)
    assert [s["ntotal"] for s in shards] == [250, 250]


def _sentences(words, n, seed):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(words, size=rng.integers(3, 9))) for _ in range(n)]


def _mine_losing_a_worker(client, work, n_chunks, run):
    """``run()`` (a ``mine`` on ``client`` in ``work``) in a thread, one of the two workers
    SIGKILLed once two embedding chunks are written; returns what ``run()`` returned."""
    pids = client.run(os.getpid)
    result: dict = {}
    job = threading.Thread(target=lambda: result.update(run=run()))
    job.start()
    deadline = time.monotonic() + 600  # a loaded machine starts the workers' model slowly
    while len(list(work.glob("emb/*.npy"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.005)
    done_at_kill = len(list(work.glob("emb/*.npy")))
    victim = sorted(pids)[0]
    os.kill(pids[victim], signal.SIGKILL)
    job.join(timeout=300)
    assert not job.is_alive(), "the run did not finish after losing a worker"
    assert 2 <= done_at_kill < n_chunks, "the worker was not killed mid-run"
    assert pids[victim] not in client.run(os.getpid).values()
    return result["run"]


def test_mine_on_a_cluster_equals_one_process_with_a_worker_killed(
    tmp_path, tiny_model, mine_words, two_workers
):
    from parakit.models.base import make_model

    texts = list(dict.fromkeys(_sentences(mine_words, 700, 11)))
    collection = tmp_path / "sentences.txt"
    collection.write_text("\n".join(texts) + "\n", encoding="utf-8")
    train = PairSet(
        [
            Pair(f"t{n}", a, b, label="1" if n % 2 else "0")
            for n, (a, b) in enumerate(zip(texts[:60], texts[60:120], strict=True))
        ],
        scheme="binary",
    )
    classifier = make_model("bow").fit(train)
    encoder = SentenceEncoder(tiny_model, precision="fp32")
    settings = dict(k=3, classifier=classifier, chunk_size=40, rerank_batch=150, progress=False)
    alone = mine(collection, tmp_path / "w1", encoder, tmp_path / "alone.jsonl", **settings)

    work = tmp_path / "w2"
    with two_workers() as client:
        run = _mine_losing_a_worker(
            client, work, -(-len(texts) // 40),
            lambda: mine(
                collection, work, encoder, tmp_path / "cluster.jsonl", client=client, **settings
            ),
        )  # fmt: skip
        assert sorted(run.index) == ["shard-00000", "shard-00001"]
        assert sum(meta["ntotal"] for meta in run.index.values()) == len(texts)

        one, two = _pairs(tmp_path / "alone.jsonl"), _pairs(tmp_path / "cluster.jsonl")
        assert alone.n_written == run.n_written == len(one) > len(texts)
        assert one.keys() == two.keys()
        for key, row in one.items():
            other = two[key]["metadata"]
            assert other["rank"] == row["metadata"]["rank"]
            assert other["score"] == pytest.approx(row["metadata"]["score"], abs=1e-5)
            assert other["p_paraphrase"] == pytest.approx(row["metadata"]["p_paraphrase"])

        # a rerun resumes: every checkpoint is there, nothing is embedded or searched again
        stamps = {p: p.stat().st_mtime_ns for p in work.glob("*/*.np[yz]")}
        again = mine(collection, work, encoder, tmp_path / "a.jsonl", client=client, **settings)
        assert {p: p.stat().st_mtime_ns for p in work.glob("*/*.np[yz]")} == stamps
        assert again.n_written == run.n_written
        assert _pairs(tmp_path / "a.jsonl").keys() == two.keys()


def _two_sources(tmp_path, words, n=420, seed=7):
    """A JSONL collection of two interleaved sources, two thirds ``opus``, a third ``pb``."""
    texts = list(dict.fromkeys(_sentences(words, n, seed)))
    records = [{"text": t, "source": "pb" if n % 3 == 1 else "opus"} for n, t in enumerate(texts)]
    path = tmp_path / "two.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path, records


def test_plan_source_shards_keeps_each_source_apart():
    codes = np.array([0, 1, 0, 0, 1, 0, 1, 0, 0])
    plan = plan_source_shards(["a", "b"], [5, 4], [0, 5], codes, 3)
    # at most ceil(9 / 3) = 3 rows a shard: source 0 (6 rows) in two shards, source 1 in one
    assert [source for source, _ in plan] == [0, 0, 1]
    assert plan[0][1] == [("a", 0, 4, 0)]  # rows 0, 2, 3 of source 0 (row 1 is left out)
    assert plan[1][1] == [("b", 0, 4, 5)]  # rows 5, 7, 8
    assert plan[2][1] == [("a", 1, 5, 0), ("b", 0, 2, 5)]


def test_same_source_shards_give_the_one_process_pairs(tmp_path, mine_words):
    # no cluster: the sharded path, its tasks run here; queries too (a source the collection
    # lacks gets no neighbours)
    from parakit.vectors.encode import TfidfEncoder

    collection, records = _two_sources(tmp_path, mine_words)
    encoder = TfidfEncoder((2, 3), dense=True).fit([r["text"] for r in records])
    settings = dict(k=3, index_kind="flat", chunk_size=50, same_source=True, progress=False)
    one = mine(collection, tmp_path / "w1", encoder, tmp_path / "one.jsonl", **settings)
    three = mine(
        collection, tmp_path / "w2", encoder, tmp_path / "three.jsonl", shards=3, **settings
    )
    lines = [
        (tmp_path / n).read_text(encoding="utf-8").splitlines()[1:]
        for n in ("one.jsonl", "three.jsonl")
    ]
    assert len(lines[0]) > len(records) and lines[0] == lines[1]
    assert one.n_written == three.n_written
    assert sorted(meta["source"] for meta in three.index.values()) == ["opus", "opus", "pb"]
    pairs = [json.loads(line) for line in lines[0]]
    assert all("source2" not in p["metadata"] for p in pairs)  # never across sources

    queries = tmp_path / "q.jsonl"
    asked = [*records[:40:3], {"text": " ".join(mine_words[:4]), "source": "elsewhere"}]
    queries.write_text("".join(json.dumps(r) + "\n" for r in asked), encoding="utf-8")
    settings["queries"] = queries
    mine(collection, tmp_path / "w3", encoder, tmp_path / "q1.jsonl", **settings)
    mine(collection, tmp_path / "w4", encoder, tmp_path / "q2.jsonl", shards=2, **settings)
    q1, q2 = (
        (tmp_path / n).read_text(encoding="utf-8").splitlines()[1:]
        for n in ("q1.jsonl", "q2.jsonl")
    )
    assert q1 and q1 == q2
    assert not any(json.loads(line)["source"] == "elsewhere" for line in q1)


def test_same_source_searches_only_the_shards_of_a_chunks_sources(
    tmp_path, mine_words, monkeypatch
):
    """A chunk is searched against a same-source shard only when one of its rows is of that
    source; a query chunk whose source no shard holds gets no search and no neighbours."""
    from parakit.mine import distributed
    from parakit.vectors.encode import TfidfEncoder

    texts = list(dict.fromkeys(_sentences(mine_words, 140, 5)))[:100]
    # sources in blocks: chunks of 20 rows hold one source each (3 opus chunks, 2 pb chunks)
    records = [{"text": t, "source": "opus" if n < 60 else "pb"} for n, t in enumerate(texts)]
    collection = tmp_path / "blocks.jsonl"
    collection.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    encoder = TfidfEncoder((2, 3), dense=True).fit(texts)
    settings = dict(k=3, index_kind="flat", chunk_size=20, same_source=True, progress=False)
    calls = []
    real = distributed.search_part
    monkeypatch.setattr(
        distributed, "search_part", lambda *a, **kw: calls.append(a[1]) or real(*a, **kw)
    )
    one = mine(collection, tmp_path / "w1", encoder, tmp_path / "one.jsonl", **settings)
    assert calls == []  # one process: no shards
    sharded = mine(
        collection, tmp_path / "w2", encoder, tmp_path / "three.jsonl", shards=3, **settings
    )
    # at most ceil(100 / 3) = 34 rows a shard: each source in two shards
    assert sorted(m["source"] for m in sharded.index.values()) == ["opus", "opus", "pb", "pb"]
    # 3 opus chunks x 2 opus shards + 2 pb chunks x 2 pb shards (was 5 x 4 = 20 tasks)
    assert len(calls) == 3 * 2 + 2 * 2
    assert _pairs(tmp_path / "one.jsonl") == _pairs(tmp_path / "three.jsonl")
    assert one.n_written == sharded.n_written > 0

    queries = tmp_path / "q.jsonl"
    asked = [{"text": f"{w} {w}", "source": "elsewhere"} for w in mine_words[:25]]
    asked += [records[61], records[62]]  # a second chunk: pb rows only
    queries.write_text("".join(json.dumps(r) + "\n" for r in asked), encoding="utf-8")
    calls.clear()
    mine(
        collection, tmp_path / "w3", encoder, tmp_path / "q.jsonl.out", shards=3,
        queries=queries, **settings,
    )  # fmt: skip
    assert len(calls) == 2  # the first query chunk has no shard to search, the second two
    found = [json.loads(line) for line in (tmp_path / "q.jsonl.out").read_text().splitlines()[1:]]
    assert found and {p["source"] for p in found} == {"pb"}


def test_same_source_on_a_cluster_equals_one_process_with_a_worker_killed(
    tmp_path, tiny_model, mine_words, two_workers
):
    collection, records = _two_sources(tmp_path, mine_words, n=500, seed=13)
    encoder = SentenceEncoder(tiny_model, precision="fp32")
    settings = dict(k=3, chunk_size=30, same_source=True, progress=False)
    alone = mine(collection, tmp_path / "w1", encoder, tmp_path / "alone.jsonl", **settings)
    work = tmp_path / "w2"
    with two_workers() as client:
        run = _mine_losing_a_worker(
            client, work, -(-len(records) // 30),
            lambda: mine(
                collection, work, encoder, tmp_path / "cluster.jsonl", client=client, shards=3,
                **settings,
            ),
        )  # fmt: skip
        assert sorted(meta["source"] for meta in run.index.values()) == ["opus", "opus", "pb"]
        one, two = _pairs(tmp_path / "alone.jsonl"), _pairs(tmp_path / "cluster.jsonl")
        assert alone.n_written == run.n_written == len(one) > len(records)
        assert one.keys() == two.keys()
        for key, row in one.items():
            assert two[key]["source"] == row["source"]
            assert two[key]["metadata"]["rank"] == row["metadata"]["rank"]
            assert two[key]["metadata"]["score"] == pytest.approx(
                row["metadata"]["score"], abs=1e-5
            )

        # a rerun resumes: embeddings, shards and searched chunks are all found; its output
        # as parts, each written by a task on the workers
        stamps = {p: p.stat().st_mtime_ns for p in work.glob("**/*.np[yz]")}
        stamps.update({p: p.stat().st_mtime_ns for p in work.glob("shards/*/index.faiss")})
        again = mine(
            collection, work, encoder, tmp_path / "again", client=client, shards=3,
            output_parts=3, **settings,
        )  # fmt: skip
        now = {p: p.stat().st_mtime_ns for p in work.glob("**/*.np[yz]")}
        now.update({p: p.stat().st_mtime_ns for p in work.glob("shards/*/index.faiss")})
        assert now == stamps
        assert again.n_written == run.n_written
        assert [p.id for p in read(tmp_path / "again")] == list(two)


def test_exact_ties_are_decided_by_row_id_in_one_index_and_in_shards(tmp_path):
    # sentences that differ only in case embed identically with a lowercasing (static)
    # encoder: the cluster benchmark kept row 832 where the one-process run kept 867
    from parakit.mine.distributed import ShardedIndex
    from parakit.vectors.index import VectorIndex

    rng = np.random.default_rng(3)
    base = rng.standard_normal((300, 16)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    vectors = base.copy()
    for a, b in ((10, 250), (10, 120), (40, 290), (77, 78)):  # exact duplicates, far apart
        vectors[b] = vectors[a]
    (tmp_path / "emb").mkdir()
    np.save(tmp_path / "emb" / "00000.npy", vectors)
    one = VectorIndex(kind="flat").build(lambda: iter([vectors]))
    build_sharded_from_embeddings(tmp_path / "emb", tmp_path / "shards", 3, None)
    sharded = ShardedIndex.load(tmp_path / "shards")
    for k in (1, 2, 3, 6):
        s1, i1 = one.search(vectors, k)
        s2, i2 = sharded.search(vectors, k)
        np.testing.assert_array_equal(i1, i2)
        np.testing.assert_allclose(s1, s2, atol=1e-6)
    ids = one.search(vectors[[10]], 3)[1][0].tolist()
    assert ids == [10, 120, 250]  # three equal scores: by row id


def test_case_variants_tie_the_same_way_in_one_index_and_in_shards(tmp_path, mine_words):
    # a lowercasing encoder gives case variants identical vectors; an index's float32 scores
    # of two identical rows may still differ in the last bit (BLAS edge kernels), which made
    # the 50K cluster benchmark order 8 of 122,892 pairs differently: scores are exact now
    from parakit.vectors.encode import TfidfEncoder

    base = list(dict.fromkeys(_sentences(mine_words, 1500, 5)))
    variants = [t.upper() for t in base[::37]] + [t.title() for t in base[5::53]]
    texts = base + [t for t in variants if t not in set(base)]
    collection = tmp_path / "c.txt"
    collection.write_text("\n".join(texts) + "\n", encoding="utf-8")
    encoder = TfidfEncoder((2, 3), dense=True).fit(texts)
    settings = dict(k=4, index_kind="flat", chunk_size=300, progress=False)
    mine(collection, tmp_path / "w1", encoder, tmp_path / "one.jsonl", **settings)
    mine(collection, tmp_path / "w2", encoder, tmp_path / "three.jsonl", shards=3, **settings)
    one = (tmp_path / "one.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    three = (tmp_path / "three.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    assert len(one) > len(texts) and one == three
    # a variant and its original are neighbours at an exact tie, the smaller row first
    pairs = [json.loads(line) for line in one]
    tied = [p for p in pairs if p["text1"].lower() == p["text2"].lower()]
    assert len(tied) >= len(variants) - 2
    assert all(p["metadata"]["score"] == pytest.approx(1.0) for p in tied)


def test_a_rerun_with_other_shards_rebuilds_them(tmp_path, mine_words):
    """The same work folder mined again with another shard count (another cluster size): the
    shards of the old plan are rebuilt and their search results not taken for the new ones,
    so the run equals a fresh one."""
    from parakit.vectors.encode import TfidfEncoder

    collection, records = _two_sources(tmp_path, mine_words)
    encoder = TfidfEncoder((2, 3), dense=True).fit([r["text"] for r in records])
    settings = dict(k=3, index_kind="flat", chunk_size=50, progress=False)
    mine(collection, tmp_path / "w", encoder, tmp_path / "b.jsonl", shards=2, **settings)
    again = mine(collection, tmp_path / "w", encoder, tmp_path / "a.jsonl", shards=3, **settings)
    fresh = mine(collection, tmp_path / "f", encoder, tmp_path / "f.jsonl", shards=3, **settings)
    assert [meta["ntotal"] for meta in again.index.values()] == [
        meta["ntotal"] for meta in fresh.index.values()
    ]
    assert sum(meta["ntotal"] for meta in again.index.values()) == len(records)
    assert (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()[1:] == (
        tmp_path / "f.jsonl"
    ).read_text(encoding="utf-8").splitlines()[1:]
    assert len(list((tmp_path / "w").glob("knn-shards*"))) == 1  # the old plan's are gone


def test_shards_are_calibrated_on_the_rows_that_search_them(tmp_path, mine_words, monkeypatch):
    """A shard is searched by every sentence of the collection, most of them not its own
    rows; its recall target is measured on a sample of those (a row of the graph finds its
    own neighbourhood more easily: 10M sentences in 10 shards, each calibrated on its own
    rows to recall 0.9, merged to 0.873). With --same-source, on rows of the shard's source;
    with a query file (one index or shards), on the query file's sentences."""
    from parakit.vectors.encode import TfidfEncoder
    from parakit.vectors.index import VectorIndex

    collection, records = _two_sources(tmp_path, mine_words)
    encoder = TfidfEncoder((2, 3), dense=True).fit([r["text"] for r in records])
    captured = []
    real_build = VectorIndex.build

    def build(self, chunks, n=None, ids=None, progress=False, calibration=None):
        captured.append(calibration)
        return real_build(self, chunks, n, ids, progress, calibration)

    monkeypatch.setattr(VectorIndex, "build", build)
    settings = dict(k=3, index_kind="hnsw", chunk_size=50, recall=0.9, progress=False)
    run = mine(collection, tmp_path / "w", encoder, tmp_path / "a.jsonl", shards=2, **settings)
    metas = _shard_metas(tmp_path / "w")
    assert [m["calibrated_on"] for m in metas] == ["emb", "emb"]
    for meta, (vectors, rows) in zip(metas, captured, strict=True):
        lo, hi = meta["parts"][0][3] + meta["parts"][0][1], meta["ntotal"]
        inside = (rows >= lo) & (rows < lo + hi)
        # every row of the collection (fewer than 1000), the shard's own and the others'
        assert len(rows) == len(records) and inside.sum() == hi and (~inside).sum() > 0
        np.testing.assert_allclose(vectors[5], encoder.encode([records[int(rows[5])]["text"]])[0])
    assert all(m["calibration"]["queries"] == len(records) for m in run.index.values())
    # a rerun reuses the shards: nothing is built or calibrated again
    mine(collection, tmp_path / "w", encoder, tmp_path / "b.jsonl", shards=2, **settings)
    assert len(captured) == 2

    # same-source: the queries of a shard are rows of its source only
    captured.clear()
    same = mine(
        collection, tmp_path / "s", encoder, tmp_path / "s.jsonl", shards=3, same_source=True,
        **settings,
    )  # fmt: skip
    sources = [meta["source"] for meta in same.index.values()]
    assert sorted(sources) == ["opus", "opus", "pb"]
    for source, (_, rows) in zip(sources, captured, strict=True):
        assert {records[int(r)]["source"] for r in rows} == {source}
        assert len(rows) == sum(r["source"] == source for r in records)

    # a query file: its sentences, with no own row to leave out
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in records[:40]), encoding="utf-8")
    captured.clear()
    mine(
        collection, tmp_path / "q", encoder, tmp_path / "q.out", shards=2, queries=queries,
        **settings,
    )  # fmt: skip
    assert [len(vectors) for vectors, _ in captured] == [40, 40]
    assert all((rows == -1).all() for _, rows in captured)
    # the same in one process: one index, calibrated on the query file's sentences
    captured.clear()
    mine(collection, tmp_path / "q1", encoder, tmp_path / "q1.out", queries=queries, **settings)
    assert len(captured) == 1 and len(captured[0][0]) == 40 and (captured[0][1] == -1).all()
    np.testing.assert_allclose(captured[0][0][0], encoder.encode([records[0]["text"]])[0])
    # no recall target: nothing is calibrated, and the shards say so
    plain = {**settings, "recall": None}
    mine(collection, tmp_path / "p", encoder, tmp_path / "p.out", shards=2, **plain)
    assert [m["calibrated_on"] for m in _shard_metas(tmp_path / "p")] == [None, None]


def _shard_metas(work):
    return [json.loads(path.read_text()) for path in sorted((work / "shards").glob("*/index.json"))]
