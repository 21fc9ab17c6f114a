"""Login storm: N concurrent logins with unknown names against a real server, while one
logged-in annotator keeps working. Reports the server's peak memory (VmHWM) and the
annotator's request latency during the storm.

    python benchmarks/annotate_login.py --logins 40

Each unknown name costs one argon2id verification against the dummy hash (RFC 9106
low-memory profile: 64 MiB); the server runs at most ``--hash-concurrency`` at once and keeps
the other logins waiting without a worker thread, so memory stays bounded and other users'
requests go on. The throttle is switched off (``--login-attempts 0``) so that every login
reaches the password check: the worst case for memory.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import socket
import tempfile
import threading
import time
from pathlib import Path


def rss_peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def storm(url: str, project: int, logins: int) -> tuple[dict[int, int], list[float], float]:
    import httpx
    from loadtest import HEADERS, PASSWORD

    async with httpx.AsyncClient(base_url=url, timeout=120) as worker:
        r = await worker.post("/login", data={"name": "ann00", "password": PASSWORD})
        assert r.status_code in (200, 303), r.status_code
        latencies: list[float] = []
        done = asyncio.Event()

        async def work() -> None:
            while not done.is_set():
                t0 = time.perf_counter()
                r = await worker.get(f"/api/projects/{project}/next", headers=HEADERS)
                latencies.append(time.perf_counter() - t0)
                assert r.status_code == 200
                await asyncio.sleep(0.05)

        async def attacker(n: int) -> int:
            async with httpx.AsyncClient(base_url=url, timeout=120) as c:
                r = await c.post("/login", data={"name": f"nobody{n}", "password": "guess-123"})
                return r.status_code

        task = asyncio.create_task(work())
        await asyncio.sleep(0.3)
        start = time.perf_counter()
        codes = await asyncio.gather(*(attacker(n) for n in range(logins)))
        elapsed = time.perf_counter() - start
        await asyncio.sleep(0.3)
        done.set()
        await task
    counts: dict[int, int] = {}
    for code in codes:
        counts[code] = counts.get(code, 0) + 1
    return counts, latencies, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logins", type=int, default=40)
    parser.add_argument("--hash-concurrency", type=int, default=2)
    args = parser.parse_args()

    from loadtest import prepare_store, serve_process

    with tempfile.TemporaryDirectory() as tmp:
        target = str(Path(tmp) / "login.sqlite")
        project = prepare_store(target, n_annotators=2, n_items=2000)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        extra = (
            "--login-attempts",
            "0",
            "--hash-concurrency",
            str(args.hash_concurrency),
        )
        with serve_process(target, port, extra_args=extra) as url:
            pid = serve_process.last.pid
            idle = rss_mb(pid)
            peak = [idle]
            stop = threading.Event()

            def sample() -> None:
                while not stop.is_set():
                    peak[0] = max(peak[0], rss_mb(pid))
                    time.sleep(0.02)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            counts, latencies, elapsed = asyncio.run(storm(url, project, args.logins))
            stop.set()
            sampler.join()
            hwm = rss_peak_mb(pid)
    load = os.getloadavg()[0]
    print(
        f"# annotate login storm: {args.logins} concurrent unknown-name logins, "
        f"hash concurrency {args.hash_concurrency}, {datetime.date.today()}, "
        f"{platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load average {load:.1f}"
    )
    print()
    print(f"server RSS idle: {idle:.0f} MB; peak (sampled): {peak[0]:.0f} MB; VmHWM: {hwm:.0f} MB")
    print(f"login answers: {dict(sorted(counts.items()))}; storm took {elapsed:.1f} s")
    ms = sorted(x * 1000 for x in latencies)
    print(
        f"another user's GET /next during the storm: {len(ms)} requests, "
        f"median {ms[len(ms) // 2]:.0f} ms, max {ms[-1]:.0f} ms"
    )


if __name__ == "__main__":
    main()
