"""The one registry helper: ``module:attr`` targets, ``register()``, entry points; and the
registries that use it (readers, writers, models, label schemes, phenomena, offline models,
encoders, command groups)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import parakit
from parakit.errors import LabelError, ModelError, ParakitError
from parakit.io import READERS
from parakit.registry import Registry


def _install(folder: Path, name: str, source: str, entry_points: str) -> None:
    """A distribution installed the way pip leaves it: a module and a dist-info folder."""
    (folder / f"{name}.py").write_text(source, encoding="utf-8")
    info = folder / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """An installed distribution ``lines-plugin`` (a dist-info folder on ``sys.path``) whose
    entry points add a ``lines`` reader and a ``jsonl`` reader (a name parakit already has)."""
    _install(
        tmp_path,
        "lines_plugin",
        "from parakit.schema import Pair, PairSet\n"
        "def read_lines(path, scheme='binary'):\n"
        "    rows = [l.rstrip('\\n').split(' || ') for l in open(path, encoding='utf-8')]\n"
        "    return PairSet([Pair(str(i), a, b, label=y) for i, (a, b, y) in enumerate(rows)],\n"
        "                   scheme=scheme)\n"
        "def not_used(path):\n"
        "    raise AssertionError('a plugin must not replace a built-in reader')\n",
        "[parakit.readers]\nlines = lines_plugin:read_lines\njsonl = lines_plugin:not_used\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    READERS.refresh()
    yield tmp_path
    monkeypatch.undo()
    sys.modules.pop("lines_plugin", None)
    READERS.refresh()


def test_an_entry_point_adds_a_reader_that_read_uses(plugin, tmp_path):
    path = tmp_path / "pairs.txt"
    path.write_text("A cat sat. || A cat was sitting. || 1\nHi. || Bye. || 0\n", encoding="utf-8")
    pairs = parakit.read(path, format="lines")
    assert [(p.text1, p.text2, p.label) for p in pairs] == [
        ("A cat sat.", "A cat was sitting.", "1"),
        ("Hi.", "Bye.", "0"),
    ]
    assert "lines" in parakit.io.formats()["read"]
    assert READERS["jsonl"] is parakit.io.read_jsonl  # built-in names win


def test_without_the_plugin_the_format_is_unknown(tmp_path):
    READERS.refresh()
    path = tmp_path / "pairs.txt"
    path.write_text("a || b || 1\n", encoding="utf-8")
    with pytest.raises(ParakitError, match=r"E113.*unknown format 'lines'"):
        parakit.read(path, format="lines")


def test_targets_are_imported_on_first_use_and_kept():
    reg = Registry("test-nothing", {"dumps": "json:dumps", "join": "os.path:join"})
    assert reg._entries["dumps"] == "json:dumps"  # nothing imported yet
    assert reg["dumps"]([1]) == "[1]" and reg["join"]("a", "b") == "a/b"
    assert not isinstance(reg._entries["dumps"], str)
    assert sorted(reg) == ["dumps", "join"] and len(reg) == 2


def test_register_and_lookup():
    reg: Registry = Registry("test-nothing", what="widget", error=LabelError, code="E299")
    assert reg.register("a", "math:sqrt") == "math:sqrt"
    reg.register("b")(len)

    @reg.register("c")
    def c() -> int:
        return 3

    assert reg.lookup("b")("xy") == 2 and reg.lookup("c")() == 3 and reg["a"](16) == 4.0
    with pytest.raises(LabelError, match=r"\[E299\] unknown widget 'd'; choose one of a, b, c"):
        reg.lookup("d")


def test_the_stage_registries_share_it():
    from parakit.analysis.phenomena import SOURCES
    from parakit.errors import MineError
    from parakit.labels import SCHEMES, get_scheme
    from parakit.models.base import MODELS, get_model_class
    from parakit.offline import OFFLINE_MODELS
    from parakit.vectors.encode import ENCODERS, load_encoder

    for reg in (READERS, parakit.io.WRITERS, MODELS, SCHEMES, SOURCES, OFFLINE_MODELS, ENCODERS):
        assert isinstance(reg, Registry)
    with pytest.raises(MineError, match=r"\[E806\] unknown encoder backend 'trt'; choose one of"):
        load_encoder("offline-minilm", backend="trt")
    with pytest.raises(ModelError, match=r"\[E711\] unknown model type 'nosuch'; choose one of"):
        get_model_class("nosuch")
    with pytest.raises(LabelError, match=r"\[E205\] unknown label scheme 'nosuch'"):
        get_scheme("nosuch")
    assert get_model_class("wor").__name__ == "WORClassifier"


def test_an_entry_point_adds_a_command_group(tmp_path):
    _install(
        tmp_path,
        "hello_plugin",
        "import typer\n"
        "app = typer.Typer()\n"
        "@app.command()\n"
        "def hi() -> None:\n"
        "    typer.echo('hi from a plugin')\n"
        "@app.command()\n"
        "def bye() -> None:\n"
        "    typer.echo('bye')\n"
        "GROUP = ('hello_plugin', 'hello_plugin', 'Greetings from a plugin.')\n",
        "[parakit.commands]\nhello = hello_plugin:GROUP\n",
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    run = [sys.executable, "-m", "parakit"]
    out = subprocess.run([*run, "hello", "hi"], capture_output=True, text=True, env=env)
    assert (out.returncode, out.stdout) == (0, "hi from a plugin\n"), out.stderr
    listing = subprocess.run([*run, "--help"], capture_output=True, text=True, env=env).stdout
    assert "Greetings from a plugin." in listing
    plain = subprocess.run([*run, "--help"], capture_output=True, text=True).stdout
    assert "hello" not in plain
