"""The results ledger: one JSON line per finished unit of a heavy run, committed with the code.

A heavy run (one learning rate x epoch of a recipe, one lambda of the noisy-label table, one
student, one mining size) appends a line to ``benchmarks/results/<run>.jsonl`` the moment the
unit finishes: the command, the commit, the config, the metrics, wall and CPU seconds, the CPU's
flags, the machine's load while it ran and the device. A rerun of the same command asks
:meth:`Ledger.has` and skips what the ledger already holds, so a run cut off anywhere loses at
most the unit in progress. ``--commit`` on the runs commits the ledger after every line, so a
session that ends mid-run keeps what finished.

The tables of ``docs/benchmarks.md`` for these runs are generated from the ledger by this
script, between ``<!-- ledger:NAME -->`` and ``<!-- /ledger:NAME -->`` markers::

    python benchmarks/ledger.py tables            # rewrite the tables in docs/benchmarks.md
    python benchmarks/ledger.py tables --check    # exit 1 when the docs are not up to date
    python benchmarks/ledger.py show paper-recipe # the ledger's lines, one per unit
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import resource
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# LEDGER_DIR: write the ledgers elsewhere (a lent GPU machine writes them where they come back)
RESULTS = Path(os.environ.get("LEDGER_DIR") or ROOT / "benchmarks" / "results")
DOCS = ROOT / "docs" / "benchmarks.md"


def unit_key(unit: dict[str, Any]) -> str:
    """The canonical spelling of a unit (sorted keys, floats as ``repr``): equal units, equal
    keys, whatever order or int/float spelling the caller used for whole numbers."""

    def norm(value: Any) -> Any:
        if isinstance(value, float) and value.is_integer() and abs(value) >= 1:
            return int(value)
        return value

    return json.dumps({k: norm(v) for k, v in unit.items()}, sort_keys=True)


def git_commit() -> str:
    """The checkout's commit, with ``+dirty`` when tracked files differ from it."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "diff", "--quiet", "HEAD", "--", "src", "benchmarks/*.py"],
            capture_output=True,
        ).returncode
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        # a copy of the checkout without its .git (a lent GPU machine): the caller names it
        return os.environ.get("LEDGER_COMMIT", "unknown")


def machine() -> dict[str, Any]:
    """What a figure needs to be comparable: the CPU, its vector and matrix flags, the cores
    and threads torch uses, and the accelerator (``cpu`` where none)."""
    from parakit.vectors.precision import cpu_flags, cpu_summary

    summary = cpu_summary()
    flags = cpu_flags()
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                model = line.partition(":")[2].strip()
                break
    info: dict[str, Any] = {
        "cpu": model,
        "simd": [f for f in ("avx2", "avx512f") if f in flags],
        "matrix_flags": summary["flags"],
        "cpu_bf16": summary["bf16"],
        "cores": os.cpu_count(),
        "device": "cpu",
    }
    autogroup = Path("/proc/sys/kernel/sched_autogroup_enabled")
    if autogroup.is_file():  # 1: nice only orders processes within one session (see docs)
        info["sched_autogroup"] = int(autogroup.read_text().strip() or 0)
    try:
        import torch

        info["torch_threads"] = torch.get_num_threads()
        if torch.cuda.is_available():
            info["device"] = torch.cuda.get_device_name(0)
    except ImportError:
        pass
    return info


class LoadSampler:
    """The machine's 1-minute load average, sampled every ``every`` seconds in a thread, so a
    figure says how loaded the (shared) machine was while it was taken."""

    def __init__(self, every: float = 15.0) -> None:
        self.every = every
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.samples.append(os.getloadavg()[0])

    def start(self) -> LoadSampler:
        self.samples = [os.getloadavg()[0]]
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> float:
        self._stop.set()
        self.samples.append(os.getloadavg()[0])
        return self.mean

    def __enter__(self) -> LoadSampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def mean(self) -> float:
        return sum(self.samples) / max(1, len(self.samples))


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (user + system)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class UnitClock:
    """Wall seconds, CPU seconds and mean load of one unit, from :meth:`start` to
    :meth:`read` (restarted by :meth:`start` for the next unit)."""

    def __init__(self) -> None:
        self.load = LoadSampler()
        self.start()

    def start(self) -> None:
        self.wall0, self.cpu0 = time.monotonic(), cpu_seconds()
        self.load.stop()
        self.load.start()

    def read(self) -> dict[str, float]:
        return {
            "wall_s": round(time.monotonic() - self.wall0, 1),
            "cpu_s": round(cpu_seconds() - self.cpu0, 1),
            "load": round(self.load.mean, 2),
        }


class Ledger:
    """One run's ledger file: JSON lines, one per finished unit.

    Args:
        run: the run's name (the file is ``benchmarks/results/<run>.jsonl``).
        command: the command line that reproduces the run (recorded on every line).
        commit: commit the file with git after every :meth:`record` (``--commit``).
        folder: where ledgers live (tests use a temporary one).
    """

    def __init__(
        self,
        run: str,
        command: str | None = None,
        *,
        commit: bool = False,
        folder: Path = RESULTS,
    ) -> None:
        self.run = run
        self.path = Path(folder) / f"{run}.jsonl"
        script = Path(sys.argv[0]).resolve()
        shown = str(script.relative_to(ROOT)) if script.is_relative_to(ROOT) else sys.argv[0]
        self.command = command or "python " + shlex.join([shown, *sys.argv[1:]])
        self.commit = commit
        self._machine: dict[str, Any] | None = None

    def lines(self) -> list[dict[str, Any]]:
        """Every line of the ledger (a torn last line, from a kill mid-write, is skipped)."""
        if not self.path.is_file():
            return []
        out = []
        for number, text in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if not text.strip():
                continue
            try:
                out.append(json.loads(text))
            except json.JSONDecodeError:
                print(f"{self.path}:{number}: skipping a torn line", file=sys.stderr)
        return out

    def find(self, unit: dict[str, Any]) -> dict[str, Any] | None:
        """The latest line of ``unit``, or None."""
        key = unit_key(unit)
        found = None
        for line in self.lines():
            if unit_key(line["unit"]) == key:
                found = line
        return found

    def has(self, unit: dict[str, Any]) -> bool:
        """Whether the ledger already holds ``unit`` (a rerun skips it)."""
        return self.find(unit) is not None

    def record(
        self,
        unit: dict[str, Any],
        metrics: dict[str, Any],
        *,
        config: dict[str, Any] | None = None,
        clock: dict[str, float] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Append one finished unit: ``unit`` names it, ``metrics`` are its figures, ``clock``
        is :meth:`UnitClock.read` (wall/CPU seconds, load)."""
        if self._machine is None:
            self._machine = machine()
        line = {
            "unit": unit,
            "metrics": metrics,
            **(clock or {}),
            "config": config or {},
            "machine": self._machine,
            "command": self.command,
            "commit": git_commit(),
            "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            **extra,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(line, sort_keys=False) + "\n"
        # one write of one line in append mode, flushed to disk: a kill leaves at most a torn
        # last line, which lines() skips
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        print(f"ledger {self.path.name}: {unit_key(unit)} -> {json.dumps(metrics)}", flush=True)
        if self.commit:
            self._git_commit(unit)
        return line

    def _git_commit(self, unit: dict[str, Any]) -> None:
        """Commit the ledger and the docs' tables regenerated from it (only those two files:
        whatever else is staged or edited in the checkout stays out of this commit)."""
        paths = [self.path]
        if self.path.parent == RESULTS and DOCS.is_file():
            old = DOCS.read_text(encoding="utf-8")
            new = render_docs(old)
            if new != old:
                tmp = DOCS.with_suffix(".md.tmp")
                tmp.write_text(new, encoding="utf-8")
                tmp.replace(DOCS)
            paths.append(DOCS)
        self.commit_files(paths, f"ledger {self.run}: {unit_key(unit)}")

    def commit_files(self, files: list[Path], message: str) -> None:
        """Commit ``files`` (absolute paths in the checkout) and nothing else, when the ledger
        commits (``--commit``)."""
        if not self.commit:
            return
        paths = [str(Path(f).relative_to(ROOT)) for f in files]
        for attempt in range(5):  # another commit may hold the index lock for a moment
            add = subprocess.run(["git", "-C", str(ROOT), "add", *paths], capture_output=True)
            done = subprocess.run(
                ["git", "-C", str(ROOT), "commit", "-q", "-m", message, "--", *paths],
                capture_output=True,
                text=True,
            )
            if add.returncode == 0 and done.returncode == 0:
                return
            time.sleep(2 + 3 * attempt)
        print(f"ledger: could not commit {paths}: {done.stderr.strip()}", file=sys.stderr)


# -- tables for docs/benchmarks.md -------------------------------------------------------------


def _machine_cell(line: dict[str, Any]) -> str:
    info = line.get("machine", {})
    if info.get("device", "cpu") != "cpu":
        return str(info["device"])
    flags = info.get("matrix_flags") or info.get("simd") or []
    cores = info.get("cores")
    return f"CPU {'/'.join(flags) or 'no AVX2'}, {cores} cores"


def _paper_recipe_table(lines: list[dict[str, Any]]) -> str:
    """MultiPIT Table 9: dev F1 per model x learning rate x epoch."""
    cells: dict[tuple[str, str, str], dict[int, dict[str, Any]]] = {}
    for line in lines:
        u = line["unit"]
        key = (u["model"], f"{u['lr']:g}", u.get("precision", ""))
        cells.setdefault(key, {})[int(u["epoch"])] = line
    if not cells:
        return "_no units recorded yet_\n"
    epochs = max(max(v) for v in cells.values())
    head = " | ".join(f"epoch {e}" for e in range(1, epochs + 1))
    # accuracy beside F1 where the ledger has it (MRPC's targets are both)
    accuracy = any("dev_accuracy" in ln["metrics"] for v in cells.values() for ln in v.values())
    out = [
        f"| model | learning rate | precision | {head} | best"
        + (" | accuracy at best" if accuracy else "")
        + " | s/epoch | load | machine | commit |",
        "|---|---:|---|" + "---:|" * (epochs + 3 + accuracy) + "---|---|",
    ]
    for (model, rate, precision), by_epoch in sorted(cells.items()):
        f1 = [
            by_epoch[e]["metrics"]["dev_f1"] if e in by_epoch else None
            for e in range(1, epochs + 1)
        ]
        done = [v for v in f1 if v is not None]
        best = max(by_epoch.values(), key=lambda line: line["metrics"]["dev_f1"])
        best_accuracy = best["metrics"].get("dev_accuracy")
        last = by_epoch[max(by_epoch)]
        wall = [line["wall_s"] for line in by_epoch.values() if "wall_s" in line]
        loads = [line["load"] for line in by_epoch.values() if "load" in line]
        out.append(
            f"| {model} | {rate} | {precision} | "
            + " | ".join("—" if v is None else f"{v:.2f}" for v in f1)
            + f" | {max(done):.2f}"
            + (
                ""
                if not accuracy
                else " | —"
                if best_accuracy is None
                else f" | {best_accuracy:.2f}"
            )
            + f" | {sum(wall) / len(wall):.0f} | "
            + f"{sum(loads) / len(loads):.1f} | {_machine_cell(last)} | {last['commit'][:8]} |"
        )
    return "\n".join(out) + "\n"


def _cell(value: Any) -> str:
    """A ledger value in a table cell: floats to 4 digits, a unit's dict (a teacher) and lists
    (per-epoch scores) compactly."""
    if isinstance(value, bool) or value is None:
        return "—" if value is None else str(value).lower()
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:.0f}"
    if isinstance(value, dict):
        return " ".join(_cell(v) for v in value.values())
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    return str(value)


def _noisy_table(lines: list[dict[str, Any]]) -> str:
    """The MultiPIT Table 3 analogue: each student's best dev F1 and its gain over expert
    alone (same teacher, auto set and precision)."""
    if not lines:
        return "_no units recorded yet_\n"

    def group(u: dict[str, Any]) -> tuple:
        return (u["student"], _cell(u["teacher"]), u["auto"], u["precision"])

    expert = {
        group(ln["unit"]): ln["metrics"]["dev_f1"]
        for ln in lines
        if ln["unit"]["method"] == "expert"
    }
    out = [
        "| student | teacher | teacher labels (dev F1) | auto pairs | training set | λ "
        "| train pairs | dropped | flipped | dev F1 | gain | dev F1 per epoch | wall s | machine |",
        "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    order = {"expert": 0, "filter": 1, "flip": 2}
    for ln in sorted(
        lines,
        key=lambda ln: (
            group(ln["unit"]),
            order.get(ln["unit"]["method"], 3),
            ln["unit"]["lambda"] or 0,
        ),
    ):
        u, m = ln["unit"], ln["metrics"]
        base = expert.get(group(u))
        gain = "—" if base is None or u["method"] == "expert" else f"{m['dev_f1'] - base:+.2f}"
        name = {
            "expert": "expert",
            "filter": "expert + auto filtered",
            "flip": "expert + auto flipped",
        }
        labels = ln.get("config", {}).get("teacher_labels")
        # the run of the teacher's recipe whose labels the unit used (older lines: not kept)
        labels = (
            "—"
            if u["method"] == "expert"
            else f"{labels} ({ln['config']['teacher_dev_f1']:.2f})"
            if labels
            else "first run (not kept)"
        )
        out.append(
            f"| {u['student']} | {_cell(u['teacher'])} | {labels} | {u['auto']} | "
            f"{name.get(u['method'], u['method'])} | {_cell(u['lambda'])} | {m['n_train']} | "
            f"{m.get('dropped', '—')} | {m.get('flipped', '—')} | {m['dev_f1']:.2f} | {gain} | "
            f"{_cell(m.get('dev_f1_per_epoch'))} | {_cell(ln.get('wall_s'))} | "
            f"{_machine_cell(ln)} |"
        )
    return "\n".join(out) + "\n"


def _generic_table(lines: list[dict[str, Any]]) -> str:
    """Any ledger: one row per unit, its unit fields and metrics as columns."""
    if not lines:
        return "_no units recorded yet_\n"
    unit_cols = list(dict.fromkeys(k for line in lines for k in line["unit"]))
    metric_cols = list(dict.fromkeys(k for line in lines for k in line["metrics"]))

    out = [
        "| " + " | ".join(unit_cols + metric_cols + ["wall s", "CPU s", "load", "machine"]) + " |",
        "|" + "---|" * (len(unit_cols) + len(metric_cols) + 4),
    ]
    for line in lines:
        row = [_cell(line["unit"].get(k)) for k in unit_cols]
        row += [_cell(line["metrics"].get(k)) for k in metric_cols]
        row += [_cell(line.get("wall_s")), _cell(line.get("cpu_s")), _cell(line.get("load"))]
        row.append(_machine_cell(line))
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out) + "\n"


def _step_cost_table(lines: list[dict[str, Any]]) -> str:
    """A recipe step before/after issue 27, part by part (``benchmarks/step_cost.py``)."""
    if not lines:
        return "_no units recorded yet_\n"
    out = [
        "| encoder | max length | variant | s/step | s/epoch | tokenise+pad | forward | backward "
        "| optimiser | padded tokens/epoch | load | machine | commit |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for line in lines:
        u, m = line["unit"], line["metrics"]
        out.append(
            f"| {u['model']} | {u['max_length']} | {u['variant']} | {m['s_per_step']:.2f} | "
            f"{m['s_per_epoch']:.0f} | {m['collate_s']:.4f} | {m['forward_s']:.2f} | "
            f"{m['backward_s']:.2f} | {m['optimiser_s']:.2f} | "
            f"{m['padded_tokens_per_epoch']:,} | {line.get('load', 0):.1f} | "
            f"{_machine_cell(line)} | {line['commit'][:8]} |"
        )
    return "\n".join(out) + "\n"


#: how each ledger becomes a table (the others get the generic one)
TABLES: dict[str, Callable[[list[dict[str, Any]]], str]] = {
    "paper-recipe": _paper_recipe_table,
    "paper-recipe-random-order": _paper_recipe_table,
    "mrpc-recipe": _paper_recipe_table,
    "noisy-recipe": _noisy_table,
    "noisy-recipe-cpu-baseline": _noisy_table,
    "step-cost": _step_cost_table,
    "step-cost-avx512": _step_cost_table,
}


def table(run: str, folder: Path = RESULTS) -> str:
    """The markdown table of ledger ``run``, with the commands that reproduce it."""
    lines = Ledger(run, command="-", folder=folder).lines()
    body = TABLES.get(run, _generic_table)(lines)
    commands = sorted({line["command"] for line in lines})
    if commands:
        body += "\nReproduce (a rerun skips the units above):\n\n```bash\n"
        body += "\n".join(commands) + "\n```\n"
    return body


def render_docs(text: str, folder: Path = RESULTS) -> str:
    """``text`` with every ``<!-- ledger:NAME -->`` block replaced by the table of NAME."""
    for name in re.findall(r"<!-- ledger:([\w.-]+) -->", text):
        start_tag, end_tag = f"<!-- ledger:{name} -->", f"<!-- /ledger:{name} -->"
        start, end = text.find(start_tag), text.find(end_tag)
        if end < start:
            raise SystemExit(f"{DOCS}: {start_tag} has no {end_tag} after it")
        text = text[: start + len(start_tag)] + "\n" + table(name, folder) + text[end:]
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    tables = sub.add_parser("tables", help="rewrite the ledger tables of docs/benchmarks.md")
    tables.add_argument("--check", action="store_true", help="exit 1 when they are stale")
    show = sub.add_parser("show", help="print a ledger's lines")
    show.add_argument("run")
    args = parser.parse_args(argv)
    if args.command == "show":
        for line in Ledger(args.run, command="-").lines():
            print(json.dumps(line))
        return 0
    old = DOCS.read_text(encoding="utf-8")
    new = render_docs(old)
    if args.check:
        if new != old:
            print(f"{DOCS} is stale: run python benchmarks/ledger.py tables", file=sys.stderr)
            return 1
        return 0
    if new != old:
        tmp = DOCS.with_suffix(".md.tmp")
        tmp.write_text(new, encoding="utf-8")
        tmp.replace(DOCS)
    print(f"{DOCS}: {'updated' if new != old else 'up to date'}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    raise SystemExit(main())
