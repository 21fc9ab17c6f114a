"""``parakit build ...``: corpus construction commands (T1–T5, T15, J1–J5, M1–M3) and
nearest-neighbour negatives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from parakit.cli.options import (
    FormatOpt,
    PrecisionOpt,
    ReaderOptionsOpt,
    SeedOpt,
    check_model,
    output_option,
    read_pairs,
    show_progress,
)
from parakit.io._open import load_json

from ..errors import Errors

app = typer.Typer(
    add_completion=False,
    help="Corpus construction: align documents, make candidates, sample.",
)


def _aligner(
    low: float, high: float, ngram: int = 4, analyzer: str = "char_wb", max_features: int = 200_000
) -> Any:
    from parakit.build.align import DocumentAligner

    return DocumentAligner(
        low=low, high=high, ngram_range=(ngram, ngram), analyzer=analyzer, max_features=max_features
    )


def _write(pairs: Any, output: Path) -> None:
    from parakit.io import write

    write(pairs, output, format="jsonl")
    skipped = pairs.metadata.get("skipped")
    typer.echo(
        f"wrote {len(pairs)} pairs to {output}" + (f" (skipped: {skipped})" if skipped else "")
    )


@app.command("align")
def align_cmd(
    documents: Annotated[Path, typer.Argument(help="Documents JSONL: id, text, other fields.")],
    output: Annotated[Path, output_option("Output pair set (canonical JSONL).")],
    low: Annotated[float, typer.Option("--low", help="Lowest document cosine kept.")] = 0.0,
    high: Annotated[float, typer.Option("--high", help="Highest document cosine kept.")] = 1.0,
    group_by: Annotated[
        str | None, typer.Option(help="Only pair documents with the same value of this field.")
    ] = None,
    ngram: Annotated[int, typer.Option(help="Character n-gram length.")] = 4,
    analyzer: Annotated[
        str, typer.Option(help="char_wb (inside word boundaries) or char.")
    ] = "char_wb",
    max_features: Annotated[int, typer.Option(help="Vocabulary cap.")] = 200_000,
    source: Annotated[str | None, typer.Option(help="Pair.source of the output.")] = None,
) -> None:
    """Align documents by TF-IDF char n-gram cosine inside [low, high] (T1)."""
    from parakit.build.align import document_pairs_to_pairset
    from parakit.build.documents import SkipCounter, read_documents

    skips = SkipCounter()
    docs = read_documents(documents, skips=skips)
    aligner = _aligner(low, high, ngram, analyzer, max_features)
    key = (lambda d: d.metadata.get(group_by)) if group_by else None
    pairs = aligner.align(docs, key=key, skips=skips)
    _write(
        document_pairs_to_pairset(
            pairs, source=source, metadata={"skipped": skips.as_dict(), "band": [low, high]}
        ),
        output,
    )


@app.command("subtitles")
def subtitles_cmd(
    root: Annotated[
        Path,
        typer.Argument(
            help="Folder ROOT/<title>/<version>.srt (or "
            "ROOT/<series>/<episode>/<version>.srt) or a "
            "manifest JSONL {path, title, series}."
        ),
    ],
    output: Annotated[Path, output_option("Output pair set (canonical JSONL).")],
    low: Annotated[float, typer.Option("--low", help="Lowest document cosine kept.")] = 0.0,
    high: Annotated[float, typer.Option("--high", help="Highest document cosine kept.")] = 1.0,
    segment_minutes: Annotated[float, typer.Option(help="Segment length in minutes.")] = 15.0,
    min_segments: Annotated[int, typer.Option(help="Fewest segments drawn per title.")] = 1,
    max_segments: Annotated[
        int, typer.Option(help="Most segments drawn per title (the paper: one per round).")
    ] = 1,
    max_episodes: Annotated[int, typer.Option(help="Most episodes per series (0: no cap).")] = 10,
    encoding: Annotated[list[str], typer.Option(help="Encodings tried in order (repeatable).")] = (
        "utf-8-sig",
    ),
    strict: Annotated[
        bool, typer.Option(help="Stop at the first bad file instead of skipping it.")
    ] = False,
    seed: SeedOpt = 0,
    first_round: Annotated[
        Path | None,
        typer.Option(
            help="Second round (T2): the first round's output; its (title, segment) pairs are "
            "not drawn again."
        ),
    ] = None,
    yields: Annotated[
        Path | None,
        typer.Option(
            help="Second round: first-round yield per title, highest first; a JSON object "
            "{title: count} or any pair set (the annotation tool's export of the first round, "
            "counted per title)."
        ),
    ] = None,
    max_titles: Annotated[
        int | None, typer.Option(min=1, help="Second round: at most this many titles.")
    ] = None,
) -> None:
    """Alternative subtitle versions in aligned 15-minute segments (T2), first or second round.

    Second round (the paper's): ``--first-round`` excludes the segments already drawn and
    ``--yields`` keeps only the titles that yielded candidates, most productive first.
    """
    from parakit.build.documents import SkipCounter
    from parakit.build.subtitles import (
        build_subtitle_pairs,
        load_versions,
        title_yields,
        used_segments,
    )

    used = used_segments(first_round) if first_round is not None else ()
    priority = title_yields(yields) if yields is not None else None
    skips = SkipCounter()
    versions = load_versions(
        root, encodings=encoding, on_error="raise" if strict else "skip", skips=skips
    )
    pairs = build_subtitle_pairs(
        versions,
        _aligner(low, high),
        segment_minutes,
        min_segments,
        max_segments,
        max_episodes or None,
        seed,
        skips,
        used_segments=used,
        priority=priority,
        max_titles=max_titles,
    )
    if first_round is not None or priority is not None:
        pairs.metadata["round"] = 2
    _write(pairs, output)


@app.command("news")
def news_cmd(
    articles_a: Annotated[
        Path, typer.Argument(help="Articles JSONL of stream A (id, source, time, heading, body).")
    ],
    articles_b: Annotated[Path, typer.Argument(help="Articles JSONL of stream B.")],
    output: Annotated[Path, output_option("Output pair set (canonical JSONL).")],
    headings: Annotated[
        Path | None, typer.Option(help="Also write heading candidates here.")
    ] = None,
    low: Annotated[float, typer.Option("--low", help="Lowest document cosine kept.")] = 0.0,
    high: Annotated[float, typer.Option("--high", help="Highest document cosine kept.")] = 1.0,
    window_days: Annotated[float, typer.Option(help="Sliding window on publication time.")] = 7.0,
    max_per_article: Annotated[
        int | None, typer.Option(help="Keep the n best partners per article of A.")
    ] = None,
    n_headings: Annotated[int | None, typer.Option(help="Top heading candidates kept.")] = None,
    heading_weight: Annotated[float, typer.Option(help="Weight of heading dissimilarity.")] = 1.0,
) -> None:
    """Align news bodies in a time window (T3); rank heading candidates."""
    from parakit.build.documents import SkipCounter
    from parakit.build.news import align_news, heading_candidates, news_body_pairs, read_articles

    skips = SkipCounter()
    a = read_articles(articles_a, skips)
    b = read_articles(articles_b, skips)
    aligned = align_news(a, b, _aligner(low, high), window_days, max_per_article)
    _write(
        news_body_pairs(
            aligned, {"skipped": skips.as_dict(), "band": [low, high], "window_days": window_days}
        ),
        output,
    )
    if headings is not None:
        _write(heading_candidates(aligned, n=n_headings, heading_weight=heading_weight), headings)


@app.command("forum")
def forum_cmd(
    messages: Annotated[
        Path, typer.Argument(help="Thread openers JSONL: id, title, subforum, text.")
    ],
    output: Annotated[Path, output_option("Output pair set (canonical JSONL).")],
    low: Annotated[float, typer.Option("--low", help="Lowest document cosine kept.")] = 0.0,
    high: Annotated[float, typer.Option("--high", help="Highest document cosine kept.")] = 1.0,
    keep_contained: Annotated[
        bool, typer.Option(help="Keep pairs where one message contains the other.")
    ] = False,
) -> None:
    """Forum thread openers with identical title and sub-forum (T4)."""
    from parakit.build.documents import SkipCounter
    from parakit.build.forum import forum_pairs, read_messages

    skips = SkipCounter()
    docs = read_messages(messages, skips)
    _write(forum_pairs(docs, _aligner(low, high), not keep_contained, skips), output)


@app.command("assignments")
def assignments_cmd(
    answers: Annotated[Path, typer.Argument(help="Answers JSONL: id, assignment, text.")],
    output: Annotated[Path, output_option("Output pair set (canonical JSONL).")],
    max_pairs: Annotated[int, typer.Option(help="Most pairs per assignment (0: all).")] = 3,
    key: Annotated[str, typer.Option(help="Field naming the assignment.")] = "assignment",
    seed: SeedOpt = 0,
) -> None:
    """All answer pairs per assignment, at most k per source text (T5)."""
    from parakit.build.assignments import assignment_pairs
    from parakit.build.documents import SkipCounter, read_documents

    skips = SkipCounter()
    docs = read_documents(answers, skips=skips)
    _write(assignment_pairs(docs, max_pairs or None, key, seed=seed, skips=skips), output)


def _translator(spec: str, src: str | None, tgt: str | None, batch_size: int) -> Any:
    from parakit.build.translate import HFTranslator, OpenAITranslator

    if spec.startswith("openai:"):
        # openai:<base_url>#<model>
        rest = spec[len("openai:") :]
        if "#" not in rest:
            raise typer.BadParameter(f"{spec!r}: use openai:<base_url>#<model>")
        base_url, model = rest.rsplit("#", 1)
        return OpenAITranslator(
            model,
            base_url,
            src_lang=src or "English",
            tgt_lang=tgt or "Japanese",
            batch_size=batch_size,
        )
    spec = spec.removeprefix("hf:")
    return HFTranslator(spec, src_lang=src, tgt_lang=tgt, batch_size=batch_size)


@app.command("translate")
def translate_cmd(
    sources: Annotated[Path, typer.Argument(help="Source sentences, one per line.")],
    output: Annotated[Path, output_option("Output pair set (canonical JSONL).")],
    system: Annotated[
        list[str],
        typer.Option(
            "--system",
            help="NAME=FORWARD[,BACKWARD] where a "
            "model is an HF id/path or openai:<base_url>#<model>; "
            "give two or more.",
        ),
    ],
    src_lang: Annotated[
        str | None, typer.Option(help="Source language code/name for multilingual models.")
    ] = None,
    tgt_lang: Annotated[str | None, typer.Option(help="Target language code/name.")] = None,
    cache_dir: Annotated[Path, typer.Option(help="Translation cache (resumable).")] = Path(
        ".parakit-mt-cache"
    ),
    lm: Annotated[
        Path | None,
        typer.Option(help="Language model: KenLM .arpa/.bin or a saved parakit NgramLM."),
    ] = None,
    lm_train: Annotated[
        Path | None,
        typer.Option(help="Train a 5-gram Kneser-Ney NgramLM on this text file instead."),
    ] = None,
    lm_score: Annotated[
        str,
        typer.Option(
            help="How the LM orders sources (J2): sentence (total log probability, the "
            "paper's) or token (per-token mean)."
        ),
    ] = "sentence",
    lm_tokenizer: Annotated[
        str | None,
        typer.Option(
            help="How the LM's training text was tokenised: regex, whitespace (tokenised "
            "beforehand) or fugashi; default: parakit's tokeniser for --src-lang (an ARPA file "
            "of parakit records its own)."
        ),
    ] = None,
    max_sources: Annotated[
        int | None, typer.Option(help="Translate only the most probable n.")
    ] = None,
    batch_size: Annotated[int, typer.Option()] = 16,
    bleu_tokenize: Annotated[
        str, typer.Option(help="SacreBLEU tokenizer of the source language.")
    ] = "13a",
) -> None:
    """MT round-trip candidates: LM order (J2), two systems (J1), back-translation QE (J3)."""
    from parakit.build.documents import read_text_file
    from parakit.build.lm import NgramLM, load_lm
    from parakit.build.translate import MTSystem, mt_candidates

    systems = []
    for spec in system:
        if "=" not in spec:
            raise typer.BadParameter(f"{spec!r}: use NAME=FORWARD[,BACKWARD]")
        name, models = spec.split("=", 1)
        forward, _, backward = models.partition(",")
        systems.append(
            MTSystem(
                name,
                _translator(forward, src_lang, tgt_lang, batch_size),
                _translator(backward, tgt_lang, src_lang, batch_size) if backward else None,
            )
        )
    if lm_score not in ("sentence", "token"):
        raise typer.BadParameter(f"{lm_score!r}: use sentence or token", param_hint="--lm-score")
    texts = [line.strip() for line in read_text_file(sources).splitlines() if line.strip()]
    model = None
    if lm_tokenizer is not None and lm_tokenizer not in ("regex", "whitespace", "fugashi"):
        raise typer.BadParameter(
            f"{lm_tokenizer!r}: use regex, whitespace or fugashi", param_hint="--lm-tokenizer"
        )
    if lm is not None:
        model = load_lm(lm, lang=src_lang, method=lm_tokenizer)
    elif lm_train is not None:
        model = NgramLM(order=5, lang=src_lang, method=lm_tokenizer).fit(
            line for line in read_text_file(lm_train).splitlines() if line.strip()
        )
    pairs = mt_candidates(
        texts,
        systems,
        cache_dir=cache_dir,
        lm=model,
        lm_score=lm_score,
        max_sources=max_sources,
        bleu_tokenize=bleu_tokenize,
        lang=tgt_lang,
    )
    _write(pairs, output)


@app.command("sample")
def sample_cmd(
    pairs: Annotated[Path, typer.Argument(help="Candidate pairs (any readable format).")],
    output: Annotated[Path, output_option("Output pair set (canonical JSONL).")],
    n_per_bin: Annotated[int, typer.Option("--n", help="Pairs per bin.")],
    measure: Annotated[
        str, typer.Option(help="wor (J4, 11 bins), char (T15, 20 bins) or a metadata key.")
    ] = "wor",
    n_bins: Annotated[int | None, typer.Option(help="Bins (default: the measure's).")] = None,
    order_by: Annotated[
        str | None,
        typer.Option(help="Take the highest values of this metadata key per bin (e.g. qe)."),
    ] = None,
    method: Annotated[
        str | None, typer.Option(help="Tokenisation for wor: regex, whitespace, fugashi.")
    ] = None,
    lang: Annotated[str | None, typer.Option()] = None,
    fmt: FormatOpt = None,
    seed: SeedOpt = 0,
) -> None:
    """Balanced sample over similarity bins; prints the per-bin availability report."""
    from parakit.build.sample import balanced_sample

    sample, report = balanced_sample(
        read_pairs(pairs, fmt),
        n_per_bin,
        measure=measure,
        n_bins=n_bins,
        order_by=order_by,
        seed=seed,
        lang=lang,
        method=method,
    )
    typer.echo(report.table())
    if report.short_bins():
        typer.echo(f"short bins (fewer than {n_per_bin} available): {report.short_bins()}")
    _write(sample, output)


@app.command("wor-histogram")
def wor_histogram_cmd(
    pairs: Annotated[Path, typer.Argument(help="Pairs (any readable format).")],
    fmt: FormatOpt = None,
    by: Annotated[
        str | None,
        typer.Option(help="Pair field to split the histogram by (source, label, group) or ''."),
    ] = "source",
    method: Annotated[
        str | None,
        typer.Option(
            help="Tokenisation: regex, whitespace (pre-tokenised text such as TMUP), fugashi."
        ),
    ] = None,
    lang: Annotated[str | None, typer.Option()] = None,
    measure: Annotated[str, typer.Option(help="wor or char.")] = "wor",
    include_exact: Annotated[bool, typer.Option(help="Count exact matches too.")] = False,
) -> None:
    """Histogram of WOR (11 bins, J4) or char cosine (20 bins) per group of pairs."""
    import dataclasses

    from parakit.build.sample import histogram
    from parakit.schema import Pair

    fields = [f.name for f in dataclasses.fields(Pair)]
    if by and by not in fields:
        raise typer.BadParameter(f"{by!r}: use one of {', '.join(fields)} or ''", param_hint="--by")
    ps = read_pairs(pairs, fmt)
    groups: dict[str, Any] = {}
    if by:
        for value in sorted({str(getattr(p, by)) for p in ps}):
            groups[value] = ps.filter(lambda p, v=value: str(getattr(p, by)) == v)
    else:
        groups["all"] = ps
    reports = {
        name: histogram(
            sub, measure=measure, lang=lang, method=method, exclude_exact=not include_exact
        )
        for name, sub in groups.items()
    }
    names = list(reports)
    first = reports[names[0]]
    typer.echo(f"{'bin':>3}  {'range':<12}" + "".join(f"{n:>12}" for n in names))
    for i, (lo, hi) in enumerate(first.edges):
        rng = f"[{lo:.2f},{hi:.2f}" + ("]" if lo == hi else ")")
        typer.echo(f"{i:>3}  {rng:<12}" + "".join(f"{reports[n].available[i]:>12}" for n in names))
    typer.echo(
        f"{'':>3}  {'total':<12}" + "".join(f"{sum(reports[n].available):>12}" for n in names)
    )
    if not include_exact:
        typer.echo(
            f"{'':>3}  {'exact (excl.)':<12}"
            + "".join(f"{reports[n].excluded_exact:>12}" for n in names)
        )


@app.command("negatives")
def negatives_cmd(
    corpus: Annotated[Path, typer.Argument(help="Monolingual sentences, one per line.")],
    output: Annotated[Path, output_option("Output pair set (canonical JSONL).")],
    n: Annotated[int, typer.Option("--n", help="Pairs wanted.")],
    wor_low: Annotated[float | None, typer.Option(help="Lowest WOR kept.")] = None,
    wor_high: Annotated[float | None, typer.Option(help="Highest WOR kept.")] = None,
    method: Annotated[
        str | None, typer.Option(help="Tokenisation: regex, whitespace, fugashi.")
    ] = None,
    lang: Annotated[str | None, typer.Option()] = None,
    seed: SeedOpt = 0,
) -> None:
    """Random sentence pairs as non-trivial negatives, optionally in a WOR band (J5)."""
    from parakit.build.documents import read_text_file
    from parakit.build.negatives import random_negatives

    band = None
    if wor_low is not None or wor_high is not None:
        band = (wor_low or 0.0, wor_high if wor_high is not None else 1.0)
    sentences = [s.strip() for s in read_text_file(corpus).splitlines() if s.strip()]
    pairs = random_negatives(sentences, n, wor_band=band, seed=seed, lang=lang, method=method)
    _write(pairs, output)
    found = pairs.metadata["negatives"]["found"]
    if found < n:
        typer.secho(f"only {found} of {n} pairs found in the band", fg="yellow", err=True)


@app.command("nearest-negatives")
def nearest_negatives_cmd(
    pairs: Annotated[
        Path, typer.Argument(help="Pairs (any supported format), e.g. positives only.")
    ],
    output: Annotated[Path, output_option("Output pair set (canonical JSONL).")],
    fmt: FormatOpt = None,
    label: Annotated[str, typer.Option(help="Label of the negatives.")] = "0",
    keep_pairs: Annotated[
        bool,
        typer.Option(
            "--keep-pairs", help="Write the input pairs too (with the negatives after them)."
        ),
    ] = False,
    pair_label: Annotated[
        str | None,
        typer.Option(help="With --keep-pairs: label for input pairs that have none (e.g. 1)."),
    ] = None,
) -> None:
    """One same-topic negative per pair: text1 with the closest text2 of another pair."""
    from parakit.build.negatives import nearest_negatives
    from parakit.schema import PairSet

    source = read_pairs(pairs, fmt)
    negatives = nearest_negatives(source, negative_label=label, progress=show_progress())
    if keep_pairs:
        kept = [
            p.replace(label=pair_label) if p.label is None and pair_label is not None else p
            for p in source
        ]
        negatives = PairSet([*kept, *negatives], scheme=source.scheme, lang=source.lang)
    _write(negatives, output)


@app.command("social")
def social_cmd(
    posts: Annotated[
        Path, typer.Argument(help="Posts JSONL: group, text, kind (trend|url), topic, time.")
    ],
    output: Annotated[Path, output_option("Output pair set (canonical JSONL).")],
    stage: Annotated[str, typer.Option(help="pilot | follow-up | url-tasks | url.")] = "pilot",
    pilot_counts: Annotated[
        Path | None, typer.Option(help="JSON {group: paraphrases found in the pilot} (follow-up).")
    ] = None,
    url_seeds: Annotated[
        Path | None, typer.Option(help="JSON {group: seed index 0-10 or null} (url).")
    ] = None,
    ranking: Annotated[str, typer.Option(help="unigram (collection) or wordfreq.")] = "unigram",
    lang: Annotated[str, typer.Option()] = "en",
    min_tokens: Annotated[int, typer.Option(help="Drop sentences with fewer word tokens.")] = 5,
    spam: Annotated[
        list[str] | None, typer.Option(help="Spam regex (repeatable; replaces the defaults).")
    ] = None,
    topics: Annotated[
        Path | None, typer.Option(help="JSON {topic: [keywords]} to label groups.")
    ] = None,
    balance: Annotated[
        bool, typer.Option(help="Keep the same number of groups per topic.")
    ] = False,
    seed: SeedOpt = 0,
) -> None:
    """Clean (M2), rank and pair grouped posts (M1, M3)."""
    from parakit.build.documents import SkipCounter
    from parakit.build.social import (
        DEFAULT_SPAM_PATTERNS,
        SentenceCleaner,
        WordfreqModel,
        assign_topics,
        balance_topics,
        clean_groups,
        rank_groups,
        read_group_table,
        read_posts,
        social_candidates,
        url_seed_task,
    )
    from parakit.io.atomic import atomic_write

    skips = SkipCounter()
    groups = read_posts(posts, skips)
    cleaner = SentenceCleaner(
        min_tokens=min_tokens, spam_patterns=tuple(spam) if spam else DEFAULT_SPAM_PATTERNS
    )
    groups = clean_groups(groups, cleaner, skips=skips)
    if topics is not None:
        groups = assign_topics(groups, load_json(topics))
    if balance:
        groups = balance_topics(groups, seed=seed)
    groups = rank_groups(groups, WordfreqModel(lang) if ranking == "wordfreq" else None)
    if stage == "url-tasks":
        with atomic_write(output) as handle:
            for group in groups:
                if group.kind == "url":
                    handle.write(json.dumps(url_seed_task(group), ensure_ascii=False) + "\n")
        typer.echo(f"wrote URL seed tasks to {output}")
        return
    counts = read_group_table(pilot_counts, "a count >= 0") if pilot_counts else None
    seeds = read_group_table(url_seeds, "a seed index 0-10 or null") if url_seeds else None
    pairs = social_candidates(groups, stage, pilot_counts=counts, url_seeds=seeds, seed=seed)
    pairs.metadata["skipped"] = skips.as_dict()
    _write(pairs, output)


@app.command("knn")
def knn_cmd(
    sentences: Annotated[
        Path, typer.Argument(help="JSONL {text, source} or one sentence per line.")
    ],
    output: Annotated[Path, output_option("Output folder.")],
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            help="sentence-transformers model, HF encoder (id or path), offline-minilm or "
            "offline-mpnet.",
        ),
    ],
    backend: Annotated[str, typer.Option(help="Encoder backend: torch | onnx.")] = "torch",
    k: Annotated[int, typer.Option(help="Neighbours per sentence.")] = 5,
    n_per_bin: Annotated[int, typer.Option("--n", help="Sample size per similarity bin.")] = 100,
    n_bins: Annotated[int, typer.Option()] = 20,
    chunk_size: Annotated[int, typer.Option(help="Sentences per chunk (bounds memory).")] = 10_000,
    index_kind: Annotated[
        str, typer.Option(help="Vector index: auto (exact up to 100K) | flat | ivf | hnsw | ivfpq.")
    ] = "auto",
    metric: Annotated[
        str, typer.Option(help="ip (cosine) | l2 (the paper's Euclidean, unnormalised vectors).")
    ] = "ip",
    batch_size: Annotated[int, typer.Option()] = 64,
    seed: SeedOpt = 0,
    precision: PrecisionOpt = "auto",
) -> None:
    """kNN candidates within each source + stratified sample (T15): ``mine run
    --same-source``, then a sample over char n-gram similarity bins."""
    import shutil

    from parakit.build.sample import sample_file
    from parakit.io import write
    from parakit.mine.mining import mine
    from parakit.vectors.encode import load_encoder

    encoder = load_encoder(
        check_model(model),
        backend,
        batch_size=batch_size,
        normalize=metric != "l2",
        precision=precision,
    )
    candidates = output / "candidates.jsonl"
    result = mine(
        sentences,
        output / "work",
        encoder,
        output=candidates,
        k=k,
        same_source=True,
        index_kind=index_kind,
        metric=metric,
        chunk_size=chunk_size,
        overwrite=True,
    )
    sample, report = sample_file(candidates, n_per_bin, "char", n_bins, seed, chunk_size)
    write(sample, output / "sample.jsonl", format="jsonl")
    shutil.rmtree(output / "work")
    typer.echo(
        f"{result.n_sentences} sentences -> {result.n_candidates} candidate pairs "
        f"({candidates}); sample {len(sample)} pairs ({output / 'sample.jsonl'})"
    )
    typer.echo(report.table())


@app.command("suggest")
def suggest_cmd(
    inputs: Annotated[
        list[Path],
        typer.Argument(
            help="A corpus with documents (canonical JSONL, Turku JSON + texts file...: every "
            "document pair its spans point into), or two plain text files (one document pair)."
        ),
    ],
    output: Annotated[Path, output_option("Suggestions (canonical JSONL, one pair each).")],
    fmt: FormatOpt = None,
    options: ReaderOptionsOpt = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help="Sentence encoder for the embedding similarity (offline-minilm, HF id or "
            "folder); default: lexical similarity only.",
        ),
    ] = None,
    backend: Annotated[str, typer.Option(help="Encoder backend: torch | onnx.")] = "torch",
    limit: Annotated[
        int | None,
        typer.Option(
            help="Suggestions per document pair (default: every non-overlapping one); above "
            "that count the overlapping ones follow."
        ),
    ] = None,
    max_window: Annotated[int, typer.Option(help="Sentences per passage: 1..N.")] = 3,
    band: Annotated[int, typer.Option(help="Farthest distance from the alignment path.")] = 2,
    alignment: Annotated[
        bool, typer.Option(help="Monotone-alignment prior (documents in parallel).")
    ] = True,
    nms: Annotated[bool, typer.Option(help="Suppress overlapping suggestions.")] = True,
    lang: Annotated[str | None, typer.Option(help="Language (ja/zh: CJK sentence rules).")] = None,
    evaluate: Annotated[
        bool,
        typer.Option(
            help="Print the recall/precision of the input's own pairs at 0.5-5 suggestions "
            "per gold pair."
        ),
    ] = False,
    precision: PrecisionOpt = "auto",
) -> None:
    """Suggest aligned passage pairs for extraction, best first, per document pair."""
    from parakit.build.documents import read_text_file
    from parakit.build.suggest import PairSuggester, document_pairs_of, evaluate_suggestions
    from parakit.cli.options import progress_bar
    from parakit.io.jsonl import JsonlWriter
    from parakit.schema import Document

    if len(inputs) == 2:
        docs = [Document(path.stem, read_text_file(path)) for path in inputs]
        if docs[0].id == docs[1].id:
            docs = [Document(f"{d.id}-{k}", d.text) for k, d in enumerate(docs, 1)]
        gold, doc_pairs = None, [(docs[0], docs[1])]
    elif len(inputs) == 1:
        gold = read_pairs(inputs[0], fmt, options=options)
        doc_pairs = document_pairs_of(gold)
    else:
        raise typer.BadParameter("give one corpus or two text files", param_hint="INPUTS")
    encoder = None
    if model is not None:
        from parakit.vectors.encode import load_encoder

        encoder = load_encoder(check_model(model), backend, precision=precision)
    suggester = PairSuggester(
        max_window=max_window,
        encoder=encoder,
        alignment=alignment,
        band=band,
        nms=nms,
        lang=lang,
    )
    documents = {d.id: d for pair in doc_pairs for d in pair}
    ranked = {}
    written = 0
    metadata = {"suggest": suggester.signature(), "model": model}
    with JsonlWriter(output, name="suggestions", scheme="binary", metadata=metadata) as out:
        for document in documents.values():
            out.write_document(document)
        with progress_bar() as bar:
            task = bar.add_task("suggest", total=len(doc_pairs))
            for doc1, doc2 in doc_pairs:
                suggestions = suggester.suggest(doc1, doc2)
                if evaluate:
                    ranked[(doc1.id, doc2.id)] = suggestions
                if limit is None:
                    suggestions = [s for s in suggestions if not s.suppressed]
                else:
                    suggestions = suggestions[:limit]
                for rank, suggestion in enumerate(suggestions, 1):
                    out.write_pair(suggestion.to_pair(rank))
                written += len(suggestions)
                bar.advance(task)
    typer.echo(f"wrote {written} suggestions for {len(doc_pairs)} document pairs to {output}")
    if evaluate and gold is not None:
        figures = evaluate_suggestions(ranked, gold)
        typer.echo(f"gold pairs: {int(figures['gold'])}")
        typer.echo("budget  recall  precision")
        for budget in (0.5, 1, 2, 3, 5):
            typer.echo(
                f"{budget:>5g}x  {figures[f'recall@{budget:g}x']:6.3f}  "
                f"{figures[f'precision@{budget:g}x']:9.3f}"
            )


@app.command("expert-batches")
def expert_batches_cmd(
    corpus: Annotated[Path, typer.Argument(help="Labelled pairs (any readable format).")],
    output: Annotated[Path, output_option("Unlabelled expert batch (canonical JSONL).")],
    n_seeds: Annotated[int, typer.Option(min=1, help="Seed sentences per cluster.")] = 2,
    max_members: Annotated[
        int, typer.Option(min=1, help="Other members per cluster paired with each seed.")
    ] = 30,
    clusters: Annotated[
        int | None, typer.Option(min=1, help="Only the largest N clusters (default: all).")
    ] = None,
    min_size: Annotated[int, typer.Option(min=2, help="Smallest cluster used.")] = 2,
    reading: Annotated[
        str | None, typer.Option(help="Binary reading of the labels (Turku: loose or strict).")
    ] = None,
    fmt: FormatOpt = None,
    seed: SeedOpt = 0,
    per_group: Annotated[
        bool,
        typer.Option(
            help="Cluster inside each group (trend or URL: the pairs' group) and take its "
            "largest cluster, as MultiPIT did; --no-per-group clusters the whole corpus."
        ),
    ] = True,
) -> None:
    """Expert annotation batches (M5): clusters of mutual paraphrases (transitive closure of
    the positive pairs, e.g. the output of `identify predict`), the largest of each trend or
    URL group, each seed sentence against up to --max-members other members."""
    from parakit.annotate.clusters import expert_batches, group_clusters, paraphrase_clusters
    from parakit.errors import DataFormatError, ParakitError

    pairs = read_pairs(corpus, fmt)
    found: list[Any]
    if per_group:
        lacking = next((p for p in pairs if p.group is None), None)
        if lacking is not None:
            raise DataFormatError(
                Errors.E502_pair_group_trend_url.format(lacking_id=lacking.id),
                path=corpus,
                field="group",
            )
        found = group_clusters(pairs, reading=reading, min_size=min_size)
    else:
        found = paraphrase_clusters(pairs, reading=reading, min_size=min_size)
    if not found:  # say why: no paraphrase at all is not "clusters too small"
        positive = sum(b == 1 for b in pairs.binary_labels(reading))
        raise ParakitError(
            Errors.E501_no_cluster_size.format(n=len(pairs), positive=positive, min_size=min_size)
        )
    batch = expert_batches(
        found, n_seeds=n_seeds, max_members=max_members, n_clusters=clusters, seed=seed
    )
    sizes = [len(c[1] if per_group else c) for c in (found[:clusters] if clusters else found)]
    batch.metadata["clusters"] = {"n": len(sizes), "sizes": sizes[:20]}
    typer.echo(
        f"{len(found)} clusters of >= {min_size} statements"
        + (" (the largest of each group)" if per_group else "")
        + f"; batch from {len(sizes)}"
    )
    if not len(batch):
        raise ParakitError(
            Errors.E501_cluster_more_seeds.format(
                n_seeds=n_seeds, max_sizes_default_0=max(sizes, default=0)
            )
        )
    _write(batch, output)
