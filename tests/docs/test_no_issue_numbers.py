"""The documentation speaks to users: no internal issue numbers in the pages, the README or the
docstrings the reference pages render ("the int8 backends were removed (issue 24)" says
nothing to a reader; say what was done and why)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ISSUE = re.compile(r"\bissues?\s*#?\d+\b|#issue-?\d+|-issue-\d+\b", re.IGNORECASE)


def test_no_internal_issue_numbers_in_the_docs():
    files = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
    files += sorted((ROOT / "src" / "parakit").rglob("*.py"))
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}"
        for path in files
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if ISSUE.search(line)
    ]
    assert not found, "\n".join(found)
