"""The error-code catalogue (``parakit.errors.CODES``) against the codes the source raises and
the docs mention: a code raised, caught or documented is in the catalogue, and every code in
the catalogue is raised somewhere (so a handler never waits for a code nothing raises)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from parakit.errors import CODES, ParakitError, errors_markdown, explain

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "parakit"
CODE = re.compile(r"\bE\d{3,4}\b")
QUOTED = re.compile(r"""["'](E\d{3,4})["']""")


def _source_files() -> list[Path]:
    return [p for p in sorted(SRC.rglob("*.py")) if p.name != "errors.py"]


def _mentions(text: str) -> set[str]:
    # ruff's rule codes (noqa: E501) are not parakit's
    return {m for line in text.splitlines() if "noqa" not in line for m in CODE.findall(line)}


def test_every_code_raised_or_mentioned_in_the_source_is_in_the_catalogue():
    unknown = {}
    for path in _source_files():
        for code in _mentions(path.read_text(encoding="utf-8")) - set(CODES):
            unknown.setdefault(code, path.relative_to(ROOT).as_posix())
    assert not unknown, f"codes missing from parakit.errors.CODES: {unknown}"


def test_every_code_in_the_catalogue_is_raised():
    errors_py = (SRC / "errors.py").read_text(encoding="utf-8")
    class_codes = set(re.findall(r'^    code(?:: str)? = "(E\d+)"', errors_py, re.M))
    raised = set(class_codes) | {"E000"}
    for path in _source_files():
        raised |= set(QUOTED.findall(path.read_text(encoding="utf-8")))
    assert sorted(set(CODES) - raised) == []


def test_docs_mention_known_codes_only():
    unknown = {}
    for path in [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]:
        for code in _mentions(path.read_text(encoding="utf-8")) - set(CODES):
            unknown.setdefault(code, path.relative_to(ROOT).as_posix())
    assert not unknown, f"docs name codes parakit does not raise: {unknown}"


def test_reference_page_is_generated_from_the_catalogue():
    page = ROOT / "docs" / "reference" / "errors.md"
    assert page.read_text(encoding="utf-8") == errors_markdown(), (
        "docs/reference/errors.md is stale: parakit errors --markdown > docs/reference/errors.md"
    )


def test_explain_reads_a_code_as_printed():
    assert explain("[e143]") == explain("E143") == CODES["E143"]
    with pytest.raises(KeyError, match="E9999"):
        explain("E9999")
    error = ParakitError("nothing here", code="E143")
    assert str(error).startswith("[E143] ") and explain(error.code) == CODES["E143"]
