"""T13 on Finnish with a thesaurus induced from the corpus itself (issue 20, item 8).

The six pattern shares among the positive pairs (labels 3–4) of opus-pb-dev:

* without synonyms (no Finnish thesaurus is packaged);
* with the induced thesaurus at the default threshold (a substitution seen in >= 2 label-4
  pairs);
* with every substitution seen once (>= 1): in-sample, so each pair whose only change is its own
  substitution counts as pattern (5) — an upper bound;
* the same, cross-fitted: 5 seeded folds, each fold's pairs judged with the thesaurus induced
  from the other four folds (what a thesaurus from this corpus says about unseen pairs).

Run (about a minute on one core)::

    PYTHONPATH=src python benchmarks/t13_induced_synonyms.py --data ../shared/data
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from parakit.analysis.patterns import PATTERN_TITLES, PATTERNS, PatternDetector, pattern_shares
from parakit.analysis.synonyms import induce_synonyms
from parakit.io import read
from parakit.schema import PairSet


def _positive_patterns(pairs: PairSet, synonyms) -> dict[str, str]:
    binary = pairs.binary_labels()
    positives = [p for p, b in zip(pairs, binary, strict=True) if b == 1]
    detector = PatternDetector("fi", synonyms=synonyms)
    return {p.id: detector.detect(p.text1, p.text2) for p in positives}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    pairs = read(args.data / "turku" / "opus-pb-dev.json")
    columns: dict[str, dict[str, float]] = {}
    sizes: dict[str, int] = {}
    columns["no synonyms"] = pattern_shares(list(_positive_patterns(pairs, None).values()))
    for min_count in (2, 1):
        resource = induce_synonyms(pairs, "fi", min_count=min_count)
        name = f"induced >= {min_count}"
        sizes[name] = len(resource.counts)
        columns[name] = pattern_shares(list(_positive_patterns(pairs, resource).values()))
    fold = np.random.default_rng(args.seed).integers(0, args.folds, size=len(pairs))
    judged: dict[str, str] = {}
    entries = []
    for k in range(args.folds):
        train = pairs.derive([p for p, f in zip(pairs, fold, strict=True) if f != k])
        held = pairs.derive([p for p, f in zip(pairs, fold, strict=True) if f == k])
        resource = induce_synonyms(train, "fi", min_count=1)
        entries.append(len(resource.counts))
        judged.update(_positive_patterns(held, resource))
    name = f"induced >= 1, {args.folds}-fold cross-fitted"
    sizes[name] = round(float(np.mean(entries)))
    columns[name] = pattern_shares(list(judged.values()))
    print("| pattern | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for pattern in PATTERNS:
        cells = [f"{100 * shares[pattern]:.2f} %" for shares in columns.values()]
        print(f"| {PATTERN_TITLES[pattern]} | " + " | ".join(cells) + " |")
    six = [p for p in PATTERNS if p not in ("identical", "surface_only", "other")]
    cells = [f"{100 * sum(s[p] for p in six):.2f} %" for s in columns.values()]
    print("| (1)–(6) together | " + " | ".join(cells) + " |")
    print("| thesaurus entries | " + " | ".join(str(sizes.get(c, 0)) for c in columns) + " |")


if __name__ == "__main__":
    main()
