"""``parakit embed train|evaluate``: paraphrase bi-encoders (T17)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from parakit.cli.options import (
    FormatOpt,
    JsonOpt,
    PrecisionOpt,
    SeedOpt,
    check_model,
    echo_json,
    output_option,
    read_pairs,
    show_progress,
    status,
)
from parakit.cli.release import LicenseOpt, PrivateOpt, PushOpt, push, recipe_command
from parakit.models.card import biencoder_card

from ..errors import Errors

app = typer.Typer(
    add_completion=False,
    help="Train and evaluate paraphrase embeddings (bi-encoders).",
)


@app.command("train")
def train(
    ctx: typer.Context,
    train_file: Annotated[Path, typer.Argument(help="Training pairs (any parakit format).")],
    output: Annotated[Path, output_option("Model folder to write.")],
    base_model: Annotated[
        str,
        typer.Option(
            "--base-model", "-m", help="HF id, local folder, offline-minilm or offline-mpnet."
        ),
    ] = "offline-minilm",
    dev: Annotated[Path | None, typer.Option(help="Dev pairs evaluated during training.")] = None,
    hard_negatives: Annotated[
        Path | None, typer.Option(help="Mined (sentence, negative) pairs.")
    ] = None,
    loss: Annotated[
        str, typer.Option(help="contrastive | online_contrastive | mnrl")
    ] = "online_contrastive",
    batch_size: Annotated[int, typer.Option(min=1, help="Training batch size.")] = 16,
    lr: Annotated[float, typer.Option(help="Learning rate.")] = 1e-5,
    epochs: Annotated[int, typer.Option(min=1, help="Training epochs.")] = 1,
    reading: Annotated[
        str | None, typer.Option(help="Binary reading (Turku: loose|strict).")
    ] = None,
    eval_steps: Annotated[
        int | None, typer.Option(help="Evaluate every N steps (default: each epoch).")
    ] = None,
    max_length: Annotated[
        int,
        typer.Option("--max-length", "--max-seq-length", min=1, help="Token limit per sentence."),
    ] = 128,
    seed: SeedOpt = 0,
    fmt: FormatOpt = None,
    precision: PrecisionOpt = "auto",
    push_to_hub: PushOpt = None,
    private: PrivateOpt = False,
    license: LicenseOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Fine-tune a bi-encoder with mean pooling on the binary reading of the labels; the folder
    gets a model card README.md."""
    from parakit.io.atomic import check_output_folder, replace_folder
    from parakit.models.base import is_model_folder
    from parakit.models.biencoder import BiEncoder

    check_output_folder(output, is_model_folder, "a parakit model folder")  # before training
    if license is not None:
        from parakit.io.hub import check_license

        check_license(license, output)  # E142 before training, not after
    model = BiEncoder(
        check_model(base_model, "--base-model"),
        loss=loss,
        batch_size=batch_size,
        learning_rate=lr,
        epochs=epochs,
        reading=reading,
        eval_steps=eval_steps,
        max_length=max_length,
        seed=seed,
        precision=precision,
        progress=show_progress(),
    )
    train_pairs = read_pairs(train_file, fmt)
    dev_pairs = read_pairs(dev, fmt) if dev else None
    model.fit(
        train_pairs,
        eval_set=dev_pairs,
        hard_negatives=read_pairs(hard_negatives) if hard_negatives else None,
    )
    with replace_folder(output, is_model_folder, "a parakit model folder") as folder:
        model.save(folder)
        biencoder_card(
            model,
            folder,
            command=recipe_command(ctx),
            train_path=train_file,
            pairs=train_pairs,
            dev_pairs=dev_pairs,
            name=output.name,
            license=license,
            dev=dev,
        )
    if as_json:
        echo_json({"saved": str(output), "history": model.history_})
    else:
        last = model.history_[-1] if model.history_ else {}
        shown = "  ".join(f"{k} {v:.3f}" for k, v in last.items() if isinstance(v, float))
        typer.echo(f"trained {len(train_pairs)} pairs; saved to {output}" + (
            f"\nlast evaluation: {shown}" if shown else ""))  # fmt: skip
    if push_to_hub:
        push(output, push_to_hub, "model", private)


@app.command("evaluate")
def evaluate(
    model: Annotated[
        Path,
        typer.Argument(
            help="Model folder (from `parakit embed train` or any sentence-transformers folder)."
        ),
    ],
    pairs: Annotated[Path, typer.Argument(help="Labelled test pairs.")],
    output: Annotated[Path | None, output_option("Metrics JSON.")] = None,
    fmt: FormatOpt = None,
    precision: PrecisionOpt = "auto",
) -> None:
    """Cosine classification metrics and retrieval metrics (T18) on labelled pairs."""
    from parakit.models.biencoder import BiEncoder

    test = read_pairs(pairs, fmt)
    with status(f"encoding and ranking {len(test)} pairs"):
        metrics = BiEncoder.load(model, precision=precision).evaluate(test)
    if output:
        from parakit.io.atomic import save_json

        save_json(output, metrics, indent=2)
    typer.echo(json.dumps(metrics, indent=2))


@app.command("distill-static")
def distill_static_command(
    model: Annotated[
        str,
        typer.Argument(help="Teacher: HF id, local folder, offline-minilm or offline-mpnet."),
    ],
    output: Annotated[Path, output_option("Static encoder folder to write.")],
    pca_dims: Annotated[
        int, typer.Option("--pca-dims", min=2, help="Dimensions kept by PCA.")
    ] = 256,
    gold: Annotated[
        Path | None,
        typer.Option(help="Labelled pairs: measure gold recall of teacher and student."),
    ] = None,
    pool: Annotated[
        Path | None,
        typer.Option(help="Distractor sentences for --gold (a collection, as `mine run`)."),
    ] = None,
    ks: Annotated[
        list[int] | None, typer.Option("--k", min=1, help="Recall@k to report (repeat).")
    ] = None,
    fmt: FormatOpt = None,
) -> None:
    """Distil a static encoder (a token-embedding table, Model2Vec) from a sentence encoder;
    the folder works wherever an encoder does (`mine run -m DIR`, `build knn`, `embed
    evaluate`). With --gold, its card records gold recall@k against the teacher."""
    from parakit.vectors.static import distill_static

    teacher = check_model(model, "MODEL")
    # the gold pairs and the pool are read before anything is distilled or written
    measure = _gold_inputs(gold, pool, fmt) if gold is not None else None
    with status(f"distilling a static encoder from {model}"):
        info = distill_static(teacher, output, pca_dims=pca_dims)
    if measure is not None:
        positives, distractors = measure
        info["gold_recall"] = _static_recall(
            teacher, output, gold.name, positives, distractors, ks or [5, 10, 50]
        )
    typer.echo(json.dumps({"saved": str(output), **info}, indent=2))


def _gold_inputs(
    gold: Path, pool: Path | None, fmt: str | None
) -> tuple[list[tuple[str, str]], list[str]]:
    """The paraphrase pairs of ``gold`` and the sentences of ``pool`` (E805: no paraphrase)."""
    from parakit.errors import MineError
    from parakit.vectors.collection import iter_collection

    labelled = read_pairs(gold, fmt)
    positives = [
        (p.text1, p.text2)
        for p, label in zip(labelled, labelled.binary_labels(), strict=True)
        if label == 1
    ]
    if not positives:
        raise MineError(Errors.E805_paraphrase_pairs_measure.format(gold=gold))
    distractors = [r["text"] for r in iter_collection(pool)] if pool is not None else []
    return positives, distractors


def _static_recall(
    teacher: str,
    folder: Path,
    source: str,
    positives: list[tuple[str, str]],
    distractors: list[str],
    ks: list[int],
) -> dict:
    """Gold recall@k of the teacher and the static encoder in ``folder``, recorded in its card."""
    from parakit.vectors.encode import load_encoder
    from parakit.vectors.static import gold_recall, record_recall

    recall = {"source": source, "pairs": len(positives), "ks": ks}
    with status(f"gold recall of {len(positives)} pairs among {len(distractors)} sentences"):
        for name, path in (("teacher", teacher), ("static", str(folder))):
            recall[name] = gold_recall(load_encoder(path, "torch"), positives, distractors, ks)
    recall["pool"] = len(set(distractors) | {t for pair in positives for t in pair})
    record_recall(folder, recall)
    return recall
