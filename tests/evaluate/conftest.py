"""Fixtures of the evaluation tests: a seeded sample of real MultiPIT expert pairs."""

from __future__ import annotations

import pytest

from parakit.io import read
from parakit.schema import PairSet


@pytest.fixture(scope="session")
def multipit(data_path) -> tuple[PairSet, PairSet]:
    """(train, dev): seeded samples of 600 MultiPIT expert train and 300 val pairs."""
    import numpy as np

    train = read(data_path("multipit/expert-train.csv"), format="multipit")
    dev = read(data_path("multipit/expert-val.csv"), format="multipit")
    rng = np.random.default_rng(0)
    pick_train = sorted(rng.choice(len(train), 600, replace=False).tolist())
    pick_dev = sorted(rng.choice(len(dev), 300, replace=False).tolist())
    return (
        PairSet([train[i] for i in pick_train], scheme="binary"),
        PairSet([dev[i] for i in pick_dev], scheme="binary"),
    )
