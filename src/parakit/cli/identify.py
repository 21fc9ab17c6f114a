"""``parakit identify train|predict|evaluate``: paraphrase classifiers from the command line.

Example::

    parakit identify train train.jsonl --model tfidf -o models/tfidf --dev dev.jsonl
    parakit identify train train.csv --format multipit --model cross-encoder \\
        -p model_name_or_path=/path/to/minilm -p epochs=3 -p max_length=64 --dev dev.csv \\
        -o models/ce
    parakit identify predict models/tfidf test.jsonl -o predictions.jsonl
    parakit identify evaluate models/tfidf test.jsonl -o reports/tfidf
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from parakit.cli.options import (
    FormatOpt,
    JsonOpt,
    PrecisionOpt,
    SeedOpt,
    echo_json,
    mark_resumable,
    output_option,
    parse_key_values,
    read_pairs,
    run_settings,
    status,
)
from parakit.cli.release import LicenseOpt, PrivateOpt, PushOpt, push, recipe_command
from parakit.models.card import classifier_card

app = typer.Typer(
    add_completion=False,
    help="Train, evaluate and apply paraphrase classifiers.",
)


def _load_pairs(path: Path, fmt: str | None, binary: bool, reading: str | None) -> Any:
    """The pairs of ``path`` (the shared reader), in their binary reading with ``--binary``."""
    pairs = read_pairs(path, fmt)
    return pairs.to_binary(reading) if binary else pairs


def _load_training_sets(
    paths: list[Path], fmt: str | None, binary: bool, reading: str | None
) -> Any:
    """One training set of one or several files (M8: clean + relabelled pairs).

    Files are read one by one (a JSONL file's header must be its first line, so a
    concatenated file is not valid input) and joined with ids prefixed by the file name.
    """
    if len(paths) == 1:
        return _load_pairs(paths[0], fmt, binary, reading)
    from parakit.models.noisy import concatenate

    stems = [p.stem for p in paths]
    prefixes = [s if stems.count(s) == 1 else f"{i}-{s}" for i, s in enumerate(stems)]
    sets = [_load_pairs(p, fmt, binary, reading) for p in paths]
    return concatenate(sets, prefixes)


#: the model argument of the commands that apply a model
ModelArg = Annotated[
    Path,
    typer.Argument(
        help="A parakit model folder, or a sentence-transformers CrossEncoder or "
        "SentenceTransformer, or a transformers sequence classifier (folder or Hub id)."
    ),
]
PositiveOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--positive",
        help="Label of a pretrained classifier that means paraphrase (default: read from its "
        "config's id2label); repeatable.",
    ),
]
ThresholdOpt = Annotated[
    float | None,
    typer.Option(
        "--threshold", help="Cosine threshold of a sentence encoder (default: chosen on --dev)."
    ),
]
ModelDevOpt = Annotated[
    Path | None,
    typer.Option(
        "--dev",
        help="Labelled development pairs a sentence encoder's threshold is chosen on (F1).",
    ),
]


def load_any_model(
    model: Path | str,
    precision: str = "auto",
    *,
    dev: Path | None = None,
    positive: list[str] | None = None,
    threshold: float | None = None,
    reading: str | None = None,
) -> Any:
    """The model of ``identify predict``/``evaluate`` and ``report profile --model``: a parakit
    folder or a pretrained pair model (:func:`parakit.models.pretrained.load_predictor`); how a
    pretrained model is read (its paraphrase label, a threshold) is said on stderr."""
    from parakit.cli.options import check_model
    from parakit.models.pretrained import load_predictor

    name = check_model(model, "MODEL")
    dev_pairs = read_pairs(dev, None) if dev is not None else None
    classifier = load_predictor(
        name,
        dev=dev_pairs,
        positive=positive or None,
        threshold=threshold,
        reading=reading,
        precision=precision,
    )
    if hasattr(classifier, "describe"):
        typer.echo(classifier.describe(), err=True)
    return classifier


BinaryOpt = Annotated[
    bool, typer.Option("--binary", help="train/evaluate on the binary reading of the labels")
]
ReadingOpt = Annotated[
    str | None, typer.Option("--reading", help="binary reading (Turku: loose or strict)")
]


@app.command()
def train(
    ctx: typer.Context,
    train_paths: Annotated[
        list[Path],
        typer.Argument(
            help="labelled training pairs; several files are concatenated (ids prefixed with "
            "the file name), e.g. clean pairs + the output of `identify clean-labels` (M8)"
        ),
    ],
    output: Annotated[Path, output_option("Folder for the trained model.")],
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            help="model type: wor, tfidf, bow-cosine, bow, word-vectors, "
            "mt-features, embedding-lr, cross-encoder, multihead, "
            "multiclass (model names in -p take offline-minilm / offline-mpnet)",
        ),
    ] = "tfidf",
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            "-p",
            help="Hyperparameter KEY=VALUE (repeatable; true/false, numbers and JSON lists are "
            "converted); model names may be offline-minilm or offline-mpnet.",
        ),
    ] = None,
    dev: Annotated[
        Path | None, typer.Option("--dev", help="development pairs (model selection, report)")
    ] = None,
    fmt: FormatOpt = None,
    dev_format: Annotated[
        str | None, typer.Option("--dev-format", help="Format of --dev (default: guessed).")
    ] = None,
    binary: BinaryOpt = False,
    reading: ReadingOpt = None,
    negatives: Annotated[
        Path | None,
        typer.Option("--negatives", help="mined negatives to add under one label (T16 retraining)"),
    ] = None,
    negative_label: Annotated[str, typer.Option("--negative-label")] = "2",
    negatives_per_pair: Annotated[float, typer.Option("--negatives-per-pair")] = 1.0,
    soft_labels: Annotated[
        str | None,
        typer.Option(
            "--soft-labels",
            help="distillation: train a cross-encoder on the P(paraphrase) stored under this "
            "metadata key (dotted), e.g. prediction.p_paraphrase from `identify predict` "
            "with a teacher model",
        ),
    ] = None,
    push_to_hub: PushOpt = None,
    private: PrivateOpt = False,
    license: LicenseOpt = None,
    epochs: Annotated[
        int | None,
        typer.Option("--epochs", min=1, help="Training epochs of a neural model (as -p epochs=N)."),
    ] = None,
    seed: SeedOpt = 0,
    precision: PrecisionOpt = "auto",
) -> None:
    """Train a classifier and save it to --output with a model card README.md (and dev metrics
    when --dev is given)."""
    import time

    from parakit.io.atomic import check_output_folder, replace_folder
    from parakit.models.base import is_model_folder, make_model

    # before hours of training: a folder of another kind (E141) or a licence id the Hub does
    # not know (E142) is refused at once
    check_output_folder(output, is_model_folder, "a parakit model folder")
    if license is not None:
        from parakit.io.hub import check_license

        check_license(license, output)
    pairs = _load_training_sets(train_paths, fmt, binary, reading)
    if negatives is not None:
        from parakit.models.bootstrap import bootstrap_training_set

        pairs = bootstrap_training_set(
            pairs,
            read_pairs(negatives),
            negative_label=negative_label,
            negatives_per_pair=negatives_per_pair,
            seed=seed,
        )
    dev_pairs = _load_pairs(dev, dev_format, binary, reading) if dev is not None else None
    params = parse_key_values(param, "--param")
    if epochs is not None:
        from parakit.models.base import get_model_class

        if "epochs" not in get_model_class(model)._get_param_names():
            raise typer.BadParameter(
                f"model {model!r} is not trained in epochs", param_hint="--epochs"
            )
        if params.get("epochs", epochs) != epochs:
            raise typer.BadParameter(
                "--epochs and -p epochs=... disagree; give one", param_hint="--epochs"
            )
        params["epochs"] = epochs
    classifier = make_model(model, run_settings(precision), **params)
    if getattr(classifier, "output_dir", None) and getattr(classifier, "resume", False):
        mark_resumable()  # -p output_dir=...: checkpoints a rerun goes on from
    start = time.perf_counter()
    if soft_labels is not None:
        if not hasattr(classifier, "fit_soft"):
            raise typer.BadParameter(
                f"model {model!r} cannot learn soft labels; use cross-encoder",
                param_hint="--soft-labels",
            )
        classifier.fit_soft(pairs, eval_set=dev_pairs, key=soft_labels)
    else:
        classifier.fit(pairs, eval_set=dev_pairs)
    seconds = time.perf_counter() - start
    # the folder is replaced whole: a model trained into it before leaves no file behind
    with replace_folder(output, is_model_folder, "a parakit model folder") as folder:
        classifier.save(folder)
        if dev_pairs is not None:
            from parakit.evaluate.classification import evaluate_classifier

            report = evaluate_classifier(classifier, dev_pairs, reading=reading, name="dev")
            report.save(folder, stem="dev_metrics")
        classifier_card(
            classifier,
            folder,
            command=recipe_command(ctx),
            train_paths=list(train_paths),
            pairs=pairs,
            dev=dev,
            dev_pairs=dev_pairs,
            metrics=report.metrics if dev_pairs is not None else None,
            reading=reading,
            name=output.name,
            license=license,
        )
    typer.echo(f"trained {model} on {len(pairs)} pairs in {seconds:.1f} s; saved to {output}")
    if dev_pairs is not None:
        m = report.metrics
        f1 = m["positive"]["f1"] if "positive" in m else m["macro"]["f1"]
        typer.echo(f"dev accuracy {m['accuracy']:.3f}  F1 {f1:.3f}")
    card = output / "README.md"
    typer.echo(f"model card: {card}")
    if push_to_hub:
        push(output, push_to_hub, "model", private)


@app.command()
def predict(
    model_dir: ModelArg,
    input_path: Annotated[Path, typer.Argument(help="pairs to classify")],
    output: Annotated[
        Path,
        output_option("Output pairs (jsonl, csv, tsv, parquet) with the predictions in metadata."),
    ],
    fmt: FormatOpt = None,
    reading: ReadingOpt = None,
    precision: PrecisionOpt = "auto",
    positive: PositiveOpt = None,
    threshold: ThresholdOpt = None,
    dev: ModelDevOpt = None,
) -> None:
    """Label pairs; the gold label (if any) moves to metadata.gold_label and the probabilities
    go to metadata.prediction."""
    from parakit.io import write

    classifier = load_any_model(
        model_dir, precision, dev=dev, positive=positive, threshold=threshold, reading=reading
    )
    pairs = read_pairs(input_path, fmt)
    with status(f"predicting {len(pairs)} pairs with {classifier.model_type}"):
        result = classifier.label_pairs(pairs, reading=reading)
    write(result, output)
    typer.echo(f"labelled {len(result)} pairs -> {output}")


@app.command()
def evaluate(
    model_dir: ModelArg,
    input_path: Annotated[Path, typer.Argument(help="labelled pairs")],
    output: Annotated[
        Path | None,
        output_option(
            "The report: a .json or .md file, or a folder for metrics.json and metrics.md."
        ),
    ] = None,
    fmt: FormatOpt = None,
    binary: BinaryOpt = False,
    reading: ReadingOpt = None,
    precision: PrecisionOpt = "auto",
    positive: PositiveOpt = None,
    threshold: ThresholdOpt = None,
    dev: ModelDevOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Evaluate a saved model: accuracy, per-class P/R/F, confusion matrix, threshold sweep,
    calibration (and the Turku table for Turku labels)."""
    from parakit.evaluate.classification import evaluate_classifier

    classifier = load_any_model(
        model_dir, precision, dev=dev, positive=positive, threshold=threshold, reading=reading
    )
    pairs = _load_pairs(input_path, fmt, binary, reading)
    with status(f"evaluating {classifier.model_type} on {len(pairs)} pairs"):
        report = evaluate_classifier(
            classifier, pairs, reading=reading, name=f"{classifier.model_type} on {input_path.name}"
        )
    if output is not None and output.suffix.lower() in (".json", ".md"):
        from parakit.io.atomic import atomic_write

        with atomic_write(output) as handle:
            handle.write(report.to_json() if output.suffix.lower() == ".json" else
                         report.to_markdown())  # fmt: skip
        if not as_json:
            typer.echo(f"wrote {output}")
    elif output is not None:
        json_path, md_path = report.save(output)
        if not as_json:
            typer.echo(f"wrote {json_path} and {md_path}")
    if as_json:
        echo_json(report.to_dict())
        return
    m = report.metrics
    typer.echo(
        f"pairs {m['n']}  accuracy {m['accuracy']:.3f}  macro F1 {m['macro']['f1']:.3f}"
        + (f"  positive F1 {m['positive']['f1']:.3f}" if "positive" in m else "")
    )


@app.command("clean-labels")
def clean_labels(
    noisy_path: Annotated[Path, typer.Argument(help="noisy labelled pairs (e.g. crowd labels)")],
    output: Annotated[Path, output_option("Relabelled pairs (jsonl, csv, tsv, parquet).")],
    teacher: Annotated[
        Path | None,
        typer.Option("--teacher", help="a saved model folder (from `identify train`) as teacher"),
    ] = None,
    clean: Annotated[
        Path | None,
        typer.Option("--clean", help="clean pairs to train the teacher on (instead of --teacher)"),
    ] = None,
    model: Annotated[
        str, typer.Option("--model", "-m", help="teacher model type with --clean")
    ] = "tfidf",
    param: Annotated[
        list[str] | None,
        typer.Option("--param", "-p", help="teacher hyperparameter KEY=VALUE (with --clean)"),
    ] = None,
    method: Annotated[
        str, typer.Option("--method", help="filter (drop) or flip (relabel) the doubtful pairs")
    ] = "filter",
    threshold: Annotated[
        float | None,
        typer.Option(
            "--threshold",
            min=0.0,
            max=1.0,
            help="λ: pairs whose own label has teacher probability <= λ are dropped or flipped "
            "(default: MultiPIT's best, 0.35 for filter and 0.25 for flip)",
        ),
    ] = None,
    grid: Annotated[
        str | None,
        typer.Option(
            "--grid",
            help="λ grid, e.g. 0.05,0.15,0.25,0.35,0.45 (MultiPIT's): for each λ and method a "
            "student (--model) is trained on --clean + relabelled pairs and scored on --dev; "
            "prints the table and writes the pairs relabelled at the best λ of --method",
        ),
    ] = None,
    dev: Annotated[
        Path | None, typer.Option("--dev", help="development pairs that score the --grid")
    ] = None,
    fmt: FormatOpt = None,
    binary: BinaryOpt = False,
    reading: ReadingOpt = None,
    precision: PrecisionOpt = "auto",
) -> None:
    """Noisy-label cleaning (M8): a teacher drops or flips the labels it doubts."""
    from parakit.io import write
    from parakit.models.base import PairClassifier, make_model
    from parakit.models.noisy import NoisyLabelCleaner

    if grid is None and (teacher is None) == (clean is None):
        raise typer.BadParameter("give exactly one of --teacher or --clean", param_hint="--teacher")
    if method not in ("filter", "flip"):
        raise typer.BadParameter("must be filter or flip", param_hint="--method")
    if grid is not None:
        _clean_labels_grid(
            noisy_path, output, grid, dev, teacher, clean, model, param, method, threshold,
            fmt, binary, reading, precision,
        )  # fmt: skip
        return
    if threshold is None:
        threshold = 0.35 if method == "filter" else 0.25
    noisy = _load_pairs(noisy_path, fmt, binary, reading)
    if teacher is not None:
        teacher_model = PairClassifier.load(teacher, **run_settings(precision))
        cleaner = NoisyLabelCleaner(teacher_model, method, threshold, refit=False).fit()
    else:
        params = parse_key_values(param, "--param")
        classifier = make_model(model, run_settings(precision), **params)
        cleaner = NoisyLabelCleaner(classifier, method, threshold).fit(
            _load_pairs(clean, None, binary, reading)
        )
    cleaned = cleaner.transform(noisy)
    cleaned.metadata["noisy_labels"] = cleaner.report_
    write(cleaned, output)
    report = cleaner.report_
    typer.echo(
        f"{method} at λ={threshold}: {report['n_noisy']} pairs, {report['dropped']} dropped, "
        f"{report['flipped']} flipped, {report['kept']} written to {output}"
    )


def _clean_labels_grid(
    noisy_path: Path,
    output: Path,
    grid: str,
    dev: Path | None,
    teacher: Path | None,
    clean: Path | None,
    model: str,
    param: list[str] | None,
    method: str,
    threshold: float | None,
    fmt: str | None,
    binary: bool,
    reading: str | None,
    precision: str = "auto",
) -> None:
    """``clean-labels --grid``: MultiPIT's λ search (Table 3), selected on dev F1."""
    from parakit.cli.options import parse_numbers
    from parakit.io import write
    from parakit.models.base import PairClassifier, make_model
    from parakit.models.noisy import METHODS, given_label_proba, noisy_label_grid, relabel

    if clean is None or dev is None:
        raise typer.BadParameter(
            "--grid trains students on --clean + relabelled pairs and scores them on --dev: "
            "give both",
            param_hint="--grid",
        )
    if threshold is not None:
        raise typer.BadParameter("--grid chooses λ; drop --threshold", param_hint="--threshold")
    lambdas = parse_numbers(grid, "--grid", sep=",")
    if any(x > 1 for x in lambdas):
        raise typer.BadParameter(f"{grid!r}: every λ must lie in [0, 1]", param_hint="--grid")
    noisy = _load_pairs(noisy_path, fmt, binary, reading)
    params = parse_key_values(param, "--param")
    student = make_model(model, run_settings(precision), **params)
    with status(f"λ grid: {2 * len(lambdas) + 2} students of {model}"):
        result = noisy_label_grid(
            student,
            _load_pairs(clean, None, binary, reading),
            noisy,
            _load_pairs(dev, None, binary, reading),
            teacher=PairClassifier.load(teacher, **run_settings(precision)) if teacher else None,
            methods=METHODS,
            thresholds=lambdas,
            refit_teacher=teacher is None,
        )
    typer.echo(result.to_markdown())
    best = result.best(method)
    assert result.teacher is not None
    p_given, proba = given_label_proba(result.teacher, noisy)
    cleaned, report = relabel(
        noisy, p_given, result.teacher.classes_, method, best["threshold"], proba
    )
    cleaned.metadata["noisy_labels"] = {**report, "grid": result.rows, "selected_on": str(dev)}
    write(cleaned, output)
    typer.echo(
        f"best {method} on dev: λ={best['threshold']} (F1 {best['dev_f1']:.3f}); "
        f"{report['dropped']} dropped, {report['flipped']} flipped, {report['kept']} written "
        f"to {output}"
    )
