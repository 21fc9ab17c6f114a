"""The bundled example sets: small inputs every guide of ``docs/`` works on, shipped with the
package so a reader runs the guides without fabricating files.

``parakit examples`` lists the sets and writes one to a folder; in Python::

    from parakit.examples import load_example, write_example_set

    pairs = load_example()                  # the example corpus: 25 Turku-labelled pairs
    write_example_set("splits", "inputs/")  # corpus.jsonl and dated.jsonl
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from parakit.io import read, write
from parakit.io.atomic import atomic_write
from parakit.schema import PairSet

from ..errors import Errors


def example_path() -> Path:
    """Path of the bundled example corpus (canonical JSONL)."""
    return Path(str(resources.files("parakit") / "examples" / "corpus.jsonl"))


def load_example() -> PairSet:
    """The bundled example corpus."""
    return read(example_path())


#: the bundled example sets: the inputs a guide of docs/ works on, each file with what it is
EXAMPLE_SETS: dict[str, dict[str, str]] = {
    "annotate": {
        "candidates.jsonl": "the example corpus: 25 labelled statement pairs with their documents",
        "docpairs.jsonl": "its document pairs (text1/text2 = whole documents) for extraction",
        "corpus.jsonl": "the example pairs with the judgments of two annotators, ann1 and ann2",
        "mturk.csv": "crowd judgments: 6 workers on every pair, 2 gold pairs, 1 careless worker",
        "ratings.csv": "5-point ratings of 20 items by 3 raters (item, annotator, label)",
    },
    "build": {
        "corpus.jsonl": "the example corpus: its documents and gold statement pairs",
        "docs.jsonl": "the example's documents of two sites (id, text, site) for align",
        "yle.jsonl": "one news stream (id, source, time, heading, body)",
        "hs.jsonl": "the other news stream, the same stories",
        "subs/film-one/first.srt": "two films, two subtitle versions each",
        "subs/film-one/second.srt": "",
        "subs/film-two/first.srt": "",
        "subs/film-two/second.srt": "",
        "openers.jsonl": "three forum thread openers asking the same question",
        "answers.jsonl": "four answers to one assignment",
        "a.txt": "one story of the example as a text file",
        "b.txt": "the same story by the other site",
        "posts.jsonl": "social media posts grouped by trend or URL (group, kind, text)",
        "counts.json": "paraphrases found per group in a pilot round",
        "seeds.json": "seed posts per URL group",
    },
    "splits": {
        "corpus.jsonl": "the example corpus: 25 Turku-labelled pairs of 12 news documents",
        "dated.jsonl": "the same pairs, each with a time (ISO-8601), for the time split",
    },
}


#: the files of the sets that are the bundled example corpus itself
_THE_EXAMPLE = {
    ("annotate", "candidates.jsonl"),
    ("build", "corpus.jsonl"),
    ("splits", "corpus.jsonl"),
}


def write_example_set(name: str, folder: str | Path) -> list[Path]:
    """Write the bundled example set ``name`` (:data:`EXAMPLE_SETS`) into ``folder``, each file
    atomically; returns the files written.

    Raises:
        ParakitError: E113 an unknown set.
    """
    from parakit.errors import ParakitError

    if name not in EXAMPLE_SETS:
        raise ParakitError(
            Errors.E113_example_set_sets.format(
                name=name, example_sets=", ".join(sorted(EXAMPLE_SETS))
            )
        )
    target = Path(folder)
    written = []
    for file in EXAMPLE_SETS[name]:
        path = target / file
        if (name, file) in _THE_EXAMPLE:  # the example corpus itself, not a second copy of it
            write(load_example(), path)
        else:
            source = resources.files("parakit") / "examples" / name / file
            with atomic_write(path) as handle:
                handle.write(source.read_text(encoding="utf-8"))
        written.append(path)
    return written


__all__ = ["EXAMPLE_SETS", "example_path", "load_example", "write_example_set"]
