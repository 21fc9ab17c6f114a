"""Options and parsers that every command group shares: the CLI convention of ``docs/cli.md``.

- ``-o/--output`` is always the output (a file or a folder), never anything else;
- ``-f/--format`` is always the input format;
- ``-O/--option KEY=VALUE`` passes reader options, parsed by :func:`parse_key_values` (one
  coercion rule for every ``KEY=VALUE`` option: :func:`coerce`);
- ``--seed`` defaults to 0;
- every model name goes through :func:`check_model` (a missing path is a usage error) and is
  passed on as given: the library resolves an offline alias (``offline-minilm``,
  ``offline-mpnet``) once, where the model is loaded;
- a model gets ``--precision`` and the progress setting as constructor arguments
  (:func:`run_settings`), never as attributes set on a built model.

A bad value is a :class:`typer.BadParameter` naming the option, so it ends as one
``error: ...`` line with exit code 2 like every other usage mistake.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from parakit.vectors.precision import PRECISIONS

try:  # typer >= 0.2x vendors click: its contexts are not click's, so ask typer's copy
    from typer._click.globals import get_current_context
except ImportError:  # pragma: no cover - older typer runs on click itself
    from click import get_current_context

FORMAT_HELP = (
    "Input format (guessed from the file when omitted; a Hugging Face dataset is read as "
    "hf:ID:CONFIG@SPLIT); see 'parakit formats'."
)


def output_option(help: str = "Output file.") -> Any:
    """The ``-o/--output`` option (the one spelling of an output, file or folder)."""
    return typer.Option("--output", "-o", help=help)


def format_option(help: str = FORMAT_HELP) -> Any:
    """The ``-f/--format`` option (the one spelling of an input format)."""
    return typer.Option("--format", "-f", help=help)


#: ``-f/--format``: input format, guessed when omitted
FormatOpt = Annotated[str | None, format_option()]
#: ``--seed``: every random step's seed, 0 by default
SeedOpt = Annotated[int, typer.Option("--seed", help="Random seed.")]
#: ``--json``: print one JSON object on stdout instead of prose (messages go to stderr)
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON object on stdout instead of prose.")
]
#: ``-O/--option KEY=VALUE``: reader options
ReaderOptionsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-O",
        help="Reader option KEY=VALUE, e.g. -O mrpc=PATH for ETPC, -O texts=PATH for Turku "
        "(repeatable; true/false, numbers and JSON lists are converted).",
    ),
]
#: ``-c/--column FIELD=NAME``: column mapping of tables and JSONL
ColumnsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--column",
        "-c",
        help="Column mapping FIELD=NAME for CSV/TSV/JSONL, e.g. -c text1=sentence1 (repeatable).",
    ),
]
#: ``--scheme``: label scheme of the input
SchemeOpt = Annotated[
    str | None,
    typer.Option("--scheme", help="Label scheme: turku, binary, graded, japanese, votes, likert."),
]


#: ``--precision``: numeric precision of every torch model the command trains or runs; typer
#: checks the value against the one list of allowed values (a usage error naming them)
PrecisionOpt = Annotated[
    Literal[PRECISIONS],  # type: ignore[valid-type]
    typer.Option(
        "--precision",
        help="auto, fp32, bf16 or fp16 (CUDA only): auto is bf16 where the CPU has "
        "AMX/AVX512-BF16 (or the GPU bf16), fp32 elsewhere (torch models only).",
    ),
]


def coerce(value: str) -> Any:
    """The one coercion rule of ``KEY=VALUE`` options.

    ``true``/``false`` (any case) become booleans; numbers, ``null`` and JSON lists/objects are
    read as JSON; anything else stays text.

    Example:
        >>> [coerce(v) for v in ("True", "3", "0.5", "[1, 2]", "a.txt", "null")]
        [True, 3, 0.5, [1, 2], 'a.txt', None]
    """
    lowered = value.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return json.loads(value)
    except (json.JSONDecodeError, ValueError):
        return value


def parse_key_values(
    items: list[str] | tuple[str, ...] | None, option: str = "--option", *, convert: bool = True
) -> dict[str, Any]:
    """``["a=1", "b=x"]`` -> ``{"a": 1, "b": "x"}``; values go through :func:`coerce` unless
    ``convert`` is false (column names stay text).

    Raises:
        typer.BadParameter: an item without ``=`` or with an empty key.
    """
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{item!r} must look like KEY=VALUE", param_hint=option)
        out[key.strip()] = coerce(value) if convert else value
    return out


def parse_numbers(text: str, option: str, *, sep: str = "/", kind: type = float) -> list[Any]:
    """``"80/10/10"`` -> ``[80.0, 10.0, 10.0]``; a value that is not a number names ``option``."""
    parts = [x.strip() for x in text.replace(",", sep).split(sep) if x.strip()]
    try:
        numbers = [kind(x) for x in parts]
    except ValueError:
        raise typer.BadParameter(
            f"{text!r} is not a list of numbers separated by {sep!r}", param_hint=option
        ) from None
    if not numbers:
        raise typer.BadParameter(f"{text!r} has no numbers", param_hint=option)
    if any(x < 0 for x in numbers) or not sum(numbers) > 0:
        raise typer.BadParameter(
            f"{text!r}: the numbers must be >= 0 with a positive sum", param_hint=option
        )
    return numbers


def parse_range(text: str, option: str) -> tuple[int, int]:
    """``"2-4"`` -> ``(2, 4)``, ``"3"`` -> ``(3, 3)``; needs ``1 <= low <= high``."""
    low, _, high = text.partition("-")
    try:
        pair = (int(low), int(high or low))
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a range like 2-4", param_hint=option) from None
    if not 1 <= pair[0] <= pair[1]:
        raise typer.BadParameter(f"{text!r}: need 1 <= low <= high", param_hint=option)
    return pair


def run_settings(precision: str = "auto") -> dict[str, Any]:
    """The run settings a command gives every model it builds or loads
    (``make_model(name, run_settings(precision), **params)``, ``load_model(folder,
    **run_settings(precision))``): ``--precision`` and the progress bars (off under ``-q``).
    A model that has no such parameter does not get it (:data:`parakit.models.base.RUN_SETTINGS`);
    an explicit ``-p precision=...`` wins."""
    return {"precision": precision, "progress": show_progress()}


def check_model(model: str | Path, option: str = "--model") -> str:
    """``model`` unchanged (an alias stays an alias, so a saved model keeps a portable name),
    after checking that a path (``/...``, ``./...``, ``~/...``) exists: a missing one is a usage
    error naming it, instead of a failed Hugging Face hub look-up."""
    text = str(model)
    if text.startswith(("/", "./", "../", "~")) and not Path(text).expanduser().exists():
        raise typer.BadParameter(f"{text}: no such model folder", param_hint=option)
    return text


def read_pairs(
    path: str | Path,
    fmt: str | None = None,
    *,
    scheme: str | None = None,
    columns: list[str] | None = None,
    options: list[str] | None = None,
    status: bool = True,
) -> Any:
    """Read a pair set with the shared reader options (a spinner on stderr while it reads)."""
    from parakit.io import read

    kwargs: dict[str, Any] = parse_key_values(options, "--option")
    mapping = parse_key_values(columns, "--column", convert=False)
    if mapping:
        kwargs["columns"] = mapping
    if scheme:
        kwargs["scheme"] = scheme
    if not status:
        return read(path, format=fmt, **kwargs)
    from rich.console import Console

    with Console(stderr=True).status(f"reading {path}"):
        return read(path, format=fmt, **kwargs)


@dataclass
class Output:
    """What one CLI run shows, set by ``-q/--quiet`` and ``-v/--verbose`` (before or after the
    command); the root app keeps it as the click context object (``ctx.obj``)."""

    verbose: bool = False
    quiet: bool = False
    #: set by a command whose rerun resumes where it stopped (:func:`mark_resumable`)
    resumes: bool = False


def output_settings() -> Output:
    """The :class:`Output` of the running command (defaults outside a CLI run)."""
    ctx = get_current_context(silent=True)
    found = ctx.find_object(Output) if ctx is not None else None
    return found if found is not None else Output()


def show_progress() -> bool:
    """Whether to draw progress bars: pass it as ``progress=`` to library calls (not ``-q``)."""
    return not output_settings().quiet


def mark_resumable() -> None:
    """Say that this run resumes where it stopped when started again (a checkpoint folder):
    Ctrl-C then prints ``interrupted; rerun to resume`` (exit 130 either way)."""
    output_settings().resumes = True


def progress_bar(transient: bool = True) -> Any:
    """A rich progress display on stderr (spinner, bar, count, elapsed time); hidden with
    ``-q/--quiet``."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=transient,
        disable=not show_progress(),
    )


def status(text: str) -> Any:
    """A spinner with elapsed time on stderr around one long call that reports no progress of
    its own (prediction, evaluation); hidden with ``-q/--quiet``."""
    progress = progress_bar()
    progress.columns = progress.columns[:2] + progress.columns[-1:]  # spinner, text, time
    progress.add_task(text, total=None)
    return progress


def echo_json(data: Any) -> None:
    """Print ``data`` as indented JSON."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


__all__ = [
    "ColumnsOpt",
    "FormatOpt",
    "JsonOpt",
    "Output",
    "PrecisionOpt",
    "ReaderOptionsOpt",
    "SchemeOpt",
    "SeedOpt",
    "check_model",
    "coerce",
    "echo_json",
    "format_option",
    "mark_resumable",
    "output_option",
    "output_settings",
    "parse_key_values",
    "parse_numbers",
    "parse_range",
    "progress_bar",
    "read_pairs",
    "run_settings",
    "show_progress",
    "status",
]


_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def parse_bytes(value: str | None) -> int | None:
    """``8G``, ``512M``, ``1.5GiB`` or a plain number of bytes (binary units), as bytes.

    Example:
        >>> parse_bytes("8G"), parse_bytes("1.5gib"), parse_bytes("1000")
        (8589934592, 1610612736, 1000)
    """
    if value is None:
        return None
    import re

    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", value.lower())
    if match is None or float(match.group(1)) <= 0:
        raise typer.BadParameter(
            f"{value!r}: a size such as 8G, 512M or 1.5GiB", param_hint="--memory-budget"
        )
    return int(float(match.group(1)) * _UNITS[match.group(2)])


#: ``--memory-budget``: RAM the raw vectors of an index may take; beyond it, compressed codes
MemoryBudgetOpt = Annotated[
    str | None,
    typer.Option(
        "--memory-budget",
        help="RAM the index's vectors may take (8G, 512M); when N x dim x 4 bytes exceed it, "
        "IVF-PQ/OPQ codes are measured and the smallest that meets --recall is kept.",
    ),
]
