"""Issue 21 item 6: the item browser paginated in SQL, and suggestions cached per document pair.

1. **Item browser.** A synthetic SQLite project of ``--items`` pairs (default 155,000, the size
   of the 19 MB upload of issue 21), a third of them double-annotated (two submitted
   judgments, one in ten disputed). One page of 20 is timed for four filters with the old
   algorithm (load every matching item and every submitted annotation of the project, filter
   ``disputed`` and cut the page in Python; kept here as ``browse_in_python``) and with
   :meth:`parakit.annotate.services.review.Review.browse` (filters, count and page in SQL).
2. **Suggestions.** The largest document pair of the Turku Swedish test set
   (``sv-test.json`` + ``sv-texts.json.gz``) in a project with suggestions on: CPU seconds of
   the first call of :meth:`~parakit.annotate.services.extract.Extraction.suggestions` (ranks
   and stores) and of the next ones (read from the store).

Run (under a minute on 2 cores)::

    PYTHONPATH=src python benchmarks/annotate_screens.py --data ../shared/data/turku
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any


def build(store: Any, items: int, seed: int = 0) -> tuple[int, int]:
    """A project of ``items`` pairs, a third double-annotated; returns (project, annotator)."""
    from sqlalchemy import insert

    from parakit.annotate.db import utcnow
    from parakit.annotate.models import Annotation, Item

    ann1 = store.accounts.add_annotator("ann1", "password-one")
    ann2 = store.accounts.add_annotator("ann2", "password-two")
    pid = store.projects.create_project("big", "turku")
    rng = random.Random(seed)
    now = utcnow()
    words = [
        "the",
        "a",
        "cat",
        "dog",
        "sat",
        "ran",
        "on",
        "under",
        "mat",
        "house",
        "river",
        "quickly",
        "slowly",
    ]
    rows = [
        {
            "project_id": pid,
            "key": f"p{n}",
            "text1": " ".join(rng.choices(words, k=12)),
            "text2": " ".join(rng.choices(words, k=12)),
            "origin": "import",
            "created_at": now,
            "meta": {},
        }
        for n in range(items)
    ]
    with store.transaction() as session:
        session.execute(insert(Item), rows)
        ids = [i for (i,) in session.execute(Item.__table__.select().with_only_columns(Item.id))]
        anns = []
        for n, item_id in enumerate(ids[::3]):
            labels = ("4", "3") if n % 10 == 0 else ("4", "4")
            for who, label in zip((ann1, ann2), labels, strict=True):
                anns.append(
                    {
                        "project_id": pid,
                        "item_id": item_id,
                        "annotator_id": who,
                        "task": "classify",
                        "status": "submitted",
                        "label": label,
                        "flags": "",
                        "unsure": False,
                        "revision": 1,
                        "created_at": now,
                        "updated_at": now,
                        "submitted_at": now,
                    }
                )
        session.execute(insert(Annotation), anns)
    return pid, ann2


def browse_in_python(
    store: Any,
    project_id: int,
    annotator: int | None,
    state: str | None,
    text: str | None,
    page: int,
    per_page: int,
) -> tuple[list[Any], int]:
    """The item browser before issue 21: the whole project per page."""
    from sqlalchemy import func, or_, select

    from parakit.annotate.db import submitted_by_item
    from parakit.annotate.models import Annotation, Item

    with store.transaction() as session:
        query = select(Item).where(Item.project_id == project_id, Item.origin != "rewrite")
        judged = select(Annotation.item_id).where(
            Annotation.project_id == project_id,
            Annotation.task == "classify",
            Annotation.status == "submitted",
        )
        if annotator is not None:
            query = query.where(Item.id.in_(judged.where(Annotation.annotator_id == annotator)))
        if state == "unlabelled":
            query = query.where(Item.label.is_(None))
        if text:
            pattern = f"%{text.lower()}%"
            query = query.where(
                or_(func.lower(Item.text1).like(pattern), func.lower(Item.text2).like(pattern))
            )
        items = list(session.scalars(query.order_by(Item.id)))
        anns = submitted_by_item(session, project_id)
    if state == "disputed":
        items = [i for i in items if len({a.label for a in anns.get(i.id, [])}) > 1]
    start = (page - 1) * per_page
    return [(i, anns.get(i.id, [])) for i in items[start : start + per_page]], len(items)


def time_browser(items: int) -> dict[str, Any]:
    from parakit.annotate.store import Store

    out: dict[str, Any] = {"items": items}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "big.sqlite", cheap_hashing=True)
        start = time.perf_counter()
        pid, ann2 = build(store, items)
        out["build_s"] = round(time.perf_counter() - start, 1)
        cases = {
            "page 1, no filter": {},
            "page 500, no filter": {"page": 500},
            "disputed": {"state": "disputed"},
            "annotator ann2, page 100": {"annotator": ann2, "page": 100},
            "text 'river'": {"text": "river"},
        }
        for name, args in cases.items():
            full = {"annotator": None, "state": None, "text": None, "page": 1, **args}
            t0 = time.perf_counter()
            old_rows, old_total = browse_in_python(store, pid, per_page=20, **full)
            t1 = time.perf_counter()
            new_rows, new_total = store.review.browse(pid, per_page=20, **full)
            t2 = time.perf_counter()
            # the same page either way
            assert old_total == new_total, (name, old_total, new_total)
            assert [i.id for i, _ in old_rows] == [r["item"].id for r in new_rows], name
            out[name] = {
                "total": new_total,
                "before_s": round(t1 - t0, 3),
                "after_s": round(t2 - t1, 3),
            }
        store.close()
    return out


def time_suggestions(data: Path) -> dict[str, Any]:
    import parakit
    from parakit.annotate.store import Store
    from parakit.build.suggest import document_pairs_of
    from parakit.schema import Pair, PairSet

    pairs = parakit.read(data / "sv-test.json", texts=data / "sv-texts.json.gz")
    doc1, doc2 = max(document_pairs_of(pairs), key=lambda d: len(d[0].text) + len(d[1].text))
    out: dict[str, Any] = {
        "doc_pair": [doc1.id, doc2.id],
        "chars": [len(doc1.text), len(doc2.text)],
    }
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "s.sqlite", cheap_hashing=True)
        uid = store.accounts.add_annotator("ann1", "password-one")
        pid = store.projects.create_project("s", "turku", settings={"suggestions": True})
        store.projects.import_document_pairs(pid, PairSet([Pair("dp", doc1.text, doc2.text)]))
        store.projects.add_member(pid, uid)
        store.queue.assign_document_pairs(pid, [uid])
        dp = store.queue.lease_next(pid, uid, "extract", timedelta(minutes=10)).doc_pair_id
        times = []
        for _ in range(4):
            t0 = time.process_time()
            got = store.extraction.suggestions(dp, uid)
            times.append(round(time.process_time() - t0, 3))
        store.close()
    out.update(suggestions=len(got), first_cpu_s=times[0], cached_cpu_s=times[1:])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=155_000)
    parser.add_argument("--data", type=Path, default=Path("../shared/data/turku"))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    report = {"browser": time_browser(args.items)}
    if (args.data / "sv-test.json").exists():
        report["suggestions"] = time_suggestions(args.data)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
