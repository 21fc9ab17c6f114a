"""``parakit release``: a labelled corpus as a folder ``datasets.load_dataset`` loads, and the
publishing helpers that ``identify train`` and ``embed train`` share (the recipe line of a
model card, ``--push-to-hub``).

Example::

    parakit release ../shared/data/turku/sv-test.json -o rel --license cc-by-sa-4.0
    parakit release --split train=train.csv --split validation=dev.csv --split test=test.csv \\
        -f multipit -o rel --license cc-by-4.0
    parakit release --store corpus.db --project news -o rel --license cc-by-4.0 --lang fi
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated, Any

import typer

from parakit.cli.options import (
    ColumnsOpt,
    FormatOpt,
    ReaderOptionsOpt,
    SchemeOpt,
    SeedOpt,
    output_option,
    parse_key_values,
    parse_numbers,
    read_pairs,
)
from parakit.errors import require_extra

#: ``--push-to-hub REPO``: upload the written folder to the Hugging Face Hub
PushOpt = Annotated[
    str | None,
    typer.Option(
        "--push-to-hub",
        help="Also upload the folder to this Hub repository (owner/name; token from HF_TOKEN "
        "or `hf auth login`).",
    ),
]
PrivateOpt = Annotated[
    bool, typer.Option("--private", help="Create the Hub repository private (--push-to-hub).")
]
#: ``--license``: the licence of a trained model, in its card
LicenseOpt = Annotated[
    str | None,
    typer.Option(
        "--license", help="Hub licence id of the model for its card, e.g. apache-2.0 or mit."
    ),
]


def recipe_command(ctx: Any) -> str:
    """The command line that reproduces this run: the command path and every parameter whose
    value differs from its default, in the order of the command's parameters."""
    parts = ctx.command_path.split()
    for param in ctx.command.params:
        if param.name not in ctx.params or getattr(param, "expose_value", True) is False:
            continue
        value = ctx.params[param.name]
        if param.param_type_name == "argument":
            parts += [str(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
            continue
        if value == param.default or value is None or value == [] or value == ():
            continue
        opt = max(param.opts, key=len)
        if isinstance(value, bool):
            flag = opt if value else (param.secondary_opts or [f"--no-{opt[2:]}"])[0]
            parts.append(flag)
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            parts += [opt, str(item)]
    return shlex.join(parts)


def push(folder: Path, repo: str, repo_type: str, private: bool = False) -> None:
    """``--push-to-hub``: upload ``folder`` and say where it went."""
    from parakit.io.hub import push_folder

    url = push_folder(folder, repo, repo_type=repo_type, private=private)
    typer.echo(f"pushed {folder} to {url}")


def _agreement_from_judgments(pairs: Any) -> dict[str, float]:
    """T9 figures from the judgments a file carries (``annotate export --judgments``): the same
    report ``parakit annotate agreement`` prints; empty without two annotators on an item."""
    rows = [(p.id, j.annotator, j.label) for p in pairs for j in p.judgments if j.label]
    if not rows:
        return {}
    try:
        from parakit.annotate.agreement import agreement_report, judgments_frame
    except ImportError:  # the annotate extra is not installed
        return {}
    frame = judgments_frame(rows)
    if frame.groupby("item")["annotator"].nunique().max() < 2:
        return {}
    consensus = {p.id: p.label for p in pairs if p.label is not None}
    return agreement_report(frame, pairs.scheme, consensus=consensus)


#: ``parakit release``; the root app (:func:`parakit.cli.app.build_app`) adds it at its top level
app = typer.Typer()


@app.command()
def release(
    output: Annotated[Path, output_option("Release folder to write.")],
    license: Annotated[
        str, typer.Option("--license", help="Hub license id, e.g. cc-by-sa-4.0 (required).")
    ],
    input: Annotated[
        Path | None,
        typer.Argument(
            help="Labelled pairs (any readable format); or use --split, or --store/--project."
        ),
    ] = None,
    split_files: Annotated[
        list[str] | None,
        typer.Option(
            "--split",
            help="Official split file NAME=FILE (repeatable), e.g. --split train=train.json "
            "--split test=test.json: kept as they are, never split anew.",
        ),
    ] = None,
    store: Annotated[
        str | None, typer.Option("--store", help="Annotation store (SQLite file or URL).")
    ] = None,
    project: Annotated[
        str | None, typer.Option("--project", help="Project of --store to release.")
    ] = None,
    fmt: FormatOpt = None,
    scheme: SchemeOpt = None,
    column: ColumnsOpt = None,
    option: ReaderOptionsOpt = None,
    name: Annotated[str | None, typer.Option("--name", help="Title of the dataset card.")] = None,
    lang: Annotated[
        str | None,
        typer.Option("--lang", help="Language code (default: the language of the corpus)."),
    ] = None,
    ratios: Annotated[str, typer.Option(help="Split sizes, e.g. 80/10/10.")] = "80/10/10",
    names: Annotated[str, typer.Option(help="Split names.")] = "train,validation,test",
    stratify: Annotated[str, typer.Option(help="no, label or binary.")] = "no",
    resplit: Annotated[
        bool,
        typer.Option("--resplit", help="Split anew even when every pair already has a split."),
    ] = False,
    drop_labels: Annotated[
        str | None,
        typer.Option(help="Base labels to leave out, e.g. '1,x' as in the Turku release."),
    ] = None,
    judgments: Annotated[
        bool,
        typer.Option("--judgments", help="Keep the individual judgments (annotator names)."),
    ] = False,
    candidates: Annotated[
        str | None,
        typer.Option("--candidates", help="How the candidates were made (card paragraph)."),
    ] = None,
    citation: Annotated[
        Path | None, typer.Option("--citation", help="A BibTeX file for the card.")
    ] = None,
    turku: Annotated[
        bool,
        typer.Option("--turku", help="Also write the Turku JSON files under turku/."),
    ] = False,
    reading: Annotated[
        str | None,
        typer.Option(
            "--reading",
            help="Binary reading put beside a graded label as binary_label (default: the "
            "scheme's, e.g. Turku loose); stated in the card.",
        ),
    ] = None,
    push_to_hub: PushOpt = None,
    private: PrivateOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """Release a labelled corpus as a folder datasets.load_dataset loads (no script).

    Parquet per split (documents never cross splits), a 'documents' config with the texts the
    spans point into, and a dataset card README.md; `parakit convert`, `parakit info` and
    `parakit.read` read the folder back into the same pairs."""
    from parakit.io.atomic import check_output_folder
    from parakit.io.hub import check_license
    from parakit.io.release import (
        is_release,
        join_splits,
        language_message,
        prepare_release,
        unknown_languages,
        write_release,
    )

    check_license(license, output)  # before reading anything: the Hub refuses it only at push
    check_output_folder(output, is_release, "a parakit release folder")
    if sum((input is not None, store is not None, bool(split_files))) != 1:
        raise typer.BadParameter(
            "give one of: an input file, --split NAME=FILE (official splits), or --store with "
            "--project"
        )
    if split_files and resplit:
        raise typer.BadParameter(
            "--split files are official splits and are kept; drop --resplit (or release one "
            "file to split it anew)",
            param_hint="--resplit",
        )
    bad_lang = unknown_languages(lang) if lang else []
    if bad_lang:  # before reading anything
        raise typer.BadParameter(language_message(bad_lang[0]), param_hint="--lang")
    if store is not None and not project:
        raise typer.BadParameter("--store needs --project", param_hint="--project")
    strat: bool | str | None = {"no": False, "label": True, "binary": "binary"}.get(stratify)
    if strat is None:
        raise typer.BadParameter("must be no, label or binary", param_hint="--stratify")
    parts = parse_numbers(ratios, "--ratios")
    split_names = [x.strip() for x in names.split(",")]
    if len(split_names) != len(parts):
        raise typer.BadParameter(
            f"{len(parts)} ratios but {len(split_names)} names", param_hint="--names"
        )
    agreement: dict[str, float] = {}
    if store is not None:
        require_extra("sqlalchemy", extra="annotate", needed_for="releasing from a store")
        from parakit.annotate.store import Store

        st = Store.open(store, create=False)
        pid = st.projects.project_id(str(project))
        pairs = st.exports.to_pairset(pid, judgments=judgments)
        agreement = st.review.agreement(pid)
    else:
        if split_files:
            named = parse_key_values(split_files, "--split", convert=False)
            pairs = join_splits(
                {
                    name: read_pairs(path, fmt, scheme=scheme, columns=column, options=option)
                    for name, path in named.items()
                }
            )
        else:
            assert input is not None
            pairs = read_pairs(input, fmt, scheme=scheme, columns=column, options=option)
        agreement = _agreement_from_judgments(pairs)
    pairs = prepare_release(
        pairs,
        judgments=judgments or store is not None,  # a store's export has them only if asked
        drop_labels=[x.strip() for x in (drop_labels or "").split(",") if x.strip()],
        lang=lang,
        resplit=resplit,
        ratios=parts,
        names=split_names,
        stratify=strat,
        seed=seed,
    )
    folder = write_release(
        pairs,
        output,
        license=license,
        pretty_name=name,
        agreement=agreement,
        candidates=candidates,
        citation=citation.read_text(encoding="utf-8") if citation else None,
        turku=turku,
        reading=reading,
    )
    counts = {k: len(v) for k, v in pairs.by_split().items()}
    typer.echo(f"released {len(pairs)} pairs {counts} and {len(pairs.documents)} documents "
               f"to {folder}")  # fmt: skip
    if push_to_hub:
        push(folder, push_to_hub, "dataset", private)


__all__ = [
    "LicenseOpt",
    "PrivateOpt",
    "PushOpt",
    "app",
    "push",
    "recipe_command",
]
