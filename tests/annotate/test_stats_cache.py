"""Issue 30 item 9: the statistics page's reports cached per project revision (never stale),
and the project and progress pages' figures equal to a recount after a mix of operations."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from sqlalchemy import delete, inspect, select, text, update

from parakit.annotate.models import Annotation, Assignment, Item, Project, StatsCache
from parakit.schema import Pair, PairSet

from .conftest import client_for

H = {"X-Parakit": "1"}
TRIGGERS = {
    "annotations_revision_insert",
    "annotations_revision_update",
    "annotations_revision_delete",
    "items_revision_insert",
    "items_revision_update",
    "items_revision_delete",
    "projects_revision_scheme",
}


def _revision(store, pid: int) -> int:
    with store.transaction() as session:
        return int(session.scalar(select(Project.revision).where(Project.id == pid)))


def _same(a: dict, b: dict) -> bool:
    """Two reports with the same keys and values (NaN equal to NaN)."""
    return a.keys() == b.keys() and all(
        (math.isnan(x) and math.isnan(b[k])) if isinstance(x, float) and x != x else x == b[k]
        for k, x in a.items()
    )


def _fresh(store, pid: int) -> dict[str, dict]:
    """The reports computed now, never read from the cache."""
    return {
        "agreement": store.review.agreement(pid),
        "rewrite_check": store.review.rewrite_check_report(pid),
        "model": store.model.summary(pid),
    }


def _served_fresh(store, pid: int) -> dict[str, dict]:
    """What the statistics page gets, checked equal to a fresh computation."""
    served = store.review.statistics(pid)
    fresh = _fresh(store, pid)
    for name in fresh:
        assert _same(served[name], fresh[name]), (name, served[name], fresh[name])
    return served


def _judge(store, pid, uid, label, submit=True):
    work = store.queue.lease_next(pid, uid)
    assert work is not None
    return store.queue.save(work.item_id, uid, label=label, revision=0, submit=submit), work


def _double(project):
    """The tiny project double-annotated: ann1 and ann2 agree on two items, differ on one."""
    store, pid, ids = project
    store.queue.assign(pid, mode="double")
    for name, labels in (("ann1", ["4", "4", "3"]), ("ann2", ["4", "4", "2"])):
        for label in labels:
            _judge(store, pid, ids[name], label)
    return store, pid, ids


def test_triggers_exist_at_head(store):
    """A later migration that rebuilds a table (SQLite batch mode) drops its triggers: the
    cache would then serve stale figures. Every trigger must be there at head."""
    with store.engine.connect() as conn:
        if store.engine.dialect.name == "postgresql":
            names = set(
                conn.execute(text("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")).scalars()
            )
        else:
            names = set(
                conn.execute(
                    text("SELECT name FROM sqlite_master WHERE type = 'trigger'")
                ).scalars()
            )
    assert names >= TRIGGERS
    assert "stats_cache" in inspect(store.engine).get_table_names()


def test_a_report_is_computed_once_per_revision(project, monkeypatch):
    store, pid, ids = _double(project)
    store.projects.import_pairs(
        pid, PairSet([Pair("extra", "One more.", "Another.")], scheme="turku")
    )
    store.queue.assign(pid, mode="single")  # for ann3's draft below
    calls = Counter()
    real = store.review.agreement

    def counted(project_id):
        calls["agreement"] += 1
        return real(project_id)

    monkeypatch.setattr(store.review, "agreement", counted)
    first = store.review.statistics(pid)
    assert calls["agreement"] == 1
    assert _same(first["agreement"], real(pid))
    again = store.review.statistics(pid)  # nothing changed: read from the store
    assert calls["agreement"] == 1 and _same(again["agreement"], first["agreement"])
    with store.transaction() as session:
        stored = session.scalars(select(StatsCache).where(StatsCache.project_id == pid)).all()
    assert {row.name for row in stored} == {"agreement", "rewrite_check", "model"}
    assert {row.revision for row in stored} == {_revision(store, pid)}
    # a draft changes no figure and moves no revision
    before = _revision(store, pid)
    _judge(store, pid, ids["ann3"], "2", submit=False)
    assert _revision(store, pid) == before
    store.review.statistics(pid)
    assert calls["agreement"] == 1


def test_a_judgment_through_the_web_api_changes_the_page(project):
    from parakit.annotate.web import create_app

    store, pid, ids = _double(project)
    app = create_app(store)
    admin = client_for(app, "admin")
    page = admin.get(f"/admin/p/{pid}/stats").text
    cached = store.review.statistics(pid)["agreement"]
    # ann3 judges the disputed item (a third opinion, in a third slot): the figures change
    disputed = next(i for i, _ in store.review.disagreements(pid))
    with store.transaction() as session:
        session.add(
            Assignment(
                project_id=pid,
                task="classify",
                item_id=disputed.id,
                slot=3,
                batch="third",
                position=99,
                annotator_id=ids["ann3"],
                status="open",
            )
        )
    ann3 = client_for(app, "ann3")
    nxt = ann3.get(f"/api/projects/{pid}/next", headers=H).json()
    assert nxt["item"] == disputed.id
    saved = ann3.post(
        f"/api/items/{disputed.id}/save",
        headers=H,
        json={"label": "3", "revision": 0, "submit": True},
    )
    assert saved.status_code == 200, saved.text
    served = _served_fresh(store, pid)
    assert not _same(served["agreement"], cached)
    assert admin.get(f"/admin/p/{pid}/stats").text != page


def test_every_change_moves_the_revision_and_no_stale_report_is_served(project):
    store, pid, ids = _double(project)

    def edit_submitted():
        own = store.queue.annotation(store.queue.history(pid, ids["ann1"])[0].item_id, ids["ann1"])
        # the edit of a submitted judgment: its lease is the done assignment
        store.queue.save(own.item_id, ids["ann1"], label="1", revision=own.revision, submit=True)

    def resolve():
        item, _ = store.review.disagreements(pid)[0]
        store.review.resolve(item.id, "2", ids["admin"])

    def import_pairs():
        store.projects.import_pairs(
            pid, PairSet([Pair("new1", "One more.", "Another one.")], scheme="turku")
        )

    def delete_judgment():  # no service deletes one: any path must still move the revision
        with store.transaction() as session:
            victim = session.scalar(
                select(Annotation.id)
                .where(Annotation.project_id == pid, Annotation.status == "submitted")
                .order_by(Annotation.id)
                .limit(1)
            )
            session.execute(delete(Annotation).where(Annotation.id == victim))

    def bulk_relabel():  # a hand-made bulk edit (one statement, several rows)
        with store.transaction() as session:
            session.execute(
                update(Annotation)
                .where(Annotation.project_id == pid, Annotation.annotator_id == ids["ann2"])
                .values(label="1")
            )

    def change_scheme():
        with store.transaction() as session:
            project = session.get(Project, pid)
            project.scheme = {**project.scheme, "note": "changed"}

    def unresolve():
        with store.transaction() as session:
            session.execute(
                update(Item).where(Item.project_id == pid).values(resolved_by=None, label=None)
            )

    steps = [
        edit_submitted,
        resolve,
        import_pairs,
        delete_judgment,
        bulk_relabel,
        change_scheme,
        unresolve,
    ]
    reports = [_served_fresh(store, pid)]
    for step in steps:
        before = _revision(store, pid)
        step()
        assert _revision(store, pid) > before, step.__name__
        reports.append(_served_fresh(store, pid))
    # the judgment changes did change the figures the page shows
    agreement = [r["agreement"] for r in reports]
    assert not _same(agreement[0], agreement[1])  # the edit
    assert not _same(agreement[1], agreement[2])  # the resolution (kappa vs consensus)
    assert not _same(agreement[3], agreement[4])  # the delete


def test_a_change_made_while_a_report_is_computed_is_not_hidden(project, monkeypatch):
    """The revision is read before the report is computed: a judgment committed meanwhile
    leaves the stored report at the older revision, so the next view computes it again."""
    store, pid, ids = project
    store.queue.assign(pid, mode="double")
    for name in ("ann1", "ann2"):
        _judge(store, pid, ids[name], "4")
    real = store.review.agreement
    late = []

    def racing(project_id):
        report = real(project_id)
        if not late:  # another worker saves a judgment once the figures are counted
            late.append(_judge(store, pid, ids["ann1"], "3"))
            late.append(_judge(store, pid, ids["ann2"], "2"))
        return report

    monkeypatch.setattr(store.review, "agreement", racing)
    stale = store.review.statistics(pid)["agreement"]
    monkeypatch.setattr(store.review, "agreement", real)
    served = _served_fresh(store, pid)
    assert not _same(served["agreement"], stale)


def test_reports_with_nan_round_trip_through_the_store(project):
    store, pid, ids = project
    store.queue.assign(pid, mode="double")
    for name in ("ann1", "ann2"):
        _judge(store, pid, ids[name], "3")  # one label only: kappa is undefined (NaN)
    first = _served_fresh(store, pid)
    assert any(v != v for v in first["agreement"].values())
    assert math.isnan(first["model"]["kept_rate"])
    second = store.review.statistics(pid)  # from the store
    for name in first:
        assert _same(first[name], second[name])


def test_a_restored_store_serves_fresh_reports(project, tmp_path):
    from parakit.annotate.backup import backup, restore, store_key
    from parakit.annotate.store import Store

    store, pid, _ = _double(project)
    served = _served_fresh(store, pid)
    if store.engine.dialect.name != "sqlite":
        pytest.skip("the restore into a new SQLite file is enough here")
    source = store.engine.url.database
    backup(source, tmp_path / "dump.jsonl.gz")
    restore(tmp_path / "dump.jsonl.gz", tmp_path / "back.sqlite", key=store_key(source))
    back = Store.open(tmp_path / "back.sqlite", cheap_hashing=True)
    try:
        assert _same(_served_fresh(back, pid)["agreement"], served["agreement"])
        with back.transaction() as session:
            session.execute(
                delete(Annotation).where(Annotation.project_id == pid, Annotation.label == "3")
            )
        assert not _same(_served_fresh(back, pid)["agreement"], served["agreement"])
    finally:
        back.close()


def test_deleting_a_project_deletes_its_reports(project):
    store, pid, _ = _double(project)
    store.review.statistics(pid)
    store.projects.delete_project(pid)
    with store.transaction() as session:
        assert session.scalar(select(StatsCache).where(StatsCache.project_id == pid)) is None


def test_page_figures_equal_a_recount_after_a_mix_of_operations(project):
    """The project and progress pages' figures (grouped in SQL over the covering indexes)
    equal a count of every judgment in Python after submissions, edits, drafts, a skip, a
    resolution and a third opinion."""
    store, pid, ids = project
    store.projects.import_pairs(
        pid,
        PairSet(
            [Pair(f"x{n}", f"left {n}", f"right {n}") for n in range(9)],
            scheme="turku",
        ),
    )
    store.queue.assign(pid, mode="double")
    plan = {"ann1": ["4", "4s", "3", "2", "4i", "1"], "ann2": ["4", "3", "3", "2", "4", "2"]}
    for name, labels in plan.items():
        for label in labels:
            _judge(store, pid, ids[name], label)
    _judge(store, pid, ids["ann3"], "4", submit=False)  # a draft: counts nowhere
    work = store.queue.lease_next(pid, ids["ann3"])
    store.queue.skip(work.item_id, ids["ann3"])
    mine = store.queue.history(pid, ids["ann2"])[0]
    store.queue.save(mine.item_id, ids["ann2"], label="1", revision=mine.revision, submit=True)
    first, _ = store.review.disagreements(pid)[0]
    store.review.resolve(first.id, "4", ids["admin"])

    judgments = store.queue.submitted(pid)
    by_item: dict[int, list] = {}
    for ann in judgments:
        by_item.setdefault(ann.item_id, []).append(ann)
    twice = {i: a for i, a in by_item.items() if len({x.annotator_id for x in a}) > 1}
    open_disputes = [
        i
        for i, a in by_item.items()
        if len({x.label for x in a}) > 1 and store.item(i).resolved_by is None
    ]
    assert first.id not in open_disputes
    assert store.review.agreement_summary(pid) == {
        "judged_twice": len(twice),
        "agreed": sum(len({x.label for x in a}) == 1 for a in twice.values()),
    }
    assert store.review.disagreement_count(pid) == len(open_disputes)
    assert store.review.qa_count(pid) == sum(
        1
        for a in judgments
        if ("s" in a.flags or "i" in a.flags) and store.item(a.item_id).resolved_by is None
    )
    assert store.queue.count_annotations(pid) == len(judgments)
    done = Counter(a.annotator_id for a in judgments)
    rows = {row["annotator"]: row["done"] for row in store.queue.annotator_progress(pid)}
    names = store.accounts.annotator_names()
    assert rows == {names[uid]: n for uid, n in done.items()}
    progress = store.queue.project_progress(pid)[pid]
    assert progress[0]["done"] == len(judgments)
