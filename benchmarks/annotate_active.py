"""Benchmark: how many labels uncertainty ordering saves (model in the loop, simulated).

The pool is MultiPIT expert-train (4,458 pairs), the dev set expert-val (555). Each run
starts from a seeded random seed set, then "annotates" the pool in batches, retraining the
model between batches, in one of two orders:

* ``random``: the pool in a seeded random order (what ``annotate assign`` does without a
  model);
* ``uncertainty``: the unlabelled pairs whose P(paraphrase) is nearest 0.5 first (what
  ``annotate attach-model --order uncertainty`` does for single annotation, with the model
  re-attached after each batch).

After each batch the dev F1 of the paraphrase class is measured; the table gives the labels
each order needs to first reach a dev F1 (mean over seeds; targets are shares of the F1 with
the whole pool labelled), and how many uncertainty saves.

The model is ``embedding-lr`` on the offline all-MiniLM-L6-v2 (``offline-minilm``): every
distinct text is encoded once up front and the classifier reads the cached vectors, so a
retraining is a logistic regression on ``[|u - v|, u * v]`` (seconds for the whole run);
``--model tfidf`` uses the TF-IDF cosine threshold model instead (no encoder).

Usage:
    HF_HUB_OFFLINE=1 PYTHONPATH=src python benchmarks/annotate_active.py \
        --seeds 0 1 2 --seed-size 50 --batch 50 --budget 1500
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "multipit"


class CachedEncoder:
    """An encoder object for ``EmbeddingClassifier``: vectors looked up, never recomputed."""

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts])


def _encoder(
    model: str, texts: list[str], threads: int, cache: Path | None = None
) -> tuple[Any, float]:
    """The cached encoder (and CPU seconds spent encoding), or None for TF-IDF; ``cache``
    keeps the vectors in an ``.npy`` file between runs (same texts, same order)."""
    if model != "embedding-lr":
        return None, 0.0
    unique = list(dict.fromkeys(texts))
    if cache is not None and cache.exists():
        vectors = np.load(cache)
        if len(vectors) == len(unique):
            return CachedEncoder(dict(zip(unique, vectors, strict=True))), 0.0
    import torch

    torch.set_num_threads(threads)
    from parakit.offline import resolve_model
    from parakit.vectors.encode import load_encoder

    start = time.process_time()
    encoder = load_encoder(resolve_model("offline-minilm"), "torch", batch_size=128)
    vectors = np.asarray(encoder.encode(unique), dtype=np.float32)
    if cache is not None:
        np.save(cache, vectors)
    return CachedEncoder(dict(zip(unique, vectors, strict=True))), time.process_time() - start


def _fit(model: str, encoder: Any, pairs: Any) -> Any:
    from parakit.models.base import make_model

    if model == "embedding-lr":
        return make_model("embedding-lr", model_name_or_path=encoder).fit(pairs)
    return make_model(model).fit(pairs)


def _scores(model: Any, dev: Any, gold: np.ndarray) -> tuple[float, float]:
    """Dev F1 of the paraphrase class (P >= 0.5, the model's own decision) and average
    precision (the ranking, free of the threshold)."""
    from sklearn.metrics import average_precision_score, f1_score

    from parakit.mine.rerank import paraphrase_proba

    p = paraphrase_proba(model, dev)
    return float(f1_score(gold, p >= 0.5)), float(average_precision_score(gold, p))


def simulate(
    pool: Any,
    dev: Any,
    order: str,
    *,
    model: str,
    encoder: Any,
    seed: int,
    seed_size: int,
    batch: int,
    budget: int,
) -> list[tuple[int, float, float]]:
    """``(labels, dev F1)`` after the seed set and after every batch, up to ``budget``."""
    from parakit.mine.rerank import paraphrase_proba

    gold_pool = np.array([p.label == "1" for p in pool])
    gold_dev = np.array([p.label == "1" for p in dev])
    rng = np.random.default_rng(seed)
    shuffled = rng.permutation(len(pool))
    # a seed set with both classes (a classifier needs two), drawn in the seeded order
    labelled = list(shuffled[:seed_size])
    while len(set(gold_pool[labelled])) < 2:
        labelled.append(shuffled[len(labelled)])
    rest = [i for i in shuffled if i not in set(labelled)]
    curve = []
    while True:
        clf = _fit(model, encoder, _subset(pool, labelled))
        curve.append((len(labelled), *_scores(clf, dev, gold_dev)))
        if len(labelled) >= budget or not rest:
            return curve
        if order == "uncertainty":
            p = paraphrase_proba(clf, _subset(pool, rest))
            ranked = np.argsort(np.abs(p - 0.5), kind="stable")  # ties: the seeded order
            take = [rest[i] for i in ranked[:batch]]
        else:
            take = rest[:batch]
        chosen = set(take)
        labelled += take
        rest = [i for i in rest if i not in chosen]


def _subset(pairs: Any, rows: list[int]) -> Any:
    return pairs.derive(pairs.pairs[i] for i in rows)


def labels_to_reach(
    curve: list[tuple[int, float, float]], target: float, hold: bool = False
) -> int | None:
    """The first label count whose dev F1 is at least ``target`` (None: never); with
    ``hold``, the first from which every later batch stays at or above it (F1 on 555 dev
    pairs moves by a few points between batches, so a first touch can be luck)."""
    for k, (n, *_) in enumerate(curve):
        later = [point[1] for point in curve[k:]]
        if (min(later) if hold else later[0]) >= target:
            return n
    return None


def _table(
    curves: dict[str, list[list[tuple[int, float, float]]]],
    full: float,
    targets: list[float],
    budget: int,
    hold: bool,
) -> None:
    """The Markdown table of labels needed per target (mean and per seed)."""
    what = "stays at or above from then on" if hold else "first reaches"
    print(f"\nlabels until dev F1 {what}:")
    print(
        "\n| dev F1 ≥ (share of full) | random: labels (per seed) "
        "| uncertainty: labels (per seed) | saved |"
    )
    print("|---|---|---|---|")
    for share in targets:
        target = share * full
        row = {
            order: [labels_to_reach(c, target, hold) for c in runs]
            for order, runs in curves.items()
        }
        cells = []
        for order in ("random", "uncertainty"):
            got = row[order]
            mean = f"{np.mean(got):.0f}" if all(n is not None for n in got) else f"> {budget}"
            cells.append(f"{mean} ({', '.join('–' if n is None else str(n) for n in got)})")
        saved = "–"
        if all(n is not None for n in row["random"] + row["uncertainty"]):
            r, u = np.mean(row["random"]), np.mean(row["uncertainty"])
            saved = f"{r - u:.0f} ({(r - u) / r:.0%})"
        print(f"| {target:.3f} ({share:.0%}) | {cells[0]} | {cells[1]} | {saved} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--model", default="embedding-lr", choices=["embedding-lr", "tfidf", "bow"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--seed-size", type=int, default=50)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--budget", type=int, default=1500)
    parser.add_argument(
        "--targets",
        type=float,
        nargs="+",
        default=[0.90, 0.95, 0.98, 1.0],
        help="dev F1 targets as fractions of the F1 with the whole pool labelled",
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path, help="write every curve here")
    parser.add_argument("--cache", type=Path, help="keep the MiniLM vectors here (.npy)")
    args = parser.parse_args()

    from parakit.io import read

    pool = read(args.data / "expert-train.csv", format="multipit")
    dev = read(args.data / "expert-val.csv", format="multipit")
    texts = [t for pairs in (pool, dev) for p in pairs for t in (p.text1, p.text2)]
    encoder, encode_s = _encoder(args.model, texts, args.threads, args.cache)
    start = time.process_time()
    gold = np.array([p.label == "1" for p in dev])
    full, full_ap = _scores(_fit(args.model, encoder, pool), dev, gold)
    curves: dict[str, list[list[tuple[int, float, float]]]] = {"random": [], "uncertainty": []}
    for seed in args.seeds:
        for order in curves:
            curves[order].append(
                simulate(
                    pool,
                    dev,
                    order,
                    model=args.model,
                    encoder=encoder,
                    seed=seed,
                    seed_size=args.seed_size,
                    batch=args.batch,
                    budget=args.budget,
                )
            )
    sim_s = time.process_time() - start
    print(
        f"model {args.model}; pool {len(pool)}, dev {len(dev)}; seeds {args.seeds}; seed set "
        f"{args.seed_size}, batches of {args.batch}, up to {args.budget} labels; dev F1 with the "
        f"whole pool labelled: {full:.3f} (AP {full_ap:.3f}); CPU: encoding {encode_s:.0f} s, "
        f"simulation {sim_s:.0f} s"
    )
    for hold in (False, True):
        _table(curves, full, args.targets, args.budget, hold)
    print("\nmean over seeds by labels:\n")
    print("| labels | F1 random | F1 uncertainty | AP random | AP uncertainty |")
    print("|---:|---:|---:|---:|---:|")
    counts = [point[0] for point in curves["random"][0]]
    for k, n in enumerate(counts):
        if k % max(1, len(counts) // 10) == 0 or k == len(counts) - 1:
            f1 = {o: np.mean([c[k][1] for c in runs]) for o, runs in curves.items()}
            ap = {o: np.mean([c[k][2] for c in runs]) for o, runs in curves.items()}
            print(
                f"| {n} | {f1['random']:.3f} | {f1['uncertainty']:.3f} "
                f"| {ap['random']:.3f} | {ap['uncertainty']:.3f} |"
            )
    if args.json:
        args.json.write_text(
            json.dumps({"full_f1": full, "full_ap": full_ap, "curves": curves}, indent=1)
        )


if __name__ == "__main__":
    main()
