"""Core commands of the ``parakit`` CLI: formats, convert, info, split, similarity, demo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from parakit.cli.options import (
    ColumnsOpt,
    FormatOpt,
    JsonOpt,
    ReaderOptionsOpt,
    SchemeOpt,
    SeedOpt,
    echo_json,
    output_option,
    parse_numbers,
    parse_range,
    read_pairs,
    show_progress,
)
from parakit.errors import ParakitError

InputArg = Annotated[
    Path,
    typer.Argument(help="Input file or folder, or a Hugging Face dataset hf:ID[:CONFIG][@SPLIT]."),
]

#: the core commands; the root app (:func:`parakit.cli.app.build_app`) adds them at its top level
app = typer.Typer()


@app.command()
def formats() -> None:
    """List the readable and writable formats."""
    from parakit.io import formats as list_formats

    for kind, names in list_formats().items():
        typer.echo(f"{kind}: {', '.join(names)}")


@app.command()
def errors(
    code: Annotated[
        str | None, typer.Argument(help="An error code (E143, or [E143] as printed).")
    ] = None,
    markdown: Annotated[
        bool, typer.Option(help="Every code as the Markdown page docs/reference/errors.md.")
    ] = False,
) -> None:
    """What an error code means; without a code, every code."""
    from parakit.errors import CODES, errors_markdown, explain, messages

    if markdown:
        typer.echo(errors_markdown(), nl=False)
        return
    if code is None:
        for key, meaning in CODES.items():
            typer.echo(f"{key}  {meaning}")
        return
    try:
        typer.echo(f"{code.strip('[]').upper()}  {explain(code)}")
    except KeyError as err:
        raise typer.BadParameter(str(err.args[0]), param_hint="CODE") from None
    for text in messages(code):
        typer.echo(f"  {text}")


@app.command()
def convert(
    input: InputArg,
    output: Annotated[
        Path, output_option("Output file (.jsonl, .csv, .tsv, .parquet, .json = Turku layout).")
    ],
    fmt: FormatOpt = None,
    to: Annotated[
        str | None,
        typer.Option("--to", "-t", help="Output format (from the extension when omitted)."),
    ] = None,
    scheme: SchemeOpt = None,
    column: ColumnsOpt = None,
    option: ReaderOptionsOpt = None,
    drop_labels: Annotated[
        str | None,
        typer.Option(help="Base labels to leave out, e.g. '1,x' for a Turku release (T11)."),
    ] = None,
) -> None:
    """Convert any supported format into any writable one (written atomically)."""
    from parakit.io import write

    pairs = read_pairs(input, fmt, scheme=scheme, columns=column, options=option)
    if drop_labels:
        pairs = pairs.drop_labels(x.strip() for x in drop_labels.split(",") if x.strip())
    write(pairs, output, format=to)
    typer.echo(f"wrote {len(pairs)} pairs to {output}")


@app.command()
def info(
    input: InputArg,
    fmt: FormatOpt = None,
    scheme: SchemeOpt = None,
    column: ColumnsOpt = None,
    option: ReaderOptionsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Counts, label distribution, binary balance, splits and groups of a corpus."""
    from parakit.describe import describe, render_markdown

    summary = describe(read_pairs(input, fmt, scheme=scheme, columns=column, options=option))
    if as_json:
        typer.echo(json.dumps(summary, ensure_ascii=False, indent=2))
    else:
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(render_markdown(summary)))


@app.command()
def split(
    input: InputArg,
    output: Annotated[Path, output_option("Output file with split and fold set.")],
    fmt: FormatOpt = None,
    scheme: SchemeOpt = None,
    column: ColumnsOpt = None,
    option: ReaderOptionsOpt = None,
    ratios: Annotated[str, typer.Option(help="Section sizes, e.g. 80/10/10.")] = "80/10/10",
    names: Annotated[str, typer.Option(help="Section names.")] = "train,dev,test",
    by: Annotated[
        str,
        typer.Option(
            help="random sections keeping 'group' / 'document' / 'none' together, "
            "or 'time' (oldest first)."
        ),
    ] = "group",
    stratify: Annotated[str, typer.Option(help="no, label or binary.")] = "no",
    folds: Annotated[
        int, typer.Option(min=0, help="Also assign this many folds (0 = none).")
    ] = 100,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
) -> None:
    """Split a corpus into sections (and folds) without letting a group cross them."""
    from parakit.describe import describe
    from parakit.io import write
    from parakit.split import assign_folds, random_split, time_split

    parts = parse_numbers(ratios, "--ratios")
    section_names = [x.strip() for x in names.split(",")]
    if len(section_names) != len(parts):
        # blame the option the user gave: --ratios 80/10 against the default three names
        blamed = "--names" if names != "train,dev,test" else "--ratios"
        raise typer.BadParameter(
            f"{len(parts)} ratios but {len(section_names)} names ({names}); give as many "
            "ratios as --names has names",
            param_hint=blamed,
        )
    strat: bool | str | None = {"no": False, "label": True, "binary": "binary"}.get(stratify)
    if strat is None:
        raise typer.BadParameter("must be no, label or binary", param_hint="--stratify")
    if by not in ("group", "document", "none", "time"):
        raise typer.BadParameter("must be group, document, none or time", param_hint="--by")
    pairs = read_pairs(input, fmt, scheme=scheme, columns=column, options=option)
    shares = [x / sum(parts) for x in parts]
    if by == "time":
        pairs = time_split(pairs, shares, section_names)
    else:
        pairs = random_split(pairs, shares, section_names, group_by=by, stratify=strat, seed=seed)
    if folds:
        pairs = assign_folds(
            pairs, n_folds=folds, group_by="none" if by == "time" else by, seed=seed
        )
    write(pairs, output)
    sizes = describe(pairs).get("splits", {})
    if as_json:
        echo_json({"output": str(output), "pairs": len(pairs), "splits": sizes, "folds": folds})
        return
    shown = ", ".join(f"{name} {count}" for name, count in sizes.items())
    typer.echo(f"wrote {len(pairs)} pairs to {output}: {shown}")


@app.command()
def similarity(
    input: InputArg,
    output: Annotated[Path, output_option("Output file with similarity columns.")],
    fmt: FormatOpt = None,
    scheme: SchemeOpt = None,
    column: ColumnsOpt = None,
    option: ReaderOptionsOpt = None,
    wor: Annotated[bool, typer.Option(help="Word overlap rate (Jaccard of token sets).")] = True,
    char: Annotated[bool, typer.Option(help="Character n-gram cosine.")] = True,
    ngrams: Annotated[str, typer.Option(help="n-gram range, e.g. 2-4.")] = "2-4",
    analyzer: Annotated[str, typer.Option(help="char_wb or char.")] = "char_wb",
    idf: Annotated[
        bool, typer.Option(help="TF-IDF instead of TF (idf fitted on the set).")
    ] = False,
    tokenizer: Annotated[
        str | None, typer.Option(help="regex, whitespace or fugashi (default by language).")
    ] = None,
) -> None:
    """Add lexical-similarity columns (metadata) to every pair."""
    from parakit.io import write
    from parakit.lexical import add_lexical_similarity

    ngram_range = parse_range(ngrams, "--ngrams")
    pairs = read_pairs(input, fmt, scheme=scheme, columns=column, options=option)
    pairs = add_lexical_similarity(
        pairs,
        wor=wor,
        char=char,
        ngram_range=ngram_range,
        analyzer=analyzer,
        use_idf=idf,
        tokenizer=tokenizer,
        progress=show_progress(),
    )
    write(pairs, output)
    typer.echo(f"wrote {len(pairs)} pairs with similarity columns to {output}")


@app.command()
def examples(
    name: Annotated[
        str | None, typer.Argument(help="The set to write (omit it to list the sets).")
    ] = None,
    output: Annotated[Path, output_option("Folder to write the files to.")] = Path("."),
) -> None:
    """Write a bundled example set, the inputs a guide in docs/ works on, to a folder."""
    from parakit.examples import EXAMPLE_SETS, write_example_set

    if name is None:
        for set_name, files in EXAMPLE_SETS.items():
            typer.echo(f"{set_name}:")
            for file, what in files.items():
                typer.echo(f"  {file}: {what}" if what else f"  {file}")
        return
    for path in write_example_set(name, output):
        typer.echo(f"wrote {path}")


@app.command()
def demo(
    output: Annotated[Path, output_option("Output folder.")] = Path("parakit-demo"),
    seed: SeedOpt = 0,
) -> None:
    """Run the whole pipeline on the bundled example and write a corpus and a report."""
    from parakit.cli.demo import run_demo

    report = run_demo(output, seed=seed)
    typer.echo(f"demo finished: report at {report}")


__all__ = ["ParakitError", "app"]
