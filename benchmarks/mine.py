"""Mining benchmarks: embedding speed and agreement, end-to-end mining, search at 1M vectors.

Run from the repository root (HF_HUB_OFFLINE=1, the offline MiniLM installed)::

    python benchmarks/mine.py embed  --n 2000            # ST fp32 vs bf16 vs ONNX fp32
    python benchmarks/mine.py vectors --n 159979 --out out/bench-vectors   # real MiniLM vectors
    python benchmarks/mine.py compare --sizes 2000 4000 8000   # ST encode + paraphrase mining
                                           # against `parakit mine run`, one process each
    python benchmarks/mine.py compare-search --vectors out/bench-vectors  # search, real vectors
    python benchmarks/mine.py e2e    --n 100000 --backend onnx --workdir out/bench-e2e
    python benchmarks/mine.py search --workdir out/bench-e2e --target 1000000
    python benchmarks/mine.py memory --workdir out/bench-e2e   # peak RSS vs N (subprocesses)
    python benchmarks/mine.py static --pools 20000 50000 --commit   # static encoder vs teacher
    python benchmarks/mine.py codes --n 159979 --commit  # memory/recall of each index kind
    python benchmarks/mine.py cascade --pool 50000 --commit   # static + teacher re-scoring
    python benchmarks/mine.py scale --sizes 1000000 --commit   # mine run at 1M, defaults
    python benchmarks/mine.py scale --sizes 10000000 --workers 2 --commit   # 10M, LocalCluster
    python benchmarks/mine.py cluster --n 50000 --commit  # one process vs a cluster, a kill

Each prints a Markdown table; figures go to docs/benchmarks.md#embeddings-and-mining.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
DATA = Path(os.environ.get("PARAKIT_DATA", ROOT.parent / "shared" / "data"))
if not DATA.exists():
    DATA = Path("/work/shared/data")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class TreeMemory:
    """Peak resident memory of this process and all its descendants together (a Dask
    ``LocalCluster``'s nannies and workers), sampled every ``interval`` seconds in a thread:
    ``with TreeMemory() as memory: ...; memory.peak_mb``. ``peak_anon_mb``: the anonymous part
    (resident less file-backed and shared pages): what the run needs, without the clean pages
    of its memory-mapped files, which the kernel drops when memory runs short."""

    def __init__(self, interval: float = 1.0) -> None:
        self.interval, self.peak_mb, self.peak_anon_mb = interval, 0.0, 0.0
        self._stop = None

    def _sample(self) -> None:
        import psutil

        me = psutil.Process()
        while not self._stop.wait(self.interval):
            total = anon = 0
            for proc in [me, *me.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    info = proc.memory_info()
                    total, anon = total + info.rss, anon + info.rss - info.shared
            self.peak_mb = max(self.peak_mb, total / 2**20)
            self.peak_anon_mb = max(self.peak_anon_mb, anon / 2**20)

    def __enter__(self) -> TreeMemory:
        import threading

        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


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
    from parakit.offline import resolve_model
    from parakit.vectors.encode import OnnxEncoder, SentenceEncoder
    from parakit.vectors.index import VectorIndex

    texts = multipit_sentences(args.n)
    model = resolve_model("offline-minilm")
    rows = []
    reference = None
    for name, encoder in (
        (
            "sentence-transformers fp32 (batch 64)",
            SentenceEncoder(model, batch_size=64, precision="fp32"),
        ),
        ("sentence-transformers bf16 where the CPU has it", SentenceEncoder(model, batch_size=64)),
        ("ONNX Runtime fp32, length-sorted", OnnxEncoder(model, batch_size=64)),
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
    from parakit.mine.mining import mine
    from parakit.vectors.encode import load_encoder

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
        recall=args.recall or None,
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
    info = result.index["all"]
    print(
        f"index: {info['kind']} nlist {info['nlist']} nprobe {info['nprobe']}, estimated "
        f"recall@5 {info['recall_estimate']} ({(info['calibration'] or {}).get('chosen_by')})"
    )


def bench_vectors(args: argparse.Namespace) -> None:
    """Embed the first ``--n`` unique MultiPIT auto sentences into ``--out/00000.npy`` ...
    (chunks of 10 000, resumable: finished chunks are kept), for the search-stage benchmarks."""
    from parakit.vectors.encode import load_encoder

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    texts = multipit_sentences(args.n)
    encoder = load_encoder("offline-minilm", args.backend, batch_size=64)
    load0 = os.getloadavg()[0]
    start, cpu0, done = time.perf_counter(), time.process_time(), 0
    for c, a in enumerate(range(0, len(texts), 10_000)):
        path = out / f"{c:05d}.npy"
        if path.exists():
            continue
        vectors = encoder.encode(texts[a : a + 10_000])
        np.save(out / f".{c:05d}.tmp.npy", vectors)
        os.replace(out / f".{c:05d}.tmp.npy", path)
        done += len(vectors)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
        print(
            f"chunk {c}: {done} sentences in {wall:.0f} s wall / {cpu:.0f} s CPU "
            f"({done / wall:.0f}/s wall, {done / cpu:.0f}/CPU-s), load {load0:.1f}->"
            f"{os.getloadavg()[0]:.1f}",
            flush=True,
        )


def load_chunks(folder: Path, n: int | None = None) -> np.ndarray:
    """The first ``n`` rows of the chunk files in ``folder`` (all rows if None)."""
    files = sorted(folder.glob("[0-9]*.npy"))
    x = np.concatenate([np.load(f) for f in files]).astype(np.float32)
    return x if n is None else x[:n]


ST_SIDE = """
import sys, time, numpy as np
from sentence_transformers import SentenceTransformer, util
texts = open(sys.argv[1], encoding="utf-8").read().split("\\n")[:-1]
t0 = time.perf_counter()
model = SentenceTransformer(sys.argv[2], device="cpu")
t1 = time.perf_counter()
emb = model.encode(texts, batch_size=64, convert_to_tensor=True, show_progress_bar=False)
t2 = time.perf_counter()
# util.paraphrase_mining(model, texts, top_k=5, max_pairs=...) is exactly encode + this call
pairs = util.paraphrase_mining_embeddings(emb, top_k=5, max_pairs=5 * len(texts) + 1)
t3 = time.perf_counter()
np.save(sys.argv[3], emb.numpy())
print("ST", t1 - t0, t2 - t1, t3 - t2, len(pairs))
"""


def _child(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float, str]:
    """Run ``cmd``; (wall s, CPU s of the child and its threads, peak RSS MB, stdout)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT, env=env
    )
    out = proc.stdout.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status:
        raise SystemExit(f"{cmd[:3]} failed with status {status}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def _exponent(sizes: list[int], seconds: list[float]) -> float:
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0]) if len(sizes) > 1 else 2.0


def bench_compare(args: argparse.Namespace) -> None:
    """The same real sentences through sentence-transformers (encode + paraphrase mining,
    max_pairs raised) and ``parakit mine run``: wall, CPU, peak memory, recall@5."""
    from parakit.offline import resolve_model
    from parakit.vectors.index import VectorIndex, recall_per_query

    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    model = resolve_model("offline-minilm")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT / "src")}
    rows = []
    for n in args.sizes:
        collection = work / f"sentences-{n}.txt"
        texts = [t.replace("\n", " ") for t in multipit_sentences(n)]
        collection.write_text("\n".join(texts) + "\n", encoding="utf-8")
        load0 = os.getloadavg()[0]
        st = _child(
            [sys.executable, "-c", ST_SIDE, str(collection), model, str(work / f"st-{n}.npy")],
            env,
        )
        _, st_load, st_encode, st_mine, _ = st[3].split()[-5:]
        job = work / f"parakit-{n}"
        if job.exists():
            import shutil

            shutil.rmtree(job)
        pk = _child(
            [
                sys.executable,
                "-m",
                "parakit",
                "--quiet",
                "mine",
                "run",
                str(collection),
                "-o",
                str(work / f"pairs-{n}.jsonl"),
                "--workdir",
                str(job),
                "--backend",
                args.backend,
                "--recall",
                str(args.recall),
                "-k",
                "5",
            ],
            env,
        )
        run = json.loads((job / "run.json").read_text())
        ours = load_chunks(job / "emb")
        knn = np.load(job / "knn_ids.npy")
        q = np.arange(n)
        flat = VectorIndex(kind="flat").build(lambda x=ours: iter([x]))
        rec_exact = recall_per_query(knn, flat.search(ours, 6)[1], q, 5).mean()
        st_vectors = np.load(work / f"st-{n}.npy")
        st_truth = VectorIndex(kind="flat").build(lambda x=st_vectors: iter([x]))
        rec_st = recall_per_query(knn, st_truth.search(st_vectors, 6)[1], q, 5).mean()
        rows.append(
            dict(
                n=n,
                load=f"{load0:.1f}-{os.getloadavg()[0]:.1f}",
                st_wall=st[0],
                st_cpu=st[1],
                st_rss=st[2],
                st_encode=float(st_encode),
                st_mine=float(st_mine),
                st_load=float(st_load),
                pk_wall=pk[0],
                pk_cpu=pk[1],
                pk_rss=pk[2],
                pk_seconds=run["seconds"],
                pk_index=run["index"]["all"],
                rec_exact=rec_exact,
                rec_st=rec_st,
            )
        )
        print(json.dumps(rows[-1], default=str), flush=True)
    print(
        f"\n| N | load | (a) ST wall s | (a) CPU s | (a) peak MB | (a) encode s / mining s | "
        f"(b) parakit wall s | (b) CPU s | (b) peak MB | (b) embed s / index+search s | "
        f"(b) index | recall@5 (b) vs exact, same vectors | vs ST fp32 neighbours | "
        f"wall speed-up |\n|{'---|' * 14}"
    )
    for r in rows:
        sec = r["pk_seconds"]
        ix = r["pk_index"]
        kind = ix["kind"] + (f" nprobe {ix['nprobe']}" if ix.get("nprobe") else "")
        print(
            f"| {r['n']:,} | {r['load']} | {r['st_wall']:.1f} | {r['st_cpu']:.1f} | "
            f"{r['st_rss']:.0f} | {r['st_encode']:.1f} / {r['st_mine']:.1f} | "
            f"{r['pk_wall']:.1f} | {r['pk_cpu']:.1f} | {r['pk_rss']:.0f} | "
            f"{sec['embed']:.1f} / {sec['index'] + sec['search']:.1f} | {kind} | "
            f"{r['rec_exact']:.3f} | {r['rec_st']:.3f} | {r['st_wall'] / r['pk_wall']:.1f}x |"
        )
    big = rows[-1]
    print(
        f"\nat {big['n']:,}: (a) encodes {big['n'] / big['st_encode']:.0f} sentences/s wall; "
        f"(b) embeds {big['n'] / big['pk_seconds']['embed']:.0f} sentences/s wall "
        f"({big['st_encode'] / big['pk_seconds']['embed']:.1f}x); search-stage growth: "
        "see `compare-search` (these sizes are too small for the quadratic part to show)"
    )


def bench_compare_search(args: argparse.Namespace) -> None:
    """Search stage on real vectors: paraphrase_mining_embeddings (max_pairs raised) against
    VectorIndex(kind="auto", recall=...) built and searched top-6 for every vector."""
    import torch
    from sentence_transformers.util import paraphrase_mining_embeddings

    from parakit.vectors.index import VectorIndex, recall_per_query

    base = load_chunks(Path(args.vectors))
    print(f"{len(base)} real vectors in {args.vectors}; faiss/torch threads default", flush=True)
    rows = []
    for n in args.sizes:
        if n > len(base):
            print(f"skip {n}: only {len(base)} vectors", flush=True)
            continue
        x = np.ascontiguousarray(base[:n])
        load0 = os.getloadavg()[0]
        pm = None
        if n <= args.pm_max:
            t, c = time.perf_counter(), time.process_time()
            paraphrase_mining_embeddings(torch.from_numpy(x), top_k=5, max_pairs=5 * n + 1)
            pm, pm_cpu = time.perf_counter() - t, time.process_time() - c
        t, c = time.perf_counter(), time.process_time()
        index = VectorIndex(kind=args.kind, recall=args.recall).build(
            lambda x=x: (x[i : i + 10_000] for i in range(0, len(x), 10_000)), n=n
        )
        built = time.perf_counter() - t
        found = np.concatenate([index.search(x[i : i + 10_000], 6)[1] for i in range(0, n, 10_000)])
        ours, ours_cpu = time.perf_counter() - t, time.process_time() - c
        sample = np.random.default_rng(7).choice(n, size=min(n, args.sample), replace=False)
        exact = VectorIndex(kind="flat").build(lambda x=x: iter([x])).search(x[sample], 6)[1]
        rec = recall_per_query(found[sample], exact, sample, 5).mean()
        cal = index.calibration_ or {}
        rows.append(
            dict(
                n=n,
                load=f"{load0:.1f}-{os.getloadavg()[0]:.1f}",
                pm=pm,
                pm_cpu=pm_cpu if pm else None,
                ours=ours,
                ours_cpu=ours_cpu,
                build=built,
                kind=index.kind_,
                nlist=index.nlist_,
                nprobe=index.nprobe_,
                ef=getattr(index, "ef_search_", None),
                est=cal.get("recall_estimate"),
                rec=rec,
            )
        )
        print(json.dumps(rows[-1]), flush=True)
    print(
        "\n| N | load | paraphrase_mining_embeddings s (CPU s) | parakit index+search s (CPU s) "
        "| of which build+calibration s | index chosen | estimated recall@5 | measured "
        f"recall@5 ({args.sample} queries) | speed-up |\n|{'---|' * 9}"
    )
    for r in rows:
        ix = r["kind"] + (f" nlist {r['nlist']} nprobe {r['nprobe']}" if r["nprobe"] else "")
        ix += f" efSearch {r['ef']}" if r["ef"] else ""
        pm = f"{r['pm']:.1f} ({r['pm_cpu']:.1f})" if r["pm"] else "–"
        speed = f"{r['pm'] / r['ours']:.1f}x" if r["pm"] else "–"
        print(
            f"| {r['n']:,} | {r['load']} | {pm} | {r['ours']:.1f} ({r['ours_cpu']:.1f}) | "
            f"{r['build']:.1f} | {ix} | {r['est'] if r['est'] is not None else '–'} | "
            f"{r['rec']:.3f} | {speed} |"
        )
    with_pm = [r for r in rows if r["pm"]]
    if with_pm:
        e_pm = _exponent([r["n"] for r in with_pm], [r["pm"] for r in with_pm])
        pm_1m = with_pm[-1]["pm"] * (1e6 / with_pm[-1]["n"]) ** e_pm
        e_us = _exponent([r["n"] for r in rows], [r["ours"] for r in rows])
        us_1m = rows[-1]["ours"] * (1e6 / rows[-1]["n"]) ** e_us
        print(
            f"\nparaphrase_mining_embeddings exponent {e_pm:.2f} -> 1M: {pm_1m:.0f} s; "
            f"parakit exponent {e_us:.2f} -> 1M: {us_1m:.0f} s; ratio {pm_1m / us_1m:.1f}x"
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


def expert_positives() -> list[tuple[str, str]]:
    """The MultiPIT expert paraphrase pairs (train + val): the gold the miner should find."""
    from parakit.io import read

    pairs = []
    for name in ("expert-train.csv", "expert-val.csv"):
        pairs += [
            (p.text1, p.text2)
            for p in read(DATA / "multipit" / name, format="multipit")
            if p.label == "1"
        ]
    return pairs


def bench_static(args: argparse.Namespace) -> None:
    """Issue 28: a static encoder distilled from ``--teacher`` against the teacher itself, on
    what mining is for. Units of the ``static-encoder`` ledger: the distillation (seconds), and
    per pool size the embedding speed of both (sentences/s, one after the other on the same
    sentences) and the gold recall@5/10/50 of the MultiPIT expert positives hidden in a pool of
    MultiPIT auto sentences."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from ledger import Ledger, UnitClock

    from parakit.vectors.encode import load_encoder
    from parakit.vectors.static import distill_static, gold_recall

    ledger = Ledger("static-encoder", commit=args.commit)
    folder = Path(args.workdir) / f"static-{args.teacher}-{args.pca_dims}"
    unit = {"teacher": args.teacher, "pca_dims": args.pca_dims, "step": "distil"}
    if not (folder / "parakit_static.json").is_file() or not ledger.has(unit):
        clock = UnitClock()
        info = distill_static(args.teacher, folder, pca_dims=args.pca_dims)
        ledger.record(unit, {"vocabulary": info["vocabulary"], "dim": info["dim"]},
                      clock=clock.read())  # fmt: skip
    gold = expert_positives()
    for size in args.pools:
        unit = {"teacher": args.teacher, "pca_dims": args.pca_dims, "pool": size,
                "gold_pairs": len(gold), "precision": args.precision}  # fmt: skip
        if ledger.has(unit):
            print(f"pool {size}: in the ledger, skipped")
            continue
        clock = UnitClock()
        pool = multipit_sentences(size)
        metrics: dict[str, float] = {}
        for name, model in (("static", str(folder)), ("teacher", args.teacher)):
            encoder = load_encoder(model, "torch", precision=args.precision, batch_size=64)
            encoder.encode(pool[:256])  # warm-up
            start = time.perf_counter()
            encoder.encode(pool)
            metrics[f"{name}_sentences_per_s"] = round(size / (time.perf_counter() - start), 1)
            for k, value in gold_recall(encoder, gold, pool, ks=(5, 10, 50)).items():
                metrics[f"{name}_recall@{k}"] = round(value, 4)
        metrics["speed_up"] = round(
            metrics["static_sentences_per_s"] / metrics["teacher_sentences_per_s"], 1
        )
        metrics["recall@50_share"] = round(
            metrics["static_recall@50"] / metrics["teacher_recall@50"], 4
        )
        ledger.record(unit, metrics, clock=clock.read())


def static_student(workdir: Path, teacher: str = "offline-minilm") -> Path:
    """The static encoder distilled from ``teacher`` (PCA 256), distilled once under
    ``workdir``."""
    from parakit.vectors.static import distill_static

    folder = workdir / f"static-{teacher}-256"
    if not (folder / "parakit_static.json").is_file():
        distill_static(teacher, folder, pca_dims=256)
    return folder


def static_vectors(n: int, workdir: Path, teacher: str = "offline-minilm") -> np.ndarray:
    """The first ``n`` MultiPIT auto sentences embedded by :func:`static_student`: real
    vectors in seconds."""
    from parakit.vectors.encode import load_encoder

    folder = static_student(workdir, teacher)
    cache = workdir / f"vectors-{n}.npy"
    if cache.is_file():
        return np.load(cache)
    vectors = load_encoder(str(folder), "torch", batch_size=1024).encode(multipit_sentences(n))
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    np.save(workdir / f".vectors-{n}.tmp.npy", vectors)
    os.replace(workdir / f".vectors-{n}.tmp.npy", cache)
    return vectors


def bench_codes(args: argparse.Namespace) -> None:
    """Issue 28 item 4: every index kind over the same real vectors (MultiPIT auto sentences,
    static encoder) — bytes per vector measured on the serialised index, MB per million
    vectors, recall@k against exact search on sampled rows (their own row left out), build
    seconds and ms per query; then what the calibrator chooses under a memory budget the flat
    vectors exceed. One unit of the ``index-codes`` ledger per configuration."""
    import faiss

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from ledger import Ledger, UnitClock

    from parakit.vectors.index import VectorIndex, pq_sizes, recall_per_query

    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    x = static_vectors(args.n, work)
    n, dim = x.shape
    ledger = Ledger("index-codes", commit=args.commit)
    chunks = lambda: (x[i : i + 50_000] for i in range(0, n, 50_000))  # noqa: E731
    rows = np.random.default_rng(7).choice(n, size=min(args.sample, n), replace=False)
    truth = VectorIndex(kind="flat").build(chunks, n=n).search(x[rows], args.k + 1)[1]
    configs: list[tuple[str, dict]] = [("flat", {}), ("ivf", {}), ("hnsw", {"ef_search": 128})]
    configs += [(kind, {"pq_m": m}) for m in pq_sizes(dim) for kind in ("ivfpq", "ivfopq")]
    budget = n * dim * 4 // 2  # half of what the flat vectors need
    configs.append(("auto", {"recall": args.recall, "recall_k": args.k, "memory_budget": budget}))
    for kind, options in configs:
        unit = {"vectors": "multipit-auto static-minilm-256", "n": n, "dim": dim,
                "kind": kind, **options, "k": args.k}  # fmt: skip
        if ledger.has(unit):
            print(f"{kind} {options}: in the ledger, skipped")
            continue
        clock = UnitClock()
        start = time.perf_counter()
        index = VectorIndex(kind=kind, seed=0, **options).build(chunks, n=n)
        build = time.perf_counter() - start
        start = time.perf_counter()
        found = index.search(x[rows], args.k + 1)[1]
        per_query = (time.perf_counter() - start) / len(rows)
        size = faiss.serialize_index(index.index_).nbytes
        metrics = {
            "chosen": f"{index.kind_} m={index.pq_m_}" if index.pq_m_ else index.kind_,
            "nprobe": index.nprobe_,
            "bytes_per_vector": round(size / n, 1),
            "mb_per_million": round(size / n * 1e6 / 2**20, 1),
            f"recall@{args.k}": round(
                float(recall_per_query(found, truth, rows, args.k).mean()), 4
            ),
            "build_s": round(build, 1),
            "ms_per_query": round(1000 * per_query, 3),
        }
        if index.calibration_ and "configs" in index.calibration_:
            metrics["configs_tried"] = len(index.calibration_["configs"])
        ledger.record(unit, metrics, clock=clock.read())
        del index


def bench_cascade(args: argparse.Namespace) -> None:
    """Issue 28 item 2: mining with the teacher, with its static student, and with the cascade
    (per ``--cascades`` setting ``WIDE_K:P``: the student mines ``WIDE_K``
    neighbours, its embedding classifier keeps P(paraphrase) >= ``P``, the
    teacher re-scores the survivors' sentences and keeps each sentence's best ``--k``). The
    pool: ``--pool`` MultiPIT auto sentences with the MultiPIT expert val paraphrases hidden in
    it; each classifier is trained on expert train with its own encoder. Per configuration: the
    share of the hidden gold pairs in the output (gold recall), the pairs written, seconds per
    step and the whole run; one unit of the ``mine-cascade`` ledger each."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from ledger import Ledger, UnitClock

    from parakit.io import read
    from parakit.mine.mining import mine
    from parakit.models.baselines import EmbeddingClassifier
    from parakit.vectors.encode import load_encoder

    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    student = str(static_student(work, args.teacher))
    val = read(DATA / "multipit" / "expert-val.csv", format="multipit")
    gold = {(p.text1, p.text2) for p in val if p.label == "1" and p.text1 != p.text2}
    texts = list(dict.fromkeys([t for pair in gold for t in pair] + multipit_sentences(args.pool)))
    collection = work / f"pool-{args.pool}.txt"
    collection.write_text("\n".join(t.replace("\n", " ") for t in texts) + "\n", encoding="utf-8")
    train = read(DATA / "multipit" / "expert-train.csv", format="multipit")
    ledger = Ledger("mine-cascade", commit=args.commit)
    configs = [
        ("teacher", args.teacher, args.k, None, 0.5),
        ("static", student, args.k, None, 0.5),
    ]
    for setting in args.cascades:  # the trade-off: wider search, stricter classifier
        wide_k, min_probability = setting.split(":")
        configs.append(("cascade", student, int(wide_k), args.teacher, float(min_probability)))
    for name, model, k, rescorer, min_probability in configs:
        unit = {"config": name, "teacher": args.teacher, "pool": len(texts),
                "gold_pairs": len(gold), "k": args.k, "wide_k": k if rescorer else None,
                "min_probability": min_probability}  # fmt: skip
        if ledger.has(unit):
            print(f"{name}: in the ledger, skipped")
            continue
        clock = UnitClock()
        start = time.perf_counter()
        encoder = load_encoder(model, "torch", batch_size=64, precision=args.precision)
        classifier = EmbeddingClassifier(model, "labels", "torch").fit(train)
        train_s = time.perf_counter() - start
        job = work / f"job-{name}-{args.pool}"
        if job.exists():
            import shutil

            shutil.rmtree(job)
        result = mine(
            collection, job, encoder, output=job / "pairs.jsonl", k=k, classifier=classifier,
            min_probability=min_probability, recall=0.95, progress=False,
            rescorer=None if rescorer is None else load_encoder(
                rescorer, "torch", batch_size=64, precision=args.precision
            ),
            rescore_k=args.k if rescorer else None,
        )  # fmt: skip
        total = time.perf_counter() - start
        found = set()
        for line in (job / "pairs.jsonl").read_text(encoding="utf-8").splitlines()[1:]:
            pair = json.loads(line)
            found |= {(pair["text1"], pair["text2"]), (pair["text2"], pair["text1"])}
        metrics = {
            "gold_recall": round(sum(pair in found for pair in gold) / len(gold), 4),
            "written": result.n_written,
            "candidates": result.n_candidates,
            "classifier_train_s": round(train_s, 1),
            **{f"{step}_s": round(v, 1) for step, v in result.seconds.items()},
            "total_s": round(total, 1),
        }
        ledger.record(unit, metrics, clock=clock.read())
    lines = {
        f"{ln['unit']['config']} {ln['unit']['wide_k'] or ''}:{ln['unit']['min_probability']}": (
            ln["metrics"]
        )
        for ln in ledger.lines()
    }
    base = next((m for name, m in lines.items() if name.startswith("teacher")), None)
    if base is not None:
        for name, m in lines.items():
            share = m["gold_recall"] / max(base["gold_recall"], 1e-9)
            speed = base["total_s"] / m["total_s"]
            print(f"{name}: gold recall {m['gold_recall']:.3f} ({share:.1%} of the teacher's), "
                  f"{speed:.1f}x its speed")  # fmt: skip


def variant_sentences(real: list[str], n: int, seed: int = 0) -> list[str]:
    """``real`` followed by synthetic sentences up to ``n`` in all: each variant takes the
    length (in words) of a random real sentence and draws its words from the real sentences'
    word frequencies (a unigram model), so lengths and the word distribution stay those of the
    real part; the variants are unique and differ from every real sentence."""
    rng = np.random.default_rng(seed)
    words: dict[str, int] = {}
    lengths = []
    for text in real:
        tokens = text.split()
        lengths.append(len(tokens))
        for token in tokens:
            words[token] = words.get(token, 0) + 1
    vocabulary = np.array(list(words))
    weights = np.array(list(words.values()), dtype=np.float64)
    weights /= weights.sum()
    seen = set(real)
    out = list(real)
    lengths_arr = np.array(lengths)
    while len(out) < n:
        batch = min(200_000, 2 * (n - len(out)))
        sizes = rng.choice(lengths_arr, size=batch)
        drawn = rng.choice(len(vocabulary), size=int(sizes.sum()), p=weights)
        position = 0
        for size in sizes:
            text = " ".join(vocabulary[drawn[position : position + size]])
            position += size
            if text not in seen:
                seen.add(text)
                out.append(text)
                if len(out) == n:
                    break
    return out


def perturbed_variants(
    real: list[str], n: int, rate: float = 0.4, seed: int = 0, batch: int = 200_000
) -> Iterator[str]:
    """``real`` followed by perturbed copies up to ``n`` sentences in all: each variant is a
    random real sentence with every word, with probability ``rate``, replaced by a word drawn
    from the real sentences' word frequencies. Lengths are the real ones exactly and the word
    distribution stays the real one (kept words are real words, replacements are drawn from
    their frequencies); unlike :func:`variant_sentences` a variant keeps most of its source's
    words, so the variants cluster around real sentences the way a large real corpus holds
    near-duplicates and rewordings. Variants are unique and differ from every real sentence.
    Vectorised: 10 million in a few minutes; yields the texts (a stream, for 10M and more)."""
    rng = np.random.default_rng(seed)
    vocabulary: dict[str, int] = {}
    ids, lengths = [], []
    for text in real:
        tokens = text.split()
        lengths.append(len(tokens))
        ids.extend(vocabulary.setdefault(token, len(vocabulary)) for token in tokens)
    words = np.array(list(vocabulary), dtype=object)
    flat, lengths_arr = np.asarray(ids, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths_arr)[:-1]])
    frequency = np.bincount(flat, minlength=len(words)).astype(np.float64)
    frequency /= frequency.sum()
    seen = {hash(text) for text in real}
    yield from real[:n]
    made = min(n, len(real))
    while made < n:
        sources = rng.integers(len(real), size=batch)
        sizes = lengths_arr[sources]
        # the token positions of every chosen source, one after another
        offsets = np.repeat(starts[sources] - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes)
        tokens = flat[offsets + np.arange(int(sizes.sum()))]
        swap = rng.random(len(tokens)) < rate
        tokens[swap] = rng.choice(len(words), size=int(swap.sum()), p=frequency)
        position = 0
        for size in sizes.tolist():
            text = " ".join(words[tokens[position : position + size]])
            position += size
            key = hash(text)
            if key not in seen:
                seen.add(key)
                yield text
                made += 1
                if made == n:
                    return


def bench_scale(args: argparse.Namespace) -> None:
    """Issue 28 item 5: ``mine run`` end to end with its default settings (k 5, index auto at
    recall 0.95; ``--recall`` to change it) on ``--sizes`` sentences: the 159,979 real
    MultiPIT sentences and variants of them (:func:`variant_sentences`), with the static
    student (``--model static``) or any encoder. ``--workers N`` runs it on a LocalCluster.
    Gold recall is counted on the real part: the MultiPIT expert paraphrase pairs (train +
    val) both of whose sentences are in it, found as a pair in the output. One unit of the
    ``mine-scale`` ledger per run."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from ledger import Ledger, UnitClock

    from parakit.mine.distributed import cluster_client
    from parakit.mine.mining import mine
    from parakit.vectors.encode import load_encoder
    from parakit.vectors.index import VectorIndex

    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    model = str(static_student(work, args.teacher)) if args.model == "static" else args.model
    ledger = Ledger("mine-scale", commit=args.commit)
    for n in args.sizes:
        unit = {"n": n, "model": args.model if args.model != "static" else
                f"static-{args.teacher}-256", "workers": args.workers or 0, "k": 5,
                "recall_target": args.recall, "backend": args.backend}  # fmt: skip
        if args.variants != "unigram":  # the first rows' units (unigram variants) stay as they are
            unit["variants"] = args.variants
            # the HNSW build breadth (FAISS's 40 in the first perturbed row, which lacks the key)
            unit["ef_construction"] = VectorIndex().ef_construction
            # how the graph keeps its vectors (the rows before the key: float32)
            unit["hnsw_storage"] = VectorIndex().hnsw_storage
            # rows the recall target is measured on (the rows before the key: 1,000)
            unit["calibration_queries"] = VectorIndex().calibration_queries
            # the CPU kind: the same run differs up to 3x between our machines (the rows
            # before the key name theirs only in the machine column)
            unit["cpu_kind"] = cpu_kind()
            # how a one-index run searches its own sentences (the rows before the key: from
            # the graph's entry point)
            if args.workers == 0 and args.shards is None:
                unit["search_from"] = "own node"
        if args.shards is not None:  # the rows before the flag have one shard per worker
            unit["shards"] = args.shards
        if ledger.has(unit):
            print(f"n={n}: in the ledger, skipped")
            continue
        real = multipit_sentences(159_979)
        gold = [(a, b) for a, b in expert_positives() if a != b]
        pool = set(real[:n])
        gold = [(a, b) for a, b in gold if a in pool and b in pool]
        suffix = "" if args.variants == "unigram" else f"-{args.variants}"
        collection = work / f"collection-{n}{suffix}.txt"
        if not collection.exists():
            texts = (
                variant_sentences(real, n, seed=0)[:n]
                if args.variants == "unigram"
                else perturbed_variants(real, n, seed=0)
            )
            tmp = collection.with_suffix(".tmp")
            with open(tmp, "w", encoding="utf-8") as handle:
                for text in texts:
                    handle.write(text.replace("\n", " ") + "\n")
            os.replace(tmp, collection)
        job = work / f"job-{n}-{unit['model']}-{args.workers or 0}"
        if job.exists():
            import shutil

            shutil.rmtree(job)
        clock = UnitClock()
        start = time.perf_counter()
        encoder = load_encoder(model, args.backend, batch_size=args.batch_size)
        with (
            TreeMemory() as memory,
            cluster_client(args.workers) if args.workers else _no_client() as client,
            StageRecorder(unit, job, memory, args.commit) if args.stages else _no_client(),
        ):
            result = mine(
                collection, job, encoder, output=job / "pairs.jsonl", k=5, recall=args.recall,
                progress=True, client=client, shards=args.shards,
            )  # fmt: skip
        total = time.perf_counter() - start
        hits = count_gold(job / "pairs.jsonl", real[:n], gold)
        info = next(iter(result.index.values()))
        metrics = {
            "total_s": round(total, 1),
            **{f"{step}_s": round(v, 1) for step, v in result.seconds.items()},
            "written": result.n_written,
            "index_kind": info.get("kind"),
            "recall_estimate": info.get("recall_estimate"),
            "gold_pairs": len(gold),
            "gold_recall": round(hits / max(len(gold), 1), 4),
            "peak_rss_mb": round(peak_mb()),
            # with workers: the cluster's processes and this one together, at their peak
            "peak_tree_mb": round(memory.peak_mb),
            "peak_tree_anon_mb": round(memory.peak_anon_mb),
        }
        ledger.record(unit, metrics, clock=clock.read())
        print(json.dumps({"unit": unit, "metrics": metrics}))


class StageRecorder:
    """``--stages``: a run too long for one session still leaves its figures. Each step of
    ``mine()`` (store, embed, index, search, ...) is one unit of the ``mine-scale-stages``
    ledger as soon as it ends (its seconds, the memory peak so far, for the index the breadth
    and recall it was calibrated to), and the search, the longest step, records its rate at
    5, 10, 25, 50 and 75 % of the sentences (from the checkpoint marks ``mine()`` writes per
    chunk), with the search time it projects for all of them. It wraps ``mine()``'s step
    timer, so what is timed is the real run, not a copy of it."""

    MILESTONES = (0.05, 0.10, 0.25, 0.50, 0.75)

    def __init__(self, unit: dict[str, Any], job: Path, memory: TreeMemory, commit: bool) -> None:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from ledger import Ledger

        self.unit, self.job, self.memory = unit, job, memory
        self.ledger = Ledger("mine-scale-stages", commit=commit)
        self._stop: Any = None

    def _record(self, step: str, metrics: dict[str, Any], clock: Any) -> None:
        metrics = {**metrics, "peak_rss_mb": round(peak_mb()),
                   "peak_tree_anon_mb": round(self.memory.peak_anon_mb)}  # fmt: skip
        self.ledger.record({**self.unit, "step": step}, metrics, clock=clock.read())

    def __enter__(self) -> StageRecorder:
        from ledger import UnitClock

        from parakit.mine import mining

        recorder, timer = self, mining._Timer
        self._timer = timer

        class RecordingTimer(timer):
            @contextlib.contextmanager
            def __call__(self, step: str) -> Iterator[None]:
                clock = UnitClock()
                if step == "search":
                    recorder._watch_search(clock)
                with timer.__call__(self, step):
                    yield
                if recorder._stop is not None:
                    recorder._stop.set()
                metrics: dict[str, Any] = {"seconds": round(self[step], 1)}
                if step == "index":
                    metrics.update(recorder._index_metrics())
                recorder._record(step, metrics, clock)

        mining._Timer = RecordingTimer
        return self

    def _index_metrics(self) -> dict[str, Any]:
        meta = json.loads(next(self.job.glob("index/*/index.json")).read_text())
        calibration = meta.get("calibration") or {}
        return {"index_kind": meta.get("kind"), "ef_search": meta.get("ef_search"),
                "recall_estimate": meta.get("recall_estimate"),
                "recall_lower": calibration.get("recall_lower"),
                "calibration_ms_per_query": calibration.get("approx_ms_per_query")}  # fmt: skip

    def _watch_search(self, clock: Any) -> None:
        import threading

        stop = self._stop = threading.Event()
        n = len(np.load(self.job / "store" / "hashes.npy", mmap_mode="r"))
        # rows per search mark: the job's embedding chunks (mine()'s chunk_size)
        chunk = len(np.load(self.job / "emb" / "00000.npy", mmap_mode="r"))
        start = time.perf_counter()

        def watch() -> None:
            todo = list(self.MILESTONES)
            while todo and not stop.wait(5.0):
                done = len(list((self.job / "knn_done").glob("*")))
                rows = min(done * chunk, n)
                if rows >= todo[0] * n:
                    seconds = time.perf_counter() - start
                    self._record(
                        f"search {round(100 * todo[0])}%",
                        {"seconds": round(seconds, 1), "rows": rows,
                         "ms_per_query": round(1000 * seconds / rows, 4),
                         "projected_search_s": round(seconds * n / rows, 1)},
                        clock,
                    )  # fmt: skip
                    while todo and rows >= todo[0] * n:
                        todo.pop(0)

        threading.Thread(target=watch, daemon=True).start()

    def __exit__(self, *exc: object) -> None:
        from parakit.mine import mining

        mining._Timer = self._timer
        if self._stop is not None:
            self._stop.set()


def cpu_kind() -> str:
    """The best of ``amx``, ``avx512_bf16``, ``avx512``, ``avx2`` this CPU has: a ledger unit
    measured on one kind is not a figure for the others."""
    from parakit.vectors.precision import cpu_flags

    flags = set(cpu_flags())
    for kind, flag in (("amx", "amx_tile"), ("avx512_bf16", "avx512_bf16"),
                       ("avx512", "avx512f"), ("avx2", "avx2")):  # fmt: skip
        if flag in flags:
            return kind
    return "other"


def count_gold(pairs_file: Path, real: list[str], gold: list[tuple[str, str]]) -> int:
    """How many ``gold`` pairs (texts of ``real``, the collection's first rows, all distinct
    and distinct from every variant) a ``mine run`` output holds, either way round: matched
    by the pair ids (``ROW1-ROW2``), read with a regular expression and no JSON parse, so that
    the 41M pairs of 10M sentences are counted in minutes and without holding them."""
    import re

    row_of = {text: row for row, text in enumerate(real)}
    wanted = set()
    for a, b in gold:
        wanted.update({f"{row_of[a]}-{row_of[b]}", f"{row_of[b]}-{row_of[a]}"})
    pattern = re.compile(r'"id": ?"(\d+-\d+)"')
    found = set()
    with open(pairs_file, encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            match = pattern.search(line)
            if match is None:
                raise ValueError(f"{pairs_file}: a line without a pair id: {line[:80]!r}")
            if match.group(1) in wanted:
                row1, row2 = sorted(int(r) for r in match.group(1).split("-"))
                found.add((row1, row2))
    return sum(tuple(sorted((row_of[a], row_of[b]))) in found for a, b in gold)


def sampled_truth(
    x: np.ndarray, rng: np.random.Generator, k: int = 5, n_rows: int = 2000
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n_rows`` rows of ``x`` drawn by ``rng`` (sorted) and each one's exact top ``k`` by
    inner product, its own row left out: (rows, ids, scores), ids and scores (n_rows, k)."""
    rows = np.sort(rng.choice(len(x), n_rows, replace=False))
    return (rows, *exact_truth(x, rows, k))


def exact_truth(x: np.ndarray, rows: np.ndarray, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Each of ``rows``' exact top ``k`` in ``x`` by inner product, its own row left out, as
    the index calibration counts it: (ids, scores), each (len(rows), k)."""
    import faiss

    queries, base = np.ascontiguousarray(x[rows]), np.ascontiguousarray(x)
    scores, ids = faiss.knn(queries, base, k + 1, metric=faiss.METRIC_INNER_PRODUCT)
    # the own row out; where exact duplicates kept it from the k + 1, the last one goes
    others = [(ids[j] != row).nonzero()[0][:k] for j, row in enumerate(rows)]
    picked = np.stack(others)
    return np.take_along_axis(ids, picked, 1), np.take_along_axis(scores, picked, 1)


def tie_recall(
    x: np.ndarray, rows: np.ndarray, found: np.ndarray, kth_scores: np.ndarray, k: int, tie: float
) -> float:
    """Recall@k counted by score, as ann-benchmarks counts it: a found neighbour is right when
    its exact score is at least the exact k-th score less ``tie`` (own row left out)."""
    right = 0
    for row, ids, kth in zip(rows, found, kth_scores, strict=True):
        ids = [int(i) for i in ids if i >= 0 and i != row][:k]
        scores = x[ids].astype(np.float64) @ x[row].astype(np.float64)
        right += int(np.sum(scores >= kth - tie))
    return right / (k * len(rows))


def crowded_vectors(work: Path, n: int) -> np.ndarray:
    """``n`` sentences (the real MultiPIT ones and perturbed copies) embedded by the static
    student, cached in ``work``."""
    from parakit.vectors.encode import load_encoder

    work.mkdir(parents=True, exist_ok=True)
    cache = work / f"perturbed-{n}.npy"
    if not cache.is_file():
        texts = list(perturbed_variants(multipit_sentences(159_979), n, seed=0))
        encoder = load_encoder(str(static_student(work)), "torch", batch_size=1024)
        np.save(work / "perturbed.tmp.npy", np.ascontiguousarray(encoder.encode(texts)))
        os.replace(work / "perturbed.tmp.npy", cache)
    return np.load(cache)


def hnsw_inside(faiss: Any, index: Any) -> Any:
    """The HNSW index inside a factory-built one (under a re-ranking or a PCA), or None."""
    while index is not None:
        index = faiss.downcast_index(index)
        if hasattr(index, "hnsw"):
            return index
        index = getattr(index, "base_index", None) or getattr(index, "index", None)
    return None


def crowded_graph(x: np.ndarray, work: Path) -> Any:
    """The default graph (HNSW M 32, fp16 vectors, build breadth 128) of ``x``, built on 2
    threads in batches of 100K and cached in ``work``."""
    import faiss

    cache = work / f"hnsw32-fp16-efc128-{len(x)}.faiss"
    if cache.is_file():
        return faiss.read_index(str(cache))
    faiss.omp_set_num_threads(2)
    index = faiss.index_factory(x.shape[1], "HNSW32,SQfp16", faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = 128
    for first in range(0, len(x), 100_000):
        index.add(x[first : first + 100_000])
    faiss.write_index(index, str(work / "graph.tmp.faiss"))
    os.replace(work / "graph.tmp.faiss", cache)
    return index


def bench_calibration(args: argparse.Namespace) -> None:
    """How many calibration queries decide a recall target? On the cached crowded vectors
    (``crowded_vectors``) and their default graph (``crowded_graph``): recall@5 of ``--rows``
    rows (seed 7) at each ``--breadths`` ``efSearch``, the share of 400 resamples of ``q``
    of them whose 95 % lower bound meets ``--target`` (the calibration's rule), the mean and
    bound that :func:`~parakit.vectors.index.calibration_rows` samples of 1,000 (seeds 0-2)
    measure, and what the graph's own level-0 lists hold (1 and 2 hops, re-scored exactly).
    Prints tables; no ledger."""
    import faiss

    from parakit.vectors.index import Z_95, calibration_rows, recall_per_query

    work = Path(args.workdir)
    x = crowded_vectors(work, args.n)
    index = crowded_graph(x, work)
    faiss.omp_set_num_threads(2)
    rows = np.sort(np.random.default_rng(7).choice(len(x), args.rows, replace=False))
    exact, _ = exact_truth(x, rows)
    queries = np.ascontiguousarray(x[rows])
    per_query = {}
    print(f"| `efSearch` | recall@5 ({args.rows:,} rows) | std a query | ms a query (2 threads) |")
    print("|--:|--:|--:|--:|")
    for ef in args.breadths:
        index.hnsw.efSearch = ef
        start = time.perf_counter()
        found = index.search(queries, 6)[1]
        ms = 1000 * (time.perf_counter() - start) / len(rows)
        per_query[ef] = recall_per_query(found, exact, rows, 5)
        r = per_query[ef]
        print(f"| {ef} | {r.mean():.4f} | {r.std(ddof=1):.3f} | {ms:.3f} |", flush=True)
    draw = np.random.default_rng(0)
    print(f"\nshare of samples of q rows whose lower bound meets {args.target}")
    print("| q | " + " | ".join(str(ef) for ef in args.breadths) + " |")
    print("|--:|" + "--:|" * len(args.breadths))
    for q in args.sizes:
        cells = []
        for r in per_query.values():
            met = 0
            for _ in range(400):
                s = r[draw.choice(len(r), q, replace=False)]
                met += s.mean() - Z_95 * s.std(ddof=1) / np.sqrt(q) >= args.target
            cells.append(f"{met / 400:.2f}")
        print(f"| {q} | " + " | ".join(cells) + " |", flush=True)
    print("\nthe calibration's own samples of 1,000 rows: recall / lower bound")
    print("| seed | " + " | ".join(str(ef) for ef in args.breadths) + " |")
    print("|--:|" + "--:|" * len(args.breadths))
    for seed in (0, 1, 2):
        sample = calibration_rows(len(x), 1000, seed)
        truth, _ = exact_truth(x, sample)
        cells = []
        for ef in args.breadths:
            index.hnsw.efSearch = ef
            r = recall_per_query(index.search(np.ascontiguousarray(x[sample]), 6)[1], truth,
                                 sample, 5)  # fmt: skip
            cells.append(f"{r.mean():.4f} / {r.mean() - Z_95 * r.std(ddof=1) / np.sqrt(1000):.4f}")
        print(f"| {seed} | " + " | ".join(cells) + " |", flush=True)
    # the graph's level-0 lists as candidates: no search at all
    graph = index.hnsw
    links = faiss.vector_to_array(graph.neighbors)
    offsets = faiss.vector_to_array(graph.offsets)
    level0 = int(faiss.vector_to_array(graph.cum_nneighbor_per_level)[1])

    def lists(i: int) -> np.ndarray:
        own = links[int(offsets[i]) : int(offsets[i]) + level0]
        return own[own >= 0]

    for hops in (1, 2):
        found, sizes = [], []
        for i in rows:
            near = lists(i)
            if hops == 2:
                near = np.concatenate([near, *[lists(int(j)) for j in near]])
            near = np.unique(near[near != i])
            sizes.append(len(near))
            best = near[np.argsort(-(x[near] @ x[i]))[:5]]
            found.append(np.pad(best, (0, 5 - len(best)), constant_values=-1))
        recall = recall_per_query(np.stack(found), exact, rows, 5).mean()
        print(f"graph lists, {hops} hop(s): recall@5 {recall:.3f}, {np.mean(sizes):.0f} candidates")


def bench_order(args: argparse.Namespace) -> None:
    """Does searching sentences in cluster order (so that consecutive queries walk the same
    part of the graph) make the search cheaper? ``--queries`` rows of the cached crowded
    vectors searched in chunks of 10K (as ``mine run`` does) at ``--ef``, in row order and
    in the order of their spherical k-means cell (``--cells``), twice each, alternately; the
    neighbours must be the same. Prints timings; no ledger."""
    import faiss

    work = Path(args.workdir)
    x = crowded_vectors(work, args.n)
    index = crowded_graph(x, work)
    faiss.omp_set_num_threads(2)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    kmeans = faiss.Kmeans(x.shape[1], args.cells, niter=10, seed=1, spherical=True)
    kmeans.train(x[rng.choice(len(x), 64 * args.cells, replace=False)])
    cell = kmeans.index.search(x, 1)[1][:, 0]
    print(
        f"k-means of {args.cells} cells, trained and assigned: {time.perf_counter() - start:.1f} s"
    )
    rows = np.sort(rng.choice(len(x), args.queries, replace=False))
    orders = {"row": rows, "cell": rows[np.argsort(cell[rows], kind="stable")]}
    index.hnsw.efSearch = args.ef
    found = {}
    for name in ("row", "cell", "row", "cell"):
        order = orders[name]
        ids = np.empty((len(order), 11), dtype=np.int64)
        start = time.perf_counter()
        for first in range(0, len(order), 10_000):
            ids[first : first + 10_000] = index.search(x[order[first : first + 10_000]], 11)[1]
        seconds = time.perf_counter() - start
        found[name] = ids[np.argsort(order)]
        print(f"{name} order: {1000 * seconds / len(order):.3f} ms a query (2 threads), "
              f"load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    print("same neighbours:", np.array_equal(found["row"], found["cell"]))


def bench_crowded(args: argparse.Namespace) -> None:
    """Which FAISS index searches crowded vectors cheaply: ``--n`` sentences (the real
    MultiPIT ones and perturbed copies, :func:`perturbed_variants`) embedded by the static
    student, each index of ``--specs`` (FAISS factory strings, ``NL`` for ``--nlist``, ``@EF``
    for an HNSW build breadth) built on 2 threads, then for each search breadth (IVF
    ``nprobe``, HNSW ``efSearch``; ``,RFlat`` specs re-rank the best ``--k-factor`` × 10
    exactly, e.g. ``PCA128,HNSW32,SQfp16,RFlat``: a graph of reduced vectors) recall@5 of
    ``--rows`` sampled rows against exact search (their own row left out) and ms a query on
    one thread. Prints a table; no ledger."""
    import faiss

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from ledger import machine

    from parakit.vectors.index import recall_per_query

    x = crowded_vectors(Path(args.workdir), args.n)
    rng = np.random.default_rng(1)
    faiss.omp_set_num_threads(2)
    rows, exact, exact_scores = sampled_truth(x, rng, n_rows=args.rows)
    nlist = args.nlist or int(4 * np.sqrt(len(x)))
    info = machine()
    print(f"{len(x)} vectors of {x.shape[1]} dims; {info['cpu']}, {info['cores']} cores, "
          f"{info['matrix_flags']}, load {os.getloadavg()[0]:.1f}")  # fmt: skip
    print("| index | build s (2 threads) | breadth | recall@5 | recall@5, ties | ms a query |")
    print("|---|--:|--:|--:|--:|--:|")
    for spec in args.specs:
        factory, _, breadth = spec.replace("NL", str(nlist)).partition("@")
        index = faiss.index_factory(x.shape[1], factory, faiss.METRIC_INNER_PRODUCT)
        faiss.omp_set_num_threads(2)
        start = time.perf_counter()
        graph = hnsw_inside(faiss, index)
        if graph is not None:
            graph.hnsw.efConstruction = int(breadth or 40)
        if not index.is_trained:
            index.train(x[rng.choice(len(x), min(len(x), 64 * nlist), replace=False)])
        for first in range(0, len(x), 100_000):
            index.add(x[first : first + 100_000])
        build = time.perf_counter() - start
        faiss.omp_set_num_threads(1)
        for value in args.breadths:
            params = None
            if "RFlat" in factory:  # codes re-ranked exactly: the best k_factor * 10 found
                params = faiss.IndexRefineSearchParameters(
                    k_factor=args.k_factor,
                    base_index_params=faiss.SearchParametersHNSW(efSearch=value)
                    if graph is not None
                    else faiss.SearchParametersIVF(nprobe=value),
                )
            elif graph is not None:
                graph.hnsw.efSearch = value
            else:
                faiss.extract_index_ivf(index).nprobe = value
            start = time.perf_counter()
            _, found = index.search(x[rows], 10, params=params)
            ms = 1000 * (time.perf_counter() - start) / len(rows)
            recall = recall_per_query(found, exact, rows, 5).mean()
            ties = tie_recall(x, rows, found, exact_scores[:, 4], 5, args.tie)
            cells = [spec, f"{build:.0f}", value, f"{recall:.3f}", f"{ties:.3f}", f"{ms:.3f}"]
            print("| " + " | ".join(map(str, cells)) + " |", flush=True)
        del index


def bench_route(args: argparse.Namespace) -> None:
    """Could shards by k-means cell cut the search? Each sentence would search only the ``p``
    shards whose centroids are nearest to it, instead of every shard. For the cached vectors
    of ``crowded --n N`` (run that first), shards of spherical k-means cells (trained on 200K
    rows, seed 1), and 2,000 sampled rows: the share of each row's exact top 5 (own row left
    out) that lies in its ``p`` nearest shards, an upper bound of the recall such a search
    reaches. Prints a table; no ledger."""
    import faiss

    x = np.load(Path(args.workdir) / f"perturbed-{args.n}.npy", mmap_mode="r")
    rng = np.random.default_rng(1)
    rows, top, _ = sampled_truth(x, rng)
    queries = np.ascontiguousarray(x[rows])
    train = np.ascontiguousarray(x[np.sort(rng.choice(len(x), min(len(x), 200_000), False))])
    print(f"{len(x)} vectors; share of the exact top 5 in the p nearest shards")
    print("| shards | rows a shard | " + " | ".join(f"p = {p}" for p in range(1, 5)) + " |")
    print("|--:|---|" + "--:|" * 4)
    for shards in args.shards:
        kmeans = faiss.Kmeans(x.shape[1], shards, niter=20, seed=1, spherical=True)
        kmeans.train(train)
        cell = np.concatenate(
            [np.argmax(np.asarray(x[a : a + 200_000]) @ kmeans.centroids.T, axis=1)
             for a in range(0, len(x), 200_000)]
        )  # fmt: skip
        sizes = np.bincount(cell, minlength=shards)
        nearest = np.argsort(-(queries @ kmeans.centroids.T), axis=1)
        cells = [
            f"{np.mean([np.isin(cell[t], nearest[j, :p]).mean() for j, t in enumerate(top)]):.3f}"
            if p <= shards
            else "—"
            for p in range(1, 5)
        ]
        print(f"| {shards} | {sizes.min():,}-{sizes.max():,} | " + " | ".join(cells) + " |")


def bench_shard_recall(args: argparse.Namespace) -> None:
    """What the recall of a sharded run is, against what each shard was calibrated to: for a
    finished (or stopped) cluster run's work folder (``emb/`` and ``shards/``), ``--queries``
    sampled rows searched against every shard at each ``--ef``, the shards' results merged as
    the run merges them, and recall@``--k`` of the merged top against exact search over all
    rows (own row left out). Each shard is calibrated alone to recall@k of its own rows, while
    a sentence's global neighbours are mostly its shards' first few: the merged recall can
    meet the target at a smaller ``efSearch``. One shard in memory at a time. Prints a table."""
    import faiss

    from parakit.mine.distributed import ShardedIndex, merge_results
    from parakit.vectors.index import Z_95, ChunkedVectors, VectorIndex, recall_per_query

    work = Path(args.job)
    vectors = ChunkedVectors(work / "emb")
    n = sum(len(c) for c in vectors.chunks)
    rows = np.sort(np.random.default_rng(1).choice(n, args.queries, replace=False))
    queries = np.ascontiguousarray(vectors[rows], dtype=np.float32)
    faiss.omp_set_num_threads(2)
    best_i, _ = VectorIndex(recall_k=args.k)._exact(lambda: iter(vectors.chunks), None, queries)
    found: dict[int, list] = {ef: [] for ef in args.ef}
    seconds: dict[int, float] = dict.fromkeys(args.ef, 0.0)
    paths = ShardedIndex.load(work / "shards").paths
    faiss.omp_set_num_threads(1)
    for path in paths:
        shard = VectorIndex.load(path)
        for ef in args.ef:
            faiss.downcast_index(shard.index_.index).hnsw.efSearch = ef
            start = time.perf_counter()
            found[ef].append(shard.search(queries, args.k + 1))
            seconds[ef] += time.perf_counter() - start
        del shard
    print(f"{n} vectors in {len(paths)} shards, {len(rows)} queries, recall@{args.k}")
    print("| efSearch | merged recall | lower bound (95%) | ms a query a shard (1 thread) |")
    print("|--:|--:|--:|--:|")
    for ef in args.ef:
        merged = merge_results(found[ef], args.k + 1)[1]
        per_query = recall_per_query(merged, best_i, rows, args.k)
        lower = per_query.mean() - Z_95 * per_query.std(ddof=1) / np.sqrt(len(per_query))
        ms = 1000 * seconds[ef] / len(rows) / len(paths)
        print(f"| {ef} | {per_query.mean():.4f} | {lower:.4f} | {ms:.3f} |", flush=True)


def bench_selfstart(args: argparse.Namespace) -> None:
    """Mining is a self-join: every sentence searched is a node of the graph. Does a search
    that starts at the sentence's own node (``VectorIndex.search(..., rows=)``: FAISS
    ``search_level_0``) find more at a smaller ``efSearch`` than one that descends from the
    graph's entry point? On a finished ``mine run`` work folder (``emb/`` and its HNSW
    index; ``--ef-construction N``: a graph of that build breadth built here from ``emb/``,
    timed): ``--queries`` rows (seed 7) against exact search over all rows, own row left
    out, both ways at each ``--ef``, on 2 threads. Prints a table; no ledger."""
    import faiss

    from parakit.vectors.index import Z_95, ChunkedVectors, VectorIndex, recall_per_query

    work = Path(args.job)
    vectors = ChunkedVectors(work / "emb")
    n = sum(len(c) for c in vectors.chunks)
    rows = np.sort(np.random.default_rng(7).choice(n, args.queries, replace=False))
    queries = np.ascontiguousarray(vectors[rows], dtype=np.float32)
    truth, _ = VectorIndex(recall_k=args.k)._exact(lambda: iter(vectors.chunks), None, queries)
    faiss.omp_set_num_threads(2)
    if args.ef_construction:
        start = time.perf_counter()
        index = VectorIndex(kind="hnsw", ef_construction=args.ef_construction, self_join=True)
        index.build(lambda: iter(vectors.chunks), n=n, progress=True)
        print(f"graph of build breadth {args.ef_construction}: "
              f"{time.perf_counter() - start:.0f} s on 2 threads")  # fmt: skip
    else:
        index = VectorIndex.load(next(work.glob("**/index.faiss")).parent)
    graph = faiss.downcast_index(index.index_.index).hnsw
    print(f"{n:,} vectors, {len(rows):,} queries, recall@{args.k}; ms a query on 2 threads")
    print("| `efSearch` | from the entry point | ms | from the own node | ms |")
    print("|--:|--:|--:|--:|--:|")
    for ef in args.ef:
        graph.efSearch = ef
        cells = []
        for own in (None, rows):
            start = time.perf_counter()
            found = index.search(queries, args.k + 1, rows=own)[1]
            ms = 1000 * (time.perf_counter() - start) / len(rows)
            r = recall_per_query(found, truth, rows, args.k)
            lower = r.mean() - Z_95 * r.std(ddof=1) / np.sqrt(len(r))
            cells += [f"{r.mean():.4f} (lower {lower:.4f})", f"{ms:.3f}"]
        print(f"| {ef} | " + " | ".join(cells) + " |", flush=True)


def bench_gaps(args: argparse.Namespace) -> None:
    """How crowded a mining run's neighbourhoods are: for ``--sample`` rows of the job's
    embeddings, the cosine gap between the exact ``k``-th and ``k+1``-th neighbours (own row
    left out), as shares of rows under each threshold. Prints a table; no ledger."""
    import faiss

    emb = Path(args.job) / "emb"
    if not any(emb.glob("0*.npy")):
        sys.exit(f"{emb}: no embedding chunks here (give a mine run's work folder)")
    x = np.concatenate([np.load(f) for f in sorted(emb.glob("0*.npy"))]).astype(np.float32)
    rows = np.sort(np.random.default_rng(1).choice(len(x), args.sample, replace=False))
    scores, ids = faiss.knn(x[rows], x, args.k + 2, metric=faiss.METRIC_INNER_PRODUCT)
    gaps = []
    for row, s_row, i_row in zip(rows, scores, ids, strict=True):
        kept = s_row[i_row != row]
        gaps.append(kept[args.k - 1] - kept[args.k])
    gaps_arr = np.asarray(gaps)
    print(f"{len(x)} vectors, {len(rows)} rows: gap between neighbour {args.k} and {args.k + 1}")
    print("| gap at most | share of rows |\n|---|--:|")
    for threshold in (0.0, 1e-4, 1e-3, 1e-2):
        print(f"| {threshold:g} | {(gaps_arr <= threshold).mean():.3f} |")


def _no_client():
    return contextlib.nullcontext(None)


def bench_cluster(args: argparse.Namespace) -> None:
    """Issue 28 item 3: the same ``mine run`` (``--n`` MultiPIT sentences, the static student,
    an embedding classifier trained on MultiPIT expert train) in one process and on a
    LocalCluster of ``--workers`` processes, with one worker SIGKILLed once ``--kill-after``
    of the embedding chunks exist; checks that both write the same pairs. One unit of the
    ``mine-cluster`` ledger per configuration."""
    import signal
    import threading

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from ledger import Ledger, UnitClock

    from parakit.io import read
    from parakit.mine.distributed import cluster_client
    from parakit.mine.mining import mine
    from parakit.models.baselines import EmbeddingClassifier
    from parakit.vectors.encode import load_encoder

    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    model = str(static_student(work))
    collection = work / f"collection-{args.n}.txt"
    texts = multipit_sentences(args.n)
    collection.write_text("\n".join(t.replace("\n", " ") for t in texts) + "\n", "utf-8")
    train = read(DATA / "multipit" / "expert-train.csv", format="multipit")
    classifier = EmbeddingClassifier(model, "labels", "torch").fit(train)
    encoder = load_encoder(model, "torch", batch_size=256)
    ledger = Ledger("mine-cluster", commit=args.commit)
    settings = dict(k=5, classifier=classifier, min_probability=0.5, index_kind="flat",
                    chunk_size=args.chunk_size, progress=False)  # fmt: skip
    outputs = {}
    for workers in (0, args.workers):
        unit = {
            "n": len(texts),
            "model": "static-offline-minilm-256",
            "workers": workers,
            "chunk_size": args.chunk_size,
            "kill_after": args.kill_after if workers else None,
            # the first rows (without these keys) predate equal scores ordered by row id and
            # exact (float64) re-scoring: ties made 3, then 8 of 122,892 pairs differ
            "tie_order": "row id",
            "scores": "exact",
        }
        job = work / f"job-{workers}"
        if job.exists():
            import shutil

            shutil.rmtree(job)
        clock = UnitClock()
        start = time.perf_counter()
        killed = None
        if workers == 0:
            result = mine(collection, job, encoder, job / "pairs.jsonl", **settings)
        else:
            with cluster_client(workers) as client:
                pids = client.run(os.getpid)
                box: dict = {}

                def run(box: dict = box, job: Path = job, client: object = client) -> None:
                    box["result"] = mine(
                        collection, job, encoder, job / "pairs.jsonl", client=client, **settings
                    )

                thread = threading.Thread(target=run)
                thread.start()
                chunks = -(-len(texts) // args.chunk_size)
                while thread.is_alive() and len(list(job.glob("emb/*.npy"))) < max(
                    1, int(args.kill_after * chunks)
                ):
                    time.sleep(0.01)
                if thread.is_alive():
                    killed = sorted(pids)[0]
                    os.kill(pids[killed], signal.SIGKILL)
                thread.join()
                result = box["result"]
        total = time.perf_counter() - start
        outputs[workers] = (job / "pairs.jsonl").read_text(encoding="utf-8").splitlines()[1:]
        metrics = {
            "total_s": round(total, 1),
            **{f"{step}_s": round(v, 1) for step, v in result.seconds.items()},
            "written": result.n_written,
            "worker_killed": killed is not None,
        }
        if workers:
            same = [json.loads(line)["id"] for line in outputs[0]] == [
                json.loads(line)["id"] for line in outputs[workers]
            ]
            metrics["same_pairs_as_one_process"] = same
        ledger.record(unit, metrics, clock=clock.read())
        print(json.dumps({"unit": unit, "metrics": metrics}))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("embed")
    p.add_argument("--n", type=int, default=2000)
    p = sub.add_parser("vectors")
    p.add_argument("--n", type=int, default=159_979)
    p.add_argument("--backend", default="onnx")
    p.add_argument("--out", default="out/bench-vectors")
    p = sub.add_parser("compare")
    p.add_argument("--sizes", type=int, nargs="+", default=[2000, 4000, 8000])
    p.add_argument("--backend", default="onnx")
    p.add_argument("--recall", type=float, default=0.95)
    p.add_argument("--workdir", default="out/bench-compare")
    p = sub.add_parser("compare-search")
    p.add_argument("--vectors", default="out/bench-vectors")
    p.add_argument("--sizes", type=int, nargs="+", default=[20_000, 40_000, 80_000, 159_979])
    p.add_argument("--kind", default="auto")
    p.add_argument("--recall", type=float, default=0.95)
    p.add_argument("--pm-max", type=int, default=200_000, help="largest N for paraphrase_mining")
    p.add_argument("--sample", type=int, default=2000)
    p = sub.add_parser("e2e")
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--backend", default="onnx")
    p.add_argument("--index", default="auto")
    p.add_argument("--recall", type=float, default=0.95, help="0: no calibration")
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
    p = sub.add_parser("static")
    p.add_argument("--teacher", default="offline-minilm")
    p.add_argument("--pca-dims", type=int, default=256)
    p.add_argument("--pools", type=int, nargs="+", default=[20_000, 50_000])
    p.add_argument("--precision", default="fp32", help="the teacher's (the static one: fp32)")
    p.add_argument("--workdir", default="out/bench-static")
    p.add_argument("--commit", action="store_true", help="commit each ledger line")
    p = sub.add_parser("codes")
    p.add_argument("--n", type=int, default=159_979)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--sample", type=int, default=1000, help="rows whose recall is measured")
    p.add_argument("--recall", type=float, default=0.9, help="the calibrator's target (auto)")
    p.add_argument("--workdir", default="out/bench-codes")
    p.add_argument("--commit", action="store_true", help="commit each ledger line")
    p = sub.add_parser("cascade")
    p.add_argument("--teacher", default="offline-minilm")
    p.add_argument("--pool", type=int, default=50_000, help="MultiPIT auto sentences")
    p.add_argument("--k", type=int, default=5, help="neighbours kept per sentence")
    p.add_argument(
        "--cascades", nargs="+", default=["20:0.5"],
        help="cascade settings WIDE_K:MIN_PROBABILITY (the student's k, the classifier's cut)",
    )  # fmt: skip
    p.add_argument("--precision", default="fp32", help="the teacher's (the static one: fp32)")
    p.add_argument("--workdir", default="out/bench-cascade")
    p.add_argument("--commit", action="store_true", help="commit each ledger line")
    p = sub.add_parser("scale")
    p.add_argument("--sizes", type=int, nargs="+", default=[1_000_000])
    p.add_argument("--model", default="static", help="static: the distilled student")
    p.add_argument("--teacher", default="offline-minilm")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--backend", default="torch", help="mine run's default: torch")
    p.add_argument("--recall", type=float, default=0.95, help="mine run's default: 0.95")
    p.add_argument("--workers", type=int, default=0, help="LocalCluster processes (0: none)")
    p.add_argument(
        "--shards", type=int, default=None,
        help="index shards (mine run's default: one per worker); smaller shards build and "
        "search at the small-index rate, each sentence searches every shard",
    )  # fmt: skip
    p.add_argument(
        "--variants", default="unigram", choices=["unigram", "perturbed"],
        help="synthetic sentences past the real 159,979: words drawn at random from the real "
        "word frequencies (unigram), or real sentences with 40%% of their words redrawn",
    )  # fmt: skip
    p.add_argument("--workdir", default="out/bench-scale")
    p.add_argument("--commit", action="store_true", help="commit each ledger line")
    p.add_argument(
        "--stages", action="store_true",
        help="also record each step as it ends, and the search's rate on the way "
        "(ledger mine-scale-stages): figures from a run longer than a session",
    )  # fmt: skip
    p = sub.add_parser("crowded")
    p.add_argument("--n", type=int, default=2_000_000)
    p.add_argument("--nlist", type=int, default=None, help="IVF cells (default 4 sqrt(n))")
    p.add_argument(
        "--specs", nargs="+", default=["IVFNL,Flat", "IVFNL,SQ8", "HNSW32@128"],
        help="FAISS factory strings; NL: --nlist; @EF: an HNSW build breadth",
    )  # fmt: skip
    p.add_argument("--breadths", type=int, nargs="+", default=[8, 16, 32, 64, 128])
    p.add_argument("--k-factor", type=float, default=4, help="re-ranking depth of ,RFlat specs")
    p.add_argument(
        "--tie", type=float, default=1e-3, help="score margin of the tie-counting recall column"
    )
    p.add_argument("--rows", type=int, default=2000, help="rows whose recall is measured")
    p.add_argument("--workdir", default="out/bench-crowded")
    p = sub.add_parser("calibration")
    p.add_argument("--n", type=int, default=1_000_000, help="the crowded run's --n (its cache)")
    p.add_argument("--rows", type=int, default=10_000)
    p.add_argument("--breadths", type=int, nargs="+", default=[128, 160, 192, 256, 384])
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    p.add_argument("--target", type=float, default=0.95)
    p.add_argument("--workdir", default="out/bench-crowded")
    p = sub.add_parser("order")
    p.add_argument("--n", type=int, default=1_000_000, help="the crowded run's --n (its cache)")
    p.add_argument("--queries", type=int, default=250_000)
    p.add_argument("--cells", type=int, default=1024)
    p.add_argument("--ef", type=int, default=160)
    p.add_argument("--workdir", default="out/bench-crowded")
    p = sub.add_parser("route")
    p.add_argument("--n", type=int, default=200_000, help="the crowded run's --n (its cache)")
    p.add_argument("--shards", type=int, nargs="+", default=[2, 4, 10, 20])
    p.add_argument("--workdir", default="out/bench-crowded")
    p = sub.add_parser("shard-recall")
    p.add_argument("job", help="a cluster mine run's work folder (emb/ and shards/)")
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--ef", type=int, nargs="+", default=[8, 12, 16, 24, 32, 48])
    p = sub.add_parser("selfstart")
    p.add_argument("job", help="a mine run work folder with an HNSW index")
    p.add_argument("--queries", type=int, default=4000)
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--ef", type=int, nargs="+", default=[16, 24, 32, 48, 64, 96, 128, 160])
    p.add_argument("--ef-construction", type=int, default=None, help="build a graph here")
    p = sub.add_parser("gaps")
    p.add_argument("job", help="a mine run's work folder (its emb/ chunks)")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--sample", type=int, default=1000)
    p = sub.add_parser("cluster")
    p.add_argument("--n", type=int, default=50_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--chunk-size", type=int, default=2_000)
    p.add_argument("--kill-after", type=float, default=0.3, help="share of embedding chunks")
    p.add_argument("--workdir", default="out/bench-cluster")
    p.add_argument("--commit", action="store_true", help="commit each ledger line")
    args = parser.parse_args()
    {
        "scale": bench_scale,
        "cluster": bench_cluster,
        "gaps": bench_gaps,
        "crowded": bench_crowded,
        "calibration": bench_calibration,
        "order": bench_order,
        "route": bench_route,
        "shard-recall": bench_shard_recall,
        "selfstart": bench_selfstart,
        "cascade": bench_cascade,
        "codes": bench_codes,
        "static": bench_static,
        "embed": bench_embed,
        "vectors": bench_vectors,
        "compare": bench_compare,
        "compare-search": bench_compare_search,
        "e2e": bench_e2e,
        "search": bench_search,
        "memory": bench_memory,
    }[args.what](args)
    print(
        f"\n({time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, "
        f"{json.dumps({'load_avg': round(os.getloadavg()[0], 1)})})"
    )


if __name__ == "__main__":
    main()
