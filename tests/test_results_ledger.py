"""The results ledger of the heavy runs (``benchmarks/ledger.py``): one line per finished unit,
skipped on rerun, a torn last line survived, and the docs' tables generated from it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from ledger import Ledger, UnitClock, render_docs, table, unit_key  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def test_unit_key_ignores_order_and_whole_number_spelling() -> None:
    assert unit_key({"lr": 1e-5, "epoch": 2.0, "model": "m"}) == unit_key(
        {"model": "m", "epoch": 2, "lr": 1e-05}
    )
    assert unit_key({"lr": 1e-5, "epoch": 2}) != unit_key({"lr": 3e-5, "epoch": 2})


def test_record_then_has_and_rerun_skips(tmp_path: Path) -> None:
    ledger = Ledger("run", command="python x.py", folder=tmp_path)
    unit = {"model": "m", "lr": 2e-5, "epoch": 1}
    assert not ledger.has(unit)
    clock = UnitClock()
    line = ledger.record(unit, {"dev_f1": 70.5}, config={"seed": 1}, clock=clock.read())
    # a second process (the rerun) reads the file, not this object's memory
    again = Ledger("run", command="python x.py", folder=tmp_path)
    assert again.has({"epoch": 1, "lr": 2e-05, "model": "m"})
    assert not again.has({**unit, "epoch": 2})
    stored = again.lines()[0]
    assert stored == json.loads(json.dumps(line))
    for field in ("command", "commit", "config", "machine", "wall_s", "cpu_s", "load", "date"):
        assert field in stored, field
    assert stored["machine"]["cores"] >= 1
    assert stored["machine"]["device"]  # "cpu" or the GPU's name


def test_a_torn_last_line_is_skipped_not_fatal(tmp_path: Path, capsys) -> None:
    ledger = Ledger("run", command="-", folder=tmp_path)
    ledger.record({"epoch": 1}, {"dev_f1": 1.0})
    with open(ledger.path, "a", encoding="utf-8") as handle:
        handle.write('{"unit": {"epoch": 2}, "metr')  # killed mid-write
    assert [line["unit"] for line in ledger.lines()] == [{"epoch": 1}]
    assert "torn line" in capsys.readouterr().err
    assert not ledger.has({"epoch": 2})


def test_paper_recipe_table_from_ledger(tmp_path: Path) -> None:
    ledger = Ledger(
        "paper-recipe", command="python benchmarks/identify.py paper-recipe", folder=tmp_path
    )
    base = {"model": "offline-minilm", "lr": 5e-5, "max_length": 64, "precision": "fp32"}
    for epoch, f1 in ((1, 60.0), (2, 65.25)):
        ledger.record(
            {**base, "epoch": epoch}, {"dev_f1": f1}, clock={"wall_s": 100.0, "load": 1.0}
        )
    text = table("paper-recipe", tmp_path)
    row = next(line for line in text.splitlines() if line.startswith("| offline-minilm"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:6] == ["offline-minilm", "5e-05", "fp32", "60.00", "65.25", "65.25"]  # best = max
    assert "python benchmarks/identify.py paper-recipe" in text


def test_render_docs_replaces_only_the_marked_block(tmp_path: Path) -> None:
    Ledger("x", command="cmd", folder=tmp_path).record({"size": 10}, {"recall": 0.5})
    doc = "before\n<!-- ledger:x -->\nold table\n<!-- /ledger:x -->\nafter\n"
    out = render_docs(doc, tmp_path)
    assert out.startswith("before\n<!-- ledger:x -->\n| size | recall |")
    assert "old table" not in out and out.endswith("<!-- /ledger:x -->\nafter\n")
    assert render_docs(out, tmp_path) == out  # stable


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.jsonl")), ids=lambda p: p.name)
def test_committed_ledgers_are_well_formed(path: Path) -> None:
    """Every committed line names its unit, metrics, command, commit and machine."""
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = json.loads(text)
        for field in ("unit", "metrics", "command", "commit", "machine"):
            assert field in line, f"{path.name}:{number} has no {field}"
        assert line["machine"].get("device"), f"{path.name}:{number}"


def test_docs_tables_are_generated_from_the_ledger() -> None:
    """docs/benchmarks.md holds what `python benchmarks/ledger.py tables` writes."""
    docs = ROOT / "docs" / "benchmarks.md"
    text = docs.read_text(encoding="utf-8")
    assert "<!-- ledger:paper-recipe -->" in text
    assert render_docs(text) == text, "run python benchmarks/ledger.py tables"


def test_committed_teacher_labels_match_their_digest_and_units() -> None:
    """The noisy recipe's committed teacher probabilities are what their digest says, one per
    auto pair, and every noisy unit that names labels names a committed file's digest."""
    import hashlib

    digests = {}
    for path in sorted((RESULTS / "noisy-teacher").glob("*.json")):
        saved = json.loads(path.read_text(encoding="utf-8"))
        assert len(saved["p"]) == len(saved["pairs"]) == len(set(saved["pairs"])), path.name
        assert all(0.0 <= p <= 1.0 for p in saved["p"]), path.name
        digest = hashlib.sha256(json.dumps(saved["p"]).encode()).hexdigest()[:12]
        assert digest == saved["digest"], f"{path.name}: edited after it was written"
        assert 0 < saved["teacher_dev_f1"] <= 100 and saved["teacher"]["model"]
        digests[saved["digest"]] = path.name
    for line in Ledger("noisy-recipe", command="-").lines():
        named = line["config"].get("teacher_labels")
        assert named is None or named in digests, f"noisy unit names labels {named} not committed"
