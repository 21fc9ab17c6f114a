"""Every code block of the guides in docs/ runs as written (issue 22), so a guide cannot drift
from the code.

A page's ```python and ```bash blocks run in order in one fresh working folder, with
``../shared/data`` beside it (the papers' corpora, as on our machines and in the README) and
nothing else: a page makes the inputs it works on in blocks the reader sees, or writes them
with ``parakit examples SET`` (files the package ships); no input is made out of sight.
Python blocks share one namespace (a later block uses what an earlier one made) and are
compiled with the page's name and line numbers, so a traceback points at the Markdown line;
bash blocks run with ``bash -e -o pipefail``. (pytest-examples does the same for Python, but
its rewritten tracebacks crash pytest's reporting on Python 3.11, and it has no bash.)

A block that cannot run here says so on the line before it, with the reason, which the reader
of the page does not see::

    <!-- docs-test: skip needs a GPU for hours -->
    <!-- docs-test: slow trains on the whole corpus (about a minute) -->   (only with -m slow)
    <!-- docs-test: raises LabelError -->      (the block ends in the error it shows)

A bare expression whose comment starts with a Python literal (``tokenize("a b")  # ['a', 'b']``)
must give that value; ``...`` inside the literal, or a comment after ``print()``, is read as an
illustration and not compared.

The README's blocks are run by tests/cli/test_readme.py; docs/benchmarks.md is a record of
measurements whose commands take minutes to hours on the whole corpora, not a guide.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
DATA = Path(os.environ.get("PARAKIT_DATA", ROOT.parent / "shared" / "data"))

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", flags=re.M | re.S)
_MARK = re.compile(r"<!--\s*docs-test:\s*(\w+)\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    language: str
    source: str
    action: str = "run"  # run | skip | slow | raises
    argument: str = ""  # the reason to skip, or the exception's class name


def blocks(page: Path) -> list[Block]:
    """The ```python and ```bash blocks of a page, with the marker on the line before each."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        language = match.group(1)
        if language not in ("python", "bash"):
            continue
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        block = Block(page.name, text.count("\n", 0, match.start()) + 1, language, match.group(2))
        marker = _MARK.search(before)
        if marker:
            block.action, block.argument = marker.group(1), marker.group(2)
        found.append(block)
    return found


PAGES = sorted(p for p in DOCS.glob("*.md") if blocks(p) and p.name != "benchmarks.md")
SLOW_PAGES = [p for p in PAGES if any(b.action == "slow" for b in blocks(p))]


def test_markers_are_known_and_give_a_reason():
    """A skipped block says why; no marker is misspelt (a typo would run or skip silently)."""
    marks = [b for p in PAGES for b in blocks(p) if b.action != "run"]
    assert marks, "no block is marked; the parser lost the markers"
    for block in marks:
        where = f"{block.page}:{block.line}"
        assert block.action in ("skip", "slow", "raises"), f"{where}: unknown {block.action!r}"
        assert len(block.argument) >= 10 or block.action == "raises", f"{where}: say why"
    # every marker in a page belongs to a block (one left above a paragraph does nothing)
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        n_marks = len(re.findall(r"<!--\s*docs-test:", text))
        assert n_marks == sum(b.action != "run" for b in blocks(page)), page.name


# --- the runner ------------------------------------------------------------------------------


def _bash(block: Block, work: Path) -> None:
    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"],
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PARAKIT_DATA": str(DATA),
    }
    run = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block.source],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if run.returncode != 0:
        pytest.fail(
            f"docs/{block.page}:{block.line}: the bash block exits {run.returncode}\n"
            f"{block.source}\nstdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}"
        )


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_guide_runs_as_written(page, tmp_path, monkeypatch):
    """The blocks of a page but those marked skip or slow."""
    _run_page(page, ("skip", "slow"), tmp_path, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("page", SLOW_PAGES, ids=[p.name for p in SLOW_PAGES])
def test_guide_runs_as_written_with_its_slow_blocks(page, tmp_path, monkeypatch):
    _run_page(page, ("skip",), tmp_path, monkeypatch)


def _shown_value(comment: str) -> tuple[bool, object]:
    """The value a comment shows, when it starts with a Python literal: ``# 0.5``,
    ``# ['Mr. Smith arrived.', 'He sat down!']``, ``# '4<is'`` (text after it is allowed)."""
    comment = comment.strip()
    ends = [len(comment)] + [m.start() for m in re.finditer(r"\s{2,}|\s\(|:\s|\s=\s", comment)]
    for end in sorted(set(ends), reverse=True):
        try:
            value = ast.literal_eval(comment[:end])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        # "[..., ...]" and "{'read': [...]}" abbreviate: nothing to compare
        return "Ellipsis" not in repr(value), value
    return False, None


def _check_shown(actual: object, shown: object, text: str, where: str) -> None:
    if isinstance(shown, float) and not isinstance(actual, str):
        decimals = len(text.split(".", 1)[1]) if "." in text else 0
        tolerance = 0.5 * 10**-decimals
        assert abs(float(actual) - shown) <= tolerance, (
            f"{where}: {actual!r}, the page shows {shown}"
        )
        return
    if isinstance(actual, tuple) and isinstance(shown, list):
        actual = list(actual)
    assert actual == shown, f"{where}: {actual!r}, the page shows {shown!r}"


def _python(block: Block, namespace: dict) -> None:
    """Run a block; a bare expression whose comment shows a value must give that value."""
    source = "\n" * block.line + block.source  # so a traceback names the Markdown line
    tree = ast.parse(source)
    lines = source.split("\n")
    checks: dict[int, tuple[object, str]] = {}
    body = []
    for node in tree.body:
        # ast's column offsets count UTF-8 bytes
        rest = lines[node.end_lineno - 1].encode("utf-8")[node.end_col_offset :]
        comment = rest.decode("utf-8").strip()
        if isinstance(node, ast.Expr) and comment.startswith("#"):
            found, shown = _shown_value(comment[1:])
            value = node.value
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "print"
            ):
                found = False  # a comment after print() describes the output, not a value
            if found:
                checks[node.lineno] = (shown, comment[1:].strip())
                node = ast.copy_location(
                    ast.Expr(
                        ast.Call(
                            ast.Name("__shown__", ast.Load()),
                            [node.value, ast.Constant(node.lineno)],
                            [],
                        )
                    ),
                    node,
                )
        body.append(node)
    tree.body = body
    ast.fix_missing_locations(tree)

    def shown(actual: object, line: int) -> None:
        value, text = checks[line]
        _check_shown(actual, value, text, f"docs/{block.page}:{line}")

    namespace["__shown__"] = shown
    exec(compile(tree, str(DOCS / block.page), "exec"), namespace)


def _run_page(page: Path, leave_out: tuple[str, ...], tmp_path, monkeypatch):
    text = page.read_text(encoding="utf-8")
    runnable = [b for b in blocks(page) if b.action not in leave_out]
    if not runnable:
        pytest.skip(f"docs/{page.name}: every block is marked {' or '.join(leave_out)}")
    if "../shared/data" in text and not DATA.exists():
        pytest.skip(f"docs/{page.name} reads the shared corpora: {DATA} not found (PARAKIT_DATA)")
    (tmp_path / "shared").mkdir()
    if DATA.exists():
        (tmp_path / "shared" / "data").symlink_to(DATA)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    namespace = {"__name__": "__main__"}  # a page makes its inputs in its own blocks
    for block in runnable:
        started = time.perf_counter()
        if block.language == "bash":
            _bash(block, work)
        elif block.action == "raises":
            with pytest.raises(Exception) as raised:
                _python(block, namespace)
            assert type(raised.value).__name__ == block.argument, raised.value
        else:
            _python(block, namespace)
        print(
            f"docs/{page.name}:{block.line} {block.language} {time.perf_counter() - started:.1f} s"
        )
