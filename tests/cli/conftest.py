"""Fixtures of the CLI tests: run a command and insist it succeeds; mine sentences with it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from parakit.cli.app import main


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
