"""Extraction assist (issue 16): recall of Turku gold pairs by ranked passage-pair suggestions.

For each of the 17 document pairs of the Swedish test set (``sv-test.json`` + ``sv-texts.json.gz``)
:class:`parakit.build.suggest.PairSuggester` ranks candidate passage pairs; a gold pair (one of
the 1,067 with document context) is found when one suggestion covers at least half of the
characters of each of its spans. Recall and precision are reported at budgets of 0.5, 1, 2, 3
and 5 suggestions per gold pair of each document pair, for a reference (plain char 2-4-gram
TF-IDF over 1-3-sentence windows, with and without overlap suppression) and an ablation of the
signals.

Run (a few minutes on 2 CPU cores; ``--no-embedding`` skips the MiniLM configurations)::

    PYTHONPATH=src HF_HUB_OFFLINE=1 python benchmarks/extraction_assist.py \\
        --data ../shared/data/turku --json /tmp/extraction_assist.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

BUDGETS = (0.5, 1.0, 2.0, 3.0, 5.0)


def load(data: Path):
    import parakit

    pairs = parakit.read(data / "sv-test.json", texts=data / "sv-texts.json.gz")
    from parakit.build.suggest import document_pairs_of

    return pairs, document_pairs_of(pairs)


def configurations(encoder) -> dict[str, dict]:
    """Name -> PairSuggester options, from the reference up to the full method."""
    no_copy = {"copy_penalty": 0.0, "copy_threshold": None}
    configs = {
        "reference: lexical, by similarity": {**no_copy, "alignment": False, "nms": False},
        "lexical + NMS": {**no_copy, "alignment": False},
        "lexical + near-copy + NMS (no alignment)": {"alignment": False},
        "lexical + alignment": {**no_copy, "nms": False},
        "lexical + alignment + NMS": no_copy,
        "lexical + alignment + copy + NMS": {"near_copy_start": None},
        "lexical + alignment + near-copy + NMS (default)": {},
        "default, 1-sentence windows": {"max_window": 1},
        "default, 1-2-sentence windows": {"max_window": 2},
    }
    if encoder is not None:
        emb = {"encoder": encoder, "lexical_weight": 0.0}
        configs.update(
            {
                "embedding + near-copy + NMS (no alignment)": {**emb, "alignment": False},
                "embedding + alignment + near-copy + NMS": emb,
                "lexical + embedding + alignment + near-copy + NMS": {"encoder": encoder},
            }
        )
    return configs


def run(pairs, doc_pairs, options: dict, limit_factor: float = 5.0) -> tuple[dict, float]:
    from parakit.build.suggest import PairSuggester, evaluate_suggestions

    gold_count: dict[tuple[str, str], int] = {}
    for pair in pairs:
        if pair.span1 is not None and pair.span2 is not None:
            key = (pair.span1.doc_id, pair.span2.doc_id)
            gold_count[key] = gold_count.get(key, 0) + 1
    suggester = PairSuggester(**options)
    start = time.perf_counter()
    ranked = {}
    for doc1, doc2 in doc_pairs:
        limit = round(limit_factor * gold_count[(doc1.id, doc2.id)]) + 1
        ranked[(doc1.id, doc2.id)] = suggester.suggest(doc1, doc2, limit=limit)
    seconds = time.perf_counter() - start
    return evaluate_suggestions(ranked, pairs, budgets=BUDGETS), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/turku"))
    parser.add_argument("--json", type=Path, default=None, help="write all figures here")
    parser.add_argument("--no-embedding", action="store_true", help="lexical configurations only")
    parser.add_argument("--only", default=None, help="run the configurations containing this")
    parser.add_argument("--skip", action="append", default=[], help="skip those containing this")
    args = parser.parse_args()

    pairs, doc_pairs = load(args.data)
    encoder = None
    if not args.no_embedding:
        try:
            from parakit.vectors.encode import load_encoder
        except ImportError:  # before the vectors layer
            from parakit.vectors.encode import load_encoder
        encoder = load_encoder("offline-minilm", backend="torch")
    results = {}
    header = "| configuration | " + " | ".join(f"R@{b:g}x" for b in BUDGETS) + " | P@2x | s |"
    print(header)
    print("|" + "---|" * (len(BUDGETS) + 3))
    for name, options in configurations(encoder).items():
        if (args.only and args.only not in name) or any(x in name for x in args.skip):
            continue
        figures, seconds = run(pairs, doc_pairs, options)
        results[name] = {**figures, "seconds": seconds}
        cells = " | ".join(f"{100 * figures[f'recall@{b:g}x']:.1f}" for b in BUDGETS)
        print(f"| {name} | {cells} | {100 * figures['precision@2x']:.1f} | {seconds:.0f} |")
    if args.json:
        info = {
            "machine": platform.platform(),
            "cpus": os.cpu_count(),
            "load": os.getloadavg(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "document_pairs": len(doc_pairs),
            "results": results,
        }
        args.json.write_text(json.dumps(info, indent=1))


if __name__ == "__main__":
    main()
