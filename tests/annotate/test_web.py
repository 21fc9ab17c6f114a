"""The web app through HTTP: login, sessions, access control, escaping, drafts, blind pairs."""

from __future__ import annotations

import json
import re
import time
from datetime import timedelta

import pytest

pytest.importorskip("fastapi", reason="install parakit[annotate] for the web app")
pytest.importorskip("httpx", reason="pip install httpx (FastAPI's TestClient needs it)")
from fastapi.testclient import TestClient

from parakit.annotate.web import create_app
from parakit.schema import Document, Pair, PairSet, Span

H = {"X-Parakit": "1"}
XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def login(client: TestClient, name: str, password: str) -> None:
    response = client.post(
        "/login", data={"name": name, "password": password}, follow_redirects=False
    )
    assert response.status_code == 303, response.text


def page_data(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    assert match, "no data block in page"
    return json.loads(match.group(1))


@pytest.fixture
def web(project):
    store, pid, ids = project
    store.queue.assign(pid, mode="double")
    app = create_app(store, session_ttl=timedelta(minutes=5))
    clients = []

    def client(name: str | None = None, password: str | None = None) -> TestClient:
        c = TestClient(app)
        clients.append(c)
        if name:
            login(
                c,
                name,
                password
                or {
                    "admin": "admin-password",
                    "ann1": "password-one",
                    "ann2": "password-two",
                    "ann3": "password-three",
                }[name],
            )
        return c

    yield store, pid, ids, client
    for c in clients:
        c.close()


def test_login_required_and_wrong_password(web):
    _store, _pid, _ids, client = web
    anonymous = client()
    assert anonymous.get("/", follow_redirects=False).headers["location"] == "/login"
    assert anonymous.post("/api/items/1/save", json={}, headers=H).status_code == 401
    bad = anonymous.post("/login", data={"name": "ann1", "password": "nope-nope"})
    assert bad.status_code == 401 and "Wrong name or password" in bad.text
    ok = client("ann1")
    assert "tiny" in ok.get("/").text
    cookie = ok.cookies.get("parakit_session")
    assert cookie and len(cookie) > 30
    ok.post("/logout", follow_redirects=False)
    assert ok.get("/", follow_redirects=False).status_code == 303


ANN1 = {"name": "ann1", "password": "password-one"}


def test_repeated_wrong_passwords_are_throttled(web):
    store, _pid, _ids, _client = web
    app = create_app(store, login_attempts=3, login_window=timedelta(minutes=5))
    with TestClient(app) as c:
        for _ in range(3):
            assert c.post("/login", data={"name": "ann1", "password": "guess"}).status_code == 401
        # the fourth try is refused before the password is checked, even the right one
        locked = c.post("/login", data={"name": "ann1", "password": "password-one"})
        assert locked.status_code == 429 and "Too many failed logins" in locked.text
        assert 0 < int(locked.headers["Retry-After"]) <= 300
        # the address is not locked for other people behind it (NAT): ann2 logs in
        ok = c.post(
            "/login", data={"name": "ann2", "password": "password-two"}, follow_redirects=False
        )
        assert ok.status_code == 303
    # the counts live in the store: another app on it (another server worker) refuses too
    with TestClient(create_app(store, login_attempts=3)) as other:
        assert other.post("/login", data=ANN1).status_code == 429
    # once the failures leave the window, the right password gets in
    time.sleep(1.1)
    fresh = TestClient(create_app(store, login_attempts=3, login_window=timedelta(seconds=1)))
    login(fresh, "ann1", "password-one")
    fresh.close()


def test_sessions_expire(project):
    store, _pid, _ids = project
    app = create_app(store, session_ttl=timedelta(seconds=1))
    with TestClient(app) as c:
        login(c, "ann1", "password-one")
        assert c.get("/", follow_redirects=False).status_code == 200
        time.sleep(1.3)
        assert c.get("/", follow_redirects=False).status_code == 303


def test_classify_draft_survives_refresh_and_stale_tab(web):
    _store, pid, _ids, client = web
    c = client("ann1")
    data = page_data(c.get(f"/p/{pid}/classify").text)
    item = data["item"]
    assert data["annotation"] is None
    r = c.post(
        f"/api/items/{item}/save",
        headers=H,
        json={"label": "4", "revision": 0, "comment": "draft note"},
    )
    assert r.json() == {"revision": 1, "status": "draft", "id": r.json()["id"]}
    again = page_data(c.get(f"/p/{pid}/classify").text)  # refresh: same item, draft restored
    assert again["item"] == item
    assert again["annotation"]["label"] == "4" and again["annotation"]["comment"] == "draft note"
    ok = c.post(
        f"/api/items/{item}/save",
        headers=H,
        json={"label": "4<s", "revision": 1, "submit": True, "rewrite1": "a", "rewrite2": "b"},
    )
    assert ok.json()["revision"] == 2
    stale = c.post(
        f"/api/items/{item}/save", headers=H, json={"label": "2", "revision": 1, "submit": True}
    )
    assert stale.status_code == 409 and "E603" in stale.json()["code"]
    invalid = c.post(
        f"/api/items/{item}/save", headers=H, json={"label": "3<", "revision": 2, "submit": True}
    )
    assert invalid.status_code == 400  # flags on label 3 are impossible
    # back/undo: the previous item opens with its submitted answer and revision
    nxt = c.get(f"/p/{pid}/classify").text
    assert f"?item={item}&amp;task=classify" in nxt
    back = page_data(c.get(f"/p/{pid}/classify?item={item}").text)
    assert back["annotation"]["label"] == "4<s" and back["annotation"]["revision"] == 2


def test_double_annotation_is_blind(web):
    _store, pid, _ids, client = web
    a = client("ann1")
    item = page_data(a.get(f"/p/{pid}/classify").text)["item"]
    a.post(
        f"/api/items/{item}/save",
        headers=H,
        json={"label": "4i", "revision": 0, "submit": True, "comment": "SECRET-NOTE"},
    )
    b = client("ann2")
    html = b.get(f"/p/{pid}/classify").text
    data = page_data(html)
    assert data["item"] == item  # same item, second slot
    assert data["annotation"] is None
    assert "SECRET-NOTE" not in html and "4i (revision" not in html and "ann1" not in html
    # and ann2 cannot open ann1's answer by id
    assert b.get(f"/p/{pid}/classify?item={item}").status_code in (403,)


def test_access_control(web):
    store, pid, ids, client = web
    other = store.projects.create_project("other", "binary")
    store.projects.import_pairs(other, PairSet([Pair("o1", "a", "b")], scheme="binary"))
    store.queue.assign(other, mode="single")
    other_item = store.queue.lease_next(other, ids["admin"]).item_id
    c = client("ann1")
    assert c.get(f"/p/{other}/classify").status_code == 403
    assert c.get(f"/p/{other}/extract").status_code == 403
    r = c.post(f"/api/items/{other_item}/save", headers=H, json={"label": "1", "revision": 0})
    assert r.status_code == 403
    held = page_data(c.get(f"/p/{pid}/classify").text)["item"]
    # admin pages and APIs
    for url in (
        "/admin",
        f"/admin/p/{pid}/consensus",
        f"/admin/p/{pid}/qa",
        f"/admin/p/{pid}/export?format=jsonl",
        f"/admin/p/{pid}/stats",
        f"/admin/p/{pid}",
        f"/admin/p/{pid}/items/{held}",
        f"/admin/p/{pid}/consensus?item={held}",
    ):
        assert c.get(url).status_code == 403, url
    assert (
        c.post(
            "/api/admin/users",
            headers=H,
            json={"name": "evil", "password": "evil-password", "role": "admin"},
        ).status_code
        == 403
    )
    assert (
        c.post(f"/api/admin/items/{held}/resolve", headers=H, json={"label": "4"}).status_code
        == 403
    )
    assert c.post(f"/api/admin/projects/{pid}/assign", headers=H, json={}).status_code == 403
    # a cross-site request (no X-Parakit header) is refused even with a valid cookie
    assert c.post(f"/api/items/{held}/save", json={"label": "1"}).status_code == 403


def test_ann_cannot_write_item_leased_to_someone_else(project):
    store, pid, ids = project
    store.queue.assign(pid, mode="single")
    app = create_app(store)
    with TestClient(app) as a, TestClient(app) as b:
        login(a, "ann1", "password-one")
        login(b, "ann2", "password-two")
        item_a = page_data(a.get(f"/p/{pid}/classify").text)["item"]
        item_b = page_data(b.get(f"/p/{pid}/classify").text)["item"]
        assert item_a != item_b
        r = b.post(
            f"/api/items/{item_a}/save",
            headers=H,
            json={"label": "1", "revision": 0, "submit": True},
        )
        assert r.status_code == 409
        assert store.queue.annotation(item_a, ids["ann2"]) is None


def test_document_text_is_escaped(store, tmp_path):
    admin = store.accounts.add_annotator("admin", "admin-password", role="admin")
    pid = store.projects.create_project("xss", "turku", settings={"classify_mode": "single"})
    text = f"Before {XSS} after."
    doc = Document("d", text)
    store.projects.import_pairs(
        pid,
        PairSet(
            [Pair("x1", XSS, "</script><b>bold</b>", span1=Span("d", 7, 7 + len(XSS)))],
            scheme="turku",
            documents=[doc],
        ),
    )
    store.projects.import_document_pairs(pid, PairSet([Pair("dp", text, XSS)]))
    store.queue.assign(pid, mode="single")
    store.queue.assign_document_pairs(pid)
    with TestClient(create_app(store)) as c:
        login(c, "admin", "admin-password")
        for url in (f"/p/{pid}/classify", f"/p/{pid}/extract"):
            response = c.get(url)
            html = response.text
            assert "<script>alert" not in html and "<img src=x" not in html, url
            assert "script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html, url
            csp = response.headers["content-security-policy"]
            assert "script-src 'nonce-" in csp
            nonce = re.search(r"'nonce-([^']+)'", csp).group(1)
            # every script element carries the nonce (or is an inert JSON data block)
            for tag in re.findall(r"<script[^>]*>", html):
                assert f'nonce="{nonce}"' in tag or 'type="application/json"' in tag, tag
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in c.get(f"/p/{pid}/classify").text
        # an annotator's comment shown to the adjudicator is escaped too
        second = store.accounts.add_annotator("second", "second-password")
        store.projects.add_member(pid, second)
        item = store.queue.lease_next(pid, admin).item_id
        store.queue.save(item, admin, label="2", revision=0, submit=True, comment=XSS)
        store.queue.assign(pid, mode="single")  # nothing new: the item already has its assignment
        with store.transaction() as session:
            from parakit.annotate.models import Annotation, Assignment

            session.add(
                Assignment(project_id=pid, task="classify", item_id=item, slot=2, status="open")
            )
        store.queue.lease_next(pid, second)
        store.queue.save(item, second, label="4s", revision=0, submit=True, comment=XSS)
        html = c.get(f"/admin/p/{pid}/consensus").text
        assert "<script>alert" not in html and html.count("&lt;script&gt;") >= 3
        assert Annotation  # imported for the session above


def test_admin_creates_project_assigns_and_exports(web, tmp_path):
    _store, _pid, _ids, client = web
    admin = client("admin")
    source = tmp_path / "cands.jsonl"
    from parakit import io

    io.write(PairSet([Pair("c1", "one", "uno"), Pair("c2", "two", "dos")], scheme="binary"), source)
    with source.open("rb") as handle:
        r = admin.post(
            "/api/admin/projects",
            headers=H,
            data={"name": "new", "scheme": "binary", "kind": "candidates"},
            files={"file": ("cands.jsonl", handle, "application/json")},
        )
    assert r.status_code == 200, r.text
    new = r.json()["id"]
    assert r.json()["imported"] == 2
    r = admin.post(
        f"/api/admin/projects/{new}/assign",
        headers=H,
        json={"mode": "single", "annotators": ["ann1"]},
    )
    assert r.json() == {"assigned": 2}
    c = client("ann1")
    for _ in range(2):
        item = page_data(c.get(f"/p/{new}/classify").text)["item"]
        c.post(
            f"/api/items/{item}/save", headers=H, json={"label": "1", "revision": 0, "submit": True}
        )
    assert "queue is empty" in c.get(f"/p/{new}/classify").text
    out = admin.get(f"/admin/p/{new}/export?format=jsonl")
    lines = [json.loads(x) for x in out.text.splitlines()]
    assert [(x["id"], x["label"]) for x in lines[1:]] == [("c1", "1"), ("c2", "1")]
    dropped = admin.get(f"/admin/p/{new}/export?format=jsonl&drop=1")
    assert len(dropped.text.splitlines()) == 1  # header only
    zipped = admin.get(f"/admin/p/{new}/export?format=turku")
    if zipped.status_code == 200:
        assert zipped.headers["content-type"] == "application/zip"
    else:  # the Turku layout may refuse binary labels: a clear error, never a crash
        assert zipped.status_code == 400 and "Turku" in zipped.json()["error"]
    assert "new" in admin.get("/admin").text


def test_rewrite_check_hides_context_and_provenance(web):
    pytest.importorskip("krippendorff", reason="pip install krippendorff (parakit[annotate])")
    _store, pid, _ids, client = web
    a = client("ann1")
    item = page_data(a.get(f"/p/{pid}/classify").text)["item"]
    a.post(
        f"/api/items/{item}/save",
        headers=H,
        json={
            "label": "3",
            "revision": 0,
            "submit": True,
            "rewrite1": "RW-ONE",
            "rewrite2": "RW-TWO",
        },
    )
    b = client("ann2")
    item_b = page_data(b.get(f"/p/{pid}/classify").text)["item"]
    b.post(
        f"/api/items/{item_b}/save", headers=H, json={"label": "3", "revision": 0, "submit": True}
    )
    admin = client("admin")
    # ann1 and ann2 labelled the pair, so ann3 and ann4 judge the check; the rewritten pair
    # itself is never mixed in (issue 29.9: it would reveal the rewrite's provenance)
    _store.accounts.add_annotator("ann4", "password-four", projects=[pid])
    assert admin.post(f"/api/admin/projects/{pid}/rewrite-check", headers=H).json() == {
        "assigned": 2
    }
    # the author never gets the batch's rewrite; someone else sees it without context
    seen = []
    c = client("ann3")
    for _ in range(2):
        html = c.get(f"/p/{pid}/classify?task=rewrite-check").text
        if 'id="data"' not in html:  # nothing left to judge
            break
        data = page_data(html)
        if data["item"] is None:
            break
        seen.append(html)
        assert "Context 1" not in html and "pair p" not in html and "· test" not in html
        c.post(
            f"/api/items/{data['item']}/save",
            headers=H,
            json={"label": "4", "revision": 0, "submit": True, "task": "rewrite-check"},
        )
    assert len(seen) == 1 and "RW-ONE" in seen[0]
    html = a.get(f"/p/{pid}/classify?task=rewrite-check").text
    assert "RW-ONE" not in html
    stats = admin.get(f"/admin/p/{pid}/stats").text
    assert "full_pairwise_kappa" in stats and "share_4" in stats
    # both judges said 3: kappa is undefined, and the page says why instead of "nan"
    assert "nan" not in stats and "chance correction divides by zero" in stats


def test_extraction_view_follows_alignment(store):
    admin = store.accounts.add_annotator("admin", "admin-password", role="admin")
    pid = store.projects.create_project("aligned", "turku")
    left = "First paragraph.\n\nSecond paragraph."
    right = "Erster Absatz.\n\nZweiter Absatz."
    alignment = [[0, 16, 0, 14], [18, len(left), 16, len(right)]]
    store.projects.import_document_pairs(
        pid, PairSet([Pair("dp", left, right, metadata={"alignment": alignment})])
    )
    store.queue.assign_document_pairs(pid)
    with TestClient(create_app(store)) as c:
        login(c, "admin", "admin-password")
        html = c.get(f"/p/{pid}/extract").text
    rows = re.findall(r'<div class="doc" id="doc(\d)-(\d)" data-side="\d">(.*?)</div>', html)
    texts = {(side, row): re.sub(r"<[^>]+>", "", body) for side, row, body in rows}
    assert texts == {
        ("1", "0"): "First paragraph.",
        ("2", "0"): "Erster Absatz.",
        ("1", "1"): "Second paragraph.",
        ("2", "1"): "Zweiter Absatz.",
    }
    # offsets stay document offsets in every row
    assert 'data-side="1" data-b="18">Second paragraph.' in html
    assert admin


def test_adjudicator_limited_to_member_projects(web):
    store, pid, _ids, _client = web
    judge = store.accounts.add_annotator("judge", "judge-password", role="adjudicator")
    other = store.projects.create_project("elsewhere", "binary")
    with TestClient(create_app(store)) as c:
        login(c, "judge", "judge-password")
        assert c.get(f"/admin/p/{pid}/consensus").status_code == 403
        store.projects.add_member(pid, judge)
        assert c.get(f"/admin/p/{pid}/consensus").status_code == 200
        assert c.get(f"/admin/p/{other}/qa").status_code == 403
        assert c.get(f"/admin/p/{pid}/export?format=jsonl").status_code == 403  # admin only


def test_likert_project_shows_question_and_five_labels(store):
    rater = store.accounts.add_annotator("rater", "rater-password")
    pid = store.projects.create_project(
        "fluency", "likert", settings={"question": "Fluency of statement 2 <b>1-5</b>"}
    )
    store.projects.add_member(pid, rater)
    store.projects.import_pairs(pid, PairSet([Pair("g1", "source", "generated")], scheme="likert"))
    store.queue.assign(pid)
    with TestClient(create_app(store)) as c:
        login(c, "rater", "rater-password")
        html = c.get(f"/p/{pid}/classify").text
        assert html.count("Fluency of statement 2 &lt;b&gt;1-5&lt;/b&gt;") == 1
        data = page_data(html)
        assert data["values"] == ["1", "2", "3", "4", "5"] and not data["turku"]
        bad = c.post(
            f"/api/items/{data['item']}/save",
            headers=H,
            json={"label": "6", "revision": 0, "submit": True},
        )
        assert bad.status_code == 400
        ok = c.post(
            f"/api/items/{data['item']}/save",
            headers=H,
            json={"label": "4", "revision": 0, "submit": True},
        )
        assert ok.status_code == 200
