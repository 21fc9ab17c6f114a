"""Fixtures of the CLI tests: run a command and insist it succeeds; mine sentences with it."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from parakit.cli.app import main
from parakit.io import read
from parakit.schema import PairSet


def _run(*args: object) -> None:
    code = main([str(a) for a in args])
    assert code == 0, f"parakit {' '.join(map(str, args))} exited {code}"


@pytest.fixture
def run() -> Callable[..., None]:
    """``run("split", path, "-o", out)``: one CLI command that must exit 0."""
    return _run


@pytest.fixture
def mine_run(tiny_model) -> Callable[..., Path]:
    """``mine_run(sentences, out, classifier=None)``: ``parakit mine run`` with the tiny model
    (k 2, exact index); returns the mined pairs' path."""

    def mine(sentences: Path, out: Path, classifier: Path | None = None) -> Path:
        extra = ["--classifier", classifier] if classifier is not None else []
        workdir = out.with_name(out.stem + "-work")
        _run("mine", "run", sentences, "-o", out, "--workdir", workdir, "-m", tiny_model,
             "-k", 2, "--index-kind", "flat", *extra)  # fmt: skip
        return out

    return mine


@pytest.fixture(scope="session")
def opus_sample(data_path) -> Callable[[int, int], PairSet]:
    """``opus_sample(n, seed)``: n labelled (1-4) opus-parsebank pairs, seeded, in file order."""
    pairs = read(data_path("turku/opus-pb-dev.json"))
    labelled = [p for p in pairs if p.label and p.label[0] in "1234"]

    def sample(n: int, seed: int) -> PairSet:
        chosen = sorted(random.Random(seed).sample(range(len(labelled)), n))
        return PairSet([labelled[i] for i in chosen], scheme="turku", name=f"opus-{n}")

    return sample
