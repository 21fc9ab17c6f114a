"""The root ``parakit`` app and the one place where errors become messages.

Every mistake a user can make on the command line ends the same way: one line
``error: ...`` on stderr and exit code 2 — a usage mistake (no command, unknown option, missing
argument, a value that is not a number), a :class:`~parakit.errors.ParakitError` (bad data,
unknown model, ...) or a file that cannot be read or written. ``--verbose`` shows library
warnings and, for an unexpected internal error, the traceback. Ctrl-C exits 130 with
``interrupted`` (``; rerun to resume`` where the run said it resumes:
:func:`~parakit.cli.options.mark_resumable`).
"""

from __future__ import annotations

import copy
import functools
import importlib
import logging
import os
import sys
import warnings
from typing import Annotated, Any

import typer
from typer.core import TyperArgument

from parakit.cli.extras import install_line, missing_extra_error, missing_extras
from parakit.cli.options import Output
from parakit.cli.stages import COMMAND_GROUPS, module_available
from parakit.errors import ParakitError, ParakitFutureWarning

#: exit code of every usage or data error
USAGE_EXIT = 2
#: exit code of an interrupted command (128 + SIGINT, as shells report it)
INTERRUPT_EXIT = 130


def _version_callback(value: bool) -> None:
    if value:
        from parakit import __version__

        typer.echo(f"parakit {__version__}")
        raise typer.Exit()


def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Show library warnings and debug logs.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Only errors: no progress bars, no info logs.")
    ] = False,
) -> None:
    """parakit: build, annotate, release, train, evaluate and explain paraphrase corpora."""
    output = ctx.ensure_object(Output)
    output.verbose, output.quiet = output.verbose or verbose, output.quiet or quiet
    configure_output(output)


def configure_output(output: Output) -> None:
    """Set logging and library warnings for one CLI run.

    parakit's own bars read ``output`` (:func:`parakit.cli.options.show_progress`); libraries
    are told through their own settings: warnings and logs hidden unless ``verbose``, Hugging
    Face bars off with ``quiet``.
    """
    verbose, quiet = output.verbose, output.quiet
    level = logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO
    # parakit's own info logs are shown; other libraries' (alembic, httpx, ...) only with -v
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING, format="%(message)s", force=True
    )
    logging.getLogger("parakit").setLevel(level)
    if quiet:  # the settings tqdm and the Hugging Face libraries read for their own bars
        os.environ["TQDM_DISABLE"] = "1"
        os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    if not verbose:
        warnings.filterwarnings("ignore")
        # but parakit's own: a spelling that will stop working (-p encoder=...) is said even so
        warnings.filterwarnings("default", category=ParakitFutureWarning)
        for name in (
            "transformers",
            "sentence_transformers",
            "datasets",
            "httpx",
            "faiss",
            "huggingface_hub",
        ):
            logging.getLogger(name).setLevel(logging.ERROR)
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _set_output(ctx: Any, param: Any, value: bool) -> None:
    """``-q``/``-v`` given after a command: the same as before it."""
    if value:
        output = ctx.ensure_object(Output)
        setattr(output, param.name, True)
        configure_output(output)


def build_app() -> typer.Typer:
    """The root Typer app with the core commands and every available command group."""
    from parakit.cli import core, release

    app = typer.Typer(
        name="parakit",
        add_completion=True,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    app.add_typer(core.app)
    app.add_typer(release.app)  # parakit release
    for name, module_name, package, help_text in COMMAND_GROUPS:
        if not module_available(package):
            continue
        module = importlib.import_module(module_name)
        extras = missing_extras(name)
        short_help = None
        if extras:  # the group is there, its main work needs the extras: say so, uncut
            help_text = f"{help_text} [extra not installed: {install_line(extras)}]"
            short_help = help_text
        app.add_typer(module.app, name=name, help=help_text, short_help=short_help)
    return app


def finish_tree(root: Any) -> Any:
    """The click tree as parakit shows it: ``-q/-v`` on every command and group, help text as
    written.

    typer 0.29 shows ``{input}`` for an argument in the usage line, ``<bool>`` beside a flag and
    reads ``[...]`` in help as rich markup (``[low, high]`` vanished); click's own style is kept.
    Help is click's layout: it wraps to the terminal (80 columns at most) and never cuts an
    option name, where rich's panels cut ``--no-same-source`` to ``--no-same-sour…`` at 80.
    """
    from rich.markup import escape

    shared = [p for p in root.params if p.name in ("verbose", "quiet")]
    rich_help = getattr(typer.core, "HAS_RICH", False)  # off with TYPER_USE_RICH=0
    for command in [root, *_walk(root)]:
        command.rich_markup_mode = None  # click's help layout (see above)
        markup = rich_help and getattr(command, "rich_markup_mode", None) == "rich"
        if command.help and markup:
            command.help = escape(command.help)
        help_option = command.get_help_option(
            typer.Context(command, help_option_names=["-h", "--help"])
        )
        for param in [*command.params, *([help_option] if help_option else [])]:
            if param.help and markup:
                param.help = escape(param.help)
            if param.param_type_name == "argument":
                if param.metavar is None:
                    param.metavar = param.name.upper()
                if type(param) is TyperArgument:
                    param.__class__ = _Argument
            elif getattr(param, "is_flag", False):
                param.metavar = ""  # a flag takes no value
        if command is not root:  # groups too: `parakit mine -q run ...`
            for option in shared:
                copied = copy.copy(option)
                copied.expose_value = False
                copied.callback = _set_output
                command.params.append(copied)
    return root


def _walk(command: Any) -> Any:
    for sub in (getattr(command, "commands", None) or {}).values():
        yield sub
        yield from _walk(sub)


class _Argument(TyperArgument):
    """An argument shown the click way in the usage line: ``INPUT``, ``[INPUT]``, ``INPUT...``."""

    def _usage_display_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")


@functools.cache
def _exception_types(name: str) -> tuple[type[BaseException], ...]:
    """The classes called ``name`` (``ClickException``, ``Abort``, ``Exit``) in typer, the click
    typer vendors since 0.2x, and click itself — whichever are installed."""
    found: list[type[BaseException]] = []
    for module_name in ("typer.exceptions", "typer._click.exceptions", "click.exceptions"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        if isinstance(getattr(module, name, None), type):
            found.append(getattr(module, name))
    return tuple(found)


def _usage_message(err: Any) -> str:
    """One line for a click/typer usage error, with where to get help."""
    ctx = getattr(err, "ctx", None)
    if type(err).__name__ == "NoArgsIsHelpError":
        path = ctx.command_path if ctx is not None else "parakit"
        return f"missing command; run '{path} --help' to list the commands"
    message = " ".join(str(err.format_message()).split())
    if ctx is not None:
        message += f" (see '{ctx.command_path} --help')"
    return message


#: options that act without a command (typer's completion pair included)
EAGER_OPTIONS = ("-h", "--help", "--version", "--show-completion", "--install-completion")


def missing_command(command: Any, args: list[str]) -> str | None:
    """The command path when ``args`` stop at a group (``parakit``, ``parakit mine``), else None.

    Checked before typer runs: typer's own "no arguments is help" prints the whole help page and
    then raises, where parakit gives one line.
    """
    if any(arg in EAGER_OPTIONS for arg in args):
        return None
    path = ["parakit"]
    node = command
    for token in (arg for arg in args if not arg.startswith("-")):
        commands = getattr(node, "commands", None)
        if commands is None or token not in commands:
            return None
        node = commands[token]
        path.append(token)
    return " ".join(path) if getattr(node, "commands", None) is not None else None


def _group(command: Any, args: list[str]) -> str | None:
    """The command group (or root command) ``args`` name: ``annotate`` of ``annotate init``."""
    commands = getattr(command, "commands", None) or {}
    return next((arg for arg in args if arg in commands), None)


def os_error_message(err: OSError) -> str:
    """``PATH: reason`` for a file that cannot be read or written, naming the user's path."""
    path = err.filename
    reason = err.strerror or str(err)
    if path is None:
        return reason
    if isinstance(err, FileExistsError) and os.path.isfile(path):
        reason = "a file is in the way where a folder is needed"
    elif isinstance(err, NotADirectoryError):
        reason = "a parent of this path is a file, not a folder"
    return f"{path}: {reason}"


def error_line(message: str) -> None:
    """Print ``error: message`` on stderr, on one line."""
    typer.secho(f"error: {' '.join(message.split())}", fg="red", err=True)


@functools.cache
def root_command() -> Any:
    """The click command tree of :func:`build_app`, built once per process (it only depends on
    which stage packages are installed)."""
    return finish_tree(typer.main.get_command(build_app()))


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI; every error becomes one ``error: ...`` line and exit code 2;
    Ctrl-C exits 130."""
    command = root_command()
    args = sys.argv[1:] if argv is None else list(argv)
    # a shell completion request names no command: typer answers it
    group = None if os.environ.get("_PARAKIT_COMPLETE") else missing_command(command, args)
    if group is not None:
        error_line(f"missing command; run '{group} --help' to list the commands")
        return USAGE_EXIT
    output = Output()
    saved = {name: os.environ.get(name) for name in _LIBRARY_SETTINGS}
    try:
        return _run(command, args, output)
    finally:  # the next run in this process (tests, notebooks) starts from the same settings
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


#: environment settings of other libraries that one run's -q/-v change
_LIBRARY_SETTINGS = ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS")


def _run(command: Any, args: list[str], output: Output) -> int:
    try:
        # standalone_mode=False: errors come here; typer returns the code of an Exit (130
        # for Ctrl-C, which it catches) and a command's return value otherwise
        result = command.main(args=args, standalone_mode=False, prog_name="parakit", obj=output)
    except ParakitError as err:
        error_line(str(err))
        return USAGE_EXIT
    except OSError as err:
        error_line(os_error_message(err))
        return USAGE_EXIT
    except KeyboardInterrupt:  # raised outside typer's own handler (while parsing)
        result = INTERRUPT_EXIT
    except SystemExit as err:  # sys.exit in a command
        code = err.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except Exception as err:
        if isinstance(err, _exception_types("ClickException")):
            error_line(_usage_message(err))
            return USAGE_EXIT
        if isinstance(err, _exception_types("Exit")):
            return int(getattr(err, "exit_code", 0) or 0)
        if isinstance(err, _exception_types("Abort")):
            if not isinstance(err.__cause__ or err.__context__, KeyboardInterrupt):
                typer.secho("aborted", fg="yellow", err=True)
                return 1
            result = INTERRUPT_EXIT  # click (typer < 0.2x) turns Ctrl-C into Abort
        else:
            missing = missing_extra_error(err, _group(command, args))
            if missing is not None:  # a smaller install: name the extra, not a bug
                error_line(str(missing))
                return USAGE_EXIT
            if output.verbose:
                raise
            error_line(
                f"internal error ({type(err).__name__}: {err}); "
                "please report it with the output of the same command run with --verbose"
            )
            return 1
    if result == INTERRUPT_EXIT:  # where a rerun resumes the work, say so
        message = "interrupted; rerun to resume" if output.resumes else "interrupted"
        typer.secho(message, fg="yellow", err=True)
    if isinstance(result, int) and not isinstance(result, bool):
        return result
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
