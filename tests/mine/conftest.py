"""Fixtures of the mining tests: a tiny sentence-transformers model built from a config."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
    vocab.write_text(
        "\n".join(
            [
                "[PAD]",
                "[UNK]",
                "[CLS]",
                "[SEP]",
                "[MASK]",
                *WORDS,
                *[f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz"],
                *"abcdefghijklmnopqrstuvwxyz0123456789.,!?",
            ]
        )
        + "\n"
    )
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
