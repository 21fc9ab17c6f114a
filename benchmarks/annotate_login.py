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
import contextlib
import datetime
import multiprocessing
import os
import platform
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
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


async def attack(url: str, addresses: int, per_address: int, duration: float) -> dict[int, int]:
    """``addresses`` attacking addresses (X-Forwarded-For through a trusted proxy), each
    keeping ``per_address`` wrong-password logins in flight for ``duration`` seconds; returns
    the attackers' status counts."""
    import httpx

    counts: dict[int, int] = {}
    end = time.monotonic() + duration

    async def attacker(address: int) -> None:
        headers = {"X-Forwarded-For": f"203.0.{address // 250}.{address % 250 + 1}"}
        async with httpx.AsyncClient(base_url=url, timeout=120) as c:
            n = 0
            while time.monotonic() < end:
                n += 1
                try:
                    r = await c.post(
                        "/login",
                        data={"name": f"victim{n % 7}", "password": "guess"},
                        headers=headers,
                    )
                    status = r.status_code
                except httpx.TransportError:
                    # a connection the server reset or refused (a full listen backlog) is an
                    # answer too: count it as 0 and go on, as a real attacker would
                    status = 0
                counts[status] = counts.get(status, 0) + 1
                if status in (0, 429, 503):
                    await asyncio.sleep(0.2)

    await asyncio.gather(*(attacker(a) for a in range(addresses) for _ in range(per_address)))
    return counts


def _attack_process(args: tuple, niceness: int, out: multiprocessing.Queue) -> None:
    """The attackers in a process of their own: on a real deployment they are other machines,
    so their client's CPU must neither slow the users' client (one event loop would make every
    ``/next`` wait behind 240 attackers' responses) nor, at ``niceness``, the server."""
    os.nice(niceness)
    out.put(asyncio.run(attack(*args)))


async def users(
    url: str, cookies: dict[str, str], duration: float, returns: int, project: int
) -> tuple[list[tuple[int, float]], list[tuple[int, float]], list[float]]:
    """While the flood runs: a returning annotator (logged in before from the office address)
    and a first-time one (an address never seen) log in ``returns`` times each, and an
    annotator logged in before the flood (``cookies``) asks for its next item every 0.2 s. Returns
    (status, seconds) of each returning and first-time login, and the seconds of each
    ``/next``."""
    import httpx
    from loadtest import HEADERS, PASSWORD

    end = time.monotonic() + duration
    office = {"X-Forwarded-For": "198.51.100.7"}
    worker = httpx.AsyncClient(base_url=url, timeout=120, cookies=cookies)
    next_seconds: list[float] = []

    async def work() -> None:
        while time.monotonic() < end:
            t0 = time.perf_counter()
            r = await worker.get(f"/api/projects/{project}/next", headers=HEADERS)
            next_seconds.append(time.perf_counter() - t0)
            assert r.status_code == 200, r.status_code
            await asyncio.sleep(0.2)

    async def timed(name: str, headers: dict[str, str]) -> tuple[int, float]:
        async with httpx.AsyncClient(base_url=url, timeout=120) as c:
            t0 = time.perf_counter()
            r = await c.post("/login", data={"name": name, "password": PASSWORD}, headers=headers)
            return r.status_code, time.perf_counter() - t0

    async def logins() -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        await asyncio.sleep(min(3.0, duration / 4))  # the flood is in full swing
        back, first = [], []
        for k in range(returns):
            back.append(await timed("ann01", office))
            first.append(await timed("ann00", {"X-Forwarded-For": f"192.0.2.{k + 1}"}))
            await asyncio.sleep(0.5)
        return back, first

    _, (back, first) = await asyncio.gather(work(), logins())
    await worker.aclose()
    return back, first, next_seconds


async def _log_in_before(url: str) -> dict[str, str]:
    """Before the flood: the returning annotator's earlier login (from the office address),
    and the working annotator's session, whose cookies are returned."""
    import httpx
    from loadtest import PASSWORD

    async with httpx.AsyncClient(base_url=url, timeout=120) as c:
        r = await c.post(
            "/login",
            data={"name": "ann01", "password": PASSWORD},
            headers={"X-Forwarded-For": "198.51.100.7"},
        )
        assert r.status_code in (200, 303), r.status_code
    async with httpx.AsyncClient(base_url=url, timeout=120) as c:
        r = await c.post(
            "/login",
            data={"name": "ann00", "password": PASSWORD},
            headers={"X-Forwarded-For": "10.1.1.1"},
        )
        assert r.status_code in (200, 303), r.status_code
        return dict(c.cookies)


def flood(
    url: str,
    addresses: int,
    per_address: int,
    duration: float,
    returns: int,
    project: int = 0,
    attacker_nice: int = 19,
) -> tuple[dict[int, int], list[tuple[int, float]], list[tuple[int, float]], list[float]]:
    """The flood (:func:`attack`, in its own process at ``attacker_nice``) and, meanwhile, the
    team (:func:`users`, in this process). Returns the attackers' status counts, the returning
    and first-time logins and the logged-in annotator's ``/next`` seconds."""
    cookies = asyncio.run(_log_in_before(url))
    queue: multiprocessing.Queue = multiprocessing.Queue()
    process = multiprocessing.Process(
        target=_attack_process,
        args=((url, addresses, per_address, duration), attacker_nice, queue),
    )
    process.start()
    try:
        back, first, nexts = asyncio.run(users(url, cookies, duration, returns, project))
        counts = queue.get(timeout=duration + 300)
    finally:
        process.join(timeout=30)
        if process.is_alive():
            process.kill()
    return counts, back, first, nexts


async def shift(url: str, names: list[str], password: str, within: float) -> list[tuple]:
    """A shift starts: every name logs in (the right password, first login from the office
    address) at a random moment within ``within`` seconds; a 429 or 503 is retried after its
    ``Retry-After``, as a browser user would press the button again. Returns per name
    (final status, seconds until in, refusals on the way)."""
    import random

    import httpx

    office = {"X-Forwarded-For": "198.51.100.7"}
    rng = random.Random(0)

    async def one(name: str) -> tuple[int, float, int]:
        await asyncio.sleep(rng.uniform(0, within))
        t0, refused = time.perf_counter(), 0
        async with httpx.AsyncClient(base_url=url, timeout=300) as c:
            while True:
                r = await c.post("/login", data={"name": name, "password": password},
                                 headers=office)  # fmt: skip
                if r.status_code in (429, 503) and time.perf_counter() - t0 < 120:
                    refused += 1
                    await asyncio.sleep(float(r.headers.get("Retry-After", "2")))
                    continue
                return r.status_code, time.perf_counter() - t0, refused

    return list(await asyncio.gather(*(one(n) for n in names)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logins", type=int, default=40)
    parser.add_argument("--hash-concurrency", type=int, default=2)
    parser.add_argument(
        "--flood",
        type=int,
        default=0,
        help="instead of the storm: this many attacking addresses (issue 21: 80), and the "
        "time a returning annotator takes to log in meanwhile",
    )
    parser.add_argument("--per-address", type=int, default=3)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument(
        "--attacker-nice",
        type=int,
        default=19,
        help="--flood: the niceness of the attackers' process (the users' client stays at 0)",
    )
    parser.add_argument(
        "--shift",
        type=int,
        default=0,
        help="instead: this many colleagues log in from one office address (first logins, "
        "real argon2id hashes) within --duration seconds (issue 30: 80 within 10)",
    )
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--pg-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    if args.flood:
        return main_flood(args)
    if args.shift:
        return main_shift(args)

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


@contextlib.contextmanager
def _target(args: argparse.Namespace, tmp: str) -> Iterator[str]:
    """A SQLite file in ``tmp`` or a fresh PostgreSQL schema (dropped afterwards)."""
    if args.backend == "sqlite":
        yield str(Path(tmp) / "login.sqlite")
        return
    import uuid

    from sqlalchemy import create_engine, text

    schema = f"parakit_login_{uuid.uuid4().hex[:8]}"
    engine = create_engine(args.pg_url)
    with engine.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield f"{args.pg_url}?options=-csearch_path%3D{schema}"
    finally:
        with engine.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        engine.dispose()


def _header(kind: str, args: argparse.Namespace) -> str:
    from parakit.vectors.precision import cpu_summary

    load = os.getloadavg()
    return (
        f"# annotate login {kind}: {args.backend}, {args.workers} worker(s), hash concurrency "
        f"{args.hash_concurrency}, {datetime.date.today()}, {platform.machine()} "
        f"{cpu_summary()['flags']}, {os.cpu_count()} CPUs, load average {load[0]:.1f} / "
        f"{load[1]:.1f} / {load[2]:.1f} at the end, commit {_commit()}"
    )


def _commit() -> str:
    import subprocess

    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _extra(args: argparse.Namespace) -> tuple[str, ...]:
    extra = ("--hash-concurrency", str(args.hash_concurrency),
             "--forwarded-allow-ips", "127.0.0.1")  # fmt: skip
    return (*extra, "--workers", str(args.workers)) if args.workers > 1 else extra


def main_flood(args: argparse.Namespace) -> None:
    from loadtest import prepare_store, serve_process

    with tempfile.TemporaryDirectory() as tmp, _target(args, tmp) as target:
        project = prepare_store(target, n_annotators=2, n_items=2000)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with serve_process(target, port, extra_args=_extra(args)) as url:
            counts, back, first, nexts = flood(
                url,
                args.flood,
                args.per_address,
                args.duration,
                returns=5,
                project=project,
                attacker_nice=args.attacker_nice,
            )
    print(_header("flood", args))
    print(
        f"\n{args.flood} attacking addresses x {args.per_address} logins in flight for "
        f"{args.duration:.0f} s (their client in its own process at nice {args.attacker_nice})"
    )
    print(f"attackers' answers: {dict(sorted(counts.items()))} (0: connection reset or refused)")
    print("| during the flood | statuses | median s | p99 s | max s |")
    print("|---|---|---:|---:|---:|")
    for label, rows in (("returning annotator (same name + address as before)", back),
                        ("first login from a new address", first)):  # fmt: skip
        seconds = sorted(t for _, t in rows)
        print(
            f"| {label} | {[code for code, _ in rows]} | {seconds[len(seconds) // 2]:.2f} | "
            f"{seconds[-1]:.2f} | {seconds[-1]:.2f} |"
        )
    nexts.sort()
    print(
        f"| logged-in annotator's GET /next ({len(nexts)}) | all 200 | "
        f"{nexts[len(nexts) // 2]:.2f} | {nexts[int(0.99 * (len(nexts) - 1))]:.2f} | "
        f"{nexts[-1]:.2f} |"
    )


def main_shift(args: argparse.Namespace) -> None:
    from loadtest import prepare_store, serve_process

    from parakit.annotate.store import Store

    with tempfile.TemporaryDirectory() as tmp, _target(args, tmp) as target:
        prepare_store(target, n_annotators=1, n_items=100)
        store = Store.open(target)  # real argon2id hashes, as people's accounts have
        names = [f"colleague{n:03d}" for n in range(args.shift)]
        for name in names:
            store.accounts.add_annotator(name, "colleague-password")
        store.close()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with serve_process(target, port, extra_args=_extra(args)) as url:
            rows = asyncio.run(shift(url, names, "colleague-password", args.duration))
    print(_header("shift start", args))
    seconds = sorted(t for _, t, _ in rows)
    statuses: dict[int, int] = {}
    for code, _, _ in rows:
        statuses[code] = statuses.get(code, 0) + 1
    print(
        f"\n{args.shift} colleagues from one address within {args.duration:.0f} s: final "
        f"answers {dict(sorted(statuses.items()))}, refusals on the way (429/503, retried "
        f"after Retry-After) {sum(r for *_, r in rows)}; seconds until in: median "
        f"{seconds[len(seconds) // 2]:.2f}, max {seconds[-1]:.2f}"
    )


if __name__ == "__main__":
    main()
