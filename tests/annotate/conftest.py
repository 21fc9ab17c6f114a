"""Fixtures of the annotation tests: a store on SQLite and on PostgreSQL, a tiny project."""

from __future__ import annotations

import os
import uuid

import pytest

from parakit.schema import Document, Pair, PairSet, Span

PG_URL = os.environ.get("PARAKIT_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def _postgres_reachable() -> str | None:
    """None when the server answers, else why it does not."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (pip install 'parakit[annotate]')"
    try:
        dsn = PG_URL.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(dsn, connect_timeout=3) as conn:
            conn.execute("select 1")
    except Exception as err:
        return f"PostgreSQL not reachable at {PG_URL}: {err}".splitlines()[0]
    return None


@pytest.fixture(scope="session")
def pg_url():
    """A fresh PostgreSQL schema for this test session (skips when no server answers)."""
    reason = _postgres_reachable()
    if reason and os.environ.get("PARAKIT_REQUIRE_POSTGRES"):
        pytest.fail(f"{reason} (PARAKIT_REQUIRE_POSTGRES is set, so this is an error)")
    if reason:
        pytest.skip(reason)
    from sqlalchemy import create_engine, text

    schema = f"parakit_test_{uuid.uuid4().hex[:8]}"
    engine = create_engine(PG_URL)
    with engine.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    yield schema
    with engine.begin() as conn:
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    engine.dispose()


def _pg_store(base_schema: str, name: str):
    from sqlalchemy import create_engine, text

    from parakit.annotate.store import Store

    schema = f"{base_schema}_{name}"[:60]
    engine = create_engine(PG_URL)
    with engine.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    engine.dispose()
    return Store.open(f"{PG_URL}?options=-csearch_path%3D{schema}", cheap_hashing=True), schema


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request, tmp_path):
    """An empty, migrated store on each backend."""
    from parakit.annotate.store import Store

    if request.param == "sqlite":
        st = Store.open(tmp_path / "project.sqlite", cheap_hashing=True)
        yield st
        st.close()
        return
    base = request.getfixturevalue("pg_url")
    st, schema = _pg_store(base, uuid.uuid4().hex[:8])
    yield st
    st.close()
    from sqlalchemy import create_engine, text

    engine = create_engine(PG_URL)
    with engine.begin() as conn:
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    engine.dispose()


def tiny_pairs() -> PairSet:
    """Three candidate pairs with document context."""
    d1 = Document("d1", "The cat sat on the mat. It was warm.")
    d2 = Document("d2", "A cat was sitting on the mat. The sun was warm.")
    pairs = [
        Pair(
            "p1",
            "The cat sat on the mat.",
            "A cat was sitting on the mat.",
            span1=Span("d1", 0, 23),
            span2=Span("d2", 0, 29),
            source="test",
            group="g1",
        ),
        Pair(
            "p2",
            "It was warm.",
            "The sun was warm.",
            span1=Span("d1", 24, 36),
            span2=Span("d2", 30, 47),
            source="test",
            group="g1",
        ),
        Pair("p3", "Hello there.", "Hi.", source="test"),
    ]
    return PairSet(pairs, scheme="turku", documents=[d1, d2], name="tiny")


@pytest.fixture
def project(store):
    """(store, project id, {name: annotator id}) with three candidate pairs."""
    ids = {
        "admin": store.accounts.add_annotator("admin", "admin-password", role="admin"),
        "ann1": store.accounts.add_annotator("ann1", "password-one"),
        "ann2": store.accounts.add_annotator("ann2", "password-two"),
        "ann3": store.accounts.add_annotator("ann3", "password-three"),
    }
    pid = store.projects.create_project("tiny", "turku")
    for name in ("ann1", "ann2", "ann3"):
        store.projects.add_member(pid, ids[name])
    store.projects.import_pairs(pid, tiny_pairs())
    return store, pid, ids


# -- browser tests (headless Chromium via playwright) ------------------------------------------
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium (Debian's ``/usr/bin/chromium``); skips when it or playwright is
    missing."""
    import shutil
    from pathlib import Path

    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip(f"headless Chromium not found at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="pip install playwright for the browser test"
    )
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium"),
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
            ],
        )
        yield b
        b.close()


@pytest.fixture
def serve():
    """``serve(store) -> base URL``: the web app of ``store`` on a free local port, stopped
    after the test."""
    import socket
    import threading
    import time

    import uvicorn

    from parakit.annotate.web import create_app

    running = []

    def start(store) -> str:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        config = uvicorn.Config(create_app(store), host="127.0.0.1", port=port, log_level="warning")
        srv = uvicorn.Server(config)
        thread = threading.Thread(target=srv.run, daemon=True)
        thread.start()
        running.append((srv, thread))
        for _ in range(100):
            if srv.started:
                break
            time.sleep(0.05)
        return f"http://127.0.0.1:{port}"

    yield start
    for srv, thread in running:
        srv.should_exit = True
        thread.join(5)


# where the characters text[begin] and text[end-1] are drawn, to drag the mouse between them
_RECTS = """([side, begin, end]) => {
  const segs = Array.from(document.querySelectorAll(`.seg[data-side="${side}"]`));
  function rect(offset) {
    for (const s of segs) {
      const b = Number(s.dataset.b), node = s.firstChild;
      if (node && offset >= b && offset < b + node.textContent.length) {
        const r = document.createRange();
        r.setStart(node, offset - b); r.setEnd(node, offset - b + 1);
        const box = r.getBoundingClientRect();
        return [box.left, box.right, box.top + box.height / 2];
      }
    }
    return null;
  }
  return [rect(begin), rect(end - 1)];
}"""


def _drag_select(page, side: int, text: str, phrase: str) -> tuple[int, int]:
    """Select ``phrase`` of document ``side`` with a mouse drag; returns its offsets."""
    begin = text.index(phrase)
    end = begin + len(phrase)
    page.locator(f'.seg[data-side="{side}"]').first.scroll_into_view_if_needed()
    start, stop = page.evaluate(_RECTS, [side, begin, end])
    page.mouse.move(start[0] + 1, start[2])
    page.mouse.down()
    page.mouse.move(stop[1] - 1, stop[2], steps=5)
    page.mouse.up()
    return begin, end


@pytest.fixture
def drag_select():
    """``drag_select(page, side, text, phrase) -> (begin, end)``: a mouse selection in the
    extraction view."""
    return _drag_select


# -- web clients of the test users (admin and screen tests) ------------------------------------
PASSWORDS = {
    "admin": "admin-password",
    "ann1": "password-one",
    "ann2": "password-two",
    "ann3": "password-three",
}


def client_for(app, name):
    """A TestClient logged in as ``name`` (one of :data:`PASSWORDS`)."""
    from fastapi.testclient import TestClient

    c = TestClient(app)
    r = c.post("/login", data={"name": name, "password": PASSWORDS[name]}, follow_redirects=False)
    assert r.status_code == 303
    return c


def item_of(html: str) -> int:
    """The item id a classification page embeds."""
    import re

    return int(re.search(r'"item": (\d+)', html).group(1))
