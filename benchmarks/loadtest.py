"""Simulated annotators for load and crash-safety checks of the web app.

Each simulated annotator logs in, then loops: lease the next item (``GET /api/projects/<id>/
next``), autosave a draft, submit it. Its answers (label, comment, unsure flag) are drawn from
its own seeded random generator, never from the item id, so a row stored for the wrong item
or with another answer's fields shows up. Every submission the server acknowledged (HTTP
200) is recorded with every field it sent and the revision and id the server returned, so
after the run, or after killing the server (:func:`crash_run`), :func:`check_store` compares
each one field by field with the stored row.

Used by ``benchmarks/annotate_load.py``, ``benchmarks/annotate_login.py`` and
``tests/annotate/test_loadtest.py``; a test harness, so it lives here, not in the package.

Example:
    >>> from loadtest import prepare_store, serve_process, run_load
    >>> prepare_store("load.sqlite", n_annotators=5, n_items=500)        # doctest: +SKIP
    >>> with serve_process("load.sqlite", port=8765) as url:              # doctest: +SKIP
    ...     result = run_load(url, 1, n_annotators=5, duration=10)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

PASSWORD = "load-test-password"
HEADERS = {"X-Parakit": "1"}


def prepare_store(
    target: str | Path,
    n_annotators: int = 50,
    n_items: int = 20000,
    scheme: str = "binary",
    mode: str = "single",
) -> int:
    """A store with annotators ``ann00``... and ``n_items`` pairs queued in one pool.

    Returns:
        the project id.
    """
    from parakit.annotate.store import Store
    from parakit.schema import Pair, PairSet

    store = Store.open(target, cheap_hashing=True)
    pid = store.projects.create_project("load", scheme)
    for i in range(n_annotators):
        store.projects.add_member(pid, store.accounts.add_annotator(f"ann{i:02d}", PASSWORD))
    pairs = PairSet(
        [Pair(f"p{i:06d}", f"sentence {i} one", f"sentence {i} two") for i in range(n_items)],
        scheme=scheme,
    )
    store.projects.import_pairs(pid, pairs)
    store.queue.assign(pid, mode=mode)
    store.close()
    return pid


@contextlib.contextmanager
def serve_process(
    target: str | Path, port: int, startup_timeout: float = 60.0, extra_args: tuple[str, ...] = ()
) -> Iterator[str]:
    """Run ``parakit annotate serve`` in a child process; yields its base URL.

    The process is killed on exit (its id is in ``serve_process.last_pid`` for crash tests).
    """
    import httpx

    src = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "parakit",
            "annotate",
            "serve",
            str(target),
            "--port",
            str(port),
            *extra_args,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        # a file, not a pipe: a pipe nobody reads fills up and blocks the server's logging
        stderr=tempfile.TemporaryFile(),  # noqa: SIM115 - closed with the process
    )
    serve_process.last = process  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + startup_timeout
    try:
        while True:
            if process.poll() is not None:
                process.stderr.seek(0)
                raise RuntimeError("server exited: " + process.stderr.read().decode())
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"server did not start within {startup_timeout} s")
            time.sleep(0.1)
        yield url
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@dataclass(frozen=True)
class Ack:
    """One submission the server acknowledged: what was sent and what came back."""

    annotator: str
    item: int
    label: str
    comment: str
    unsure: bool
    revision: int
    annotation_id: int


@dataclass
class LoadResult:
    """What the simulated annotators saw."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)
    acknowledged: list[Ack] = field(default_factory=list)
    elapsed: float = 0.0
    #: set to stop the annotators after their current request
    stopped: bool = False

    def record(self, kind: str, seconds: float, ok: bool, status: int | str = "") -> None:
        self.latencies.setdefault(kind, []).append(seconds)
        if not ok:
            self.errors[kind] = self.errors.get(kind, 0) + 1
            key = f"{kind} {status}".strip()
            self.statuses[key] = self.statuses.get(key, 0) + 1

    def table(self) -> list[dict[str, Any]]:
        """One row per request kind: count, errors, p50/p99/max latency in ms, rate."""
        rows = []
        for kind, values in sorted(self.latencies.items()):
            ms = np.asarray(values) * 1000
            rows.append(
                {
                    "request": kind,
                    "count": len(values),
                    "errors": self.errors.get(kind, 0),
                    "p50_ms": float(np.percentile(ms, 50)),
                    "p99_ms": float(np.percentile(ms, 99)),
                    "max_ms": float(ms.max()),
                    "per_s": len(values) / self.elapsed if self.elapsed else 0.0,
                }
            )
        return rows


async def _annotator(
    base: str,
    project_id: int,
    name: str,
    deadline: float,
    result: LoadResult,
    labels: tuple[str, ...],
    max_items: int | None,
    exit_on_error: bool,
    seed: int,
    think: tuple[float, float] | None = None,
    ramp: float = 0.0,
) -> None:
    import httpx

    rng = random.Random(f"{seed}-{name}")
    if ramp:  # people arrive over a while, not in the same second
        await asyncio.sleep(rng.uniform(0, ramp))
    timeout = httpx.Timeout(60.0)
    async with httpx.AsyncClient(base_url=base, timeout=timeout) as client:
        status: int | str = "none"
        for _attempt in range(30):  # like a person: wait as told when the server is busy
            try:
                response = await client.post("/login", data={"name": name, "password": PASSWORD})
            except httpx.HTTPError as err:
                status = type(err).__name__
                await asyncio.sleep(1.0)
                continue
            status = response.status_code
            if status not in (429, 503):
                break
            await asyncio.sleep(float(response.headers.get("retry-after", "1")))
        if status not in (200, 303):
            result.record("login", 0.0, False, status)
            return
        done = 0
        while (
            time.monotonic() < deadline
            and not result.stopped
            and (max_items is None or done < max_items)
        ):
            try:
                t0 = time.perf_counter()
                r = await client.get(f"/api/projects/{project_id}/next", headers=HEADERS)
                result.record("next", time.perf_counter() - t0, r.status_code == 200, r.status_code)
                if r.status_code != 200:
                    await asyncio.sleep(0.05)
                    continue
                data = r.json()
                if data["item"] is None:
                    return
                item = data["item"]
                label = rng.choice(labels)
                comment = f"{name} c{rng.randrange(10**6)}"
                unsure = rng.random() < 0.3
                t0 = time.perf_counter()
                r = await client.post(
                    f"/api/items/{item}/save",
                    headers=HEADERS,
                    json={"label": rng.choice(labels), "revision": data["revision"]},
                )
                result.record(
                    "draft", time.perf_counter() - t0, r.status_code == 200, r.status_code
                )
                if r.status_code != 200:
                    continue
                t0 = time.perf_counter()
                r = await client.post(
                    f"/api/items/{item}/save",
                    headers=HEADERS,
                    json={
                        "label": label,
                        "revision": r.json()["revision"],
                        "submit": True,
                        "comment": comment,
                        "unsure": unsure,
                    },
                )
                result.record(
                    "submit", time.perf_counter() - t0, r.status_code == 200, r.status_code
                )
                if r.status_code == 200:
                    reply = r.json()
                    result.acknowledged.append(
                        Ack(name, item, label, comment, unsure, reply["revision"], reply["id"])
                    )
                    done += 1
                if think is not None:  # a person reads the next pair before answering
                    await asyncio.sleep(rng.uniform(*think))
            except httpx.HTTPError as err:
                result.record("transport", 0.0, False, type(err).__name__)
                if exit_on_error:
                    return
                await asyncio.sleep(0.05)


async def run_load_async(
    base: str,
    project_id: int,
    n_annotators: int = 50,
    duration: float = 120.0,
    max_items: int | None = None,
    labels: tuple[str, ...] = ("0", "1"),
    exit_on_error: bool = False,
    result: LoadResult | None = None,
    seed: int = 0,
    think: tuple[float, float] | None = None,
    ramp: float = 0.0,
) -> LoadResult:
    """Run ``n_annotators`` concurrent simulated annotators for ``duration`` seconds.

    Args:
        max_items: stop each annotator after this many submissions.
        exit_on_error: an annotator stops at its first transport error (otherwise it waits
            a moment and goes on: the server may be restarting).
        result: collect into this object (lets another thread watch progress).
        seed: the annotators' answers are drawn from generators seeded with this.
        think: seconds (low, high) an annotator waits after each submission (uniform);
            None: no think time (the server's worst case).
        ramp: annotators start at random moments over this many seconds (logins included).
    """
    result = result if result is not None else LoadResult()
    start = time.monotonic()
    deadline = start + duration
    await asyncio.gather(
        *(
            _annotator(
                base,
                project_id,
                f"ann{i:02d}",
                deadline,
                result,
                labels,
                max_items,
                exit_on_error,
                seed,
                think,
                ramp,
            )
            for i in range(n_annotators)
        )
    )
    result.elapsed = time.monotonic() - start
    return result


def run_load(base: str, project_id: int, **kwargs: Any) -> LoadResult:
    """Synchronous wrapper of :func:`run_load_async`."""
    return asyncio.run(run_load_async(base, project_id, **kwargs))


def check_store(target: str | Path, project_id: int, acknowledged: list[Ack]) -> dict[str, int]:
    """Compare every acknowledged submission, field by field, with the stored row.

    Returns:
        ``acknowledged``; ``stored`` (submitted annotations); ``missing`` (acknowledged, no
        submitted row of that annotator for that item); ``corrupted`` (a row whose label,
        comment, unsure flag, revision, id or status differs from what was acknowledged);
        ``duplicated`` (items answered more than once in a single-annotation project, or
        one acknowledgement id on two rows).
    """
    from parakit.annotate.store import Store

    store = Store.open(target, migrate=False)
    names = store.accounts.annotator_names()
    rows = store.queue.submitted(project_id)
    store.close()
    stored = {(names[a.annotator_id], a.item_id): a for a in rows}
    missing = corrupted = 0
    for ack in acknowledged:
        row = stored.get((ack.annotator, ack.item))
        if row is None:
            missing += 1
        elif (
            row.label != ack.label
            or (row.comment or "") != ack.comment
            or bool(row.unsure) != ack.unsure
            or row.revision != ack.revision
            or row.id != ack.annotation_id
            or row.status != "submitted"
        ):
            corrupted += 1
    items = [a.item_id for a in rows]
    ids = [ack.annotation_id for ack in acknowledged]
    return {
        "acknowledged": len(acknowledged),
        "stored": len(stored),
        "missing": missing,
        "corrupted": corrupted,
        "duplicated": (len(items) - len(set(items))) + (len(ids) - len(set(ids))),
    }


def crash_run(
    target: str | Path,
    project_id: int,
    port: int,
    *,
    kills: int = 3,
    n_annotators: int = 20,
    per_round: int = 60,
    seed: int = 0,
    round_timeout: float = 60.0,
) -> tuple[LoadResult, list[int]]:
    """Kill the server (SIGKILL) ``kills`` times under ``n_annotators`` concurrent annotators,
    each time after about ``per_round`` more acknowledged submissions, restarting it on the
    same port; the annotators retry through the outages. A last round runs on the restarted
    server. Returns what the annotators saw and the acknowledged count at each kill.

    The kill points are drawn from a generator seeded with ``seed`` (a random delay of up to
    50 ms after the round's quota), so kills land at different moments of requests.
    """
    import threading

    rng = random.Random(seed)
    result = LoadResult()
    marks: list[int] = []
    done = threading.Event()

    def drive(url: str) -> None:
        run_load(
            url,
            project_id,
            n_annotators=n_annotators,
            duration=round_timeout * (kills + 2),
            max_items=None,
            result=result,
            seed=seed,
            labels=("4", "4<", "4>", "3", "2", "1", "x"),
        )
        done.set()

    worker = None
    for round_no in range(kills + 1):
        with serve_process(target, port) as url:
            if worker is None:
                worker = threading.Thread(target=drive, args=(url,), daemon=True)
                worker.start()
            goal = len(result.acknowledged) + per_round
            deadline = time.monotonic() + round_timeout
            while len(result.acknowledged) < goal and time.monotonic() < deadline:
                if done.is_set():
                    break
                time.sleep(0.01)
            if round_no == kills:
                result.stopped = True  # let the last requests finish on a live server
                worker.join(round_timeout)
                break
            time.sleep(rng.random() * 0.05)
            process = serve_process.last  # type: ignore[attr-defined]
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            marks.append(len(result.acknowledged))
    return result, marks
