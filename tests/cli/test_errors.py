"""Every mistake a user can make ends in one line ``error: ...`` on stderr and exit code 2.

Most cases run in-process (``main(argv)``); a handful run ``python -m parakit`` to check what a
user really sees (no traceback, the exit code of the process).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from parakit.cli import main
from parakit.cli.app import one_code
from parakit.cli.demo import example_path

EXAMPLE = str(example_path())


@pytest.fixture
def files(tmp_path):
    (tmp_path / "afile").write_text("not a folder\n")
    (tmp_path / "adir").mkdir()
    (tmp_path / "s.txt").write_text("a b c\nd e f\n")
    (tmp_path / "bad.json").write_text("{oops")
    (tmp_path / "bad.jsonl").write_text(
        '{"parakit": 1}\n{"id": "a", "text1": "x", "text2": "y", "label": "7"}\n'
    )
    if os.geteuid() == 0:  # root writes anywhere but into /sys
        unwritable = Path("/sys/parakit-test")
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        unwritable = locked / "out"
    return tmp_path, unwritable


# (case id, argv with {t} = tmp folder and {u} = unwritable folder, text the line must hold)
CASES = [
    ("no arguments", [], "missing command; run 'parakit --help'"),
    ("group without command", ["mine"], "'parakit mine --help'"),
    ("group without command 2", ["report"], "'parakit report --help'"),
    ("unknown command", ["nosuch"], "No such command 'nosuch'"),
    ("unknown sub-command", ["identify", "fly"], "No such command 'fly'"),
    ("unknown option", ["convert", EXAMPLE, "--bogus"], "--bogus"),
    ("missing argument", ["convert"], "Missing argument"),
    ("missing output", ["convert", EXAMPLE], "'--output' / '-o'"),
    ("missing option", ["report", "profile", EXAMPLE, "-o", "{t}/r"], "--predictions"),
    ("old positional output", ["split", EXAMPLE, "{t}/x.jsonl"], "'--output' / '-o'"),
    ("bad ratios", ["split", EXAMPLE, "-o", "{t}/x.jsonl", "--ratios", "abc"], "--ratios"),
    ("negative ratios", ["split", EXAMPLE, "-o", "{t}/x.jsonl", "--ratios", "-1/2"], "--ratios"),
    ("ratios vs names", ["split", EXAMPLE, "-o", "{t}/x.jsonl", "--ratios", "1/1"], "--names"),
    ("bad choice", ["split", EXAMPLE, "-o", "{t}/x.jsonl", "--stratify", "maybe"], "--stratify"),
    ("not an integer", ["split", EXAMPLE, "-o", "{t}/x.jsonl", "--folds", "x"], "--folds"),
    ("bad range", ["similarity", EXAMPLE, "-o", "{t}/x.jsonl", "--ngrams", "a-b"], "--ngrams"),
    ("reversed range", ["similarity", EXAMPLE, "-o", "{t}/x.jsonl", "--ngrams", "4-2"], "4-2"),
    ("out of range", ["embed", "train", EXAMPLE, "-o", "{t}/m", "--epochs", "0"], "--epochs"),
    ("bad integer", ["build", "sample", EXAMPLE, "-o", "{t}/x.jsonl", "--n", "abc"], "--n"),
    ("bad KEY=VALUE", ["convert", EXAMPLE, "-o", "{t}/x.jsonl", "-O", "bad"], "KEY=VALUE"),
    ("bad column", ["convert", EXAMPLE, "-o", "{t}/x.jsonl", "-c", "=x"], "--column"),
    ("bad param", ["identify", "train", EXAMPLE, "-o", "{t}/m", "-p", "oops"], "--param"),
    ("unknown model type", ["identify", "train", EXAMPLE, "-o", "{t}/m", "-m", "nosuch"], "E711"),
    (
        "missing model folder",
        ["mine", "index", "{t}/s.txt", "-o", "{t}/i", "-m", "./nope"],
        "./nope",
    ),
    (
        "not a model folder",
        ["identify", "predict", "{t}/adir", EXAMPLE, "-o", "{t}/p.jsonl"],
        "adir",
    ),
    ("unknown offline model", ["models", "path", "nosuch"], "E720"),
    ("unknown backend", ["mine", "index", "{t}/s.txt", "-o", "{t}/i", "--backend", "nope"], "nope"),
    ("unknown input format", ["info", EXAMPLE, "-f", "nope"], "unknown format 'nope'"),
    ("unknown output format", ["convert", EXAMPLE, "-o", "{t}/x.xyz"], "x.xyz"),
    ("unknown --to", ["convert", EXAMPLE, "-o", "{t}/x.csv", "--to", "nope"], "nope"),
    ("missing input file", ["info", "{t}/missing.jsonl"], "missing.jsonl: no such file"),
    ("missing input 2", ["report", "corpus", "{t}/nope.jsonl", "-o", "{t}/r"], "nope.jsonl"),
    ("bad data", ["info", "{t}/bad.jsonl", "--scheme", "turku"], "bad.jsonl, line 2"),
    ("output parent is a file", ["convert", EXAMPLE, "-o", "{t}/afile/x.jsonl"], "afile/x.jsonl"),
    ("output folder is a file", ["demo", "-o", "{t}/afile"], "afile: a file is in the way"),
    ("unwritable output", ["convert", EXAMPLE, "-o", "{u}/x.jsonl"], "{u}/x.jsonl"),
    ("no generator", ["generate", "run", "{t}/s.txt", "-o", "{t}/g.jsonl"], "--model"),
    (
        "bad JSON file",
        ["build", "subtitles", "{t}/adir", "-o", "{t}/x.jsonl", "--yields", "{t}/bad.json"],
        "bad.json",
    ),
    ("tiles without scores", ["mine", "tiles", EXAMPLE, "-o", "{t}/t"], "lex_similarity"),
]


def _argv(argv, tmp, unwritable):
    return [a.format(t=tmp, u=unwritable) for a in argv]


def _check(err: str, expected: str, code: int) -> None:
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    assert "Traceback" not in err
    assert expected in lines[0], lines[0]
    assert ".tmp" not in lines[0]  # never the hidden temp file of an atomic write
    codes = [w for w in lines[0].split() if w.startswith("[E")]
    assert len(codes) == len(set(codes)), lines[0]


def test_at_least_25_mistakes():
    assert len(CASES) >= 25
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("name, argv, expected", CASES, ids=[c[0] for c in CASES])
def test_mistake_gives_one_line(name, argv, expected, files, capsys):
    tmp, unwritable = files
    code = main(_argv(argv, tmp, unwritable))
    _check(capsys.readouterr().err, expected.format(t=tmp, u=unwritable), code)


SUBPROCESS = [
    "no arguments",
    "group without command",
    "unknown option",
    "bad ratios",
    "output parent is a file",
    "unwritable output",
]


@pytest.mark.parametrize("name", SUBPROCESS)
def test_mistake_in_a_real_process(name, files):
    tmp, unwritable = files
    _, argv, expected = next(c for c in CASES if c[0] == name)
    result = subprocess.run(
        [sys.executable, "-m", "parakit", *_argv(argv, tmp, unwritable)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    _check(result.stderr, expected.format(t=tmp, u=unwritable), result.returncode)
    assert result.stdout == ""


def test_a_code_is_shown_once():
    assert one_code("[E201] pair 'a': [E201] invalid label") == "[E201] pair 'a': invalid label"
    assert one_code("[E121] a: [E104] b") == "[E121] a: [E104] b"


def test_a_coded_value_error_is_a_usage_error(monkeypatch, capsys):
    """A library error that is still a bare ValueError with a code is not an internal error."""
    import parakit.describe

    def boom(pairs):
        raise ValueError("[E102] duplicate pair id 'a'")

    monkeypatch.setattr(parakit.describe, "describe", boom)
    code = main(["info", EXAMPLE])
    _check(capsys.readouterr().err, "[E102] duplicate pair id", code)
