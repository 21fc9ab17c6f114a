"""Issue 30 item 10 in headless Chromium: the ``?`` shortcut overlay, the dark theme that
follows the system, the recent-judgments list and the project page's forms."""

from __future__ import annotations

import pytest

from .test_browser import expect, login


@pytest.fixture
def site(tmp_path, serve):
    from parakit.annotate.store import Store

    from .conftest import tiny_pairs

    store = Store.open(tmp_path / "ui.sqlite", cheap_hashing=True)
    store.accounts.add_annotator("admin", "admin-password", role="admin")
    ann1 = store.accounts.add_annotator("ann1", "password-one")
    store.accounts.add_annotator("ann3", "password-three")
    pid = store.projects.create_project("tiny", "turku")
    store.projects.import_pairs(pid, tiny_pairs())
    store.projects.add_member(pid, ann1)
    store.queue.assign(pid)
    yield serve(store), store, pid
    store.close()


def test_question_mark_opens_the_shortcut_overlay_and_escape_closes_it(browser, site):
    base, _store, pid = site
    page = browser.new_page(viewport={"width": 800, "height": 900})
    login(page, base, "ann1", "password-one")
    page.goto(f"{base}/p/{pid}/classify")
    overlay = page.locator("#shortcuts")
    expect(overlay).to_be_hidden()
    page.click("body", position={"x": 5, "y": 5})
    page.keyboard.press("?")
    expect(overlay).to_be_visible()
    expect(overlay).to_contain_text("choose the label")
    expect(overlay).to_contain_text("skip a hard pair")
    page.keyboard.press("4")  # swallowed while the overlay is open: nothing labelled
    expect(page.locator("#label-value")).to_have_text("–")
    page.keyboard.press("Escape")
    expect(overlay).to_be_hidden()
    page.keyboard.press("4")
    expect(page.locator("#label-value")).to_have_text("4")
    # typed into a text box, "?" is a character, not the overlay
    page.click("#comment")
    page.keyboard.type("why?")
    expect(overlay).to_be_hidden()
    expect(page.locator("#comment")).to_have_value("why?")
    page.keyboard.press("Escape")  # leaves the box
    page.click("#keys-hint")  # and the mouse opens it too
    expect(overlay).to_be_visible()
    page.click("#shortcuts-close")
    expect(overlay).to_be_hidden()
    page.close()


def test_the_dark_theme_follows_the_system_setting(browser, site):
    base, _store, pid = site
    colours = {}
    for scheme in ("light", "dark"):
        context = browser.new_context(color_scheme=scheme)
        page = context.new_page()
        login(page, base, "ann1", "password-one")
        page.goto(f"{base}/p/{pid}/classify")
        colours[scheme] = page.evaluate(
            """() => [getComputedStyle(document.body).backgroundColor,
                      getComputedStyle(document.body).color,
                      getComputedStyle(document.getElementById("text1")).backgroundColor]"""
        )
        context.close()
    assert colours["light"] == ["rgb(250, 250, 250)", "rgb(34, 34, 34)", "rgb(255, 255, 255)"]
    assert colours["dark"] == ["rgb(21, 24, 28)", "rgb(228, 230, 234)", "rgb(30, 34, 39)"]


def test_recent_judgments_reopen_a_pair_to_change_it(browser, site):
    base, store, pid = site
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, base, "ann1", "password-one")
    page.goto(f"{base}/p/{pid}/classify")
    first = page.inner_text("#text1")
    page.click("body", position={"x": 5, "y": 5})
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/p/{pid}/classify?task=classify")
    page.click("#recent-link")
    rows = page.locator("#recent tr[id^=recent-]")
    expect(rows).to_have_count(1)
    expect(rows.first.locator("td.label")).to_have_text("2")
    rows.first.locator("a.revisit").click()
    expect(page.locator("#text1")).to_have_text(first)
    expect(page.locator("#label-value")).to_have_text("2")
    page.click("body", position={"x": 5, "y": 5})
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/p/{pid}/classify?task=classify")
    page.goto(f"{base}/p/{pid}/recent")
    expect(page.locator("#recent td.label").first).to_contain_text("3")
    uid = store.accounts.annotator_id("ann1")
    assert [a.label for a in store.queue.history(pid, uid)] == ["3"]
    page.close()


def test_the_project_page_adds_members_and_archives(browser, site):
    base, store, pid = site
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, base, "admin", "admin-password")
    page.goto(f"{base}/admin")
    page.click(f"#project-{pid}")
    expect(page.locator("h1")).to_have_text("tiny")
    page.fill("#add-members input[name=annotators]", "ann3")
    page.click("#add-members button")
    expect(page.locator("#member-list")).to_contain_text("ann3")
    assert store.accounts.annotator_id("ann3") in store.projects.members(pid)
    page.click("#archive-project")
    expect(page.locator("h1")).to_contain_text("(archived)")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#delete-project")
    page.wait_for_url(f"{base}/admin")
    from parakit.errors import NotFound

    with pytest.raises(NotFound):
        store.project(pid)
    page.close()


def test_a_slow_server_loses_no_draft_change(browser, site):
    """Before: a draft saved while the previous one was still on its way carried the same
    revision, got 409 and its change (here: unsure) was lost. Now the page sends one save at
    a time and the next one after the answer."""
    base, store, pid = site
    page = browser.new_page()
    login(page, base, "ann1", "password-one")
    page.goto(f"{base}/p/{pid}/classify")
    held: list = []
    hold = [True]

    def slow(route) -> None:  # the server "slow": answers held back until released
        if hold[0]:
            held.append(route)
        else:
            route.continue_()

    page.route("**/api/items/*/save", slow)
    page.click("body", position={"x": 5, "y": 5})
    page.keyboard.press("4")
    page.wait_for_timeout(1500)  # the draft of label 4 left after 0.5 s
    assert len(held) == 1
    page.keyboard.press("u")
    page.wait_for_timeout(1500)
    sent_meanwhile = len(held) - 1
    hold[0] = False
    for route in held:
        route.continue_()
    item = page.evaluate("JSON.parse(document.getElementById('data').textContent).item")
    uid = store.accounts.annotator_id("ann1")
    for _ in range(100):
        own = store.queue.annotation(item, uid)
        if own is not None and own.unsure:
            break
        page.wait_for_timeout(200)
    assert sent_meanwhile == 0
    assert own is not None and own.label == "4" and own.unsure and own.status == "draft"
    expect(page.locator("#msg")).to_have_text("")
    page.close()
