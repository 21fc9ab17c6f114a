"""The task table is the one place a task type is defined: the queue, the pages, the JSON API,
the request bodies and the CLI all read it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="install parakit[annotate] for the web app")
pytest.importorskip("httpx", reason="pip install httpx (FastAPI's TestClient needs it)")
from fastapi.testclient import TestClient

from parakit.annotate import tasks
from parakit.annotate.tasks import TASKS, TaskSpec
from parakit.annotate.web import create_app, schemas
from parakit.errors import NotFound

SRC = Path(__file__).resolve().parents[2] / "src" / "parakit"
H = {"X-Parakit": "1"}


def _login(app, name: str, password: str) -> TestClient:
    c = TestClient(app)
    r = c.post("/login", data={"name": name, "password": password}, follow_redirects=False)
    assert r.status_code == 303
    return c


def test_no_task_name_is_written_outside_the_table():
    names = set(TASKS)
    # the CLI may name a command after a task (``annotate rewrite-check``): annotate/ only
    files = [p for p in (SRC / "annotate").rglob("*.py") if p.name != "tasks.py"]
    found = [
        f"{path.relative_to(SRC)}:{node.lineno} {node.value!r}"
        for path in files
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value in names
    ]
    assert found == []


def test_each_row_names_a_template_and_a_request_body_that_exist():
    for spec in TASKS.values():
        assert (SRC / "annotate" / "templates" / spec.template).is_file(), spec.name
        assert issubclass(getattr(schemas, spec.body), schemas.BaseModel), spec.name


def test_task_spec_checks_unit_and_assignability():
    assert tasks.task_spec("rewrite-check", unit="item").hide_context
    with pytest.raises(NotFound, match=r"\[E606\] unknown task 'extract'; use classify, rewrite"):
        tasks.task_spec("extract", unit="item")
    with pytest.raises(NotFound, match="use classify, screen, extract$"):
        tasks.task_spec("rewrite-check", assignable=True)


def _accepted(store, pid: int, candidates: list[str]) -> dict[str, set[str]]:
    """Which task names each entry point takes (the others answer E606)."""
    client = _login(create_app(store), "ann1", "password-one")
    out: dict[str, set[str]] = {"next": set(), "page": set(), "skip": set(), "assign": set()}
    for name in candidates:
        r = client.get(f"/api/projects/{pid}/next", params={"task": name}, headers=H)
        if r.status_code == 200:
            out["next"].add(name)
        else:
            assert (r.status_code, r.json()["code"]) == (404, "E606")
        if client.get(f"/p/{pid}/classify", params={"task": name}).status_code == 200:
            out["page"].add(name)
        # skip of an item not leased: a known task gets 409 (not leased), an unknown one 404
        r = client.post("/api/items/1/skip", json={"task": name}, headers=H)
        if r.status_code == 409:
            out["skip"].add(name)
        try:
            store.queue.assign_task(pid, task=name)
            out["assign"].add(name)
        except NotFound as e:
            assert e.code == "E606"
    return out


def test_the_entry_points_take_exactly_the_table_names(project):
    store, pid, _ = project
    got = _accepted(store, pid, [*TASKS, "bogus", "Classify"])
    items = {s.name for s in TASKS.values() if s.unit == "item"}
    assert got["next"] == got["page"] == got["skip"] == items == {"classify", "rewrite-check"}
    assert (
        got["assign"]
        == {s.name for s in TASKS.values() if s.assign}
        == {
            "classify",
            "screen",
            "extract",
        }
    )


def test_a_new_row_is_served_by_queue_pages_and_api(project, monkeypatch):
    """Adding a task type is one row: no other file changes."""
    store, pid, ids = project
    row = TaskSpec("recheck", "item", "classify.html", "SaveBody", "items", "Re-check")
    monkeypatch.setitem(TASKS, "recheck", row)
    assert store.queue.assign_task(pid, task="recheck") == 3
    client = _login(create_app(store), "ann1", "password-one")
    index = client.get("/").text
    assert "<th>Re-check</th>" in index and f'href="/p/{pid}/classify?task=recheck"' in index
    item = client.get(f"/api/projects/{pid}/next", params={"task": "recheck"}, headers=H).json()
    body = {"label": "4", "revision": 0, "submit": True, "task": "recheck"}
    assert client.post(f"/api/items/{item['item']}/save", json=body, headers=H).status_code == 200
    assert store.queue.progress(pid, ids["ann1"], "recheck") == {"done": 1, "remaining": 2}
    assert store.queue.progress(pid, ids["ann1"], "classify") == {"done": 0, "remaining": 0}
