"""``parakit report ...``: performance profiles, corpus statistics and T13 pattern shares.

Examples::

    parakit report profile test.jsonl --predictions preds.csv -o reports/profile
    parakit report profile test.jsonl -m models/ce -m offline-minilm --dev dev.jsonl -o reports/p
    parakit report profile data/etpc -O mrpc=msr_paraphrase_train.txt \\
        --phenomena etpc --predictions preds.csv -o reports/etpc
    parakit report corpus sv=sv-test.json opus=opus-pb-dev.json -o reports/compare
    parakit report patterns sv-test.json --lang sv
    parakit report corpus opus-pb-dev.json --verb-test voikko -o reports/opus
    parakit report thesaurus opus-pb-dev.json -o fi-induced.tsv --min-count 1
    parakit report patterns opus-pb-dev.json --synonyms fi-induced.tsv
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from parakit.cli.identify import ModelDevOpt, PositiveOpt, ThresholdOpt, load_any_model
from parakit.cli.options import (
    FormatOpt,
    ReaderOptionsOpt,
    SeedOpt,
    output_option,
    progress_bar,
    read_pairs,
)

app = typer.Typer(add_completion=False, help="Performance profiles and corpus reports.")


def _synonyms(value: str) -> Any:
    return None if value.lower() == "none" else value


_SYNONYMS_HELP = (
    "auto (shipped thesaurus) | none | PATH (synonym file or MyThes .dat) | induced (single-word "
    "substitutions of the corpus's own label-4 pairs, seen in >= --min-count pairs)"
)
MinCountOpt = Annotated[
    int, typer.Option("--min-count", min=1, help="With --synonyms induced: fewest pairs.")
]


def _synonym_resource(value: str, pairs: Any, lang: str | None, min_count: int) -> Any:
    """``--synonyms``, with ``induced`` built from ``pairs`` (T13 without a thesaurus)."""
    if value.lower() != "induced":
        return _synonyms(value)
    from parakit.analysis.synonyms import induce_synonyms

    resource = induce_synonyms(pairs, lang, min_count=min_count)
    typer.echo(f"{resource.name}: {len(resource.counts)} single-word substitutions")
    return resource


@app.command("profile")
def profile_command(
    test: Annotated[str, typer.Argument(help="Test set (any format parakit.io reads).")],
    output: Annotated[Path, output_option("Output path without suffix (.html, .json, .md).")],
    predictions: Annotated[
        list[Path] | None,
        typer.Option(
            "--predictions",
            "-p",
            help="Predictions file(s): CSV/TSV (long: id,system,prediction; "
            "wide: id + one column per system) or JSONL. Repeatable.",
        ),
    ] = None,
    model: Annotated[
        list[Path] | None,
        typer.Option(
            "--model",
            "-m",
            help="A model to profile as one more system (named after it): a parakit model "
            "folder, a CrossEncoder, a SentenceTransformer (with --dev or --threshold) or a "
            "sequence classifier. Repeatable.",
        ),
    ] = None,
    dev: ModelDevOpt = None,
    positive: PositiveOpt = None,
    threshold: ThresholdOpt = None,
    phenomena: Annotated[
        str, typer.Option(help="auto | etpc | turku | automatic | surface | patterns")
    ] = "auto",
    fmt: FormatOpt = None,
    option: ReaderOptionsOpt = None,
    lang: Annotated[str | None, typer.Option(help="Language (default: the set's).")] = None,
    synonyms: Annotated[
        str,
        typer.Option(help="auto (shipped thesaurus) | none | PATH (synonym file or MyThes .dat)"),
    ] = "auto",
    reading: Annotated[str | None, typer.Option(help="Binary reading of the labels.")] = None,
    min_support: Annotated[int, typer.Option(help="Fewest pairs for a test.")] = 5,
    alpha: Annotated[float, typer.Option(help="Nemenyi significance level.")] = 0.05,
    title: Annotated[str | None, typer.Option(help="Report title.")] = None,
    png: Annotated[bool, typer.Option("--png", help="Also write the figures as PNG.")] = False,
) -> None:
    """Performance profile of one or more systems on a test set with phenomena (Q2–Q6)."""
    import numpy as np

    from parakit.analysis.phenomena import get_phenomena
    from parakit.analysis.profile import load_predictions, profile
    from parakit.analysis.report import profile_report

    if not predictions and not model:
        raise typer.BadParameter(
            "give predictions files (-p) or models (-m) to profile", param_hint="--predictions"
        )
    with progress_bar() as progress:
        task = progress.add_task("reading the test set", total=4)
        pairs = read_pairs(test, fmt, options=option, status=False)
        if phenomena == "etpc" or (
            phenomena == "auto" and any(p.metadata.get("phenomena_annotated") for p in pairs)
        ):
            pairs = pairs.filter(lambda p: bool(p.metadata.get("phenomena_annotated")))
        binary = pairs.binary_labels(reading)
        pairs = pairs.derive([p for p, b in zip(pairs, binary, strict=True) if b is not None])
        y = np.array([b for b in binary if b is not None], dtype=int)
        ids = [p.id for p in pairs]
        texts = {p.id: (p.text1, p.text2) for p in pairs}  # the predictions' own?
        preds: dict[str, np.ndarray] = {}
        for path in predictions or []:
            preds.update(load_predictions(path, ids=ids, texts=texts, against=test))
        for name in model or []:
            classifier = load_any_model(
                name, dev=dev, positive=positive, threshold=threshold, reading=reading
            )
            p_para = classifier.paraphrase_proba(pairs, reading=reading)
            preds[Path(str(name)).name] = (np.asarray(p_para) >= 0.5).astype(int)
        options = {} if phenomena in ("etpc", "turku", "auto") else {"lang": lang}
        if phenomena in ("automatic", "patterns"):
            options["synonyms"] = _synonyms(synonyms)
        if (
            phenomena == "auto"
            and pairs.scheme.name != "turku"
            and not any(p.metadata.get("phenomena_annotated") for p in pairs)
        ):
            options = {"lang": lang, "synonyms": _synonyms(synonyms)}
        progress.update(task, advance=1, description=f"phenomena ({phenomena})")
        table = get_phenomena(pairs, phenomena, **options)
        progress.update(task, advance=1, description="profile")
        prof = profile(y, preds, table, min_support=min_support, alpha=alpha)
        progress.update(task, advance=1, description="report and figures")
        paths = profile_report(
            prof,
            output,
            title=title,
            save_png=png,
            description=f"Test set <code>{Path(test).name}</code>.",
        )
        progress.advance(task)
    for s in prof.systems:
        typer.echo(
            f"{s}: accuracy {prof.overall[s]['accuracy']:.3f}  F1 {prof.overall[s]['f1']:.3f}"
        )
    typer.echo("wrote " + ", ".join(str(p) for p in paths.values()))


@app.command("corpus")
def corpus_command(
    corpora: Annotated[
        list[str], typer.Argument(help="Corpora as PATH or NAME=PATH; several give a comparison.")
    ],
    output: Annotated[Path, output_option("Output path without suffix (.html, .json, .md).")],
    sample_size: Annotated[
        int, typer.Option(min=0, help="Pairs sampled per corpus (0 = all).")
    ] = 12_000,
    seed: SeedOpt = 0,
    fmt: FormatOpt = None,
    option: ReaderOptionsOpt = None,
    synonyms: Annotated[str, typer.Option(help=_SYNONYMS_HELP)] = "auto",
    min_count: MinCountOpt = 2,
    verb_test: Annotated[
        str,
        typer.Option(
            help="Main-verb test of well-formed sentences: none | voikko (Finnish) | "
            "module:function (any tagger: a callable sentence -> bool)."
        ),
    ] = "none",
    title: Annotated[str | None, typer.Option(help="Report title.")] = None,
    png: Annotated[bool, typer.Option("--png", help="Also write the figures as PNG.")] = False,
) -> None:
    """Corpus statistics (T12) of one corpus, or a comparison on equal-size samples."""
    from parakit.analysis.corpus import compare_corpora
    from parakit.analysis.report import corpus_report
    from parakit.analysis.verbs import make_verb_test

    sets = {}
    for spec in corpora:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = Path(spec).stem, spec
        if name in sets:
            raise typer.BadParameter(
                f"two corpora are named {name!r} ({spec}); name each one: NAME=PATH",
                param_hint="CORPORA",
            )
        sets[name] = read_pairs(path, fmt, options=option)
    stats = []
    with progress_bar() as progress:
        task = progress.add_task("corpus statistics", total=len(sets))
        for name, pairs in sets.items():  # compare_corpora, one corpus at a time
            progress.update(task, description=f"corpus statistics: {name}")
            stats.extend(
                compare_corpora(
                    {name: pairs},
                    sample_size=sample_size or None,
                    seed=seed,
                    synonyms=_synonym_resource(synonyms, pairs, pairs.lang, min_count),
                    has_verb=make_verb_test(verb_test, pairs.lang),
                )
            )
            progress.advance(task)
    paths = corpus_report(stats if len(stats) > 1 else stats[0], output, title=title, save_png=png)
    for s in stats:
        m = s.summary()
        typer.echo(
            f"{s.name}: {s.n_pairs} pairs, {m['tokens_per_statement']['mean']:.1f} "
            f"tokens/statement, similarity {m['similarity']['mean']:.2f}"
        )
    typer.echo("wrote " + ", ".join(str(p) for p in paths.values()))


@app.command("patterns")
def patterns_command(
    corpus: Annotated[str, typer.Argument(help="Corpus file.")],
    lang: Annotated[str | None, typer.Option(help="Language (default: the set's).")] = None,
    synonyms: Annotated[str, typer.Option(help=_SYNONYMS_HELP)] = "auto",
    min_count: MinCountOpt = 2,
    all_pairs: Annotated[
        bool, typer.Option("--all-pairs", help="Count all pairs, not only the positives.")
    ] = False,
    fmt: FormatOpt = None,
    option: ReaderOptionsOpt = None,
    output: Annotated[
        Path | None, output_option("Write shares and per-pair patterns as JSON.")
    ] = None,
) -> None:
    """Shares of the six systematic paraphrase patterns of T13 (positive pairs by default)."""

    from parakit.analysis.patterns import PATTERN_TITLES, PatternDetector, pattern_shares
    from parakit.io.atomic import save_json

    pairs = read_pairs(corpus, fmt, options=option)
    lang = lang or pairs.lang
    resource = _synonym_resource(synonyms, pairs, lang, min_count)  # from all label-4 pairs
    if not all_pairs and any(b is not None for b in pairs.binary_labels()):
        pairs = pairs.to_binary().filter(lambda p: p.label == "1")
    detector = PatternDetector(lang, synonyms=resource)
    texts1, texts2 = pairs.texts()
    patterns: list[str] = []
    with progress_bar() as progress:
        task = progress.add_task("T13 patterns", total=len(pairs))
        for start in range(0, len(pairs), 200):
            patterns += detector.detect_many(
                texts1[start : start + 200], texts2[start : start + 200]
            )
            progress.advance(task, len(texts1[start : start + 200]))
    shares = pattern_shares(patterns)
    typer.echo(f"{len(pairs)} pairs; {detector.signature}")
    if not detector.signature["synonym_entries"]:
        why = "--synonyms none" if synonyms.lower() == "none" else f"no thesaurus for {lang!r}"
        typer.echo(
            f"synonyms off ({why}): (5) and (6) cannot be found; give --synonyms PATH (a synonym "
            "file or MyThes .dat) or --synonyms induced"
        )
    for name, share in shares.items():
        typer.echo(f"  {PATTERN_TITLES[name]:<32} {100 * share:6.2f} %")
    if output is not None:
        save_json(
            output,
            {
                "n_pairs": len(pairs),
                "signature": detector.signature,
                "shares": shares,
                "pairs": [{"id": p.id, "pattern": x} for p, x in zip(pairs, patterns, strict=True)],
            },
            ensure_ascii=False,
            indent=1,
        )
        typer.echo(f"wrote {output}")


@app.command("thesaurus")
def thesaurus_command(
    corpus: Annotated[str, typer.Argument(help="Corpus with Turku labels (label 4 is used).")],
    output: Annotated[
        Path, output_option("Thesaurus file for --synonyms PATH (one synonym pair a line).")
    ],
    lang: Annotated[str | None, typer.Option(help="Language (default: the set's).")] = None,
    min_count: Annotated[
        int, typer.Option("--min-count", min=1, help="Fewest label-4 pairs per substitution.")
    ] = 2,
    fmt: FormatOpt = None,
    option: ReaderOptionsOpt = None,
) -> None:
    """Induce a thesaurus from a corpus (T13): single-word substitutions between the two sides
    of label-4 pairs (same position after alignment, different lemma)."""
    from parakit.analysis.synonyms import induce_synonyms, write_thesaurus

    pairs = read_pairs(corpus, fmt, options=option)
    resource = induce_synonyms(pairs, lang or pairs.lang, min_count=min_count)
    write_thesaurus(resource.counts, output, source=Path(corpus).name)
    top = sorted(resource.counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    typer.echo(f"{resource.name}: {len(resource.counts)} single-word substitutions")
    for (a, b), n in top:
        typer.echo(f"  {a} ~ {b}  ({n})")
    typer.echo(f"wrote {output}")
