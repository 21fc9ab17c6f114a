"""Issue 30 item 9: the admin pages at 10K / 155K / 1M items (target: 0.5 s each at 155K).

A synthetic SQLite (or PostgreSQL, ``--store URL``) project of ``--items`` pairs is built
with :func:`annotate_screens.build` (a third double-annotated, one in ten of those disputed),
every judgment with its done assignment and every other item queued once, one in fifty
judgments flagged ``s`` (the QA queue). Each admin page is then fetched through the web app
(FastAPI's TestClient, one worker, logged in as an admin) ``--repeat`` times after one
warm-up; the table gives the median wall and CPU seconds of a request (on a box whose cores
a heavier job holds, the CPU figure is the one to compare; wall is an upper bound). The
statistics page keeps its reports per project revision, so its warm views read them; its
first view after a change (an adjudicator's resolution before each request) is timed too.
The statistics page's agreement is also timed alone, in SQL and the old way (every judgment into
pandas), and the two reports are checked to hold the same figures. Store building is timed.

Run (10K and 155K: about 10 minutes on 2 busy cores)::

    PYTHONPATH=src nice -n 19 python benchmarks/annotate_admin.py --items 10000 155000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

PAGES = {
    "/admin": "/admin",
    "project page": "/admin/p/{pid}",
    "consensus p1": "/admin/p/{pid}/consensus",
    "consensus p200": "/admin/p/{pid}/consensus?page=200",
    "QA p1": "/admin/p/{pid}/qa",
    "stats": "/admin/p/{pid}/stats",
    "items p500": "/admin/p/{pid}/items?page=500",
    "progress": "/admin/p/{pid}/progress",
}


def build(store: Any, items: int) -> int:
    """The project of :func:`annotate_screens.build` plus its queue and QA flags."""
    from annotate_screens import build as build_items
    from sqlalchemy import insert, select, update

    from parakit.annotate.db import utcnow
    from parakit.annotate.models import Annotation, Assignment, Item

    pid, _ = build_items(store, items)
    store.accounts.add_annotator("admin", "admin-password", role="admin")
    now = utcnow()
    with store.transaction() as session:
        # one in fifty judgments flagged s (the QA queue's)
        session.execute(
            update(Annotation)
            .where(Annotation.project_id == pid, Annotation.id % 50 == 0)
            .values(label="4s", flags="s")
        )
        judged = session.execute(
            select(Annotation.id, Annotation.item_id, Annotation.annotator_id).where(
                Annotation.project_id == pid
            )
        ).all()
        seen: dict[int, int] = {}

        def slot(item_id: int, who: int | None) -> dict[str, Any]:
            """An assignment row: done by ``who``, or open when ``who`` is None."""
            return dict(
                project_id=pid,
                task="classify",
                item_id=item_id,
                slot=seen.get(item_id, 1),
                batch="default",
                position=item_id,
                annotator_id=None,
                status="open" if who is None else "done",
                done_by=who,
                done_at=None if who is None else now,
            )

        rows = []
        for _ann, item_id, who in judged:
            seen[item_id] = seen.get(item_id, 0) + 1
            rows.append(slot(item_id, who))
        for (item_id,) in session.execute(select(Item.id).where(Item.project_id == pid)):
            if item_id not in seen:
                rows.append(slot(item_id, None))
        for start in range(0, len(rows), 50_000):
            session.execute(insert(Assignment), rows[start : start + 50_000])
    store.analyze("assignments", "items", "annotations")
    return pid


def agreement_in_python(store: Any, pid: int) -> dict[str, float]:
    """The statistics page's agreement before issue 30: every judgment read, then pandas."""
    from parakit.annotate.agreement import agreement_report, judgments_frame

    anns = store.queue.submitted(pid)
    frame = judgments_frame([(a.item_id, a.annotator_id, a.label) for a in anns])
    return agreement_report(frame, store.scheme(pid), consensus={})


def _timed(call: Any, repeat: int, before: Any = None) -> tuple[float, float]:
    """Median wall and CPU seconds (this process: the app runs in TestClient's thread and
    SQLite in the process, so CPU counts the whole request) of ``repeat`` calls; ``before``
    runs ahead of each call, untimed."""
    wall, cpu = [], []
    for n in range(repeat):
        if before is not None:
            before(n)
        t0, c0 = time.perf_counter(), time.process_time()
        call()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return round(statistics.median(wall), 3), round(statistics.median(cpu), 3)


def time_pages(store: Any, pid: int, repeat: int) -> dict[str, tuple[float, float]]:
    from fastapi.testclient import TestClient
    from sqlalchemy import exists, select

    from parakit.annotate.models import Annotation, Item
    from parakit.annotate.web import create_app

    client = TestClient(create_app(store))
    r = client.post("/login", data={"name": "admin", "password": "admin-password"})
    assert r.status_code == 200, r.text
    out = {}
    for name, path in PAGES.items():
        url = path.format(pid=pid)
        first = client.get(url)  # warm-up (imports, caches)
        assert first.status_code == 200, (url, first.status_code, first.text[:300])
        out[name] = _timed(lambda url=url: client.get(url), repeat)
    # the statistics page's reports are cached per project revision: its first view after a
    # change (here an adjudicator's label for an item nobody judged: it moves the revision and
    # leaves the agreement checked below as it was) computes them again
    admin = store.accounts.annotator_id("admin")
    with store.transaction() as session:
        target = session.scalar(
            select(Item.id)
            .where(Item.project_id == pid, ~exists().where(Annotation.item_id == Item.id))
            .order_by(Item.id)
            .limit(1)
        )

    def change(n: int) -> None:
        store.review.resolve(target, "3" if n % 2 else "2", admin)

    stats = PAGES["stats"].format(pid=pid)
    out["stats, first view after a change"] = _timed(lambda: client.get(stats), repeat, change)
    sql = store.review.agreement(pid)
    old = agreement_in_python(store, pid)
    assert sorted(sql) == sorted(old)  # the same report (test_agreement_sql.py: the values)
    out["agreement, SQL (stats page)"] = _timed(lambda: store.review.agreement(pid), repeat)
    out["agreement, Python (before)"] = _timed(lambda: agreement_in_python(store, pid), 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, nargs="+", default=[10_000, 155_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--store", default=None, help="a PostgreSQL URL (default: SQLite)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    from parakit.annotate.store import Store
    from parakit.vectors.precision import cpu_summary

    results = []
    for n in args.items:
        with tempfile.TemporaryDirectory() as tmp:
            store = Store.open(args.store or Path(tmp) / "admin.sqlite", cheap_hashing=True)
            t0 = time.perf_counter()
            pid = build(store, n)
            built = round(time.perf_counter() - t0, 1)
            row = {"items": n, "build_s": built, **time_pages(store, pid, args.repeat)}
            store.close()
        results.append(row)
        print(json.dumps(row), flush=True)
    print(
        f"\nmachine: {cpu_summary()}; load {os.getloadavg()[0]:.1f}; store "
        f"{'PostgreSQL' if args.store else 'SQLite'}; 1 worker (TestClient)\n"
    )
    print(
        "| page (wall s / CPU s) | " + " | ".join(f"{r['items']:,} items" for r in results) + " |"
    )
    print("|---|" + "---:|" * len(results))
    for name in results[0]:
        if name in ("items", "build_s"):
            continue
        print(
            f"| {name} | "
            + " | ".join(f"{r[name][0]:.3f} / {r[name][1]:.3f}" for r in results)
            + " |"
        )
    print("| (build) | " + " | ".join(f"{r['build_s']} s" for r in results) + " |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
