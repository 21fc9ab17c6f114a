"""The error-code catalogue (``parakit.errors.CODES``) against the codes the source raises and
the docs mention: a code raised, caught or documented is in the catalogue, and every code in
the catalogue is raised somewhere (so a handler never waits for a code nothing raises)."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest

from parakit.errors import (
    CODES,
    DataFormatError,
    Errors,
    ModelError,
    ParakitError,
    Template,
    errors_markdown,
    explain,
    messages,
)

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "parakit"
CODE = re.compile(r"\bE\d{3,4}\b")
QUOTED = re.compile(r"""["'](E\d{3,4})["']""")
TEMPLATE = re.compile(r"\bErrors\.((E\d{3,4})_\w+)")
TEMPLATES = {name: text for name, text in vars(Errors).items() if isinstance(text, Template)}


def _source_files() -> list[Path]:
    return [p for p in sorted(SRC.rglob("*.py")) if p.name != "errors.py"]


def _mentions(text: str) -> set[str]:
    # ruff's rule codes (noqa: E501) are not parakit's
    codes = {m for line in text.splitlines() if "noqa" not in line for m in CODE.findall(line)}
    return codes | {code for _, code in TEMPLATE.findall(text)}


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
        text = path.read_text(encoding="utf-8")
        raised |= set(QUOTED.findall(text)) | {code for _, code in TEMPLATE.findall(text)}
    assert sorted(set(CODES) - raised) == []


def test_every_template_is_raised_and_its_code_catalogued():
    used = set()
    for path in [*_source_files(), SRC / "errors.py"]:
        used |= {name for name, _ in TEMPLATE.findall(path.read_text(encoding="utf-8"))}
    assert sorted(set(TEMPLATES) - used) == [], "templates nothing raises"
    assert sorted(used - set(TEMPLATES)) == [], "raise sites name templates Errors lacks"
    assert sorted({name.split("_")[0] for name in TEMPLATES} - set(CODES)) == []
    # one template per message: no two templates of one code with the same text
    texts = [(name.split("_")[0], str(text)) for name, text in TEMPLATES.items()]
    assert len(set(texts)) == len(texts)


def _fields(template: str) -> set[str]:
    return {
        field.split(".")[0].split("[")[0]
        for _, field, _, _ in string.Formatter().parse(template)
        if field
    }


def test_every_raise_site_fills_exactly_its_templates_fields():
    """A raise site that misses a field would raise KeyError instead of the error it means."""
    wrong = []
    for path in [*_source_files(), SRC / "errors.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        formatted = set()
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "format"
                and isinstance(node.func.value, ast.Attribute)
                and isinstance(node.func.value.value, ast.Name)
                and node.func.value.value.id == "Errors"
            ):
                name = node.func.value.attr
                formatted.add(id(node.func.value))
                given = {kw.arg for kw in node.keywords}
                if node.args or None in given or given != _fields(TEMPLATES[name]):
                    wrong.append(f"{path.name}:{node.lineno} {name}")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "Errors"
                and id(node) not in formatted
                and (_fields(TEMPLATES[node.attr]) or "{" in TEMPLATES[node.attr])
            ):
                wrong.append(f"{path.name}:{node.lineno} {node.attr} used without format")
    assert wrong == []


def test_a_template_brings_its_code_to_every_error_class():
    error = ModelError(Errors.E720_unknown_offline_model.format(name="x", known="a, b"))
    assert error.code == "E720" and str(error) == "[E720] unknown offline model 'x'; known: a, b"
    located = DataFormatError(Errors.E106_missing_field, path="f.csv", line=3, field="id")
    assert (located.code, str(located)) == (
        "E106",
        "[E106] f.csv, line 3, field 'id': missing field",
    )
    # a code given outright wins (an error re-raised with the code of the one it wraps)
    assert ParakitError(Errors.E106_missing_field, code="E143").code == "E143"
    assert messages("[e720]") == ["unknown offline model {name!r}; known: {known}"]


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
