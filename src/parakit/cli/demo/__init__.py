"""The main job: run every available parakit stage on the bundled example corpus.

``parakit demo -o DIR`` reads the example (news-like document pairs in English, Finnish and
Japanese with labelled statement pairs and their context spans, authored by the project),
verifies the spans, adds lexical similarity, splits it, writes the corpus in every writable
format and a Markdown report. Packages add their own steps by providing
``parakit.<package>.demo.demo_step(workdir, pairs) -> str`` (a Markdown section); the steps run
in the order of the flow.
"""

from __future__ import annotations

import importlib
import logging
import time
from pathlib import Path

from parakit.cli.stages import DEMO_STEPS, module_available
from parakit.describe import describe, render_markdown
from parakit.examples import load_example
from parakit.io import write
from parakit.io.atomic import atomic_write
from parakit.lexical import add_lexical_similarity, mean_by_label
from parakit.schema import PairSet
from parakit.split import random_split

logger = logging.getLogger(__name__)


def write_demo_release(pairs: PairSet, folder: Path, seed: int = 0) -> str:
    """Write the example as a release folder (:func:`parakit.io.release.write_release`) that
    ``datasets.load_dataset(folder)`` and ``parakit.read`` open; returns the
    report's line about it. Splits keep each document's pairs together (``linked_groups``), as
    a release needs; without ``datasets`` the line says what to install instead."""
    from parakit.errors import MissingExtraError
    from parakit.io.release import write_release
    from parakit.split import linked_groups

    split = random_split(
        pairs.map(lambda p: p.replace(split=None)),
        ratios=(0.6, 0.2, 0.2),
        group_by=linked_groups(pairs),
        seed=seed,
    )
    try:
        write_release(
            split,
            folder,
            license="apache-2.0",
            pretty_name="parakit example corpus",
            candidates="Statement pairs of news-like document pairs, written for parakit's "
            "examples in English, Finnish and Japanese.",
        )
    except MissingExtraError as err:  # datasets / huggingface_hub missing: say so, go on
        return f"not written ({err.message})"
    counts = ", ".join(f"{name} {len(part)}" for name, part in split.by_split().items())
    return (
        f"a release folder ({counts} pairs, Parquet per split and a dataset card) that "
        "`datasets.load_dataset('release')` and `parakit info release` open"
    )


def run_demo(out: str | Path, seed: int = 0) -> Path:
    """Run the pipeline on the example; returns the path of the report."""
    from parakit.cli.options import progress_bar

    workdir = Path(out)
    workdir.mkdir(parents=True, exist_ok=True)
    sections: list[str] = ["# parakit demo report", ""]
    steps = [name for name in DEMO_STEPS if module_available(f"parakit.cli.demo.{name}")]
    with progress_bar() as progress:
        task = progress.add_task("demo", total=4 + len(steps))
        pairs = load_example()
        checked = pairs.verify_spans()
        progress.advance(task)

        pairs = add_lexical_similarity(pairs)
        progress.advance(task)

        pairs = random_split(pairs, ratios=(0.6, 0.2, 0.2), seed=seed)
        progress.advance(task)

        write(pairs, workdir / "corpus.jsonl")
        write(pairs, workdir / "corpus.csv")
        turku_log = logging.getLogger("parakit.io.turku")
        previous = turku_log.level
        turku_log.setLevel(logging.ERROR)  # "no language field": the report says it instead
        try:
            write(pairs, workdir / "turku" / "example.json", drop_labels=("1", "x"))
        finally:
            turku_log.setLevel(previous)
        released = write_demo_release(pairs, workdir / "release", seed=seed)
        progress.advance(task)
        sections += [
            "Input: the bundled example corpus "
            f"({len(pairs)} pairs, {len(pairs.documents)} documents, English/Finnish/Japanese);"
            f" {checked} context spans verified against their documents.",
            "",
            render_markdown(describe(pairs)),
            "### Lexical similarity by label",
            "",
            "| label | WOR | char 2–4-gram TF cosine |",
            "|---|---:|---:|",
        ]
        wor = mean_by_label(pairs, "wor")
        char = mean_by_label(pairs, "char_tf_2_4")
        for label in wor:
            sections.append(f"| `{label}` | {wor[label]:.3f} | {char[label]:.3f} |")
        sections += [
            "",
            "Files: `corpus.jsonl` (canonical), `corpus.csv`, "
            "`turku/example.json` + `turku/example-texts.json.gz` (release layout, "
            "labels 1 and x dropped; the layout has no language field, so it reads back as "
            "one language).",
            f"`release/`: {released}",
            "",
        ]
        for name in steps:
            started = time.perf_counter()
            module = importlib.import_module(f"parakit.cli.demo.{name}")
            try:
                section = module.demo_step(workdir, pairs)
            except ImportError as err:  # an optional extra is not installed
                section = f"## {name}\n\nskipped: {err}\n"
            sections.append(section.rstrip() + "\n")
            logger.info("demo step %s took %.1fs", name, time.perf_counter() - started)
            progress.advance(task)
    report = workdir / "report.md"
    with atomic_write(report) as handle:
        handle.write("\n".join(sections))
    return report
