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


def card_datasets(paths: Any) -> list[str]:
    """The Hub dataset ids among input paths (``hf:ID...`` that is not a local folder): the
    ``datasets`` of a model card."""
    from parakit.io.dataset import is_hf_spec, parse_hf_spec

    ids = []
    for path in paths if isinstance(paths, (list, tuple)) else [paths]:
        if path is not None and is_hf_spec(path):
            source = parse_hf_spec(path)[0]
            if not Path(source).expanduser().exists() and source not in ids:
                ids.append(source)
    return ids


def eval_dataset(path: Any) -> dict[str, str]:
    """``name``, ``type`` and ``split`` of the data a card's metrics were measured on: a Hub
    dataset's id, config and split, or a file's name."""
    from parakit.io.dataset import is_hf_spec, parse_hf_spec

    if is_hf_spec(path):
        source, config, split = parse_hf_spec(path)
        name = Path(source).name if Path(source).expanduser().exists() else source
        return {"name": name + (f" ({config})" if config else ""), "type": name,
                "split": split or "validation"}  # fmt: skip
    return {"name": Path(str(path)).name, "type": Path(str(path)).stem, "split": "validation"}


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


def _describe_data(label: str, paths: Any, pairs: Any) -> str:
    names = ", ".join(f"`{Path(p).name}`" for p in (paths if isinstance(paths, list) else [paths]))
    counts = pairs.label_counts()
    shown = ", ".join(f"`{k}` {v}" for k, v in sorted(counts.items(), key=lambda kv: str(kv[0])))
    return f"{names}: {len(pairs)} pairs ({shown})" + (f", language `{pairs.lang}`" if pairs.lang
                                                           else "")  # fmt: skip


def classifier_card(
    ctx: Any,
    classifier: Any,
    folder: Path,
    *,
    train_paths: list[Path],
    pairs: Any,
    dev: Path | None = None,
    dev_pairs: Any = None,
    metrics: dict[str, Any] | None = None,
    reading: str | None = None,
    name: str | None = None,
    license: str | None = None,
) -> Path:
    """The model card of an ``identify train`` folder (``name``: the folder's name in the
    card's examples, when ``folder`` is the temporary folder it is written in)."""
    from parakit.models.card import write_model_card

    classes = [str(c) for c in classifier.classes_]
    try:
        mask = classifier.positive_mask(reading)
        positive = [c for c, m in zip(classes, mask, strict=True) if m]
    except Exception:  # a scheme without a binary reading (Likert): no paraphrase column
        positive = []
    base = getattr(classifier, "model_name_or_path", None) or getattr(classifier, "encoder", None)
    data = {"train": _describe_data("train", train_paths, pairs)}
    if dev is not None and dev_pairs is not None:
        data["dev"] = _describe_data("dev", dev, dev_pairs)
    folder_name = name or folder.name
    if classifier.model_type == "cross-encoder":
        usage = (
            "```python\nfrom sentence_transformers import CrossEncoder\n\n"
            f'model = CrossEncoder("{folder_name}")\n'
            'proba = model.predict([("text one", "text two")], apply_softmax=True)\n'
            "# columns in the order of the Labels table\n```\n\n"
            "`parakit identify predict --precision fp32` gives the same numbers (its default "
            "`auto` computes in bf16 where the hardware supports it).\n\n"
            "```python\nfrom parakit.models.base import load_model\n\n"
            f'p = load_model("{folder_name}").paraphrase_proba(["text one"], ["text two"])\n```'
        )
        library = "sentence-transformers"
    else:
        usage = (
            "```python\nfrom parakit.models.base import load_model\n\n"
            f'model = load_model("{folder_name}")\n'
            'p = model.paraphrase_proba(["text one"], ["text two"])\n```'
        )
        library = None
    return write_model_card(
        folder,
        title=f"{folder_name}: {classifier.model_type} paraphrase classifier",
        model_type=classifier.model_type,
        classes=classes,
        positive=positive,
        scheme=getattr(classifier, "scheme_", None),
        data=data,
        command=recipe_command(ctx),
        metrics=metrics,
        base_model=str(base) if isinstance(base, (str, Path)) and base else None,
        language=pairs.lang,
        usage=usage,
        library=library,
        license=license,
        datasets=card_datasets([*train_paths, dev]),
        eval_dataset=eval_dataset(dev) if dev is not None else None,
    )


def biencoder_card(
    ctx: Any,
    model: Any,
    folder: Path,
    *,
    train_path: Path,
    pairs: Any,
    dev_pairs: Any = None,
    name: str | None = None,
    license: str | None = None,
    dev: Path | None = None,
) -> Path:
    """The model card of an ``embed train`` folder (replaces the sentence-transformers one;
    ``name``: the folder's name in the card, when ``folder`` is a temporary folder)."""
    from parakit.models.card import write_model_card

    folder_name = name or folder.name
    history = getattr(model, "history_", []) or []
    data = {"train": _describe_data("train", train_path, pairs)}
    if dev_pairs is not None:
        data["dev"] = f"{len(dev_pairs)} pairs"
    usage = (
        "```python\nfrom sentence_transformers import SentenceTransformer\n\n"
        f'model = SentenceTransformer("{folder_name}")\n'
        'embeddings = model.encode(["text one", "text two"], normalize_embeddings=True)\n```'
    )
    return write_model_card(
        folder,
        title=f"{folder_name}: paraphrase bi-encoder",
        model_type="bi-encoder",
        data=data,
        command=recipe_command(ctx),
        metrics=history[-1] if history else None,
        base_model=str(model.model_name_or_path or "") or None,
        language=pairs.lang,
        usage=usage,
        library="sentence-transformers",
        pipeline_tag="sentence-similarity",
        license=license,
        datasets=card_datasets([train_path, dev]),
        eval_dataset=eval_dataset(dev) if dev is not None else None,
        intended_use="Embedding statements so that paraphrases lie close (cosine similarity): "
        "nearest-neighbour candidate mining and retrieval in the language and domain of the "
        "training pairs. Check a similarity threshold on labelled pairs before using it as a "
        "classifier.",
    )


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
        unknown_languages,
        write_release,
    )
    from parakit.split import linked_groups, random_split

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
        try:
            from parakit.annotate.store import Store
        except ImportError:
            raise typer.BadParameter(
                "releasing from a store needs the annotate extra: pip install 'parakit[annotate]'",
                param_hint="--store",
            ) from None

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
        if not judgments:
            pairs = pairs.map(lambda p: p.replace(judgments=()))
    if drop_labels:
        pairs = pairs.drop_labels(x.strip() for x in drop_labels.split(",") if x.strip())
    pairs = pairs.prune_documents()
    if lang:
        pairs.lang = lang
    if resplit or any(p.split is None for p in pairs):
        shares = [x / sum(parts) for x in parts]
        pairs = random_split(
            pairs,
            shares,
            split_names,
            group_by=linked_groups(pairs),
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
    "biencoder_card",
    "classifier_card",
    "push",
    "recipe_command",
]
