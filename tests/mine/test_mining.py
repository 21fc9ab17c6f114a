"""Mining: known neighbours on a hand-made collection, filters, re-ranking, resume after kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from parakit.errors import MineError
from parakit.mine.mining import mine
from parakit.schema import PairSet


class BagOfWords:
    """A transparent encoder for known answers: L2-normalised word counts."""

    def __init__(self, vocab: list[str]) -> None:
        self.vocab = {w: i for i, w in enumerate(vocab)}

    def encode(self, texts):
        out = np.zeros((len(texts), len(self.vocab)), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.split():
                out[row, self.vocab[word]] += 1
        return out / np.linalg.norm(out, axis=1, keepdims=True)


class LengthClassifier:
    """predict_proba = P(paraphrase) 0.9 when both texts have the same number of words."""

    classes_ = np.array([0, 1])

    def predict_proba(self, pairs: PairSet):
        same = np.array([len(p.text1.split()) == len(p.text2.split()) for p in pairs], float)
        p = 0.1 + 0.8 * same
        return np.column_stack([1 - p, p])


SENTENCES = [  # (text, source)
    ("a b", "x"),
    ("a b c", "x"),
    ("d e", "y"),
    ("d e f", "y"),
    ("a b", "x"),
    ("a b d", "y"),
]


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"text": t, "source": s}) + "\n" for t, s in SENTENCES))
    return path


def _read(path: Path) -> list[dict]:
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["parakit"] == 1
    return [json.loads(line) for line in lines[1:]]


def test_known_neighbours_self_and_duplicates_dropped(tmp_path):
    enc = BagOfWords(list("abcdef"))
    result = mine(
        _write(tmp_path), tmp_path / "w", enc, output=tmp_path / "o.jsonl", k=1, progress=False
    )
    assert result.n_sentences == 5  # "a b" appears twice: kept once
    pairs = {(p["text1"], p["text2"]) for p in _read(tmp_path / "o.jsonl")}
    # each sentence's single nearest other sentence, each unordered pair once:
    # "a b"->"a b c" (0.816) ; "a b c"->"a b" ; "d e"->"d e f" ; "d e f"->"d e" ; "a b d"->"a b"
    assert pairs == {("a b", "a b c"), ("d e", "d e f"), ("a b d", "a b")}
    rows = _read(tmp_path / "o.jsonl")
    assert rows[0]["metadata"]["score"] == pytest.approx(2 / np.sqrt(6), abs=1e-6)
    assert rows[0]["metadata"]["rank"] == 1


def test_same_source_restriction_and_rerank(tmp_path):
    enc = BagOfWords(list("abcdef"))
    mine(
        _write(tmp_path),
        tmp_path / "w",
        enc,
        output=tmp_path / "o.jsonl",
        k=2,
        same_source=True,
        classifier=LengthClassifier(),
        min_probability=0.5,
        progress=False,
    )
    rows = _read(tmp_path / "o.jsonl")
    for row in rows:  # same source only; equal lengths only (classifier filter)
        assert "source2" not in row["metadata"]
        assert len(row["text1"].split()) == len(row["text2"].split())
        assert row["metadata"]["p_paraphrase"] == pytest.approx(0.9)
    assert {(r["text1"], r["text2"]) for r in rows} == {("d e f", "a b d")}


def test_queries_against_collection_and_settings_guard(tmp_path):
    enc = BagOfWords(list("abcdef"))
    queries = tmp_path / "q.txt"
    queries.write_text("a b c\nd e\n")
    mine(
        _write(tmp_path),
        tmp_path / "w",
        enc,
        output=tmp_path / "o.jsonl",
        k=1,
        queries=queries,
        progress=False,
    )
    rows = _read(tmp_path / "o.jsonl")
    # identical collection sentences are skipped: the next one is the candidate
    assert [(r["text1"], r["text2"]) for r in rows] == [("a b c", "a b"), ("d e", "d e f")]
    assert [r["metadata"]["rank"] for r in rows] == [1, 1]
    with pytest.raises(MineError, match="E802"):
        mine(_write(tmp_path), tmp_path / "w", enc, k=3, progress=False)


SCRIPT = """
import sys, time
sys.path.insert(0, {tests!r})
from parakit.vectors.encode import SentenceEncoder
from parakit.mine.mining import mine

class Slow(SentenceEncoder):
    def encode(self, texts):
        time.sleep({delay})
        return super().encode(texts)

import torch; torch.set_num_threads(1)
mine({collection!r}, {work!r}, Slow({model!r}, batch_size=32), output={output!r}, k=3,
     chunk_size=40, index_kind="ivf", index_options={{"nlist": 8, "threads": 1}}, nprobe=3,
     progress=False)
"""


def _run(tmp_path: Path, name: str, collection: Path, model: Path, delay: float):
    script = tmp_path / f"{name}.py"
    script.write_text(
        SCRIPT.format(
            tests=str(Path(__file__).parent),
            delay=delay,
            collection=str(collection),
            work=str(tmp_path / name),
            model=str(model),
            output=str(tmp_path / f"{name}.jsonl"),
        )
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).parents[2] / "src"),
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
    }
    return subprocess.Popen([sys.executable, str(script)], env=env, stderr=subprocess.PIPE)


def test_kill_9_then_resume_gives_identical_output(tmp_path, tiny_model, mine_words):
    words = mine_words

    rng = np.random.default_rng(3)
    lines = [" ".join(rng.choice(words, size=rng.integers(3, 9))) for _ in range(400)]
    collection = tmp_path / "c.txt"
    collection.write_text("\n".join(lines) + "\n")
    from parakit.vectors.encode import SentenceEncoder

    mine(
        collection,
        tmp_path / "ref",
        SentenceEncoder(tiny_model, batch_size=32),
        output=tmp_path / "ref.jsonl",
        k=3,
        chunk_size=40,
        index_kind="ivf",
        index_options={"nlist": 8, "threads": 1},
        nprobe=3,
        progress=False,
    )

    victim = _run(tmp_path, "job", collection, tiny_model, 0.5)
    emb = tmp_path / "job" / "emb"
    # wait for the event (4 chunks embedded), not a wall-clock budget: a busy machine is slow
    while victim.poll() is None and len(list(emb.glob("*.npy"))) < 4:
        time.sleep(0.05)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    done_before = len(list(emb.glob("*.npy")))
    assert 4 <= done_before < 10 and not (tmp_path / "job.jsonl").exists()

    resumed = _run(tmp_path, "job", collection, tiny_model, 0.0)
    assert resumed.wait() == 0, resumed.stderr.read().decode()[-2000:]
    ref_rows = (tmp_path / "ref.jsonl").read_text().splitlines()[1:]
    assert len(ref_rows) > 400
    assert (tmp_path / "job.jsonl").read_text().splitlines()[1:] == ref_rows


class ClusteredVectors:
    """An encoder for text ``"s<i>"``: row ``i`` of fixed clustered unit vectors (no model)."""

    def __init__(self, n: int, dim: int = 16, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        centres = rng.standard_normal((60, dim))
        x = centres[rng.integers(0, 60, n)] + 0.35 * rng.standard_normal((n, dim))
        self.x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)

    def encode(self, texts):
        return self.x[[int(t[1:]) for t in texts]]


def test_recall_target_calibrates_index_and_records_it(tmp_path):
    n = 24_000  # above CALIBRATE_MIN: auto measures IVF against exact search
    encoder = ClusteredVectors(n)
    collection = tmp_path / "c.txt"
    collection.write_text("".join(f"s{i}\n" for i in range(n)))
    result = mine(
        collection,
        tmp_path / "w",
        encoder,
        output=tmp_path / "o.jsonl",
        k=5,
        recall=0.9,
        chunk_size=6000,
        progress=False,
    )
    info = result.index["all"]
    cal = info["calibration"]
    assert cal["target"] == 0.9 and cal["k"] == 5 and cal["approx_kind"] == "ivf"
    assert info["recall_estimate"] >= 0.9 and info["kind"] in ("ivf", "flat")
    # the estimate travels with the pairs (output header) and in the work folder (run.json)
    header = json.loads((tmp_path / "o.jsonl").read_text().split("\n", 1)[0])
    assert header["metadata"]["index"]["all"]["recall_estimate"] == info["recall_estimate"]
    run = json.loads((tmp_path / "w" / "run.json").read_text())
    assert run["index"]["all"]["kind"] == info["kind"] and run["settings"]["recall"] == 0.9
    # measured against exact neighbours of the same vectors
    from parakit.vectors.index import VectorIndex, recall_per_query

    rows = np.arange(0, n, 37)
    truth = VectorIndex(kind="flat").build(lambda: iter([encoder.x])).search(encoder.x[rows], 6)[1]
    knn = np.load(tmp_path / "w" / "knn_ids.npy")[rows]
    assert recall_per_query(knn, truth, rows, 5).mean() >= 0.9


def test_the_index_is_released_before_the_filter(tmp_path, monkeypatch):
    """The graph is not held while the candidate arrays are built and written: no index
    built by the run is alive when the filter starts."""
    import gc
    import weakref

    from parakit.mine import mining
    from parakit.vectors.index import VectorIndex

    built: weakref.WeakSet = weakref.WeakSet()
    build, candidates = VectorIndex.build, mining._candidates

    def tracked(self, *args, **kwargs):
        built.add(self)
        return build(self, *args, **kwargs)

    alive = []

    def counted(*args, **kwargs):
        gc.collect()
        alive.append(len(built))
        return candidates(*args, **kwargs)

    monkeypatch.setattr(VectorIndex, "build", tracked)
    monkeypatch.setattr(mining, "_candidates", counted)
    n = 3000
    collection = tmp_path / "c.txt"
    collection.write_text("".join(f"s{i}\n" for i in range(n)))
    mine(
        collection,
        tmp_path / "w",
        ClusteredVectors(n),
        output=tmp_path / "o.jsonl",
        k=5,
        index_kind="hnsw",
        index_options={"threads": 1},
        progress=False,
    )
    assert alive == [0] and len((tmp_path / "o.jsonl").read_text().splitlines()) > n


def test_self_mining_searches_each_sentence_from_its_own_node(tmp_path, monkeypatch):
    from parakit.vectors.index import VectorIndex, recall_per_query

    n = 6000
    encoder = ClusteredVectors(n)
    collection = tmp_path / "c.txt"
    collection.write_text("".join(f"s{i}\n" for i in range(n)))
    started = []
    faiss_search = VectorIndex._faiss_search

    def spy(self, queries, width, rows=None):
        if rows is not None:
            started.extend(np.asarray(rows).tolist())
        return faiss_search(self, queries, width, rows)

    monkeypatch.setattr(VectorIndex, "_faiss_search", spy)
    options = {"hnsw_m": 8, "ef_construction": 16, "threads": 1, "calibration_queries": 1000}
    settings = dict(k=5, recall=0.9, index_kind="hnsw", index_options=options, progress=False)
    result = mine(
        collection, tmp_path / "w", encoder, output=tmp_path / "o.jsonl", chunk_size=2000,
        **settings,
    )  # fmt: skip
    info = result.index["all"]
    assert info["self_join"] and info["calibration"]["searched_from"] == "own node"
    # the calibration's 1,000 rows, then every sentence of the collection, from its own row
    assert sorted(started[1000:]) == list(range(n))
    rows = np.arange(0, n, 7)
    truth = VectorIndex(kind="flat").build(lambda: iter([encoder.x])).search(encoder.x[rows], 6)[1]
    knn = np.load(tmp_path / "w" / "knn_ids.npy")[rows]
    assert recall_per_query(knn, truth, rows, 5).mean() >= 0.9
    # a query file's sentences are not the index's rows: searched from the entry point
    started.clear()
    queries = mine(
        collection, tmp_path / "q", encoder, queries=collection, output=tmp_path / "q.jsonl",
        chunk_size=2000, **settings,
    )  # fmt: skip
    info = queries.index["all"]
    assert not info["self_join"] and info["calibration"]["searched_from"] == "entry point"
    assert started == []


class ModelFolderEncoder(BagOfWords):
    """A bag of words that signs as a model loaded from a local folder (as offline-minilm)."""

    def __init__(self, vocab: list[str], folder: Path) -> None:
        super().__init__(vocab)
        self.folder = folder

    def signature(self):
        return {"encoder": "sentence-transformers", "model": str(self.folder), "model_digest": "d"}


def test_mined_header_records_no_machine_path(tmp_path):
    """Issue 29.16: the header of mined pairs names the input by name and SHA-256 and the
    model by folder name (alias, Hub id), not the absolute paths where they sat."""
    import hashlib

    folder = tmp_path / "models" / "my-encoder"
    folder.mkdir(parents=True)
    collection = _write(tmp_path)
    out = tmp_path / "o.jsonl"
    enc = ModelFolderEncoder(list("abcdef"), folder)
    mine(collection, tmp_path / "w", enc, output=out, k=1, progress=False)
    header_line = out.read_text().splitlines()[0]
    assert str(tmp_path) not in header_line
    settings = json.loads(header_line)["metadata"]["mining"]
    sha = hashlib.sha256(collection.read_bytes()).hexdigest()
    assert settings["collection"] == {"name": "c.jsonl", "sha256": sha}
    assert settings["encoder"] == {
        "encoder": "sentence-transformers",
        "model": "my-encoder",
        "model_digest": "d",
    }
    # the work folder's job.json keeps the paths that tell a rerun of the same job
    job = json.loads((tmp_path / "w" / "job.json").read_text())
    assert job["collection"] == str(collection.resolve())


def test_model_label_names_offline_models_by_alias(minilm_path):
    from parakit.offline import model_label, resolve_model

    assert model_label(resolve_model("offline-minilm")) == "offline-minilm"
    assert model_label("offline-minilm") == "offline-minilm"
    assert model_label("sentence-transformers/all-MiniLM-L6-v2").startswith("sentence-")


def test_output_onto_its_own_input_is_refused_and_the_input_kept(tmp_path, monkeypatch):
    """``-o`` naming the collection (or the query file), however spelled, stops before any
    work (E803): the pairs would otherwise replace the sentences they were mined from."""
    enc = BagOfWords(list("abcdef"))
    collection = _write(tmp_path)
    before = collection.read_bytes()
    monkeypatch.chdir(tmp_path)
    for output, queries in (("c.jsonl", None), ("./c.jsonl", None), ("q.jsonl", "q.jsonl")):
        Path("q.jsonl").write_text('{"text": "a b"}\n')
        with pytest.raises(MineError, match="E803.*(collection|query file) this run reads"):
            mine(collection, "w", enc, output=output, queries=queries, k=1, progress=False)
    assert collection.read_bytes() == before
    assert not Path("w").exists()  # refused before the work folder was made
