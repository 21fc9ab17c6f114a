"""The admin and annotator features: skip, users (members, deactivate, password reset),
progress, the item browser, paginated consensus with context, HTML error pages."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi", reason="install parakit[annotate] for the web app")
pytest.importorskip("httpx", reason="pip install httpx (FastAPI's TestClient needs it)")
from fastapi.testclient import TestClient

from parakit.annotate.web import create_app
from parakit.errors import AnnotateError

from .conftest import client_for, item_of

H = {"X-Parakit": "1"}
HTML = {"Accept": "text/html"}


def test_skip_gives_the_next_item_and_keeps_the_skipped_one_in_the_queue(project):
    store, pid, ids = project
    store.queue.assign(pid, mode="single")
    app = create_app(store)
    with client_for(app, "ann1") as c:
        first = item_of(c.get(f"/p/{pid}/classify").text)
        assert c.post(f"/api/items/{first}/skip", headers=H, json={}).json() == {"ok": True}
        second = item_of(c.get(f"/p/{pid}/classify").text)
        assert second != first
        # someone else can take the skipped item; it was not lost
        others = {store.queue.lease_next(pid, ids[n]).item_id for n in ("ann2", "ann3")}
        assert first in others
        assert c.post(f"/api/items/{first}/skip", headers=H, json={}).status_code == 409


def test_users_page_members_deactivate_and_reset(project):
    store, pid, ids = project
    app = create_app(store)
    admin = client_for(app, "admin")
    page = admin.get("/admin/users")
    assert page.status_code == 200 and "ann1" in page.text and "deactivate" in page.text
    r = admin.post(f"/api/admin/users/{ids['ann1']}/active", headers=H, json={"active": False})
    assert r.json() == {"ok": True, "returned": 0, "stranded": 0}
    login = TestClient(app).post("/login", data={"name": "ann1", "password": "password-one"})
    assert login.status_code == 401
    admin.post(f"/api/admin/users/{ids['ann1']}/active", headers=H, json={"active": True})
    r = admin.post(
        f"/api/admin/users/{ids['ann1']}/password", headers=H, json={"password": "a-new-password"}
    )
    assert r.json() == {"ok": True}
    fresh = TestClient(app)
    assert (
        fresh.post("/login", data={"name": "ann1", "password": "password-one"}).status_code == 401
    )
    ok = fresh.post(
        "/login", data={"name": "ann1", "password": "a-new-password"}, follow_redirects=False
    )
    assert ok.status_code == 303
    r = admin.post(
        f"/api/admin/projects/{pid}/members",
        headers=H,
        json={"annotators": ["ann2"], "remove": True},
    )
    assert r.json() == {"ok": True} and ids["ann2"] not in store.projects.members(pid)
    assert (
        admin.post(
            f"/api/admin/users/{ids['admin']}/active", headers=H, json={"active": False}
        ).status_code
        == 400
    )


def test_progress_browser_and_paginated_consensus(project):
    store, pid, ids = project
    store.queue.assign(pid, mode="double")
    for who, label in (("ann1", "4"), ("ann2", "3")):
        while (work := store.queue.lease_next(pid, ids[who])) is not None:
            store.queue.save(work.item_id, ids[who], label=label, revision=0, submit=True)
    app = create_app(store)
    admin = client_for(app, "admin")
    progress = admin.get(f"/admin/p/{pid}/progress").text
    assert re.search(r"<td>ann1</td><td class=\"done\">3</td>", progress)
    items = admin.get(f"/admin/p/{pid}/items?annotator=ann2&state=disputed").text
    assert "3 items" in items and "ann1: 4; ann2: 3" in items
    assert "0 items" in admin.get(f"/admin/p/{pid}/items?text=nothing-like-this").text
    assert "1 items" in admin.get(f"/admin/p/{pid}/items?text=HELLO").text
    consensus = admin.get(f"/admin/p/{pid}/consensus").text
    assert consensus.count('class="conflict"') == 3 and "Document context" in consensus
    assert (
        "The cat sat on the mat. It was warm."
        in consensus.replace("</span>", "").replace(
            '<span class="seg span" data-side="1" data-b="0">', ""
        )
        or "It was warm." in consensus
    )


def test_pages_get_html_error_pages_and_the_api_json(project):
    store, _pid, _ids = project
    app = create_app(store)
    ann = client_for(app, "ann1")
    page = ann.get("/admin/users", headers=HTML)
    assert page.status_code == 403 and page.headers["content-type"].startswith("text/html")
    assert "admin only" in page.text and "Back to your projects" in page.text
    missing = ann.get("/no/such/page", headers=HTML)
    assert missing.status_code == 404 and "Not found" in missing.text
    api = ann.post("/api/admin/projects/1/delete", headers=H)
    assert api.status_code == 403 and api.json()["code"] == "E602"
    other = store.projects.create_project("other", "turku")
    assert ann.get(f"/p/{other}/classify", headers=HTML).status_code == 403


def test_screen_page_accepts_and_rejects(store):
    from parakit.schema import Pair, PairSet

    store.accounts.add_annotator("ann1", "password-one")
    pid, _ = store.projects.create_with_pairs(
        "forum", "turku", PairSet([Pair("t1", "Thread one.", "Reply one.")]), kind="documents"
    )
    store.projects.add_member(pid, store.accounts.annotator_id("ann1"))
    store.queue.assign_task(pid, task="screen")
    with client_for(create_app(store), "ann1") as c:
        assert f'id="screen-{pid}"' in c.get("/").text
        page = c.get(f"/p/{pid}/screen").text
        assert "Thread one." in page and "Reject" in page
        r = c.post("/api/docpairs/1/screen", headers=H, json={"accept": False})
        assert r.json() == {"status": "rejected"}
        assert 'id="done"' in c.get(f"/p/{pid}/screen").text


def test_guidelines_page_and_label_descriptions(project):
    store, pid, _ids = project
    store.queue.assign(pid)
    app = create_app(store)
    admin = client_for(app, "admin")
    r = admin.post(
        f"/api/admin/projects/{pid}/settings",
        headers=H,
        json={"guidelines": "Read both sides <b>first</b>.", "descriptions": {"3": "ours"}},
    )
    assert r.json()["settings"]["guidelines"].startswith("Read both")
    with client_for(app, "ann1") as c:
        page = c.get(f"/p/{pid}/guidelines").text
        assert "Read both sides &lt;b&gt;first&lt;/b&gt;." in page  # escaped
        assert "<td>ours</td>" in page and "unrelated" in page  # override + Turku defaults
        classify = c.get(f"/p/{pid}/classify").text
        # the meanings are on the page beside their keys, not in hover tooltips
        assert '<span class="meaning" id="meaning-3">ours</span>' in classify
        assert '<span class="meaning" id="meaning-1">unrelated</span>' in classify
        assert 'id="guidelines-link"' in classify
    bad = admin.post(f"/api/admin/projects/{pid}/settings", headers=H, json={"question": "x\x00"})
    assert bad.status_code == 400


def test_archived_projects_disappear_for_annotators(project):
    store, pid, _ids = project
    app = create_app(store)
    admin = client_for(app, "admin")
    r = admin.post(f"/api/admin/projects/{pid}/settings", headers=H, json={"archived": True})
    assert r.json()["settings"]["archived"] is True
    assert "(archived)" in admin.get("/admin").text
    with client_for(app, "ann1") as c:
        assert "tiny" not in c.get("/").text
        assert c.get(f"/p/{pid}/classify", headers=HTML).status_code == 403
    admin.post(f"/api/admin/projects/{pid}/settings", headers=H, json={"archived": False})
    with client_for(app, "ann1") as c:
        assert "tiny" in c.get("/").text


def test_deactivation_returns_open_work_to_the_pool(project):
    store, pid, ids = project
    # personal queues: ann1 gets items 1 and 3 of the round-robin, ann2 item 2
    assert store.queue.assign_task(pid, annotators=["ann1", "ann2"]) == 3
    leased = store.queue.lease_next(pid, ids["ann1"])  # ann1 holds one item leased
    assert leased is not None and store.queue.lease_next(pid, ids["ann3"]) is None
    assert store.queue.progress(pid, ids["ann1"])["remaining"] == 2
    assert store.accounts.set_active(ids["ann1"], False) == (2, 0)
    # nothing waits for ann1: both items are in the shared pool, unleased, for any member
    got = []
    while (a := store.queue.lease_next(pid, ids["ann3"])) is not None:
        got.append(a.item_id)
        store.queue.save(a.item_id, ids["ann3"], label="4", revision=0, submit=True)
    assert leased.item_id in got and len(got) == 2
    assert store.queue.progress(pid, ids["ann2"])["remaining"] == 1  # ann2's own item stays
    # work for a deactivated account is refused, by name and by id
    with pytest.raises(AnnotateError, match="E606.*deactivated annotator.*ann1"):
        store.queue.assign_task(pid, annotators=["ann1"])
    with pytest.raises(AnnotateError, match="E606.*ann1"):
        store.queue.assign(pid, annotators=[ids["ann1"]])
    assert store.accounts.set_active(ids["ann1"], True) == (0, 0)


def test_the_last_active_admin_cannot_be_deactivated(project):
    from parakit.errors import Conflict

    store, _pid, ids = project
    with pytest.raises(Conflict, match="E604.*admin is the last active admin"):
        store.accounts.set_active(ids["admin"], False)
    assert store.accounts.session_user(None) is None
    assert next(u for u in store.accounts.users() if u["name"] == "admin")["active"]
    boss = store.accounts.add_annotator("boss", "boss-password", role="admin")
    assert store.accounts.set_active(ids["admin"], False) == (0, 0)  # another admin is left
    with pytest.raises(Conflict, match="E604.*boss is the last active admin"):
        store.accounts.set_active(boss, False)


def test_deactivation_counts_the_work_nobody_left_may_take(project, capsys):
    """Double annotation by ann1 and ann2 only: when ann2 goes, its slots go back to the
    pool beside ann1's slot of the same item, so nobody may take them; the admin is told.
    With ann3 a member, ann1's slots returned later can be taken (by ann3)."""
    from parakit.cli.app import main

    store, pid, ids = project
    store.projects.remove_member(pid, ids["ann3"])
    assert store.queue.assign(pid, mode="double", annotators=[ids["ann1"], ids["ann2"]]) == 6
    target = store.engine.url.render_as_string(hide_password=False)
    assert main(["annotate", "deactivate", target, "ann2"]) == 0
    captured = capsys.readouterr()
    assert "3 open assignment(s) returned to the pool" in captured.out
    assert "warning: 3 of them no remaining member may take" in captured.err
    store.projects.add_member(pid, ids["ann3"])
    assert store.accounts.set_active(ids["ann1"], False) == (3, 0)
    app = create_app(store)
    admin = client_for(app, "admin")
    r = admin.post(f"/api/admin/users/{ids['ann3']}/active", headers=H, json={"active": False})
    # ann3 held nothing; every slot is in the pool now, and no active member is left
    assert r.json() == {"ok": True, "returned": 0, "stranded": 0}


def test_cli_deactivate(project, capsys):
    from parakit.cli.app import main

    store, pid, _ids = project
    store.queue.assign_task(pid, annotators=["ann2"])
    target = store.engine.url.render_as_string(hide_password=False)
    assert main(["annotate", "deactivate", target, "ann2"]) == 0
    assert "3 open assignment(s) returned to the pool" in capsys.readouterr().out
    assert main(["annotate", "assign", target, "tiny", "--annotators", "ann2"]) == 2
    assert "deactivated annotator(s): ann2" in capsys.readouterr().err


def test_user_names_are_normalised_and_look_alikes_refused(store):
    from parakit.errors import Conflict

    uid = store.accounts.add_annotator(" ann1 ", "password-one")
    assert store.accounts.users()[0]["name"] == "ann1"
    for look_alike in (
        "ann1",
        "ANN1",
        "ａｎｎ1",
        "ann1\u3000",
    ):  # full-width letters, ideographic space
        with pytest.raises(Conflict, match="E603.*already exists"):
            store.accounts.add_annotator(look_alike, "password-two")
    for invisible in ("ann1\u200b", "an\u00adn1", "ann\u20601", "ann\t1", "ann\u200e1"):
        with pytest.raises(AnnotateError, match="E605.*invisible or control"):
            store.accounts.add_annotator(invisible, "password-two")
    # the name logs in however it is typed
    assert store.accounts.authenticate(" ann1", "password-one").id == uid
    assert store.accounts.authenticate("ａｎｎ1", "password-one").id == uid
    assert store.accounts.annotator_id("ann1 ") == uid
    assert store.accounts.authenticate("ann1\u200b", "password-one") is None


def test_look_alike_names_are_refused_and_login_ignores_case(store):
    from parakit.errors import Conflict

    uid = store.accounts.add_annotator("ann1", "password-one")
    # a Cyrillic а among Latin letters, an invisible variation selector, a Hangul filler
    for name in ("\u0430nn1", "ann1\ufe0f", "ann\U000e01001", "ann\u31641"):
        with pytest.raises(AnnotateError, match="E605"):
            store.accounts.add_annotator(name, "password-two")
    # look-alikes in one script, or digits for letters: one name
    store.accounts.add_annotator("aoc", "password-three")
    for name in ("\u0430\u043e\u0441", "annl", "ANNl", "A0C"):
        with pytest.raises(Conflict, match="E603.*looks the same"):
            store.accounts.add_annotator(name, "password-two")
    # other scripts are names like any other
    assert store.accounts.add_annotator("\u041e\u043b\u044c\u0433\u0430", "password-four")
    assert store.accounts.add_annotator("\u5c71\u7530", "password-five")
    # the name logs in however its case is typed (it is unique ignoring case)
    assert store.accounts.authenticate("ANN1", "password-one").id == uid
    assert store.accounts.authenticate("Ann1", "wrong-password") is None
    assert store.accounts.annotator_id("ANN1") == uid
    assert store.accounts.authenticate("\u041e\u041b\u042c\u0413\u0410", "password-four")


def test_item_text_filter_is_literal(project):
    """``%`` and ``_`` in the text filter are characters, not SQL wildcards."""
    from parakit.schema import Pair, PairSet

    store, pid, _ids = project
    store.projects.import_pairs(
        pid,
        PairSet(
            [
                Pair("w1", "Growth was 100% this year.", "It doubled."),
                Pair("w2", "Use snake_case names.", "Names."),
                Pair("w3", "A back\\slash.", "Slash."),
            ],
            scheme="turku",
        ),
    )

    def keys(text: str) -> list[str]:
        rows, total = store.review.browse(pid, text=text)
        assert total == len(rows)
        return sorted(r["item"].key for r in rows)

    assert keys("%") == ["w1"]
    assert keys("0% t") == ["w1"]
    assert keys("_") == ["w2"]
    assert keys("e_c") == ["w2"]  # not "e c" / "e.c" anywhere else
    assert keys("\\") == ["w3"]
    assert keys("the mat") == ["p1"]


def test_pages_answer_bad_queries_with_pages(project):
    """A huge ``?page=`` is the last page's neighbour (empty), not HTTP 500; ``?item=abc``
    is an HTML error page, not raw JSON; an export error names no server path."""
    store, pid, _ids = project
    app = create_app(store)
    admin = client_for(app, "admin")
    huge = 10**30
    for path in (f"/admin/p/{pid}/items", f"/admin/p/{pid}/consensus", f"/admin/p/{pid}/docpairs"):
        r = admin.get(f"{path}?page={huge}", headers=HTML)
        assert r.status_code == 200, (path, r.status_code)
    assert store.review.browse(pid, page=huge) == ([], 3)
    with client_for(app, "ann1") as c:
        r = c.get(f"/p/{pid}/classify?item=abc", headers=HTML)
        assert r.status_code == 400 and "<html" in r.text and "item" in r.text
        assert not r.text.lstrip().startswith("{")
        assert c.get(f"/p/{pid}/classify?item=abc").status_code == 422  # scripts: JSON
    binary = store.projects.create_project("bin", "binary")
    r = admin.get(f"/admin/p/{binary}/export?format=turku", headers=HTML)
    assert r.status_code == 400 and "Turku layout" in r.text
    shown = re.search(r"<p id=\"error-message\">(.*?)</p>", r.text, re.S)
    shown = shown.group(1) if shown else r.text
    assert "/tmp" not in shown and "export.json" not in shown
    assert "[E120] bin.json: the Turku layout" in shown


def test_an_archived_project_says_archived_to_its_members(project):
    store, pid, _ids = project
    store.projects.update_settings(pid, archived=True)
    app = create_app(store)
    with client_for(app, "ann1") as c:
        r = c.get(f"/p/{pid}/classify", headers=HTML)
        assert r.status_code == 403 and "is archived" in r.text and "not a member" not in r.text
    store.projects.remove_member(pid, _ids["ann1"])
    with client_for(app, "ann1") as c:
        r = c.get(f"/p/{pid}/classify", headers=HTML)
        assert r.status_code == 403 and "not a member" in r.text and "archived" not in r.text


def test_admin_index_and_review_pages_count_and_page_in_sql(project, monkeypatch):
    """Issue 30.9: the admin index counts disagreements and the QA queue in SQL, and the
    consensus and QA pages read one page; they never load every judgment of the project."""
    store, pid, ids = project
    store.queue.assign(pid, mode="double")
    for who, label in (("ann1", "4i"), ("ann2", "3")):
        while (work := store.queue.lease_next(pid, ids[who])) is not None:
            store.queue.save(work.item_id, ids[who], label=label, revision=0, submit=True)
    every = store.review.disagreements(pid)
    assert len(every) == 3 == store.review.disagreement_count(pid)
    assert store.review.qa_count(pid) == len(store.review.qa_queue(pid)) == 3

    def ids_of(groups):
        return [(item.id, [a.id for a in anns]) for item, anns in groups]

    assert ids_of(store.review.disagreements(pid, page=2, per_page=2)) == ids_of(every[2:])
    assert [i.id for i, _ in store.review.qa_queue(pid, page=1, per_page=2)] == [
        i.id for i, _ in store.review.qa_queue(pid)[:2]
    ]
    real_d, real_q = store.review.disagreements, store.review.qa_queue

    def paged_only(real):
        def call(project_id, page=None, per_page=20):
            assert page is not None, "read every judgment of the project"
            return real(project_id, page=page, per_page=per_page)

        return call

    monkeypatch.setattr(store.review, "disagreements", paged_only(real_d))
    monkeypatch.setattr(store.review, "qa_queue", paged_only(real_q))
    admin = client_for(create_app(store), "admin")
    index = admin.get("/admin", headers=HTML)
    assert index.status_code == 200
    for path in ("consensus", "qa"):
        page = admin.get(f"/admin/p/{pid}/{path}", headers=HTML)
        assert page.status_code == 200 and "p1" in page.text
    store.review.resolve(every[0][0].id, "4", ids["admin"])
    assert store.review.disagreement_count(pid) == 2 and store.review.qa_count(pid) == 2
