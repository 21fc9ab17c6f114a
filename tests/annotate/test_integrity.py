"""Imports are all-or-nothing, bad requests change nothing, extraction keeps its rules,
the quick start leaves no unreachable pool (issue 14, items 7-10), on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import shutil

import pytest
from sqlalchemy import func, select

from parakit.annotate.models import Base
from parakit.annotate.services.projects import read_pairs
from parakit.errors import AnnotateError, Conflict, NotFound, ParakitError
from parakit.schema import Document, Pair, PairSet, Span

from .conftest import tiny_pairs

TURKU = "turku/sv-test.json"


def snapshot(store) -> dict[str, int]:
    """Row count of every table: 'exactly as before' means all equal."""
    with store.transaction() as session:
        return {
            name: session.scalar(select(func.count()).select_from(table))
            for name, table in Base.metadata.tables.items()
        }


def bad_sets() -> dict[str, PairSet]:
    good = tiny_pairs()
    doc = Document("d", "Alpha beta gamma.")
    return {
        "empty": PairSet([], scheme="turku"),
        "surrogate": PairSet([Pair("s", "bad \ud800 text", "ok")], scheme="turku"),
        "nul": PairSet([Pair("n", "bad \x00 text", "ok")], scheme="turku"),
        "nul-document": PairSet(
            [Pair("n", "Alpha", "x", span1=Span("d", 0, 5))],
            scheme="turku",
            documents=[Document("d", "Alpha\x00")],
        ),
        "span-outside": PairSet(
            [Pair("o", "Alpha", "x", span1=Span("d", 0, 500))], scheme="turku", documents=[doc]
        ),
        "span-other-words": PairSet(
            [Pair("w", "Omega", "x", span1=Span("d", 0, 5))], scheme="turku", documents=[doc]
        ),
        "duplicate-ids": PairSet(
            [good[0], good[0].replace(text2="another")],
            scheme="turku",
            documents=good.documents,
            validate=False,
        ),
    }


@pytest.mark.parametrize("case", list(bad_sets()))
def test_a_failed_import_leaves_the_store_exactly_as_before(store, case):
    store.accounts.add_annotator("admin", "admin-password", role="admin")
    before = snapshot(store)
    with pytest.raises(ParakitError):
        store.projects.create_with_pairs("proj", "turku", bad_sets()[case])
    assert snapshot(store) == before
    # the same name takes a good file at once
    pid, count = store.projects.create_with_pairs("proj", "turku", tiny_pairs())
    assert count == 3 and store.projects.project_id("proj") == pid


def test_whitespace_only_span_differences_are_accepted(store):
    doc = Document("d", "Alpha\nbeta gamma.")
    pairs = PairSet(
        [Pair("a", "Alpha beta", "x", span1=Span("d", 0, 10))], scheme="turku", documents=[doc]
    )
    _pid, count = store.projects.create_with_pairs("ws", "turku", pairs)
    assert count == 1


def test_the_real_turku_test_file_imports(store, shared_data):
    path = shared_data / TURKU
    if not path.exists():
        pytest.skip(f"{path} not found")
    pairs = read_pairs(path)
    pid, count = store.projects.create_with_pairs("sv-test", "turku", pairs)
    assert count == len(pairs) > 1000
    exported = store.exports.to_pairset(pid, labelled_only=False)
    assert len(exported) == count and len(exported.documents) > 0


def test_a_turku_file_without_its_texts_is_refused_clearly(tmp_path, shared_data):
    path = shared_data / TURKU
    if not path.exists():
        pytest.skip(f"{path} not found")
    alone = tmp_path / "sv-test.json"
    shutil.copy(path, alone)
    with pytest.raises(ParakitError, match="texts"):
        read_pairs(alone)
    texts = shared_data / "turku/sv-texts.json.gz"
    assert len(read_pairs(alone, texts=texts)) > 1000


def test_unknown_project_for_a_new_user_creates_nobody(store):
    pid = store.projects.create_project("p", "turku")
    before = snapshot(store)
    with pytest.raises(NotFound):
        store.accounts.add_annotator("ghost", "ghost-password", projects=[pid, 999])
    assert snapshot(store) == before
    uid = store.accounts.add_annotator("ghost", "ghost-password", projects=[pid])
    assert store.projects.members(pid) == [uid]


def test_delete_project_removes_everything_in_it(project):
    store, pid, ids = project
    other, _ = store.projects.create_with_pairs("other", "turku", tiny_pairs())
    store.queue.assign(pid, mode="double")
    work = store.queue.lease_next(pid, ids["ann1"])
    store.queue.save(work.item_id, ids["ann1"], label="4", revision=0, submit=True)
    store.queue.save(
        store.queue.lease_next(pid, ids["ann2"]).item_id,
        ids["ann2"],
        label="3",
        revision=0,
        submit=True,
        rewrite=("a", "b"),
    )
    store.review.make_rewrite_check(pid, annotations=1)  # ann3 alone may judge it
    store.projects.delete_project(pid)
    with pytest.raises(NotFound):
        store.project(pid)
    names = [row["name"] for row in store.projects.overview()]
    assert names == ["other"] and len(store.accounts.users()) == 4
    snap = snapshot(store)
    assert snap["items"] == 3 and snap["annotations"] == 0 and snap["assignments"] == 0
    assert store.projects.create_with_pairs("tiny", "turku", tiny_pairs())[1] == 3
    assert other


def _extraction_project(store):
    ann = store.accounts.add_annotator("ann", "ann-password")
    pid, _ = store.projects.create_with_pairs(
        "ext",
        "turku",
        PairSet(
            [
                Pair("dp1", "One. Two. Three. Four.", "Uno. Dos. Tres. Cuatro.", source="n"),
                Pair("dp2", "Nothing.", "Nada.", source="n"),
            ]
        ),
        kind="documents",
    )
    store.projects.add_member(pid, ann)
    store.queue.assign_task(pid, task="extract")
    dp = store.queue.lease_next(pid, ann, task="extract").doc_pair_id
    return ann, pid, dp


def test_extraction_delete_then_add_never_reuses_a_key(store):
    ann, _pid, dp = _extraction_project(store)
    spans = [(0, 4, 0, 4), (5, 9, 5, 9), (10, 16, 10, 15)]
    ids = [store.extraction.add_extracted_pair(dp, ann, *s) for s in spans]
    store.extraction.delete_extracted_pair(ids[0], ann)  # not the last one
    new = [store.extraction.add_extracted_pair(dp, ann, 17, 22, 16, 23) for _ in range(2)]
    keys = [p.key for p in store.extraction.extracted_pairs(dp)]
    assert keys == ["dp1-2", "dp1-3", "dp1-4", "dp1-5"] and len(new) == 2
    # nor when the deleted pair was the last one: its key named a pair that exported
    # judgments or an earlier release may still refer to
    store.extraction.delete_extracted_pair(new[-1], ann)
    store.extraction.add_extracted_pair(dp, ann, 17, 22, 16, 23)
    keys = [p.key for p in store.extraction.extracted_pairs(dp)]
    assert keys == ["dp1-2", "dp1-3", "dp1-4", "dp1-6"]
    for item in [p.id for p in store.extraction.extracted_pairs(dp)]:
        store.extraction.delete_extracted_pair(item, ann)  # every one of them
    store.extraction.add_extracted_pair(dp, ann, 0, 4, 0, 4)
    assert [p.key for p in store.extraction.extracted_pairs(dp)] == ["dp1-7"]


def test_no_pairs_change_after_finished_or_empty(store):
    ann, pid, dp = _extraction_project(store)
    item = store.extraction.add_extracted_pair(dp, ann, 0, 4, 0, 4)
    store.extraction.finish_doc_pair(dp, ann)
    with pytest.raises(Conflict, match="E618"):
        store.extraction.add_extracted_pair(dp, ann, 5, 9, 5, 9)
    with pytest.raises(Conflict, match="E618"):
        store.extraction.delete_extracted_pair(item, ann)
    dp2 = store.queue.lease_next(pid, ann, task="extract").doc_pair_id
    store.extraction.finish_doc_pair(dp2, ann, empty=True)
    with pytest.raises(Conflict, match="E618"):
        store.extraction.add_extracted_pair(dp2, ann, 0, 4, 0, 4)
    rows = store.extraction.extraction_rows(pid)
    assert sorted(len(r["spans1"]) for r in rows) == [0, 1]  # the empty pair owns nothing


def test_a_pool_nobody_can_see_is_refused(store):
    pid, _ = store.projects.create_with_pairs("pool", "turku", tiny_pairs())
    with pytest.raises(AnnotateError, match="E616"):
        store.queue.assign_task(pid, mode="double")
    one = store.accounts.add_annotator("one", "password-one")
    store.projects.add_member(pid, one)
    with pytest.raises(AnnotateError, match="E616"):
        store.queue.assign_task(pid, mode="double")
    assert store.queue.assign_task(pid, mode="single") == 3
    store.projects.add_member(pid, store.accounts.add_annotator("two", "password-two"))
    pid2, _ = store.projects.create_with_pairs("pool2", "turku", tiny_pairs())
    for uid in store.projects.members(pid):
        store.projects.add_member(pid2, uid)
    assert store.queue.assign_task(pid2, mode="double") == 6
    assert store.queue.lease_next(pid2, one) is not None


def test_web_import_failures_change_nothing(project, tmp_path, shared_data):
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    from parakit.annotate.web import create_app

    store, _pid, _ids = project
    h = {"X-Parakit": "1"}
    with TestClient(create_app(store)) as c:
        r = c.post("/login", data={"name": "admin", "password": "admin-password"})
        assert r.status_code == 200
        before = snapshot(store)
        for content in (b"", b'{"id": "a", "text1": "x\\u0000y", "text2": "z"}\n', b"{not json"):
            r = c.post(
                "/api/admin/projects",
                headers=h,
                data={"name": "upload", "scheme": "turku"},
                files={"file": ("f.jsonl", content, "application/json")},
            )
            assert r.status_code == 400, r.text
        r = c.post(
            "/api/admin/users",
            headers=h,
            json={"name": "ghost", "password": "ghost-password", "projects": [999]},
        )
        assert r.status_code == 404
        assert snapshot(store) == before
        path = shared_data / TURKU
        if path.exists():  # a Turku file alone is refused; with its texts file it imports
            data = path.read_bytes()
            alone = c.post(
                "/api/admin/projects",
                headers=h,
                data={"name": "sv", "scheme": "turku"},
                files={"file": ("sv-test.json", data, "application/json")},
            )
            assert alone.status_code == 400 and "texts" in alone.json()["error"]
            assert snapshot(store) == before
            texts = (shared_data / "turku/sv-texts.json.gz").read_bytes()
            both = c.post(
                "/api/admin/projects",
                headers=h,
                data={"name": "sv", "scheme": "turku"},
                files={
                    "file": ("sv-test.json", data, "application/json"),
                    "texts": ("sv-texts.json.gz", texts, "application/gzip"),
                },
            )
            assert both.status_code == 200, both.text
            sv = both.json()["id"]
            assert c.post(f"/api/admin/projects/{sv}/delete", headers=h).json() == {"ok": True}
            assert snapshot(store) == before
    assert json.dumps(before)


def test_quick_pass_before_extraction(store):
    """T4: document pairs are accepted or rejected quickly; rejected ones never reach the
    extraction queue, pairs waiting for the pass are not queued for extraction yet."""
    ann = store.accounts.add_annotator("ann", "ann-password")
    docs = PairSet([Pair(f"dp{n}", f"Left {n}.", f"Right {n}.", source="forum") for n in range(3)])
    pid, _ = store.projects.create_with_pairs("forum", "turku", docs, kind="documents")
    store.projects.add_member(pid, ann)
    assert store.queue.assign_task(pid, task="screen") == 3
    assert store.queue.assign_task(pid, task="extract") == 0  # all wait for the pass
    decisions = {}
    while (work := store.queue.lease_next(pid, ann, task="screen")) is not None:
        accept = store.doc_pair(work.doc_pair_id).key != "dp1"
        decisions[work.doc_pair_id] = store.extraction.screen(work.doc_pair_id, ann, accept)
    assert sorted(decisions.values()) == ["open", "open", "rejected"]
    assert store.queue.assign_task(pid, task="extract") == 2
    seen = []
    while (work := store.queue.lease_next(pid, ann, task="extract")) is not None:
        seen.append(store.doc_pair(work.doc_pair_id).key)
        store.extraction.finish_doc_pair(work.doc_pair_id, ann, empty=True)
    assert sorted(seen) == ["dp0", "dp2"]
    with pytest.raises(Conflict):
        store.extraction.screen(1, ann, True)  # nothing leased any more
