"""``parakit mine ...``: index, mining, retrieval evaluation, tiles, growth, scale-out.

Heavy libraries are imported inside the commands, so ``parakit --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from parakit.cli.options import (
    FormatOpt,
    JsonOpt,
    MemoryBudgetOpt,
    PrecisionOpt,
    SeedOpt,
    check_model,
    echo_json,
    mark_resumable,
    output_option,
    parse_bytes,
    progress_bar,
    read_pairs,
    run_settings,
    show_progress,
)

from ..errors import Errors

app = typer.Typer(
    add_completion=False,
    help="Vector index, nearest-neighbour mining, retrieval evaluation, tiles, dataset growth.",
)

ModelOpt = Annotated[
    str,
    typer.Option(
        "--model", "-m", help="Sentence encoder: HF id, local folder, or 'offline-minilm'."
    ),
]
BackendOpt = Annotated[str, typer.Option(help="Encoder backend: torch | onnx.")]


class _ChunkedProgress:
    """An encoder that encodes in chunks and advances a progress bar (for silent encoders)."""

    def __init__(self, encoder: Any, progress: Any, task: Any, chunk_size: int = 512) -> None:
        self.encoder, self.progress, self.task = encoder, progress, task
        self.chunk_size = chunk_size

    def encode(self, texts: Any) -> Any:
        import numpy as np

        texts = list(texts)
        parts = []
        for start in range(0, len(texts), self.chunk_size):
            parts.append(np.asarray(self.encoder.encode(texts[start : start + self.chunk_size])))
            self.progress.advance(self.task, len(parts[-1]))
        return np.vstack(parts) if parts else self.encoder.encode(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.encoder, name)


def _index_options(on_disk: bool, memory_budget: str | None) -> dict[str, Any] | None:
    """The VectorIndex options of ``--on-disk`` and ``--memory-budget``."""
    options: dict[str, Any] = {}
    if on_disk:
        options["on_disk"] = True
    if memory_budget is not None:
        options["memory_budget"] = parse_bytes(memory_budget)
    return options or None


@app.command("run")
def run(
    collection: Annotated[
        Path, typer.Argument(help="Sentences: .txt, .jsonl, .tsv/.csv or a pair corpus.")
    ],
    output: Annotated[
        Path, output_option("Candidate pairs (JSONL; a folder with --output-parts).")
    ],
    workdir: Annotated[Path, typer.Option(help="Checkpoint folder (rerun to resume).")],
    model: ModelOpt = "offline-minilm",
    backend: BackendOpt = "torch",
    k: Annotated[int, typer.Option("--k", "-k", help="Neighbours per sentence.")] = 5,
    same_source: Annotated[bool, typer.Option(help="Pair sentences of one source only.")] = False,
    queries: Annotated[
        Path | None, typer.Option(help="Query sentences to search the collection with.")
    ] = None,
    classifier: Annotated[
        Path | None, typer.Option(help="Saved pair classifier for re-ranking.")
    ] = None,
    min_probability: Annotated[
        float | None, typer.Option(help="Keep pairs with P(paraphrase) >= this.")
    ] = None,
    min_score: Annotated[float | None, typer.Option(help="Keep pairs with cosine >= this.")] = None,
    rescore_with: Annotated[
        str | None,
        typer.Option(
            help="Cascade: a better encoder re-scores the pairs that survive the classifier "
            "(each of their sentences embedded once); mine with a static -m and a larger -k."
        ),
    ] = None,
    rescore_k: Annotated[
        int | None, typer.Option(help="Cascade: keep each sentence's best N by the rescorer.")
    ] = None,
    min_teacher_score: Annotated[
        float | None, typer.Option(help="Cascade: keep pairs with rescorer cosine >= this.")
    ] = None,
    index_kind: Annotated[
        str, typer.Option(help="auto | flat | ivf | hnsw | ivfpq | ivfopq")
    ] = "auto",
    metric: Annotated[str, typer.Option(help="ip (cosine) | l2")] = "ip",
    nprobe: Annotated[int | None, typer.Option(help="IVF cells visited per query.")] = None,
    recall: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Target recall@k against exact search: the index kind and nprobe/efSearch are "
            "calibrated on a sample and the estimate recorded (0: no calibration, kind by size).",
        ),
    ] = 0.95,
    on_disk: Annotated[bool, typer.Option(help="IVF lists in a memory-mapped file.")] = False,
    memory_budget: MemoryBudgetOpt = None,
    chunk_size: Annotated[int, typer.Option(help="Sentences per checkpoint.")] = 10_000,
    batch_size: Annotated[int, typer.Option(help="Encoder batch size.")] = 64,
    text_field: str = "text",
    source_field: str = "source",
    overwrite: Annotated[
        bool,
        typer.Option(
            help="Discard a workdir made with other settings, and an --output-parts folder "
            "of another mining run."
        ),
    ] = False,
    precision: PrecisionOpt = "auto",
    workers: Annotated[
        int | None,
        typer.Option(help="Run on a Dask LocalCluster of N processes (see --scheduler)."),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(help="Run on the Dask scheduler at this address (tcp://host:8786)."),
    ] = None,
    shards: Annotated[
        int | None, typer.Option(help="Index shards (default on a cluster: one per worker).")
    ] = None,
    output_parts: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Write -o as a folder of N part files (pairs-00000.jsonl..., one task each, "
            "split by query rows) and a manifest; read back with parakit.io.read(FOLDER).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Embed a collection, find k nearest neighbours, filter, optionally re-rank; resumable.

    With --workers or --scheduler every stage runs as Dask tasks: embedding chunks, index
    shards, the search of each chunk against every shard (with --same-source: the shards of
    its own source), the classifier's batches, and with --output-parts the part files.
    """
    from parakit.mine.mining import mine
    from parakit.mine.rerank import load_classifier
    from parakit.vectors.encode import load_encoder

    mark_resumable()  # the --workdir checkpoints: a rerun goes on from them

    # a torch re-ranker runs at --precision too
    clf = load_classifier(classifier, **run_settings(precision)) if classifier else None
    with _cluster(workers, scheduler) as client:
        result = mine(
            collection,
            workdir,
            load_encoder(check_model(model), backend, batch_size=batch_size, precision=precision),
            output=output,
            k=k,
            same_source=same_source,
            queries=queries,
            classifier=clf,
            min_probability=min_probability,
            min_score=min_score,
            index_kind=index_kind,
            metric=metric,
            nprobe=nprobe,
            recall=recall or None,
            chunk_size=chunk_size,
            text_field=text_field,
            source_field=source_field,
            overwrite=overwrite,
            index_options=_index_options(on_disk, memory_budget),
            progress=show_progress(),
            rescorer=load_encoder(
                check_model(rescore_with), backend, batch_size=batch_size, precision=precision
            )
            if rescore_with
            else None,
            rescore_k=rescore_k,
            min_teacher_score=min_teacher_score,
            client=client,
            shards=shards,
            output_parts=output_parts,
        )
    _report_run(result, as_json)


def _cluster(workers: int | None, scheduler: str | None) -> Any:
    """The Dask client of --scheduler or of a LocalCluster of --workers; none without them."""
    import contextlib

    if scheduler and workers:
        raise typer.BadParameter("give --workers (a cluster here) or --scheduler, not both")
    if not scheduler and not workers:
        return contextlib.nullcontext(None)
    from parakit.mine.distributed import cluster_client

    return cluster_client(workers, scheduler)


def _report_run(result: Any, as_json: bool) -> None:
    """``mine run``'s summary: one JSON object (--json) or one line."""
    summary = {
        "output": str(result.output),
        "sentences": result.n_sentences,
        "candidates": result.n_candidates,
        "written": result.n_written,
        "seconds": {k: round(v, 2) for k, v in result.seconds.items()},
        "index": {
            name: {
                key: meta.get(key)
                for key in ("kind", "nlist", "nprobe", "ef_search", "pq_m", "recall_estimate")
            }
            for name, meta in result.index.items()
        },
    }
    if as_json:
        echo_json(summary)
        return
    seconds = sum(summary["seconds"].values())
    typer.echo(
        f"mined {result.n_sentences} sentences: {result.n_candidates} candidates, "
        f"{result.n_written} written to {result.output} in {seconds:.1f} s"
    )


@app.command("index")
def index_cmd(
    collection: Annotated[Path, typer.Argument(help="Sentence collection.")],
    output: Annotated[Path, output_option("Index folder.")],
    model: ModelOpt = "offline-minilm",
    backend: BackendOpt = "torch",
    kind: Annotated[str, typer.Option(help="auto | flat | ivf | hnsw | ivfpq | ivfopq")] = "auto",
    metric: str = "ip",
    on_disk: bool = False,
    memory_budget: MemoryBudgetOpt = None,
    recall: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Target recall@5 (0: kind by size).")
    ] = 0.0,
    chunk_size: int = 10_000,
    precision: PrecisionOpt = "auto",
) -> None:
    """Build a saved index folder (FAISS index + sentence store) for `parakit mine search`."""
    from parakit.mine.mining import build_index_folder
    from parakit.vectors.encode import load_encoder

    options = _index_options(on_disk, memory_budget) or {}
    if recall:
        options["recall"] = recall
    index = build_index_folder(
        collection,
        output,
        load_encoder(check_model(model), backend, precision=precision),
        kind=kind,
        metric=metric,
        chunk_size=chunk_size,
        **options,
    )
    echo_json(index.meta())


@app.command("search")
def search_cmd(
    index_dir: Annotated[Path, typer.Argument(help="Folder from `parakit mine index`.")],
    query: Annotated[list[str], typer.Argument(help="Query sentence(s).")],
    k: Annotated[int, typer.Option("--k", "-k", help="Neighbours per query.")] = 5,
    backend: BackendOpt = "torch",
    precision: PrecisionOpt = "auto",
) -> None:
    """Nearest sentences of the indexed collection for each query."""
    from parakit.vectors.encode import load_encoder
    from parakit.vectors.index import VectorIndex

    index = VectorIndex.load(index_dir)
    encoder = load_encoder(
        check_model(index.meta_["encoder"]["model"]), backend, precision=precision
    )
    scores, ids = index.search(encoder.encode(query), k)
    for text, row_scores, row_ids in zip(query, scores, ids, strict=True):
        typer.echo(f"# {text}")
        for score, i in zip(row_scores, row_ids, strict=True):
            if i >= 0:
                typer.echo(f"{score:.4f}\t{index.store_.text(int(i))}")


@app.command("eval-retrieval")
def eval_retrieval(
    pairs: Annotated[Path, typer.Argument(help="Labelled test pairs (any parakit format).")],
    model: Annotated[
        list[str],
        typer.Option("--model", "-m", help="Encoder(s); 'tfidf' for the char 2-3-gram baseline."),
    ] = ("tfidf",),
    backend: BackendOpt = "torch",
    plot: Annotated[Path | None, typer.Option(help="Figure (PNG) like Figs. 8-10.")] = None,
    output: Annotated[Path | None, output_option("Metrics (JSON).")] = None,
    top_n: Annotated[list[int], typer.Option(help="Top-N cut-offs.")] = (1, 5, 10),
    fmt: FormatOpt = None,
    precision: PrecisionOpt = "auto",
) -> None:
    """Retrieval evaluation (T18): all unique statements as candidates, rank of s2 for s1."""
    from parakit.evaluate.retrieval import RetrievalEvaluator, plot_retrieval
    from parakit.vectors.encode import TfidfEncoder, load_encoder

    data = read_pairs(pairs, fmt)
    evaluator = RetrievalEvaluator(data, name="", top_n=top_n)
    results = {}
    with progress_bar() as progress:
        for name in model:
            label = (
                name if name in ("tfidf", "offline-minilm", "offline-mpnet") else Path(name).name
            )
            task = progress.add_task(f"{label}: encode", total=len(evaluator.candidates_))
            if name == "tfidf":
                encoder: Any = TfidfEncoder((2, 3)).fit(evaluator.candidates_)
                progress.update(task, completed=len(evaluator.candidates_))
            else:
                encoder = _ChunkedProgress(
                    load_encoder(check_model(name), backend, precision=precision), progress, task
                )
            results[label] = evaluator(encoder)
    if plot:
        plot_retrieval(
            results, plot, name="", title=f"{pairs.name}: {len(evaluator.candidates_)} candidates"
        )
    if output:
        from parakit.io.atomic import save_json

        save_json(output, _nan_to_null(results), indent=2, allow_nan=False)  # NaN -> null
    echo_json(_nan_to_null(results))


@app.command("eval-large")
def eval_large(
    pairs: Annotated[Path, typer.Argument(help="Labelled test pairs.")],
    distractors: Annotated[Path, typer.Option(help="Distractor sentence collection.")],
    model: ModelOpt = "offline-minilm",
    backend: BackendOpt = "torch",
    max_rank: int = 2048,
    limit: Annotated[int | None, typer.Option(min=1, help="Use the first N distractors.")] = None,
    plot: Annotated[Path | None, typer.Option(help="Figure (PNG) like Fig. 11.")] = None,
    output: Annotated[Path | None, output_option("Metrics (JSON).")] = None,
    fmt: FormatOpt = None,
    precision: PrecisionOpt = "auto",
) -> None:
    """Large-scale evaluation (T19): rank of s2 among a distractor collection, top-N per label."""
    import itertools

    from tqdm.auto import tqdm

    from parakit.evaluate.largescale import LargeScaleEvaluator, plot_large_scale
    from parakit.vectors.collection import iter_collection
    from parakit.vectors.encode import load_encoder

    texts = (r["text"] for r in iter_collection(distractors))
    if limit:
        texts = itertools.islice(texts, limit)
    texts = tqdm(
        texts,
        desc="distractors",
        unit=" sentences",
        total=limit or None,
        disable=not show_progress(),
    )
    evaluator = LargeScaleEvaluator(
        read_pairs(pairs, fmt),
        max_rank=max_rank,
        top_n=tuple(n for n in (1, 10, 100, 1000, 2048) if n <= max_rank),
    )
    metrics = evaluator(
        load_encoder(check_model(model), backend, precision=precision),
        distractors=texts,
        output_path=output,
    )
    if plot:
        plot_large_scale({Path(model).name: metrics}, plot, top_n=evaluator.top_n)
    echo_json(metrics)


@app.command("train-baseline")
def train_baseline(
    pairs: Annotated[Path, typer.Argument(help="Labelled pairs (Turku labels or binary).")],
    output: Annotated[Path, output_option("Classifier folder.")],
    model: ModelOpt = "offline-minilm",
    backend: BackendOpt = "torch",
    target: Annotated[
        str, typer.Option(help="auto (turku3 for Turku labels, else binary) | turku3 | binary")
    ] = "auto",
    fmt: FormatOpt = None,
) -> None:
    """Train the LR-on-[|u-v|, u*v] pair classifier (seconds after embedding): the
    ``embedding-lr`` model of ``identify train``, saved the same way."""
    from parakit.models.baselines import EmbeddingClassifier

    data = read_pairs(pairs, fmt)
    if target == "auto":
        target = "turku3" if data.scheme.name == "turku" else "binary"
    if target == "binary":
        data, target = data.to_binary(), "labels"
    clf = EmbeddingClassifier(model, target, backend).fit(data)
    clf.save(output)
    echo_json({"saved": str(output), "classes": [str(c) for c in clf.classes_]})


def _nan_to_null(value: Any) -> Any:
    """``value`` with NaN floats (the precision of an empty selection) as None."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _nan_to_null(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_nan_to_null(v) for v in value]
    return value


@app.command("tiles")
def tiles_cmd(
    sample: Annotated[
        Path,
        typer.Argument(
            help="Annotated candidate sample with lexical similarity (e.g. turku/opus-pb-dev.json)."
        ),
    ],
    output: Annotated[Path, output_option("Folder for table, plot, JSON.")],
    scores: Annotated[
        Path | None,
        typer.Option(help="CSV with columns neg_conf, pos_conf (one row per pair, same order)."),
    ] = None,
    classifier: Annotated[Path | None, typer.Option(help="Saved pair classifier.")] = None,
    baseline_model: Annotated[
        str | None,
        typer.Option(help="Train the embedding baseline with this encoder, scoring out-of-fold."),
    ] = None,
    backend: BackendOpt = "torch",
    folds: int = 5,
    neg_lex_max: float = 0.1,
    neg_conf_min: float = 0.4,
    pos_lex_min: float = 0.5,
    pos_conf_min: float = 0.998,
    seed: SeedOpt = 0,
    fmt: FormatOpt = None,
) -> None:
    """Tile analysis (T16): 5x5 negative density table + heat map, rule precision estimate."""
    import numpy as np

    from parakit.errors import MineError
    from parakit.io.atomic import atomic_write, save_json
    from parakit.mine.tiles import (
        SelectionRules,
        TileAnalysis,
        estimate_precision,
        read_confidences,
        write_confidences,
    )

    data = read_pairs(sample, fmt)
    missing = [i for i, p in enumerate(data) if "lex_similarity" not in p.metadata]
    if missing:
        raise MineError(
            Errors.E805_pair_lexical_similarity.format(sample=sample, missing_0_1=missing[0] + 1)
        )
    lex = np.asarray([p.metadata["lex_similarity"] for p in data])
    if sum(x is not None for x in (scores, classifier, baseline_model)) != 1:
        raise MineError(Errors.E805_give_exactly_one)
    if scores is not None:
        neg, pos = read_confidences(scores, data, sample)
        source = f"scores file {scores}"
    else:
        if classifier is not None:
            from parakit.mine.rerank import load_classifier

            clf = load_classifier(str(classifier))
            proba = None
            source = f"classifier {classifier}"
        else:
            from parakit.models.baselines import EmbeddingClassifier, out_of_fold_proba

            turku = data.scheme.name == "turku"
            clf = EmbeddingClassifier(
                baseline_model, "turku3" if turku else "labels", backend, seed=seed
            )
            proba = out_of_fold_proba(clf, data if turku else data.to_binary(), folds, seed)
            source = f"baseline LR on [|u-v|, u*v] of {baseline_model}, {folds}-fold out-of-fold"
        from parakit.mine.rerank import tile_confidences

        neg, pos = tile_confidences(clf, data, proba)
    labels = [p.label for p in data]
    tiles = TileAnalysis().fit(lex, neg, labels)
    rules = SelectionRules(neg_lex_max, neg_conf_min, pos_lex_min, pos_conf_min)
    estimate = estimate_precision(lex, neg, pos, labels, rules)
    estimate_4 = estimate_precision(lex, neg, pos, labels, rules, positive_labels=("4",))
    estimate["positives_label4"] = estimate_4["positives"]
    estimate["scores"] = source
    output.mkdir(parents=True, exist_ok=True)
    tiles.plot(output / "tiles.png", title=f"{sample.name}: negative density per tile")
    if scores is None:  # keep the scores: other rules can then be tried with --scores
        write_confidences(output / "scores.csv", data, neg, pos)
    with atomic_write(output / "tiles.md") as handle:
        handle.write(tiles.to_markdown() + "\n")
    save_json(
        output / "selection.json", _nan_to_null(estimate), indent=2, allow_nan=False
    )  # standard JSON: NaN -> null
    typer.echo(f"scores: {source}\n")
    typer.echo(tiles.to_markdown())
    for name in ("negatives", "positives", "positives_label4"):
        e = estimate[name]
        typer.echo(
            f"\n{name}: {e['selected']} selected ({100 * e['share']:.1f}% of the sample), "
            f"precision {100 * e['precision']:.1f}% "
            f"(95% CI {100 * e['ci95'][0]:.1f}–{100 * e['ci95'][1]:.1f})"
        )


@app.command("select")
def select_cmd(
    candidates: Annotated[
        Path, typer.Argument(help="All candidate pairs, e.g. `parakit mine run` output.")
    ],
    output: Annotated[
        Path, output_option("Safe negatives (JSONL), input of `identify train --negatives`.")
    ],
    classifier: Annotated[Path | None, typer.Option(help="Saved pair classifier.")] = None,
    scores: Annotated[
        Path | None,
        typer.Option(help="CSV with columns neg_conf, pos_conf (one row per pair, same order)."),
    ] = None,
    tiles: Annotated[
        Path | None,
        typer.Option(
            help="Folder from `parakit mine tiles`: its rules (selection.json) and their "
            "precision estimated on the annotated sample."
        ),
    ] = None,
    positives: Annotated[
        Path | None, typer.Option(help="Also write the safe positives here (JSONL).")
    ] = None,
    neg_lex_max: Annotated[
        float | None, typer.Option(help="Default: the rule of --tiles, else 0.1.")
    ] = None,
    neg_conf_min: Annotated[
        float | None, typer.Option(help="Default: the rule of --tiles, else 0.4.")
    ] = None,
    pos_lex_min: Annotated[
        float | None, typer.Option(help="Default: the rule of --tiles, else 0.5.")
    ] = None,
    pos_conf_min: Annotated[
        float | None, typer.Option(help="Default: the rule of --tiles, else 0.998.")
    ] = None,
    fmt: FormatOpt = None,
) -> None:
    """Apply the tile rules to all candidates (T16): safe negatives (and positives)."""
    from dataclasses import asdict

    from parakit.errors import MineError
    from parakit.io import write
    from parakit.io._open import load_json
    from parakit.mine.tiles import SelectionRules, read_confidences, select_pairs

    if (scores is None) == (classifier is None):
        raise MineError(Errors.E805_give_exactly_one_scores)
    if positives is not None and positives.resolve() == output.resolve():
        raise typer.BadParameter(
            f"{positives} is the -o file too: the positives would replace the negatives",
            param_hint="--positives",
        )
    data = read_pairs(candidates, fmt)
    rules = asdict(SelectionRules())
    estimate: dict[str, Any] = {}
    if tiles is not None:
        estimate = load_json(tiles / "selection.json")
        if not isinstance(estimate, dict) or not isinstance(estimate.get("rules"), dict):
            raise MineError(
                Errors.E805_rules_object.format(tiles_selection_json=tiles / "selection.json")
            )
        rules.update({k: float(v) for k, v in estimate["rules"].items() if k in rules})
    given = {"neg_lex_max": neg_lex_max, "neg_conf_min": neg_conf_min,
             "pos_lex_min": pos_lex_min, "pos_conf_min": pos_conf_min}  # fmt: skip
    rules.update({k: v for k, v in given.items() if v is not None})
    if scores is not None:
        neg, pos = read_confidences(scores, data, candidates)
    else:
        from parakit.mine.rerank import load_classifier, tile_confidences

        neg, pos = tile_confidences(load_classifier(str(classifier)), data)
    safe_neg, safe_pos = select_pairs(data, neg, pos, SelectionRules(**rules))
    write(safe_neg, output)
    if positives is not None:
        write(safe_pos, positives)
    share = 100 / max(1, len(data))
    typer.echo(f"rules: {rules}")
    for name, part, path in (("negatives", safe_neg, output), ("positives", safe_pos, positives)):
        line = f"{name}: {len(part)} of {len(data)} candidates ({share * len(part):.1f}%)"
        e = estimate.get(name) or {}
        if e.get("selected"):
            line += (
                f"; precision on the annotated sample {100 * e['precision']:.1f}% "
                f"(95% CI {100 * e['ci95'][0]:.1f}–{100 * e['ci95'][1]:.1f}, n={e['selected']})"
            )
        typer.echo(line + (f" -> {path}" if path is not None else ""))


@app.command("grow")
def grow_cmd(
    batch: Annotated[Path, typer.Argument(help="New batch of grouped sentences.")],
    dataset: Annotated[Path, typer.Option(help="Growing dataset folder.")],
    classifier: Annotated[Path, typer.Option(help="Saved pair classifier.")],
    model: ModelOpt = "offline-minilm",
    backend: BackendOpt = "torch",
    threshold: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Keep pairs with P(paraphrase) >= this.")
    ] = 0.5,
    protected: Annotated[
        Path | None, typer.Option(help="Test pairs whose groups are excluded.")
    ] = None,
    k: Annotated[int, typer.Option("--k", "-k", help="Neighbours per query.")] = 5,
    group_field: str = "group",
    notes: str | None = None,
    precision: PrecisionOpt = "auto",
) -> None:
    """Append a mined, classified, cleaned batch as a new dataset version (M9)."""
    from parakit.mine.growth import GrowingDataset
    from parakit.mine.rerank import load_classifier
    from parakit.vectors.encode import load_encoder

    entry = GrowingDataset(dataset).grow(
        batch,
        load_encoder(check_model(model), backend, precision=precision),
        load_classifier(classifier, **run_settings(precision)),
        threshold=threshold,
        protected=read_pairs(protected) if protected else None,
        k=k,
        group_field=group_field,
        notes=notes,
        progress=show_progress(),
    )
    echo_json(entry)


@app.command("shard")
def shard_cmd(
    workdir: Annotated[Path, typer.Argument(help="A `parakit mine run` work folder.")],
    output: Annotated[Path, output_option("Folder for the index shards.")],
    shards: int = 4,
    workers: Annotated[
        int, typer.Option(help="LocalCluster processes (ignored with --scheduler).")
    ] = 2,
    scheduler: Annotated[
        str | None, typer.Option(help="Address of a running Dask scheduler.")
    ] = None,
    kind: str = "flat",
) -> None:
    """Build sharded FAISS indexes from a mining run's embeddings on a Dask cluster."""
    from parakit.io._open import load_json
    from parakit.mine.distributed import build_sharded_from_embeddings, cluster_client

    settings = load_json(workdir / "job.json")
    with cluster_client(None if scheduler else workers, scheduler) as client:
        result = build_sharded_from_embeddings(
            workdir / "emb",
            output,
            shards,
            client,
            chunk_size=settings["chunk_size"],
            kind=kind,
            progress=show_progress(),
        )
    echo_json({"shards": result})
