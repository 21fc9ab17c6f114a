"""The remaining arrows of docs/architecture.md, each fed the real output of the stage before.

(The life cycle itself is tests/cli/test_chain.py.)
"""

from __future__ import annotations

import json

import pytest

from parakit.io import read, write
from parakit.schema import PairSet

pytest.importorskip("faiss")
pytest.importorskip("torch")


@pytest.fixture
def opus(opus_sample, tmp_path):
    """120 labelled opus-pb pairs (seeded), written as canonical JSONL."""
    path = tmp_path / "opus.jsonl"
    write(opus_sample(120, 1), path)
    return path


def test_train_baseline_folder_feeds_mine_run_and_tiles(opus, tmp_path, tiny_model, run, mine_run):
    run("mine", "train-baseline", opus, "-o", tmp_path / "baseline", "-m", tiny_model)
    meta = json.loads((tmp_path / "baseline" / "parakit_model.json").read_text())
    assert meta["params"]["target"] == "turku3" and meta["classes"] == ["3", "4", "neg"]
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("\n".join(t for p in read(opus) for t in (p.text1, p.text2)))
    mined = read(mine_run(sentences, tmp_path / "mined.jsonl", tmp_path / "baseline"))
    assert len(mined) > 0 and all("p_paraphrase" in p.metadata for p in mined)
    run("similarity", opus, "-o", tmp_path / "opus-sim.jsonl")
    run(
        "mine",
        "tiles",
        tmp_path / "opus-sim.jsonl",
        "-o",
        tmp_path / "tiles",
        "--classifier",
        tmp_path / "baseline",
    )
    assert (tmp_path / "tiles" / "tiles.png").exists()


def test_mined_pairs_feed_annotation_and_sampling(opus, tmp_path, run, mine_run):
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("\n".join(t for p in read(opus) for t in (p.text1, p.text2)))
    mined = read(mine_run(sentences, tmp_path / "mined.jsonl"))
    run(
        "build",
        "sample",
        tmp_path / "mined.jsonl",
        "-o",
        tmp_path / "sample.jsonl",
        "--n",
        5,
        "--measure",
        "char",
        "--n-bins",
        4,
    )
    sample = read(tmp_path / "sample.jsonl")
    assert 0 < len(sample) <= 20 and {p.id for p in sample} <= {p.id for p in mined}
    store = tmp_path / "store.db"
    run("annotate", "init", store)
    run("annotate", "create-project", store, "mined", "--candidates", tmp_path / "sample.jsonl")
    run("annotate", "export", store, "mined", "-o", tmp_path / "back.jsonl")
    # nothing labelled yet: the export holds no pair, but the project holds every sample pair
    from parakit.annotate.models import Item
    from parakit.annotate.store import Store

    st = Store.open(str(store))
    with st.transaction() as session:
        texts = {(i.text1, i.text2) for i in session.query(Item).all()}
    assert texts == {(p.text1, p.text2) for p in sample}


def test_nearest_negatives_feed_identify_train(opus, tmp_path, run):
    positives = PairSet(
        [p for p in read(opus) if p.label[0] in "34"], scheme="turku", name="positives"
    )
    write(positives, tmp_path / "positives.jsonl")
    run(
        "build",
        "nearest-negatives",
        tmp_path / "positives.jsonl",
        "-o",
        tmp_path / "negatives.jsonl",
        "--label",
        "2",
    )
    negatives = read(tmp_path / "negatives.jsonl")
    assert len(negatives) == len(positives) and {p.label for p in negatives} == {"2"}
    run(
        "identify",
        "train",
        opus,
        "-m",
        "tfidf",
        "--binary",
        "--negatives",
        tmp_path / "negatives.jsonl",
        "--negative-label",
        "0",
        "--negatives-per-pair",
        "0.25",
        "-o",
        tmp_path / "model",
    )
    info = json.loads((tmp_path / "model" / "parakit_model.json").read_text())
    assert info["model_type"] == "tfidf"
