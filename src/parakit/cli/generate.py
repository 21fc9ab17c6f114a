"""``parakit generate ...``: prepare data, train, run and evaluate paraphrase generators.

Commands: ``prepare``, ``train``, ``run``, ``evaluate``, ``human-export``, ``human-import``,
``matrix``. Heavy libraries are imported inside the commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from parakit.cli.options import (
    FormatOpt,
    PrecisionOpt,
    SeedOpt,
    check_model,
    mark_resumable,
    output_option,
    parse_numbers,
    read_pairs,
    show_progress,
)

app = typer.Typer(add_completion=False, help="Paraphrase generation and its evaluation.")


def _read_sources(path: Path, fmt: str | None) -> list[str]:
    """Inputs to paraphrase: a text file (one per line), a generations/JSONL file with
    ``source``, or any pair set (its distinct ``text1`` values, in order)."""
    if fmt is None and path.suffix in (".txt", ".text"):
        return [
            line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
        ]
    if fmt in (None, "multipit-multiref") and path.suffix == ".json":
        from parakit.io import multireference, read_multireference

        return list(multireference(read_multireference(path)))
    pairs = read_pairs(path, fmt)
    return list(dict.fromkeys(p.text1 for p in pairs))


def _references(path: Path, fmt: str | None) -> dict[str, list[str]]:
    from parakit.io import multireference, read

    if fmt is None and path.suffix == ".json":
        fmt = "multipit-multiref"
    return multireference(read(path, format=fmt))


def _scorer(model: str, num_layers: int | None, batch_size: int, device: str | None) -> Any:
    from parakit.evaluate.generation import BertScore

    return BertScore(model, num_layers=num_layers, batch_size=batch_size, device=device)


@app.command()
def prepare(
    input: Annotated[Path, typer.Argument(help="Corpus file (any format parakit reads).")],
    output: Annotated[Path, output_option("Output JSONL of directed pairs.")],
    format: FormatOpt = None,
    directions: Annotated[
        str,
        typer.Option(
            help="forward, backward, both, or label (Turku labels decide; others: forward)."
        ),
    ] = "label",
    reading: Annotated[
        str | None, typer.Option(help="Binary reading that keeps paraphrases.")
    ] = None,
    bleu_threshold: Annotated[
        float,
        typer.Option(
            help="Drop pairs with sentence BLEU (output vs input) >= this; negative disables."
        ),
    ] = 14.0,
    dedupe: Annotated[bool, typer.Option(help="Drop duplicate and identical pairs.")] = True,
    test: Annotated[
        Path | None,
        typer.Option(help="Test set whose groups and sentences must not be trained on."),
    ] = None,
    test_format: Annotated[
        str | None, typer.Option(help="Format of --test (default: guess).")
    ] = None,
    tokenize: Annotated[
        str, typer.Option(help="SacreBLEU tokenizer of the filter (ja-mecab or char for Japanese).")
    ] = "13a",
) -> None:
    """Make generation training data: directed pairs, test-overlap removal, dedupe, BLEU filter."""
    from parakit.io import write
    from parakit.models.generation_data import prepare_generation_data

    pairs = read_pairs(input, format)
    test_pairs = None
    if test is not None:
        fmt = test_format or ("multipit-multiref" if test.suffix == ".json" else None)
        test_pairs = read_pairs(test, fmt)
    out, report = prepare_generation_data(
        pairs,
        directions=directions,  # type: ignore[arg-type]
        reading=reading,
        bleu_threshold=None if bleu_threshold < 0 else bleu_threshold,
        dedupe=dedupe,
        test=test_pairs,
        tokenize=tokenize,
    )
    write(out, output, format="jsonl")
    for name, count in report.steps:
        typer.echo(f"{name}\t{count}")
    typer.echo(f"wrote {len(out)} directed pairs to {output}")


@app.command()
def train(
    train_file: Annotated[Path, typer.Argument(help="Directed training pairs (from `prepare`).")],
    output: Annotated[Path, output_option("Folder for the trained model.")],
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            help="Hugging Face id or local path (T5, BART, GPT-2, or a BERT/MiniLM to warm-start).",
        ),
    ],
    dev: Annotated[
        Path | None, typer.Option(help="Dev pairs for model selection (perplexity).")
    ] = None,
    architecture: Annotated[
        str, typer.Option(help="auto, encoder-decoder, decoder-only, bert2bert.")
    ] = "auto",
    learning_rate: Annotated[
        str,
        typer.Option(
            "--lr",
            help="Learning rate, or a comma-separated grid (the paper's: 1e-4,3e-4,1e-5,3e-5): "
            "one model per rate, the one with the lowest dev perplexity is kept (needs --dev).",
        ),
    ] = "1e-4",
    epochs: Annotated[int, typer.Option()] = 5,
    batch_size: Annotated[int, typer.Option(help="Effective batch size.")] = 128,
    micro_batch_size: Annotated[
        int | None, typer.Option(help="Per forward pass (accumulate).")
    ] = None,
    eval_steps: Annotated[
        int | None,
        typer.Option(help="Evaluate every N steps (default: 500, each epoch when shorter)."),
    ] = None,
    max_steps: Annotated[int | None, typer.Option()] = None,
    max_time: Annotated[
        float | None, typer.Option(help="Stop training after this many seconds.")
    ] = None,
    max_length: Annotated[int, typer.Option(help="Source and target truncation (tokens).")] = 64,
    seed: SeedOpt = 0,
    device: Annotated[str | None, typer.Option()] = None,
    format: FormatOpt = None,
    precision: PrecisionOpt = "auto",
    workdir: Annotated[
        Path | None,
        typer.Option(help="Checkpoint folder: the same command run again resumes from it."),
    ] = None,
) -> None:
    """Fine-tune a generator with MultiPIT's recipe (AdamW, warm-up 0.06, linear decay,
    selection on dev perplexity; with several --lr values, the learning rate too)."""
    from parakit.models.generator import Seq2SeqGenerator, select_learning_rate

    rates = parse_numbers(learning_rate, "--lr", sep=",")
    if len(rates) > 1 and dev is None:
        raise typer.BadParameter(
            "a learning-rate grid is selected on dev perplexity: give --dev", param_hint="--lr"
        )
    if any(rate <= 0 for rate in rates):
        raise typer.BadParameter(f"{learning_rate!r}: rates must be > 0", param_hint="--lr")
    gen = Seq2SeqGenerator(
        check_model(model),
        architecture=architecture,  # type: ignore[arg-type]
        learning_rate=rates[0],
        epochs=epochs,
        batch_size=batch_size,
        micro_batch_size=micro_batch_size,
        eval_steps=eval_steps,
        max_steps=max_steps,
        max_time=max_time,
        max_length=max_length,
        max_target_length=max_length,
        seed=seed,
        device=device,
        progress=show_progress(),
        precision=precision,
        output_dir=str(workdir) if workdir is not None else None,
    )
    if workdir is not None:
        mark_resumable()  # its checkpoints: the same command run again goes on from them
    train_pairs = read_pairs(train_file, format)
    dev_pairs = read_pairs(dev, format) if dev is not None else None
    if len(rates) > 1:
        gen, results = select_learning_rate(gen, train_pairs, dev_pairs, rates)
        typer.echo("lr\tbest dev perplexity")
        for rate, ppl in results.items():
            mark = "  <- kept" if rate == gen.learning_rate else ""
            typer.echo(f"{rate:g}\t{ppl:.3f}{mark}")
    else:
        gen.fit(train_pairs, dev_pairs)
    gen.save(output)
    best = gen.best_dev_perplexity_
    typer.echo(
        f"{gen.architecture_} model saved to {output} after {gen.n_steps_} steps"
        + (f"; best dev perplexity {best:.3f} at step {gen.best_step_}" if best else "")
    )


@app.command()
def run(
    input: Annotated[
        Path,
        typer.Argument(
            help="Inputs: .txt (one per line), multi-reference "
            ".json, or a pair file (its distinct text1)."
        ),
    ],
    output: Annotated[Path, output_option("Generations JSONL.")],
    model: Annotated[
        Path | None, typer.Option("--model", "-m", help="A model folder saved by `train`.")
    ] = None,
    llm_base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible API root (instead of --model).")
    ] = None,
    llm_model: Annotated[str | None, typer.Option(help="Model name for the API.")] = None,
    llm_endpoint: Annotated[str, typer.Option(help="chat or completions.")] = "chat",
    shots: Annotated[int, typer.Option(help="In-context examples (0 or up to 4: App. D).")] = 0,
    cache: Annotated[Path | None, typer.Option(help="LLM answer cache (resumable runs).")] = None,
    requests_per_minute: Annotated[float | None, typer.Option()] = None,
    concurrency: Annotated[int, typer.Option()] = 1,
    num_beams: Annotated[int, typer.Option()] = 4,
    do_sample: Annotated[
        bool, typer.Option("--sample", help="Sample instead of beam search.")
    ] = False,
    top_p: Annotated[float, typer.Option(help="Nucleus threshold (sampling and LLM).")] = 0.9,
    top_k: Annotated[int, typer.Option()] = 0,
    temperature: Annotated[float, typer.Option()] = 1.0,
    max_new_tokens: Annotated[
        int | None,
        typer.Option(help="Output limit (default: 64 for models, 100 for LLMs as in App. D)."),
    ] = None,
    system: Annotated[
        str | None, typer.Option(help="System name stored with each generation.")
    ] = None,
    format: FormatOpt = None,
    precision: PrecisionOpt = "auto",
) -> None:
    """Generate one paraphrase per input with a trained model or an LLM endpoint."""
    from parakit.evaluate.generation import write_generations

    sources = _read_sources(input, format)
    if (model is None) == (llm_base_url is None):
        raise typer.BadParameter("give exactly one of --model or --llm-base-url")
    if model is not None:
        from parakit.models.generator import Seq2SeqGenerator

        gen: Any = Seq2SeqGenerator.load(
            model,
            num_beams=num_beams,
            do_sample=do_sample,
            top_p=top_p,
            top_k=top_k,
            temperature=temperature,
            max_new_tokens=max_new_tokens or 64,
            progress=show_progress(),
            precision=precision,
        )
        name = system or model.name
    else:
        from parakit.models.llm import LLMGenerator

        if not llm_model:
            raise typer.BadParameter("--llm-model is required with --llm-base-url")
        gen = LLMGenerator(
            llm_base_url,
            llm_model,
            endpoint=llm_endpoint,  # type: ignore
            shots=shots,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_new_tokens or 100,
            cache_path=cache,
            requests_per_minute=requests_per_minute,
            concurrency=concurrency,
            progress=show_progress(),
        )
        name = system or f"{llm_model}-{shots}shot"
    outputs = gen.generate(sources)
    write_generations(output, sources, outputs, system=name)
    typer.echo(f"wrote {len(outputs)} generations to {output}")


@app.command()
def evaluate(
    generations: Annotated[Path, typer.Argument(help="Generations JSONL (from `run`).")],
    references: Annotated[
        Path | None,
        typer.Option(help="Multi-reference file (JSON) or pair file; BLEU is skipped without it."),
    ] = None,
    references_format: Annotated[str | None, typer.Option()] = None,
    bertscore_model: Annotated[
        str, typer.Option(help="BERTScore model id or path.")
    ] = "microsoft/deberta-xlarge-mnli",
    num_layers: Annotated[
        int | None,
        typer.Option(help="BERTScore layer (needed for models bert-score does not know)."),
    ] = None,
    batch_size: Annotated[int, typer.Option()] = 32,
    device: Annotated[str | None, typer.Option()] = None,
    beta: Annotated[float, typer.Option(help="BERT-iBLEU weight of BERTScore.")] = 4.0,
    lowercase: Annotated[
        bool, typer.Option(help="Lowercase for BLEU (the paper does for ParaNMT).")
    ] = False,
    name: Annotated[
        str | None, typer.Option(help="Row name (default: the system or file).")
    ] = None,
    output: Annotated[Path | None, output_option("JSON of all scores.")] = None,
    per_sentence: Annotated[Path | None, typer.Option(help="CSV of per-sentence scores.")] = None,
) -> None:
    """Score generations (BLEU, Self-BLEU, BERTScore, BERT-iBLEU) and print a Table-4 row."""
    import pandas as pd

    from parakit.evaluate.generation import (
        TABLE4_HEADER,
        align_references,
        evaluate_generations,
        read_generations,
    )
    from parakit.io.atomic import atomic_write, save_json

    rows = read_generations(generations)
    sources = [r["source"] for r in rows]
    outputs = [r["generation"] for r in rows]
    refs = None
    if references is not None:
        refs = align_references(
            sources, _references(references, references_format), path=generations
        )
    result = evaluate_generations(
        sources,
        outputs,
        refs,
        scorer=_scorer(bertscore_model, num_layers, batch_size, device),
        beta=beta,
        lowercase=lowercase,
    )
    label = name or (rows[0].get("system") if rows else None) or generations.stem
    typer.echo(TABLE4_HEADER)
    typer.echo(result.table_row(label))
    prefix = "reference_self_bleu_"
    extra = {k.removeprefix(prefix): v for k, v in result.scores.items() if k.startswith(prefix)}
    if extra:
        typer.echo("reference Self-BLEU: " + ", ".join(f"{k} {v:.2f}" for k, v in extra.items()))
    if output is not None:
        save_json(output, {"name": label, **result.to_dict()}, indent=2)
    if per_sentence is not None:
        with atomic_write(per_sentence, newline="") as handle:
            pd.DataFrame(result.per_sentence).rename(columns={"output": "generation"}).to_csv(
                handle, index=False
            )


@app.command("human-export")
def human_export(
    generations: Annotated[
        list[Path], typer.Argument(help="Generations JSONL file(s), one per system.")
    ],
    output: Annotated[Path, output_option("Folder for the sheets.")],
    raters: Annotated[int, typer.Option(help="Number of raters (sheets).")] = 3,
    rater_names: Annotated[str | None, typer.Option(help="Comma-separated rater names.")] = None,
    sample: Annotated[int | None, typer.Option(help="Items sampled per system.")] = None,
    seed: SeedOpt = 0,
    error_types: Annotated[bool, typer.Option(help="Add the paraphrase-type column.")] = True,
) -> None:
    """Write blind Likert rating sheets (fluency, semantic similarity, diversity)."""
    import random

    from parakit.evaluate.generation import read_generations
    from parakit.evaluate.human import export_rating_sheet

    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    for path in generations:
        rows = read_generations(path)
        for row in rows:
            row.setdefault("system", path.stem)
        if sample is not None and sample < len(rows):
            rows = rng.sample(rows, sample)
        items.extend(rows)
    names = (
        [n.strip() for n in rater_names.split(",") if n.strip()]
        if rater_names
        else [f"rater{i}" for i in range(1, raters + 1)]
    )
    paths = export_rating_sheet(items, output, raters=names, seed=seed, error_types=error_types)
    typer.echo(
        f"{len(items)} items for {len(names)} raters in {output} "
        f"(instructions: {paths['instructions'].name}, key: {paths['key'].name})"
    )


@app.command("human-import")
def human_import(
    sheets: Annotated[list[Path], typer.Argument(help="Filled rating sheets (CSV).")],
    key: Annotated[
        Path | None, typer.Option(help="key.csv from human-export (per-system means).")
    ] = None,
    metrics: Annotated[
        Path | None,
        typer.Option(
            help="Per-sentence metrics CSV from `evaluate --per-sentence` (Spearman correlations)."
        ),
    ] = None,
    output: Annotated[Path | None, output_option("JSON report.")] = None,
) -> None:
    """Agreement (ordinal Krippendorff's alpha), mean scores, paraphrase types, and Spearman
    correlation of automatic metrics with each aspect."""
    import pandas as pd

    from parakit.annotate.agreement import krippendorff_alpha
    from parakit.evaluate.human import (
        ASPECTS,
        SCALE,
        aspect_judgments,
        error_type_summary,
        mean_scores,
        metric_correlations,
        read_key,
        read_ratings,
    )
    from parakit.io.atomic import save_json

    ratings = read_ratings(sheets)
    key_frame = read_key(key, ratings) if key is not None else None
    alphas = {
        aspect: krippendorff_alpha(aspect_judgments(ratings, aspect), "ordinal", SCALE)
        for aspect in ASPECTS
        if (ratings["aspect"] == aspect).any()
    }
    report: dict[str, Any] = {"krippendorff_alpha_ordinal": alphas}
    typer.echo(
        "ordinal Krippendorff's alpha: " + ", ".join(f"{a} {v:.3f}" for a, v in alphas.items())
    )
    means = mean_scores(ratings, key_frame)
    typer.echo("\nmean scores\n" + means.round(2).to_string())
    report["mean_scores"] = means.to_dict(orient="index")
    if ratings["error_types"].map(len).sum():
        types = error_type_summary(ratings, key_frame)
        typer.echo("\nparaphrase types\n" + types.round(2).to_string())
        report["paraphrase_types"] = types.to_dict(orient="index")
    if metrics is not None:
        rho, p = metric_correlations(ratings, pd.read_csv(metrics), metric_columns=None)
        typer.echo(
            "\nSpearman rho (p)\n"
            + (rho.round(3).astype(str) + " (" + p.map(lambda v: f"{v:.1g}") + ")").to_string()
        )
        report["spearman_rho"] = rho.to_dict(orient="index")
        report["spearman_p"] = p.to_dict(orient="index")
    if output is not None:
        save_json(output, report, indent=2, default=float)


@app.command()
def matrix(
    dataset: Annotated[
        list[str],
        typer.Option(
            "--dataset",
            help="NAME=TRAIN:TEST[:DEV] (repeat); TEST a multi-reference JSON or a pair file.",
        ),
    ],
    model: Annotated[
        str, typer.Option("--model", "-m", help="The same base model for every dataset.")
    ],
    output: Annotated[
        Path | None,
        output_option("Folder for models, generations and table."),
    ] = None,
    learning_rate: Annotated[float, typer.Option("--lr")] = 1e-4,
    epochs: Annotated[int, typer.Option()] = 5,
    batch_size: Annotated[int, typer.Option()] = 128,
    micro_batch_size: Annotated[int | None, typer.Option()] = None,
    max_steps: Annotated[int | None, typer.Option()] = None,
    num_beams: Annotated[int, typer.Option()] = 4,
    bertscore_model: Annotated[str, typer.Option()] = "microsoft/deberta-xlarge-mnli",
    num_layers: Annotated[int | None, typer.Option()] = None,
    beta: Annotated[float, typer.Option()] = 4.0,
    seed: SeedOpt = 0,
    precision: PrecisionOpt = "auto",
) -> None:
    """Train on each dataset and evaluate on every test set: a Table-5-style matrix."""
    from parakit.evaluate.generation import (
        GenerationDataset,
        cross_dataset_matrix,
        format_matrix,
    )
    from parakit.io.atomic import atomic_write, save_json
    from parakit.models.generator import Seq2SeqGenerator

    datasets = {}
    for spec in dataset:
        name, _, files = spec.partition("=")
        parts = files.split(":")
        if not name or len(parts) not in (2, 3):
            raise typer.BadParameter(f"--dataset {spec!r}: use NAME=TRAIN:TEST[:DEV]")
        datasets[name] = GenerationDataset(
            train=read_pairs(Path(parts[0]), None),
            test=_references(Path(parts[1]), None),
            dev=read_pairs(Path(parts[2]), None) if len(parts) == 3 else None,
        )

    def make() -> Seq2SeqGenerator:
        return Seq2SeqGenerator(
            check_model(model),
            learning_rate=learning_rate,
            epochs=epochs,
            batch_size=batch_size,
            micro_batch_size=micro_batch_size,
            max_steps=max_steps,
            num_beams=num_beams,
            seed=seed,
            progress=show_progress(),
            precision=precision,
        )

    table = cross_dataset_matrix(
        datasets,
        make,
        scorer=_scorer(bertscore_model, num_layers, 32, None),
        beta=beta,
        output_dir=output,
    )
    text = format_matrix(table)
    typer.echo(text)
    if output is not None:
        with atomic_write(output / "matrix.tsv") as handle:
            handle.write(text + "\n")
        save_json(
            output / "matrix.json",
            [{"train": a, "test": b, **s} for (a, b), s in table.items()],
            indent=2,
        )
