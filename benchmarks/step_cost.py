"""What one cross-encoder training step costs, before and after issue 27, part by part.

A step of the MultiPIT recipe (32 pairs, max length 64 or 128) on MultiPIT expert train, for
each encoder, in two variants measured in turns on the same machine:

* ``before``: batches in random order, each tokenised in the collate call and padded to its
  longest pair (the cross-encoder's training until issue 27);
* ``after``: every pair tokenised once before training, batches drawn by ``transformers``'
  length-grouped sampler (what ``CrossEncoderClassifier(group_by_length=True)`` trains with).

The padded tokens per epoch are counted exactly over the whole epoch of each sampler; the
seconds are measured on ``--steps`` batches spread evenly over the epoch (so the grouped
sampler's long and short batches are both sampled), split into tokenise/pad, forward,
backward and optimiser step. The epoch estimate is the mean step x steps per epoch. Each
(encoder, max length, variant) is one unit of the ledger ``benchmarks/results/step-cost.jsonl``
with the CPU's flags and the load; a rerun skips the units the ledger holds::

    python benchmarks/step_cost.py                              # both encoders, 64 and 128
    python benchmarks/step_cost.py --models offline-minilm --lengths 64 --steps 4
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from identify import DATA  # noqa: E402
from ledger import Ledger, UnitClock, cpu_seconds  # noqa: E402

from parakit.io import read  # noqa: E402


def epoch_batches(lengths: list[int], batch: int, grouped: bool, seed: int) -> list[list[int]]:
    """The batches of one epoch: a seeded random order, or ``transformers``'
    ``LengthGroupedSampler`` over the same lengths."""
    import torch
    from transformers.trainer_pt_utils import LengthGroupedSampler

    generator = torch.Generator().manual_seed(seed)
    if grouped:
        order = list(LengthGroupedSampler(batch, lengths=lengths, generator=generator))
    else:
        order = torch.randperm(len(lengths), generator=generator).tolist()
    return [order[i : i + batch] for i in range(0, len(order), batch)]


def measure(args: argparse.Namespace, model_name: str, max_length: int, ledger: Ledger) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from parakit.offline import resolve_model

    variants = ("before", "after")
    base = {"model": model_name, "max_length": max_length, "batch": args.batch}
    if all(ledger.has({**base, "variant": v}) for v in variants):
        print(f"{model_name} @ {max_length}: in the ledger, skipped", flush=True)
        return
    train = read(DATA / "multipit" / "expert-train.csv", format="multipit")
    texts1, texts2 = (list(t) for t in train.texts())
    labels = torch.tensor([int(p.label) for p in train])
    source = resolve_model(model_name)
    tokenizer = AutoTokenizer.from_pretrained(source)
    start = time.perf_counter()
    tokenised = tokenizer(texts1, texts2, truncation=True, max_length=max_length)
    tokenise_once_s = time.perf_counter() - start
    features = [{k: tokenised[k][i] for k in tokenised} for i in range(len(texts1))]
    lengths = [len(f["input_ids"]) for f in features]

    torch.manual_seed(args.seed)
    network = AutoModelForSequenceClassification.from_pretrained(source, num_labels=2)
    network.train()
    optimiser = torch.optim.AdamW(network.parameters(), lr=2e-5, weight_decay=0.01)

    def collate(batch: list[int], variant: str) -> dict[str, Any]:
        if variant == "before":
            return tokenizer(
                [texts1[i] for i in batch],
                [texts2[i] for i in batch],
                truncation=True,
                max_length=max_length,
                padding=True,
                return_tensors="pt",
            )
        return tokenizer.pad([features[i] for i in batch], padding=True, return_tensors="pt")

    plans = {v: epoch_batches(lengths, args.batch, v == "after", args.seed) for v in variants}
    padded = {v: sum(len(b) * max(lengths[i] for i in b) for b in plans[v]) for v in variants}
    n_steps = len(plans["before"])
    picks = [round(k * (n_steps - 1) / max(1, args.steps - 1)) for k in range(args.steps)]
    parts: dict[str, dict[str, list[float]]] = {
        v: {p: [] for p in ("collate", "forward", "backward", "optimiser", "tokens")}
        for v in variants
    }
    clocks = {v: 0.0 for v in variants}
    cpu = {v: 0.0 for v in variants}
    load = UnitClock()
    # one warm-up step (allocator, kernels), then the variants in turns on the same positions
    warm = collate(plans["before"][0], "before")
    network(**warm, labels=labels[plans["before"][0]]).loss.backward()
    optimiser.zero_grad()
    for position in picks:
        for variant in variants:
            batch = plans[variant][position]
            c0, t0 = cpu_seconds(), time.perf_counter()
            encoded = collate(batch, variant)
            t1 = time.perf_counter()
            loss = network(**encoded, labels=labels[batch]).loss
            t2 = time.perf_counter()
            loss.backward()
            t3 = time.perf_counter()
            torch.nn.utils.clip_grad_norm_(network.parameters(), 1.0)
            optimiser.step()
            optimiser.zero_grad()
            t4 = time.perf_counter()
            record = parts[variant]
            record["collate"].append(t1 - t0)
            record["forward"].append(t2 - t1)
            record["backward"].append(t3 - t2)
            record["optimiser"].append(t4 - t3)
            record["tokens"].append(float(encoded["input_ids"].numel()))
            clocks[variant] += t4 - t0
            cpu[variant] += cpu_seconds() - c0
    reading = load.read()
    for variant in variants:
        unit = {**base, "variant": variant}
        record = parts[variant]
        step = clocks[variant] / len(picks)
        metrics = {
            "s_per_step": round(step, 3),
            "s_per_epoch": round(step * n_steps, 1),
            "collate_s": round(statistics.mean(record["collate"]), 4),
            "forward_s": round(statistics.mean(record["forward"]), 3),
            "backward_s": round(statistics.mean(record["backward"]), 3),
            "optimiser_s": round(statistics.mean(record["optimiser"]), 3),
            "padded_tokens_per_epoch": padded[variant],
            "real_tokens_per_epoch": sum(lengths),
        }
        if variant == "after":
            metrics["tokenise_once_s"] = round(tokenise_once_s, 2)
        if not ledger.has(unit):
            ledger.record(
                unit,
                metrics,
                config={
                    "steps_measured": len(picks),
                    "steps_per_epoch": n_steps,
                    "seed": args.seed,
                },
                clock={
                    "wall_s": round(clocks[variant], 1),
                    "cpu_s": round(cpu[variant], 1),
                    "load": reading["load"],
                },
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["offline-minilm", "offline-mpnet"])
    parser.add_argument("--lengths", type=int, nargs="+", default=[64, 128])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=6, help="steps measured per variant")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--ledger", default="step-cost")
    parser.add_argument("--commit", action="store_true", help="git-commit the ledger per unit")
    args = parser.parse_args()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    ledger = Ledger(args.ledger, commit=args.commit)
    for model_name in args.models:
        for max_length in args.lengths:
            measure(args, model_name, max_length, ledger)


if __name__ == "__main__":
    main()
