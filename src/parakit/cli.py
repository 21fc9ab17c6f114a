"""The ``parakit`` command line.

Each package that has commands exposes a Typer app as ``parakit.<package>.cli:app``; the groups
listed in :data:`COMMAND_GROUPS` are registered when their module exists, so a package adds
its commands without touching this file. Core commands (``convert``, ``info``, ``split``,
``similarity``, ``demo``, ``formats``) live in :mod:`parakit.commands`.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

import typer

from parakit.errors import ParakitError

#: (group name, module with a Typer ``app``, help), in the order of the flow.
COMMAND_GROUPS: tuple[tuple[str, str, str], ...] = (
    (
        "build",
        "parakit.build.cli",
        "Corpus construction: align documents, make candidates, sample.",
    ),
    ("annotate", "parakit.annotate.cli", "Annotation web tool, crowd import, agreement."),
    (
        "identify",
        "parakit.models.identify_cli",
        "Train, evaluate and apply paraphrase classifiers.",
    ),
    ("embed", "parakit.models.embed_cli", "Train and evaluate paraphrase embeddings."),
    ("mine", "parakit.mine.cli", "Vector index, nearest-neighbour mining, tiles, growth."),
    ("generate", "parakit.models.generate_cli", "Paraphrase generation and its evaluation."),
    ("report", "parakit.analysis.cli", "Performance profiles and corpus reports."),
)


def module_available(name: str) -> bool:
    """Whether ``name`` can be imported (its parent packages may be missing too)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def build_app() -> typer.Typer:
    """The root Typer app with the core commands and every available command group."""
    from parakit.commands import register_core

    app = typer.Typer(
        name="parakit",
        help="parakit: build, annotate, release, train, evaluate and explain paraphrase corpora.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    register_core(app)
    for name, module_name, help_text in COMMAND_GROUPS:
        if not module_available(module_name):
            continue
        module = importlib.import_module(module_name)
        app.add_typer(module.app, name=name, help=help_text)
    return app


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, turning parakit errors into a message and exit code 2."""
    app = build_app()
    try:
        app(args=argv, standalone_mode=False)
    except ParakitError as err:
        typer.secho(f"error: {err}", fg="red", err=True)
        return 2
    except FileNotFoundError as err:
        typer.secho(f"error: {err}", fg="red", err=True)
        return 2
    except KeyboardInterrupt:
        typer.secho("interrupted", fg="yellow", err=True)
        return 130
    except SystemExit as err:  # typer/click exits (--help, usage errors)
        return int(err.code or 0)
    except Exception as err:  # click usage errors come through here in non-standalone mode
        import click

        if isinstance(err, click.exceptions.ClickException):
            err.show()
            return err.exit_code
        if isinstance(err, click.exceptions.Abort):
            typer.secho("aborted", fg="yellow", err=True)
            return 1
        raise
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
