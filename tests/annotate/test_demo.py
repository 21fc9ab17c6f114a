"""The annotate demo step on the bundled example."""

from __future__ import annotations

import pytest

from parakit.cli.demo.annotate import demo_step
from parakit.examples import load_example


def test_demo_step(tmp_path):
    pytest.importorskip("krippendorff", reason="pip install krippendorff (parakit[annotate])")
    pairs = load_example()
    section = demo_step(tmp_path, pairs)
    assert section.startswith("## annotate")
    assert "| full |" in section and "| binary |" in section
    from parakit import io

    exported = io.read(tmp_path / "annotated.jsonl")
    # every disagreement was adjudicated back to the gold label
    assert {p.id: p.label for p in exported} == {p.id: p.label for p in pairs}
