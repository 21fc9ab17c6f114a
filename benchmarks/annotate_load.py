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
import socket
import tempfile
import uuid
from pathlib import Path


def server_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc), 0.0 elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--duration", type=float, default=120.0)
    parser.add_argument("--items", type=int, default=30000)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--pg-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
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
        try:
            project = prepare_store(target, n_annotators=args.annotators, n_items=args.items)
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            with serve_process(target, port) as url:
                cpu_before = server_cpu_seconds(serve_process.last.pid)
                result = run_load(
                    url, project, n_annotators=args.annotators, duration=args.duration
                )
                cpu = server_cpu_seconds(serve_process.last.pid) - cpu_before
            check = check_store(target, project, result.acknowledged)
        finally:
            if schema:
                with engine.begin() as conn:
                    conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    print(
        f"# annotate load: {args.annotators} annotators, {args.duration:.0f} s, "
        f"{args.backend}, {datetime.date.today()}, {platform.processor() or platform.machine()}"
        f", Python {platform.python_version()}"
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
