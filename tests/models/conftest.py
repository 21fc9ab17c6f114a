"""Fixtures of the model tests: small real data and tiny transformer encoders built from a
config (no download), so neural models train in seconds on CPU."""

from __future__ import annotations

import collections
import re
from pathlib import Path

import pytest

from parakit.io import read
from parakit.schema import PairSet


@pytest.fixture(scope="session")
def turku_sv(data_path) -> tuple[PairSet, PairSet]:
    """(train, dev) from the Swedish Turku test set: full labels with flags."""
    pairs = read(data_path("turku/sv-test.json"), format="turku")
    return pairs[:300], pairs[300:420]


def build_tiny_encoder(folder: Path, pairs: list[PairSet], hidden: int = 32) -> Path:
    """A 2-layer BERT with a word-level vocabulary of the given pairs, saved to ``folder``."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    counts = collections.Counter(
        w
        for ps in pairs
        for p in ps
        for t in (p.text1, p.text2)
        for w in re.findall(r"\w+|[^\w\s]", t.lower())
    )
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [
        w for w, _ in counts.most_common(3000)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(vocab), encoding="utf-8")
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True).save_pretrained(
        str(folder)
    )
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=hidden,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=2 * hidden,
        max_position_embeddings=128,
    )
    torch.manual_seed(0)
    BertModel(config).save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory, multipit, turku_sv) -> str:
    import torch

    torch.set_num_threads(2)
    folder = tmp_path_factory.mktemp("tiny-bert")
    return str(build_tiny_encoder(folder, [*multipit, *turku_sv]))
