"""Load benchmark of the annotation web app: N concurrent simulated annotators.

Each annotator logs in and loops for the whole duration: lease the next item, autosave a
draft, submit. Afterwards the store is checked: every acknowledged submission must be stored
(none lost) and no single-annotation item answered twice (none duplicated).

Usage:
    python benchmarks/annotate_load.py --annotators 50 --duration 120
    python benchmarks/annotate_load.py --backend postgres   # needs 127.0.0.1:5432

Prints a Markdown table (p50/p99 latency per request kind, errors, rate) and the check.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import signal
import socket
import tempfile
import threading
import uuid
from pathlib import Path


def server_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc), 0.0 elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


killed: list[int] = []
imported: dict[str, float] = {}


def server_tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of the server and its worker processes."""
    return server_cpu_seconds(pid) + sum(server_cpu_seconds(c) for c in children(pid))


def children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux /proc), children first."""
    out, todo = [], children(pid)
    while todo:
        child = todo.pop(0)
        out.append(child)
        todo += children(child)
    return out


def answering_workers(url: str, want: int, tries: int = 400) -> set[int]:
    """The process ids that answer ``/healthz`` (each reply names its worker), asked on a new
    connection each time until ``want`` different ones answered or ``tries`` ran out."""
    import httpx

    seen: set[int] = set()
    for _ in range(tries):
        try:
            with httpx.Client(timeout=5) as fresh:
                seen.add(int(fresh.get(f"{url}/healthz").json()["worker"]))
        except httpx.HTTPError:
            continue
        if len(seen) >= want:
            break
    return seen


def kill_one_worker(pid: int, url: str, workers: int) -> int:
    """SIGKILL one server worker: a process under the server ``pid`` that answered
    ``/healthz`` (not uvicorn's supervisor, nor the multiprocessing resource tracker, which
    are children of the server too and answer nothing). Returns its id.

    Raises:
        RuntimeError: no process under ``pid`` answers ``/healthz``.
    """
    answering = answering_workers(url, want=workers)
    candidates = sorted(answering & set(descendants(pid)))
    if not candidates:
        raise RuntimeError(
            f"no worker of server {pid} answers {url}/healthz (answering: {sorted(answering)}, "
            f"processes: {descendants(pid)}): nothing to kill"
        )
    victim = candidates[0]
    os.kill(victim, signal.SIGKILL)
    killed.append(victim)
    return victim


def prepare_admin(target: str) -> None:
    from loadtest import PASSWORD

    from parakit.annotate.store import Store

    store = Store.open(target, cheap_hashing=True)
    store.accounts.add_annotator("boss", PASSWORD, role="admin")
    store.close()


def upload(url: str, n_pairs: int, into: dict[str, float]) -> None:
    """An admin uploads a JSONL file of ``n_pairs`` pairs (a new project)."""
    import json
    import time

    import httpx
    from loadtest import HEADERS, PASSWORD

    body = "".join(
        json.dumps({"id": f"u{i}", "text1": f"uploaded sentence {i} " + "x" * 14,
                    "text2": f"another uploaded sentence {i} " + "y" * 14}) + "\n"
        for i in range(n_pairs)
    ).encode()  # fmt: skip
    with httpx.Client(base_url=url, timeout=600) as c:
        c.post("/login", data={"name": "boss", "password": PASSWORD})
        t0 = time.perf_counter()
        r = c.post(
            "/api/admin/projects",
            headers=HEADERS,
            data={"name": "uploaded", "scheme": "binary"},
            files={"file": ("big.jsonl", body, "application/json")},
        )
        into.update(status=r.status_code, seconds=time.perf_counter() - t0, mb=len(body) / 2**20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--duration", type=float, default=120.0)
    parser.add_argument("--items", type=int, default=30000)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--pg-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--workers", type=int, default=1, help="annotate serve --workers N")
    parser.add_argument(
        "--think",
        default=None,
        help="LOW-HIGH seconds an annotator thinks after each submission (e.g. 10-30, a "
        "person's pace); default none (the server's worst case)",
    )
    parser.add_argument(
        "--ramp", type=float, default=0.0, help="annotators arrive over this many seconds"
    )
    parser.add_argument(
        "--kill-worker-after",
        type=float,
        default=None,
        help="SIGKILL one server worker this many seconds into the run (with --workers > 1)",
    )
    parser.add_argument(
        "--import-pairs",
        type=int,
        default=0,
        help="an admin uploads a project of this many pairs 5 s into the run (155,000 pairs "
        "make the 19 MB file of issue 21)",
    )
    args = parser.parse_args()

    from loadtest import check_store, prepare_store, run_load, serve_process

    with tempfile.TemporaryDirectory() as tmp:
        if args.backend == "sqlite":
            target: str = str(Path(tmp) / "load.sqlite")
            schema = None
        else:
            from sqlalchemy import create_engine, text

            schema = f"parakit_load_{uuid.uuid4().hex[:8]}"
            engine = create_engine(args.pg_url)
            with engine.begin() as conn:
                conn.execute(text(f"CREATE SCHEMA {schema}"))
            target = f"{args.pg_url}?options=-csearch_path%3D{schema}"
        replaced: list[int] = []
        try:
            project = prepare_store(target, n_annotators=args.annotators, n_items=args.items)
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            extra = ("--workers", str(args.workers)) if args.workers > 1 else ()
            if args.import_pairs:
                prepare_admin(target)
            with serve_process(target, port, extra_args=extra) as url:
                cpu_before = server_tree_cpu_seconds(serve_process.last.pid)
                side = []
                if args.kill_worker_after is not None:
                    side.append(
                        threading.Timer(
                            args.kill_worker_after,
                            kill_one_worker,
                            (serve_process.last.pid, url, args.workers),
                        )
                    )
                if args.import_pairs:
                    side.append(threading.Timer(5.0, upload, (url, args.import_pairs, imported)))
                for timer in side:
                    timer.start()
                think = tuple(float(x) for x in args.think.split("-")) if args.think else None
                result = run_load(
                    url,
                    project,
                    n_annotators=args.annotators,
                    duration=args.duration,
                    think=think,
                    ramp=args.ramp,
                )
                for timer in side:
                    timer.join()
                cpu = server_tree_cpu_seconds(serve_process.last.pid) - cpu_before
                if killed:  # uvicorn replaced the killed worker: a new one answers
                    replaced = sorted(answering_workers(url, want=args.workers))
                    if killed[0] in replaced:
                        raise SystemExit(f"worker {killed[0]} still answers after SIGKILL")
            check = check_store(target, project, result.acknowledged)
        finally:
            if schema:
                with engine.begin() as conn:
                    conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    print(
        f"# annotate load: {args.annotators} annotators, {args.duration:.0f} s, "
        f"{args.backend}, {args.workers} worker(s), think time "
        f"{args.think + ' s' if args.think else 'none'}, arrivals over {args.ramp:.0f} s, "
        f"{datetime.date.today()}, "
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}"
    )
    if args.kill_worker_after is not None:
        if not killed:
            raise SystemExit("no worker was killed: the run does not measure a worker kill")
        print(
            f"\nkilled worker {killed} (SIGKILL, a process that answered /healthz) at "
            f"{args.kill_worker_after:.0f} s; workers answering after the run: {replaced}"
        )
    if imported:
        print(
            f"\nimport of {args.import_pairs} pairs ({imported['mb']:.1f} MB) during the run: "
            f"HTTP {imported['status']} in {imported['seconds']:.1f} s"
        )
    print()
    print("| request | count | errors | p50 ms | p99 ms | max ms | per s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in result.table():
        print(
            f"| {row['request']} | {row['count']} | {row['errors']} | {row['p50_ms']:.1f} | "
            f"{row['p99_ms']:.1f} | {row['max_ms']:.1f} | {row['per_s']:.1f} |"
        )
    if result.statuses:
        print()
        print("errors: " + ", ".join(f"{k}: {v}" for k, v in sorted(result.statuses.items())))
    requests = sum(row["count"] for row in result.table())
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print()
    print(
        f"server CPU: {cpu:.1f} s for {requests} requests = "
        f"{1000 * cpu / max(requests, 1):.1f} ms per request; wall {result.elapsed:.0f} s; "
        f"load average at the end {load:.1f} on {os.cpu_count()} CPUs"
    )
    print()
    print(
        f"acknowledged submissions: {check['acknowledged']}, stored: {check['stored']}, "
        f"lost: {check['missing']}, corrupted: {check['corrupted']}, "
        f"duplicated: {check['duplicated']}"
    )


if __name__ == "__main__":
    main()
