"""Issue 21 item 6, screens for all-day work: label meanings beside their keys, document
titles in context headers, finishing a document pair (confirmed in the page, re-opened by an
admin), Markdown guidelines, per-project progress, skip to the back of the queue,
server-decided suggestion provenance, the item browser paginated in SQL."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi", reason="install parakit[annotate] for the web app")
pytest.importorskip("httpx", reason="pip install httpx (FastAPI's TestClient needs it)")

from parakit.annotate.web import create_app
from parakit.schema import Document, Pair, PairSet, Span

from .conftest import client_for, item_of

H = {"X-Parakit": "1"}


def _users(store):
    return {
        "admin": store.accounts.add_annotator("admin", "admin-password", role="admin"),
        "ann1": store.accounts.add_annotator("ann1", "password-one"),
        "ann2": store.accounts.add_annotator("ann2", "password-two"),
    }


def test_skip_in_a_double_pool_sends_the_item_to_the_back(project):
    """Before: skipping slot 1 of item A left slot 2 of A first in the pool, so the very next
    lease was A again. Now every open slot of A moves behind B and C."""
    store, pid, ids = project
    store.queue.assign(pid, mode="double", seed=3)
    app = create_app(store)
    with client_for(app, "ann1") as c:
        first = item_of(c.get(f"/p/{pid}/classify").text)
        assert c.post(f"/api/items/{first}/skip", headers=H, json={}).json() == {"ok": True}
        seen = []
        while 'id="done"' not in (page := c.get(f"/p/{pid}/classify").text):
            item = item_of(page)
            seen.append(item)
            r = c.post(f"/api/items/{item}/save", headers=H, json={"label": "4", "submit": True})
            assert r.status_code == 200
    # the two other items first, the skipped one last, each once
    assert len(seen) == 3 and seen[-1] == first and first not in seen[:2]
    # ann2 still gets all three (the skipped item's slots stay open for the second annotator)
    got = []
    while (work := store.queue.lease_next(pid, ids["ann2"])) is not None:
        got.append(work.item_id)
        store.queue.save(work.item_id, ids["ann2"], label="4", revision=0, submit=True)
    assert sorted(got) == sorted(seen)


def test_skip_leaves_another_annotators_personal_slot_in_place(project):
    """Double annotation in personal queues: ann1's skip moves ann1's slot only; ann2's slot
    of the same item keeps its place at the head of ann2's queue."""
    store, pid, ids = project
    store.queue.assign(pid, mode="double", annotators=[ids["ann1"], ids["ann2"]], seed=3)
    first = store.queue.lease_next(pid, ids["ann1"]).item_id
    store.queue.skip(first, ids["ann1"])
    assert store.queue.lease_next(pid, ids["ann2"]).item_id == first
    assert store.queue.lease_next(pid, ids["ann1"]).item_id != first


def test_label_meanings_and_document_titles_on_the_classify_page(store):
    ids = _users(store)
    pid = store.projects.create_project("titled", "turku", settings={"descriptions": {"4": "ours"}})
    hexid = "3037fc54687a277b4ac11f96c0a7a76d2569725d"
    docs = [
        Document(hexid, "The cat sat on the mat.", {"title": "Cats & mats (1987)"}),
        Document("d2", "A cat was sitting on the mat."),
    ]
    pair = Pair(
        "p1",
        "The cat sat on the mat.",
        "A cat was sitting on the mat.",
        span1=Span(hexid, 0, 23),
        span2=Span("d2", 0, 29),
    )
    store.projects.import_pairs(pid, PairSet([pair], scheme="turku", documents=docs))
    store.projects.add_member(pid, ids["ann1"])
    store.queue.assign(pid)
    with client_for(create_app(store), "ann1") as c:
        page = c.get(f"/p/{pid}/classify").text
    # the title, escaped, with the id as its tooltip; no title: the id
    assert f'<span id="title1" title="{hexid}">Cats &amp; mats (1987)</span>' in page
    assert '<span id="title2" title="d2">d2</span>' in page
    # meanings on the page beside each key (the project's over the Turku defaults)
    assert '<kbd>4</kbd><span class="meaning" id="meaning-4">ours</span>' in page
    assert '<span class="meaning" id="meaning-2">related, but not a paraphrase</span>' in page
    assert 'id="meaning-lt">statement 1 is more specific' in page
    assert 'title="ours"' not in page


def _doc_pair_project(store, title="Council news"):
    ids = _users(store)
    pid = store.projects.create_project("docs", "turku", settings={"suggestions": True})
    store.projects.import_document_pairs(
        pid,
        PairSet(
            [
                Pair(
                    "dp1",
                    "The council met on Monday. It decided to build a library.",
                    "On Monday the council held a meeting. A library will be built.",
                    metadata={"title": title},
                )
            ]
        ),
    )
    store.projects.add_member(pid, ids["ann1"])
    store.queue.assign_document_pairs(pid, [ids["ann1"]])
    return pid, ids


def test_finish_then_an_admin_reopens_the_document_pair(store):
    pid, ids = _doc_pair_project(store)
    app = create_app(store)
    ann = client_for(app, "ann1")
    page = ann.get(f"/p/{pid}/extract").text
    assert '<div class="muted doc-title" id="title1">Council news</div>' in page
    # the page asks before finishing: the confirmation bar, hidden until f or the button
    assert 'id="confirm" hidden' in page and 'id="confirm-yes"' in page
    dp = int(re.search(r'"doc_pair": (\d+)', page).group(1))
    added = ann.post(
        f"/api/docpairs/{dp}/pairs",
        headers=H,
        json={"begin1": 0, "end1": 26, "begin2": 0, "end2": 37},
    )
    assert added.status_code == 200
    assert ann.post(f"/api/docpairs/{dp}/finish", headers=H, json={}).json() == {
        "ok": True,
        "status": "finished",
    }
    # finished: no more changes, and nothing left to extract
    late = ann.post(
        f"/api/docpairs/{dp}/pairs",
        headers=H,
        json={"begin1": 27, "end1": 57, "begin2": 38, "end2": 62},
    )
    assert late.status_code == 409 and "E618" in late.text
    assert 'id="done"' in ann.get(f"/p/{pid}/extract").text
    # only an admin re-opens
    assert ann.post(f"/api/admin/docpairs/{dp}/reopen", headers=H).status_code == 403
    admin = client_for(app, "admin")
    listing = admin.get(f"/admin/p/{pid}/docpairs?status=finished").text
    assert "1 document pairs" in listing and f'id="reopen-{dp}"' in listing
    assert "Council news" in listing and "by ann1" in listing
    assert admin.post(f"/api/admin/docpairs/{dp}/reopen", headers=H).json() == {"status": "open"}
    row = store.doc_pair(dp)
    assert (row.status, row.finished_by, row.finished_at) == ("open", None, None)
    assert row.meta["reopened"][0]["was"] == "finished"
    assert row.meta["reopened"][0]["finished_by"] == ids["ann1"]
    again = admin.post(f"/api/admin/docpairs/{dp}/reopen", headers=H)
    assert again.status_code == 409 and "only a finished or empty" in again.text
    # back in ann1's queue with their pair, which they can change again
    page = ann.get(f"/p/{pid}/extract").text
    assert f'"doc_pair": {dp}' in page and '<span id="count">1</span>' in page
    assert store.queue.progress(pid, ids["ann1"], "extract") == {"done": 0, "remaining": 1}
    more = ann.post(
        f"/api/docpairs/{dp}/pairs",
        headers=H,
        json={"begin1": 27, "end1": 57, "begin2": 38, "end2": 62},
    )
    assert more.status_code == 200
    assert ann.post(f"/api/docpairs/{dp}/finish", headers=H, json={}).json()["status"] == "finished"
    assert len(store.extraction.extracted_pairs(dp)) == 2
    assert "0 document pairs" in admin.get(f"/admin/p/{pid}/docpairs?status=open").text


def test_provenance_is_the_servers_through_the_api(store):
    pid, _ids = _doc_pair_project(store)
    ann = client_for(create_app(store), "ann1")
    page = ann.get(f"/p/{pid}/extract").text
    dp = int(re.search(r'"doc_pair": (\d+)', page).group(1))
    served = ann.get(f"/api/docpairs/{dp}/suggestions").json()["suggestions"]
    top = served[0]
    spans = {k: top[k] for k in ("begin1", "end1", "begin2", "end2")}
    # the client says nothing: the spans are suggestion 1's, so the server records it
    a = ann.post(f"/api/docpairs/{dp}/pairs", headers=H, json=spans).json()["item"]
    assert store.item(a).meta == {"suggestion": {"rank": top["rank"], "adjusted": False}}
    # the client claims a suggestion (and "unadjusted") for spans of its own: by hand
    lie = {"begin1": 0, "end1": 3, "begin2": 0, "end2": 2}
    far = next(s for s in served if s["begin1"] >= 3 and s["begin2"] >= 2)
    b = ann.post(
        f"/api/docpairs/{dp}/pairs",
        headers=H,
        json={**lie, "suggestion": {"rank": far["rank"], "adjusted": False}},
    ).json()["item"]
    assert store.item(b).suggested is False and store.item(b).meta == {}


def test_guidelines_in_markdown_rendered_safely_and_edited_by_admins(project):
    store, pid, _ids = project
    source = (
        "## Step 1\n\nRead **both** sides.\n\n- label 4: same meaning\n\n"
        "<script>alert('x')</script>\n\n[click](javascript:alert(1)) <img src=x onerror=alert(1)>"
    )
    app = create_app(store)
    admin = client_for(app, "admin")
    r = admin.post(f"/api/admin/projects/{pid}/settings", headers=H, json={"guidelines": source})
    assert r.json()["settings"]["guidelines"] == source
    editor = admin.get(f"/p/{pid}/guidelines").text
    # the admin's editor holds the source (escaped in the textarea) and saves it
    assert 'id="guidelines-source"' in editor and "&lt;script&gt;alert(" in editor
    assert 'id="save-guidelines"' in editor
    with client_for(app, "ann1") as c:
        page = c.get(f"/p/{pid}/guidelines").text
    shown = page[page.index('<div id="guidelines"') : page.index("<h2>Labels</h2>")]
    assert "<h2>Step 1</h2>" in shown and "<strong>both</strong>" in shown
    assert "<li>label 4: same meaning</li>" in shown
    # raw HTML is text, a javascript: link is no link
    assert "<script>" not in shown and "&lt;script&gt;alert('x')&lt;/script&gt;" in shown
    assert "<img" not in shown and "href=" not in shown
    assert 'id="guidelines-source"' not in page  # annotators read, admins edit


def test_per_project_progress_on_the_admin_overview(project):
    store, pid, ids = project
    other = store.projects.create_project("empty one", "binary")
    store.queue.assign(pid, mode="double")
    for _ in range(2):
        work = store.queue.lease_next(pid, ids["ann1"])
        store.queue.save(work.item_id, ids["ann1"], label="4", revision=0, submit=True)
    assert store.queue.project_progress() == {pid: [{"task": "classify", "done": 2, "total": 6}]}
    page = client_for(create_app(store), "admin").get("/admin").text
    cell = re.search(rf'<td id="project-progress-{pid}">(.*?)</td>', page, re.S).group(1)
    assert 'Classify: <span class="count">2 / 6</span>' in cell
    assert '<progress max="6" value="2">' in cell
    cell = re.search(rf'<td id="project-progress-{other}">(.*?)</td>', page, re.S).group(1)
    assert "nothing assigned" in cell


def test_the_item_browser_reads_one_page(store):
    """45 items, every third double-annotated (items 1, 4, 7, ...; 1, 10, 19, ... disputed);
    a page loads its 20 items (or fewer), never the project."""
    from sqlalchemy import event

    from parakit.annotate.models import Item

    ids = _users(store)
    pid = store.projects.create_project("many", "turku")
    store.projects.add_member(pid, ids["ann1"])
    store.projects.add_member(pid, ids["ann2"])
    pairs = [Pair(f"p{n:02d}", f"left {n}", f"right {n}") for n in range(1, 46)]
    store.projects.import_pairs(pid, PairSet(pairs, scheme="turku"))
    item_ids = {store.item(i).key: i for i in range(1, 46)}
    judged = [item_ids[f"p{n:02d}"] for n in range(1, 46, 3)]  # 15 items
    store.queue.assign(pid, mode="double", items=judged, annotators=[ids["ann1"], ids["ann2"]])
    for who in ("ann1", "ann2"):
        while (work := store.queue.lease_next(pid, ids[who])) is not None:
            n = int(store.item(work.item_id).key[1:])
            label = "3" if who == "ann2" and n % 9 == 1 else "4"
            store.queue.save(work.item_id, ids[who], label=label, revision=0, submit=True)
    loaded = []

    def count(target, _context):
        loaded.append(target.id)

    event.listen(Item, "load", count)
    try:
        rows, total = store.review.browse(pid, page=3, per_page=20)
        assert total == 45 and [r["item"].key for r in rows] == [f"p{n}" for n in range(41, 46)]
        assert len(loaded) == 5
        loaded.clear()
        rows, total = store.review.browse(pid, state="disputed", per_page=20)
        # disputed: 1, 10, 19, 28, 37 (n % 9 == 1 among 1, 4, 7, ...)
        assert total == 5 and [r["item"].key for r in rows] == ["p01", "p10", "p19", "p28", "p37"]
        assert [(name, a.label) for name, a in rows[0]["annotations"]] == [
            ("ann1", "4"),
            ("ann2", "3"),
        ]
        assert len(loaded) == 5
        loaded.clear()
        rows, total = store.review.browse(pid, state="labelled", page=2, per_page=4)
        # agreed items get their label: 15 judged - 5 disputed = 10, page 2 of 4 each
        assert total == 10 and [r["item"].key for r in rows] == ["p22", "p25", "p31", "p34"]
        # ann2 said 3 on 1, 10, 19, 28, 37; "left 1" is in left 1, left 10, left 19
        rows, total = store.review.browse(pid, annotator=ids["ann2"], label="3", text="LEFT 1")
        assert total == 3 and [r["item"].key for r in rows] == ["p01", "p10", "p19"]
        assert store.review.browse(pid, page=99, per_page=20) == ([], 45)
    finally:
        event.remove(Item, "load", count)
    page = client_for(create_app(store), "admin").get(f"/admin/p/{pid}/items?page=3").text
    assert "45 items · page 3 of 3" in page and "p45" in page and "p40" not in page
