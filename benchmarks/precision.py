"""fp32 against bf16 autocast (and the ONNX backends) on this CPU: speed and what it costs.

Run from the repository root (HF_HUB_OFFLINE=1, the offline models installed)::

    python benchmarks/precision.py embed --n 2000                  # offline-minilm
    python benchmarks/precision.py embed --n 1000 --model offline-mpnet
    python benchmarks/precision.py steps --model offline-minilm    # cross-encoder step + predict
    python benchmarks/precision.py int8 --n 1000                   # where the ONNX time goes
    python benchmarks/precision.py f1 --train 320 --dev 300        # cross-encoder dev F1, both

``embed``: real MultiPIT auto sentences through sentence-transformers' own fp32 ``encode`` (the
reference) and parakit's encoders; per row sentences/s (wall and per CPU-second of the process),
mean/min cosine to the fp32 vectors and neighbour recall@5 (each sentence's 5 nearest among the
n, itself left out) against the fp32 neighbours. ``steps``: one cross-encoder training step
(32 pairs x 64 tokens, AdamW) and one prediction batch, fp32 against bf16 autocast.

Each prints a Markdown table with the CPU's matrix-unit flags and the load average beside it;
figures go to docs/benchmarks.md#precision-bf16-and-int8-on-this-cpu.
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from pathlib import Path

import numpy as np

# the data folder and the MultiPIT sentence sampler of the mining benchmark, not a second copy
from mine import DATA, multipit_sentences, recall_at


def multipit_pairs(n: int) -> tuple[list[str], list[str]]:
    with open(DATA / "multipit" / "expert-train.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))[:n]
    return [r["sentence1"] for r in rows], [r["sentence2"] for r in rows]


def neighbours(vectors: np.ndarray, k: int = 5) -> np.ndarray:
    """Exact k nearest neighbours by inner product, the sentence itself left out."""
    scores = vectors @ vectors.T
    np.fill_diagonal(scores, -np.inf)
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def int8_encoder(model: str, mode: str | None, **options):
    """An :class:`OnnxEncoder` on an int8 graph made here from its cached fp32 export (the
    library keeps fp32 only since issue 24): ``dynamic`` = ONNX Runtime dynamic quantisation
    (int8 weights per channel, uint8 activations per tensor, VNNI kernels); ``block`` = 8-bit
    ``MatMulNBits`` (weights and activations in blocks of 32, accuracy level 4); None = fp32."""
    from parakit.vectors.encode import OnnxEncoder

    class Int8(OnnxEncoder):
        def _export(self) -> Path:
            fp32 = super()._export()
            if mode is None:
                return fp32
            target = fp32.with_name(f"model-int8-{mode}.onnx")
            if not target.exists():
                tmp = target.with_suffix(".tmp.onnx")
                if mode == "dynamic":
                    from onnxruntime.quantization import QuantType, quantize_dynamic

                    quantize_dynamic(
                        str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True
                    )
                else:
                    import onnx
                    from onnxruntime.quantization.matmul_nbits_quantizer import (
                        MatMulNBitsQuantizer,
                    )

                    quantizer = MatMulNBitsQuantizer(
                        onnx.load(str(fp32)),
                        bits=8,
                        block_size=32,
                        is_symmetric=True,
                        accuracy_level=4,
                    )
                    quantizer.process()
                    quantizer.model.save_model_to_file(str(tmp), use_external_data_format=False)
                os.replace(tmp, target)
            return target

    return Int8(model, **options)


def header(what: str) -> None:
    from parakit.vectors.precision import cpu_summary

    cpu = cpu_summary()
    print(
        f"\n{what}\nCPU flags: {' '.join(cpu['flags']) or 'none'}; precision auto -> "
        f"{cpu['auto']}; threads {os.cpu_count()}; load average {os.getloadavg()[0]:.2f} "
        "at start"
    )


def bench_embed(args: argparse.Namespace) -> None:
    from sentence_transformers import SentenceTransformer

    from parakit.offline import resolve_model
    from parakit.vectors.encode import SentenceEncoder

    texts = multipit_sentences(args.n)
    model = resolve_model(args.model)
    header(f"Embedding {len(texts)} MultiPIT auto sentences with {args.model}")
    st = SentenceTransformer(model, device="cpu")
    rows: list[tuple[str, callable]] = [
        (
            "sentence-transformers `encode`, fp32 (reference)",
            lambda t: st.encode(t, batch_size=64, normalize_embeddings=True),
        ),
        ("parakit torch, fp32, batch 64", SentenceEncoder(model, precision="fp32").encode),
        (
            "parakit torch, bf16 (`--precision auto` here), batch 64",
            SentenceEncoder(model, precision="bf16").encode,
        ),
        (
            "parakit torch, bf16, batch 256",
            SentenceEncoder(model, precision="bf16", batch_size=256).encode,
        ),
    ]
    if args.onnx:
        rows += [
            ("ONNX Runtime fp32 (`onnx`)", int8_encoder(model, None).encode),
            ("ONNX Runtime dynamic int8 (removed)", int8_encoder(model, "dynamic").encode),
            ("ONNX Runtime block int8, MatMulNBits (removed)", int8_encoder(model, "block").encode),
        ]
    # every encoder embeds the same chunk in turn (rotating order), so all of them see the same
    # load on a shared machine; speed = sentences / summed time over all chunks
    for _, encode in rows:
        encode(texts[:64])  # load / export / warm-up outside the timing
    parts: dict[str, list[np.ndarray]] = {name: [] for name, _ in rows}
    wall = dict.fromkeys(parts, 0.0)
    cpu = dict.fromkeys(parts, 0.0)
    for index, start in enumerate(range(0, len(texts), args.chunk)):
        chunk = texts[start : start + args.chunk]
        for name, encode in rows[index % len(rows) :] + rows[: index % len(rows)]:
            t0, c0 = time.perf_counter(), time.process_time()
            parts[name].append(np.asarray(encode(chunk), dtype=np.float32))
            wall[name] += time.perf_counter() - t0
            cpu[name] += time.process_time() - c0
    reference = np.vstack(parts[rows[0][0]])
    truth = neighbours(reference)
    results = []
    for name, _ in rows:
        vectors = np.vstack(parts[name])
        cosine = (vectors * reference).sum(axis=1)
        results.append(
            (
                name,
                len(texts) / wall[name],
                len(texts) / cpu[name],
                cosine.mean(),
                cosine.min(),
                recall_at(neighbours(vectors), truth),
            )
        )
    base = results[0][1]
    print(f"load average {os.getloadavg()[0]:.2f} at the end\n")
    print(
        "| encoder | sentences/s (wall) | x fp32 encode | sentences per CPU-second | "
        "mean cos to fp32 | min cos | recall@5 vs fp32 neighbours |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, wall_rate, cpu_rate, mean_cos, min_cos, rec in results:
        print(
            f"| {name} | {wall_rate:.0f} | {wall_rate / base:.2f} | {cpu_rate:.0f} | "
            f"{mean_cos:.5f} | {min_cos:.5f} | {rec:.3f} |"
        )


def bench_steps(args: argparse.Namespace) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from parakit.offline import resolve_model
    from parakit.vectors.precision import autocast

    path = resolve_model(args.model)
    tok = AutoTokenizer.from_pretrained(path)
    t1, t2 = multipit_pairs(args.batch)
    batch = tok(t1, t2, truncation=True, max_length=64, padding="max_length", return_tensors="pt")
    labels = torch.tensor([i % 2 for i in range(len(t1))])
    header(f"Cross-encoder {args.model}: {len(t1)} MultiPIT pairs x 64 tokens")
    out = {}
    for precision in ("fp32", "bf16"):
        torch.manual_seed(0)
        model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=2)
        optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
        train, infer = [], []
        for repeat in range(args.repeats + 1):  # the first of each is a warm-up
            model.train()
            start = time.perf_counter()
            with autocast(precision, "cpu"):
                loss = torch.nn.functional.cross_entropy(model(**batch).logits.float(), labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            train.append(time.perf_counter() - start)
            model.eval()
            start = time.perf_counter()
            with torch.inference_mode(), autocast(precision, "cpu"):
                proba = model(**batch).logits.float().softmax(-1)
            infer.append(time.perf_counter() - start)
            if repeat == 0:
                out.setdefault("proba", {})[precision] = proba[:, 1].numpy()
        out[precision] = (float(np.median(train[1:])), float(np.median(infer[1:])))
    diff = np.abs(out["proba"]["fp32"] - out["proba"]["bf16"]).max()
    print(f"load average {os.getloadavg()[0]:.2f} at the end\n")
    print("| model | fp32 train step | bf16 train step | fp32 inference | bf16 inference |")
    print("|---|---:|---:|---:|---:|")
    (ft, fi), (bt, bi) = out["fp32"], out["bf16"]
    print(
        f"| {args.model} | {ft:.2f} s | {bt:.2f} s ({ft / bt:.1f}x) | {fi:.3f} s | "
        f"{bi:.3f} s ({fi / bi:.1f}x) |"
    )
    print(f"\nlargest |P(fp32) - P(bf16)| of the first step's predictions: {diff:.4f}")


def bench_int8(args: argparse.Namespace) -> None:
    """Why int8 ONNX is no faster here: per graph, node counts by operator, and ONNX Runtime's
    own profile of where the time goes (share per operator type) on the same sentences."""
    import collections
    import json

    import onnx
    import onnxruntime as ort

    from parakit.offline import resolve_model

    texts = multipit_sentences(args.n)
    model = resolve_model(args.model)
    header(f"ONNX Runtime {ort.__version__}: {len(texts)} MultiPIT auto sentences, {args.model}")
    graphs = {"fp32": False, "dynamic int8": "dynamic", "block int8": "block"}
    profiles = {}
    for name, mode in graphs.items():
        encoder = int8_encoder(model, mode, threads=args.threads)
        path = encoder._export()
        ops = collections.Counter(n.op_type for n in onnx.load(str(path)).graph.node)
        options = ort.SessionOptions()
        options.enable_profiling = True
        options.profile_file_prefix = f"/tmp/parakit-ort-{mode}"
        if args.threads:
            options.intra_op_num_threads = args.threads
        encoder._session()  # tokenizer and settings; then the same graph with profiling on
        encoder._sess = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        encoder.encode(texts)
        trace = json.loads(Path(encoder._sess.end_profiling()).read_text())
        per_op: collections.Counter[str] = collections.Counter()
        for event in trace:
            if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
                per_op[event["args"]["op_name"]] += event["dur"]
        total = sum(per_op.values())
        profiles[name] = (ops, per_op, total)
    print(f"load average {os.getloadavg()[0]:.2f} at the end\n")
    kinds = sorted({k for _, per_op, _ in profiles.values() for k in per_op})
    kinds.sort(key=lambda k: -profiles["fp32"][1].get(k, 0))
    print("| operator | " + " | ".join(f"{g}: nodes, ms (share)" for g in profiles) + " |")
    print("|---|" + "---:|" * len(profiles))
    for kind in kinds:
        cells = []
        for ops, per_op, total in profiles.values():
            ms = per_op.get(kind, 0) / 1000
            cells.append(f"{ops.get(kind, 0)}, {ms:.0f} ({100 * per_op.get(kind, 0) / total:.0f}%)")
        print(f"| {kind} | " + " | ".join(cells) + " |")
    print(
        "| **all kernels** | "
        + " | ".join(f"{sum(o.values())}, {t / 1000:.0f}" for o, _, t in profiles.values())
        + " |"
    )


def bench_f1(args: argparse.Namespace) -> None:
    """The same cross-encoder recipe trained and evaluated in fp32 and in bf16: dev F1 and time."""
    from parakit.io import read
    from parakit.models.cross_encoder import CrossEncoderClassifier
    from parakit.schema import PairSet

    train = read(DATA / "multipit" / "expert-train.csv", format="multipit")
    dev = read(DATA / "multipit" / "expert-val.csv", format="multipit")
    rng = np.random.default_rng(0)  # the files are ordered by topic: sample, do not slice
    train = PairSet([train[i] for i in sorted(rng.choice(len(train), args.train, False))])
    dev = PairSet([dev[i] for i in sorted(rng.choice(len(dev), args.dev, False))])
    header(f"Cross-encoder {args.model}: {len(train)} train / {len(dev)} dev MultiPIT expert pairs")
    rows = []
    for precision in ("fp32", "bf16"):
        start, cpu0 = time.perf_counter(), time.process_time()
        model = CrossEncoderClassifier(
            args.model,
            max_length=64,
            learning_rate=args.lr,
            epochs=args.epochs,
            batch_size=32,
            micro_batch_size=32,
            precision=precision,
            seed=args.seed,
            progress=False,
        ).fit(train, eval_set=dev)
        rows.append(
            (
                precision,
                [round(100 * h["dev_score"], 2) for h in model.history_],
                100 * model.best_score_,
                time.perf_counter() - start,
                time.process_time() - cpu0,
            )
        )
    print(f"load average {os.getloadavg()[0]:.2f} at the end\n")
    print("| precision | dev F1 per evaluation | best dev F1 | wall s | CPU s |")
    print("|---|---|---:|---:|---:|")
    for precision, f1s, best, wall, cpu in rows:
        print(f"| {precision} | {f1s} | {best:.2f} | {wall:.0f} | {cpu:.0f} |")


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("embed")
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--model", default="offline-minilm")
    p.add_argument("--onnx", action="store_true", help="add the ONNX fp32 and int8 rows")
    p.add_argument("--chunk", type=int, default=256, help="sentences per interleaved chunk")
    p = sub.add_parser("int8")
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--model", default="offline-minilm")
    p.add_argument("--threads", type=int, default=None)
    p = sub.add_parser("f1")
    p.add_argument("--model", default="offline-minilm")
    p.add_argument("--train", type=int, default=320)
    p.add_argument("--dev", type=int, default=300)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--seed", type=int, default=42)
    p = sub.add_parser("steps")
    p.add_argument("--model", default="offline-minilm")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    {"embed": bench_embed, "steps": bench_steps, "int8": bench_int8, "f1": bench_f1}[args.what](
        args
    )


if __name__ == "__main__":
    main()
