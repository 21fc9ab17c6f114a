"""Issue 30 item 10 (server side): readable context titles, one's recent judgments, a page per
project with a compact admin index, export links by scheme, the item browser's links to an
item's context and consensus."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi", reason="install parakit[annotate] for the web app")
pytest.importorskip("httpx", reason="pip install httpx (FastAPI's TestClient needs it)")

from parakit.annotate.web import create_app
from parakit.schema import Document, Pair, PairSet, Span

from .conftest import client_for, item_of

H = {"X-Parakit": "1"}
HTML = {"Accept": "text/html"}
HEX1 = "3037fc54687a277b4ac11f96c0a7a76d2569725d"
HEX2 = "9b1f0c7e5d2a4f3b8c6d1e0a7b9c2d4e6f8a0b1c"


def _judge(store, pid, ids, labels):
    """``labels``: {annotator name: [label per leased item]}; submits in lease order."""
    for who, values in labels.items():
        for value in values:
            work = store.queue.lease_next(pid, ids[who])
            store.queue.save(work.item_id, ids[who], label=value, revision=0, submit=True)


def test_classify_heads_hex_id_contexts_with_their_first_words(store):
    """Before: the header was the 40-character hex id. A machine id gives way to the text's
    first eight words; a title or a human id is kept."""
    store.accounts.add_annotator("ann1", "password-one")
    pid = store.projects.create_project("hex", "turku")
    text1 = "The city council met on Monday evening to discuss the library."
    docs = [Document(HEX1, text1), Document(HEX2, "Short one.")]
    pair = Pair(
        "p1",
        "The city council met on Monday evening",
        "Short one.",
        span1=Span(HEX1, 0, 38),
        span2=Span(HEX2, 0, 10),
    )
    store.projects.import_pairs(pid, PairSet([pair], scheme="turku", documents=docs))
    store.projects.add_member(pid, store.accounts.annotator_id("ann1"))
    store.queue.assign(pid)
    with client_for(create_app(store), "ann1") as c:
        page = c.get(f"/p/{pid}/classify").text
    assert (
        f'<span id="title1" title="{HEX1}">“The city council met on Monday evening to…”</span>'
        in (page)
    )
    assert f'<span id="title2" title="{HEX2}">“Short one.”</span>' in page
    assert f">{HEX1}<" not in page


def test_recent_judgments_list_ones_own_and_reopen_them(project):
    """The list holds the annotator's own submitted labels, newest first, and links to the
    pair (the Back/undo route); in double annotation nobody else's label or the final
    label shows."""
    store, pid, ids = project
    store.queue.assign(pid, mode="double", seed=1)
    _judge(store, pid, ids, {"ann1": ["4", "3"], "ann2": ["2", "2", "2"]})
    mine = [a.item_id for a in store.queue.history(pid, ids["ann1"])]
    assert len(mine) == 2
    app = create_app(store)
    with client_for(app, "ann1") as c:
        page = c.get(f"/p/{pid}/recent").text
        rows = re.findall(
            r'<tr id="recent-(\d+)">.*?<td class="label"><strong>(.*?)</strong>', page, re.S
        )
        assert rows == [(str(mine[0]), "3"), (str(mine[1]), "4")]  # newest first, own labels
        assert "2</strong>" not in page  # ann2's labels (and the final label) stay hidden
        link = f"/p/{pid}/classify?item={mine[1]}&amp;task=classify"
        assert link in page
        again = c.get(link.replace("&amp;", "&"))
        assert again.status_code == 200 and item_of(again.text) == mine[1]
        # changing it keeps the edit rules: a submit of the next revision
        r = c.post(
            f"/api/items/{mine[1]}/save",
            headers=H,
            json={"label": "2", "revision": 1, "submit": True},
        )
        assert r.status_code == 200 and r.json()["revision"] == 2
        page = c.get(f"/p/{pid}/recent").text
        assert re.search(rf'<tr id="recent-{mine[1]}">.*?<strong>2</strong>.*?rev\. 2', page, re.S)
        # and the classify page links to the list
        assert f'href="/p/{pid}/recent?task=classify"' in c.get(f"/p/{pid}/classify").text
    with client_for(app, "ann3") as c:
        assert 'id="none"' in c.get(f"/p/{pid}/recent").text
        # another annotator's item is not theirs to reopen
        assert c.get(f"/p/{pid}/classify?item={mine[0]}", headers=HTML).status_code == 403


def test_the_admin_index_is_a_compact_list_and_each_project_has_its_page(project):
    """Before: /admin repeated assign, rewrite check, members, exports, archive and delete in
    every row and /admin/p/{id} did not exist."""
    store, pid, ids = project
    store.queue.assign(pid, mode="double", seed=1)
    _judge(store, pid, ids, {"ann1": ["4", "3", "4s"], "ann2": ["4", "2", "4"]})
    app = create_app(store)
    admin = client_for(app, "admin")
    index = admin.get("/admin").text
    for form in ('class="assign"', "rewrite-check", 'class="members', "delete-project", "export?"):
        assert form not in index, form
    assert f'<a id="project-{pid}" href="/admin/p/{pid}">' in index
    assert f'id="consensus-{pid}" href="/admin/p/{pid}/consensus">consensus (2)</a>' in index
    page = admin.get(f"/admin/p/{pid}").text
    for section in ("progress", "agreement", "queues", "members", "exports", "danger"):
        assert f'<section class="panel" id="{section}"' in page, section
    assert 'Classify: <span class="count">6 / 6</span>' in page
    # 3 items judged twice, 2 of them the same label ("4"/"4" and "4s"/"4" differ: 1 agreed)
    assert '<span id="agreed">1 of 3</span>' in page
    assert "consensus: 2 open disagreements" in page and "QA queue: 1 judgments" in page
    assert re.findall(r'<li>(\w+) <button type="button" class="remove-member"', page) == [
        "ann1",
        "ann2",
        "ann3",
    ]
    assert f'id="export-turku-{pid}"' in page and 'id="delete-project"' in page
    # an adjudicator sees the page without the admin's forms
    store.accounts.add_annotator("adj", "adjudicator-pw", role="adjudicator", projects=[pid])
    from fastapi.testclient import TestClient

    adj = TestClient(app)
    adj.post("/login", data={"name": "adj", "password": "adjudicator-pw"})
    page = adj.get(f"/admin/p/{pid}").text
    assert 'id="agreement"' in page and 'id="danger"' not in page and 'id="assign"' not in page
    with client_for(app, "ann1") as c:
        assert c.get(f"/admin/p/{pid}", headers=HTML).status_code == 403


def test_the_project_page_offers_the_turku_export_on_turku_projects_only(project):
    store, pid, _ids = project
    binary = store.projects.create_project("bin", "binary")
    admin = client_for(create_app(store), "admin")
    turku = admin.get(f"/admin/p/{pid}").text
    assert f"/admin/p/{pid}/export?format=turku" in turku
    page = admin.get(f"/admin/p/{binary}").text
    assert f'id="export-jsonl-{binary}"' in page
    assert "format=turku" not in page and "drop=1,x" not in page


def test_the_item_browser_links_each_item_to_its_context_and_consensus(project):
    """Before: the browser's rows linked nowhere. "context" opens the item's page with its
    documents; "consensus" lands on the consensus page that holds the item, or on the
    item's page once it is agreed or resolved."""
    store, pid, ids = project
    store.queue.assign(pid, mode="double", seed=1)
    _judge(store, pid, ids, {"ann1": ["4", "3", "4"], "ann2": ["4", "2", "2"]})
    app = create_app(store)
    admin = client_for(app, "admin")
    by_key = {store.item(i).key: i for i in range(1, 4)}
    disputed = [item.id for item, _ in store.review.disagreements(pid)]
    assert len(disputed) == 2
    page = admin.get(f"/admin/p/{pid}/items").text
    p1 = by_key["p1"]
    assert f'href="/admin/p/{pid}/items/{p1}#context-{p1}">context</a>' in page
    assert f'href="/admin/p/{pid}/consensus?item={p1}">consensus</a>' in page
    assert f'href="/admin/p/{pid}/items/{by_key["p3"]}#context-{by_key["p3"]}">item</a>' in page
    item = admin.get(f"/admin/p/{pid}/items/{p1}").text
    assert f'<details class="context" id="context-{p1}" open>' in item
    assert "The cat sat on the mat." in item and 'id="resolve-' in item
    r = admin.get(f"/admin/p/{pid}/consensus?item={disputed[1]}", follow_redirects=False)
    assert r.status_code == 303
    assert r.headers["location"] == f"/admin/p/{pid}/consensus?page=1#item-{disputed[1]}"
    agreed = next(i for i in by_key.values() if i not in disputed)
    r = admin.get(f"/admin/p/{pid}/consensus?item={agreed}", follow_redirects=False)
    assert r.headers["location"] == f"/admin/p/{pid}/items/{agreed}"
    assert store.review.disagreement_position(pid, disputed[1]) == 1
    assert store.review.disagreement_position(pid, agreed) is None
    # an item of another project is not found through this one
    other = store.projects.create_project("other", "turku")
    assert admin.get(f"/admin/p/{other}/items/{p1}", headers=HTML).status_code == 404
