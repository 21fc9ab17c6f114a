"""Lexical similarity throughput on 1M pairs (issue: foundation).

Pairs come from the MultiPIT automatic training set (136K tweet pairs); they are cycled with a
rotation of the second column until N pairs exist, so every pair is a real tweet pair or a
real tweet against another real tweet. Each method runs in its own subprocess pinned to one
core, so its peak resident memory is its own.

    python benchmarks/lexical_similarity.py              # 1,000,000 pairs
    python benchmarks/lexical_similarity.py --pairs 200000

Prints a Markdown table: pairs per CPU-second of the one core (CPU time, so a busy machine
does not distort it; wall time and the load average are printed too) and peak memory (RSS, and
above the loaded input).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

DATA = Path(os.environ.get("PARAKIT_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
METHODS = ("wor-regex", "wor-whitespace", "char-tf-2-4", "char-tfidf-2-4", "sklearn-tf-2-4")


def load_pairs(n: int) -> tuple[list[str], list[str]]:
    from parakit.io import read

    texts1, texts2 = read(DATA / "multipit" / "auto-train.csv").texts()
    base = len(texts1)
    out1, out2 = [], []
    shift = 0
    while len(out1) < n:
        take = min(base, n - len(out1))
        out1.extend(texts1[:take])
        out2.extend(texts2[(i + shift) % base] for i in range(take))
        shift += 7919  # a prime rotation: later cycles pair different tweets
    return out1, out2


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(method: str, n: int) -> dict:
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core
    texts1, texts2 = load_pairs(n)
    base = rss_mb()
    start = time.perf_counter()
    cpu_start = time.process_time()
    if method == "wor-regex":
        from parakit.text import word_overlap_rates

        values = word_overlap_rates(texts1, texts2)
    elif method == "wor-whitespace":
        from parakit.text import word_overlap_rates

        values = word_overlap_rates(texts1, texts2, method="whitespace")
    elif method in ("char-tf-2-4", "char-tfidf-2-4"):
        from parakit.text import CharNgramSimilarity

        sim = CharNgramSimilarity(ngram_range=(2, 4), use_idf=method == "char-tfidf-2-4")
        if sim.use_idf:
            sim.fit([*texts1, *texts2])
        values = sim.score(texts1, texts2)
    elif method == "sklearn-tf-2-4":  # reference: scikit-learn vectoriser + row-wise dot
        import numpy as np
        from sklearn.feature_extraction.text import TfidfVectorizer

        vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), use_idf=False)
        a = vec.fit_transform(texts1)
        b = vec.transform(texts2)
        values = np.asarray(a.multiply(b).sum(1)).ravel()
    else:
        raise SystemExit(f"unknown method {method}")
    seconds = time.perf_counter() - start
    return {
        "method": method,
        "pairs": n,
        "seconds": seconds,
        "pairs_per_s": n / seconds,
        "peak_rss_mb": rss_mb(),
        "above_input_mb": rss_mb() - base,
        "mean": float(sum(values) / len(values)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.pairs)))
        return
    rows = []
    for method in args.methods.split(","):
        env = {
            **os.environ,
            "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
        }
        result = subprocess.run(
            [sys.executable, __file__, "--one", method, "--pairs", str(args.pairs)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        rows.append(json.loads(result.stdout.strip().splitlines()[-1]))
        print(f"done {method}", file=sys.stderr)
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; one core per method"
    )
    print("| method | pairs | seconds | pairs/s | peak RSS (MB) | above input (MB) | mean |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['method']} | {r['pairs']:,} | {r['seconds']:.1f} | {r['pairs_per_s']:,.0f} "
            f"| {r['peak_rss_mb']:.0f} | {r['above_input_mb']:.0f} | {r['mean']:.4f} |"
        )


if __name__ == "__main__":
    main()
