"""The documentation site builds without a warning (issue 22): every page in the nav, every
link and anchor resolved, the API reference generated from the docstrings."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _nav_pages() -> set[str]:
    """The Markdown files named in mkdocs.yml's nav (read as text: the file has a python tag)."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = config.split("\nnav:\n", 1)[1]
    return set(re.findall(r":\s*(\S+\.md)\s*$", nav, flags=re.M))


def test_every_guide_is_in_the_nav():
    """A new page in docs/ must be added to mkdocs.yml (strict mode only warns about pages that
    exist and are left out, and a page nobody can reach is not documentation)."""
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    pages -= {p for p in pages if p.startswith(("examples/", "_ext/"))}
    assert pages - _nav_pages() == set()
    assert _nav_pages() - pages == set()


def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="install the docs extra: pip install -e '.[docs]'")
    pytest.importorskip("mkdocstrings_handlers.python", reason="install the docs extra")
    site = tmp_path / "site"
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert run.returncode == 0, run.stderr[-4000:]
    # the home page is the README, its links into docs/ rewritten to the site's pages
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "A short tour" in home and 'href="methods/"' in home
    # the API reference is rendered from the docstrings, the Example sections as code
    api = (site / "reference" / "io" / "index.html").read_text(encoding="utf-8")
    assert 'id="parakit.io.read"' in api
    evaluate = (site / "reference" / "evaluate" / "index.html").read_text(encoding="utf-8")
    assert '<span class="gp">&gt;&gt;&gt; </span><span class="n">m</span>' in evaluate
