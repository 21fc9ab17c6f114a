"""The web app's plumbing (issue 32 item 5): one settings object (option over environment
over default, the same in every worker), role checks as route dependencies, one read session
per request, and the helper for "the open assignment leased to this user"."""

from __future__ import annotations

from datetime import timedelta

import pytest

pytest.importorskip("fastapi", reason="install parakit[annotate] for the web app")
pytest.importorskip("httpx", reason="pip install httpx (FastAPI's TestClient needs it)")
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from sqlalchemy import event
from typer.testing import CliRunner

from parakit.annotate.db import leased, utcnow
from parakit.annotate.web import create_app
from parakit.annotate.web import deps as deps_mod
from parakit.annotate.web.settings import WebSettings, env_name
from parakit.cli.annotate import ENV_PREFIX
from parakit.cli.annotate import app as cli
from parakit.errors import Conflict

from .conftest import client_for, item_of

H = {"X-Parakit": "1"}
HTML = {"Accept": "text/html"}


@pytest.fixture
def clean_env(monkeypatch):
    """No ``PARAKIT_ANNOTATE_*`` variable from outside; whatever a test sets is undone."""
    for field in WebSettings.model_fields:
        monkeypatch.setenv(env_name(field), "")  # recorded, so what serve sets is undone
        monkeypatch.delenv(env_name(field))
    return monkeypatch


# -- settings -----------------------------------------------------------------------------------
def test_settings_come_from_arguments_over_the_environment_over_defaults(clean_env, store):
    assert WebSettings().session_ttl == timedelta(hours=8)  # the default
    clean_env.setenv("PARAKIT_ANNOTATE_SESSION_TTL", "60")
    clean_env.setenv("PARAKIT_ANNOTATE_FORWARDED_ALLOW_IPS", "10.0.0.1, 10.0.0.0/8")
    clean_env.setenv("PARAKIT_ANNOTATE_LOGIN_ATTEMPTS", "7")
    env = WebSettings()
    assert env.session_ttl == timedelta(seconds=60) and env.login_attempts == 7
    assert env.forwarded_allow_ips == ("10.0.0.1", "10.0.0.0/8") and env.trusts("10.2.3.4")
    app = create_app(store, login_attempts=3)  # an argument over the environment
    assert app.state.settings.login_attempts == 3
    assert app.state.settings.session_ttl == timedelta(seconds=60)
    assert app.state.login_throttle.max_failures == 3
    # an explicit settings object, with an override on top
    app = create_app(store, WebSettings(overlap_words=9), max_body_mb=1)
    assert app.state.settings.overlap_words == 9 and app.state.settings.max_body_bytes == 1 << 20
    with pytest.raises(ValueError, match="no_such_setting"):
        WebSettings(no_such_setting=1)
    # the environment a worker reads back gives the same settings
    assert WebSettings(**{}) == env
    for name, value in env.environment().items():
        clean_env.setenv(name, value)
    assert WebSettings() == env
    assert env_name("") == ENV_PREFIX


def test_serve_resolves_options_over_the_environment_for_every_worker(
    clean_env, tmp_path, monkeypatch
):
    import uvicorn

    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(kw, app=app))
    db = str(tmp_path / "s.sqlite")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", db]).exit_code == 0
    clean_env.setenv("PARAKIT_ANNOTATE_SESSION_TTL", "60")
    clean_env.setenv("PARAKIT_ANNOTATE_LEASE", "600")
    clean_env.setenv("PARAKIT_ANNOTATE_OVERLAP_WORDS", "4")
    result = runner.invoke(
        cli,
        [
            "serve",
            db,
            "--port",
            "8124",
            "--lease-minutes",
            "2",
            "--max-upload-mb",
            "3",
            "--logins-per-address",
            "5",
            "--no-secure-cookies",
        ],
    )
    assert result.exit_code == 0, result.output
    assert seen["factory"] and seen["app"] == "parakit.annotate.web.app:create_app"
    worker = create_app()  # what each worker runs: the settings from the environment
    got = worker.state.settings
    assert got.store == db
    assert got.session_ttl == timedelta(seconds=60)  # the environment (no option given)
    assert got.lease == timedelta(minutes=2)  # the option over the environment
    assert got.overlap_words == 4 and got.logins_per_address == 5
    assert got.max_body_mb == 3 and got.secure_cookies is False  # the old option name works
    assert got.login_attempts == 5  # the default
    worker.state.store.close()


def test_a_worker_without_a_store_says_how_to_start():
    with pytest.raises(RuntimeError, match="PARAKIT_ANNOTATE_STORE"):
        create_app(settings=WebSettings())


# -- role dependencies ----------------------------------------------------------------------------
CHECKS = {
    deps_mod.project_member,
    deps_mod.project_adjudicator,
    deps_mod.item_member,
    deps_mod.item_adjudicator,
    deps_mod.doc_pair_member,
    deps_mod.admin,
}


def _calls(dependant):
    for dep in dependant.dependencies:
        yield dep.call
        yield from _calls(dep)


def test_every_route_that_names_a_project_item_or_document_pair_checks_access():
    from parakit.annotate.web.routers import admin, api, auth, pages

    routes = [
        r for m in (auth, pages, api, admin) for r in m.router.routes if isinstance(r, APIRoute)
    ]
    named = [
        r
        for r in routes
        if any(k in r.path for k in ("{project_id}", "{item_id}", "{doc_pair_id}"))
    ]
    assert len(named) >= 25
    unchecked = [r.path for r in named if not CHECKS & set(_calls(r.dependant))]
    assert unchecked == []
    # every /admin and /api/admin route needs a role
    roles = CHECKS | {deps_mod.adjudicator}
    guarded = [r for r in routes if r.path.startswith(("/admin", "/api/admin"))]
    assert [r.path for r in guarded if not roles & set(_calls(r.dependant))] == []


def test_role_dependencies_refuse_with_the_right_status(project):
    store, pid, ids = project
    store.queue.assign(pid, mode="single")
    app = create_app(store)
    other = store.projects.create_project("other", "turku")
    ann = client_for(app, "ann1")
    # the role: an annotator on an adjudicator's page, a script on an admin action
    assert ann.get(f"/admin/p/{pid}/consensus").status_code == 403
    page = ann.get(f"/admin/p/{pid}/consensus", headers=HTML)
    assert page.status_code == 403 and "admins and adjudicators only" in page.text
    r = ann.post(f"/api/admin/projects/{pid}/delete", headers=H)
    assert r.status_code == 403 and r.json()["error"].endswith("admin only")
    # membership: a project, and the project of an item, the caller is not a member of
    assert ann.get(f"/p/{other}/classify").status_code == 403
    item = item_of(ann.get(f"/p/{pid}/classify").text)
    outsider = ids["ann3"]
    store.projects.remove_member(pid, outsider)
    out = client_for(app, "ann3")
    r = out.post(f"/api/items/{item}/save", headers=H, json={"label": "4", "revision": 0})
    assert r.status_code == 403 and "not a member" in r.json()["error"]
    assert out.post("/api/items/999999/save", headers=H, json={"revision": 0}).status_code == 404
    # nobody logged in: a page redirects to the login page, a script gets 401
    anon = TestClient(app)
    assert anon.get(f"/p/{pid}/classify", follow_redirects=False).status_code == 303
    assert anon.get(f"/api/projects/{pid}/next").status_code == 401
    # and the refusals changed nothing
    assert store.queue.annotation(item, outsider) is None
    assert store.project(pid).name == "tiny"
    assert client_for(app, "admin").get(f"/admin/p/{pid}/consensus").status_code == 200


def test_a_page_reads_in_one_transaction(project):
    """The classify page's dozen lookups share one read transaction; the lease (a write)
    commits on its own first."""
    store, pid, _ = project
    store.queue.assign(pid, mode="single")
    app = create_app(store)
    c = client_for(app, "ann1")
    c.get(f"/p/{pid}/classify")  # leased: the next view only reads
    begun = []
    listener = lambda *a: begun.append(1)  # noqa: E731
    event.listen(store.engine, "begin", listener)
    try:
        assert c.get(f"/p/{pid}/classify").status_code == 200
    finally:
        event.remove(store.engine, "begin", listener)
    # the user's session (read), the lease (a write: its own transaction), the page's reads
    assert len(begun) <= 3


# -- the lease helper -----------------------------------------------------------------------------
def test_leased_finds_the_open_assignment_leased_to_the_user(project):
    store, pid, ids = project
    store.queue.assign(pid, mode="single")
    ann1, ann2 = ids["ann1"], ids["ann2"]
    a = store.queue.lease_next(pid, ann1, lease=timedelta(minutes=5))
    with store.transaction() as s:
        assert leased(s, ann1, item_id=a.item_id, task="classify").id == a.id
        assert leased(s, ann2, item_id=a.item_id, task="classify") is None
        assert leased(s, ann1, project_id=pid, task="classify", at=utcnow()).id == a.id
        later = utcnow() + timedelta(minutes=10)  # the lease has expired by then
        assert leased(s, ann1, project_id=pid, task="classify", at=later) is None
        with pytest.raises(Conflict, match="not yours"):
            leased(s, ann2, item_id=a.item_id, task="classify", missing="not yours")
    store.queue.save(a.item_id, ann1, label="4", revision=0, submit=True)
    with store.transaction() as s:
        assert leased(s, ann1, item_id=a.item_id, task="classify") is None  # done: not open
        assert leased(s, ann1, done=True, item_id=a.item_id, task="classify").id == a.id
