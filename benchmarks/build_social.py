"""Benchmark: M2 cleaning + M1 grouping + ranking + M3 pilot pairing on all MultiPIT auto
sentences.

MultiPIT auto ships pairs without their trend/URL groups, so groups are rebuilt as connected
components of the pairs' sentences (:func:`parakit.build.social.groups_from_pairs`).

Usage:
    PYTHONPATH=src python benchmarks/build_social.py [--data /work/shared/data]
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

from parakit.build.documents import SkipCounter
from parakit.build.social import (
    clean_groups,
    groups_from_pairs,
    rank_groups,
    social_candidates,
)
from parakit.io import read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=os.environ.get("PARAKIT_DATA", "/work/shared/data"))
    args = parser.parse_args()
    path = Path(args.data) / "multipit" / "auto-train.csv"
    rows = []

    def stage(name: str, n: int, start: float) -> None:
        seconds = time.perf_counter() - start
        rows.append((name, n, seconds, n / seconds if seconds else float("inf")))

    t = time.perf_counter()
    pairs = read(path, format="multipit")
    stage("read pairs", len(pairs), t)
    t = time.perf_counter()
    groups = groups_from_pairs(pairs)
    n_sentences = sum(len(g.sentences) for g in groups)
    stage("group (connected components)", n_sentences, t)
    skips = SkipCounter()
    t = time.perf_counter()
    cleaned = clean_groups(groups, skips=skips)
    stage("clean (M2)", n_sentences, t)
    n_clean = sum(len(g.sentences) for g in cleaned)
    t = time.perf_counter()
    ranked = rank_groups(cleaned)
    stage("rank (unigram avg word prob)", n_clean, t)
    t = time.perf_counter()
    pilot = social_candidates(ranked, "pilot", seed=0)
    stage("pilot pairs (M3)", len(ranked), t)
    total = sum(r[2] for r in rows)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"MultiPIT auto-train: {len(pairs)} pairs, {n_sentences} unique sentences, "
        f"{len(groups)} groups"
    )
    print(
        f"after cleaning: {n_clean} sentences in {len(cleaned)} groups (>= 2 sentences); "
        f"dropped: {skips.as_dict()}"
    )
    print(f"pilot candidate pairs: {len(pilot)}")
    print()
    print(f"| {'stage':<30} | {'items':>8} | {'seconds':>8} | {'items/s':>10} |")
    print(f"|{'-' * 32}|{'-' * 10}|{'-' * 10}|{'-' * 12}|")
    for name, n, seconds, rate in rows:
        print(f"| {name:<30} | {n:>8} | {seconds:>8.2f} | {rate:>10.0f} |")
    print(
        f"| {'total (sentences/s)':<30} | {n_sentences:>8} | {total:>8.2f} | "
        f"{n_sentences / total:>10.0f} |"
    )
    print(f"\npeak RSS: {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
