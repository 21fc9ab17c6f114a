"""The demo step runs on the bundled example and reports mined pairs and retrieval."""

from __future__ import annotations

from parakit.cli.demo.mine import demo_step
from parakit.examples import load_example


def test_demo_step(tmp_path):
    section = demo_step(tmp_path, load_example())
    assert section.startswith("## mine")
    assert "top-1" in section and (tmp_path / "mine" / "candidates.jsonl").exists()
