"""The CLI convention of docs/cli.md, checked on every command of the click tree."""

from __future__ import annotations

import inspect
import re

import pytest
import typer

from parakit.cli.app import build_app

#: groups whose module another engineer is converting; listed here so the exemption is visible
PENDING: dict[str, str] = {}


def _leaves(command, path: tuple[str, ...] = ("parakit",)):
    # typer >= 0.2x vendors click (typer._click), so no isinstance checks against click
    if getattr(command, "commands", None) is not None:
        for name, sub in sorted(command.commands.items()):
            yield from _leaves(sub, (*path, name))
    else:
        yield " ".join(path), command


def _typer_callbacks(app: typer.Typer, path: tuple[str, ...] = ("parakit",)):
    for info in app.registered_commands:
        name = info.name or info.callback.__name__.replace("_", "-")
        yield " ".join((*path, name)), info.callback
    for group in app.registered_groups:
        # a group without a name (the core commands) adds its commands at this level
        name = group.name if isinstance(group.name, str) else None
        yield from _typer_callbacks(group.typer_instance, (*path, name) if name else path)


APP = build_app()
ROOT = typer.main.get_command(APP)
COMMANDS = dict(_leaves(ROOT))
CHECKED = {path: command for path, command in COMMANDS.items() if path.split()[1] not in PENDING}


def test_the_tree_has_every_group():
    groups = {path.split()[1] for path in COMMANDS if len(path.split()) > 2}
    assert {"build", "identify", "embed", "mine", "generate", "report"} <= groups
    assert len(COMMANDS) >= 50


@pytest.mark.parametrize("path", sorted(CHECKED))
def test_command_follows_the_convention(path):
    command = CHECKED[path]
    problems = []
    for param in command.params:
        opts = set(param.opts) | set(getattr(param, "secondary_opts", []))
        if param.param_type_name == "argument":
            if param.name in ("output", "out", "out_dir", "output_dir"):
                problems.append(f"positional output {param.name!r}: use -o/--output")
            continue
        if opts & {"--out", "--out-dir", "--output-dir", "--from"}:
            problems.append(f"{sorted(opts)}: use --output / --format")
        if "-o" in opts and "--output" not in opts:
            problems.append(f"-o means {sorted(opts)}; -o is only --output")
        if "--output" in opts and "-o" not in opts:
            problems.append("--output without its short form -o")
        if "-f" in opts and "--format" not in opts:
            problems.append(f"-f means {sorted(opts)}; -f is only --format")
        if "--format" in opts and "-f" not in opts:
            problems.append("--format without its short form -f")
        if "-O" in opts and "--option" not in opts:
            problems.append(f"-O means {sorted(opts)}")
        if "--seed" in opts and param.default != 0:
            problems.append(f"--seed defaults to {param.default!r}, not 0")
    assert not problems, problems


@pytest.mark.parametrize(
    "path, callback",
    [(p, c) for p, c in _typer_callbacks(APP) if p.split()[1] not in PENDING],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_one_typer_style(path, callback):
    """Annotated[...] everywhere: no typer.Option/Argument as a default value."""
    old_style = [
        name
        for name, param in inspect.signature(callback).parameters.items()
        if isinstance(param.default, typer.models.ParameterInfo)
    ]
    assert not old_style, f"{path}: {old_style}"


def test_pending_groups_are_real():
    for group in PENDING:
        assert any(path.split()[1] == group for path in COMMANDS)


def _help_paths() -> list[str]:
    from parakit.cli.app import root_command

    root = root_command()
    groups = [" ".join(p.split()[:2]) for p in COMMANDS if len(p.split()) > 2]
    return sorted({"parakit", *groups, *dict(_leaves(root))})


def test_every_help_fits_80_columns_and_shows_each_option_whole(monkeypatch, capsys):
    """Help rendered at COLUMNS=80: no line longer than 80 characters, and every option name
    (``--no-same-source`` too) written out whole, never cut to ``--no-same-sour…``."""
    from parakit.cli import main
    from parakit.cli.app import root_command

    monkeypatch.setenv("COLUMNS", "80")
    root = root_command()
    problems = []
    for path in _help_paths():
        command = root
        for name in path.split()[1:]:
            command = command.commands[name]
        assert main([*path.split()[1:], "--help"]) == 0, path
        text = capsys.readouterr().out
        long = [line for line in text.splitlines() if len(line) > 80]
        if long:
            problems.append(f"{path}: {len(long[0])} columns: {long[0]!r}")
        for param in command.params:
            if param.param_type_name == "argument" or getattr(param, "hidden", False):
                continue
            for name in [*param.opts, *getattr(param, "secondary_opts", [])]:
                if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text):
                    problems.append(f"{path}: option {name} is not shown whole")
    assert not problems, "\n".join(problems)


def test_models_get_run_settings_as_arguments():
    """``--precision`` and the other run settings reach a model as constructor or loader
    arguments (``make_model(name, run_settings(precision))``, ``load_model(folder,
    precision=...)``), never as attributes set on a model already built."""
    from pathlib import Path

    import parakit.cli

    pattern = re.compile(r"\.(precision|mixed_precision|device|progress)\s*=(?!=)|setattr\(\w+, ")
    for path in Path(parakit.cli.__file__).parent.rglob("*.py"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "setattr(output, " in line:  # the Output settings object of -q/-v, not a model
                continue
            assert not pattern.search(line), f"{path.name}:{number}: {line.strip()}"


def test_precision_is_checked_against_the_one_list_by_every_command():
    """Every ``--precision`` option offers exactly :data:`~parakit.vectors.precision.PRECISIONS`
    (typer checks the value: one list, no callback of its own), and a value outside it is a
    usage error naming them, before any file is read."""
    import typing

    from typer.testing import CliRunner

    from parakit.vectors.precision import PRECISIONS

    with_precision = []
    for path, command in CHECKED.items():
        for param in command.params:
            if "--precision" in getattr(param, "opts", ()):
                with_precision.append(path)
                assert typing.get_args(param.type_descriptor.annotation) == PRECISIONS, path
    assert len(with_precision) >= 8, with_precision  # train, predict, embed, mine, build...
    result = CliRunner().invoke(
        APP, ["mine", "run", "no-such-file.txt", "-o", "x", "--workdir", "w", "--precision", "fp64"]
    )
    assert result.exit_code == 2
    said = re.sub(r"[\s│]+", " ", result.output)  # the rich error box folds the line
    assert "'fp64' is not one of 'auto', 'fp32', 'bf16', 'fp16'" in said, said
