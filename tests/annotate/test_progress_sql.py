"""Issue 30: the per-annotator progress page is aggregated in the database (two queries,
whatever the project's size), with figures computed by hand from set submission times."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from sqlalchemy import event, update

from parakit.annotate.db import utcnow
from parakit.annotate.models import Annotation
from parakit.schema import Pair, PairSet


def _submit(store, pid, uid, n):
    ids = []
    for _ in range(n):
        work = store.queue.lease_next(pid, uid)
        store.queue.save(work.item_id, uid, label="1", revision=0, submit=True)
        ids.append(work.item_id)
    return ids


def _stamp(store, uid, item_ids, times):
    with store.transaction() as session:
        for item_id, at in zip(item_ids, times, strict=True):
            session.execute(
                update(Annotation)
                .where(Annotation.item_id == item_id, Annotation.annotator_id == uid)
                .values(submitted_at=at)
            )


def test_progress_figures_by_hand_in_two_queries(store):
    ann = store.accounts.add_annotator("ann", "password-ann")
    bob = store.accounts.add_annotator("bob", "password-bob")
    pid = store.projects.create_project("pace", "binary")
    store.projects.import_pairs(
        pid, PairSet([Pair(f"p{n}", f"left {n}", f"right {n}") for n in range(12)], scheme="binary")
    )
    for uid in (ann, bob):
        store.projects.add_member(pid, uid)
    store.queue.assign(pid, mode="double", seed=3)
    now = utcnow()
    # ann: 5 judgments, 3 h ago then gaps of 60, 30, 90, 30 s; bob: 4, the last 2 within the hour
    ann_items = _submit(store, pid, ann, 5)
    start = now - timedelta(hours=3)
    _stamp(store, ann, ann_items, [start + timedelta(seconds=s) for s in (0, 60, 90, 180, 210)])
    bob_items = _submit(store, pid, bob, 4)
    bob_times = [now - timedelta(minutes=m) for m in (150, 90, 50, 10)]
    _stamp(store, bob, bob_items, bob_times)
    # a draft is not progress
    work = store.queue.lease_next(pid, ann)
    store.queue.save(work.item_id, ann, label="0", revision=0, submit=False)

    statements = []
    engine = store.engine
    listen = lambda *args: statements.append(args[2])  # noqa: E731
    event.listen(engine, "before_cursor_execute", listen)
    try:
        rows = store.queue.annotator_progress(pid)
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    reads = [s for s in statements if "annotations" in s]
    assert len(reads) == 2  # the grouped counts and the window of recent times

    by_name = {row["annotator"]: row for row in rows}
    assert [row["annotator"] for row in rows] == ["ann", "bob"]
    assert by_name["ann"]["done"] == 5 and by_name["ann"]["last_hour"] == 0
    assert by_name["ann"]["median_s"] == 60.0  # gaps 60, 30, 90, 30 sorted: 30 30 60 90
    assert by_name["ann"]["per_hour"] == pytest.approx(5 / (210 / 3600))
    assert by_name["bob"]["done"] == 4 and by_name["bob"]["last_hour"] == 2
    assert by_name["bob"]["median_s"] == 2400.0  # gaps 60, 40, 40 min
    assert by_name["bob"]["per_hour"] == pytest.approx(4 / (140 / 60))
    assert by_name["bob"]["first"] == bob_times[0] and by_name["bob"]["last"] == bob_times[-1]

    # the pace window: only the last gaps count (ann's last 2 gaps are 90 and 30 s)
    windowed = {r["annotator"]: r for r in store.queue.annotator_progress(pid, pace_window=2)}
    assert windowed["ann"]["median_s"] == 90.0
    assert windowed["ann"]["done"] == 5  # counts never use the window


def test_one_judgment_has_no_pace(store):
    ann = store.accounts.add_annotator("ann", "password-ann")
    pid = store.projects.create_project("one", "binary")
    store.projects.import_pairs(pid, PairSet([Pair("p0", "left", "right")], scheme="binary"))
    store.projects.add_member(pid, ann)
    store.queue.assign(pid, mode="single", seed=0)
    _submit(store, pid, ann, 1)
    (row,) = store.queue.annotator_progress(pid)
    assert row["done"] == 1 and row["last_hour"] == 1
    assert math.isnan(row["median_s"]) and math.isnan(row["per_hour"])
