"""Demo step of corpus construction: a WOR-balanced sample and random negatives."""

from __future__ import annotations

import pathlib

from parakit.schema import PairSet


def demo_step(workdir: pathlib.Path, pairs: PairSet) -> str:
    """Balanced WOR sample (J4) and random high-overlap negatives (J5) of the example pairs."""
    from parakit.build.negatives import random_negatives
    from parakit.build.sample import balanced_sample
    from parakit.io import write

    sample, report = balanced_sample(pairs, n_per_bin=3, measure="wor", seed=0)
    write(sample, workdir / "build-sample.jsonl", format="jsonl")
    texts1, texts2 = pairs.texts()
    sentences = list(dict.fromkeys([*texts1, *texts2]))
    lines = [
        "## Corpus construction (parakit.build)",
        "",
        f"WOR-balanced sample, 3 per bin, of {len(pairs)} pairs: {len(sample)} pairs "
        f"(short bins: {report.short_bins()}).",
        "",
        "```",
        report.table(),
        "```",
    ]
    if len(sentences) >= 2:
        negatives = random_negatives(
            sentences, n=5, wor_band=(0.3, 0.99), seed=0, exclude=zip(texts1, texts2, strict=True)
        )
        write(negatives, workdir / "build-negatives.jsonl", format="jsonl")
        lines += ["", f"Random negatives with WOR in [0.3, 0.99]: {len(negatives)} found."]
        lines += [
            f"- {p.text1!r} / {p.text2!r} (WOR {p.metadata['wor']:.2f})"
            for p in list(negatives)[:3]
        ]
    return "\n".join(lines) + "\n"
