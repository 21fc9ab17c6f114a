"""The root ``parakit`` app and the one place where errors become messages.

Every mistake a user can make on the command line ends the same way: one line
``error: ...`` on stderr and exit code 2 — a usage mistake (no command, unknown option, missing
argument, a value that is not a number), a :class:`~parakit.errors.ParakitError` (bad data,
unknown model, ...) or a file that cannot be read or written. ``--verbose`` shows library
warnings and, for an unexpected internal error, the traceback.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import re
import sys
import warnings
from typing import Annotated, Any

import typer

from parakit.cli.stages import COMMAND_GROUPS, module_available
from parakit.errors import ParakitError

#: exit code of every usage or data error
USAGE_EXIT = 2


def _version_callback(value: bool) -> None:
    if value:
        from parakit import __version__

        typer.echo(f"parakit {__version__}")
        raise typer.Exit()


def _root(
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
    configure_output(verbose=verbose, quiet=quiet)


def configure_output(*, verbose: bool = False, quiet: bool = False) -> None:
    """Set logging, library warnings and progress bars for one CLI run.

    Library warnings (transformers, ONNX Runtime, statsmodels, ...) are hidden unless
    ``verbose``; ``quiet`` also turns progress bars off (tqdm reads ``TQDM_DISABLE``).
    """
    level = logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO
    # parakit's own info logs are shown; other libraries' (alembic, httpx, ...) only with -v
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING, format="%(message)s", force=True
    )
    logging.getLogger("parakit").setLevel(level)
    os.environ["PARAKIT_VERBOSE"] = "1" if verbose else "0"
    if quiet:
        os.environ["TQDM_DISABLE"] = "1"
        os.environ["PARAKIT_QUIET"] = "1"
    elif os.environ.pop("PARAKIT_QUIET", None):  # a previous run in this process was quiet
        os.environ.pop("TQDM_DISABLE", None)
    _silence_tqdm(quiet)
    if not verbose:
        warnings.filterwarnings("ignore")
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


def _silence_tqdm(quiet: bool) -> None:
    """Turn every tqdm bar off (or back on): libraries pass ``disable=`` explicitly, so
    ``TQDM_DISABLE`` alone does not reach them."""
    from tqdm import std

    original = getattr(std.tqdm.__init__, "parakit_original", None)
    if quiet and original is None:
        init = std.tqdm.__init__

        def quiet_init(self: Any, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = True
            init(self, *args, **kwargs)

        quiet_init.parakit_original = init  # type: ignore[attr-defined]
        std.tqdm.__init__ = quiet_init  # type: ignore[method-assign]
    elif not quiet and original is not None:
        std.tqdm.__init__ = original  # type: ignore[method-assign]


def build_app() -> typer.Typer:
    """The root Typer app with the core commands and every available command group."""
    from parakit.cli.core import register_core

    app = typer.Typer(
        name="parakit",
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    register_core(app)
    for name, module_name, package, help_text in COMMAND_GROUPS:
        if not module_available(package):
            continue
        module = importlib.import_module(module_name)
        app.add_typer(module.app, name=name, help=help_text)
    return app


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


def missing_command(command: Any, args: list[str]) -> str | None:
    """The command path when ``args`` stop at a group (``parakit``, ``parakit mine``), else None.

    Checked before typer runs: typer's own "no arguments is help" prints the whole help page and
    then raises, where parakit gives one line.
    """
    if any(arg in ("-h", "--help", "--version") for arg in args):
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


_CODE = re.compile(r"\[(E\d{3,4})\] ")


def one_code(message: str) -> str:
    """``message`` with each error code shown once (a wrapped error repeats its inner code).

    Example:
        >>> one_code("[E201] pair 'a': [E201] invalid label '7'")
        "[E201] pair 'a': invalid label '7'"
    """
    seen: set[str] = set()

    def keep_first(match: re.Match[str]) -> str:
        code = match.group(1)
        if code in seen:
            return ""
        seen.add(code)
        return match.group(0)

    return _CODE.sub(keep_first, message)


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
    """Print ``error: message`` on stderr, on one line, each error code once."""
    typer.secho(f"error: {one_code(' '.join(message.split()))}", fg="red", err=True)


@functools.cache
def root_command() -> Any:
    """The click command tree of :func:`build_app`, built once per process (it only depends on
    which stage packages are installed)."""
    return typer.main.get_command(build_app())


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI; every error becomes one ``error: ...`` line and exit code 2."""
    command = root_command()
    args = sys.argv[1:] if argv is None else list(argv)
    group = missing_command(command, args)
    if group is not None:
        error_line(f"missing command; run '{group} --help' to list the commands")
        return USAGE_EXIT
    try:
        command.main(args=args, standalone_mode=False, prog_name="parakit")
    except ParakitError as err:
        error_line(str(err))
        return USAGE_EXIT
    except OSError as err:
        error_line(os_error_message(err))
        return USAGE_EXIT
    except KeyboardInterrupt:
        typer.secho("interrupted", fg="yellow", err=True)
        return 130
    except SystemExit as err:  # typer.Exit in some versions, sys.exit in commands
        code = err.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except Exception as err:
        if isinstance(err, _exception_types("ClickException")):
            error_line(_usage_message(err))
            return USAGE_EXIT
        if isinstance(err, _exception_types("Exit")):
            return int(getattr(err, "exit_code", 0) or 0)
        if isinstance(err, _exception_types("Abort")):
            typer.secho("aborted", fg="yellow", err=True)
            return 1
        if os.environ.get("PARAKIT_VERBOSE") == "1":
            raise
        if _CODE.match(str(err)):  # a coded error that is not (yet) a ParakitError
            error_line(str(err))
            return USAGE_EXIT
        error_line(
            f"internal error ({type(err).__name__}: {err}); "
            "please report it with the output of the same command run with --verbose"
        )
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
