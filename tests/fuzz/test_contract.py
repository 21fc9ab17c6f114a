"""The reader contract under fuzzing: a damaged input gives a ParakitError or the reference data.

Samples of the real corpora (shared data; skipped when absent) are damaged by
``tests/fuzz/harness.py`` with choices drawn by hypothesis, so a failure shrinks to a small
reproducer. CI runs the ``ci`` profile (100 inputs per reader, a few seconds each);
``PARAKIT_FUZZ=long`` (or the ``slow`` test below) runs many more.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))  # importlib import mode: make the harness findable
from harness import TARGETS, fuzz, make_target, mutate, run_case

settings.register_profile(
    "ci",
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long",
    max_examples=2000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = "long" if os.environ.get("PARAKIT_FUZZ") == "long" else "ci"

_TARGETS: dict[str, object] = {}


def _target(name, data_path):
    if name not in _TARGETS:
        data_path("turku/sv-test.json")  # skip without the shared data
        _TARGETS[name] = make_target(name, data_path("turku/sv-test.json").parents[1])
    return _TARGETS[name]


class _Draw:
    """``randrange`` from hypothesis' ``data.draw``, so failing inputs shrink."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def randrange(self, stop: int) -> int:
        return self.data.draw(st.integers(0, stop - 1)) if stop > 1 else 0


@pytest.fixture(autouse=True)
def _quiet():
    logging.disable(logging.WARNING)  # the ETPC reader warns about the missing files
    yield
    logging.disable(logging.NOTSET)


@pytest.mark.parametrize("name", TARGETS)
def test_damaged_input_is_an_error_or_the_reference(name, data_path, tmp_path_factory):
    target = _target(name, data_path)
    workdir = tmp_path_factory.mktemp(f"fuzz-{name}")

    @settings(settings.get_profile(PROFILE))
    @given(data=st.data())
    def check(data):
        case = mutate(target, _Draw(data))
        outcome = run_case(case, workdir)
        assert outcome.kind in ("error", "correct"), (
            f"{name} / {case.mutation} on {case.variant.main}: {outcome.kind}: {outcome.detail}"
        )

    check()


@pytest.mark.slow
@pytest.mark.parametrize("name", TARGETS)
def test_many_damaged_inputs(name, data_path, tmp_path):
    counts, failures = fuzz(
        name, None, 2000, seed=1, workdir=tmp_path, target=_target(name, data_path)
    )
    assert counts["other"] == 0 and counts["bad"] == 0, [
        (case.mutation, outcome.detail) for case, outcome in failures[:5]
    ]
