"""The CLI on bad files: exactly one ``error:`` line on stderr, exit code 2, no traceback, no
output file; for ``convert``, ``info``, ``split`` and ``similarity`` on 40+ damaged inputs."""

from __future__ import annotations

import functools
import logging
import random
import subprocess
import sys
from pathlib import Path

import pytest

from parakit.cli import main

sys.path.insert(0, str(Path(__file__).parents[1] / "fuzz"))  # the fuzz harness (tests/fuzz)
from harness import TARGETS, make_target, mutate, run_case

#: Reader format and extra CLI arguments for each fuzz target's variants (by file name).
FORMATS = {
    "sv-test.json": ["-f", "turku"],
    "opus-pb-dev.json": ["-f", "turku-opus-pb"],
    "opus-pb-sample.tsv": ["-f", "turku-opus-pb"],
    "expert-train.csv": ["-f", "multipit"],
    "auto-val.csv": ["-f", "multipit"],
    "tmup.tsv": ["-f", "tmup"],
    "msr.txt": ["-f", "mrpc"],
    "corpus.jsonl": ["-f", "jsonl"],
    "pairs.csv": ["-f", "csv"],
    "pairs.tsv": ["-f", "tsv"],
}
MAPPING = ["-c", "id=key", "-c", "text1=a", "-c", "text2=b", "-c", "label=y", "-c", "fold=f"]
PER_TARGET = 4


def _bad_inputs(data: Path, root: Path) -> list[tuple[str, Path, list[str]]]:
    """(description, input path, reader arguments) of damaged files the readers refuse."""
    out = []
    for name in TARGETS:
        target = make_target(name, data)
        rng = random.Random(13)
        found = 0
        while found < PER_TARGET:
            case = mutate(target, rng)
            if run_case(case, root / "probe").kind != "error":
                continue
            folder = root / f"{name}-{found}"
            for relative, content in case.files.items():
                (folder / relative).parent.mkdir(parents=True, exist_ok=True)
                (folder / relative).write_bytes(content)
            entry = folder / case.variant.entry
            if name == "etpc":
                args = ["-f", "etpc", "-O", f"mrpc={folder / 'msr.txt'}"]
            else:
                args = list(FORMATS[case.variant.entry])
                if name == "table":
                    args += MAPPING
            out.append((f"{name}/{case.mutation}", entry, args))
            found += 1
    return out


@pytest.fixture(scope="module")
def bad_inputs(data_path, tmp_path_factory):
    data = data_path("turku/sv-test.json").parents[1]
    root = tmp_path_factory.mktemp("cli-bad")
    inputs = _bad_inputs(data, root)
    extra = root / "extra"
    extra.mkdir()
    handmade = {
        "repeated-header.csv": b"sentence1,sentence2,sentence1\na,b,1\n",
        "stray-quote.csv": b'sentence1,sentence2\na "b,c\n',
        "cut.csv": b"sentence1,sentence2,label\na,b,1\nc,d",  # a short last row
        "binary.csv": b"\x89PNG\r\n\x1a\n\x00\x00",
        "empty.csv": b"",
        "deep.jsonl": b'{"text1": "a", "text2": "b", "metadata": '
        + b"[" * 3000
        + b"]" * 3000
        + b"}\n",
        "no-such-format.xyz": b"hello\n",
    }
    for name, content in handmade.items():
        (extra / name).write_bytes(content)
        inputs.append((f"handmade/{name}", extra / name, []))
    inputs.append(("handmade/missing", extra / "missing.csv", []))
    assert len(inputs) >= 30
    return inputs


COMMANDS = {
    "convert": lambda out: ["-o", str(out / "out.jsonl")],
    "info": lambda out: [],
    "split": lambda out: ["-o", str(out / "split.jsonl")],
    "similarity": lambda out: ["-o", str(out / "sim.jsonl")],
}


@pytest.fixture
def cached_app(monkeypatch):
    """Build the app and its click command once for the many calls below (``main`` builds them
    on every call, about 0.2 s)."""
    import typer

    import parakit.cli.app as app_module

    monkeypatch.setattr(app_module, "build_app", functools.lru_cache(app_module.build_app))
    monkeypatch.setattr(typer.main, "get_command", functools.lru_cache(typer.main.get_command))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_bad_files_give_one_error_line_and_exit_code_2(
    command, bad_inputs, tmp_path, capsys, cached_app
):
    logging.disable(logging.WARNING)
    try:
        for description, path, args in bad_inputs:
            code = main([command, str(path), *args, *COMMANDS[command](tmp_path)])
            captured = capsys.readouterr()
            lines = captured.err.strip().splitlines()
            assert code == 2, (description, code, captured.err[-500:])
            assert len(lines) == 1 and lines[0].startswith("error: "), (description, lines[:5])
            assert "Traceback" not in captured.err + captured.out, description
            assert len(lines[0]) < 700, (description, len(lines[0]))
            assert list(tmp_path.iterdir()) == [], description  # no output, no temp file
    finally:
        logging.disable(logging.NOTSET)


def test_the_installed_entry_point_too(bad_inputs, tmp_path):
    """Three inputs through ``python -m parakit`` (a fresh process: nothing caught by pytest)."""
    for description, path, args in bad_inputs[:: max(1, len(bad_inputs) // 3)][:3]:
        result = subprocess.run(
            [sys.executable, "-m", "parakit", "info", str(path), *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2, (description, result.stderr[-500:])
        assert len(lines) == 1 and lines[0].startswith("error: "), (description, lines[:5])
