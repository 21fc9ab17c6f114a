"""The store on SQLite and PostgreSQL: leases, drafts, revisions, double annotation, export."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from sqlalchemy import inspect, text

from parakit.annotate.store import Store, utcnow
from parakit.errors import Conflict, LabelError


def test_migration_matches_models(store):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from parakit.annotate.models import Base

    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        version = conn.execute(text("select version_num from alembic_version")).scalar()
    assert diff == []
    assert version == "0008"
    assert {"annotators", "items", "annotations", "assignments"} <= set(
        inspect(store.engine).get_table_names()
    )


def test_upgrade_in_place_keeps_data(tmp_path):
    from parakit.annotate.store import make_engine, store_url, upgrade

    engine = make_engine(store_url(tmp_path / "old.sqlite"))
    upgrade(engine, "0001")  # a store made by an older parakit
    old = Store(engine, cheap_hashing=True)
    uid = old.accounts.add_annotator("keeper", "keeper-password")
    engine.dispose()
    st = Store.open(tmp_path / "old.sqlite")  # upgrades to head
    assert st.accounts.annotator_id("keeper") == uid
    assert "ix_assignments_item" in {
        i["name"] for i in inspect(st.engine).get_indexes("assignments")
    }
    st.close()


def test_sqlite_uses_wal(tmp_path):
    st = Store.open(tmp_path / "p.sqlite")
    with st.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
    st.close()


def test_passwords_are_hashed_and_sessions_expire(store):
    uid = store.accounts.add_annotator("alice", "correct horse")
    with store.engine.connect() as conn:
        stored = conn.execute(text("select password_hash from annotators")).scalar()
    assert "correct horse" not in stored and stored.startswith("$argon2id$")
    assert store.accounts.authenticate("alice", "wrong password") is None
    assert store.accounts.authenticate("nobody", "correct horse") is None
    user = store.accounts.authenticate("alice", "correct horse")
    assert user is not None and user.id == uid
    token = store.accounts.start_session(uid, timedelta(seconds=1))
    assert store.accounts.session_user(token).name == "alice"
    assert store.accounts.session_user(token + "x") is None
    time.sleep(1.2)
    assert store.accounts.session_user(token) is None
    with pytest.raises(Conflict):
        store.accounts.add_annotator("alice", "another password")


def test_single_annotation_leases(project):
    store, pid, ids = project
    assert store.queue.assign(pid, mode="single") == 3
    a1 = store.queue.lease_next(pid, ids["ann1"])
    a2 = store.queue.lease_next(pid, ids["ann2"])
    assert a1.item_id != a2.item_id  # never the same single-annotation item
    assert store.queue.lease_next(pid, ids["ann1"]).id == a1.id  # a refresh shows the same item
    # an abandoned lease returns to the queue
    store.queue.lease_next(pid, ids["ann3"])  # takes the third item
    assert store.queue.lease_next(pid, ids["admin"]) is None
    with store.transaction() as s:
        s.execute(
            text("update assignments set lease_expires = :t where id = :i"),
            {"t": utcnow() - timedelta(seconds=1), "i": a1.id},
        )
    taken = store.queue.lease_next(pid, ids["admin"])
    assert taken.id == a1.id
    # ann1 lost the lease: a late submit is refused
    with pytest.raises(Conflict):
        store.queue.save(a1.item_id, ids["ann1"], label="4", revision=0, submit=True)
    store.queue.save(a1.item_id, ids["admin"], label="3", revision=0, submit=True)
    assert store.item(a1.item_id).label == "3"


def test_drafts_revisions_and_stale_tabs(project):
    store, pid, ids = project
    store.queue.assign(pid, mode="single", annotators=[ids["ann1"]])
    a = store.queue.lease_next(pid, ids["ann1"])
    d = store.queue.save(a.item_id, ids["ann1"], label="4", revision=0, submit=False, comment="hm")
    assert (d.revision, d.status) == (1, "draft")
    # refresh: the draft is served back
    got = store.queue.annotation(a.item_id, ids["ann1"])
    assert (got.label, got.comment, got.revision, got.status) == ("4", "hm", 1, "draft")
    s = store.queue.save(
        a.item_id,
        ids["ann1"],
        label="4>s",
        revision=1,
        submit=True,
        rewrite=("x1", "x2"),
        unsure=True,
    )
    assert (s.revision, s.status) == (2, "submitted")
    # a stale tab still on revision 1 cannot overwrite the newer answer
    with pytest.raises(Conflict):
        store.queue.save(a.item_id, ids["ann1"], label="2", revision=1, submit=True)
    # undo/back: the annotator edits the submitted item with the current revision
    store.queue.save(a.item_id, ids["ann1"], label="4s", revision=2, submit=True)
    row = store.queue.annotation(a.item_id, ids["ann1"])
    assert (row.label, row.flags, row.revision, row.rewrite1) == ("4s", "s", 3, None)
    assert store.item(a.item_id).label == "4s"
    with pytest.raises(LabelError):
        store.queue.save(a.item_id, ids["ann1"], label="3s", revision=3, submit=True)  # flags on 3
    # personal queue: ann2 gets nothing from ann1's queue
    assert store.queue.lease_next(pid, ids["ann2"]) is None


def test_double_annotation_is_blind_and_needs_two_people(project):
    store, pid, ids = project
    assert store.queue.assign(pid, mode="double") == 6
    seen = {}
    for name in ("ann1", "ann2"):
        for _ in range(3):
            a = store.queue.lease_next(pid, ids[name])
            assert a is not None
            seen.setdefault(name, []).append(a.item_id)
            store.queue.save(
                a.item_id, ids[name], label="4" if name == "ann1" else "2", revision=0, submit=True
            )
        assert store.queue.lease_next(pid, ids[name]) is None  # never both slots of an item
    assert sorted(seen["ann1"]) == sorted(seen["ann2"])
    # the second annotator only ever sees their own annotation
    assert store.queue.annotation(seen["ann1"][0], ids["ann2"]).label == "2"
    conflicts = store.review.disagreements(pid)
    assert len(conflicts) == 3
    item, anns = conflicts[0]
    assert {a.label for a in anns} == {"4", "2"}
    store.review.resolve(item.id, "3", ids["admin"])
    assert len(store.review.disagreements(pid)) == 2
    assert store.item(item.id).label == "3"


def test_export_turku_and_jsonl(project, tmp_path):
    store, pid, ids = project
    store.queue.assign(pid, mode="single")
    labels = {"p1": "4<", "p2": "1", "p3": "x"}
    for _ in range(3):
        a = store.queue.lease_next(pid, ids["ann1"])
        item = store.item(a.item_id)
        store.queue.save(
            a.item_id,
            ids["ann1"],
            label=labels[item.key],
            revision=0,
            submit=True,
            rewrite=("R1", "R2") if item.key == "p1" else None,
        )
    out = store.exports.export(pid, tmp_path / "tiny.json", drop_labels=("1", "x"))
    data = json.loads(out.read_text())
    # the writer may add the pair's id and source (kept out of this comparison)
    data = [{k: v for k, v in row.items() if k not in ("id", "source")} for row in data]
    assert data == [
        {
            "context": {"beg1": 0, "beg2": 0, "doc1": "d1", "doc2": "d2", "end1": 23, "end2": 29},
            "fold": None,
            "goeswith": "g1",
            "label": "4<",
            "rewrites": [["R1", "R2"]],
            "txt1": "The cat sat on the mat.",
            "txt2": "A cat was sitting on the mat.",
        }
    ]
    import gzip

    with gzip.open(tmp_path / "tiny-texts.json.gz") as handle:
        texts = json.loads(handle.read())
    assert set(texts) == {"d1", "d2"}
    from parakit import io

    store.exports.export(pid, tmp_path / "tiny.jsonl", judgments=True)
    back = io.read(tmp_path / "tiny.jsonl")
    assert [p.label for p in back] == ["4<", "1", "x"]
    assert back[0].judgments[0].annotator == "ann1"
    assert back.verify_spans() == 4


def test_qa_queue_oldest_first_and_rewrite_check(project):
    store, pid, ids = project
    store.queue.assign(pid, mode="single", annotators=[ids["ann1"]])
    order = []
    for label in ("4s", "4i", "3"):
        a = store.queue.lease_next(pid, ids["ann1"])
        order.append(a.item_id)
        store.queue.save(
            a.item_id,
            ids["ann1"],
            label=label,
            revision=0,
            submit=True,
            rewrite=("rw a", "rw b") if label == "3" else None,
        )
    qa = store.review.qa_queue(pid)
    # T8: grouped by label, oldest first within a label (4s was submitted before 4i)
    assert [ann.label for _, ann in qa] == ["4i", "4s"]
    assert [item.id for item, _ in qa] == [order[1], order[0]]
    made = store.review.make_rewrite_check(pid, seed=1)
    assert made == 4  # (one rewrite + one ordinary pair, 50/50) x two annotations each
    # never to the rewrite's author (nor the labeller of the ordinary pair)
    assert store.queue.lease_next(pid, ids["ann1"], task="rewrite-check") is None
    judged = {}
    for who, answer in (("ann2", "4"), ("ann3", "2")):
        for _ in range(2):
            got = store.queue.lease_next(pid, ids[who], task="rewrite-check")
            item = store.item(got.item_id)
            label = answer if item.origin == "rewrite" else item.label
            store.queue.save(
                got.item_id, ids[who], label=label, revision=0, submit=True, task="rewrite-check"
            )
            judged.setdefault(got.item_id, []).append(who)
        assert store.queue.lease_next(pid, ids[who], task="rewrite-check") is None
    assert all(len(v) == 2 for v in judged.values())  # each item twice, by two people
    report = store.review.rewrite_check_report(pid)
    assert report["rewrites"] == 1 and report["judged_twice"] == 1
    assert report["share_4"] == 0.5 and report["share_4_both"] == 0.0
    assert report["control_agreement"] == 1.0
    assert store.review.make_rewrite_check(pid, seed=1) == 0  # idempotent


def test_extraction_flow(store):
    from parakit.schema import Pair, PairSet

    admin = store.accounts.add_annotator("admin", "admin-password", role="admin")
    ann = store.accounts.add_annotator("ann", "ann-password")
    pid = store.projects.create_project("ext", "turku", settings={"classify_mode": "double"})
    docs = PairSet(
        [
            Pair("dp1", "Alpha beta. Gamma delta.", "Beta alpha! Delta gamma!", source="news"),
            Pair("dp2", "Nothing here.", "Nothing there.", source="news"),
        ]
    )
    assert store.projects.import_document_pairs(pid, docs) == 2
    assert store.queue.assign_document_pairs(pid) == 2
    a = store.queue.lease_next(pid, ann, task="extract")
    dp = store.doc_pair(a.doc_pair_id)
    item_id = store.extraction.add_extracted_pair(dp.id, ann, 0, 11, 0, 11)
    assert store.item(item_id).text1 == "Alpha beta."
    assert store.item(item_id).text2 == "Beta alpha!"
    with pytest.raises(Exception, match="E608"):
        store.extraction.add_extracted_pair(dp.id, ann, 0, 100, 0, 5)
    store.extraction.finish_doc_pair(dp.id, ann)
    b = store.queue.lease_next(pid, ann, task="extract")
    store.extraction.finish_doc_pair(b.doc_pair_id, ann, empty=True)
    assert store.doc_pair(b.doc_pair_id).status == "empty"
    # the extracted pair is queued for double classification
    c1 = store.queue.lease_next(pid, ann)
    c2 = store.queue.lease_next(pid, admin)
    assert c1.item_id == c2.item_id == item_id and c1.slot != c2.slot
    rows = store.extraction.extraction_rows(pid)
    assert sorted(r["spans1"] != [] for r in rows) == [False, True]


def test_import_checks_spans_by_the_data_model_rules():
    """check_importable reads spans with PairSet.span_texts: an unknown document (with the
    upload hint), a span past its document's end, and spans of other words are refused."""
    from parakit.annotate.services.projects import check_importable
    from parakit.errors import SpanError
    from parakit.schema import Document, Pair, PairSet, Span

    doc = Document("d", "The cat sat. A dog ran.")
    good = Pair("p", "The cat sat.", "A dog ran.", span1=Span("d", 0, 12), span2=Span("d", 13, 23))
    check_importable(PairSet([good], documents=[doc]), spans=True)
    unknown = good.replace(span1=Span("e", 0, 12))
    with pytest.raises(SpanError, match="unknown document 'e'.*upload both"):
        check_importable(PairSet([unknown], documents=[doc], validate=False), spans=True)
    outside = good.replace(span2=Span("d", 13, 40))
    with pytest.raises(SpanError, match=r"span2.*\[13, 40\) lies outside"):
        check_importable(PairSet([outside], documents=[doc], validate=False), spans=True)
    other = good.replace(span1=Span("d", 13, 23), span2=Span("d", 0, 12))
    with pytest.raises(SpanError, match="2 of 2 context spans cover other words"):
        check_importable(PairSet([other], documents=[doc], validate=False), spans=True)
