"""Mining benchmarks: embedding speed and agreement, end-to-end mining, search at 1M vectors.

Run from the repository root (HF_HUB_OFFLINE=1, the offline MiniLM installed)::

    python benchmarks/mine.py embed  --n 2000            # ST vs ONNX fp32 vs ONNX int8
    python benchmarks/mine.py e2e    --n 100000 --backend onnx-int8 --workdir out/bench-e2e
    python benchmarks/mine.py search --workdir out/bench-e2e --target 1000000
    python benchmarks/mine.py memory --workdir out/bench-e2e   # peak RSS vs N (subprocesses)

Each prints a Markdown table; figures go to docs/benchmarks.md#embeddings-and-mining.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
DATA = Path(os.environ.get("PARAKIT_DATA", ROOT.parent / "shared" / "data"))
if not DATA.exists():
    DATA = Path("/work/shared/data")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def multipit_sentences(n: int) -> list[str]:
    """The first ``n`` unique sentences of the MultiPIT auto train file (both columns)."""
    seen: dict[str, None] = {}
    with open(DATA / "multipit" / "auto-train.csv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            for key in ("sentence1", "sentence2"):
                text = (row[key] or "").strip()
                if text:
                    seen.setdefault(text, None)
            if len(seen) >= n:
                break
    return list(seen)[:n]


def recall_at(found: np.ndarray, truth: np.ndarray) -> float:
    k = truth.shape[1]
    return float(np.mean([len(set(a) & set(b)) / k for a, b in zip(found, truth, strict=True)]))


def bench_embed(args: argparse.Namespace) -> None:
    from parakit.vectors.encode import OnnxEncoder, SentenceEncoder, resolve_model
    from parakit.vectors.index import VectorIndex

    texts = multipit_sentences(args.n)
    model = resolve_model("offline-minilm")
    rows = []
    reference = None
    for name, encoder in (
        ("sentence-transformers fp32 (batch 64)", SentenceEncoder(model, batch_size=64)),
        ("ONNX Runtime fp32, length-sorted", OnnxEncoder(model, quantize=False, batch_size=64)),
        ("ONNX Runtime int8, length-sorted", OnnxEncoder(model, quantize=True, batch_size=64)),
    ):
        encoder.encode(texts[:64])  # load / export outside the timing
        start = time.perf_counter()
        cpu0 = time.process_time()
        vectors = encoder.encode(texts)
        wall = time.perf_counter() - start
        cpu = time.process_time() - cpu0
        if reference is None:
            reference = vectors
            truth = (
                VectorIndex(kind="flat")
                .build(lambda v=vectors: iter([v]))
                .search(vectors, 6)[1][:, 1:]
            )
        cosine = (vectors * reference).sum(axis=1)
        found = (
            VectorIndex(kind="flat").build(lambda v=vectors: iter([v])).search(vectors, 6)[1][:, 1:]
        )
        rows.append(
            (
                name,
                len(texts) / wall,
                len(texts) / cpu,
                cosine.mean(),
                cosine.min(),
                recall_at(found, truth),
            )
        )
    print(
        f"\nEmbedding {len(texts)} MultiPIT auto sentences with all-MiniLM-L6-v2 "
        f"(load avg {os.getloadavg()[0]:.1f})\n"
    )
    print(
        "| encoder | sentences/s (wall) | sentences/s per CPU-second | mean cos to fp32 | "
        "min cos | recall@5 vs fp32 neighbours |"
    )
    print("|---|---|---|---|---|---|")
    for name, wall_rate, cpu_rate, mean_cos, min_cos, rec in rows:
        print(
            f"| {name} | {wall_rate:.0f} | {cpu_rate:.0f} | {mean_cos:.4f} | {min_cos:.4f} "
            f"| {rec:.3f} |"
        )


def bench_e2e(args: argparse.Namespace) -> None:
    from parakit.vectors.encode import load_encoder
    from parakit.mine.mining import mine

    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    collection = work / "collection.txt"
    if not collection.exists():
        collection.write_text(
            "\n".join(t.replace("\n", " ") for t in multipit_sentences(args.n)) + "\n",
            encoding="utf-8",
        )
    encoder = load_encoder("offline-minilm", args.backend, batch_size=64)
    start = time.perf_counter()
    result = mine(
        collection,
        work / "job",
        encoder,
        output=work / "pairs.jsonl",
        k=5,
        index_kind=args.index,
        chunk_size=5000,
        progress=True,
    )
    total = time.perf_counter() - start
    print(
        f"\nEnd to end, {result.n_sentences} sentences, backend {args.backend}, index "
        f"{args.index} (this run's stages; a resumed run skips finished ones)\n"
    )
    print("| stage | seconds |\n|---|---|")
    for stage, seconds in result.seconds.items():
        print(f"| {stage} | {seconds:.1f} |")
    print(
        f"| total | {total:.1f} |\n\npairs written: {result.n_written}; peak RSS {peak_mb():.0f} MB"
    )


def load_vectors(work: Path) -> np.ndarray:
    files = sorted((work / "job" / "emb").glob("[0-9]*.npy"))
    return np.concatenate([np.load(f) for f in files]).astype(np.float32)


def perturbed(base: np.ndarray, copies: int, noise: float, seed: int = 0) -> np.ndarray:
    """``base`` plus ``copies`` noisy copies (Gaussian noise of norm ~``noise``), normalised."""
    rng = np.random.default_rng(seed)
    parts = [base]
    scale = np.float32(noise / np.sqrt(base.shape[1]))  # keep float32 (NEP 50 promotion)
    for _ in range(copies):
        copy = base + rng.standard_normal(base.shape).astype(np.float32) * scale
        copy /= np.linalg.norm(copy, axis=1, keepdims=True)
        parts.append(copy)
    return np.concatenate(parts).astype(np.float32, copy=False)


def bench_search(args: argparse.Namespace) -> None:
    import faiss
    from sentence_transformers.util import paraphrase_mining_embeddings

    from parakit.vectors.index import VectorIndex

    base = load_vectors(Path(args.workdir))
    copies = args.copies if args.copies is not None else -(-args.target // len(base)) - 1
    big = perturbed(base, copies, args.noise)[: args.target]
    n = len(big)
    print(
        f"\nSearch stage: {len(base)} real MiniLM vectors + {copies} perturbed copies "
        f"(noise {args.noise}) = {n} vectors, top-5 for every vector; "
        f"faiss threads {faiss.omp_get_max_threads()}, load avg {os.getloadavg()[0]:.1f}\n"
    )
    rows = []
    # paraphrase_mining_embeddings at the sizes where it fits, and exact FAISS on the same
    sizes = [s for s in (10_000, 20_000, 40_000) if s <= n]
    pm_times = []
    for size in sizes:
        import torch

        emb = torch.from_numpy(big[:size])
        start = time.perf_counter()
        paraphrase_mining_embeddings(emb, top_k=5, max_pairs=10 * size)
        pm = time.perf_counter() - start
        pm_times.append(pm)
        start = time.perf_counter()
        VectorIndex(kind="flat").build(lambda s=size: iter([big[:s]])).search(big[:size], 6)
        flat = time.perf_counter() - start
        rows.append((f"{size:,}", f"{pm:.1f}", f"{flat:.1f}", "", ""))
    slope = np.polyfit(np.log(sizes), np.log(pm_times), 1)[0] if len(sizes) > 1 else 2.0
    pm_1m = pm_times[-1] * (n / sizes[-1]) ** slope
    if args.baseline_only:
        print("| N | paraphrase_mining_embeddings s | FAISS exact (flat) s |\n|---|---|---|")
        for row in rows:
            print("| " + " | ".join(row[:3]) + " |")
        print(f"\ngrowth exponent {slope:.2f}; extrapolated to {n:,}: {pm_1m:.0f} s")
        return
    # approximate index over everything
    sample = np.random.default_rng(1).choice(n, size=min(args.sample, n), replace=False)
    start = time.perf_counter()
    exact = VectorIndex(kind="flat").build(lambda: iter([big]))
    _, truth = exact.search(big[sample], 6)
    exact_seconds_sample = time.perf_counter() - start
    del exact
    start = time.perf_counter()
    index = VectorIndex(kind="ivf", nprobe=args.nprobe).build(
        lambda: (big[i : i + 100_000] for i in range(0, n, 100_000)), n=n
    )
    build = time.perf_counter() - start
    start = time.perf_counter()
    for i in range(0, n, 50_000):
        index.search(big[i : i + 50_000], 6)
    search = time.perf_counter() - start
    _, found = index.search(big[sample], 6)
    recall = recall_at(found[:, 1:], truth[:, 1:])
    print("| N | paraphrase_mining_embeddings s | FAISS exact (flat) s | | |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(
        f"\nparaphrase_mining growth exponent {slope:.2f}; extrapolated to {n:,}: "
        f"{pm_1m:.0f} s ({pm_1m / 3600:.1f} h)"
    )
    print(
        f"exact flat search for {len(sample)} sampled queries over {n:,}: "
        f"{exact_seconds_sample:.1f} s"
    )
    print(
        f"\n| index | build s | search all {n:,} top-5 s | total s | speed-up vs "
        f"paraphrase_mining | recall@5 vs exact ({len(sample)} queries) |"
    )
    print("|---|---|---|---|---|---|")
    print(
        f"| IVF{index.nlist_},Flat nprobe={index.nprobe_} | {build:.1f} | {search:.1f} | "
        f"{build + search:.1f} | {pm_1m / (build + search):.0f}x | {recall:.3f} |"
    )
    print(f"\npeak RSS {peak_mb():.0f} MB (vectors alone: {big.nbytes / 2**20:.0f} MB)")


def bench_memory(args: argparse.Namespace) -> None:
    """Peak RSS of index build + full top-5 search at growing N, one subprocess per size."""
    print("\n| N | index | build+search s | peak RSS MB | vectors MB |\n|---|---|---|---|---|")
    base_n = len(load_vectors(Path(args.workdir)))
    for size in args.sizes:
        copies = -(-size // base_n) - 1
        code = (
            "import sys,time,resource; sys.path.insert(0,'benchmarks'); import mine as b;"
            "import numpy as np; from pathlib import Path;"
            "from parakit.vectors.index import VectorIndex;"
            f"big=b.perturbed(b.load_vectors(Path({args.workdir!r})),{copies},{args.noise})"
            f"[:{size}];"
            "n=len(big); t=time.perf_counter();"
            f"ix=VectorIndex(kind='ivf',nprobe={args.nprobe},train_size={args.train_size}).build("
            "lambda:(big[i:i+100000] for i in range(0,n,100000)),n=n);"
            "[ix.search(big[i:i+50000],6) for i in range(0,n,50000)];"
            "print(n, time.perf_counter()-t, resource.getrusage(resource.RUSAGE_SELF)"
            ".ru_maxrss/1024, big.nbytes/2**20)"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
        ).stdout.split()
        n, seconds, peak, vec = out[-4:]
        print(f"| {int(n):,} | IVF | {float(seconds):.1f} | {float(peak):.0f} | {float(vec):.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("embed")
    p.add_argument("--n", type=int, default=2000)
    p = sub.add_parser("e2e")
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--backend", default="onnx-int8")
    p.add_argument("--index", default="auto")
    p.add_argument("--workdir", default="out/bench-e2e")
    p = sub.add_parser("search")
    p.add_argument("--workdir", default="out/bench-e2e")
    p.add_argument("--copies", type=int, default=None, help="default: enough for --target")
    p.add_argument("--target", type=int, default=1_000_000)
    p.add_argument("--noise", type=float, default=0.3)
    p.add_argument("--nprobe", type=int, default=32)
    p.add_argument("--sample", type=int, default=2000)
    p.add_argument("--baseline-only", action="store_true", help="only paraphrase_mining/flat")
    p = sub.add_parser("memory")
    p.add_argument("--workdir", default="out/bench-e2e")
    p.add_argument("--sizes", type=int, nargs="+", default=[250_000, 500_000, 1_000_000])
    p.add_argument("--train-size", type=int, default=50_000, help="IVF training sample")
    p.add_argument("--noise", type=float, default=0.3)
    p.add_argument("--nprobe", type=int, default=32)
    args = parser.parse_args()
    {"embed": bench_embed, "e2e": bench_e2e, "search": bench_search, "memory": bench_memory}[
        args.what
    ](args)
    print(
        f"\n({time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, "
        f"{json.dumps({'load_avg': round(os.getloadavg()[0], 1)})})"
    )


if __name__ == "__main__":
    main()
