"""What every router depends on: the store, the settings, the logged-in user, access checks
and page rendering. Routers get these through FastAPI ``Depends`` or call them directly; they
reach the store only through :func:`get_store`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from parakit.annotate.store import Forbidden, Store, User
from parakit.annotate.throttle import LoginThrottle

COOKIE = "parakit_session"
HEADER = "x-parakit"
TEMPLATES = Path(__file__).resolve().parents[1] / "templates"


@dataclass
class WebSettings:
    """The app's settings (see :func:`parakit.annotate.web.create_app`)."""

    session_ttl: timedelta = timedelta(hours=8)
    lease: timedelta = timedelta(minutes=30)
    secure_cookies: bool = False
    overlap_words: int = 6


class LoginRequired(Exception):
    """Raised by :func:`page_user`; the app answers with a redirect to the login page."""


def get_store(request: Request) -> Store:
    return request.app.state.store


def get_settings(request: Request) -> WebSettings:
    return request.app.state.settings


def get_throttle(request: Request) -> LoginThrottle:
    return request.app.state.login_throttle


def render(request: Request, name: str, user: User | None, **context: Any) -> HTMLResponse:
    """A Jinja page with the user and the request's CSP nonce."""
    templates: Jinja2Templates = request.app.state.templates
    context.update(request=request, user=user, nonce=request.state.nonce)
    return templates.TemplateResponse(request, name, context)


def page_user(request: Request) -> User:
    """The logged-in user of a page; redirects to the login page when there is none."""
    user = get_store(request).accounts.session_user(request.cookies.get(COOKIE))
    if user is None:
        raise LoginRequired()
    return user


def api_user(request: Request) -> User:
    """The logged-in user of a JSON action; writes need the ``X-Parakit`` header."""
    if request.method != "GET" and request.headers.get(HEADER) != "1":
        raise HTTPException(403, "missing X-Parakit header (cross-site request refused)")
    user = get_store(request).accounts.session_user(request.cookies.get(COOKIE))
    if user is None:
        raise HTTPException(401, "not logged in or session expired")
    return user


def require_member(store: Store, user: User, project_id: int) -> None:
    if not store.projects.can_access(user, project_id):
        raise Forbidden(f"you are not a member of project {project_id}")


def require_admin(user: User) -> None:
    if not user.is_admin:
        raise Forbidden("admin only")


def require_adjudicator(user: User) -> None:
    if not user.can_adjudicate:
        raise Forbidden("admins and adjudicators only")
