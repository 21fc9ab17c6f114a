"""End to end in headless Chromium, driven the way annotators work.

ann1 logs in, extracts two pairs from a document pair by dragging the mouse over text,
classifies them with flags and a rewrite; ann2 classifies the same pairs blind; the admin
resolves the disagreement and exports. The exported JSONL must match exactly. Screenshots of
the views go to ``docs/img/annotate-*.png`` when ``PARAKIT_UPDATE_SCREENSHOTS=1``.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import pytest

# the docs' screenshots are refreshed only on request, so a test run never edits tracked files
IMG = (
    Path(__file__).resolve().parents[2] / "docs" / "img"
    if os.environ.get("PARAKIT_UPDATE_SCREENSHOTS")
    else Path(tempfile.mkdtemp(prefix="parakit-screenshots-"))
)

DOC1 = (
    "The city council met on Monday evening.\n\n"
    "It decided to build a new library next to the old railway station.\n\n"
    "Construction is expected to start in the spring of next year, the mayor said."
)
DOC2 = (
    "On Monday night, the municipal council held its meeting.\n\n"
    "A new public library will be built beside the former train station.\n\n"
    "Construction is expected to start in the spring of next year, the mayor said."
)


@pytest.fixture
def server(tmp_path, serve):
    from parakit.annotate.store import Store
    from parakit.schema import Pair, PairSet

    store = Store.open(tmp_path / "e2e.sqlite", cheap_hashing=True)
    store.accounts.add_annotator("admin", "admin-password", role="admin")
    ann1 = store.accounts.add_annotator("ann1", "password-one")
    ann2 = store.accounts.add_annotator("ann2", "password-two")
    pid = store.projects.create_project("e2e", "turku", settings={"classify_mode": "double"})
    store.projects.import_document_pairs(pid, PairSet([Pair("dp1", DOC1, DOC2, source="news")]))
    store.projects.add_member(pid, ann1)
    store.projects.add_member(pid, ann2)
    store.queue.assign_document_pairs(pid, [ann1])
    yield serve(store), store, pid
    store.close()


def expect(locator):
    from playwright.sync_api import expect as _expect

    return _expect(locator)


def login(page, base: str, name: str, password: str) -> None:
    page.goto(f"{base}/login")
    page.fill("#name", name)
    page.fill("#password", password)
    page.click("#login")
    page.wait_for_url(f"{base}/")


def logout(page) -> None:
    page.click("header form button")
    page.wait_for_selector("#login")


def classify(
    page,
    base: str,
    pid: int,
    keys: str,
    rewrite: tuple[str, str] | None = None,
    unsure: bool = False,
) -> str:
    page.goto(f"{base}/p/{pid}/classify")
    text1 = page.inner_text("#text1")
    page.click("body", position={"x": 5, "y": 5})
    for key in keys:
        page.keyboard.press(key)
    if unsure:
        page.keyboard.press("u")
    if rewrite:
        page.keyboard.press("r")
        page.fill("#rewrite1", rewrite[0])
        page.fill("#rewrite2", rewrite[1])
        page.locator("#rewrite2").press("Escape")
    expect(page.locator("#saved")).to_contain_text("draft")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/p/{pid}/classify?task=classify")
    return text1


def test_annotators_extract_classify_adjudicate_export(browser, server, drag_select, tmp_path):
    base, store, pid = server
    IMG.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 800})

    # -- ann1 extracts two pairs ------------------------------------------------------------
    login(page, base, "ann1", "password-one")
    page.click(f"#extract-{pid}")
    page.wait_for_selector(".seg.copy")  # the shared verbatim sentence is highlighted
    copied = page.eval_on_selector_all(
        '.seg.copy[data-side="1"]', "els => els.map(e => e.textContent).join('')"
    )
    # the maximal shared run starts at "station." (both documents end a sentence with it)
    assert copied == (
        "station.\n\nConstruction is expected to start in the spring of next year, the mayor said"
    )
    pairs = [
        (
            "The city council met on Monday evening.",
            "On Monday night, the municipal council held its meeting.",
        ),
        (
            "It decided to build a new library next to the old railway station.",
            "A new public library will be built beside the former train station.",
        ),
    ]
    for left, right in pairs:
        drag_select(page, 1, DOC1, left)
        drag_select(page, 2, DOC2, right)
        b1, e1 = DOC1.index(left), DOC1.index(left) + len(left)
        b2, e2 = DOC2.index(right), DOC2.index(right) + len(right)
        expect(page.locator("#selection")).to_have_text(f"left: [{b1}, {e1}) · right: [{b2}, {e2})")
        if left != pairs[0][0]:  # the view with one pair taken and the next one selected
            page.screenshot(path=str(IMG / "annotate-extract.png"), full_page=True)
        page.click("#add")
        expect(page.locator("#count")).to_have_text(str(pairs.index((left, right)) + 1))
    assert page.locator("#pairs tr").count() == 3
    page.click("#finish")
    expect(page.locator("#confirm-text")).to_have_text(
        "Finish this document pair with 2 pairs? It cannot be changed afterwards."
    )
    page.click("#confirm-yes")
    page.wait_for_selector("#done")

    # -- ann1 classifies: flags via keyboard, a rewrite, the unsure tag --------------------------
    first = classify(page, base, pid, "4s")
    page.goto(f"{base}/p/{pid}/classify")
    page.click("body", position={"x": 5, "y": 5})
    page.keyboard.press("3")
    assert page.locator("#flag-s").is_disabled()  # flags only on label 4: impossible on 3
    page.keyboard.press("4")
    page.keyboard.press("<")
    page.keyboard.press(">")  # < and > exclude each other: > replaces <
    assert page.inner_text("#label-value") == "4>"
    page.keyboard.press("2")  # back to 2: the flags are dropped
    assert page.inner_text("#label-value") == "2"
    page.keyboard.press("4")
    page.keyboard.press("<")
    page.keyboard.press("r")
    page.fill("#rewrite1", "The council decided to build a new library near the station.")
    page.fill("#rewrite2", "A new library will be built beside the station.")
    page.locator("#rewrite2").press("Escape")
    page.keyboard.press("u")
    expect(page.locator("#saved")).to_contain_text("draft")
    # the draft is saved 0.5 s after the last change: wait for the store to hold "unsure"
    # (on a loaded machine the reload below came first and the race failed the test)
    item = page.evaluate("JSON.parse(document.getElementById('data').textContent).item")
    uid = store.accounts.annotator_id("ann1")
    for _ in range(200):
        if (own := store.queue.annotation(item, uid)) is not None and own.unsure:
            break
        time.sleep(0.1)
    page.screenshot(path=str(IMG / "annotate-classify.png"), full_page=True)
    # a refresh keeps the server-side draft
    page.reload()
    assert page.inner_text("#label-value") == "4<"
    assert page.input_value("#rewrite1").startswith("The council decided")
    assert page.is_checked("#unsure")
    page.click("body", position={"x": 5, "y": 5})
    page.keyboard.press("Enter")
    page.wait_for_selector("#done")
    logout(page)

    # -- ann2 classifies blind -------------------------------------------------------------------
    login(page, base, "ann2", "password-two")
    page.goto(f"{base}/p/{pid}/classify")
    assert page.inner_text("#label-value") == "–"  # never sees ann1's answer
    assert page.input_value("#rewrite1") == ""
    second = classify(page, base, pid, "4s")
    assert second == first
    classify(page, base, pid, "3")
    page.goto(f"{base}/p/{pid}/classify")
    page.wait_for_selector("#done")
    logout(page)

    # -- the admin resolves the disagreement and exports -----------------------------------------
    login(page, base, "admin", "admin-password")
    page.goto(f"{base}/admin/p/{pid}/consensus")
    assert page.locator("section.conflict").count() == 1
    assert sorted(page.locator("td.given").all_inner_texts()) == ["3", "4<"]
    page.screenshot(path=str(IMG / "annotate-consensus.png"), full_page=True)
    item = page.get_attribute("section.conflict form", "data-item")
    page.fill(f"#resolve-{item}", "4<")
    page.click(f"#resolve-submit-{item}")
    expect(page.locator("section.conflict")).to_have_count(0)
    response = page.request.get(f"{base}/admin/p/{pid}/export?format=jsonl")
    assert response.ok
    exported = tmp_path / "export.jsonl"
    exported.write_bytes(response.body())
    page.close()

    spans = [
        (DOC1.index(a), DOC1.index(a) + len(a), DOC2.index(b), DOC2.index(b) + len(b))
        for a, b in pairs
    ]
    expected = [
        {"parakit": 1, "scheme": {"name": "turku"}, "name": "e2e"},
        {"document": {"id": "dp1-1", "text": DOC1}},
        {"document": {"id": "dp1-2", "text": DOC2}},
        {
            "id": "dp1-1",
            "text1": pairs[0][0],
            "text2": pairs[0][1],
            "label": "4s",
            "span1": {"doc": "dp1-1", "begin": spans[0][0], "end": spans[0][1]},
            "span2": {"doc": "dp1-2", "begin": spans[0][2], "end": spans[0][3]},
            "group": "dp1",
            "source": "news",
        },
        {
            "id": "dp1-2",
            "text1": pairs[1][0],
            "text2": pairs[1][1],
            "label": "4<",
            "span1": {"doc": "dp1-1", "begin": spans[1][0], "end": spans[1][1]},
            "span2": {"doc": "dp1-2", "begin": spans[1][2], "end": spans[1][3]},
            "group": "dp1",
            "source": "news",
            "rewrites": [
                [
                    "The council decided to build a new library near the station.",
                    "A new library will be built beside the station.",
                ]
            ],
        },
    ]
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    assert lines == expected
    assert (
        store.queue.count_annotations(pid) == 4 and store.queue.count_annotations(pid, "draft") == 0
    )


def test_extraction_delete_add_and_the_admin_pages(browser, server, drag_select):
    """Issue 14: delete a pair that is not the last (on a row added since the page loaded),
    add another (no key collision), finish with the keyboard; then the admin's new pages:
    users (deactivate), progress, the item browser; an HTML error page for an annotator."""
    base, store, pid = server
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.on("dialog", lambda dialog: dialog.accept())
    login(page, base, "ann1", "password-one")
    page.goto(f"{base}/p/{pid}/extract")
    page.wait_for_selector(".seg.copy")
    sentences = [
        ("The city council met on Monday evening.", "On Monday night, the municipal council"),
        ("It decided to build a new library", "A new public library will be built"),
        ("the mayor said", "the mayor said"),
    ]
    for n, (left, right) in enumerate(sentences, start=1):
        drag_select(page, 1, DOC1, left)
        drag_select(page, 2, DOC2, right)
        page.click("#add")
        expect(page.locator("#count")).to_have_text(str(n))
    # the first row was added after the page loaded: its delete button works
    page.click("#pairs tr[data-item] >> nth=0 >> button.delete")
    page.wait_for_selector("#pairs tr[data-item]")
    expect(page.locator("#pairs tr[data-item]")).to_have_count(2)
    drag_select(page, 1, DOC1, "Construction is expected")
    drag_select(page, 2, DOC2, "Construction is expected")
    page.click("#add")
    expect(page.locator("#msg")).to_contain_text("Added pair dp1-4")
    keys = [p.key for p in store.extraction.extracted_pairs(1)]
    assert keys == ["dp1-2", "dp1-3", "dp1-4"]
    page.click("body", position={"x": 5, "y": 5})
    # finishing from the keyboard asks first: a stray f, then any other key, changes nothing
    page.keyboard.press("f")
    expect(page.locator("#confirm")).to_be_visible()
    page.keyboard.press("a")
    expect(page.locator("#confirm")).to_be_hidden()
    expect(page.locator("#count")).to_have_text("3")  # that a was no "add pair" either
    assert store.doc_pair(1).status == "open"
    page.keyboard.press("f")
    page.keyboard.press("y")  # confirmed
    page.wait_for_selector("#done")
    assert store.doc_pair(1).status == "finished"
    # an annotator asking for an admin page gets an HTML error page, not JSON
    page.goto(f"{base}/admin/users")
    expect(page.locator("#error-message")).to_contain_text("admin only")
    logout(page)

    login(page, base, "admin", "admin-password")
    page.goto(f"{base}/admin")
    page.click("#users-link")
    page.wait_for_selector("#users")
    ann2 = store.accounts.annotator_id("ann2")
    page.click(f"#deactivate-{ann2}")
    page.wait_for_selector(f"#activate-{ann2}")
    assert store.accounts.authenticate("ann2", "password-two") is None
    page.fill(f"#password-{ann2}", "a-brand-new-password")
    page.click(f"#reset-{ann2}")
    expect(page.locator("#msg")).to_contain_text("Password of ann2 set")
    page.click(f"#activate-{ann2}")
    page.wait_for_selector(f"#deactivate-{ann2}")
    assert store.accounts.authenticate("ann2", "a-brand-new-password") is not None
    page.goto(f"{base}/admin")
    page.click(f"#project-{pid}")  # each project's links live on its own page
    page.click(f"#progress-{pid}")
    expect(page.locator("h1")).to_contain_text("progress per annotator")
    page.goto(f"{base}/admin/p/{pid}")
    page.click(f"#items-{pid}")
    expect(page.locator("#total")).to_contain_text("3 items")
    page.fill("input[name=text]", "mayor")
    page.click("#filter")
    expect(page.locator("#total")).to_contain_text("1 items")
    page.screenshot(path=str(IMG / "annotate-items.png"), full_page=True)
    page.close()


def test_screens_for_all_day_work(browser, serve, tmp_path):
    """Issue 21: label meanings beside their keys, document titles in the context headers,
    skip to the back of a double pool, finishing that asks first and an admin's re-open,
    per-project progress, guidelines written in Markdown in the admin UI (raw HTML inert)."""
    from parakit.annotate.store import Store
    from parakit.schema import Document, Pair, PairSet, Span

    store = Store.open(tmp_path / "screens.sqlite", cheap_hashing=True)
    store.accounts.add_annotator("admin", "admin-password", role="admin")
    ann1 = store.accounts.add_annotator("ann1", "password-one")
    ann2 = store.accounts.add_annotator("ann2", "password-two")
    hexid = "3037fc54687a277b4ac11f96c0a7a76d2569725d"
    docs = [
        Document(hexid, DOC1, {"title": "Council meeting, Monday"}),
        Document("ac46abcde0167e9cd651aa8f615b2860bd40b629", DOC2),
    ]
    sentences = [(s1, s2) for s1, s2 in zip(DOC1.split("\n\n"), DOC2.split("\n\n"), strict=True)]
    pairs = [
        Pair(
            f"p{n}",
            s1,
            s2,
            span1=Span(hexid, DOC1.index(s1), DOC1.index(s1) + len(s1)),
            span2=Span(docs[1].id, DOC2.index(s2), DOC2.index(s2) + len(s2)),
        )
        for n, (s1, s2) in enumerate(sentences, 1)
    ]
    classify_pid = store.projects.create_project("news", "turku")
    store.projects.import_pairs(classify_pid, PairSet(pairs, scheme="turku", documents=docs))
    extract_pid = store.projects.create_project("threads", "turku")
    store.projects.import_document_pairs(
        extract_pid, PairSet([Pair("dp1", DOC1, DOC2, metadata={"title": "Library plans"})])
    )
    for pid in (classify_pid, extract_pid):
        store.projects.add_member(pid, ann1)
        store.projects.add_member(pid, ann2)
    store.queue.assign(classify_pid, mode="double")
    store.queue.assign_document_pairs(extract_pid, [ann1])
    base = serve(store)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.on("dialog", lambda dialog: dialog.accept())

    # -- ann1 classifies: meanings beside the keys, titles over the contexts, skip ------------
    login(page, base, "ann1", "password-one")
    page.goto(f"{base}/p/{classify_pid}/classify")
    expect(page.locator("#label-4 .meaning")).to_have_text(
        "paraphrase: the same meaning in any context"
    )
    expect(page.locator("#label-4 .meaning")).to_be_visible()
    expect(page.locator("#flag-i .meaning")).to_be_visible()
    expect(page.locator("#title1")).to_have_text("Council meeting, Monday")
    # no title and a hex id: the document's first words, the id in the tooltip (issue 30)
    expect(page.locator("#title2")).to_have_text(
        "“On Monday night, the municipal council held its…”"
    )
    expect(page.locator("#title2")).to_have_attribute("title", docs[1].id)
    page.screenshot(path=str(IMG / "annotate-classify-meanings.png"), full_page=True)
    skipped = page.inner_text("#text1")
    page.click("body", position={"x": 5, "y": 5})
    with page.expect_navigation():  # the same URL: wait for the new page itself
        page.keyboard.press("k")  # skip: the item goes to the back, both of its slots
    order = [page.inner_text("#text1")]
    assert order[0] != skipped
    for _ in range(2):
        classify(page, base, classify_pid, "4")
        order.append(page.inner_text("#text1"))
    assert order[-1] == skipped and len(set(order)) == 3

    # -- ann1 extracts: titles, and a finish that asks first ----------------------------------
    page.goto(f"{base}/p/{extract_pid}/extract")
    expect(page.locator("#title1")).to_have_text("Library plans")
    page.click("#empty")
    expect(page.locator("#confirm-text")).to_contain_text("Mark this document pair empty")
    page.click("#confirm-no")
    expect(page.locator("#confirm")).to_be_hidden()
    assert store.doc_pair(1).status == "open"
    page.click("body", position={"x": 5, "y": 5})
    page.keyboard.press("e")
    page.keyboard.press("y")
    page.wait_for_selector("#done")
    assert store.doc_pair(1).status == "empty"
    logout(page)

    # -- the admin: progress per project, re-open, guidelines in Markdown ----------------------
    login(page, base, "admin", "admin-password")
    page.goto(f"{base}/admin")
    expect(page.locator(f"#project-progress-{classify_pid}")).to_contain_text("Classify: 2 / 6")
    expect(page.locator(f"#project-progress-{extract_pid}")).to_contain_text("Extract: 1 / 1")
    page.goto(f"{base}/admin/p/{extract_pid}")
    page.click(f"#docpairs-{extract_pid}")
    expect(page.locator("#docpairs td.status")).to_contain_text("empty by ann1")
    page.click("#reopen-1")  # confirmed in the dialog
    expect(page.locator("#docpairs td.status")).to_have_text("open")
    assert store.doc_pair(1).status == "open"
    page.goto(f"{base}/p/{classify_pid}/guidelines")
    page.fill(
        "#guidelines-source",
        "## Before you start\n\n**Read** both sides.\n\n<script>window.pwned = 1</script>",
    )
    page.click("#save-guidelines")
    expect(page.locator("#guidelines h2")).to_have_text("Before you start")
    expect(page.locator("#guidelines strong")).to_have_text("Read")
    expect(page.locator("#guidelines")).to_contain_text("<script>window.pwned = 1</script>")
    assert page.evaluate("window.pwned") is None  # shown as text, never run
    page.screenshot(path=str(IMG / "annotate-guidelines.png"), full_page=True)
    logout(page)

    # -- the re-opened document pair is back in ann1's queue ----------------------------------
    login(page, base, "ann1", "password-one")
    page.goto(f"{base}/p/{extract_pid}/extract")
    expect(page.locator("#title1")).to_have_text("Library plans")
    page.close()
    store.close()
