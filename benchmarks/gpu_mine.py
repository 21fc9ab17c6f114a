"""GPU workers for the 400M plan (docs/mining.md): what one GPU does per mining stage.

Two stages of ``mine run`` decide a 400M-sentence plan: embedding with a transformer, and the
all-pairs nearest-neighbour search. On a GPU both are dense matrix work, so this measures:

* ``embed``: sentences per second of a MiniLM-L6 encoder (the offline teacher's architecture,
  384 dimensions) and of a BERT-base encoder (the Turku paper's FinBERT architecture, 768
  dimensions), bf16, batches of length-sorted sentences, tokenisation on the CPU included,
  mean pooling and normalisation as sentence-transformers does. The weights are drawn from
  the architecture's config (no weights travel to a lent GPU machine): a forward pass costs
  the same whatever the weights hold.
* ``exact-knn``: every vector's ``k`` nearest neighbours by exact inner product over all
  vectors (a self-join), fp16 matrix products in blocks with a running top-``k``: no index to
  build and recall 1 by construction, up to fp16 rounding, which is measured against an fp32
  search on ``--check`` rows (recall@k, and counted with ties within 0.001). The vectors are
  clustered (``n / 20`` centres plus noise, normalised): the timing does not depend on them.
  A run longer than ``--budget`` seconds stops after whole query blocks and projects the rest
  from their rate (every block is the same work).

Run on a GPU machine, from the repository root (``--device cuda``; ``--device cpu`` with
small sizes checks the script)::

    python benchmarks/gpu_mine.py --device cuda --sentences S.txt --tokenizer MINILM_FOLDER \\
        --ledger-folder OUT

One ``mine-gpu`` ledger unit per measurement, written to ``--ledger-folder`` (copied into
``benchmarks/results/`` afterwards, with the machine's own description).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def bench_embed(args: argparse.Namespace, ledger: Any) -> None:
    """Sentences per second of each encoder architecture on ``args.device``."""
    import torch
    from ledger import UnitClock
    from transformers import AutoModel, AutoTokenizer, BertConfig

    texts = Path(args.sentences).read_text(encoding="utf-8").splitlines()[: args.n_sentences]
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    minilm = BertConfig.from_pretrained(args.tokenizer)
    base = BertConfig(
        vocab_size=minilm.vocab_size, hidden_size=768, num_hidden_layers=12,
        num_attention_heads=12, intermediate_size=3072, max_position_embeddings=512,
    )  # fmt: skip
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # as sentence-transformers
    for name, config in (("MiniLM-L6 (384)", minilm), ("BERT-base (768)", base)):
        torch.manual_seed(0)
        model = AutoModel.from_config(config).to(args.device, dtype=torch.bfloat16).eval()
        for batch_size in args.batch_sizes:

            def run(rows: list[int], model: Any = model, batch_size: int = batch_size) -> float:
                tokenize = 0.0
                with torch.inference_mode():
                    for start in range(0, len(rows), batch_size):
                        tic = time.perf_counter()
                        batch = tokenizer(
                            [texts[i] for i in rows[start : start + batch_size]],
                            padding=True, truncation=True, max_length=256, return_tensors="pt",
                        )  # fmt: skip
                        tokenize += time.perf_counter() - tic
                        batch = {k: v.to(args.device, non_blocking=True) for k, v in batch.items()}
                        hidden = model(**batch).last_hidden_state
                        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
                        torch.nn.functional.normalize(pooled.float(), dim=1).cpu()
                _sync(args.device)
                return tokenize

            run(order[: batch_size * 4])  # warm-up: kernels chosen, memory pools filled
            clock = UnitClock()
            tic = time.perf_counter()
            tokenize = run(order)
            seconds = time.perf_counter() - tic
            unit = {"stage": "embed", "encoder": name, "precision": "bf16",
                    "batch_size": batch_size, "n": len(texts)}  # fmt: skip
            ledger.record(
                unit,
                {"seconds": round(seconds, 2), "sentences_per_s": round(len(texts) / seconds),
                 "tokenize_s": round(tokenize, 2), **_gpu_memory(args.device)},
                clock=clock.read(),
            )  # fmt: skip
        del model


def _gpu_memory(device: str) -> dict[str, Any]:
    import torch

    if not device.startswith("cuda"):
        return {}
    peak = torch.cuda.max_memory_allocated() / 2**30
    torch.cuda.reset_peak_memory_stats()
    return {"peak_gpu_gb": round(peak, 2)}


def clustered_vectors(n: int, dim: int, device: str, seed: int = 0) -> Any:
    """``n`` normalised fp16 vectors around ``n / 20`` random centres (noise 0.3 a coordinate
    of a unit-variance centre): every vector has near neighbours, as in a real collection."""
    import torch

    generator = torch.Generator(device=device).manual_seed(seed)
    centres = torch.randn(max(1, n // 20), dim, device=device, generator=generator)
    out = torch.empty(n, dim, device=device, dtype=torch.float16)
    for start in range(0, n, 1_000_000):  # in slices: the float32 draft of 10M is 10 GB
        stop = min(n, start + 1_000_000)
        pick = torch.randint(len(centres), (stop - start,), device=device, generator=generator)
        noise = torch.randn(stop - start, dim, device=device, generator=generator)
        out[start:stop] = torch.nn.functional.normalize(centres[pick] + 0.3 * noise, dim=1)
    return out


def exact_knn(x: Any, k: int, rows: Any, qblock: int, cblock: int) -> tuple[Any, Any]:
    """The ``k`` best (scores, ids) over all of ``x`` for the query rows ``rows`` (a range
    of consecutive rows), by blocks of ``qblock`` queries × ``cblock`` vectors: one fp16
    product per block, its top ``k`` merged into the running best."""
    import torch

    best_s = torch.full((len(rows), k), -torch.inf, device=x.device)
    best_i = torch.full((len(rows), k), -1, device=x.device, dtype=torch.int64)
    for q0 in range(0, len(rows), qblock):
        q = x[rows[q0 : q0 + qblock].to(x.device)]
        s_run, i_run = best_s[q0 : q0 + qblock], best_i[q0 : q0 + qblock]
        for c0 in range(0, len(x), cblock):
            scores, ids = (q @ x[c0 : c0 + cblock].T).topk(k, dim=1)
            both_s = torch.cat([s_run, scores.float()], dim=1)
            both_i = torch.cat([i_run, ids + c0], dim=1)
            s_run, pick = both_s.topk(k, dim=1)
            i_run = both_i.gather(1, pick)
        best_s[q0 : q0 + qblock], best_i[q0 : q0 + qblock] = s_run, i_run
    return best_s, best_i


def bench_knn(args: argparse.Namespace, ledger: Any) -> None:
    """Exact self-join top ``k`` of ``n`` clustered vectors, fp16, for each (n, dim)."""
    import torch
    from ledger import UnitClock

    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False  # fp32 sums
    for spec in args.knn:
        n, dim = (int(v) for v in spec.split("x"))
        x = clustered_vectors(n, dim, args.device)
        k = args.k
        exact_knn(x, k, torch.arange(min(n, args.qblock)), args.qblock, args.cblock)  # warm-up
        _sync(args.device)
        clock = UnitClock()
        tic = time.perf_counter()
        done = 0
        while done < n and time.perf_counter() - tic < args.budget:
            stop = min(n, done + args.qblock * 4)
            exact_knn(x, k, torch.arange(done, stop), args.qblock, args.cblock)
            _sync(args.device)
            done = stop
        seconds = time.perf_counter() - tic
        # fp16 rounding against an fp32 search, on --check rows
        check = torch.randperm(n, generator=torch.Generator().manual_seed(7))[: args.check]
        found = exact_knn(x, k, check, args.qblock, args.cblock)[1].cpu()
        xf = x.float()
        truth_s, truth_i = exact_knn(xf, k, check, args.qblock, args.cblock)
        truth_i = truth_i.cpu()
        recall = sum(
            len(set(a) & set(b)) for a, b in zip(found.tolist(), truth_i.tolist(), strict=True)
        ) / (len(check) * k)
        # a found neighbour is right when its fp32 score is within 0.001 of the k-th best
        found_s = (xf[check].unsqueeze(1) * xf[found.to(x.device)]).sum(-1)
        tie_recall = float((found_s >= truth_s[:, -1:] - 1e-3).float().mean())
        del xf
        unit = {"stage": "exact-knn", "n": n, "dim": dim, "k": k, "dtype": "fp16",
                "qblock": args.qblock, "cblock": args.cblock}  # fmt: skip
        ledger.record(
            unit,
            {"rows_searched": done, "seconds": round(seconds, 1),
             "ms_per_query": round(1000 * seconds / done, 5),
             "projected_s": round(seconds * n / done, 1),
             "tflops": round(2 * done * n * dim / seconds / 1e12, 1),
             "recall_fp16_vs_fp32": round(recall, 5), "recall_ties": round(tie_recall, 5),
             **_gpu_memory(args.device)},
            clock=clock.read(),
        )  # fmt: skip
        del x
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()


def main() -> None:
    from ledger import Ledger

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", required=True, help="cuda on a GPU machine; cpu to check it")
    p.add_argument("--sentences", required=True, help="one sentence per line")
    p.add_argument("--n-sentences", type=int, default=200_000)
    p.add_argument("--tokenizer", required=True, help="the MiniLM folder (tokenizer + config)")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[512])
    p.add_argument("--knn", nargs="+", default=["1000000x256", "10000000x256", "1000000x768"])
    p.add_argument("--k", type=int, default=6, help="mining's k 5 + the sentence itself")
    p.add_argument("--qblock", type=int, default=16_384)
    p.add_argument("--cblock", type=int, default=1_048_576)
    p.add_argument("--budget", type=float, default=240.0, help="seconds per k-NN unit")
    p.add_argument("--check", type=int, default=1_000)
    p.add_argument("--steps", nargs="+", default=["embed", "knn"])
    p.add_argument("--ledger-folder", required=True)
    args = p.parse_args()
    ledger = Ledger("mine-gpu", folder=Path(args.ledger_folder))
    if "embed" in args.steps:
        bench_embed(args, ledger)
    if "knn" in args.steps:
        bench_knn(args, ledger)


if __name__ == "__main__":
    main()
