"""Core commands of the ``parakit`` CLI: formats, convert, info, split, similarity, demo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from parakit.errors import ParakitError


def _parse_mapping(items: list[str] | None, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise ParakitError(f"{what} {item!r} must look like KEY=VALUE", code="E001")
        key, value = item.split("=", 1)
        out[key.strip()] = value
    return out


def _coerce(value: str) -> Any:
    lowered = value.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value


def _read(
    path: Path,
    fmt: str | None,
    scheme: str | None,
    columns: list[str] | None,
    options: list[str] | None,
) -> Any:
    from rich.console import Console

    from parakit.io import read

    kwargs: dict[str, Any] = {k: _coerce(v) for k, v in _parse_mapping(options, "option").items()}
    mapping = _parse_mapping(columns, "column")
    if mapping:
        kwargs["columns"] = mapping
    if scheme:
        kwargs["scheme"] = scheme
    with Console(stderr=True).status(f"reading {path}"):
        return read(path, format=fmt, **kwargs)


FMT = typer.Option(
    None, "--from", "-f", help="Input format (guessed when omitted); see 'parakit formats'."
)
SCHEME = typer.Option(
    None, "--scheme", help="Label scheme: turku, binary, graded, japanese, votes, likert."
)
COLUMNS = typer.Option(
    None,
    "--column",
    "-c",
    help="Column mapping FIELD=NAME for CSV/TSV/JSONL, e.g. -c text1=sentence1 (repeatable).",
)
OPTIONS = typer.Option(
    None,
    "--option",
    "-o",
    help="Reader option KEY=VALUE, e.g. -o "
    "mrpc=PATH for ETPC, -o texts=PATH for Turku (repeatable).",
)


def register_core(app: typer.Typer) -> None:
    """Add the core commands to ``app``."""

    @app.command()
    def formats() -> None:
        """List the readable and writable formats."""
        from parakit.io import formats as list_formats

        for kind, names in list_formats().items():
            typer.echo(f"{kind}: {', '.join(names)}")

    @app.command()
    def convert(
        input: Path = typer.Argument(..., help="Input file or folder."),
        output: Path = typer.Argument(
            ..., help="Output file (.jsonl, .csv, .tsv, .json = Turku layout)."
        ),
        from_format: str | None = FMT,
        to: str | None = typer.Option(
            None, "--to", "-t", help="Output format (from the extension when omitted)."
        ),
        scheme: str | None = SCHEME,
        column: list[str] | None = COLUMNS,
        option: list[str] | None = OPTIONS,
        drop_labels: str | None = typer.Option(
            None, help="Turku output: base labels to leave out, e.g. '1,x' for a release (T11)."
        ),
    ) -> None:
        """Convert any supported format into any writable one (written atomically)."""
        from parakit.io import write

        pairs = _read(input, from_format, scheme, column, option)
        extra: dict[str, Any] = {}
        if drop_labels:
            extra["drop_labels"] = tuple(x.strip() for x in drop_labels.split(","))
        write(pairs, output, format=to, **extra)
        typer.echo(f"wrote {len(pairs)} pairs to {output}")

    @app.command()
    def info(
        input: Path = typer.Argument(..., help="Input file or folder."),
        from_format: str | None = FMT,
        scheme: str | None = SCHEME,
        column: list[str] | None = COLUMNS,
        option: list[str] | None = OPTIONS,
        as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    ) -> None:
        """Counts, label distribution, binary balance, splits and groups of a corpus."""
        from parakit.describe import describe, render_markdown

        summary = describe(_read(input, from_format, scheme, column, option))
        if as_json:
            typer.echo(json.dumps(summary, ensure_ascii=False, indent=2))
        else:
            from rich.console import Console
            from rich.markdown import Markdown

            Console().print(Markdown(render_markdown(summary)))

    @app.command()
    def split(
        input: Path = typer.Argument(..., help="Input file or folder."),
        output: Path = typer.Argument(..., help="Output file with split and fold set."),
        from_format: str | None = FMT,
        scheme: str | None = SCHEME,
        column: list[str] | None = COLUMNS,
        option: list[str] | None = OPTIONS,
        ratios: str = typer.Option("80/10/10", help="Section sizes, e.g. 80/10/10."),
        names: str = typer.Option("train,dev,test", help="Section names."),
        by: str = typer.Option(
            "group",
            help="random sections keeping 'group' / 'document' "
            "/ 'none' together, or 'time' (oldest first).",
        ),
        stratify: str = typer.Option("no", help="no, label or binary."),
        folds: int = typer.Option(100, help="Also assign this many folds (0 = none)."),
        seed: int = typer.Option(0, help="Random seed."),
    ) -> None:
        """Split a corpus into sections (and folds) without letting a group cross them."""
        from parakit.describe import describe
        from parakit.io import write
        from parakit.split import assign_folds, random_split, time_split

        pairs = _read(input, from_format, scheme, column, option)
        parts = [float(x) for x in ratios.replace(",", "/").split("/")]
        total = sum(parts)
        shares = [x / total for x in parts]
        section_names = [x.strip() for x in names.split(",")]
        strat: bool | str = {"no": False, "label": True, "binary": "binary"}.get(stratify)  # type: ignore[assignment]
        if strat is None:
            raise ParakitError("--stratify must be no, label or binary", code="E001")
        if by == "time":
            pairs = time_split(pairs, shares, section_names)
        else:
            pairs = random_split(
                pairs, shares, section_names, group_by=by, stratify=strat, seed=seed
            )
        if folds:
            pairs = assign_folds(
                pairs, n_folds=folds, group_by="none" if by == "time" else by, seed=seed
            )
        write(pairs, output)
        typer.echo(json.dumps(describe(pairs).get("splits", {})))

    @app.command()
    def similarity(
        input: Path = typer.Argument(..., help="Input file or folder."),
        output: Path = typer.Argument(..., help="Output file with similarity columns."),
        from_format: str | None = FMT,
        scheme: str | None = SCHEME,
        column: list[str] | None = COLUMNS,
        option: list[str] | None = OPTIONS,
        wor: bool = typer.Option(True, help="Word overlap rate (Jaccard of token sets)."),
        char: bool = typer.Option(True, help="Character n-gram cosine."),
        ngrams: str = typer.Option("2-4", help="n-gram range, e.g. 2-4."),
        analyzer: str = typer.Option("char_wb", help="char_wb or char."),
        idf: bool = typer.Option(False, help="TF-IDF instead of TF (idf fitted on the set)."),
        tokenizer: str | None = typer.Option(
            None, help="regex, whitespace or fugashi (default by language)."
        ),
    ) -> None:
        """Add lexical-similarity columns (metadata) to every pair."""
        from parakit.io import write
        from parakit.lexical import add_lexical_similarity

        pairs = _read(input, from_format, scheme, column, option)
        low, _, high = ngrams.partition("-")
        pairs = add_lexical_similarity(
            pairs,
            wor=wor,
            char=char,
            ngram_range=(int(low), int(high or low)),
            analyzer=analyzer,
            use_idf=idf,
            tokenizer=tokenizer,
            progress=True,
        )
        write(pairs, output)
        typer.echo(f"wrote {len(pairs)} pairs with similarity columns to {output}")

    @app.command()
    def demo(
        out: Path = typer.Option(Path("parakit-demo"), "--out", help="Output folder."),
        seed: int = typer.Option(0, help="Random seed."),
    ) -> None:
        """Run the whole pipeline on the bundled example and write a corpus and a report."""
        from parakit.cli.demo import run_demo

        report = run_demo(out, seed=seed)
        typer.echo(f"demo finished: report at {report}")
